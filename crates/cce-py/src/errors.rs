//! How library errors reach Python: the exception classes live in `cce._errors` (pure Python,
//! documented there); this module raises them, and turns a panic into a `RuntimeError`.

use std::panic::{AssertUnwindSafe, catch_unwind};

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

/// `cce.CceError(message)`: bad input.
pub(crate) fn cce_error(py: Python<'_>, message: impl Into<String>) -> PyErr {
    raise(py, "CceError", (message.into(),))
}

fn raise<'py, A: pyo3::call::PyCallArgs<'py>>(py: Python<'py>, class: &str, args: A) -> PyErr {
    match py.import("cce._errors").and_then(|m| m.getattr(class)).and_then(|c| c.call1(args)) {
        Ok(e) => PyErr::from_value(e),
        Err(e) => e,
    }
}

/// A library error as the CLI classifies it ([`cce_api::ApiError::kind`]): bad input →
/// `CceError`, an engine fault → `EngineFault`, a failed rank → `RankFailed`, anything else a
/// `RuntimeError`; the message is the CLI's line.
pub(crate) fn api_error(py: Python<'_>, e: cce_api::ApiError) -> PyErr {
    use cce_api::ErrorKind;
    let message = e.to_string();
    match e.kind() {
        ErrorKind::BadInput => cce_error(py, message),
        ErrorKind::EngineFault => match e.fault() {
            Some(f) => raise(py, "EngineFault", (message, f.queue, f.tx_index, f.reason.to_string())),
            None => PyRuntimeError::new_err(message),
        },
        ErrorKind::RankFailed => {
            let (rank, step) = e.rank_failure().unwrap_or_default();
            raise(py, "RankFailed", (message, rank, step))
        }
        _ => PyRuntimeError::new_err(message),
    }
}

/// A JSON value (the `--json` object of a command) as Python objects.
pub(crate) fn to_py<'py>(py: Python<'py>, v: &serde_json::Value) -> PyResult<Bound<'py, PyAny>> {
    py.import("json")?.call_method1("loads", (v.to_string(),))
}

/// Runs `f` without the GIL; a panic inside becomes a `RuntimeError`.
pub(crate) fn detached<T: Send>(py: Python<'_>, f: impl FnOnce() -> T + Send) -> PyResult<T> {
    py.detach(|| catch_unwind(AssertUnwindSafe(f))).map_err(|p| {
        let what = p
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic".into());
        PyRuntimeError::new_err(format!("internal error in cce (a bug, please report it): {what}"))
    })
}
