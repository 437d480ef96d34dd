//! All-reduce (and reduce-scatter / all-gather on their own) over R ranks, lowered to CCE
//! packets by `cce-host` and executed by one `cce-engine` per rank, concurrently, synchronised
//! only through the queues' completion semaphores.
//!
//! ## Buffers (MODEL)
//! Rank `r` holds, each chunk its own region in one [`SharedMemory`]: `IN(r)` the input,
//! `P(r, c)` reduce-scatter partials, `W(r, c)` the output (the final chunk and everything the
//! all-gather brings), `RECV(r, c)` the partials a ring-2R2W neighbour writes. Each region is
//! written once, so no step overwrites a buffer another rank may still read. Elements are split
//! into R chunks, chunk `c` = elements `[c·N/R, (c+1)·N/R)`.
//!
//! ## Reduction order (what an independent reference must follow)
//! Every reduce packet accumulates its sources in the order listed, in the accumulate dtype, and
//! rounds once to the buffer dtype (so partials are rounded at every step). Indices mod R.
//! - `ring` (RING_2R1W): step s of R−1, rank r reduces chunk c = r−s−1:
//!   `[s = 0 ? IN(r−1)[c] : P(r−1, c), IN(r)[c]] → P(r, c)` (the last step writes `W(r, c)`).
//!   Chunk c = ((IN_c + IN_{c+1}) + IN_{c+2}) + … + IN_{c−1}, rounded after each `+`. Then R−1
//!   all-gather copy steps: rank r copies `W(r−1, r−s) → W(r, r−s)`.
//! - `ring-2r2w` (RING_2R2W, arch ≥ 3): as `ring`, but each reduce also writes the next rank's
//!   `RECV(r+1, c)` (replication), which that rank reads locally; the last step writes
//!   `W(r, c)` and `W(r+1, c)`, so R−2 all-gather steps remain. Same order as `ring`.
//! - `kangaring` (KANGARING_NR1W): 3-source steps, rank r at step s reduces chunk c = r−2−2s:
//!   `[s = 0 ? IN(r−2)[c] : P(r−2, c), IN(r−1)[c], IN(r)[c]]`; with R even the last step is
//!   `[P(r−1, c), IN(r)[c]]` for c = r−1−2s. Chunk c = ((IN_c + IN_{c+1} + IN_{c+2}) + IN_{c+3} +
//!   IN_{c+4}) + …, rounded after each step (not each `+`). All-gather 1R2W: at step s rank r
//!   forwards chunk k = r+1−2s from `W(r, k)` to `W(r+1, k)` and `W(r+2, k)` (one destination
//!   on a last step that would reach the chunk's owner) — a one-source ADD with replication on
//!   arch ≥ 3, two copies on arch 2.
//! - `mesh`: rank r reduces chunk r from all ranks in one R-source packet,
//!   `[IN(0)[r], IN(1)[r], …, IN(R−1)[r]] → W(r, r)` (R ≤ [`MESH_MAX_RANKS`] = 32); then
//!   copies every other `W(q, q)`.
//! - `avg` is FMA with scale fl32(1/R) on every input and 1 on every partial:
//!   Σ fl32(1/R)·x_i in the same order, not (Σ x_i)/R.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use cce_engine::feed::{Feed, feed_all};
use cce_engine::memory::SharedMemory;
use cce_engine::{Engine, EngineConfig, Memory, QueueConfig, RunReport};
use cce_format::{KbinOp, SdmaDtype};
use cce_host::{CopyRequest, HostError, Program, ReduceRequest, Rings, Rounding, plan, plan_copy};

/// Fewest ranks a collective runs over.
pub const MIN_RANKS: usize = 2;
/// Most ranks a collective runs over.
pub const MAX_RANKS: usize = 64;
/// Most ranks `mesh` runs over: it reduces every rank's chunk in one packet, and a CCE packet
/// has at most 32 sources (study §4.1).
pub const MESH_MAX_RANKS: usize = cce_format::packet::MAX_SOURCES;

/// The all-reduce algorithms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algo {
    /// RING_2R1W.
    Ring,
    /// RING_2R2W.
    Ring2r2w,
    /// KANGARING_NR1W.
    KangaRing,
    /// One R-source reduce per rank.
    Mesh,
}

impl Algo {
    /// Every algorithm.
    pub const ALL: [Algo; 4] = [Algo::Ring, Algo::Ring2r2w, Algo::KangaRing, Algo::Mesh];
    /// CLI name.
    pub fn name(self) -> &'static str {
        match self {
            Algo::Ring => "ring",
            Algo::Ring2r2w => "ring-2r2w",
            Algo::KangaRing => "kangaring",
            Algo::Mesh => "mesh",
        }
    }
    /// By CLI name.
    pub fn from_name(s: &str) -> Option<Algo> {
        Self::ALL.into_iter().find(|a| a.name() == s)
    }
}

/// The reduction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedOp {
    /// Sum.
    Add,
    /// Minimum.
    Min,
    /// Maximum.
    Max,
    /// Mean: FMA with scale 1/R.
    Avg,
}

impl RedOp {
    /// By CLI name.
    pub fn from_name(s: &str) -> Option<RedOp> {
        Some(match s {
            "add" | "sum" => RedOp::Add,
            "min" => RedOp::Min,
            "max" => RedOp::Max,
            "avg" => RedOp::Avg,
            _ => return None,
        })
    }
    /// CLI name.
    pub fn name(self) -> &'static str {
        match self {
            RedOp::Add => "add",
            RedOp::Min => "min",
            RedOp::Max => "max",
            RedOp::Avg => "avg",
        }
    }
}

