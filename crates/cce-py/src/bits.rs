//! `encode`, `decode`, `tables`: the bits, as the objects `cce encode/decode/tables --json`
//! print (cce-api returns them typed; this module turns each into Python objects through its
//! `serde_json::to_value`, the same keys and values as the CLI's JSON).

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

use crate::errors::{api_error, to_py};

/// A typed result's `serde_json::to_value` as Python objects (dicts in key order); a result
/// that does not serialise (a bug) is a `RuntimeError`.
fn to_py_value<'py>(py: Python<'py>, v: serde_json::Result<serde_json::Value>) -> PyResult<Bound<'py, PyAny>> {
    to_py(py, &v.map_err(|e| PyRuntimeError::new_err(format!("internal error in cce: {e}")))?)
}

/// The words `encoder` encodes from `fields` (name, value text) — `cce encode`'s `words`.
#[pyfunction]
pub(crate) fn encode<'py>(
    py: Python<'py>,
    encoder: &str,
    fields: Vec<(String, String)>,
) -> PyResult<Bound<'py, PyAny>> {
    let pairs: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let encoded = cce_api::encode(encoder, &pairs).map_err(|e| api_error(py, e))?;
    to_py_value(py, serde_json::to_value(&encoded))
}

/// Every field of `hex` (little-endian bytes) as `encoder` reads it — `cce decode --json`.
#[pyfunction]
pub(crate) fn decode_hex<'py>(py: Python<'py>, encoder: &str, hex: &str) -> PyResult<Bound<'py, PyAny>> {
    let decoded = cce_api::decode(encoder, hex).map_err(|e| api_error(py, e))?;
    to_py_value(py, serde_json::to_value(&decoded))
}

/// Every field of `words` as `encoder` reads them — `cce decode --json`.
#[pyfunction]
pub(crate) fn decode_words<'py>(py: Python<'py>, encoder: &str, words: Vec<u32>) -> PyResult<Bound<'py, PyAny>> {
    let decoded = cce_api::decode_words(encoder, &words).map_err(|e| api_error(py, e))?;
    to_py_value(py, serde_json::to_value(&decoded))
}

/// The op, dtype and arch tables with their tags — `cce tables --json`.
#[pyfunction]
pub(crate) fn tables(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    to_py_value(py, serde_json::to_value(cce_api::tables()))
}
