//! Rings: `build` (as `cce build`), the `Ring` object (its dump bytes, listing and descriptors,
//! as `cce disasm`), and `run` (as `cce run`: the ring over memory loaded from arrays).

use cce_api::{BuildParams, ClampConstant, FmaSelectors, OpOptions, SelectorsError};
use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::{api_error, detached, named, to_py};
use crate::numbers::bytes;

/// A ring dump: what `cce build -o` writes and `cce disasm` / `cce run` read.
#[pyclass(module = "cce._cce", frozen)]
pub(crate) struct Ring {
    file: Vec<u8>,
}

#[pymethods]
impl Ring {
    /// A ring from dump bytes (checked: a malformed dump raises CceError).
    #[new]
    fn new(py: Python<'_>, data: Vec<u8>) -> PyResult<Self> {
        cce_api::disasm(&data).map_err(|e| api_error(py, e))?;
        Ok(Ring { file: data })
    }

    /// The dump bytes.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, pyo3::types::PyBytes> {
        pyo3::types::PyBytes::new(py, &self.file)
    }

    /// The `cce disasm` listing.
    fn disasm(&self, py: Python<'_>) -> PyResult<String> {
        Ok(cce_api::disasm(&self.file).map_err(|e| api_error(py, e))?.to_text())
    }

    /// The `cce disasm --json` object: every queue's descriptors, packets and fault.
    fn listing<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &cce_api::disasm(&self.file).map_err(|e| api_error(py, e))?.to_json())
    }
}

/// Builds the rings of one reduce as `cce build` does; returns the dump bytes.
#[pyfunction]
#[pyo3(signature = (op, in_dt, accum, out_dt, elems, src, dst, arch, scales, constant, const_dtype, rounding, seed, prio, cap, no_cce_info, selectors, ring_size, queue))]
// A pyo3 signature: one parameter per Python keyword argument, so no struct.
#[allow(clippy::too_many_arguments)]
pub(crate) fn build(
    py: Python<'_>,
    op: &str,
    in_dt: &str,
    accum: &str,
    out_dt: &str,
    elems: u64,
    src: Vec<u64>,
    dst: Vec<u64>,
    arch: u64,
    scales: Vec<f32>,
    constant: Option<String>,
    const_dtype: Option<String>,
    rounding: &str,
    seed: Option<u64>,
    prio: u64,
    cap: Option<u64>,
    no_cce_info: bool,
    selectors: Option<String>,
    ring_size: Option<u64>,
    queue: u64,
) -> PyResult<Ring> {
    let dtype = |name: &str| cce_api::dtype(name).map_err(|e| api_error(py, e));
    let const_dtype = const_dtype.as_deref().map(dtype).transpose()?;
    let dtypes = (dtype(in_dt)?, dtype(accum)?, dtype(out_dt)?);
    let names = || {
        let op = named("--op", op)?;
        let rounding = named("--rounding", rounding)?;
        let selectors = selectors.as_deref().map(fma_selectors).transpose()?.unwrap_or_default();
        Ok((op, rounding, selectors))
    };
    let (op, rounding, selectors) = names().map_err(|e| api_error(py, e))?;
    let constant = constant.map(ClampConstant::new);
    let p = BuildParams {
        arch,
        opts: OpOptions { scales, constant, const_dtype, rounding, seed },
        prio,
        cap,
        no_cce_info,
        selectors,
        ring_size,
        queue,
        ..BuildParams::new(op, dtypes, elems, src, dst)
    };
    let built = cce_api::build(&p).map_err(|e| api_error(py, e))?;
    Ok(Ring { file: built.file_bytes() })
}

/// `selectors="a,b,c"`; a refusal names the parameter as the CLI does.
fn fma_selectors(text: &str) -> Result<FmaSelectors, cce_api::ApiError> {
    text.parse().map_err(|e| {
        cce_api::ApiError::Input(match e {
            SelectorsError::Operand(_) => format!("--selectors: {e}"),
            SelectorsError::Count => format!("--selectors {e}"),
        })
    })
}

/// Runs `ring` over memory loaded from `loads` ((address, uint8 array) pairs), then reads each
/// (address, length) of `dumps`; returns `cce run --json`'s object with `dumps` added (the
/// arrays). A faulted queue shows in the object (state `faulted`, its fault); nothing raises.
#[pyfunction]
#[pyo3(signature = (ring, loads, dumps, threads = 1))]
pub(crate) fn run<'py>(
    py: Python<'py>,
    ring: &Ring,
    loads: Vec<(u64, PyReadonlyArray1<'py, u8>)>,
    dumps: Vec<(u64, u64)>,
    threads: u64,
) -> PyResult<Bound<'py, PyAny>> {
    let views: Vec<(u64, &[u8])> = loads.iter().map(|(a, b)| Ok((*a, bytes(py, b)?))).collect::<PyResult<_>>()?;
    let result =
        detached(py, || cce_api::run_ring(&ring.file, &views, &dumps, threads))?.map_err(|e| api_error(py, e))?;
    let out = to_py(py, &result.to_json())?;
    let arrays: Vec<Bound<'py, PyArray1<u8>>> = result.dumps.into_iter().map(|d| PyArray1::from_vec(py, d)).collect();
    out.cast::<PyDict>()?.set_item("dumps", arrays)?;
    Ok(out)
}
