//! How library errors reach Python: the exception classes live in `cce._errors` (pure Python,
//! documented there); this module raises them, and turns a panic into a `RuntimeError`.

use std::panic::{AssertUnwindSafe, catch_unwind};

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

/// `cce.CceError(message)`: bad input.
pub(crate) fn cce_error(py: Python<'_>, message: impl Into<String>) -> PyErr {
    raise(py, "CceError", (message.into(),))
}

/// `cce.EngineFault(message, queue, descriptor, reason)`: the engine stopped on a packet.
pub(crate) fn engine_fault(py: Python<'_>, f: &cce_engine::Fault) -> PyErr {
    raise(py, "EngineFault", (f.to_string(), f.queue, f.tx_index, f.reason.to_string()))
}

/// `cce.RankFailed(message, rank, step)`: a rank of a collective failed.
#[allow(dead_code, reason = "raised by the collectives once they are bound")]
pub(crate) fn rank_failed(py: Python<'_>, message: String, rank: usize, step: usize) -> PyErr {
    raise(py, "RankFailed", (message, rank, step))
}

fn raise<'py, A: pyo3::call::PyCallArgs<'py>>(py: Python<'py>, class: &str, args: A) -> PyErr {
    match py.import("cce._errors").and_then(|m| m.getattr(class)).and_then(|c| c.call1(args)) {
        Ok(e) => PyErr::from_value(e),
        Err(e) => e,
    }
}

/// A reduce-path error as the CLI classifies it: a fault of host-built rings that names an
/// unsupported request is bad input, any other fault an engine fault, everything else input.
pub(crate) fn path_error(py: Python<'_>, e: cce_collectives::PathError) -> PyErr {
    match &e {
        cce_collectives::PathError::Fault(f) if !f.reason.is_unsupported_request() => engine_fault(py, f),
        _ => cce_error(py, e.to_string()),
    }
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
