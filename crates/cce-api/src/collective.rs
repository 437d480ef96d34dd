//! Collectives, as `cce allreduce`, `cce demo` and `cce report numerics` run them:
//! [`AllreduceParams`] (the flags, as typed fields) → a [`Prepared`] all-reduce (its
//! configuration checked once, `auto` resolved by the time model once) → its run; the demo
//! ([`Demo`]) and the numerics report ([`NumericsReport`]) checked, then run.
//!
//! ## Guarantees
//! - [`AllreduceParams::prepare`] checks every time-model override and a user's schedule
//!   against the ranks and collective, then the configuration and its memory budget — once,
//!   before anything is allocated; [`Prepared::run`] runs it without checking again, and with
//!   `auto` each candidate's model time is computed once, by the preparation, and its choice's
//!   model is the run's (the cce-api tests count both).
//! - Messages name parameters in backquotes (`` `ranks` ``, `` `compress` ``), never a front's
//!   flag: each front spells them its own way.

use std::borrow::Cow;
use std::time::Duration;

use std::sync::Arc;

use cce_collectives::collective::{self, Checked, TimeModel};
use cce_collectives::metrics::{self, Metrics};
use cce_collectives::{demo, numerics_report};
use cce_format::ringfile::RingFile;
use cce_host::Rounding;

/// The configuration a [`Prepared`] all-reduce runs, in its results and reports.
pub use cce_collectives::collective::Config;
/// The bytes over node boundaries, in [`AllreduceResult::hops`].
pub use cce_collectives::collective::HopBytes;
/// The memory a prepared all-reduce was checked for ([`Prepared::memory_need`]).
pub use cce_collectives::collective::MemoryNeed;
/// A run's outcome, in [`AllreduceResult`].
pub use cce_collectives::collective::Outcome;
/// One element's story and its parts ([`AllreduceParams::element_story`]).
pub use cce_collectives::collective::{Difference, PacketRef, Quantised, StepKind, Story, StoryOperand, StoryStep};
/// A built-in schedule's steps and work items and the memory a run holds for them, in closed
/// form before it is made (docs/MODEL.md C26): what a front checks against its own budget
/// before it asks for a model of every algorithm (the page's `auto`, crates/cce-web).
pub use cce_collectives::collective::{ScheduleSize, schedule_size};
/// The demo's all-reduce and its forensics ([`Demo::allreduce_rows`]).
pub use cce_collectives::demo::{DemoAllreduce, Forensics};
/// The demo's worked examples and all-reduce rows ([`Demo`]).
pub use cce_collectives::demo::{Example, Row};
/// `cce report model`: the measured points beside the time model's figures.
pub use cce_collectives::model_report::{ModelPoint, ModelReport, model_report};
/// The numerics report's parameters, series and result ([`NumericsReport`]).
pub use cce_collectives::numerics_report::{Params, Report, Series};

use crate::params::{Algo, Check, Collective, Compress, Instance, Inter, RedOp, UserAlgo};
use cce_format::SdmaDtype;

use crate::error::ApiError;
use crate::listing::Listing;
use crate::params::{AlgoChoice, RoundingMode};
use crate::values;

/// Fewest ranks of an all-reduce.
pub const MIN_RANKS: usize = collective::MIN_RANKS;
/// Most ranks of an all-reduce.
pub const MAX_RANKS: usize = collective::MAX_RANKS;
/// Most ranks of the mesh algorithm (its R-source reduce packet).
pub const MESH_MAX_RANKS: usize = collective::MESH_MAX_RANKS;

fn input(m: impl Into<String>) -> ApiError {
    ApiError::Input(m.into())
}

/// The flags of `cce allreduce`, as typed fields.
#[derive(Clone, Debug, PartialEq)]
pub struct AllreduceParams {
    /// Ranks, 2..=4096 (mesh: at most 32); 0 with `nodes`: nodes × ranks per node.
    pub ranks: u64,
    /// One of cce's algorithms, `auto` (the least model time), or a user's MSCCL XML schedule
    /// ([`load_algorithm`]; `--algo-file`), whose `ngpus` must equal `ranks` and whose `coll`
    /// must be the `collective` when one is given.
    pub algo: AlgoChoice,
    /// The reduction.
    pub op: RedOp,
    /// Buffer dtype.
    pub dtype: SdmaDtype,
    /// Accumulate dtype; `None`: fp32 for a float dtype, the dtype itself for an integer one.
    pub accum: Option<SdmaDtype>,
    /// Seed of the generated inputs and of stochastic rounding.
    pub seed: u64,
    /// NeuronCore arch (2, 3 or 4).
    pub arch: u64,
    /// RNE, or stochastic rounding seeded by `seed`.
    pub rounding: RoundingMode,
    /// The collective; `None`: all-reduce, or the user's schedule's `coll`.
    pub collective: Option<Collective>,
    /// Inject a failure: this rank stops before this step.
    pub fail: Option<(u64, u64)>,
    /// Seconds a rank waits for a semaphore before failing (at least 1).
    pub timeout_secs: u64,
    /// Time model: the instance type whose defaults it starts from; `None`: the arch's (2 →
    /// trn1, 3 → trn2, 4 → trn3).
    pub instance: Option<Instance>,
    /// Time model: nanoseconds per descriptor.
    pub alpha_ns: Option<f64>,
    /// Time model: DMA bandwidth per rank (all its engines), GB/s.
    pub dma_gbps: Option<f64>,
    /// Time model: DMA engines per rank.
    pub engines: Option<u64>,
    /// Time model: a rank's memory bandwidth, GB/s.
    pub hbm_gbps: Option<f64>,
    /// Time model: ring link bandwidth inside a node, GB/s.
    pub link_gbps: Option<f64>,
    /// Time model: one EFA interface's bandwidth between nodes, GB/s each direction.
    pub inter_link_gbps: Option<f64>,
    /// Time model: EFA interfaces per node.
    pub efa_per_node: Option<u64>,
    /// Time model: fraction of the DMA rate a CCE reduce runs at.
    pub cce_rate: Option<f64>,
    /// Time model: microseconds per step inside a node.
    pub latency_us: Option<f64>,
    /// Time model: microseconds per step between nodes.
    pub inter_latency_us: Option<f64>,
    /// Time model: microseconds before the first step (0 or more).
    pub launch_us: Option<f64>,
    /// Time model: microseconds every step with work adds (0 or more).
    pub step_us: Option<f64>,
    /// Time model: fraction of the engines' rate a collective's packets get (above 0, at most 1).
    pub dma_share: Option<f64>,
    /// Time model: ranks per node.
    pub ranks_per_node: Option<u64>,
    /// Time model: ranks per chip.
    pub cores_per_chip: Option<u64>,
    /// Model memory budget in bytes; `None`: 3/4 of the host's memory.
    pub budget: Option<u64>,
    /// `--compress`: [`Compress::Gce`] compresses what crosses a node boundary (the ring
    /// all-reduce only; without `ranks_per_node`, the ranks form two nodes).
    pub compress: Compress,
    /// Whether the outputs are compared with the exact reduction (`--check`; default exact).
    pub check: Check,
    /// `--nodes`: X nodes of `ranks_per_node` ranks (the instance's when not given), so
    /// R = X × Y; a `ranks` given too must equal it (0: not given).
    pub nodes: Option<u64>,
    /// `--intra` / `--inter`: a hierarchy's two algorithms (`algo` hier only; ring and ring
    /// when not given).
    pub intra: Option<Algo>,
    /// The inter-node algorithm of `algo` hier.
    pub inter: Option<Inter>,
    /// `--channels`: ring cycles of the flat ring (`algo` ring or ring-2r2w; with auto, the
    /// channels its ring candidate runs); `None`: one, or auto's own choice (docs/MODEL.md C29).
    pub channels: Option<u64>,
}

