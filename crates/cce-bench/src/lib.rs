//! # cce-bench — every benchmark, and the rows it reports
//!
//! Each job is timed against a plain single-thread memcpy of the same bytes measured in the same
//! run ([`memcpy`]), so its ratios hold on any machine; each job checks its sizes and memory
//! budget before anything is allocated. Every report is a plain Rust value with
//! `serde::Serialize`: the fronts render its text and JSON.
//!
//! - [`numerics`]: the numerics kernels alone against the memory floor (`cce bench numerics`);
//! - [`encode`]: ring building — descriptors written per second on one core (`cce bench encode`);
//! - [`reduce`]: one 4-source bf16 reduce through the whole path, beside the numerics kernel it
//!   calls (`cce bench reduce`, `cce.bench_reduce`);
//! - [`machine`]: the version, commit, CPU and threads a report names;
//! - [`allreduce`]: every all-reduce algorithm over 8 ranks, and the same under MPI (`cce bench
//!   allreduce`).
#![forbid(unsafe_code)]

pub mod allreduce;
pub mod encode;
pub mod machine;
pub mod memcpy;
pub mod numerics;
pub mod reduce;
