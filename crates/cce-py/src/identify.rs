//! `identify` and `make_probe`: cce-api's `cce identify` over arrays (as `cce identify
//! --input-dir … --observed …` and `--make-probe`).

use std::sync::Arc;

use cce_api::identify::IdentifyParams;
use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;

use crate::errors::{api_error, detached, named, to_py};
use crate::numbers::bytes;

/// Which order made `observed` ((rank, bytes) pairs) from `inputs` (one raw buffer per rank):
/// `cce identify --json`'s object. `algo_files`: users' MSCCL XML schedules, (name, text);
/// `channels`: the flat ring of that many channels joins the candidates (as `--channels`).
#[pyfunction]
#[pyo3(signature = (inputs, observed, dtype, accum=None, rounding="rne", algo_files=Vec::new(), arch=3, threads=None, ranks_per_node=None, ranks=None, channels=None))]
// A pyo3 signature: one parameter per Python keyword argument, so no struct.
#[allow(clippy::too_many_arguments)]
pub(crate) fn identify<'py>(
    py: Python<'py>,
    inputs: Vec<PyReadonlyArray1<'py, u8>>,
    observed: Vec<(usize, PyReadonlyArray1<'py, u8>)>,
    dtype: &str,
    accum: Option<String>,
    rounding: &str,
    algo_files: Vec<(String, String)>,
    arch: u64,
    threads: Option<usize>,
    ranks_per_node: Option<u64>,
    ranks: Option<u64>,
    channels: Option<u64>,
) -> PyResult<Bound<'py, PyAny>> {
    let params = (|| -> Result<IdentifyParams, cce_api::ApiError> {
        let files = algo_files
            .iter()
            .map(|(name, text)| cce_api::collective::load_algorithm(name, text))
            .collect::<Result<Vec<Arc<_>>, _>>()?;
        Ok(IdentifyParams {
            accum: accum.as_deref().map(cce_api::dtype).transpose()?,
            rounding: named("--rounding", rounding)?,
            algo_files: files,
            arch,
            threads,
            ranks_per_node,
            ranks,
            channels,
            ..IdentifyParams::new(cce_api::dtype(dtype)?)
        })
    })()
    .map_err(|e| api_error(py, e))?;
    let slices: Vec<&[u8]> = inputs.iter().map(|a| bytes(py, a)).collect::<PyResult<_>>()?;
    let seen: Vec<(usize, &[u8])> = observed.iter().map(|(r, a)| Ok((*r, bytes(py, a)?))).collect::<PyResult<_>>()?;
    let id = detached(py, || cce_api::identify::identify(&params, &slices, &seen))?.map_err(|e| api_error(py, e))?;
    to_py(py, &id.to_json())
}

/// `make_probe`'s result: every rank's bytes, the summary, the README.
type Probe<'py> = (Vec<Bound<'py, PyArray1<u8>>>, Bound<'py, PyAny>, String);

/// Probe inputs: every rank's bytes, `cce identify --make-probe --json`'s object (without
/// `dir`), and the README text.
#[pyfunction]
pub(crate) fn make_probe<'py>(py: Python<'py>, ranks: u64, elems: u64, dtype: &str) -> PyResult<Probe<'py>> {
    let dtype = cce_api::dtype(dtype).map_err(|e| api_error(py, e))?;
    let probe = detached(py, || cce_api::identify::make_probe(ranks, elems, dtype))?.map_err(|e| api_error(py, e))?;
    let mut summary = probe.to_json("");
    if let Some(o) = summary.as_object_mut() {
        o.remove("dir");
    }
    let readme = probe.readme();
    let info = to_py(py, &summary)?;
    let arrays = probe.inputs.into_iter().map(|b| PyArray1::from_vec(py, b)).collect();
    Ok((arrays, info, readme))
}
