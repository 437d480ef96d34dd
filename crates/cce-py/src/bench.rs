//! `bench_reduce`: the `cce bench reduce` job (cce-bench's, through cce-api), run in this process so
//! `python -m cce.bench` can put `cce.reduce` beside it in the same run.

use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::{api_error, detached, to_py};

/// Runs `cce bench reduce`'s jobs (4 sources × `bytes_per_source` bf16 → fp32 → bf16, RNE and
/// SR) at each thread count, best of `reps`; returns `{memcpy_gbps, results: [{name, threads,
/// gbps, ratio, decode_fraction, build_fraction, memcpy_gbps, kernel, kernel_gbps,
/// ratio_to_kernel}], decode_fraction}` as `cce bench reduce --json` reports them (a row's `ratio` is against the
/// `memcpy_gbps` timed alternately with it, its `ratio_to_kernel` against the engine's numerics
/// kernel alone, `kernel_gbps`, timed likewise).
#[pyfunction]
#[pyo3(signature = (bytes_per_source, threads, reps = 3))]
pub(crate) fn bench_reduce<'py>(
    py: Python<'py>,
    bytes_per_source: usize,
    threads: Vec<usize>,
    reps: usize,
) -> PyResult<Bound<'py, PyDict>> {
    let r = detached(py, || cce_api::bench::reduce(bytes_per_source, &threads, reps))?.map_err(|e| api_error(py, e))?;
    let v = serde_json::to_value(&r).map_err(|e| api_error(py, cce_api::ApiError::Input(e.to_string())))?;
    Ok(to_py(py, &v)?.cast_into::<PyDict>()?)
}
