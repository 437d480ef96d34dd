//! `encode`, `decode`, `tables`: the bits, as the objects `cce encode/decode/tables --json`
//! print (cce-api builds them; this module only converts them to Python).

use pyo3::prelude::*;

use crate::errors::{api_error, to_py};

/// The words `encoder` encodes from `fields` (name, value text) — `cce encode`'s `words`.
#[pyfunction]
pub(crate) fn encode<'py>(
    py: Python<'py>,
    encoder: &str,
    fields: Vec<(String, String)>,
) -> PyResult<Bound<'py, PyAny>> {
    let pairs: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let v = cce_api::encode(encoder, &pairs).map_err(|e| api_error(py, e))?;
    to_py(py, &v)
}

/// Every field of `hex` (little-endian bytes) as `encoder` reads it — `cce decode --json`.
#[pyfunction]
pub(crate) fn decode_hex<'py>(py: Python<'py>, encoder: &str, hex: &str) -> PyResult<Bound<'py, PyAny>> {
    let v = cce_api::decode(encoder, hex).map_err(|e| api_error(py, e))?;
    to_py(py, &v)
}

/// Every field of `words` as `encoder` reads them — `cce decode --json`.
#[pyfunction]
pub(crate) fn decode_words<'py>(py: Python<'py>, encoder: &str, words: Vec<u32>) -> PyResult<Bound<'py, PyAny>> {
    let v = cce_api::decode_words(encoder, &words).map_err(|e| api_error(py, e))?;
    to_py(py, &v)
}

/// The op, dtype and arch tables with their tags — `cce tables --json`.
#[pyfunction]
pub(crate) fn tables(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    to_py(py, &cce_api::tables())
}
