//! `cce bench`: which benchmarks exist, their sizes, and running one — the jobs and their rows
//! are [`cce_bench`]'s; this module picks the sizes every front uses and checks them all
//! before any job allocates.

use core::fmt;
use core::str::FromStr;

use serde::Serialize;

/// The benchmarks' results, as [`BenchResult`] holds them.
pub use cce_bench::allreduce::{AllreduceBench, AllreduceBenchResult};
/// See [`AllreduceBench`].
pub use cce_bench::encode::EncodeBench;
/// See [`AllreduceBench`].
pub use cce_bench::numerics::{NumericsBench, NumericsRow, ThreadsGbps};
/// See [`AllreduceBench`].
pub use cce_bench::reduce::{ReduceBench, ReduceBenchResult};

use crate::error::ApiError;

/// Bytes per source of the numerics and reduce jobs, and per rank of the all-reduce job (the
/// issues' 64 MiB).
pub const SOURCE_BYTES: usize = 64 << 20;
/// Ranks of the all-reduce job.
pub const ALLREDUCE_RANKS: usize = 8;
/// Bytes per source of the encode job: the "1 GiB bf16 4-source reduce".
pub const ENCODE_BYTES: u64 = 1 << 30;

/// One benchmark.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Benchmark {
    /// The numerics kernels alone, against the memory floor.
    Numerics,
    /// Ring building, descriptors per second.
    Encode,
    /// One reduce through the whole path.
    Reduce,
    /// Every all-reduce algorithm over [`ALLREDUCE_RANKS`] ranks.
    Allreduce,
}

impl Benchmark {
    /// Every benchmark, in the order a bare `cce bench` runs them.
    pub const ALL: [Benchmark; 4] = [Benchmark::Numerics, Benchmark::Encode, Benchmark::Reduce, Benchmark::Allreduce];

    /// Its name, as `cce bench NAME` and the JSON's keys spell it.
    pub const fn name(self) -> &'static str {
        match self {
            Benchmark::Numerics => "numerics",
            Benchmark::Encode => "encode",
            Benchmark::Reduce => "reduce",
            Benchmark::Allreduce => "allreduce",
        }
    }
}

impl fmt::Display for Benchmark {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Benchmark {
    type Err = ApiError;
    fn from_str(s: &str) -> Result<Self, ApiError> {
        Benchmark::ALL.into_iter().find(|b| b.name() == s).ok_or_else(|| {
            let names: Vec<&str> = Benchmark::ALL.iter().map(|b| b.name()).collect();
            ApiError::Input(format!("unknown benchmark '{s}' (expected one of: {})", names.join(" ")))
        })
    }
}

/// What one benchmark reported.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum BenchResult {
    /// [`Benchmark::Numerics`].
    Numerics(NumericsBench),
    /// [`Benchmark::Encode`].
    Encode(EncodeBench),
    /// [`Benchmark::Reduce`].
    Reduce(ReduceBench),
    /// [`Benchmark::Allreduce`].
    Allreduce(AllreduceBench),
}

/// Engine and kernel thread counts the jobs run at: 1, and every core when there are more.
pub fn thread_counts() -> Vec<usize> {
    let all = std::thread::available_parallelism().map_or(1, |n| n.get());
    if all > 1 { vec![1, all] } else { vec![1] }
}

/// Checks every selected job's sizes and memory budget, before any of them allocates or runs.
pub fn check(which: &[Benchmark]) -> Result<(), ApiError> {
    for w in which {
        match w {
            Benchmark::Reduce => cce_bench::reduce::check_reduce(SOURCE_BYTES)?,
            Benchmark::Allreduce => {
                cce_bench::allreduce::check_allreduce(ALLREDUCE_RANKS, SOURCE_BYTES)?;
            }
            Benchmark::Numerics | Benchmark::Encode => {}
        }
    }
    Ok(())
}

/// Runs one benchmark at its sizes, at `threads` (see [`thread_counts`]).
pub fn run(which: Benchmark, threads: &[usize]) -> Result<BenchResult, ApiError> {
    Ok(match which {
        Benchmark::Numerics => BenchResult::Numerics(cce_bench::numerics::numerics(SOURCE_BYTES, threads)),
        Benchmark::Encode => BenchResult::Encode(cce_bench::encode::encode(ENCODE_BYTES, 5)?),
        Benchmark::Reduce => BenchResult::Reduce(
            cce_bench::reduce::reduce(SOURCE_BYTES, threads, 3).map_err(|e| ApiError::Input(e.to_string()))?,
        ),
        Benchmark::Allreduce => {
            BenchResult::Allreduce(cce_bench::allreduce::allreduce(ALLREDUCE_RANKS, SOURCE_BYTES, 2)?)
        }
    })
}

/// `cce bench reduce`'s job at any size, for fronts that time it beside their own calls.
pub fn reduce(bytes_per_source: usize, threads: &[usize], reps: usize) -> Result<ReduceBench, ApiError> {
    Ok(cce_bench::reduce::reduce(bytes_per_source, threads, reps.max(1))?)
}

/// The numerics jobs, in the order their rows come.
pub use cce_bench::numerics::JOBS as NUMERICS_JOBS;

/// `cce bench numerics`'s jobs at any size, best of `reps`.
pub fn numerics(bytes_per_source: usize, threads: &[usize], reps: usize) -> NumericsBench {
    cce_bench::numerics::run_numerics_bench_reps(bytes_per_source, threads, reps.max(1)).into()
}
