//! Collectives, as `cce allreduce` and `cce demo` run them: [`AllreduceParams`] (the flags, as
//! typed fields) → a checked `cce-collectives` [`Config`]; a run's outcome and error
//! metrics as the JSON objects the CLI prints (one run, a sweep row, the demo).
//!
//! ## Guarantees
//! - [`AllreduceParams::config`] checks every time-model override and a user's schedule against
//!   the ranks and collective;
//!   [`cce_collectives::allreduce::check`] (called by [`allreduce()`] and by the CLI before it
//!   makes or reads inputs) then checks the configuration and memory budget before anything is
//!   allocated.
//! - JSON keys are the CLI's contract, in its order.

use std::borrow::Cow;
use std::time::Duration;

use std::sync::Arc;

use cce_collectives::allreduce::{
    self, Algo, Candidate, Collective, Compress, HopBytes, Instance, Outcome, RedOp, TimeModel,
};
use cce_collectives::demo::{Example, Row};
use cce_collectives::metrics::Metrics;
use cce_format::SdmaDtype;
use cce_format::ringfile::RingFile;
use cce_host::Rounding;

pub use cce_collectives::allreduce::{Config, MemoryNeed, UserAlgo};
pub use cce_collectives::metrics::Check;
/// The collectives themselves (configurations, runs, the time model), for fronts that drive a
/// run step by step; the demo's jobs; a result's measures.
pub use cce_collectives::{allreduce as collectives, demo, metrics};

use crate::error::ApiError;
use crate::listing::Listing;
use crate::params::{AlgoChoice, RoundingMode};
use crate::values;

fn input(m: impl Into<String>) -> ApiError {
    ApiError::Input(m.into())
}