/// Which collective.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Collective {
    /// Reduce-scatter then all-gather.
    AllReduce,
    /// Only the reduce-scatter: rank r ends with its final chunk.
    ReduceScatter,
    /// Only the all-gather: rank r starts with chunk `owner(r)` and ends with all.
    AllGather,
}

/// The alpha-beta time model's parameters (MODEL defaults, overridable).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimeModel {
    /// Seconds per descriptor.
    pub per_descriptor: f64,
    /// DMA bandwidth of one rank's engine, bytes/s (read + write counted once each).
    pub dma_bytes_per_sec: f64,
    /// Link bandwidth between two ranks, bytes/s.
    pub link_bytes_per_sec: f64,
    /// Fraction of the DMA rate a CCE reduce runs at (0.5 before NeuronCore-v4, GAPS.md §10).
    pub cce_rate: f64,
    /// Seconds per step for the semaphore handshake.
    pub step_latency: f64,
}

impl TimeModel {
    /// The defaults for `arch` (docs/MODEL.md C6).
    pub fn defaults(arch: u32) -> Self {
        TimeModel {
            per_descriptor: 64e-9,
            dma_bytes_per_sec: 100e9,
            link_bytes_per_sec: 50e9,
            cce_rate: if arch >= 4 { 1.0 } else { 0.5 },
            step_latency: 2e-6,
        }
    }
}

/// One collective.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// Ranks ([`MIN_RANKS`]..=[`MAX_RANKS`]; `mesh` at most [`MESH_MAX_RANKS`]).
    pub ranks: usize,
    /// Algorithm.
    pub algo: Algo,
    /// Reduction.
    pub op: RedOp,
    /// Buffer dtype.
    pub dtype: SdmaDtype,
    /// Accumulate dtype.
    pub accum: SdmaDtype,
    /// Elements per rank.
    pub elems: u64,
    /// NeuronCore arch.
    pub arch: u32,
    /// Rounding.
    pub rounding: Rounding,
    /// Which collective.
    pub collective: Collective,
    /// Inject a failure: rank K stops before its step S.
    pub fail: Option<(usize, usize)>,
    /// How long a rank waits for a semaphore before giving up.
    pub timeout: Duration,
    /// Time model.
    pub model: TimeModel,
    /// Memory budget of the model, in bytes: [`check`] refuses a configuration whose
    /// [`memory_need`] total is larger.
    pub budget: u64,
}

impl Config {
    /// An all-reduce with defaults (arch 3, fp32 accumulate, RNE, 60 s timeout, 16 GiB).
    pub fn new(ranks: usize, algo: Algo, op: RedOp, dtype: SdmaDtype, elems: u64) -> Self {
        Config {
            ranks,
            algo,
            op,
            dtype,
            accum: if dtype.is_float() { SdmaDtype::Fp32 } else { dtype },
            elems,
            arch: 3,
            rounding: Rounding::Rne,
            collective: Collective::AllReduce,
            fail: None,
            timeout: Duration::from_secs(60),
            model: TimeModel::defaults(3),
            budget: 16 << 30,
        }
    }
}

/// Per-rank counts.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RankCounts {
    /// Packets.
    pub packets: u64,
    /// Descriptors (tx + rx).
    pub descriptors: u64,
    /// Bytes read.
    pub bytes_read: u64,
    /// Bytes written.
    pub bytes_written: u64,
}

/// What a collective produced.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// Each rank's output buffer.
    pub outputs: Vec<Vec<u8>>,
    /// Per-rank counts.
    pub ranks: Vec<RankCounts>,
    /// Bytes over each link (from rank, to rank).
    pub links: BTreeMap<(usize, usize), u64>,
    /// Steps per rank.
    pub steps: usize,
    /// Wall-clock seconds of the run (loading excluded).
    pub seconds: f64,
    /// The alpha-beta estimate.
    pub model_seconds: f64,
}

impl Outcome {
    /// Packets over all ranks.
    pub fn packets(&self) -> u64 {
        self.ranks.iter().map(|r| r.packets).sum()
    }
    /// Descriptors over all ranks.
    pub fn descriptors(&self) -> u64 {
        self.ranks.iter().map(|r| r.descriptors).sum()
    }
    /// Bytes read + written over all ranks.
    pub fn bytes_moved(&self) -> u64 {
        self.ranks.iter().map(|r| r.bytes_read + r.bytes_written).sum()
    }
}

/// Why a collective failed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CollectiveError {
    /// A configuration the algorithms cannot run.
    #[error("{0}")]
    Config(String),
    /// The host refused a step's request.
    #[error("rank {rank} step {step}: {error}")]
    Host {
        /// Rank.
        rank: usize,
        /// Step.
        step: usize,
        /// Why.
        error: HostError,
    },
    /// The configuration needs more memory than its budget ([`check`], before anything is
    /// allocated).
    #[error("{ranks} ranks x {elems} {dtype} elements need {need} of model memory, over the budget of {budget}")]
    Budget {
        /// Ranks.
        ranks: usize,
        /// Elements per rank.
        elems: u64,
        /// Buffer dtype name.
        dtype: &'static str,
        /// [`MemoryNeed::total`] (a lower bound when the rings could not be counted).
        need: Bytes,
        /// [`Config::budget`].
        budget: Bytes,
    },
    /// Memory (regions).
    #[error(transparent)]
    Memory(#[from] cce_engine::MemError),
    /// A rank stopped; every rank reports the first failure.
    #[error("rank {rank} failed at step {step}: {reason}")]
    RankFailed {
        /// The rank that failed first.
        rank: usize,
        /// Its step.
        step: usize,
        /// Why.
        reason: String,
    },
}