/// Reads and checks a user's MSCCL XML schedule (`text`; `file` names it in messages and
/// reports): every rule of docs/MODEL.md X1–X7, refused as bad input naming rank, thread
/// block, step and line.
pub fn load_algorithm(file: &str, text: &str) -> Result<Arc<UserAlgo>, ApiError> {
    UserAlgo::from_xml(file, text).map(Arc::new).map_err(|e| input(e.to_string()))
}

impl AllreduceParams {
    /// An all-reduce with the defaults of `cce allreduce`: seed 1, arch 3, RNE, a 60 s
    /// timeout, the time model's defaults, no injected failure.
    pub fn new(ranks: u64, algo: AlgoChoice, op: RedOp, dtype: SdmaDtype) -> Self {
        AllreduceParams {
            ranks,
            algo,
            op,
            dtype,
            accum: None,
            seed: 1,
            arch: 3,
            rounding: RoundingMode::Rne,
            collective: None,
            fail: None,
            timeout_secs: 60,
            instance: None,
            alpha_ns: None,
            dma_gbps: None,
            engines: None,
            hbm_gbps: None,
            link_gbps: None,
            inter_link_gbps: None,
            efa_per_node: None,
            cce_rate: None,
            latency_us: None,
            inter_latency_us: None,
            launch_us: None,
            step_us: None,
            dma_share: None,
            ranks_per_node: None,
            cores_per_chip: None,
            budget: None,
            compress: Compress::None,
            check: Check::Exact,
            nodes: None,
            intra: None,
            inter: None,
            channels: None,
        }
    }

    /// The configuration for `elems` elements per rank, checked with its memory budget before
    /// anything is allocated, every override checked; `auto` resolved to the algorithm of least
    /// model time, each candidate modelled once (the choice's model is the run's): the
    /// all-reduce [`Prepared::run`] runs next, without checking again.
    pub fn prepare(&self, elems: u64) -> Result<Prepared, ApiError> {
        let cfg = self.config_for(elems)?;
        if !self.is_auto() || cfg.algo == Algo::File {
            return Ok(Prepared { checked: collective::check(&cfg)?, check: self.check, explanation: None });
        }
        if cfg.compress == Compress::Gce {
            return Err(input("`compress` gce runs the ring all-reduce: give `algo` ring, not auto"));
        }
        let (cfg, candidates) = collective::choose(&cfg)?;
        let checked = collective::check_chosen(&cfg, &candidates)?;
        let explanation = Explanation { auto: cfg.algo, auto_hier: cfg.hier, config: cfg, candidates, compared: true };
        Ok(Prepared { checked, check: self.check, explanation: Some(explanation) })
    }

    /// Whether the algorithm is chosen by the model.
    pub fn is_auto(&self) -> bool {
        self.algo == AlgoChoice::Auto
    }

    /// The model for `elems` elements per rank and its parameters: what `cce allreduce
    /// --explain` prints (the model only: no memory budget, nothing allocated for the inputs,
    /// so any size). With `auto`, every algorithm's and the choice; with a named algorithm,
    /// that algorithm's alone ([`Explanation::compared`] false); with a user's schedule, cce's
    /// own algorithms and then the schedule with the model time of its own packets.
    pub fn explain(&self, elems: u64) -> Result<Explanation, ApiError> {
        if matches!(self.algo, AlgoChoice::Algo(_) | AlgoChoice::Hier(_)) {
            let cfg = self.config_for(elems)?;
            let candidates = vec![Candidate::of(&cfg)];
            if candidates[0].model.is_err() {
                // Refused: the refusal as a run of it would give it (its own error kind).
                collective::model(&cfg, false)?;
            }
            return Ok(Explanation { auto: cfg.algo, auto_hier: cfg.hier, config: cfg, candidates, compared: false });
        }
        self.compare_all(elems, collective::choose)
    }

