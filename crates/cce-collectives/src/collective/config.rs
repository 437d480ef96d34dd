//! The configuration of a collective, what it produced, and why it failed.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use cce_format::{KbinOp, SdmaDtype};
use cce_host::{HostError, Rounding};

use super::budget::Bytes;
use super::model::TimeModel;

/// Fewest ranks a collective runs over.
pub const MIN_RANKS: usize = 2;
/// Most ranks a collective runs over.
pub const MAX_RANKS: usize = 4096;
/// Most channels of the flat ring: the ring collective's firmware keeps per-channel semaphores
/// for up to 32 channels (GAPS §11, the "Ring + Kangaring Collective" chapter; SOURCES.md §3.5).
pub const MAX_CHANNELS: usize = 32;
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
    /// Recursive halving reduce-scatter, then recursive doubling all-gather (power-of-two R).
    Rdh,
    /// A user's schedule from an MSCCL XML file ([`Config::user`], docs/MODEL.md X1–X13).
    File,
    /// Hierarchical: an intra-node algorithm and an inter-node one ([`Config::hier`],
    /// docs/MODEL.md H1–H6).
    Hier,
}

impl Algo {
    /// Every built-in algorithm (what `--algo auto` chooses among).
    pub const ALL: [Algo; 5] = [Algo::Ring, Algo::Ring2r2w, Algo::KangaRing, Algo::Mesh, Algo::Rdh];
    /// CLI name.
    pub fn name(self) -> &'static str {
        match self {
            Algo::Ring => "ring",
            Algo::Ring2r2w => "ring-2r2w",
            Algo::KangaRing => "kangaring",
            Algo::Mesh => "mesh",
            Algo::Rdh => "rdh",
            Algo::File => "file",
            Algo::Hier => "hier",
        }
    }
    /// Its name in reports, a hierarchy's with its pair: `hier(intra/inter)` ([`Hier::label`]).
    pub fn label(self, hier: Hier) -> String {
        match self {
            Algo::Hier => hier.label(),
            a => a.name().to_string(),
        }
    }
    /// By CLI name (`hier` included; `file` is no name: a schedule comes with its file).
    pub fn from_name(s: &str) -> Option<Algo> {
        Self::ALL.into_iter().chain([Algo::Hier]).find(|a| a.name() == s)
    }
    /// Why this algorithm cannot run `ranks` ranks on `arch`, or `None` when it can (a user's
    /// schedule is checked with its file).
    pub fn refusal(self, ranks: usize, arch: u32) -> Option<String> {
        match self {
            Algo::Mesh if ranks > MESH_MAX_RANKS => Some(format!(
                "mesh reduces all {ranks} ranks in one packet: at most {MESH_MAX_RANKS} sources (use ring, ring-2r2w or kangaring)"
            )),
            Algo::Ring2r2w if arch <= 2 => {
                Some("ring-2r2w writes two destinations per reduce: replication needs arch ≥ 3".into())
            }
            Algo::Rdh if !ranks.is_power_of_two() => Some(format!(
                "rdh pairs ranks by recursive halving: it needs a power-of-two rank count, not {ranks} (use ring, kangaring or `algo` auto)"
            )),
            _ => None,
        }
    }
}

/// The inter-node algorithms of a hierarchy (among the ranks of one local index, one per
/// node).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Inter {
    /// Ring reduce-scatter and all-gather over the nodes.
    #[default]
    Ring,
    /// One X-source reduce per rank, then copies (X ≤ [`MESH_MAX_RANKS`]).
    Mesh,
    /// The single-step mesh all-reduce: every rank reduces the whole block from all X nodes in
    /// one X-source packet, in node order (all-reduce only).
    SingleStepMesh,
    /// Recursive halving, then doubling (X a power of two).
    Rdh,
}

