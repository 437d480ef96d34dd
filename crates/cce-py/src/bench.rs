//! `bench_reduce`: the `cce bench reduce` job (cce-collectives' bench), run in this process so
//! `python -m cce.bench` can put `cce.reduce` beside it in the same run.

use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::{api_error, detached};

/// Runs `cce bench reduce`'s jobs (4 sources × `bytes_per_source` bf16 → fp32 → bf16, RNE and
/// SR) at each thread count, best of `reps`; returns `{memcpy_gbps, results: [{name, threads,
/// gbps, ratio, decode_fraction, build_fraction, memcpy_gbps, kernel, kernel_gbps,
/// ratio_to_kernel}]}` as `cce bench reduce --json` reports them (a row's `ratio` is against the
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
    let r = detached(py, || cce_collectives::bench::reduce(bytes_per_source, &threads, reps.max(1)))?
        .map_err(|e| api_error(py, cce_api::ApiError::Path(e)))?;
    let out = PyDict::new(py);
    out.set_item("memcpy_gbps", r.memcpy_gbps)?;
    let rows = r
        .results
        .iter()
        .map(|x| {
            let d = PyDict::new(py);
            d.set_item("name", x.name)?;
            d.set_item("threads", x.threads)?;
            d.set_item("gbps", x.gbps)?;
            d.set_item("ratio", x.ratio)?;
            d.set_item("decode_fraction", x.decode_fraction)?;
            d.set_item("build_fraction", x.build_fraction)?;
            d.set_item("memcpy_gbps", x.memcpy_gbps)?;
            d.set_item("kernel", &x.kernel)?;
            d.set_item("kernel_gbps", x.kernel_gbps)?;
            d.set_item("ratio_to_kernel", x.ratio_to_kernel)?;
            Ok(d)
        })
        .collect::<PyResult<Vec<_>>>()?;
    out.set_item("results", rows)?;
    Ok(out)
}