    /// Every algorithm's model for `elems` elements per rank and the choice ([`Self::explain`]
    /// with `auto`), whatever algorithm is named, by `choose` ([`collective::choose`], or
    /// [`collective::choose_every`] when every candidate is to run).
    fn compare_all(&self, elems: u64, choose: Choose) -> Result<Explanation, ApiError> {
        let cfg = self.config_for(elems)?;
        if cfg.algo == Algo::File {
            let builtin = Config { algo: Algo::Ring, user: None, ..cfg.clone() };
            let (auto, mut candidates) = choose(&builtin)?;
            candidates.push(Candidate::of(&cfg));
            return Ok(Explanation { config: cfg, candidates, auto: auto.algo, auto_hier: auto.hier, compared: true });
        }
        let (cfg, candidates) = choose(&cfg)?;
        Ok(Explanation { auto: cfg.algo, auto_hier: cfg.hier, config: cfg, candidates, compared: true })
    }

    /// The configuration before it is checked and `auto` resolved (it stands for ring then).
    fn config_for(&self, elems: u64) -> Result<Config, ApiError> {
        let algo = match &self.algo {
            AlgoChoice::File(_) => Algo::File,
            AlgoChoice::Auto => Algo::Ring,
            AlgoChoice::Algo(a) => *a,
            AlgoChoice::Hier(_) => Algo::Hier,
        };
        let op = self.op;
        let ranks = self.topology()?;
        let mut cfg = match &self.algo {
            AlgoChoice::File(u) => {
                if ranks != u.ranks() {
                    return Err(input(format!(
                        "`ranks` {ranks}: {} is an algorithm for {} ranks (ngpus)",
                        u.file,
                        u.ranks()
                    )));
                }
                Config::from_user(u.clone(), op, self.dtype, elems)
            }
            _ => Config::new(ranks, algo, op, self.dtype, elems),
        };
        if let Some(acc) = self.accum {
            cfg.accum = acc;
        }
        cfg.arch = crate::reduce_rings::fit32("`arch` <ARCH>", self.arch)?;
        cfg.model = match self.instance {
            None => TimeModel::defaults(cfg.arch),
            Some(instance) => TimeModel::for_instance(instance),
        };
        cfg.rounding = match self.rounding {
            RoundingMode::Rne => Rounding::Rne,
            RoundingMode::Sr => Rounding::Stochastic { seed: self.seed as u32 },
        };
        match (&self.algo, self.collective) {
            (AlgoChoice::File(u), Some(c)) if c != cfg.collective => {
                return Err(input(format!(
                    "`collective` {c}: {} is a {} schedule (its coll)",
                    u.file,
                    u.schedule.program.coll.name()
                )));
            }
            (AlgoChoice::File(_), _) => {}
            (_, c) => cfg.collective = c.unwrap_or(Collective::AllReduce),
        }
        cfg.fail = self.fail.map(|(k, s)| (k as usize, s as usize));
        cfg.compress = self.compress;
        if let Some(c) = self.channels {
            // Out of range: the shape check's message names the range.
            cfg.channels = usize::try_from(c).unwrap_or(usize::MAX);
        }
        if let Some(b) = self.budget {
            cfg.budget = b;
        }
        cfg.timeout = Duration::from_secs(self.timeout_secs.max(1));
        let positive = |v: Option<f64>, name: &str| -> Result<Option<f64>, ApiError> {
            match v {
                Some(x) if !(x.is_finite() && x > 0.0) => Err(input(format!("`{name}` must be a positive number"))),
                v => Ok(v),
            }
        };
        let m = &mut cfg.model;
        let count = |v: Option<u64>, name: &str, max: u64| -> Result<Option<u64>, ApiError> {
            match v {
                Some(x) if x == 0 || x > max => Err(input(format!("`{name}` must be 1..={max}"))),
                v => Ok(v),
            }
        };
        if let Some(v) = count(self.engines, "engines", 1024)? {
            m.engines = v as u32;
        }
        if let Some(v) = count(self.ranks_per_node, "ranks-per-node", 1 << 20)? {
            m.ranks_per_node = v as usize;
        } else if self.nodes.is_some() {
            // Nodes without a count of ranks: the instance's (cce_collectives' nodes rule).
        } else if cfg.compress == Compress::Gce {
            // Compressing, the ranks default to two nodes (docs/MODEL.md G6).
            m.ranks_per_node = ranks.div_ceil(2).max(1);
        }
        if let Some(v) = count(self.cores_per_chip, "cores-per-chip", 1 << 20)? {
            m.cores_per_chip = v as usize;
        }
        if let Some(v) = count(self.efa_per_node, "efa-per-node", 1024)? {
            m.efa_per_node = v as usize;
        }
        if let Some(v) = positive(self.alpha_ns, "alpha-ns")? {
            m.per_descriptor = v * 1e-9;
        }
        if let Some(v) = positive(self.dma_gbps, "dma-gbps")? {
            m.engine_bytes_per_sec = v * 1e9 / m.engines as f64;
        }
        if let Some(v) = positive(self.hbm_gbps, "hbm-gbps")? {
            m.hbm_bytes_per_sec = v * 1e9;
        }
        if let Some(v) = positive(self.link_gbps, "link-gbps")? {
            m.link_bytes_per_sec = v * 1e9;
        }
        if let Some(v) = positive(self.inter_link_gbps, "inter-link-gbps")? {
            m.inter_link_bytes_per_sec = v * 1e9;
        }
        if let Some(v) = positive(self.cce_rate, "cce-rate")? {
            m.cce_rate = v;
        }
        if let Some(v) = positive(self.latency_us, "latency-us")? {
            m.step_latency = v * 1e-6;
        }
        if let Some(v) = positive(self.inter_latency_us, "inter-latency-us")? {
            m.inter_latency = v * 1e-6;
        }
        self.fitted_overrides(m)?;
        self.hierarchy(&mut cfg)?;
        Ok(cfg)
    }