/// The flags of `cce allreduce`, as typed fields.
#[derive(Clone, Debug, PartialEq)]
pub struct AllreduceParams {
    /// Ranks, 2..=64 (mesh: at most 32).
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
    /// Time model: ring link bandwidth between nodes, GB/s.
    pub inter_link_gbps: Option<f64>,
    /// Time model: fraction of the DMA rate a CCE reduce runs at.
    pub cce_rate: Option<f64>,
    /// Time model: microseconds per step inside a node.
    pub latency_us: Option<f64>,
    /// Time model: microseconds per step between nodes.
    pub inter_latency_us: Option<f64>,
    /// Time model: ranks per node.
    pub ranks_per_node: Option<u64>,
    /// Time model: ranks per chip.
    pub cores_per_chip: Option<u64>,
    /// Model memory budget in bytes; `None`: [`allreduce::default_budget`] (3/4 of the host's
    /// memory).
    pub budget: Option<u64>,
    /// `--compress`: [`Compress::Gce`] compresses what crosses a node boundary (the ring
    /// all-reduce only; without `ranks_per_node`, the ranks form two nodes).
    pub compress: Compress,
    /// Whether the outputs are compared with the exact reduction (`--check`; default exact).
    pub check: Check,
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
            cce_rate: None,
            latency_us: None,
            inter_latency_us: None,
            ranks_per_node: None,
            cores_per_chip: None,
            budget: None,
            compress: Compress::None,
            check: Check::Exact,
        }
    }

    /// The configuration for `elems` elements per rank, every override checked (the ranks,
    /// sizes and budget are [`allreduce::check`]'s); `auto` resolved to the
    /// algorithm of least model time ([`allreduce::choose`]).
    pub fn config(&self, elems: u64) -> Result<Config, ApiError> {
        let cfg = self.config_for(elems)?;
        if cfg.algo == Algo::File {
            return Ok(cfg);
        }
        if self.is_auto() && cfg.compress == Compress::Gce {
            return Err(input("--compress gce runs the ring all-reduce: give --algo ring, not auto"));
        }
        if self.is_auto() {
            let (algo, _) = allreduce::choose(&cfg)?;
            return Ok(Config { algo, ..cfg });
        }
        Ok(cfg)
    }

    /// Whether the algorithm is chosen by the model.
    pub fn is_auto(&self) -> bool {
        self.algo == AlgoChoice::Auto
    }

    /// Every algorithm's model for `elems` elements per rank, the choice, and the model's
    /// parameters: what `cce allreduce --explain` prints. With a user's schedule, it runs,
    /// and is listed after cce's own algorithms with the model time of its own packets.
    pub fn explain(&self, elems: u64) -> Result<Explanation, ApiError> {
        let cfg = self.config_for(elems)?;
        if cfg.algo == Algo::File {
            let builtin = Config { algo: Algo::Ring, user: None, ..cfg.clone() };
            let (auto, mut candidates) = allreduce::choose(&builtin)?;
            candidates
                .push(Candidate { algo: Algo::File, model: allreduce::model(&cfg, false).map_err(|e| e.to_string()) });
            return Ok(Explanation { config: cfg, candidates, auto });
        }
        let (chosen, candidates) = allreduce::choose(&cfg)?;
        Ok(Explanation { config: Config { algo: chosen, ..cfg }, candidates, auto: chosen })
    }

    /// [`config`](Self::config) before `auto` is resolved (it stands for ring then).
    fn config_for(&self, elems: u64) -> Result<Config, ApiError> {
        let algo = match &self.algo {
            AlgoChoice::File(_) => Algo::File,
            AlgoChoice::Auto => Algo::Ring,
            AlgoChoice::Algo(a) => *a,
        };
        let op = self.op;
        let ranks = usize::try_from(self.ranks).map_err(|_| input("--ranks out of range"))?;
        let mut cfg = match &self.algo {
            AlgoChoice::File(u) => {
                if ranks != u.ranks() {
                    return Err(input(format!(
                        "--ranks {ranks}: {} is an algorithm for {} ranks (ngpus)",
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
        cfg.arch = crate::build::fit32("--arch <ARCH>", self.arch)?;
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
                    "--collective {c}: {} is a {} schedule (its coll)",
                    u.file,
                    u.schedule.program.coll.name()
                )));
            }
            (AlgoChoice::File(_), _) => {}
            (_, c) => cfg.collective = c.unwrap_or(Collective::AllReduce),
        }
        cfg.fail = self.fail.map(|(k, s)| (k as usize, s as usize));
        cfg.compress = self.compress;
        if let Some(b) = self.budget {
            cfg.budget = b;
        }
        cfg.timeout = Duration::from_secs(self.timeout_secs.max(1));
        let positive = |v: Option<f64>, name: &str| -> Result<Option<f64>, ApiError> {
            match v {
                Some(x) if !(x.is_finite() && x > 0.0) => Err(input(format!("--{name} must be a positive number"))),
                v => Ok(v),
            }
        };
        let m = &mut cfg.model;
        let count = |v: Option<u64>, name: &str, max: u64| -> Result<Option<u64>, ApiError> {
            match v {
                Some(x) if x == 0 || x > max => Err(input(format!("--{name} must be 1..={max}"))),
                v => Ok(v),
            }
        };
        if let Some(v) = count(self.engines, "engines", 1024)? {
            m.engines = v as u32;
        }
        if let Some(v) = count(self.ranks_per_node, "ranks-per-node", 1 << 20)? {
            m.ranks_per_node = v as usize;
        } else if cfg.compress == Compress::Gce {
            // Compressing, the ranks default to two nodes (docs/MODEL.md G6).
            m.ranks_per_node = ranks.div_ceil(2).max(1);
        }
        if let Some(v) = count(self.cores_per_chip, "cores-per-chip", 1 << 20)? {
            m.cores_per_chip = v as usize;
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
        Ok(cfg)
    }
}

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
}