impl Inter {
    /// Every inter-node algorithm.
    pub const ALL: [Inter; 4] = [Inter::Ring, Inter::Mesh, Inter::SingleStepMesh, Inter::Rdh];
    /// CLI name.
    pub fn name(self) -> &'static str {
        match self {
            Inter::Ring => "ring",
            Inter::Mesh => "mesh",
            Inter::SingleStepMesh => "single-step-mesh",
            Inter::Rdh => "rdh",
        }
    }
    /// By CLI name.
    pub fn from_name(s: &str) -> Option<Inter> {
        Self::ALL.into_iter().find(|a| a.name() == s)
    }
    /// The flat algorithm whose reduce-scatter and all-gather it runs (`None`: the single-step
    /// mesh, which is neither).
    pub fn staged(self) -> Option<Algo> {
        match self {
            Inter::Ring => Some(Algo::Ring),
            Inter::Mesh => Some(Algo::Mesh),
            Inter::Rdh => Some(Algo::Rdh),
            Inter::SingleStepMesh => None,
        }
    }
    /// Why it cannot run over `nodes` nodes in `collective`, or `None` when it can.
    pub fn refusal(self, nodes: usize, collective: Collective) -> Option<String> {
        match self {
            Inter::SingleStepMesh if collective != Collective::AllReduce => Some(format!(
                "the single-step mesh is an all-reduce, not a {}: use ring, mesh or rdh between nodes",
                collective.name()
            )),
            Inter::Mesh | Inter::SingleStepMesh if nodes > MESH_MAX_RANKS => Some(format!(
                "{} reduces all {nodes} nodes in one packet: at most {MESH_MAX_RANKS} sources (use ring or rdh between nodes)",
                self.name()
            )),
            Inter::Rdh if !nodes.is_power_of_two() => Some(format!(
                "rdh between nodes pairs them by recursive halving: it needs a power-of-two node count, not {nodes}"
            )),
            _ => None,
        }
    }
}

impl fmt::Display for Inter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Inter {
    type Err = String;
    /// [`Inter::from_name`]; a refusal says what is expected, without the flag.
    fn from_str(s: &str) -> Result<Inter, String> {
        Inter::from_name(s)
            .ok_or_else(|| format!("'{s}': expected {}", cce_format::op::alternatives(Inter::ALL.map(Inter::name))))
    }
}

/// A hierarchy's two algorithms (docs/MODEL.md H1): `intra` among the ranks of a node (one of
/// [`Algo::ALL`]), `inter` among the ranks of one local index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hier {
    /// Inside a node.
    pub intra: Algo,
    /// Between nodes.
    pub inter: Inter,
}

impl Default for Hier {
    fn default() -> Self {
        Hier { intra: Algo::Ring, inter: Inter::Ring }
    }
}

impl Hier {
    /// `hier(intra/inter)`.
    pub fn label(self) -> String {
        format!("hier({}/{})", self.intra.name(), self.inter.name())
    }
}

/// The reduction of a collective: the user-level op of the all-reduce family. It is not
/// `cce reduce`'s op (cce-api's `ReduceOp`): a collective takes no per-source scales, so it has
/// no FMA of its own, and its `avg` is an FMA by 1/R. It names itself through the host's op
/// ([`RedOp::kbin`], [`KbinOp::name`]); only `avg` is named here.
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
    /// Every reduction.
    pub const ALL: [RedOp; 4] = [RedOp::Add, RedOp::Min, RedOp::Max, RedOp::Avg];

    /// The host's op that computes it: `avg` is an FMA (by 1/R).
    pub const fn kbin(self) -> KbinOp {
        match self {
            RedOp::Add => KbinOp::Add,
            RedOp::Min => KbinOp::Min,
            RedOp::Max => KbinOp::Max,
            RedOp::Avg => KbinOp::Fma,
        }
    }

    /// By CLI name; `sum` (NCCL's word) is `add`.
    pub fn from_name(s: &str) -> Option<RedOp> {
        match s {
            "sum" => Some(RedOp::Add),
            _ => Self::ALL.into_iter().find(|op| op.name() == s),
        }
    }

    /// CLI name: the host op's (`add`, `min`, `max`), or `avg`.
    pub const fn name(self) -> &'static str {
        match self {
            RedOp::Avg => "avg",
            op => op.kbin().name(),
        }
    }
}