const RANK_STRIDE: u64 = 1 << 44;
const CHUNK_STRIDE: u64 = 1 << 36;
const P_OFF: u64 = 1 << 42;
const W_OFF: u64 = 2 << 42;
const RECV_OFF: u64 = 3 << 42;
const RING_OFF: u64 = (1 << 44) - (1 << 30);
const RING_SIZE: u32 = 4096;
/// Stack of a rank thread.
const RANK_STACK: usize = 64 << 20;

/// One operation of a step.
#[derive(Clone, Debug, PartialEq)]
enum Work {
    Reduce { srcs: Vec<u64>, dsts: Vec<u64>, elems: u64, scales: Vec<f32> },
    Copy { src: u64, dst: u64, bytes: u64 },
}

/// One step of one rank: its work and the (rank, step) it waits for.
#[derive(Clone, Debug, Default, PartialEq)]
struct Step {
    work: Vec<Work>,
    deps: Vec<(usize, usize)>,
}

struct Layout {
    r: usize,
    n: u64,
    size: u64,
}

impl Layout {
    fn m(&self, x: i64) -> usize {
        x.rem_euclid(self.r as i64) as usize
    }
    fn start(&self, c: usize) -> u64 {
        c as u64 * self.n / self.r as u64
    }
    fn len(&self, c: usize) -> u64 {
        self.start(c + 1) - self.start(c)
    }
    fn base(r: usize) -> u64 {
        RANK_STRIDE * (r as u64 + 1)
    }
    fn input(&self, r: usize, c: usize) -> u64 {
        Self::base(r) + self.start(c) * self.size
    }
    fn p(&self, r: usize, c: usize) -> u64 {
        Self::base(r) + P_OFF + c as u64 * CHUNK_STRIDE
    }
    fn w(&self, r: usize, c: usize) -> u64 {
        Self::base(r) + W_OFF + c as u64 * CHUNK_STRIDE
    }
    fn recv(&self, r: usize, c: usize) -> u64 {
        Self::base(r) + RECV_OFF + c as u64 * CHUNK_STRIDE
    }
    fn rank_of(addr: u64) -> usize {
        (addr / RANK_STRIDE).saturating_sub(1) as usize
    }
}

fn reduce(l: &Layout, c: usize, srcs: Vec<u64>, dsts: Vec<u64>, scales: Vec<f32>) -> Work {
    Work::Reduce { srcs, dsts, elems: l.len(c), scales }
}

/// The reduce-scatter schedule; returns the steps and the chunk each rank ends with.
#[allow(clippy::needless_range_loop, reason = "rank indices take part in the chunk arithmetic")]
fn reduce_scatter(cfg: &Config, l: &Layout) -> (Vec<Vec<Step>>, Vec<usize>) {
    let r = l.r;
    let inv = 1.0 / r as f32;
    let avg = cfg.op == RedOp::Avg;
    let sc = |partial: bool, n_in: usize| -> Vec<f32> {
        if !avg {
            return Vec::new();
        }
        let mut v = vec![if partial { 1.0 } else { inv }];
        v.extend(std::iter::repeat_n(inv, n_in));
        v
    };
    let mut steps = vec![Vec::new(); r];
    let owner: Vec<usize> = match cfg.algo {
        Algo::Mesh => (0..r).collect(),
        _ => (0..r).map(|q| l.m(q as i64 + 1)).collect(),
    };
    for q in 0..r {
        let qi = q as i64;
        match cfg.algo {
            Algo::Ring | Algo::Ring2r2w => {
                let two = cfg.algo == Algo::Ring2r2w;
                for s in 0..r - 1 {
                    let c = l.m(qi - s as i64 - 1);
                    let last = s == r - 2;
                    let prev = l.m(qi - 1);
                    let first_src = if s == 0 {
                        l.input(prev, c)
                    } else if two {
                        l.recv(q, c)
                    } else {
                        l.p(prev, c)
                    };
                    let dsts = match (last, two) {
                        (true, false) => vec![l.w(q, c)],
                        (true, true) => vec![l.w(q, c), l.w(l.m(qi + 1), c)],
                        (false, false) => vec![l.p(q, c)],
                        (false, true) => vec![l.p(q, c), l.recv(l.m(qi + 1), c)],
                    };
                    let deps = if s == 0 { vec![] } else { vec![(prev, s - 1)] };
                    steps[q].push(Step {
                        work: vec![reduce(l, c, vec![first_src, l.input(q, c)], dsts, sc(s > 0, 1))],
                        deps,
                    });
                }
            }
            Algo::KangaRing => {
                let three = (r - 1) / 2; // 3-source steps
                for s in 0..three {
                    let c = l.m(qi - 2 - 2 * s as i64);
                    let last = s + 1 == three && r % 2 == 1;
                    let p2 = l.m(qi - 2);
                    let first_src = if s == 0 { l.input(p2, c) } else { l.p(p2, c) };
                    let dst = if last { l.w(q, c) } else { l.p(q, c) };
                    let deps = if s == 0 { vec![] } else { vec![(p2, s - 1)] };
                    let srcs = vec![first_src, l.input(l.m(qi - 1), c), l.input(q, c)];
                    steps[q].push(Step { work: vec![reduce(l, c, srcs, vec![dst], sc(s > 0, 2))], deps });
                }
                if r % 2 == 0 {
                    let s = three;
                    let c = l.m(qi - 1 - 2 * s as i64);
                    let p1 = l.m(qi - 1);
                    let first_src = if s == 0 { l.input(p1, c) } else { l.p(p1, c) };
                    let deps = if s == 0 { vec![] } else { vec![(p1, s - 1)] };
                    steps[q].push(Step {
                        work: vec![reduce(l, c, vec![first_src, l.input(q, c)], vec![l.w(q, c)], sc(s > 0, 1))],
                        deps,
                    });
                }
            }
            Algo::Mesh => {
                let srcs = (0..r).map(|p| l.input(p, q)).collect();
                let scales = if avg { vec![inv; r] } else { Vec::new() };
                steps[q].push(Step { work: vec![reduce(l, q, srcs, vec![l.w(q, q)], scales)], deps: vec![] });
            }
        }
    }
    (steps, owner)
}

