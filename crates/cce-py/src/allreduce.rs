//! `allreduce`: rank buffers through cce-api's all-reduce (as `cce allreduce --input-dir`).

use std::sync::Arc;

use cce_api::params::UserAlgo;
use cce_api::{AlgoChoice, AllreduceParams};
use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;

use crate::errors::{api_error, detached, named, to_py};
use crate::numbers::{Outputs, bytes};

/// All-reduces one raw buffer per rank; returns every rank's output bytes and `cce allreduce
/// --json`'s object. `algo_file` is a user's MSCCL XML schedule, (name, text), run instead of
/// `algo` (as `cce allreduce --algo-file`); `channels` the flat ring's ring cycles (as
/// `--channels`; the library checks the value and what it may run with).
#[pyfunction]
#[pyo3(signature = (inputs, algo, op, dtype, accum, rounding, seed, arch, compress, ranks_per_node, algo_file=None, check="exact", topology=None, channels=None))]
// A pyo3 signature: one parameter per Python keyword argument, so no struct.
#[allow(clippy::too_many_arguments)]
pub(crate) fn allreduce<'py>(
    py: Python<'py>,
    inputs: Vec<PyReadonlyArray1<'py, u8>>,
    algo: &str,
    op: &str,
    dtype: &str,
    accum: Option<String>,
    rounding: &str,
    seed: u64,
    arch: u64,
    compress: Option<String>,
    ranks_per_node: Option<u64>,
    algo_file: Option<(String, String)>,
    check: &str,
    topology: Option<Topology>,
    channels: Option<u64>,
) -> PyResult<Outputs<'py>> {
    let keywords = (algo, op, dtype, accum.as_deref(), rounding, check);
    let mut params = call_params(py, inputs.len() as u64, keywords, seed, arch, (compress, ranks_per_node), algo_file)?;
    if let Some(t) = topology {
        with_topology(&mut params, t).map_err(|e| api_error(py, e))?;
    }
    params.channels = channels;
    // The engines read every rank's array in place (nothing of it is copied), without the GIL.
    let slices: Vec<&[u8]> = inputs.iter().map(|a| bytes(py, a)).collect::<PyResult<_>>()?;
    let result = detached(py, || cce_api::allreduce_slices(&params, &slices))?.map_err(|e| api_error(py, e))?;
    let stats = to_py(py, &result.to_json())?;
    let outs = result.outcome.outputs.into_iter().map(|o| PyArray1::from_vec(py, o)).collect();
    Ok((outs, stats))
}

/// `cce.allreduce`'s keywords beyond the flat all-reduce: nodes, intra, inter, collective.
pub(crate) type Topology = (Option<u64>, Option<String>, Option<String>, Option<String>);

/// `topology` into `params`, every name parsed (as `--nodes`, `--intra`, `--inter`,
/// `--collective`).
pub(crate) fn with_topology(
    params: &mut AllreduceParams,
    (nodes, intra, inter, collective): Topology,
) -> Result<(), cce_api::ApiError> {
    params.nodes = nodes;
    params.intra = intra
        .as_deref()
        .map(|a| cce_api::params::intra_algo(a).map_err(|e| cce_api::ApiError::Input(format!("--intra {e}"))))
        .transpose()?;
    params.inter = inter.as_deref().map(|a| named("--inter", a)).transpose()?;
    params.collective = collective.as_deref().map(|c| named("--collective", c)).transpose()?;
    Ok(())
}

/// The parameters of a Python call (`allreduce`, `element`): its schedule file (name, text)
/// loaded, then its keywords parsed by [`params`]; a refusal as the documented exception.
fn call_params(
    py: Python<'_>,
    ranks: u64,
    keywords: Keywords<'_>,
    seed: u64,
    arch: u64,
    (compress, ranks_per_node): (Option<String>, Option<u64>),
    algo_file: Option<(String, String)>,
) -> PyResult<AllreduceParams> {
    let algo_file = algo_file
        .map(|(name, text)| cce_api::collective::load_algorithm(&name, &text))
        .transpose()
        .map_err(|e| api_error(py, e))?;
    params(ranks, keywords, seed, arch, compress.as_deref(), ranks_per_node, algo_file).map_err(|e| api_error(py, e))
}

