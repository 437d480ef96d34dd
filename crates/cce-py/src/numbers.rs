//! `convert` and `reduce`: the numbers, on raw byte arrays, through cce-api (the calls
//! `cce convert` and `cce reduce` make, so the bits and the messages are the CLI's).

use cce_api::{ClampConstant, OpOptions, ReduceParams};
use numpy::{PyArray1, PyReadonlyArray1, PyReadwriteArray1};
use pyo3::prelude::*;

use crate::errors::{api_error, cce_error, detached, named, to_py};

/// Result arrays (raw bytes) and the command's `--json` object.
pub(crate) type Outputs<'py> = (Vec<Bound<'py, PyArray1<u8>>>, Bound<'py, PyAny>);

/// The bytes of a readonly `uint8` array (C-contiguous: the package passes views).
pub(crate) fn bytes<'a>(py: Python<'_>, a: &'a PyReadonlyArray1<'_, u8>) -> PyResult<&'a [u8]> {
    a.as_slice().map_err(|e| cce_error(py, e.to_string()))
}

/// Converts raw little-endian elements of `src` to `dst` (ml_dtypes semantics; `saturate`
/// clamps overflow to ±max finite).
#[pyfunction]
#[pyo3(signature = (data, src, dst, rounding = "rne", seed = None, saturate = false, threads = 1))]
// A pyo3 signature: one parameter per Python keyword argument, so no struct.
#[allow(clippy::too_many_arguments)]
pub(crate) fn convert<'py>(
    py: Python<'py>,
    data: PyReadonlyArray1<'py, u8>,
    src: &str,
    dst: &str,
    rounding: &str,
    seed: Option<u64>,
    saturate: bool,
    threads: u64,
) -> PyResult<Bound<'py, PyArray1<u8>>> {
    let input = bytes(py, &data)?;
    let names = || Ok((cce_api::num_type(src)?, cce_api::num_type(dst)?, named("--rounding", rounding)?));
    let (src, dst, rounding) = names().map_err(|e| api_error(py, e))?;
    let out = detached(py, || cce_api::convert(src, dst, input, rounding, seed, saturate, threads))?
        .map_err(|e| api_error(py, e))?;
    Ok(PyArray1::from_vec(py, out))
}

/// One value (a decimal, or `0x` bits) in `dtype`, told in full — `cce value --json`'s object
/// for one value (the page's Dtypes view shows the same).
#[pyfunction]
#[pyo3(signature = (dtype, value, saturate = false))]
pub(crate) fn value<'py>(py: Python<'py>, dtype: &str, value: &str, saturate: bool) -> PyResult<Bound<'py, PyAny>> {
    let v = cce_api::dtype_value(dtype, value, saturate).map_err(|e| api_error(py, e))?;
    to_py(py, &v.to_json())
}

/// Reduces `srcs` (raw arrays of `in_dt`, equal lengths) through the whole path — cce-host
/// builds the rings, cce-engine executes their bytes over memory, the sources read in place —
/// as `cce reduce` does, writing each destination into `outs` (fresh `uint8` arrays of
/// elements × out size bytes, one per destination). Returns `cce reduce --json`'s object.
#[pyfunction]
#[pyo3(signature = (srcs, outs, op, in_dt, accum, out_dt, scales, constant, const_dtype, rounding, seed, arch, threads))]
// A pyo3 signature: one parameter per Python keyword argument, so no struct.
#[allow(clippy::too_many_arguments)]
pub(crate) fn reduce<'py>(
    py: Python<'py>,
    srcs: Vec<PyReadonlyArray1<'py, u8>>,
    mut outs: Vec<PyReadwriteArray1<'py, u8>>,
    op: &str,
    in_dt: &str,
    accum: &str,
    out_dt: &str,
    scales: Vec<f32>,
    constant: Option<String>,
    const_dtype: Option<String>,
    rounding: &str,
    seed: Option<u64>,
    arch: u64,
    threads: u64,
) -> PyResult<Bound<'py, PyAny>> {
    let dtype = |name: &str| cce_api::dtype(name).map_err(|e| api_error(py, e));
    let const_dtype = const_dtype.as_deref().map(dtype).transpose()?;
    let (in_dt, accum, out_dt) = (dtype(in_dt)?, dtype(accum)?, dtype(out_dt)?);
    let op = named("--op", op).map_err(|e| api_error(py, e))?;
    let rounding = named("--rounding", rounding).map_err(|e| api_error(py, e))?;
    let constant = constant.map(ClampConstant::new);
    let params = ReduceParams {
        opts: OpOptions { scales, constant, const_dtype, rounding, seed },
        arch,
        dests: outs.len(),
        threads,
        ..ReduceParams::new(op, in_dt, accum, out_dt)
    };
    let views: Vec<&[u8]> = srcs.iter().map(|a| bytes(py, a)).collect::<PyResult<_>>()?;
    let mut targets: Vec<&mut [u8]> =
        outs.iter_mut().map(|o| o.as_slice_mut().map_err(|e| cce_error(py, e.to_string()))).collect::<PyResult<_>>()?;
    let result = detached(py, || cce_api::reduce_into(&params, &views, &mut targets))?.map_err(|e| api_error(py, e))?;
    to_py(py, &result.to_json())
}

/// A GCE payload and its headers, as raw bytes.
pub(crate) type PayloadAndHeaders<'py> = (Bound<'py, PyArray1<u8>>, Bound<'py, PyArray1<u8>>);

/// Compresses raw elements of `dtype` with GCE gradient packets on the engine (the project's
/// MODEL codec); returns the fp8 payload and the packets' headers, as raw bytes.
#[pyfunction]
pub(crate) fn gce_compress<'py>(
    py: Python<'py>,
    data: PyReadonlyArray1<'py, u8>,
    dtype: &str,
) -> PyResult<PayloadAndHeaders<'py>> {
    let input = bytes(py, &data)?;
    let dtype = cce_api::dtype(dtype).map_err(|e| api_error(py, e))?;
    let c = detached(py, || cce_api::gce::compress(dtype, input))?.map_err(|e| api_error(py, e))?;
    Ok((PyArray1::from_vec(py, c.payload), PyArray1::from_vec(py, c.headers)))
}

/// Expands a GCE payload and its headers to raw elements of `dtype`.
#[pyfunction]
pub(crate) fn gce_decompress<'py>(
    py: Python<'py>,
    payload: PyReadonlyArray1<'py, u8>,
    headers: PyReadonlyArray1<'py, u8>,
    dtype: &str,
) -> PyResult<Bound<'py, PyArray1<u8>>> {
    let (p, h) = (bytes(py, &payload)?, bytes(py, &headers)?);
    let dtype = cce_api::dtype(dtype).map_err(|e| api_error(py, e))?;
    let out = detached(py, || cce_api::gce::decompress(p, h, dtype))?.map_err(|e| api_error(py, e))?;
    Ok(PyArray1::from_vec(py, out))
}