/// Appends the all-gather schedule. `owner[q]` is the chunk rank q holds in `W(q, ·)`;
/// `rs_steps` are the steps already scheduled per rank (their count, for dependencies).
fn all_gather(cfg: &Config, l: &Layout, steps: &mut [Vec<Step>], owner: &[usize]) {
    let r = l.r;
    let base = steps[0].len();
    let bytes = |c: usize| l.len(c) * l.size;
    let copy = |src: u64, dst: u64, c: usize| Work::Copy { src, dst, bytes: bytes(c) };
    let last_rs = |q: usize| -> Vec<(usize, usize)> { if base == 0 { vec![] } else { vec![(q, base - 1)] } };
    for q in 0..r {
        let qi = q as i64;
        match cfg.algo {
            Algo::Ring | Algo::Ring2r2w => {
                // 2R2W already delivered the neighbour's final chunk with its last reduce.
                let skip = usize::from(cfg.algo == Algo::Ring2r2w && cfg.collective == Collective::AllReduce);
                let prev = l.m(qi - 1);
                for s in 0..r - 1 - skip {
                    let g = l.m(owner[prev] as i64 - s as i64 - skip as i64);
                    let mut deps = if s == 0 { last_rs(prev) } else { vec![(prev, base + s - 1)] };
                    if skip == 1 && s == 0 {
                        // W(prev, g) arrived from prev's predecessor's last reduce.
                        deps.extend(last_rs(l.m(qi - 2)));
                    }
                    steps[q].push(Step { work: vec![copy(l.w(prev, g), l.w(q, g), g)], deps });
                }
                if skip == 1 && r == 2 {
                    // Nothing left to gather, but the output is complete only when the
                    // neighbour's last reduce wrote it: an empty step that waits for it.
                    steps[q].push(Step { work: vec![], deps: last_rs(prev) });
                }
            }
            Algo::KangaRing => {
                let k_steps = (r - 1).div_ceil(2);
                for s in 0..k_steps {
                    let k = l.m(owner[q] as i64 - 2 * s as i64);
                    let last = s + 1 == k_steps;
                    let mut dsts = vec![l.w(l.m(qi + 1), k)];
                    if !(last && (r - 1) % 2 == 1) {
                        dsts.push(l.w(l.m(qi + 2), k));
                    }
                    let deps = if s == 0 { vec![] } else { vec![(l.m(qi - 2), base + s - 1)] };
                    let work = if cfg.arch > 2 {
                        vec![Work::Reduce { srcs: vec![l.w(q, k)], dsts, elems: l.len(k), scales: Vec::new() }]
                    } else {
                        dsts.iter().map(|&d| copy(l.w(q, k), d, k)).collect()
                    };
                    steps[q].push(Step { work, deps });
                }
                // The last chunks arrive from ranks q-1 and q-2: wait for them before finishing.
                if k_steps > 0 {
                    steps[q].push(Step {
                        work: vec![],
                        deps: vec![(l.m(qi - 1), base + k_steps - 1), (l.m(qi - 2), base + k_steps - 1)],
                    });
                }
            }
            Algo::Mesh => {
                let work =
                    (0..r).filter(|&p| p != q).map(|p| copy(l.w(p, owner[p]), l.w(q, owner[p]), owner[p])).collect();
                let deps = (0..r).filter(|&p| p != q).flat_map(last_rs).collect();
                steps[q].push(Step { work, deps });
            }
        }
    }
}

/// The schedule of every rank, and the chunk each rank owns after the reduce-scatter.
fn schedule(cfg: &Config, l: &Layout) -> (Vec<Vec<Step>>, Vec<usize>) {
    match cfg.collective {
        Collective::AllReduce => {
            let (mut steps, owner) = reduce_scatter(cfg, l);
            all_gather(cfg, l, &mut steps, &owner);
            (steps, owner)
        }
        Collective::ReduceScatter => reduce_scatter(cfg, l),
        Collective::AllGather => {
            let owner: Vec<usize> = match cfg.algo {
                Algo::Mesh => (0..l.r).collect(),
                _ => (0..l.r).map(|q| l.m(q as i64 + 1)).collect(),
            };
            let mut steps = vec![Vec::new(); l.r];
            all_gather(cfg, l, &mut steps, &owner);
            (steps, owner)
        }
    }
}

