//! Status codes, the thread's last error message, and the guard every entry point runs under.
//!
//! ## Guarantees
//! - [`guard`] turns an `Err` into its status code and stores its message for
//!   [`cce_last_error`]; a panic becomes [`cce_status::CCE_ERR_INTERNAL`] with the panic's
//!   message, and never unwinds into C.
//! - The message is kept per thread until the next failing call on the same thread.

use std::cell::RefCell;
use std::ffi::{CString, c_char};
use std::panic::{AssertUnwindSafe, catch_unwind};

use cce_api::ApiError;
use cce_api::runtime::{RuntimeAssert, runtime_assert};

/// What a call did. Every function that can fail returns one; on anything but `CCE_OK`,
/// `cce_last_error()` says why in one line.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum cce_status {
    /// Success.
    CCE_OK = 0,
    /// Bad input that is not one of the runtime's asserts (a value out of range, sizes that
    /// disagree, an option for the wrong op).
    CCE_ERR_INVALID = 1,
    /// A run executed and failed: an engine fault (the message names the queue, the
    /// descriptor and the reason).
    CCE_ERR_FAILED = 2,
    /// A pointer that must not be NULL was NULL.
    CCE_ERR_NULL = 3,
    /// The runtime's "Unsupported CCE Op! %u" (`kbin_cce_op_to_sdma_cce_op`).
    CCE_ERR_UNSUPPORTED_OP = 4,
    /// A dtype the runtime refuses ("Unsupported data type!", a value past the 16 SDMA dtypes,
    /// a MIN/MAX constant dtype the engine cannot carry).
    CCE_ERR_UNSUPPORTED_DTYPE = 5,
    /// Another of the runtime's asserts or bails, with the study's message: FMA without
    /// cce_info (vring.c:0x3B8), a scale dtype other than fp32 (vring.c:0x3BA), a size-0 dtype
    /// in packet sizing (fp32r), a priority class above 4, an arch with no element limit,
    /// replication or concatenation on arch 1 or 2, more than 32 sources.
    CCE_ERR_RUNTIME_ASSERT = 6,
    /// A bug in cce (a panic caught at the boundary); the message says where.
    CCE_ERR_INTERNAL = 7,
}

/// An error on its way to C: its code and message.
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) status: cce_status,
    pub(crate) message: String,
}

impl Failure {
    pub(crate) fn new(status: cce_status, message: impl Into<String>) -> Failure {
        Failure { status, message: message.into() }
    }

    /// A NULL where a pointer is required; `what` names the argument.
    pub(crate) fn null(what: &str) -> Failure {
        Failure::new(cce_status::CCE_ERR_NULL, format!("{what} is NULL"))
    }

    /// The same failure with the argument it concerns in front of its message.
    pub(crate) fn named(mut self, what: &str) -> Failure {
        self.message = format!("{what}: {}", self.message);
        self
    }

    /// Bad input.
    pub(crate) fn invalid(message: impl Into<String>) -> Failure {
        Failure::new(cce_status::CCE_ERR_INVALID, message)
    }
}

impl From<ApiError> for Failure {
    fn from(e: ApiError) -> Failure {
        let status = match runtime_assert(&e) {
            Some(RuntimeAssert::UnsupportedOp) => cce_status::CCE_ERR_UNSUPPORTED_OP,
            Some(RuntimeAssert::UnsupportedDtype) => cce_status::CCE_ERR_UNSUPPORTED_DTYPE,
            Some(RuntimeAssert::Assert) => cce_status::CCE_ERR_RUNTIME_ASSERT,
            None if e.exit_code() == 1 => cce_status::CCE_ERR_FAILED,
            None => cce_status::CCE_ERR_INVALID,
        };
        // The message is the CLI's line: every parameter it names (`seed`) as the CLI's flag.
        Failure { status, message: e.message_with(cce_api::render::flag) }
    }
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn remember(message: &str) {
    // A message with a NUL inside would end early in C: each NUL becomes '?'.
    let text = CString::new(message.replace('\0', "?")).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = text);
}

/// Runs `body`; an error or a panic becomes a status code and the thread's last message.
pub(crate) fn guard(body: impl FnOnce() -> Result<(), Failure>) -> cce_status {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => cce_status::CCE_OK,
        Ok(Err(f)) => {
            remember(&f.message);
            f.status
        }
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".into());
            remember(&format!("internal error (a bug in cce, please report it): {what}"));
            cce_status::CCE_ERR_INTERNAL
        }
    }
}

/// The message of this thread's last failing call, as a NUL-terminated string (empty before
/// any failure). It stays valid until the next failing call on the same thread; the caller
/// must not free it.
#[unsafe(no_mangle)]
pub extern "C" fn cce_last_error() -> *const c_char {
    // The pointer is into the thread-local CString, which is replaced (not mutated) only by
    // the next failure on this thread.
    LAST_ERROR.with(|e| e.borrow().as_ptr())
}

#[cfg(test)]
mod tests {
    use std::ffi::CStr;

    use super::*;

    fn last() -> String {
        // SAFETY: cce_last_error returns a pointer into this thread's live CString.
        unsafe { CStr::from_ptr(cce_last_error()) }.to_string_lossy().into_owned()
    }

    #[test]
    fn errors_and_panics_become_codes_and_messages() {
        assert_eq!(guard(|| Ok(())), cce_status::CCE_OK);
        assert_eq!(guard(|| Err(Failure::null("dst"))), cce_status::CCE_ERR_NULL);
        assert_eq!(last(), "dst is NULL");
        assert_eq!(guard(|| panic!("boom")), cce_status::CCE_ERR_INTERNAL);
        assert!(last().ends_with("boom"), "{}", last());
        assert_eq!(guard(|| Err(Failure::invalid("a\0b"))), cce_status::CCE_ERR_INVALID);
        assert_eq!(last(), "a?b");
    }
}
