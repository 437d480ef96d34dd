//! `cce algo FILE.xml`: a user's MSCCL XML schedule checked ([`crate::collective::load_algorithm`])
//! and summarised — ranks, collective, steps per type, links, fused reductions, how its
//! messages are read — then lowered for one size: the packets and descriptors its ranks' rings
//! hold and the time model's estimate; and, for `--lower DIR`, every rank's ring dump.
//!
//! ## Guarantees
//! - Nothing runs and nothing large is allocated before the configuration is checked (the
//!   shape rules, the element count against the file, the address slots).
//! - The size lowered for is one the file's executor would select — a multiple of
//!   `nchunksperloop` whose bytes lie within `minBytes` / `maxBytes` — unless one outside them
//!   was asked for explicitly; the report says which ([`AlgoSize`]).
//! - The JSON keys are the command's contract, in their order.

use std::sync::Arc;

use cce_collectives::collective::{self, Config, RedOp, UserAlgo};
use cce_format::SdmaDtype;
use cce_format::ringfile::RingFile;
use cce_msccl::Summary;

use crate::error::ApiError;

/// Elements per rank `cce algo` lowers for when none are given and the file accepts it: the
/// first multiple of the file's `nchunksperloop` from 1 Mi ([`default_elems`]).
pub const DEFAULT_ELEMS: u64 = 1 << 20;

/// The size `cce algo` lowers for, and whether the executor would select the file at it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AlgoSize {
    /// Elements per rank buffer.
    pub elems: u64,
    /// Whether `elems` is the default ([`default_elems`]) rather than given.
    pub default: bool,
    /// Bytes per rank buffer: `elems` × the dtype's size.
    pub bytes: u64,
    /// The file's `minBytes`.
    pub min_bytes: u64,
    /// The file's `maxBytes` (0: no limit).
    pub max_bytes: u64,
    /// Whether `bytes` lie within `minBytes` / `maxBytes`: MSCCL's runtime selects the file's
    /// algorithm only then. False only when a size outside them was asked for explicitly.
    pub selected: bool,
}

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
    /// The size lowered for and the file's range.
    pub size: AlgoSize,
}

/// A user's schedule ready to lower: the configuration and its size.
#[derive(Clone, Debug, PartialEq)]
pub struct AlgoJob {
    /// The configuration it is lowered for (add; the given dtype, arch and size). With a size
    /// the executor would not select, its copy of the schedule has no `minBytes` / `maxBytes`
    /// (the range is in [`AlgoJob::size`]).
    pub config: Config,
    /// The size and the file's range.
    pub size: AlgoSize,
}

/// The default size of `user` at `size`-byte elements: of the element counts the file accepts
/// (a multiple of `nchunksperloop` whose bytes lie within `minBytes` / `maxBytes`), the nearest to
/// [`DEFAULT_ELEMS`] — the first multiple of `nchunksperloop` from 1 Mi when the file accepts
/// it, else the smallest or the largest accepted. `None` when the file accepts no size.
pub fn default_elems(user: &UserAlgo, size: u64) -> Option<u64> {
    let n = user.schedule.program.nchunks;
    let (smallest, largest) = user.schedule.accepted_elems(size)?;
    Some(DEFAULT_ELEMS.div_ceil(n).saturating_mul(n).clamp(smallest, largest))
}

/// The job `cce algo` lowers `user` for: add, `dtype`, `arch`, `elems` per rank (default:
/// [`default_elems`]). A size outside the file's `minBytes` / `maxBytes` is refused unless
/// `any_size` (then the job says so: [`AlgoSize::selected`]); with `any_size` and no size the file
/// accepts, the default is the first multiple of `nchunksperloop` from [`DEFAULT_ELEMS`].
pub fn job(
    user: &Arc<UserAlgo>,
    elems: Option<u64>,
    any_size: bool,
    dtype: SdmaDtype,
    arch: u64,
) -> Result<AlgoJob, ApiError> {
    let program = &user.schedule.program;
    let (n, elem_bytes) = (program.nchunks, dtype.bytes() as u64);
    let range = |max: u64| if max == 0 { "no limit".to_string() } else { max.to_string() };
    let (elems, default) = match (elems, default_elems(user, elem_bytes)) {
        (Some(e), _) => (e, false),
        (None, Some(e)) => (e, true),
        (None, None) if any_size => (DEFAULT_ELEMS.div_ceil(n).saturating_mul(n), true),
        (None, None) => {
            return Err(ApiError::Input(format!(
                "{}: no size fits the file's minBytes {} to maxBytes {} in multiples of nchunksperloop = {n} {} elements (the executor would never select it); `elems` N `any-size` lowers it all the same",
                user.file,
                program.min_bytes,
                range(program.max_bytes),
                dtype.name()
            )));
        }
    };
    let bytes = elems.saturating_mul(elem_bytes);
    let selected = user.schedule.selects(bytes);
    let whole_chunks = elems != 0 && elems % n == 0;
    if !selected && whole_chunks && !any_size {
        return Err(ApiError::Input(format!(
            "{}: {bytes} bytes per rank: the file's algorithm is for minBytes {} to maxBytes {} (the executor would not select it); `any-size` lowers it all the same",
            user.file,
            program.min_bytes,
            range(program.max_bytes)
        )));
    }
    let size = AlgoSize { elems, default, bytes, min_bytes: program.min_bytes, max_bytes: program.max_bytes, selected };
    let lowered = if selected {
        user.clone()
    } else {
        let mut lifted = UserAlgo::clone(user);
        (lifted.schedule.program.min_bytes, lifted.schedule.program.max_bytes) = (0, 0);
        Arc::new(lifted)
    };
    let mut cfg = Config::from_user(lowered, RedOp::Add, dtype, elems);
    cfg.arch = crate::reduce_rings::fit32("`arch` <ARCH>", arch)?;
    cfg.model = collective::TimeModel::defaults(cfg.arch);
    if !dtype.is_float() {
        cfg.accum = dtype;
    }
    Ok(AlgoJob { config: cfg, size })
}

/// Checks and summarises the job's schedule, lowered for its configuration ([`job`]).
pub fn report(job: &AlgoJob) -> Result<AlgoReport, ApiError> {
    let cfg = &job.config;
    let user = cfg.user.as_ref().ok_or_else(|| ApiError::Input("cce algo needs a file".into()))?;
    let timeline = collective::model(cfg, false)?;
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
        size: job.size,
    })
}

/// Every rank's ring dump (`cce disasm` reads them): rank `q`'s queue 0 as it would hold
/// the job's schedule lowered for its configuration.
pub fn lower(job: &AlgoJob) -> Result<Vec<Vec<u8>>, ApiError> {
    let cfg = &job.config;
    let rings = collective::rings(cfg)?;
    Ok(rings.iter().map(|r| RingFile { arch: cfg.arch, queues: vec![r.queue(0)] }.to_bytes()).collect())
}