/// A byte count in a message: `N bytes (X.Y GiB)`, `at least …` for a lower bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bytes {
    /// Bytes.
    pub bytes: u64,
    /// Only a lower bound is known.
    pub at_least: bool,
}

impl std::fmt::Display for Bytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let gib = self.bytes as f64 / (1u64 << 30) as f64;
        let at_least = if self.at_least { "at least " } else { "" };
        write!(f, "{at_least}{} bytes ({gib:.1} GiB)", self.bytes)
    }
}

/// The memory a run of a [`Config`] needs, in bytes, by what holds it (see [`memory_need`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoryNeed {
    /// The inputs the caller generates or reads and hands to [`run`]: R × elems × size.
    pub inputs: u64,
    /// The model memory's buffers, per rank: `IN`, every `P(r, c)` and `W(r, c)`, and for
    /// `ring-2r2w` every `RECV(r, c)` (an empty chunk still takes a 1-byte region).
    pub buffers: u64,
    /// Each rank's descriptor programs (tx + rx, 16 bytes per descriptor) and its two ring
    /// regions in the model memory. `None` when the sizes do not fit the model's buffer slots,
    /// so no schedule can be planned.
    pub rings: Option<u64>,
    /// The outputs [`run`] returns: R × elems × size.
    pub outputs: u64,
}

impl MemoryNeed {
    /// Everything, saturating (the ring part as 0 when it could not be counted).
    pub fn total(&self) -> u64 {
        self.inputs.saturating_add(self.buffers).saturating_add(self.rings.unwrap_or(0)).saturating_add(self.outputs)
    }
}

/// The ranks, algorithm, dtype and size rules, without scheduling anything.
fn check_shape(cfg: &Config) -> Result<(), CollectiveError> {
    let bad = |m: String| Err(CollectiveError::Config(m));
    if !(MIN_RANKS..=MAX_RANKS).contains(&cfg.ranks) {
        return bad(format!("{} ranks: between {MIN_RANKS} and {MAX_RANKS}", cfg.ranks));
    }
    if cfg.algo == Algo::Mesh && cfg.ranks > MESH_MAX_RANKS {
        return bad(format!(
            "mesh reduces all {} ranks in one packet: at most {MESH_MAX_RANKS} sources (use ring, ring-2r2w or kangaring)",
            cfg.ranks
        ));
    }
    if cfg.algo == Algo::Ring2r2w && cfg.arch <= 2 {
        return bad("ring-2r2w writes two destinations per reduce: replication needs arch ≥ 3".into());
    }
    if cfg.op == RedOp::Avg && !cfg.accum.is_float() {
        return bad(format!(
            "avg is an FMA with scale 1/R: it needs a float accumulate dtype, not {}",
            cfg.accum.name()
        ));
    }
    if cfg.dtype.bytes() == 0 {
        return bad(format!("dtype {} has no byte size", cfg.dtype.name()));
    }
    if cfg.elems == 0 {
        return bad("elements per rank must be positive".into());
    }
    Ok(())
}

/// Whether one rank's buffers fit the model's address slots (and so every address of the
/// schedule is representable).
fn fits_slots(cfg: &Config) -> bool {
    let bytes = cfg.elems.saturating_mul(cfg.dtype.bytes() as u64);
    bytes / cfg.ranks as u64 + 64 <= CHUNK_STRIDE && bytes <= P_OFF
}

/// One work item's program (`None` for an empty one).
fn plan_work(cfg: &Config, rank: usize, step: usize, w: &Work) -> Result<Option<Program>, CollectiveError> {
    let host = |error| CollectiveError::Host { rank, step, error };
    let kop = match cfg.op {
        RedOp::Add => KbinOp::Add,
        RedOp::Min => KbinOp::Min,
        RedOp::Max => KbinOp::Max,
        RedOp::Avg => KbinOp::Fma,
    };
    Ok(Some(match w {
        Work::Reduce { elems: 0, .. } | Work::Copy { bytes: 0, .. } => return Ok(None),
        Work::Reduce { srcs, dsts, elems, scales } => {
            // A one-source reduce is the 1R2W gather: an ADD that copies (MODEL C4).
            let op = if srcs.len() == 1 { KbinOp::Add } else { kop };
            // The gather's one-source ADD widens floats to fp32 (exact, and the fast path);
            // integers stay in their own type.
            let accum = match (srcs.len(), cfg.dtype.is_float()) {
                (1, true) => SdmaDtype::Fp32,
                (1, false) => cfg.dtype,
                _ => cfg.accum,
            };
            let mut req = ReduceRequest::new(
                op.value(),
                srcs.clone(),
                dsts.clone(),
                *elems,
                cfg.dtype,
                accum,
                cfg.dtype,
                cfg.arch,
            );
            req.rounding = cfg.rounding;
            if op == KbinOp::Fma {
                req = req.with_fma_scales(scales).map_err(host)?;
            }
            plan(&req).map_err(host)?
        }
        Work::Copy { src, dst, bytes } => {
            plan_copy(&CopyRequest { src: *src, dst: *dst, bytes: *bytes, arch: cfg.arch }).map_err(host)?
        }
    }))
}

/// The ring size of a rank whose programs hold `descs` descriptors per ring.
fn ring_size(descs: u64) -> u32 {
    cce_format::ringfile::ring_size_for(descs).min(RING_SIZE as u64) as u32
}

