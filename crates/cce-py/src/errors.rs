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
/// `RuntimeError`; the message is the CLI's line ([`api_message`]).
pub(crate) fn api_error(py: Python<'_>, e: cce_api::ApiError) -> PyErr {
    use cce_api::ErrorKind;
    let message = api_message(&e);
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

/// A library message as Python shows it: the CLI's line, every parameter it names
/// (`` `seed` ``) spelled as the CLI's flag (`--seed`, [`cce_api::render::flag`]), so a
/// message reads the same from either front.
pub(crate) fn api_message(e: &cce_api::ApiError) -> String {
    e.message_with(cce_api::render::flag)
}

/// A keyword's text as its type, by the type's one `FromStr`; a refusal is the type's words
/// after the CLI's name for the parameter (`--op 'xor': expected add, fma, min or max`): the
/// messages are the CLI's.
pub(crate) fn named<T: std::str::FromStr>(flag: &str, text: &str) -> Result<T, cce_api::ApiError>
where
    T::Err: std::fmt::Display,
{
    text.parse().map_err(|e| cce_api::ApiError::Input(format!("{flag} {e}")))
}

/// A JSON value (the `--json` object of a command) as Python objects, built directly (objects
/// become dicts in key order, arrays lists, integers ints, other numbers floats).
pub(crate) fn to_py<'py>(py: Python<'py>, v: &serde_json::Value) -> PyResult<Bound<'py, PyAny>> {
    use pyo3::IntoPyObjectExt;
    use serde_json::Value;
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => b.into_bound_py_any(py)?,
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => u.into_bound_py_any(py)?,
            (None, Some(i)) => i.into_bound_py_any(py)?,
            (None, None) => n.as_f64().unwrap_or(f64::NAN).into_bound_py_any(py)?,
        },
        Value::String(s) => s.into_bound_py_any(py)?,
        Value::Array(a) => {
            let items = a.iter().map(|x| to_py(py, x)).collect::<PyResult<Vec<_>>>()?;
            pyo3::types::PyList::new(py, items)?.into_any()
        }
        Value::Object(o) => {
            let d = pyo3::types::PyDict::new(py);
            for (k, x) in o {
                d.set_item(k, to_py(py, x)?)?;
            }
            d.into_any()
        }
    })
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
