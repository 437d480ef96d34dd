//! cce in a browser: the library ([`cce_api`]) behind one call that takes a JSON request and
//! returns a JSON answer, compiled to `wasm32-unknown-unknown` and inlined into one
//! self-contained page by `scripts/web` (docs/web.md).
//!
//! Guarantees:
//! - **The CLI's objects.** Each function answers with the object the matching command prints
//!   under `--json` (`decode` ↔ `cce decode`, `encode` ↔ `cce encode`, `disasm` ↔ `cce disasm`,
//!   `value` ↔ `cce value`, `element` ↔ `cce allreduce --element`): the same library call and
//!   the same render, so the page and the CLI cannot disagree.
//! - **A refusal is an object**, `{"error": "<message>"}`, with the library's message (the
//!   parameters it names in backquotes are this front's request keys); [`call`] never panics on
//!   any request, and sizes are checked before anything is allocated for them
//!   ([`MAX_REQUEST_BYTES`]; an element's story against the page's memory budget,
//!   [`budget`]).
//! - **No host.** Nothing here reads files, clocks or threads: the page works opened from disk.
//!
//! The WebAssembly exports (memory in, memory out) are in the `abi` module, the one place with
//! `unsafe`.
#![deny(unsafe_code)]

#[cfg(target_arch = "wasm32")]
pub mod abi;
pub mod budget;
mod requests;

pub use requests::{FUNCTIONS, MAX_REQUEST_BYTES};

use serde_json::json;

/// Answers one request: a JSON object whose `fn` names the function (see [`FUNCTIONS`]) and
/// whose other keys are its parameters. The answer is one JSON object (compact); a refusal is
/// `{"error": …}`.
pub fn call(request: &str) -> String {
    match requests::answer(request) {
        Ok(v) => v.to_string(),
        Err(message) => json!({ "error": message }).to_string(),
    }
}
