//! `reveal`: cce-api's `cce reveal` with a Python function as the black box.

use numpy::{PyArray1, PyArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyList;

use cce_api::reveal::{BlackBox, RevealError, RevealParams};

use crate::errors::{api_error, to_py};

/// The black box: `run(k, inputs)` on Python's side, inputs and outputs as raw `uint8` arrays,
/// one per rank. An exception it raises is kept and raised again by [`reveal`].
struct PyBox<'py> {
    py: Python<'py>,
    run: Bound<'py, PyAny>,
    raised: Option<PyErr>,
}

impl BlackBox for PyBox<'_> {
    fn run(&mut self, run: u32, inputs: &[Vec<u8>]) -> Result<Vec<Vec<u8>>, RevealError> {
        let fail = |message: String| RevealError::BlackBox { run, message };
        let arrays: Vec<Bound<'_, PyArray1<u8>>> = inputs.iter().map(|b| PyArray1::from_slice(self.py, b)).collect();
        let list = PyList::new(self.py, arrays).map_err(|e| fail(e.to_string()))?;
        let got = match self.run.call1((run, list)) {
            Ok(v) => v,
            Err(e) => {
                let text = e.to_string();
                self.raised = Some(e);
                return Err(fail(format!("the function raised {text}")));
            }
        };
        let outs: Vec<Bound<'_, PyArray1<u8>>> =
            got.extract().map_err(|_| fail("the function must return one uint8 array per rank".into()))?;
        outs.iter()
            .map(|a| a.to_vec().map_err(|_| fail("an output that is not a contiguous uint8 array".into())))
            .collect()
    }
}

/// `cce reveal --json`'s object for the black box `run(k, inputs) -> outputs` (raw `uint8`
/// arrays, one per rank).
#[pyfunction]
pub(crate) fn reveal<'py>(
    py: Python<'py>,
    run: Bound<'py, PyAny>,
    ranks: u64,
    elems: u64,
    dtype: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let dtype = cce_api::dtype(dtype).map_err(|e| api_error(py, e))?;
    let params = RevealParams { ranks, elems, dtype };
    let mut bb = PyBox { py, run, raised: None };
    match cce_api::reveal::reveal(&params, &mut bb) {
        Ok(answer) => to_py(py, &answer.to_json()),
        Err(e) => Err(bb.raised.take().unwrap_or_else(|| api_error(py, e))),
    }
}