/// The ring bytes of every rank: its programs (planned, not built) and its two ring regions.
fn ring_need(cfg: &Config, steps: &[Vec<Step>]) -> Result<u64, CollectiveError> {
    let mut total = 0u64;
    for (q, st) in steps.iter().enumerate() {
        let (mut tx, mut rx, mut per_ring) = (0u64, 0u64, 0u64);
        for (s, step) in st.iter().enumerate() {
            for w in &step.work {
                if let Some(p) = plan_work(cfg, q, s, w)? {
                    tx += p.tx_descriptors();
                    rx += p.rx_descriptors();
                    per_ring += p.tx_descriptors().max(p.rx_descriptors());
                }
            }
        }
        let regions = 2 * 16 * ring_size(per_ring) as u64;
        total = total.saturating_add(16u64.saturating_mul(tx + rx)).saturating_add(regions);
    }
    Ok(total)
}

/// The inputs, buffers and outputs of `cfg` (closed form, saturating; no rings).
fn data_need(cfg: &Config) -> MemoryNeed {
    let r = cfg.ranks as u64;
    let bytes = cfg.elems.saturating_mul(cfg.dtype.bytes() as u64);
    let all = bytes.saturating_mul(r);
    // Chunks of one element or none when elems < R: each empty chunk still maps one byte.
    let empty = r.saturating_sub(cfg.elems);
    let slot_sets = if cfg.algo == Algo::Ring2r2w { 3 } else { 2 }; // P, W (, RECV)
    let buffers = bytes.saturating_add(bytes.saturating_add(empty).saturating_mul(slot_sets)).saturating_mul(r);
    MemoryNeed { inputs: all, buffers, rings: None, outputs: all }
}

/// The memory a run of `cfg` needs: the inputs handed to [`run`], the model memory's buffers and
/// rings, and the outputs. Nothing is allocated; the ring part plans every step's packets (which
/// fails as [`run`] would) and is left out when the sizes do not fit the model's slots.
pub fn memory_need(cfg: &Config) -> Result<MemoryNeed, CollectiveError> {
    check_shape(cfg)?;
    let mut need = data_need(cfg);
    if fits_slots(cfg) {
        let l = Layout { r: cfg.ranks, n: cfg.elems, size: cfg.dtype.bytes() as u64 };
        need.rings = Some(ring_need(cfg, &schedule(cfg, &l).0)?);
    }
    Ok(need)
}

/// Refuses a configuration [`run`] cannot execute — ranks, algorithm limits, dtypes, sizes, the
/// failure injection's rank and step, every step's packets, and the memory budget
/// ([`memory_need`] against [`Config::budget`]) — before anything is allocated, and returns the
/// need. [`run`] calls it first; callers that prepare inputs themselves call it before
/// generating or reading them.
pub fn check(cfg: &Config) -> Result<MemoryNeed, CollectiveError> {
    let bad = |m: String| Err(CollectiveError::Config(m));
    check_shape(cfg)?;
    let budget_error = |need: &MemoryNeed| CollectiveError::Budget {
        ranks: cfg.ranks,
        elems: cfg.elems,
        dtype: cfg.dtype.name(),
        need: Bytes { bytes: need.total(), at_least: need.rings.is_none() },
        budget: Bytes { bytes: cfg.budget, at_least: false },
    };
    let need = match memory_need(cfg) {
        Ok(n) => n,
        // A step that cannot be planned: still, buffers over the budget are the first reason.
        Err(e) => {
            let data = data_need(cfg);
            return Err(if data.total() > cfg.budget { budget_error(&data) } else { e });
        }
    };
    if need.total() > cfg.budget {
        return Err(budget_error(&need));
    }
    if !fits_slots(cfg) {
        let bytes = cfg.elems.saturating_mul(cfg.dtype.bytes() as u64);
        return bad(format!("{bytes} bytes per rank exceed the model's buffer slots"));
    }
    if let Some((k, s)) = cfg.fail {
        let l = Layout { r: cfg.ranks, n: cfg.elems, size: cfg.dtype.bytes() as u64 };
        let nsteps = schedule(cfg, &l).0[0].len();
        if k >= cfg.ranks || s >= nsteps {
            return Err(CollectiveError::Config(format!(
                "--fail-rank {k} --fail-step {s}: ranks 0..{}, steps 0..{nsteps}",
                cfg.ranks
            )));
        }
    }
    Ok(need)
}

/// A built rank: its rings and, per step, the cumulative (tx, rx, packets) after it.
struct RankProgram {
    rings: Rings,
    marks: Vec<(u64, u64, u64)>,
}

fn build(cfg: &Config, rank: usize, steps: &[Step]) -> Result<RankProgram, CollectiveError> {
    let mut programs: Vec<(usize, Program)> = Vec::new();
    for (s, step) in steps.iter().enumerate() {
        for w in &step.work {
            if let Some(p) = plan_work(cfg, rank, s, w)? {
                programs.push((s, p));
            }
        }
    }
    let total: u64 = programs.iter().map(|(_, p)| p.tx_descriptors().max(p.rx_descriptors())).sum();
    let ring = ring_size(total) as u64;
    let mut b = Rings::builder(Some(ring), total).map_err(|error| CollectiveError::Host { rank, step: 0, error })?;
    let mut marks = Vec::with_capacity(steps.len());
    let (mut tx, mut rx, mut packets) = (0u64, 0u64, 0u64);
    let mut it = programs.iter().peekable();
    for s in 0..steps.len() {
        while let Some((_, p)) = it.next_if(|(ps, _)| *ps == s) {
            b.push(p);
            tx += p.tx_descriptors();
            rx += p.rx_descriptors();
            packets += p.packet_count();
        }
        marks.push((tx, rx, packets));
    }
    Ok(RankProgram { rings: b.finish(), marks })
}

