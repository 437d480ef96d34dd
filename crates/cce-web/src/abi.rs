//! The WebAssembly exports the page's script calls (docs/web.md): a request goes in as UTF-8
//! bytes the script writes into memory this module allocated, the answer comes back as UTF-8
//! bytes this module keeps until the next call.
//!
//! The protocol, for one request of `n` bytes:
//! 1. `p = cce_alloc(n)`; the script writes the request at `p..p + n`;
//! 2. `m = cce_call(p, n)`: answers it (taking back and freeing `p`) and returns the answer's
//!    length; `cce_answer()` is where its `m` bytes start (valid until the next `cce_call`).
//!
//! A panic (a bug: [`crate::call`] refuses bad input with an answer) traps; its message is kept
//! first (`cce_panic()` / `cce_panic_len()`), so the script can report it and start a fresh
//! instance.
#![allow(unsafe_code)]

use std::sync::Mutex;

/// The last answer's bytes.
static ANSWER: Mutex<Vec<u8>> = Mutex::new(Vec::new());
/// The last panic's message.
static PANIC: Mutex<String> = Mutex::new(String::new());

/// Installs the panic hook that keeps the message; the script calls it once after instantiating.
#[unsafe(no_mangle)]
pub extern "C" fn cce_init() {
    std::panic::set_hook(Box::new(|info| {
        if let Ok(mut p) = PANIC.try_lock() {
            *p = info.to_string();
        }
    }));
}

/// `len` bytes for the script to write a request into (freed by [`cce_call`]).
#[unsafe(no_mangle)]
pub extern "C" fn cce_alloc(len: usize) -> *mut u8 {
    let mut v = Vec::<u8>::with_capacity(len);
    let p = v.as_mut_ptr();
    std::mem::forget(v);
    p
}

/// Answers the request at `ptr..ptr + len` (a block from [`cce_alloc`] of exactly `len` bytes,
/// which this frees) and returns the answer's length in bytes.
///
/// # Safety
/// `ptr` came from `cce_alloc(len)` and the script wrote `len` bytes there.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cce_call(ptr: *mut u8, len: usize) -> usize {
    // SAFETY: by the caller's promise, `ptr` is `cce_alloc(len)`'s block (capacity `len`) with
    // all `len` bytes written; rebuilding the Vec hands it back to the allocator on drop.
    let request = unsafe { Vec::from_raw_parts(ptr, len, len) };
    let answer = crate::call(&String::from_utf8_lossy(&request));
    let mut kept = ANSWER.lock().unwrap_or_else(|e| e.into_inner());
    *kept = answer.into_bytes();
    kept.len()
}

/// Where the last answer's bytes start (valid until the next [`cce_call`]).
#[unsafe(no_mangle)]
pub extern "C" fn cce_answer() -> *const u8 {
    ANSWER.lock().map(|a| a.as_ptr()).unwrap_or(std::ptr::null())
}

/// Traps on purpose, as a bug would (a panic, then `unreachable`): the one export that does,
/// so a front can check that it recovers — the page's `cce.trap()`, which its browser test
/// calls (tests/web/test_robust.py). [`crate::call`] itself never panics.
#[unsafe(no_mangle)]
pub extern "C" fn cce_trap() {
    panic!("cce_trap: a trap on purpose, to test the recovery from one");
}

/// Where the last panic's message starts ([`cce_panic_len`] bytes of UTF-8).
#[unsafe(no_mangle)]
pub extern "C" fn cce_panic() -> *const u8 {
    PANIC.try_lock().map(|p| p.as_ptr()).unwrap_or(std::ptr::null())
}

/// The length of the last panic's message (0: none).
#[unsafe(no_mangle)]
pub extern "C" fn cce_panic_len() -> usize {
    PANIC.try_lock().map(|p| p.len()).unwrap_or(0)
}
