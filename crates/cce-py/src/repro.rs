//! `repro`: cce-api's bit-identity matrix (as `cce repro`) over lists given as keywords, the
//! inputs generated or given as one array per rank.

use cce_api::AlgoChoice;
use cce_api::repro::{GivenShape, ReproInputs, ReproParams};
use numpy::PyReadonlyArray1;
use pyo3::prelude::*;

use crate::errors::{api_error, detached, named, to_py};
use crate::numbers::bytes;

/// Every text of a list parsed by its type's `FromStr`, refused as the CLI refuses it.
fn each<T: std::str::FromStr>(flag: &str, texts: &[String]) -> Result<Vec<T>, cce_api::ApiError>
where
    T::Err: std::fmt::Display,
{
    texts.iter().map(|t| named(flag, t)).collect()
}

/// The lists of `cce.repro` (a dict by the CLI's option names, `algo_files` as (name, text)).
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
pub(crate) struct Lists {
    ranks: Vec<u64>,
    algo: Vec<String>,
    algo_files: Vec<(String, String)>,
    elems: Vec<String>,
    dtype: Vec<String>,
    accum: Vec<String>,
    rounding: Vec<String>,
    seed: Vec<u64>,
    arch: Vec<u64>,
    compress: Vec<String>,
    ranks_per_node: Vec<u64>,
    channels: Vec<u64>,
}

fn params(l: &Lists, op: &str, input_seed: u64, all_pairs: bool) -> Result<ReproParams, cce_api::ApiError> {
    let mut algos: Vec<AlgoChoice> = each("--algo", &l.algo)?;
    for (name, text) in &l.algo_files {
        algos.push(AlgoChoice::File(cce_api::collective::load_algorithm(name, text)?));
    }
    let mut elems = Vec::new();
    for e in &l.elems {
        elems.extend(cce_api::repro::elems_values(e)?);
    }
    let dtypes = l.dtype.iter().map(|d| cce_api::dtype(d)).collect::<Result<Vec<_>, _>>()?;
    let accums = l.accum.iter().map(|d| cce_api::dtype(d).map(Some)).collect::<Result<Vec<_>, _>>()?;
    Ok(ReproParams {
        accums: if l.accum.is_empty() { vec![None] } else { accums },
        roundings: each("--rounding", &l.rounding)?,
        seeds: l.seed.clone(),
        archs: l.arch.clone(),
        compress: each("--compress", &l.compress)?,
        ranks_per_node: if l.ranks_per_node.is_empty() {
            vec![None]
        } else {
            l.ranks_per_node.iter().copied().map(Some).collect()
        },
        channels: l.channels.clone(),
        op: named("--op", op)?,
        input_seed,
        all_pairs,
        ..ReproParams::new(l.ranks.clone(), algos, elems, dtypes)
    })
}

/// Runs the configuration space of `lists` (each a list of the CLI's texts or numbers) on
/// inputs generated from `input_seed`, or on `inputs` (one raw array per rank, read in place);
/// returns `cce repro --json`'s object.
#[pyfunction]
#[pyo3(signature = (lists, op, input_seed, all_pairs, inputs=None))]
pub(crate) fn repro<'py>(
    py: Python<'py>,
    lists: Lists,
    op: &str,
    input_seed: u64,
    all_pairs: bool,
    inputs: Option<Vec<PyReadonlyArray1<'py, u8>>>,
) -> PyResult<Bound<'py, PyAny>> {
    let p = params(&lists, op, input_seed, all_pairs).map_err(|e| api_error(py, e))?;
    let slices: Option<Vec<&[u8]>> =
        inputs.as_ref().map(|a| a.iter().map(|x| bytes(py, x)).collect::<PyResult<_>>()).transpose()?;
    let size = p.dtypes.first().map_or(1, |d| usize::from(d.bytes().max(1)));
    let given = slices
        .as_ref()
        .map(|s| GivenShape { ranks: s.len(), elems: s.iter().map(|b| b.len() / size).min().unwrap_or(0) as u64 });
    let report = detached(py, || -> Result<_, cce_api::ApiError> {
        let plan = p.plan(given)?;
        let inputs = match &slices {
            Some(s) => ReproInputs::Given(s),
            None => ReproInputs::Generated,
        };
        plan.run(inputs, &mut || {})
    })?
    .map_err(|e| api_error(py, e))?;
    to_py(py, &report.to_json())
}
