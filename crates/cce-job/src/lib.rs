//! # cce-job — one job through the whole path
//!
//! What the host runtime and the DMA engine do together, for one job at a time: a request is
//! lowered to ring bytes by `cce-host` and those bytes are executed by `cce-engine` over
//! memory, then the outputs are read back. Nothing here computes a result any other way.
//!
//! - [`reduce`]: one reduce, N sources → M destinations; what `cce reduce` and `cce.reduce`
//!   run, and the job the demo and the benchmarks time;
//! - [`gradient`]: GCE compression and decompression of one buffer through gradient packets;
//!   what `cce.gce_compress` / `cce.gce_decompress` run.
//!
//! The engine crate never depends on the host crate; this crate is where the two meet.
#![forbid(unsafe_code)]

pub mod gradient;
pub mod reduce;

pub use reduce::{PathError, ReduceJob, ReduceOutcome, run_reduce, run_reduce_into};