/// The algorithm as reports name it: cce's algorithm, or the user's schedule by its name.
pub fn algo_label(cfg: &Config) -> String {
    match &cfg.user {
        Some(u) => format!("{} (file)", u.schedule.program.name),
        None => cfg.algo.name().to_string(),
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
    /// What [`allreduce::check`] counted against the budget.
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

/// Runs a checked configuration over `inputs` (one buffer per rank, moved into the model as
/// its input buffers, not copied) and, with [`Check::Exact`], measures the outputs against them
/// block by block on this host's threads (no per-element state is kept); `memory_bytes` is
/// what [`allreduce::check`] returned for it.
pub fn run_config(
    cfg: &Config,
    inputs: Vec<Vec<u8>>,
    memory_bytes: u64,
    check: Check,
) -> Result<AllreduceResult, ApiError> {
    run_inputs(cfg, inputs.into_iter().map(Cow::Owned).collect(), memory_bytes, check)
}

/// [`run_config`] over owned inputs (moved in) or borrowed ones (read in place).
fn run_inputs(
    cfg: &Config,
    inputs: Vec<Cow<'_, [u8]>>,
    memory_bytes: u64,
    check: Check,
) -> Result<AllreduceResult, ApiError> {
    let (outcome, inputs) = allreduce::run_inputs(cfg, inputs)?;
    let metrics = match check {
        Check::Exact => metrics::measure(cfg, &inputs, &outcome.outputs),
        Check::None => Metrics::default(),
    };
    drop(inputs);
    let hops = match cfg.compress {
        Compress::None => None,
        Compress::Gce => Some(allreduce::hop_report(cfg, &outcome)?),
    };
    Ok(AllreduceResult { config: cfg.clone(), outcome, metrics, check, memory_bytes, candidates: None, hops })
}

/// All-reduces `inputs` (one raw little-endian buffer of `params.dtype` per rank; equal
/// lengths): the configuration for their element count, checked with its memory budget, then
/// [`run_config`]. `params.ranks` is the number of inputs. The inputs are read in place,
/// never copied.
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
    let (cfg, need) = params.checked(len / size)?;
    params.run_checked(&cfg, &need, inputs)
}

impl AllreduceParams {
    /// The configuration for `elems` elements per rank, checked with its memory budget before
    /// anything is allocated: what [`run_checked`](Self::run_checked) runs next.
    pub fn checked(&self, elems: u64) -> Result<(Config, MemoryNeed), ApiError> {
        let cfg = self.config(elems)?;
        let need = allreduce::check(&cfg)?;
        Ok((cfg, need))
    }

    /// Runs a [`checked`](Self::checked) configuration over owned or borrowed inputs, measuring
    /// the outputs under `self.check`; with `auto`, the model's candidates come with the result.
    pub fn run_checked(
        &self,
        cfg: &Config,
        need: &MemoryNeed,
        inputs: Vec<Cow<'_, [u8]>>,
    ) -> Result<AllreduceResult, ApiError> {
        let mut r = run_inputs(cfg, inputs, need.total(), self.check)?;
        if self.is_auto() {
            r.candidates = Some(self.explain(cfg.elems)?);
        }
        Ok(r)
    }
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
    let (lo, hi) = sweep.split_once(':').ok_or_else(|| input(format!("--sweep '{sweep}': expected MIN:MAX bytes")))?;
    let lo = values::parse_u64(lo).map_err(input)?;
    let hi = values::parse_u64(hi).map_err(input)?;
    if lo == 0 || lo > hi {
        return Err(input("--sweep: MIN must be positive and at most MAX"));
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
                "--sweep {sweep}: no size fits {} (multiples of nchunksperloop {n} elements, minBytes {}, maxBytes {})",
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

/// Runs every algorithm that can run `params.ranks` ranks at every element count of `counts`
/// (each configuration and its budget checked before anything runs), calling `progress` after
/// each run; each point marked with whether auto chooses it.
pub fn sweep_every_algorithm(
    params: &AllreduceParams,
    counts: &[u64],
    mut progress: impl FnMut(),
) -> Result<Vec<SweepPoint>, ApiError> {
    let mut plan = Vec::new();
    // cce's own algorithms run the collective a user's schedule runs.
    let collective = match &params.algo {
        AlgoChoice::File(u) => Some(u.collective()),
        _ => params.collective,
    };
    for &count in counts {
        let chosen = params.explain(count)?.auto;
        for algo in Algo::ALL {
            let p = AllreduceParams { algo: AlgoChoice::Algo(algo), collective, ..params.clone() };
            let cfg = p.config(count)?;
            if algo.refusal(cfg.ranks, cfg.arch).is_some() {
                continue;
            }
            allreduce::check(&cfg)?;
            plan.push((cfg, algo == chosen));
        }
        if matches!(params.algo, AlgoChoice::File(_)) {
            let cfg = params.config(count)?;
            allreduce::check(&cfg)?;
            plan.push((cfg, false));
        }
    }
    let mut points = Vec::with_capacity(plan.len());
    for (cfg, auto) in plan {
        let inputs = metrics::generate(&cfg, params.seed);
        let r = run_config(&cfg, inputs, 0, Check::Exact)?;
        progress();
        let (_, busbw) = r.bandwidths();
        let (_, model_busbw) = metrics::bandwidths(&cfg, r.outcome.model_seconds);
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