    /// The fitted terms' overrides (docs/MODEL.md C28), each checked.
    fn fitted_overrides(&self, m: &mut TimeModel) -> Result<(), ApiError> {
        let non_negative = |v: Option<f64>, name: &str| -> Result<Option<f64>, ApiError> {
            match v {
                Some(x) if !(x.is_finite() && x >= 0.0) => Err(input(format!("`{name}` must be 0 or more"))),
                v => Ok(v),
            }
        };
        if let Some(v) = non_negative(self.launch_us, "launch-us")? {
            m.launch = v * 1e-6;
        }
        if let Some(v) = non_negative(self.step_us, "step-us")? {
            m.step_cost = v * 1e-6;
        }
        match self.dma_share {
            Some(x) if !(x > 0.0 && x <= 1.0) => Err(input("`dma-share` must be above 0 and at most 1")),
            Some(x) => {
                m.dma_share = x;
                Ok(())
            }
            None => Ok(()),
        }
    }

    /// The ranks: `ranks`, or X nodes × Y ranks per node (the instance's Y when not given,
    /// and no more than an instance holds), which a `ranks` given too must equal.
    fn topology(&self) -> Result<usize, ApiError> {
        let ranks = usize::try_from(self.ranks).map_err(|_| input("`ranks` out of range"))?;
        let Some(nodes) = self.nodes else { return Ok(ranks) };
        let instance = self.instance.unwrap_or_else(|| Instance::of_arch(self.arch.min(u32::MAX as u64) as u32));
        let holds = TimeModel::for_instance(instance).ranks_per_node as u64;
        let per_node = self.ranks_per_node.unwrap_or(holds);
        if per_node == 0 || per_node > holds {
            return Err(input(format!(
                "`ranks-per-node` {per_node}: a {instance} node holds 1..={holds} ranks (16 chips x its NeuronCores)"
            )));
        }
        let all = nodes.checked_mul(per_node).filter(|&r| nodes >= 1 && r <= collective::MAX_RANKS as u64).ok_or_else(
            || {
                input(format!(
                    "`nodes` {nodes} x `ranks-per-node` {per_node}: between 1 and {} ranks in all",
                    collective::MAX_RANKS
                ))
            },
        )?;
        if ranks != 0 && ranks as u64 != all {
            return Err(input(format!(
                "`ranks` {ranks}: `nodes` {nodes} x `ranks-per-node` {per_node} are {all} ranks"
            )));
        }
        Ok(all as usize)
    }

    /// A hierarchy's algorithms into `cfg` (given only with `algo` hier).
    fn hierarchy(&self, cfg: &mut Config) -> Result<(), ApiError> {
        if let AlgoChoice::Hier(h) = self.algo {
            cfg.hier = h;
        }
        let hier = matches!(self.algo, AlgoChoice::Algo(Algo::Hier));
        if !hier && (self.intra.is_some() || self.inter.is_some()) {
            let flag = if self.intra.is_some() { "intra" } else { "inter" };
            return Err(input(format!("`{flag}` chooses an algorithm of `algo` hier, not of {}", self.algo.name())));
        }
        if let Some(intra) = self.intra {
            cfg.hier.intra = intra;
        }
        if let Some(inter) = self.inter {
            cfg.hier.inter = inter;
        }
        Ok(())
    }
}

/// How the algorithms are compared: [`collective::choose`] or [`collective::choose_every`].
type Choose = fn(&Config) -> Result<(Config, Vec<Candidate>), collective::CollectiveError>;

/// Every algorithm's model time for one configuration and the choice (`--explain`).
#[derive(Clone, Debug, PartialEq)]
pub struct Explanation {
    /// The configuration, with the chosen algorithm.
    pub config: Config,
    /// Every algorithm, modelled or refused, in [`Algo::ALL`] order (then a user's schedule).
    pub candidates: Vec<Candidate>,
    /// What `--algo auto` chooses among cce's own algorithms (the configuration's algorithm,
    /// unless a user's schedule runs).
    pub auto: Algo,
    /// Its two algorithms when `auto` is a hierarchy.
    pub auto_hier: collective::Hier,
    /// Whether every algorithm was modelled and compared (`auto`, a user's schedule); false
    /// when a named algorithm was modelled alone (then `auto` is that algorithm, not a choice).
    pub compared: bool,
}

impl Explanation {
    /// What `auto` chooses, a hierarchy as `hier(intra/inter)`.
    pub fn auto_label(&self) -> String {
        // A user's schedule is the configuration; auto's choice is among cce's own, with
        // one channel then.
        match self.config.algo {
            Algo::File => self.auto.label(self.auto_hier),
            _ => self.config.label(),
        }
    }
}

/// The algorithm as reports name it: cce's algorithm, or the user's schedule by its name.
pub fn algo_label(cfg: &Config) -> String {
    match &cfg.user {
        Some(u) => format!("{} (file)", u.schedule.program.name),
        None => cfg.label(),
    }
}

/// One collective's result: the outcome, its error metrics and the memory it was checked for.
#[derive(Clone, Debug, PartialEq)]
pub struct AllreduceResult {
    /// The configuration it ran.
    pub config: Config,
    /// Each rank's output and the run's counts.
    pub outcome: Outcome,
    /// The outputs against the exact reduction (all zero when `check` is [`Check::None`]).
    pub metrics: Metrics,
    /// Whether `metrics` were measured.
    pub check: Check,
    /// What [`collective::check`] counted against the budget.
    pub memory_bytes: u64,
    /// The model's candidates when the algorithm was chosen by it (`auto`), else empty.
    pub candidates: Option<Explanation>,
    /// With `--compress gce`: the bytes over the node boundaries, and without compression.
    pub hops: Option<HopBytes>,
}