/// Runs a collective over `inputs` (one buffer per rank, `elems · dtype` bytes each; for an
/// all-gather alone, each rank's own chunk is taken from its buffer).
#[allow(clippy::needless_range_loop, reason = "rank indices address several parallel tables")]
pub fn run(cfg: &Config, inputs: &[Vec<u8>]) -> Result<Outcome, CollectiveError> {
    check(cfg)?;
    let size = cfg.dtype.bytes() as u64;
    let bytes = cfg.elems * size;
    if inputs.len() != cfg.ranks || inputs.iter().any(|i| i.len() as u64 != bytes) {
        return Err(CollectiveError::Config(format!("need {} inputs of {bytes} bytes each", cfg.ranks)));
    }
    let l = Layout { r: cfg.ranks, n: cfg.elems, size };
    let (steps, owner) = schedule(cfg, &l);
    let nsteps = steps[0].len();
    let programs = steps.iter().enumerate().map(|(q, st)| build(cfg, q, st)).collect::<Result<Vec<_>, _>>()?;
    // Memory: every buffer its own region.
    let mem = SharedMemory::new(cfg.budget.saturating_add(1 << 30));
    for q in 0..cfg.ranks {
        mem.add_region(l.input(q, 0), bytes)?;
        let mut m = mem.clone();
        m.write(l.input(q, 0), &inputs[q])?;
        for c in 0..cfg.ranks {
            let cb = (l.len(c) * size).max(1);
            mem.add_region(l.p(q, c), cb)?;
            mem.add_region(l.w(q, c), cb)?;
            if cfg.algo == Algo::Ring2r2w {
                mem.add_region(l.recv(q, c), cb)?;
            }
        }
        let rb = programs[q].rings.ring_size as u64 * 16;
        mem.add_region(Layout::base(q) + RING_OFF, rb)?;
        mem.add_region(Layout::base(q) + RING_OFF + rb, rb)?;
        if cfg.collective == Collective::AllGather {
            let c = owner[q];
            let mut m = mem.clone();
            m.write(l.w(q, c), &inputs[q][(l.start(c) * size) as usize..((l.start(c) + l.len(c)) * size) as usize])?;
        }
    }
    let sems: Vec<AtomicI64> = (0..cfg.ranks).map(|_| AtomicI64::new(0)).collect();
    let failed: Mutex<Option<(usize, usize, String)>> = Mutex::new(None);
    let abort = AtomicBool::new(false);
    let bell = (Mutex::new(()), Condvar::new());
    let t0 = Instant::now();
    let results: Vec<Result<RunReport, ()>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..cfg.ranks)
            .map(|q| {
                let (mem, programs, steps, sems, failed, abort, bell) =
                    (mem.clone(), &programs, &steps, &sems, &failed, &abort, &bell);
                // Large stacks: unoptimised builds of the SIMD kernels use big frames.
                std::thread::Builder::new()
                    .name(format!("rank{q}"))
                    .stack_size(RANK_STACK)
                    .spawn_scoped(scope, move || {
                        rank_main(cfg, q, mem, &programs[q], &steps[q], programs, sems, failed, abort, bell)
                    })
            })
            .collect();
        handles.into_iter().map(|h| h.map_or(Err(()), |h| h.join().unwrap_or(Err(())))).collect()
    });
    let seconds = t0.elapsed().as_secs_f64();
    if let Some((rank, step, reason)) = failed.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take() {
        return Err(CollectiveError::RankFailed { rank, step, reason });
    }
    let reports: Vec<RunReport> = results.into_iter().map(|r| r.unwrap_or_default()).collect();
    // Outputs.
    let mut outputs = Vec::with_capacity(cfg.ranks);
    for q in 0..cfg.ranks {
        let mut out = vec![0u8; bytes as usize];
        let chunks: Vec<usize> = match cfg.collective {
            Collective::ReduceScatter => vec![owner[q]],
            _ => (0..cfg.ranks).collect(),
        };
        for c in chunks {
            let (a, n) = ((l.start(c) * size) as usize, (l.len(c) * size) as usize);
            if n > 0 {
                mem.read(l.w(q, c), &mut out[a..a + n])?;
            }
        }
        if cfg.collective == Collective::ReduceScatter {
            let c = owner[q];
            out = out[(l.start(c) * size) as usize..((l.start(c) + l.len(c)) * size) as usize].to_vec();
        }
        outputs.push(out);
    }
    let (links, model_seconds) = account(cfg, &l, &steps);
    Ok(Outcome {
        outputs,
        ranks: reports
            .iter()
            .map(|r| RankCounts {
                packets: r.packets,
                descriptors: r.descriptors,
                bytes_read: r.bytes_read,
                bytes_written: r.bytes_written,
            })
            .collect(),
        links,
        steps: nsteps,
        seconds,
        model_seconds,
    })
}

