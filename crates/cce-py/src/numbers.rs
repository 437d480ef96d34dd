//! `convert` and `reduce`: the numbers, on raw byte arrays.

use cce_collectives::{ReduceJob, run_reduce};
use cce_format::{KbinOp, SdmaDtype};
use cce_host::MinMaxConstant;
use cce_numerics::NumType;
use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::{cce_error, detached, path_error};

/// A dtype by its SDMA name (so fp32r gets the numerics' own refusal) or a numerics name, as
/// `cce convert` resolves it.
fn num_type(py: Python<'_>, name: &str) -> PyResult<NumType> {
    let t = match SdmaDtype::from_name(name) {
        Some(d) => NumType::from_sdma(d),
        None => NumType::from_name(name),
    };
    t.map_err(|e| cce_error(py, e.to_string()))
}

fn sdma(py: Python<'_>, name: &str, role: &str) -> PyResult<SdmaDtype> {
    SdmaDtype::from_name(name).ok_or_else(|| cce_error(py, format!("{role}: '{name}' is not an SDMA dtype")))
}

/// `rne` or `sr` with a seed.
fn rounding(py: Python<'_>, name: &str, seed: u64) -> PyResult<Option<u64>> {
    match name {
        "rne" => Ok(None),
        "sr" => Ok(Some(seed)),
        other => Err(cce_error(py, format!("rounding '{other}': expected 'rne' or 'sr'"))),
    }
}

/// Converts raw little-endian elements of `src` to `dst` (ml_dtypes semantics; `saturate`
/// clamps overflow to ±max finite).
#[pyfunction]
#[pyo3(signature = (data, src, dst, rounding_name = "rne", seed = 0, saturate = false, threads = 1))]
#[allow(clippy::too_many_arguments, reason = "the Python keywords")]
pub(crate) fn convert<'py>(
    py: Python<'py>,
    data: PyReadonlyArray1<'py, u8>,
    src: &str,
    dst: &str,
    rounding_name: &str,
    seed: u64,
    saturate: bool,
    threads: usize,
) -> PyResult<Bound<'py, PyArray1<u8>>> {
    let (from, to) = (num_type(py, src)?, num_type(py, dst)?);
    let rounding = match rounding(py, rounding_name, seed)? {
        None => cce_numerics::Rounding::Rne,
        Some(seed) => cce_numerics::Rounding::Stochastic { seed, stream: 0 },
    };
    if threads == 0 {
        return Err(cce_error(py, "threads must be at least 1"));
    }
    let input = data.as_slice().map_err(|e| cce_error(py, e.to_string()))?;
    if input.len() % from.size() != 0 {
        return Err(cce_error(
            py,
            format!("{} bytes is not a multiple of the {src} element size ({})", input.len(), from.size()),
        ));
    }
    let mut output = vec![0u8; input.len() / from.size() * to.size()];
    let result = detached(py, || {
        if input.is_empty() {
            return Ok(());
        }
        cce_numerics::convert_par(from, to, input, &mut output, rounding, saturate, threads)
    })?;
    result.map_err(|e| cce_error(py, e.to_string()))?;
    Ok(PyArray1::from_vec(py, output))
}

/// Each destination's bytes and the run's counts (the keys of `cce reduce --json`).
type Reduced<'py> = (Vec<Bound<'py, PyArray1<u8>>>, Bound<'py, PyDict>);

/// Reduces `srcs` (raw arrays of `in_dt`, equal lengths) through the whole path — cce-host
/// builds the rings, cce-engine executes their bytes over memory — as `cce reduce` does.
/// Returns each destination's bytes and the run's counts.
#[pyfunction]
#[pyo3(signature = (srcs, op, in_dt, accum, out_dt, scales, clamp, clamp_dtype, rounding_name, seed, arch, dests, threads))]
#[allow(clippy::too_many_arguments, reason = "the Python keywords")]
pub(crate) fn reduce<'py>(
    py: Python<'py>,
    srcs: Vec<PyReadonlyArray1<'py, u8>>,
    op: &str,
    in_dt: &str,
    accum: &str,
    out_dt: &str,
    scales: Vec<f32>,
    clamp: Option<String>,
    clamp_dtype: Option<String>,
    rounding_name: &str,
    seed: u64,
    arch: u32,
    dests: usize,
    threads: usize,
) -> PyResult<Reduced<'py>> {
    let kop = match op {
        "add" => KbinOp::Add,
        "fma" => KbinOp::Fma,
        "min" => KbinOp::Min,
        "max" => KbinOp::Max,
        other => return Err(cce_error(py, format!("op '{other}': expected add, fma, min or max"))),
    };
    let (in_dt, accum_dt, out_dt) = (sdma(py, in_dt, "dtype")?, sdma(py, accum, "accum")?, sdma(py, out_dt, "out")?);
    if !scales.is_empty() && kop != KbinOp::Fma {
        return Err(cce_error(py, "scales are for op 'fma' only"));
    }
    if clamp.is_some() && !matches!(kop, KbinOp::Min | KbinOp::Max) {
        return Err(cce_error(py, cce_host::HostError::ConstantNotMinMax.to_string()));
    }
    let constant = match &clamp {
        Some(text) => {
            let dt = match &clamp_dtype {
                Some(n) => sdma(py, n, "clamp_dtype")?,
                None => in_dt,
            };
            Some(MinMaxConstant::parse(text, dt).map_err(|e| cce_error(py, e.to_string()))?)
        }
        None => None,
    };
    let rounding = match rounding(py, rounding_name, seed)? {
        None => cce_host::Rounding::Rne,
        Some(seed) => {
            let seed = u32::try_from(seed).map_err(|_| cce_error(py, format!("seed {seed} does not fit 32 bits")))?;
            cce_host::Rounding::Stochastic { seed }
        }
    };
    if threads == 0 {
        return Err(cce_error(py, "threads must be at least 1"));
    }
    let job = ReduceJob {
        op: kop,
        scales,
        constant,
        rounding,
        arch,
        dests,
        threads,
        ..ReduceJob::add(in_dt, accum_dt, out_dt)
    };
    let views: Vec<&[u8]> =
        srcs.iter().map(|a| a.as_slice().map_err(|e| cce_error(py, e.to_string()))).collect::<PyResult<_>>()?;
    let lens: Vec<u64> = views.iter().map(|v| v.len() as u64).collect();
    // Sizes and the budget first: nothing is allocated for a refused request.
    cce_collectives::single::check_inputs(&job, &lens).map_err(|e| path_error(py, e))?;
    let outcome = detached(py, || run_reduce(&job, &views))?.map_err(|e| path_error(py, e))?;
    let stats = PyDict::new(py);
    stats.set_item("elements", outcome.elements)?;
    stats.set_item("packets", outcome.packets)?;
    stats.set_item("descriptors", outcome.descriptors)?;
    stats.set_item("bytes_read", outcome.bytes_read)?;
    stats.set_item("bytes_written", outcome.bytes_written)?;
    stats.set_item("seconds", outcome.seconds)?;
    let outs = outcome.outputs.into_iter().map(|o| PyArray1::from_vec(py, o)).collect();
    Ok((outs, stats))
}