impl fmt::Display for RedOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for RedOp {
    type Err = String;
    /// By CLI name ([`RedOp::from_name`]); a refusal says what is expected, without the flag
    /// (the front names it).
    fn from_str(s: &str) -> Result<RedOp, String> {
        RedOp::from_name(s)
            .ok_or_else(|| format!("'{s}': expected {}", cce_format::op::alternatives(RedOp::ALL.map(RedOp::name))))
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

impl Collective {
    /// Every collective.
    pub const ALL: [Collective; 3] = [Collective::AllReduce, Collective::ReduceScatter, Collective::AllGather];
    /// CLI name.
    pub fn name(self) -> &'static str {
        match self {
            Collective::AllReduce => "allreduce",
            Collective::ReduceScatter => "reduce-scatter",
            Collective::AllGather => "all-gather",
        }
    }
    /// By CLI name, or as MSCCL files and NCCL spell it (`all-reduce`, `reducescatter`,
    /// `allgather`).
    pub fn from_name(s: &str) -> Option<Collective> {
        Some(match s {
            "allreduce" | "all-reduce" => Collective::AllReduce,
            "reduce-scatter" | "reducescatter" => Collective::ReduceScatter,
            "all-gather" | "allgather" => Collective::AllGather,
            _ => return None,
        })
    }
}

impl fmt::Display for Collective {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Collective {
    type Err = String;
    /// [`Collective::from_name`]; a refusal says what is expected, without the flag.
    fn from_str(s: &str) -> Result<Collective, String> {
        Collective::from_name(s).ok_or_else(|| format!("'{s}': expected allreduce, reduce-scatter or all-gather"))
    }
}

/// What crosses a node boundary (docs/MODEL.md G6).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Compress {
    /// The buffers as they are.
    #[default]
    None,
    /// GCE (study §9.3): a ring all-reduce whose sender reduces and compresses for the hop
    /// into the next node (the EXT combo packet), the receiver expanding before its own reduce;
    /// the final chunks travel the all-gather in their owner's compressed form. The nodes are
    /// the time model's ([`TimeModel::ranks_per_node`] ranks each).
    Gce,
}

impl Compress {
    /// CLI name.
    pub fn name(self) -> &'static str {
        match self {
            Compress::None => "none",
            Compress::Gce => "gce",
        }
    }
    /// By CLI name.
    pub fn from_name(s: &str) -> Option<Compress> {
        [Compress::None, Compress::Gce].into_iter().find(|c| c.name() == s)
    }
}

impl fmt::Display for Compress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Compress {
    type Err = String;
    /// [`Compress::from_name`]; a refusal says what is expected, without the flag.
    fn from_str(s: &str) -> Result<Compress, String> {
        Compress::from_name(s).ok_or_else(|| format!("'{s}': expected gce or none"))
    }
}

/// A user's algorithm: an MSCCL XML file, read and checked ([`cce_msccl::Schedule`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserAlgo {
    /// The file as the user named it (for reports).
    pub file: String,
    /// The checked schedule and its lowering plan.
    pub schedule: cce_msccl::Schedule,
}

impl UserAlgo {
    /// Reads and checks an MSCCL XML file's text; `file` names it in reports.
    pub fn from_xml(file: &str, text: &str) -> Result<UserAlgo, CollectiveError> {
        let schedule =
            cce_msccl::Schedule::from_xml(text).map_err(|e| CollectiveError::Config(format!("{file}: {e}")))?;
        Ok(UserAlgo { file: file.to_string(), schedule })
    }

    /// The collective its `coll` names.
    pub fn collective(&self) -> Collective {
        match self.schedule.program.coll {
            cce_msccl::Coll::AllReduce => Collective::AllReduce,
            cce_msccl::Coll::ReduceScatter => Collective::ReduceScatter,
            cce_msccl::Coll::AllGather => Collective::AllGather,
        }
    }