#[allow(clippy::too_many_arguments)]
fn rank_main(
    cfg: &Config,
    q: usize,
    mem: SharedMemory,
    prog: &RankProgram,
    steps: &[Step],
    all: &[RankProgram],
    sems: &[AtomicI64],
    failed: &Mutex<Option<(usize, usize, String)>>,
    abort: &AtomicBool,
    bell: &(Mutex<()>, Condvar),
) -> Result<RunReport, ()> {
    let fail = |step: usize, reason: String| {
        let mut f = failed.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if f.is_none() {
            *f = Some((q, step, reason));
        }
        abort.store(true, Ordering::SeqCst);
        bell.1.notify_all();
        Err(())
    };
    let ring = prog.rings.ring_size;
    let (tx_ring, rx_ring) = (Layout::base(q) + RING_OFF, Layout::base(q) + RING_OFF + ring as u64 * 16);
    let mut engine = Engine::new(mem, EngineConfig::default());
    if let Err(e) =
        engine.add_queue(0, QueueConfig { tx_ring, rx_ring, ring_size: ring, initial_phase: prog.rings.initial_phase })
    {
        return fail(0, e.to_string());
    }
    let mut report = RunReport::default();
    let mut fed = (0u64, 0u64);
    for (s, step) in steps.iter().enumerate() {
        if cfg.fail == Some((q, s)) {
            return fail(s, "injected failure (the rank stopped)".into());
        }
        // Wait for every dependency's semaphore: the packets of that rank through that step.
        let deadline = Instant::now() + cfg.timeout;
        for &(p, t) in &step.deps {
            let target = all[p].marks[t].2 as i64;
            let mut g = bell.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            while sems[p].load(Ordering::SeqCst) < target {
                if abort.load(Ordering::SeqCst) {
                    return Err(());
                }
                let now = Instant::now();
                if now >= deadline {
                    drop(g);
                    return fail(s, format!("timed out waiting for rank {p} step {t}"));
                }
                g = bell
                    .1
                    .wait_timeout(g, (deadline - now).min(Duration::from_millis(20)))
                    .map(|r| r.0)
                    .unwrap_or_else(|e| e.into_inner().0);
            }
        }
        if abort.load(Ordering::SeqCst) {
            return Err(());
        }
        let (tx_end, rx_end, _) = prog.marks[s];
        let mut feeds = [Feed {
            queue: 0,
            tx_ring,
            rx_ring,
            ring_size: ring,
            tx: &prog.rings.tx,
            rx: &prog.rings.rx,
            fed,
            end: (tx_end, rx_end),
        }];
        if let Err(e) = feed_all(&mut engine, &mut feeds, &mut report) {
            return fail(s, e.to_string());
        }
        fed = feeds[0].fed;
        let Some(st) = engine.status(0) else { return fail(s, "queue vanished".into()) };
        if let Some(f) = st.fault {
            return fail(s, f.to_string());
        }
        if st.packets != prog.marks[s].2 {
            return fail(s, format!("{} packets done, {} expected", st.packets, prog.marks[s].2));
        }
        sems[q].store(st.semaphore as i64, Ordering::SeqCst);
        bell.1.notify_all();
    }
    Ok(report)
}

/// A work item's (reads, writes, is-CCE, descriptors), each access as (address, bytes).
type Traffic = (Vec<(u64, u64)>, Vec<(u64, u64)>, bool, u64);

/// Per-link bytes and the alpha-beta critical path.
fn account(cfg: &Config, l: &Layout, steps: &[Vec<Step>]) -> (BTreeMap<(usize, usize), u64>, f64) {
    let mut links = BTreeMap::new();
    let size = l.size;
    let m = cfg.model;
    let mut finish = vec![vec![0.0f64; steps[0].len()]; l.r];
    for s in 0..steps[0].len() {
        for q in 0..l.r {
            let step = &steps[q][s];
            let mut t = m.step_latency;
            for w in &step.work {
                let (reads, writes, cce, descs): Traffic = match w {
                    Work::Reduce { srcs, dsts, elems, .. } => {
                        let b = elems * size;
                        let packets = (elems * size).div_ceil(4096).max(1);
                        (
                            srcs.iter().map(|&a| (a, b)).collect(),
                            dsts.iter().map(|&a| (a, b)).collect(),
                            true,
                            packets * (srcs.len() + dsts.len()) as u64,
                        )
                    }
                    Work::Copy { src, dst, bytes } => {
                        (vec![(*src, *bytes)], vec![(*dst, *bytes)], false, 2 * bytes.div_ceil(65536).max(1))
                    }
                };
                let mut local = 0u64;
                let mut remote = 0u64;
                for &(a, b) in &reads {
                    let from = Layout::rank_of(a);
                    if from == q {
                        local += b
                    } else {
                        remote += b;
                        *links.entry((from, q)).or_insert(0) += b;
                    }
                }
                for &(a, b) in &writes {
                    let to = Layout::rank_of(a);
                    if to == q {
                        local += b
                    } else {
                        remote += b;
                        *links.entry((q, to)).or_insert(0) += b;
                    }
                }
                let rate = if cce { m.dma_bytes_per_sec * m.cce_rate } else { m.dma_bytes_per_sec };
                t += descs as f64 * m.per_descriptor + local as f64 / rate + remote as f64 / m.link_bytes_per_sec;
            }
            let start =
                step.deps.iter().map(|&(p, u)| finish[p][u]).fold(if s > 0 { finish[q][s - 1] } else { 0.0 }, f64::max);
            finish[q][s] = start + t;
        }
    }
    let total = finish.iter().filter_map(|f| f.last().copied()).fold(0.0, f64::max);
    (links, total)
}
