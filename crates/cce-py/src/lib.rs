//! `cce._cce`: the Python extension module behind the `cce` package (python/cce).
//!
//! A thin front, like the CLI: arguments arrive as raw little-endian byte arrays (numpy `uint8`
//! views of the caller's arrays, read without a copy) and dtype names; the work is done by the
//! library (cce-api, the calls the `cce` commands make), so bits and messages are the CLI's; results leave as new `uint8` arrays the package views as the right
//! dtype.
//!
//! Guarantees: the GIL is released during every computation; no Rust panic crosses into Python
//! (a panic becomes a `RuntimeError` naming it a bug); bad input raises `cce.CceError` (a
//! `ValueError`) with the CLI's one-line message, an engine fault `cce.EngineFault` (queue,
//! descriptor, reason), a failed rank `cce.RankFailed` (rank, step).
#![deny(unsafe_code)]

mod allreduce;
mod bench;
mod bits;
mod errors;
mod identify;
mod numbers;
mod repro;
mod reveal;
mod rings;
mod seeds;
mod xla_ffi;

use pyo3::prelude::*;

/// Rust's allocations in this extension come from mimalloc, which keeps freed memory for reuse.
/// With glibc's malloc, each call's megabyte-sized buffers were returned to the OS and faulted in
/// again on the next call (see python/README.md, "Overhead").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The address of the XLA FFI handler behind `cce.jax` (`jax.ffi.register_ffi_target`).
#[pyfunction]
fn xla_ffi_handler() -> usize {
    xla_ffi::handler_address()
}

#[pymodule]
fn _cce(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(xla_ffi_handler, m)?)?;
    m.add_function(wrap_pyfunction!(seeds::py_derived_seed, m)?)?;
    m.add_function(wrap_pyfunction!(numbers::convert, m)?)?;
    m.add_function(wrap_pyfunction!(numbers::value, m)?)?;
    m.add_function(wrap_pyfunction!(numbers::reduce, m)?)?;
    m.add_function(wrap_pyfunction!(numbers::gce_compress, m)?)?;
    m.add_function(wrap_pyfunction!(numbers::gce_decompress, m)?)?;
    m.add_function(wrap_pyfunction!(bench::bench_reduce, m)?)?;
    m.add_function(wrap_pyfunction!(bits::encode, m)?)?;
    m.add_function(wrap_pyfunction!(bits::decode_hex, m)?)?;
    m.add_function(wrap_pyfunction!(bits::decode_words, m)?)?;
    m.add_function(wrap_pyfunction!(bits::tables, m)?)?;
    m.add_function(wrap_pyfunction!(rings::build, m)?)?;
    m.add_function(wrap_pyfunction!(rings::run, m)?)?;
    m.add_class::<rings::Ring>()?;
    m.add_function(wrap_pyfunction!(allreduce::allreduce, m)?)?;
    m.add_function(wrap_pyfunction!(allreduce::element, m)?)?;
    m.add_function(wrap_pyfunction!(identify::identify, m)?)?;
    m.add_function(wrap_pyfunction!(identify::make_probe, m)?)?;
    m.add_function(wrap_pyfunction!(repro::repro, m)?)?;
    m.add_function(wrap_pyfunction!(reveal::reveal, m)?)?;
    m.add("MAX_SOURCES", cce_api::MAX_SOURCES)?;
    Ok(())
}