impl AllreduceResult {
    /// nccl-tests' (algbw, busbw) of the wall-clock run, GB/s.
    pub fn bandwidths(&self) -> (f64, f64) {
        metrics::bandwidths(&self.config, self.outcome.seconds)
    }
}

/// A candidate of the time model: an algorithm and its model timeline or refusal
/// ([`Explanation::candidates`]).
pub use cce_collectives::collective::Candidate;
/// The model's timeline of a run ([`Prepared::timeline`], the trace's source).
pub use cce_collectives::collective::Timeline;

/// An all-reduce checked and ready to run ([`AllreduceParams::prepare`]): the configuration,
/// its memory need and lowered schedule, and with `auto` every candidate's model, each computed
/// once. Only cce-api makes one ([`AllreduceParams::prepare`], the sweeps).
#[derive(Clone, Debug)]
pub struct Prepared {
    checked: Checked,
    check: Check,
    explanation: Option<Explanation>,
}

impl Prepared {
    /// The configuration (with `auto`, the chosen algorithm's).
    pub fn config(&self) -> &Config {
        self.checked.config()
    }

    /// The memory it was checked for against the budget.
    pub fn memory_need(&self) -> &MemoryNeed {
        self.checked.need()
    }

    /// The outputs' check it measures under.
    pub fn check(&self) -> Check {
        self.check
    }

    /// The checked run, for the MPI job.
    #[cfg(feature = "mpi")]
    pub(crate) fn checked(&self) -> &Checked {
        &self.checked
    }

    /// With `auto`: every candidate's model and the choice (computed by the preparation).
    pub fn explanation(&self) -> Option<&Explanation> {
        self.explanation.as_ref()
    }

    /// The algorithm as reports name it ([`algo_label`]).
    pub fn label(&self) -> String {
        algo_label(self.config())
    }

    /// The model's timeline a trace shows: every packet and work item, or above
    /// [`collective::MAX_TRACE_PACKETS`] packets each rank's steps alone
    /// ([`collective::trace`]). The run's own model is not detailed: this is one more time
    /// model, made only when asked for.
    pub fn timeline(&self) -> Result<Timeline, ApiError> {
        Ok(collective::trace(self.config())?)
    }

    /// The inputs made from `seed`, one buffer per rank (what `cce allreduce` runs without
    /// `--input-dir`).
    pub fn generate_inputs(&self, seed: u64) -> Vec<Vec<u8>> {
        metrics::generate(self.config(), seed)
    }

    /// One rank's input size in bytes: what every input must hold.
    pub fn input_bytes(&self) -> u64 {
        let cfg = self.config();
        cfg.elems * cfg.dtype.bytes() as u64
    }

    /// Runs it over `inputs` (one buffer per rank of [`input_bytes`](Self::input_bytes); owned
    /// ones moved into the model as its input buffers, borrowed ones read in place: nothing of
    /// them copied), checking nothing again, and, with [`Check::Exact`], measures the outputs
    /// against them block by block on this host's threads (no per-element state is kept). With
    /// `auto`, the candidates come with the result.
    pub fn run(&self, inputs: Vec<Cow<'_, [u8]>>) -> Result<AllreduceResult, ApiError> {
        let bytes = self.input_bytes();
        if inputs.len() != self.config().ranks || inputs.iter().any(|i| i.len() as u64 != bytes) {
            return Err(input(format!("need {} inputs of {bytes} bytes each", self.config().ranks)));
        }
        let cfg = self.config();
        let (outcome, inputs) = collective::run(&self.checked, inputs)?;
        let metrics = match self.check {
            Check::Exact => metrics::measure(cfg, &inputs, &outcome.outputs),
            Check::None => Metrics::default(),
        };
        drop(inputs);
        let hops = match cfg.compress {
            Compress::None => None,
            Compress::Gce => Some(collective::hop_report(cfg, &outcome)?),
        };
        Ok(AllreduceResult {
            config: cfg.clone(),
            outcome,
            metrics,
            check: self.check,
            memory_bytes: self.memory_need().total(),
            candidates: self.explanation.clone(),
            hops,
        })
    }
}

/// All-reduces `inputs` (one raw little-endian buffer of `params.dtype` per rank; equal
/// lengths): [`AllreduceParams::prepare`] for their element count, then [`Prepared::run`].
/// `params.ranks` is the number of inputs. The inputs are read in place, never copied.
pub fn allreduce(params: &AllreduceParams, inputs: &[Vec<u8>]) -> Result<AllreduceResult, ApiError> {
    allreduce_slices(params, &inputs.iter().map(Vec::as_slice).collect::<Vec<_>>())
}

/// [`allreduce()`] over slices (the caller's arrays, read in place: nothing of them is copied).
pub fn allreduce_slices(params: &AllreduceParams, inputs: &[&[u8]]) -> Result<AllreduceResult, ApiError> {
    allreduce_inputs(params, inputs.iter().map(|&i| Cow::Borrowed(i)).collect())
}

/// [`allreduce()`] taking the inputs (moved into the model as its input buffers, not copied).
pub fn allreduce_owned(params: &AllreduceParams, inputs: Vec<Vec<u8>>) -> Result<AllreduceResult, ApiError> {
    allreduce_inputs(params, inputs.into_iter().map(Cow::Owned).collect())
}

/// [`allreduce()`] over owned or borrowed inputs.
fn allreduce_inputs(params: &AllreduceParams, inputs: Vec<Cow<'_, [u8]>>) -> Result<AllreduceResult, ApiError> {
    let size = params.dtype.bytes().max(1) as u64;
    let len = inputs.first().map_or(0, |b| b.len() as u64);
    if len % size != 0 {
        return Err(ApiError::Ragged { len, dtype: params.dtype.name().to_string(), size: size as usize });
    }
    let params = AllreduceParams { ranks: inputs.len() as u64, ..params.clone() };
    params.prepare(len / size)?.run(inputs)
}

