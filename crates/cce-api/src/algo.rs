//! `cce algo FILE.xml`: a user's MSCCL XML schedule checked ([`crate::collective::load_algorithm`])
//! and summarised — ranks, collective, steps per type, links, fused reductions, how its
//! messages are read — then lowered for one size: the packets and descriptors its ranks' rings
//! hold and the time model's estimate; and, for `--lower DIR`, every rank's ring dump.
//!
//! ## Guarantees
//! - Nothing runs and nothing large is allocated before the configuration is checked (the
//!   shape rules, the element count against the file, the address slots).
//! - The JSON keys are the command's contract, in their order.

use std::sync::Arc;

use cce_collectives::allreduce::{self, Config, RedOp, UserAlgo};
use cce_format::SdmaDtype;
use cce_format::ringfile::RingFile;
use cce_msccl::Summary;

use crate::error::ApiError;

/// Elements per rank `cce algo` lowers for when none are given: the first multiple of the
/// file's `nchunksperloop` from 1 Mi.
pub const DEFAULT_ELEMS: u64 = 1 << 20;

/// What `cce algo` reports.
#[derive(Clone, Debug, PartialEq)]
pub struct AlgoReport {
    /// The configuration it was lowered for (add; the given dtype, arch and size).
    pub config: Config,
    /// The schedule's summary.
    pub summary: Summary,
    /// Packets over every rank's rings.
    pub packets: u64,
    /// Descriptors (tx + rx) over every rank's rings.
    pub descriptors: u64,
    /// One-chunk reduces and copies the schedule lowers to.
    pub reduces: u64,
    /// One-chunk copies.
    pub copies: u64,
    /// The time model's estimate, seconds.
    pub model_seconds: f64,
}

/// The configuration `cce algo` lowers `user` for: add, `dtype`, `arch`, `elems` per rank
/// (default: the first multiple of `nchunksperloop` from [`DEFAULT_ELEMS`]).
pub fn config(user: &Arc<UserAlgo>, elems: Option<u64>, dtype: SdmaDtype, arch: u64) -> Result<Config, ApiError> {
    let n = user.schedule.program.nchunks;
    let elems = elems.unwrap_or(DEFAULT_ELEMS.div_ceil(n) * n);
    let mut cfg = Config::from_user(user.clone(), RedOp::Add, dtype, elems);
    cfg.arch = crate::build::fit32("`arch` <ARCH>", arch)?;
    cfg.model = allreduce::TimeModel::defaults(cfg.arch);
    if !dtype.is_float() {
        cfg.accum = dtype;
    }
    Ok(cfg)
}

/// Checks and summarises `user`, lowered for `cfg` ([`config`]).
pub fn report(cfg: &Config) -> Result<AlgoReport, ApiError> {
    let user = cfg.user.as_ref().ok_or_else(|| ApiError::Input("cce algo needs a file".into()))?;
    let timeline = allreduce::model(cfg, false)?;
    let works = user.schedule.plan.steps.iter().flatten().flat_map(|s| &s.works);
    let reduces = works.clone().filter(|w| w.op == cce_msccl::Op::Reduce).count() as u64;
    let copies = works.count() as u64 - reduces;
    Ok(AlgoReport {
        config: cfg.clone(),
        summary: user.schedule.summary(),
        packets: timeline.packet_count,
        descriptors: timeline.descriptors,
        reduces,
        copies,
        model_seconds: timeline.seconds,
    })
}

/// Every rank's ring dump (`cce disasm` reads them): rank `q`'s queue 0 as it would hold
/// the schedule lowered for `cfg`.
pub fn lower(cfg: &Config) -> Result<Vec<Vec<u8>>, ApiError> {
    let rings = allreduce::rings(cfg)?;
    Ok(rings.iter().map(|r| RingFile { arch: cfg.arch, queues: vec![r.queue(0)] }.to_bytes()).collect())
}

impl AlgoReport {}