/// `cce.allreduce`'s string keywords: algo, op, dtype, accum, rounding, check.
pub(crate) type Keywords<'a> = (&'a str, &'a str, &'a str, Option<&'a str>, &'a str, &'a str);

/// `cce.allreduce`'s keywords as the library's parameters for `ranks` ranks, every name parsed
/// (`algo` is not looked at when a user's schedule `file` runs): the Python call and cce.jax's
/// XLA handler both build them here.
pub(crate) fn params(
    ranks: u64,
    (algo, op, dtype, accum, rounding, check): Keywords<'_>,
    seed: u64,
    arch: u64,
    compress: Option<&str>,
    ranks_per_node: Option<u64>,
    file: Option<Arc<UserAlgo>>,
) -> Result<AllreduceParams, cce_api::ApiError> {
    let accum = accum.map(cce_api::dtype).transpose()?;
    let check = check.parse().map_err(|e: String| cce_api::ApiError::Input(format!("check={e}")))?;
    let dtype = cce_api::dtype(dtype)?;
    let algo = match file {
        Some(u) => AlgoChoice::File(u),
        None => named("--algo", algo)?,
    };
    let op = named("--op", op)?;
    let rounding = named("--rounding", rounding)?;
    let compress = compress.map(|c| named("--compress", c)).transpose()?.unwrap_or_default();
    Ok(AllreduceParams {
        accum,
        rounding,
        seed,
        arch,
        compress,
        ranks_per_node,
        check,
        ..AllreduceParams::new(ranks, algo, op, dtype)
    })
}

/// One element's story over one raw buffer per rank (as `cce allreduce --element`): the
/// object under `--json`'s `element` key. The keywords are `allreduce`'s (without `check`),
/// then the element and the rank whose output is shown, and the flat ring's `channels`.
#[pyfunction]
#[pyo3(signature = (inputs, algo, op, dtype, accum, rounding, seed, arch, compress, ranks_per_node, algo_file, index, rank=None, topology=None, channels=None))]
// A pyo3 signature: one parameter per Python keyword argument, so no struct.
#[allow(clippy::too_many_arguments)]
pub(crate) fn element<'py>(
    py: Python<'py>,
    inputs: Vec<PyReadonlyArray1<'py, u8>>,
    algo: &str,
    op: &str,
    dtype: &str,
    accum: Option<String>,
    rounding: &str,
    seed: u64,
    arch: u64,
    compress: Option<String>,
    ranks_per_node: Option<u64>,
    algo_file: Option<(String, String)>,
    index: u64,
    rank: Option<u64>,
    topology: Option<Topology>,
    channels: Option<u64>,
) -> PyResult<Bound<'py, PyAny>> {
    let keywords = (algo, op, dtype, accum.as_deref(), rounding, "none");
    let mut params = call_params(py, inputs.len() as u64, keywords, seed, arch, (compress, ranks_per_node), algo_file)?;
    if let Some(t) = topology {
        with_topology(&mut params, t).map_err(|e| api_error(py, e))?;
    }
    params.channels = channels;
    let slices: Vec<&[u8]> = inputs.iter().map(|a| bytes(py, a)).collect::<PyResult<_>>()?;
    let size = params.dtype.bytes().max(1) as u64;
    let len = slices.first().map_or(0, |s| s.len() as u64);
    if len % size != 0 {
        let e = cce_api::ApiError::Ragged { len, dtype: params.dtype.name().to_string(), size: size as usize };
        return Err(api_error(py, e));
    }
    let story = detached(py, || {
        params.element_story(len / size, index, rank, cce_api::collective::StoryInputs::Arrays(&slices))
    })?
    .map_err(|e| api_error(py, e))?;
    let v = story.to_json();
    to_py(py, &v["element"])
}
