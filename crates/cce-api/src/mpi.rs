//! (feature `mpi`) The all-reduce as one process of an MPI job: `mpirun -n P cce allreduce …`
//! and `mpirun -n P cce bench allreduce`. This process runs its ranks only; process 0 gets one
//! report for the job (`None` on the others). Every call here is collective: each process of
//! the job makes it, inside [`with_mpi`].

use std::path::Path;

use serde::Serialize;

use cce_collectives::collective;
use cce_collectives::metrics;

/// One algorithm's row of [`MpiBench`].
pub use cce_bench::allreduce::MpiAllreduceBenchResult;
/// What this process ran and process 0's report ([`MpiAllreduce`]).
pub use cce_collectives::collective::{MpiReport, MpiRun};

use crate::collective::Prepared;
use crate::error::ApiError;

/// Runs `f` between MPI's initialisation (with thread support for every rank thread) and its
/// end. Refused when MPI cannot give that support or was initialised already.
pub fn with_mpi<T>(f: impl FnOnce() -> T) -> Result<T, ApiError> {
    Ok(collective::with_mpi(f)?)
}

/// Prints `cce: {message} (process k)` on stderr and ends the whole MPI job with exit code 1:
/// a process that stops on its own would leave the others waiting for its messages.
pub fn abort_job(message: &str) -> ! {
    collective::abort_job(message)
}

/// Where this process's ranks' inputs come from.
#[derive(Clone, Copy, Debug)]
pub enum MpiInputs<'a> {
    /// Made from the seed, as a single-process run makes them.
    Seeded(u64),
    /// Read from `rank<q>.bin` files in a directory.
    Files(&'a Path),
}

/// Receives each of this process's ranks' outputs (rank, bytes), e.g. to write them to files.
pub type OutputWriter<'a> = &'a mut dyn FnMut(usize, &[u8]) -> Result<(), ApiError>;

/// This process's part of one all-reduce, and process 0's report for the job.
#[derive(Debug)]
pub struct MpiAllreduce {
    /// The run: this process's ranks and their outputs.
    pub run: MpiRun,
    /// The job's report, on process 0 only.
    pub report: Option<MpiReport>,
}

/// Runs this process's ranks of a prepared all-reduce over `inputs` (checked by the
/// preparation, not again), then (collectively) measures every rank's output against the exact
/// reduction under the parameters' check and gathers the report on process 0. `write_outputs`,
/// when given, receives each of this process's ranks' outputs before the measure takes them.
pub fn allreduce(
    prepared: &Prepared,
    inputs: MpiInputs<'_>,
    write_outputs: Option<OutputWriter<'_>>,
) -> Result<MpiAllreduce, ApiError> {
    let cfg = prepared.config();
    let reading = |q: usize| match inputs {
        MpiInputs::Files(d) => std::fs::read(d.join(format!("rank{q}.bin"))).unwrap_or_default(),
        MpiInputs::Seeded(seed) => metrics::generate_rank(cfg, seed, q),
    };
    let mut run = collective::run_mpi(prepared.checked(), &reading)?;
    if let Some(write) = write_outputs {
        for &q in &run.ranks {
            write(q, &run.outcome.outputs[q])?;
        }
    }
    let source: Box<dyn metrics::InputSource> = match inputs {
        MpiInputs::Files(d) => {
            Box::new(metrics::RankFiles::open(cfg, d).map_err(|e| ApiError::Input(format!("{}: {e}", d.display())))?)
        }
        MpiInputs::Seeded(seed) => Box::new(metrics::Generated::new(cfg, seed)),
    };
    let report = collective::mpi_report(cfg, &mut run, source.as_ref(), prepared.check());
    Ok(MpiAllreduce { run, report })
}

/// `mpirun -n P cce bench allreduce`'s report (process 0).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MpiBench {
    /// Processes in the job.
    pub processes: usize,
    /// Process 0's single-thread memcpy, GB/s.
    pub memcpy_gbps: f64,
    /// Per algorithm.
    pub results: Vec<MpiAllreduceBenchResult>,
}

/// The all-reduce benchmark over the job's processes, best of `reps`; the report on process 0.
pub fn bench(ranks: usize, bytes_per_rank: usize, reps: usize) -> Result<Option<MpiBench>, ApiError> {
    let r = cce_bench::allreduce::allreduce_mpi(ranks, bytes_per_rank, reps)?;
    Ok(r.map(|(memcpy_gbps, results)| MpiBench {
        processes: results.first().map_or(0, |x| x.process_peak_bytes.len()),
        memcpy_gbps,
        results,
    }))
}