/// The stochastic-rounding seed of a framework adapter's collective called without an explicit
/// seed (docs/MODEL.md C18): the base seed, the call's position and its step, mixed by
/// SplitMix64 (its golden-ratio increment, then the output function
/// [`cce_numerics::rng::mix64`]). `cce.jax`'s XLA handler and `cce._seeds` (Python) both call it.
pub fn framework_seed(base: u64, position: u64, step: u64) -> u64 {
    let splitmix = |x: u64| cce_numerics::rng::mix64(x.wrapping_add(0x9E37_79B9_7F4A_7C15));
    splitmix(splitmix(splitmix(base) ^ position) ^ step)
}

/// The distinct element counts of a `MIN:MAX` byte sweep, doubling from MIN: a size below one
/// element counts as one element, and sizes that round to the same count run once.
pub fn sweep_counts(sweep: &str, elem_bytes: u64) -> Result<Vec<u64>, ApiError> {
    let (lo, hi) = sweep.split_once(':').ok_or_else(|| input(format!("`sweep` '{sweep}': expected MIN:MAX bytes")))?;
    let lo = values::parse_u64(lo).map_err(input)?;
    let hi = values::parse_u64(hi).map_err(input)?;
    if lo == 0 || lo > hi {
        return Err(input("`sweep`: MIN must be positive and at most MAX"));
    }
    let mut counts: Vec<u64> = Vec::new();
    let mut s = lo;
    loop {
        let count = (s / elem_bytes.max(1)).max(1);
        // Doubling sizes give non-decreasing counts: a repeat is the previous one.
        if counts.last() != Some(&count) {
            counts.push(count);
        }
        match s.checked_mul(2) {
            Some(next) if next <= hi => s = next,
            _ => break,
        }
    }
    Ok(counts)
}

impl AllreduceParams {
    /// The element counts of a `MIN:MAX` byte sweep ([`sweep_counts`]); with a user's schedule,
    /// each rounded down to a multiple of its `nchunksperloop` (at least one chunk each) and
    /// kept only within its `minBytes` / `maxBytes` (X3), repeats run once.
    pub fn sweep_counts(&self, sweep: &str) -> Result<Vec<u64>, ApiError> {
        let size = self.dtype.bytes().max(1) as u64;
        let counts = sweep_counts(sweep, size)?;
        let AlgoChoice::File(u) = &self.algo else { return Ok(counts) };
        let n = u.schedule.program.nchunks;
        let mut fit: Vec<u64> = counts
            .into_iter()
            .map(|c| (c / n).max(1) * n)
            .filter(|&c| u.schedule.check_size(c, size).is_ok())
            .collect();
        fit.dedup();
        if fit.is_empty() {
            return Err(input(format!(
                "`sweep` {sweep}: no size fits {} (multiples of nchunksperloop {n} elements, minBytes {}, maxBytes {})",
                u.file, u.schedule.program.min_bytes, u.schedule.program.max_bytes
            )));
        }
        Ok(fit)
    }
}

/// One run of a sweep over every algorithm: bus bandwidth measured and modelled.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepPoint {
    /// The algorithm.
    pub algo: Algo,
    /// Bytes per rank.
    pub bytes: u64,
    /// Measured bus bandwidth, GB/s.
    pub busbw: f64,
    /// The model's bus bandwidth, GB/s.
    pub model_busbw: f64,
    /// Whether `--algo auto` chooses this algorithm at this size.
    pub auto: bool,
}

impl AllreduceParams {
    /// A `MIN:MAX` sweep's runs: the all-reduce [`prepare`](Self::prepare)d at every element
    /// count of `counts` — every size checked, its budget included, before any of them runs.
    pub fn prepare_sweep(&self, counts: &[u64]) -> Result<Vec<Prepared>, ApiError> {
        counts.iter().map(|&count| self.prepare(count)).collect()
    }

    /// The runs of [`sweep_every_algorithm`] over `counts`, at most (cce's algorithms, and the
    /// user's schedule), for a progress bar.
    pub fn every_algorithm_runs(&self, counts: &[u64]) -> u64 {
        let file = matches!(self.algo, AlgoChoice::File(_));
        counts.len() as u64 * (Algo::ALL.len() as u64 + u64::from(file))
    }

    /// Every algorithm that can run `self.ranks` ranks (then the user's schedule) at `count`
    /// elements per rank, prepared — each checked once, its model the candidate's of the
    /// choice — with whether `auto` chooses it.
    fn every_algorithm(&self, count: u64) -> Result<Vec<(Prepared, bool)>, ApiError> {
        // cce's own algorithms run the collective a user's schedule runs.
        let collective = match &self.algo {
            AlgoChoice::File(u) => Some(u.collective()),
            _ => self.collective,
        };
        let explained = self.compare_all(count, collective::choose_every)?;
        let prepared = |cfg: &Config| -> Result<Prepared, ApiError> {
            let checked = collective::check_chosen(cfg, &explained.candidates)?;
            Ok(Prepared { checked, check: Check::Exact, explanation: None })
        };
        let mut jobs = Vec::new();
        for algo in Algo::ALL {
            let p = AllreduceParams { algo: AlgoChoice::Algo(algo), collective, ..self.clone() };
            let cfg = p.config_for(count)?;
            if algo.refusal(cfg.ranks, cfg.arch).is_some() {
                continue;
            }
            jobs.push((prepared(&cfg)?, algo == explained.auto));
        }
        if matches!(self.algo, AlgoChoice::File(_)) {
            jobs.push((prepared(&self.config_for(count)?)?, false));
        }
        Ok(jobs)
    }
}