    /// Its ranks (`ngpus`).
    pub fn ranks(&self) -> usize {
        self.schedule.program.ranks
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
    /// Memory budget of the model, in bytes: [`check`](super::check) refuses a configuration whose
    /// [`memory_need`](super::memory_need) total is larger.
    pub budget: u64,
    /// Compression over the node boundaries.
    pub compress: Compress,
    /// The user's schedule when `algo` is [`Algo::File`] (else `None`).
    pub user: Option<std::sync::Arc<UserAlgo>>,
    /// The two algorithms when `algo` is [`Algo::Hier`] (nodes of the time model's
    /// [`TimeModel::ranks_per_node`] ranks).
    pub hier: Hier,
    /// Ring cycles of the flat ring (1..=[`MAX_CHANNELS`]; more than one only for `ring` and
    /// `ring-2r2w`): every chunk is cut into this many pieces, piece k reduced and gathered
    /// round channel k's ring, whose order in every node starts k·Y/C ranks on (MODEL,
    /// docs/MODEL.md C29; the module docs of [`super`] give the order).
    pub channels: usize,
}

impl Config {
    /// Its algorithm as reports name it: a hierarchy's as `hier(intra/inter)`, a ring of C > 1
    /// channels as `ring(C channels)`.
    pub fn label(&self) -> String {
        match self.channels {
            0 | 1 => self.algo.label(self.hier),
            c => format!("{}({c} channels)", self.algo.name()),
        }
    }
    /// The node of rank `q` (the time model's nodes of [`TimeModel::ranks_per_node`] ranks).
    pub fn node(&self, q: usize) -> usize {
        q / self.model.ranks_per_node.max(1)
    }
    /// Nodes the ranks span.
    pub fn nodes(&self) -> usize {
        self.ranks.div_ceil(self.model.ranks_per_node.max(1))
    }
}

impl Config {
    /// An all-reduce with defaults (arch 3, fp32 accumulate, RNE, 60 s timeout, the budget
    /// [`default_budget`]).
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
            budget: default_budget(),
            compress: Compress::None,
            user: None,
            hier: Hier::default(),
            channels: 1,
        }
    }

    /// A run of a user's schedule: its ranks, its collective, defaults as [`Config::new`].
    pub fn from_user(user: std::sync::Arc<UserAlgo>, op: RedOp, dtype: SdmaDtype, elems: u64) -> Self {
        Config {
            collective: user.collective(),
            user: Some(user.clone()),
            ..Config::new(user.ranks(), Algo::File, op, dtype, elems)
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
    /// The time model's estimate (docs/MODEL.md C6).
    pub model_seconds: f64,
    /// The most model memory (inputs, buffers, rings, and scratch buffers kept for reuse) held
    /// at once during the run, in bytes.
    pub model_peak_bytes: u64,
    /// Per rank, per step: measured (start, end) in seconds since the run started (a step
    /// starts once its dependencies are met); empty for ranks of other processes.
    pub step_walls: Vec<Vec<(f64, f64)>>,
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
    /// The configuration needs more memory than its budget ([`check`](super::check), before anything is
    /// allocated).
    #[error("{ranks} ranks x {elems} {dtype} elements need {need} of model memory, over the budget of {budget}")]
    Budget {
        /// Ranks.
        ranks: usize,
        /// Elements per rank.
        elems: u64,
        /// Buffer dtype name.
        dtype: &'static str,
        /// [`MemoryNeed::total`](super::MemoryNeed::total) (a lower bound when the rings could not be counted).
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

/// The budget when none is given: 3/4 of this host's memory (`MemTotal` of `/proc/meminfo`), so
/// a run the machine can hold is not refused and one it cannot hold is refused before anything
/// is allocated; 16 GiB where the host's memory cannot be read (MODEL, docs/MODEL.md C13).
pub fn default_budget() -> u64 {
    host_memory().map_or(FALLBACK_BUDGET, |total| total / 4 * 3)
}

/// [`default_budget`] where the host's memory is unknown.
pub const FALLBACK_BUDGET: u64 = 16 << 30;

/// `MemTotal` in bytes (Linux), once per process.
fn host_memory() -> Option<u64> {
    static TOTAL: std::sync::OnceLock<Option<u64>> = std::sync::OnceLock::new();
    *TOTAL.get_or_init(|| {
        let info = std::fs::read_to_string("/proc/meminfo").ok()?;
        let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
        let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        kib.checked_mul(1024)
    })
}
