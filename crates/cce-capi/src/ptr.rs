//! Reading C's pointers: every raw pointer this crate takes becomes a Rust reference or slice
//! here, after its NULL check, and nowhere else.
//!
//! ## Guarantees
//! - A NULL pointer is [`Failure::null`] naming the argument, except where a length of 0 makes
//!   it allowed (an empty list may be NULL).
//! - Each function's `# Safety` section is the promise the C caller makes in the header.

use std::ffi::{CStr, c_char};

use crate::error::Failure;

/// `len` elements at `ptr`, borrowed; NULL is allowed when `len` is 0.
///
/// # Safety
/// When `len > 0`, `ptr` points to `len` initialised `T`s that stay valid and unwritten for
/// the call.
pub(crate) unsafe fn slice<'a, T>(ptr: *const T, len: usize, what: &str) -> Result<&'a [T], Failure> {
    if len == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() {
        return Err(Failure::null(what));
    }
    // SAFETY: non-NULL, and the caller promises `len` valid elements for the call.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// `len` bytes at `ptr`, mutably borrowed; NULL is allowed when `len` is 0.
///
/// # Safety
/// When `len > 0`, `ptr` points to `len` writable bytes that nothing else reads or writes
/// during the call.
pub(crate) unsafe fn bytes_mut<'a>(ptr: *mut u8, len: usize, what: &str) -> Result<&'a mut [u8], Failure> {
    if len == 0 {
        return Ok(&mut []);
    }
    if ptr.is_null() {
        return Err(Failure::null(what));
    }
    // SAFETY: non-NULL, and the caller promises `len` writable bytes used by nobody else.
    Ok(unsafe { std::slice::from_raw_parts_mut(ptr, len) })
}

/// The value `ptr` points to, borrowed.
///
/// # Safety
/// A non-NULL `ptr` points to an initialised `T` valid for the call.
pub(crate) unsafe fn value<'a, T>(ptr: *const T, what: &str) -> Result<&'a T, Failure> {
    // SAFETY: the caller promises a non-NULL `ptr` is valid; NULL becomes None.
    unsafe { ptr.as_ref() }.ok_or_else(|| Failure::null(what))
}

/// Writes `v` to `out`.
///
/// # Safety
/// A non-NULL `out` points to writable memory for one `T`.
pub(crate) unsafe fn write<T>(out: *mut T, v: T, what: &str) -> Result<(), Failure> {
    if out.is_null() {
        return Err(Failure::null(what));
    }
    // SAFETY: non-NULL, and the caller promises room for one `T` (unaligned is allowed).
    unsafe { out.write_unaligned(v) };
    Ok(())
}

/// An optional NUL-terminated UTF-8 string (NULL = none).
///
/// # Safety
/// A non-NULL `ptr` points to a NUL-terminated string valid for the call.
pub(crate) unsafe fn opt_str<'a>(ptr: *const c_char, what: &str) -> Result<Option<&'a str>, Failure> {
    if ptr.is_null() {
        return Ok(None);
    }
    // SAFETY: non-NULL, and the caller promises a NUL-terminated string.
    let s = unsafe { CStr::from_ptr(ptr) };
    s.to_str().map(Some).map_err(|_| Failure::invalid(format!("{what} is not UTF-8")))
}