/// Runs every algorithm that can run `params.ranks` ranks at every element count of `counts`
/// (each configuration and its budget checked, once, before anything runs), calling
/// `progress` after each run; each point marked with whether auto chooses it.
pub fn sweep_every_algorithm(
    params: &AllreduceParams,
    counts: &[u64],
    mut progress: impl FnMut(),
) -> Result<Vec<SweepPoint>, ApiError> {
    let mut plan = Vec::new();
    for &count in counts {
        plan.extend(params.every_algorithm(count)?);
    }
    let mut points = Vec::with_capacity(plan.len());
    for (job, auto) in plan {
        let inputs = job.generate_inputs(params.seed);
        let r = job.run(inputs.into_iter().map(Cow::Owned).collect())?;
        progress();
        let cfg = job.config();
        let (_, busbw) = r.bandwidths();
        let (_, model_busbw) = metrics::bandwidths(cfg, r.outcome.model_seconds);
        points.push(SweepPoint {
            algo: cfg.algo,
            bytes: cfg.elems * cfg.dtype.bytes() as u64,
            busbw,
            model_busbw,
            auto,
        });
    }
    Ok(points)
}

/// The chart of a sweep over every algorithm: bus bandwidth against bytes per rank (log-log),
/// per algorithm two series: `<algo> simulator on this CPU` (solid: the bus bandwidth of the
/// simulator's wall time on this machine) and `<algo> Trainium model` (dashed: that of the
/// model's time on the Trainium node), auto's choice marked on the model curves.
#[cfg(feature = "plot")]
pub fn sweep_chart(points: &[SweepPoint], ranks: u64, dtype: SdmaDtype) -> crate::plot::Chart {
    use crate::plot::{Chart, Mark, Scale, Series};
    let mut series = Vec::new();
    for algo in Algo::ALL.into_iter().chain([Algo::File]) {
        let mine: Vec<&SweepPoint> = points.iter().filter(|p| p.algo == algo).collect();
        if mine.is_empty() {
            continue;
        }
        let line = |f: fn(&SweepPoint) -> f64| mine.iter().map(|p| (p.bytes as f64, f(p))).collect();
        // Named for what they are: the simulator's speed on the CPU that ran it (no Trainium
        // was measured), and the model's time on the Trainium node.
        let name = algo.name();
        series.push(Series { name: format!("{name} simulator on this CPU"), points: line(|p| p.busbw), dashed: false });
        series.push(Series { name: format!("{name} Trainium model"), points: line(|p| p.model_busbw), dashed: true });
    }
    // Every size's choice marked; labelled where the choice changes.
    let mut last = None;
    let marks = points
        .iter()
        .filter(|p| p.auto)
        .map(|p| {
            let label = if last == Some(p.algo) { String::new() } else { format!("auto: {}", p.algo.name()) };
            last = Some(p.algo);
            Mark { label, x: p.bytes as f64, y: p.model_busbw }
        })
        .collect();
    Chart {
        title: format!("all-reduce bus bandwidth, {ranks} ranks, {}", dtype.name()),
        x_label: "bytes per rank".into(),
        y_label: "bus bandwidth (GB/s)".into(),
        x_scale: Scale::Log2,
        y_scale: Scale::Log10,
        series,
        marks,
    }
}

/// Ranks of the demo's all-reduce.
pub const DEMO_RANKS: usize = 8;

/// `cce demo`: the study's worked examples run, and the all-reduce of every algorithm checked
/// (bad sizes, and a memory budget it would exceed, refused before any output).
#[derive(Clone, Debug)]
pub struct Demo {
    /// The worked examples, each run through the engine and checked independently.
    pub examples: Vec<Example>,
    /// Elements per rank of the all-reduce.
    pub elems: u64,
    runs: Vec<Checked>,
}

impl Demo {
    /// The all-reduce of [`DEMO_RANKS`] ranks of `elems` bf16 elements checked for every
    /// algorithm (nothing allocated), then the worked examples run.
    pub fn prepare(elems: u64) -> Result<Demo, ApiError> {
        let runs = demo::check_allreduce(DEMO_RANKS, elems)?;
        let examples = demo::examples()?;
        Ok(Demo { examples, elems, runs })
    }

    /// The all-reduce with every algorithm over one set of inputs, `progress(algo)` before each,
    /// and the story of the first element where two algorithms disagree.
    pub fn allreduce_rows(&self, progress: impl FnMut(Algo)) -> Result<DemoAllreduce, ApiError> {
        Ok(demo::allreduce_rows(&self.runs, progress)?)
    }
}

/// The demo's checks that failed: examples whose engine result differs from the independent
/// computation, all-reduce rows whose ranks disagree or whose elements are out of bounds.
pub fn demo_failures(examples: &[Example], rows: &[Row]) -> Vec<String> {
    let examples = examples.iter().filter(|ex| ex.mismatches != 0).map(|ex| ex.title.to_string());
    let rows =
        rows.iter().filter(|r| !r.ranks_identical || r.wrong != 0).map(|r| format!("all-reduce {}", r.algo.name()));
    examples.chain(rows).collect()
}

/// `Err(ApiError::Failed)` naming the failed checks, if any.
pub fn demo_check(failures: &[String]) -> Result<(), ApiError> {
    if failures.is_empty() {
        Ok(())
    } else {
        Err(ApiError::Failed(format!("demo checks failed: {}", failures.join(", "))))
    }
}

/// An example's rings as a listing (queue 0, arch 3).
pub fn example_listing(ex: &Example) -> Listing {
    Listing::of(&RingFile { arch: 3, queues: vec![ex.rings.queue(0)] })
}

/// Elements per rank of `cce report numerics` unless given.
pub const NUMERICS_DEFAULT_ELEMS: u64 = numerics_report::DEFAULT_ELEMS;

/// `cce report numerics` (the all-reduce error against the rank count: bf16 RNE, bf16 SR,
/// fp32), every all-reduce checked, the memory budget included, before any runs.
#[derive(Clone, Debug)]
pub struct NumericsReport {
    checked: numerics_report::CheckedReport,
}

