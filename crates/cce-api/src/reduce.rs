//! One reduce through the whole path, as `cce reduce` does: [`ReduceParams`] (the flags, as
//! typed fields) → a `cce-collectives` job → `cce-host` rings → the `cce-engine` executing
//! their bytes over memory → the destinations' bytes.
//!
//! ## Guarantees
//! - The options are checked ([`ReduceParams::job`]) and the sources' shape and memory need
//!   ([`check_sources`]) before anything large is allocated.
//! - The bits are those of `cce reduce` on the same inputs: both go through [`reduce_job`].

use cce_format::SdmaDtype;
use cce_job::{ReduceJob, ReduceOutcome, run_reduce};

use crate::error::ApiError;
use crate::params::ReduceOp;
use crate::reduce_rings::{OpOptions, fit32};

/// The flags of `cce reduce`, as typed fields (the sources and destinations are buffers).
#[derive(Clone, Debug, PartialEq)]
pub struct ReduceParams {
    /// The op.
    pub op: ReduceOp,
    /// Source dtype.
    pub in_dt: SdmaDtype,
    /// Accumulate dtype.
    pub accum_dt: SdmaDtype,
    /// Output dtype.
    pub out_dt: SdmaDtype,
    /// Scales, clamp constant, rounding.
    pub opts: OpOptions,
    /// NeuronCore arch (2, 3 or 4).
    pub arch: u64,
    /// Destinations, each receiving the result (more than one replicates: arch ≥ 3).
    pub dests: usize,
    /// Engine threads (at least 1).
    pub threads: u64,
}

impl ReduceParams {
    /// An `op` reduce with the defaults of `cce reduce`: no scales or constant, RNE, arch 3,
    /// one destination, one thread.
    pub fn new(op: ReduceOp, in_dt: SdmaDtype, accum_dt: SdmaDtype, out_dt: SdmaDtype) -> Self {
        ReduceParams { op, in_dt, accum_dt, out_dt, opts: OpOptions::default(), arch: 3, dests: 1, threads: 1 }
    }

    /// The job the flags describe, every option checked (the sources are not looked at).
    pub fn job(&self) -> Result<ReduceJob, ApiError> {
        let arch = fit32("`arch` <ARCH>", self.arch)?;
        let op = self.op.kbin();
        let rounding = self.opts.rounding()?;
        self.opts.check(op)?;
        let constant = self.opts.constant(self.in_dt)?;
        let threads = crate::run::check_threads(self.threads)?;
        Ok(ReduceJob {
            op,
            scales: self.opts.scales.clone(),
            constant,
            rounding,
            arch,
            dests: self.dests,
            threads,
            ..ReduceJob::add(self.in_dt, self.accum_dt, self.out_dt)
        })
    }
}

/// Checks sources of `lens` bytes for `job` (equal lengths, whole elements, the memory
/// budget) and returns the element count; a length mismatch is
/// [`cce_job::PathError::SourceLengths`], naming the source by index.
pub fn check_sources(job: &ReduceJob, lens: &[u64]) -> Result<u64, ApiError> {
    Ok(cce_job::reduce::check_inputs(job, lens)?)
}

/// What a reduce produced.
#[derive(Clone, Debug, PartialEq)]
pub struct ReduceResult {
    /// The destinations' bytes and the run's counts.
    pub outcome: ReduceOutcome,
}

impl ReduceResult {}

/// Runs a checked job over `sources` (raw little-endian arrays of the in dtype).
pub fn reduce_job(job: &ReduceJob, sources: &[&[u8]]) -> Result<ReduceResult, ApiError> {
    Ok(ReduceResult { outcome: run_reduce(job, sources)? })
}

/// Reduces `sources` as `params` say: [`ReduceParams::job`], then [`reduce_job`].
pub fn reduce(params: &ReduceParams, sources: &[&[u8]]) -> Result<ReduceResult, ApiError> {
    reduce_job(&params.job()?, sources)
}

/// [`reduce`] writing each destination into the caller's `outputs` in place (one buffer per
/// destination, elements × out size bytes); the result's `outcome.outputs` is empty.
pub fn reduce_into(
    params: &ReduceParams,
    sources: &[&[u8]],
    outputs: &mut [&mut [u8]],
) -> Result<ReduceResult, ApiError> {
    Ok(ReduceResult { outcome: cce_job::run_reduce_into(&params.job()?, sources, outputs)? })
}