impl NumericsReport {
    /// Checks `params` (the element count, every all-reduce's configuration and budget);
    /// nothing is allocated.
    pub fn prepare(params: &Params) -> Result<NumericsReport, ApiError> {
        Ok(NumericsReport { checked: numerics_report::check(params)? })
    }

    /// How many all-reduces [`NumericsReport::run`] runs (calls of its `progress`).
    pub fn all_reduces(&self) -> usize {
        self.checked.all_reduces()
    }

    /// Runs the report; `progress(R, series)` before each all-reduce.
    pub fn run(&self, progress: &mut dyn FnMut(usize, Series)) -> Result<Report, ApiError> {
        Ok(numerics_report::run(&self.checked, progress)?)
    }
}

/// Where a story reads the ranks' input elements (only those it needs).
#[derive(Clone, Copy, Debug)]
pub enum StoryInputs<'a> {
    /// The inputs `cce allreduce` generates from `seed` (each element made alone).
    Generated {
        /// The seed.
        seed: u64,
    },
    /// One raw little-endian buffer per rank.
    Arrays(&'a [&'a [u8]]),
    /// `dir/rank{r}.bin`, read element by element (each file's length checked first).
    RankFiles(&'a std::path::Path),
    /// Rank r's input in file r from the byte given (a `.npy`'s data), read element by element;
    /// the caller has checked that each holds the run's elements.
    Files(&'a [(std::path::PathBuf, u64)]),
}

impl AllreduceParams {
    /// The story of element `index` of rank `rank`'s output (`None`: rank 0, or for a
    /// reduce-scatter the rank that holds it), for `elems` elements per rank: computed from the
    /// schedule for that element alone, with no run and no memory budget (any size); `auto`
    /// resolved by the time model as [`prepare`](Self::prepare) resolves it.
    pub fn element_story(
        &self,
        elems: u64,
        index: u64,
        rank: Option<u64>,
        inputs: StoryInputs<'_>,
    ) -> Result<ElementStory, ApiError> {
        let mut cfg = self.config_for(elems)?;
        if self.is_auto() && cfg.algo != Algo::File {
            if cfg.compress == Compress::Gce {
                return Err(input("`compress` gce runs the ring all-reduce: give `algo` ring, not auto"));
            }
            cfg = collective::choose(&cfg)?.0;
        }
        story_of(&cfg, index, rank, inputs)
    }
}

impl Prepared {
    /// The story of element `index` of this all-reduce ([`AllreduceParams::element_story`]).
    pub fn element_story(
        &self,
        index: u64,
        rank: Option<u64>,
        inputs: StoryInputs<'_>,
    ) -> Result<ElementStory, ApiError> {
        story_of(self.config(), index, rank, inputs)
    }
}

impl Prepared {
    /// The order of every element of rank 0's output as `(first element, order)` segments,
    /// ascending (an element's order is the last segment's that starts at or before it):
    /// one story per chunk, no run ([`collective::orders`]).
    ///
    /// # Errors
    /// A user schedule of more chunks than stories are told for
    /// ([`collective::MAX_ORDER_CHUNKS`]).
    pub fn orders(&self) -> Result<Vec<(u64, cce_numerics::order::Order)>, ApiError> {
        Ok(collective::orders(self.config(), None)?)
    }
}

/// One element's story with the configuration it tells (`--element`'s result).
#[derive(Clone, Debug, PartialEq)]
pub struct ElementStory {
    /// The configuration (with `auto`, the chosen algorithm's).
    pub config: Config,
    /// The story.
    pub story: Story,
}

/// Checks that `dir/rank{r}.bin` holds `cfg.elems` elements of `cfg`'s dtype for every rank,
/// before any is read (`--input-dir`: the run and the story).
///
/// # Errors
/// A file that is missing or of another length, named with its length and the expected one.
pub fn check_rank_files(cfg: &Config, dir: &std::path::Path) -> Result<(), ApiError> {
    let want = cfg.elems.saturating_mul(cfg.dtype.bytes().max(1) as u64);
    for q in 0..cfg.ranks {
        let p = dir.join(format!("rank{q}.bin"));
        let len = std::fs::metadata(&p).map_err(|e| input(format!("{}: {e}", p.display())))?.len();
        if len != want {
            return Err(input(format!(
                "{}: {len} bytes, expected {want} ({} elements of {})",
                p.display(),
                cfg.elems,
                cfg.dtype.name()
            )));
        }
    }
    Ok(())
}

/// The story of `cfg`'s element `index` over `inputs`.
fn story_of(cfg: &Config, index: u64, rank: Option<u64>, inputs: StoryInputs<'_>) -> Result<ElementStory, ApiError> {
    let rank = rank.map(|r| usize::try_from(r).unwrap_or(usize::MAX));
    let size = cfg.dtype.bytes().max(1) as u64;
    let want = cfg.elems.saturating_mul(size);
    let source: Box<dyn metrics::InputSource> = match inputs {
        StoryInputs::Generated { seed } => Box::new(metrics::Generated::new(cfg, seed)),
        StoryInputs::Arrays(arrays) => {
            if arrays.len() != cfg.ranks || arrays.iter().any(|a| a.len() as u64 != want) {
                return Err(input(format!("need {} inputs of {want} bytes each", cfg.ranks)));
            }
            Box::new(metrics::Held::new(cfg, arrays))
        }
        StoryInputs::RankFiles(dir) => {
            check_rank_files(cfg, dir)?;
            Box::new(metrics::RankFiles::open(cfg, dir).map_err(|e| input(e.to_string()))?)
        }
        StoryInputs::Files(files) => {
            if files.len() != cfg.ranks {
                return Err(input(format!("need {} input files, one per rank", cfg.ranks)));
            }
            Box::new(metrics::RankFiles::at(cfg, files).map_err(|e| input(e.to_string()))?)
        }
    };
    let story = collective::story(cfg, source.as_ref(), index, rank)?;
    Ok(ElementStory { config: cfg.clone(), story })
}
