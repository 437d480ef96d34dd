//! `cce repro`: the bit-identity matrix of a configuration space. Every configuration of the
//! lists given ([`ReproParams`]: ranks, algorithms, sizes, dtypes, accumulate dtypes,
//! roundings, stochastic-rounding seeds, archs, compression, ranks per node, the flat ring's
//! channels) runs once on the
//! same inputs; the report ([`Repro`]) holds the classes of configurations whose outputs are
//! bit-identical, each class against the first of its inputs (and on request every pair of
//! classes), the parameter that separates them, the invariance of each algorithm over each
//! swept axis, and the environment.
//!
//! Here the configurations are planned and run; what their outputs say — the classes, the
//! comparisons, the separations, the verdicts and their words — is cce-forensics' analysis
//! ([`cce_forensics::repro`]), which sees each configuration as its axes' values and its
//! outputs as bytes.
//!
//! ## Same inputs
//! Configurations with the same rank count and dtype (an *input group*) run on the same
//! inputs: generated ones are prefix-stable (element i of rank r depends only on the input
//! seed, r and i: `cce_numerics::sample`), and given ones are cut to each size, so the run of
//! N elements reads the first N elements of every rank. Runs of different sizes are compared
//! on their first min(N, M) elements: an all-reduce is *batch-invariant* when its result for an
//! element does not change with the number of elements reduced beside it. Configurations of
//! different rank counts or dtypes have different inputs: they get their error against the
//! exact reduction, never a bit comparison.
//!
//! ## Streaming, and its memory bound
//! The configurations run one at a time, input group by input group; nothing but the group's
//! inputs (at its largest size), the group's first output (the *reference*; ranks that agree
//! stored once) and the run in progress is held. Each run's outputs are reduced to 128-bit digests
//! (`cce_forensics::repro::bits`, MurmurHash3 x64_128) of every rank's output and of its prefixes
//! at every smaller size of the group, taken in one pass; a run whose digests are new starts a
//! class, is measured against the exact reduction, and is compared element by element with
//! the reference while its outputs are still held. So the peak memory is one run's model
//! memory plus the reference (one rank's output when its ranks agree, R when they do not) plus
//! the inputs' growth to the group's largest size, and the work is one run per configuration plus one check per class. With
//! [`ReproParams::all_pairs`], the classes of a group other than the first are compared with
//! each other by running their first configurations again, one pair at a time (about C²/2 runs
//! for C classes), within the same bound.
//!
//! ## Guarantees
//! - Every list, every configuration's parameters and memory budget (the reference and the
//!   inputs included) and the size of the space ([`MAX_CONFIGS`]) are checked by
//!   [`ReproParams::plan`], before anything is generated or run.
//! - A combination that cannot run by its nature (mesh over 32 ranks, rdh at a rank count that
//!   is not a power of two, ring-2r2w on arch 2, a user's schedule at another rank count or a
//!   size it refuses, compression on an algorithm other than ring, more than one channel on
//!   an algorithm other than ring, ring-2r2w and auto or with compression) is listed as skipped
//!   with the reason; every other refusal stops the plan.
//! - Counts and first differences are exact ([`cce_forensics::repro::compare`]); classes
//!   other than the reference's rest on the digests (see `cce_forensics::repro::bits`).

mod analysis;
mod run;

use cce_format::SdmaDtype;

use crate::collective::{AllreduceParams, Prepared};
use crate::error::ApiError;
use crate::params::{Algo, AlgoChoice, Check, Compress, RedOp, RoundingMode};
use cce_collectives::collective::{self, Config, MAX_CHANNELS, TimeModel};

pub use analysis::{Pair, Separation, Verdict, separation_words, story_words};
/// The machine and build a report ran on ([`Repro::env`]).
pub use cce_bench::machine::Environment;
/// A class's error against the exact reduction ([`Class::errors`]).
pub use cce_collectives::metrics::Metrics;
/// How two runs' outputs differ ([`Pair::diff`]).
pub use cce_forensics::repro::Difference;
pub use run::{Class, FirstDifference, InputsUsed, Repro, ReproInputs, RunConfig};

/// Most configurations one repro runs (the product of the lists' lengths, before skipping).
pub const MAX_CONFIGS: usize = 1024;

/// Most configurations a `--plot` heatmap draws (one cell per pair of configurations).
pub const MAX_PLOTTED: usize = 256;

/// A parameter of the configuration space: the lists of [`ReproParams`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Axis {
    /// Ranks.
    Ranks,
    /// Buffer dtype.
    Dtype,
    /// Algorithm.
    Algo,
    /// Elements per rank.
    Elems,
    /// Accumulate dtype.
    Accum,
    /// Rounding.
    Rounding,
    /// Stochastic rounding's seed.
    Seed,
    /// NeuronCore arch.
    Arch,
    /// Compression.
    Compress,
    /// Ranks per node.
    RanksPerNode,
    /// The flat ring's channels (docs/MODEL.md C29).
    Channels,
}

impl Axis {
    /// Every axis, in the order configurations are numbered (the last varies fastest).
    pub const ALL: [Axis; 11] = [
        Axis::Ranks,
        Axis::Dtype,
        Axis::Algo,
        Axis::Elems,
        Axis::Accum,
        Axis::Rounding,
        Axis::Seed,
        Axis::Arch,
        Axis::Compress,
        Axis::RanksPerNode,
        Axis::Channels,
    ];

    /// The parameter's name (the CLI's option without its dashes).
    pub const fn name(self) -> &'static str {
        match self {
            Axis::Ranks => "ranks",
            Axis::Dtype => "dtype",
            Axis::Algo => "algo",
            Axis::Elems => "elems",
            Axis::Accum => "accum",
            Axis::Rounding => "rounding",
            Axis::Seed => "seed",
            Axis::Arch => "arch",
            Axis::Compress => "compress",
            Axis::RanksPerNode => "ranks-per-node",
            Axis::Channels => "channels",
        }
    }

    /// Whether configurations differing here run on the same inputs (and are compared bit for
    /// bit): every axis but the rank count and the dtype.
    pub const fn same_inputs(self) -> bool {
        !matches!(self, Axis::Ranks | Axis::Dtype)
    }

    /// Whether an algorithm's invariance over this axis is judged: every axis with the same
    /// inputs but the algorithm itself.
    pub const fn judged(self) -> bool {
        self.same_inputs() && !matches!(self, Axis::Algo)
    }
}

/// The lists of `cce repro`, as typed fields: the configuration space is their product (a
/// seed only with stochastic rounding).
#[derive(Clone, Debug, PartialEq)]
pub struct ReproParams {
    /// Rank counts.
    pub ranks: Vec<u64>,
    /// Algorithms: cce's own, `auto`, and users' schedules.
    pub algos: Vec<AlgoChoice>,
    /// Elements per rank.
    pub elems: Vec<u64>,
    /// Buffer dtypes.
    pub dtypes: Vec<SdmaDtype>,
    /// Accumulate dtypes; `None` is the default (fp32 for a float dtype, the dtype for an
    /// integer one).
    pub accums: Vec<Option<SdmaDtype>>,
    /// Roundings.
    pub roundings: Vec<RoundingMode>,
    /// Stochastic rounding's seeds (32 bits; used by the `sr` configurations only).
    pub seeds: Vec<u64>,
    /// NeuronCore archs.
    pub archs: Vec<u64>,
    /// Compression of what crosses a node boundary.
    pub compress: Vec<Compress>,
    /// Ranks per node; `None` is the time model's default.
    pub ranks_per_node: Vec<Option<u64>>,
    /// The flat ring's channels, 1 to [`MAX_CHANNELS`] (more than one runs with
    /// ring, ring-2r2w and auto only, without compression: docs/MODEL.md C29).
    pub channels: Vec<u64>,
    /// The reduction (one for the whole space).
    pub op: RedOp,
    /// Seed of the generated inputs (rank r's are `cce gen --seed <input_seed + r>`'s).
    pub input_seed: u64,
    /// Compare every pair of classes of an input group, not only each with the first.
    pub all_pairs: bool,
    /// Model memory budget in bytes; `None`: 3/4 of the host's memory.
    pub budget: Option<u64>,
}

/// The shape of inputs given instead of generated: ranks and elements per rank.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GivenShape {
    /// How many ranks' inputs there are.
    pub ranks: usize,
    /// Elements per rank (every rank's the same).
    pub elems: u64,
}

/// One configuration of the space.
#[derive(Clone, Debug, PartialEq)]
pub struct ReproConfig {
    /// Ranks.
    pub ranks: u64,
    /// The algorithm as asked for (`auto` stays `auto`; [`RunConfig::ran`] says what ran).
    pub algo: AlgoChoice,
    /// Elements per rank.
    pub elems: u64,
    /// Buffer dtype.
    pub dtype: SdmaDtype,
    /// Accumulate dtype as asked for (`None`: the default).
    pub accum: Option<SdmaDtype>,
    /// Rounding.
    pub rounding: RoundingMode,
    /// Stochastic rounding's seed (`None` with RNE).
    pub seed: Option<u64>,
    /// NeuronCore arch.
    pub arch: u64,
    /// Compression.
    pub compress: Compress,
    /// Ranks per node (`None`: the model's default).
    pub ranks_per_node: Option<u64>,
    /// The flat ring's channels (with `auto`, those of its ring candidate).
    pub channels: u64,
}

/// The algorithm's name in reports: cce's algorithm, `auto`, or a user's file as named.
pub fn algo_name(a: &AlgoChoice) -> String {
    match a {
        AlgoChoice::File(u) => u.file.clone(),
        other => other.label(),
    }
}

impl ReproConfig {
    /// The value of `axis`, as reports write it (`default` for an accumulate dtype or ranks per
    /// node left to the default, `-` for the seed of an RNE configuration).
    pub fn value(&self, axis: Axis) -> String {
        let or_default = |v: Option<String>| v.unwrap_or_else(|| "default".into());
        match axis {
            Axis::Ranks => self.ranks.to_string(),
            Axis::Dtype => self.dtype.name().to_string(),
            Axis::Algo => algo_name(&self.algo),
            Axis::Elems => self.elems.to_string(),
            Axis::Accum => or_default(self.accum.map(|a| a.name().to_string())),
            Axis::Rounding => self.rounding.name().to_string(),
            Axis::Seed => self.seed.map_or_else(|| "-".into(), |s| s.to_string()),
            Axis::Arch => self.arch.to_string(),
            Axis::Compress => self.compress.name().to_string(),
            Axis::RanksPerNode => or_default(self.ranks_per_node.map(|r| r.to_string())),
            Axis::Channels => self.channels.to_string(),
        }
    }

    /// The axes whose values differ between `self` and `other`.
    pub fn differing(&self, other: &ReproConfig) -> Vec<Axis> {
        Axis::ALL.into_iter().filter(|&a| self.value(a) != other.value(a)).collect()
    }

    /// `ranks 8, algo ring, elems 4096, …`: every axis and its value.
    pub fn describe(&self) -> String {
        Axis::ALL.iter().map(|&a| format!("{} {}", a.name(), self.value(a))).collect::<Vec<_>>().join(", ")
    }

    /// Why this combination cannot run by its nature, or `None` when it may.
    fn inapplicable(&self) -> Option<String> {
        let size = u64::from(self.dtype.bytes().max(1));
        let why = match &self.algo {
            // A hierarchy: the collectives' own rules for its nodes and pair (docs/MODEL.md H3).
            AlgoChoice::Algo(Algo::Hier) | AlgoChoice::Hier(_) => {
                let arch = u32::try_from(self.arch).unwrap_or(u32::MAX);
                let ranks = usize::try_from(self.ranks).unwrap_or(usize::MAX);
                let mut cfg = Config::new(ranks, Algo::Hier, RedOp::Add, self.dtype, self.elems);
                (cfg.arch, cfg.model, cfg.compress) = (arch, TimeModel::defaults(arch), self.compress);
                // More than one channel is refused here too (the collectives' rule names it).
                cfg.channels = usize::try_from(self.channels).unwrap_or(usize::MAX);
                if let Some(y) = self.ranks_per_node {
                    cfg.model.ranks_per_node = usize::try_from(y).unwrap_or(usize::MAX);
                }
                if let AlgoChoice::Hier(h) = self.algo {
                    cfg.hier = h;
                }
                return collective::estimate(&cfg).err().map(|e| e.to_string());
            }
            AlgoChoice::Algo(a) => a.refusal(self.ranks as usize, self.arch as u32),
            AlgoChoice::File(u) if u.ranks() as u64 != self.ranks => {
                Some(format!("{} is a schedule for {} ranks (ngpus)", u.file, u.ranks()))
            }
            AlgoChoice::File(u) => u.schedule.check_size(self.elems, size).err().map(|e| e.to_string()),
            AlgoChoice::Auto => None,
        };
        let ring = matches!(self.algo, AlgoChoice::Algo(Algo::Ring));
        why.or_else(|| {
            (self.compress == Compress::Gce && !ring).then(|| "`compress` gce runs the ring all-reduce only".into())
        })
        .or_else(|| self.channels_refusal())
    }

    /// Why this combination's channels cannot run (docs/MODEL.md C29): more than one splits the
    /// flat ring (ring or ring-2r2w, or auto's ring candidate), without compression.
    fn channels_refusal(&self) -> Option<String> {
        let c = self.channels;
        let rings = matches!(self.algo, AlgoChoice::Algo(Algo::Ring | Algo::Ring2r2w) | AlgoChoice::Auto);
        if c > 1 && !rings {
            return Some(format!(
                "`channels` {c} splits the flat ring into ring cycles: `algo` ring or ring-2r2w, not {}",
                algo_name(&self.algo)
            ));
        }
        (c > 1 && self.compress != Compress::None)
            .then(|| format!("`channels` {c}: `compress` gce runs the ring of one channel"))
    }
}

/// A combination of the lists that cannot run, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Skipped {
    /// The combination.
    pub config: ReproConfig,
    /// Why it cannot run.
    pub reason: String,
}

/// The runnable configurations of [`ReproParams::plan`], each checked once, grouped by their
/// inputs: what [`ReproPlan::run`] runs.
#[derive(Clone, Debug)]
pub struct ReproPlan {
    params: ReproParams,
    configs: Vec<Planned>,
    skipped: Vec<Skipped>,
    groups: Vec<Group>,
    given: Option<GivenShape>,
}

/// A runnable configuration, prepared.
#[derive(Clone, Debug)]
struct Planned {
    config: ReproConfig,
    prepared: Prepared,
}

/// The configurations that share their inputs: one rank count and dtype.
#[derive(Clone, Debug)]
struct Group {
    ranks: u64,
    dtype: SdmaDtype,
    /// Indices into the plan's configurations, ascending.
    members: Vec<usize>,
    /// Every size of the members, ascending, distinct.
    sizes: Vec<u64>,
}

impl Group {
    fn max_elems(&self) -> u64 {
        self.sizes.last().copied().unwrap_or(0)
    }
}

/// Whether a heatmap of `configs` configurations can be drawn (at most [`MAX_PLOTTED`]): a front
/// asks before anything runs.
pub fn check_plot(configs: usize) -> Result<(), ApiError> {
    if configs > MAX_PLOTTED {
        return Err(input(format!("`plot`: {configs} configurations; the heatmap draws at most {MAX_PLOTTED}")));
    }
    Ok(())
}

fn input(m: impl Into<String>) -> ApiError {
    ApiError::Input(m.into())
}

/// The element counts a `--elems` value names: a number, or `MIN:MAX`, doubling from MIN to at
/// most MAX.
pub fn elems_values(text: &str) -> Result<Vec<u64>, ApiError> {
    let number = |s: &str| crate::values::parse_u64(s.trim()).map_err(|e| input(format!("`elems` '{text}': {e}")));
    let Some((lo, hi)) = text.split_once(':') else { return Ok(vec![number(text)?]) };
    let (lo, hi) = (number(lo)?, number(hi)?);
    if lo == 0 || lo > hi {
        return Err(input(format!("`elems` '{text}': an empty sweep (MIN must be positive and at most MAX)")));
    }
    let mut counts = vec![lo];
    while let Some(next) = counts.last().and_then(|c| c.checked_mul(2)).filter(|&n| n <= hi) {
        counts.push(next);
    }
    Ok(counts)
}

impl ReproParams {
    /// A space of `ranks` × `algos` × `elems` × `dtypes` with every other list at `cce
    /// allreduce`'s default: the default accumulate dtype, RNE (seed 1 if `sr` is added), arch
    /// 3, no compression, the model's ranks per node, `add`, inputs from seed 1.
    pub fn new(ranks: Vec<u64>, algos: Vec<AlgoChoice>, elems: Vec<u64>, dtypes: Vec<SdmaDtype>) -> Self {
        ReproParams {
            ranks,
            algos,
            elems,
            dtypes,
            accums: vec![None],
            roundings: vec![RoundingMode::Rne],
            seeds: vec![1],
            archs: vec![3],
            compress: vec![Compress::None],
            ranks_per_node: vec![None],
            channels: vec![1],
            op: RedOp::Add,
            input_seed: 1,
            all_pairs: false,
            budget: None,
        }
    }

    /// Every list's length, by axis (the seed's counts only with `sr`).
    fn lengths(&self) -> [(Axis, usize); 11] {
        [
            (Axis::Ranks, self.ranks.len()),
            (Axis::Dtype, self.dtypes.len()),
            (Axis::Algo, self.algos.len()),
            (Axis::Elems, self.elems.len()),
            (Axis::Accum, self.accums.len()),
            (Axis::Rounding, self.roundings.len()),
            (Axis::Seed, self.seeds.len()),
            (Axis::Arch, self.archs.len()),
            (Axis::Compress, self.compress.len()),
            (Axis::RanksPerNode, self.ranks_per_node.len()),
            (Axis::Channels, self.channels.len()),
        ]
    }

    /// The axes with more than one value.
    pub fn swept(&self) -> Vec<Axis> {
        let sr = self.roundings.contains(&RoundingMode::Sr);
        self.lengths().into_iter().filter(|&(a, n)| n > 1 && (a != Axis::Seed || sr)).map(|(a, _)| a).collect()
    }

    /// The lists on their own: none empty, seeds of 32 bits and used, channels in range, the
    /// space within [`MAX_CONFIGS`].
    fn check_lists(&self) -> Result<(), ApiError> {
        for (axis, n) in self.lengths() {
            if n == 0 {
                return Err(input(format!("`{}`: the list is empty", axis.name())));
            }
        }
        if let Some(s) = self.seeds.iter().find(|&&s| s > u64::from(u32::MAX)) {
            return Err(input(format!("`seed` {s}: stochastic rounding's seed is 32 bits (at most 4294967295)")));
        }
        if let Some(c) = self.channels.iter().find(|&&c| !(1..=MAX_CHANNELS as u64).contains(&c)) {
            return Err(input(format!("`channels` {c}: between 1 and {MAX_CHANNELS}")));
        }
        let sr = self.roundings.contains(&RoundingMode::Sr);
        if self.seeds.len() > 1 && !sr {
            return Err(input("`seed` lists several seeds, but no `rounding` is sr: the seeds would not be used"));
        }
        let seeded = |r: &RoundingMode| if *r == RoundingMode::Sr { self.seeds.len() } else { 1 };
        let roundings: usize = self.roundings.iter().map(seeded).sum();
        let count = self
            .lengths()
            .into_iter()
            .filter(|(a, _)| !matches!(a, Axis::Rounding | Axis::Seed))
            .try_fold(roundings, |acc, (_, n)| acc.checked_mul(n))
            .filter(|&c| c <= MAX_CONFIGS);
        if count.is_none() {
            return Err(input(format!(
                "the lists make more than {MAX_CONFIGS} configurations, the most one repro runs: shorten a list"
            )));
        }
        Ok(())
    }

    /// Every configuration of the space, numbered in [`Axis::ALL`] order (the last axis varies
    /// fastest; with `sr`, one per seed).
    pub fn configurations(&self) -> Result<Vec<ReproConfig>, ApiError> {
        self.check_lists()?;
        let base = ReproConfig {
            ranks: 0,
            algo: AlgoChoice::Auto,
            elems: 0,
            dtype: SdmaDtype::Bf16,
            accum: None,
            rounding: RoundingMode::Rne,
            seed: None,
            arch: 3,
            compress: Compress::None,
            ranks_per_node: None,
            channels: 1,
        };
        let mut all = vec![base];
        all = expand(all, &self.ranks, |c, &v| c.ranks = v);
        all = expand(all, &self.dtypes, |c, &v| c.dtype = v);
        all = expand(all, &self.algos, |c, v| c.algo = v.clone());
        all = expand(all, &self.elems, |c, &v| c.elems = v);
        all = expand(all, &self.accums, |c, &v| c.accum = v);
        let seeds: Vec<Option<u64>> = self.seeds.iter().map(|&s| Some(s)).collect();
        let roundings: Vec<(RoundingMode, Option<u64>)> = self
            .roundings
            .iter()
            .flat_map(|&r| match r {
                RoundingMode::Rne => vec![(r, None)],
                RoundingMode::Sr => seeds.iter().map(|&s| (r, s)).collect(),
            })
            .collect();
        all = expand(all, &roundings, |c, &(r, s)| (c.rounding, c.seed) = (r, s));
        all = expand(all, &self.archs, |c, &v| c.arch = v);
        all = expand(all, &self.compress, |c, &v| c.compress = v);
        all = expand(all, &self.ranks_per_node, |c, &v| c.ranks_per_node = v);
        all = expand(all, &self.channels, |c, &v| c.channels = v);
        Ok(all)
    }

    /// The all-reduce parameters of one configuration.
    fn allreduce_params(&self, c: &ReproConfig) -> AllreduceParams {
        AllreduceParams {
            accum: c.accum,
            seed: c.seed.unwrap_or(self.input_seed),
            arch: c.arch,
            rounding: c.rounding,
            compress: c.compress,
            ranks_per_node: c.ranks_per_node,
            channels: Some(c.channels),
            budget: self.budget,
            check: Check::None,
            ..AllreduceParams::new(c.ranks, c.algo.clone(), self.op, c.dtype)
        }
    }

    /// Checks the whole space before anything runs: the lists, every configuration (its
    /// parameters, its memory budget with what repro holds beside it), and, for `given`
    /// inputs, that they hold every rank count and size. Combinations that cannot run by their
    /// nature are skipped with the reason; a space with nothing to run is refused.
    pub fn plan(&self, given: Option<GivenShape>) -> Result<ReproPlan, ApiError> {
        let space = self.configurations()?;
        if let Some(g) = given {
            check_given(self, g)?;
        }
        if let Some(u) = self.algos.iter().find_map(|a| match a {
            AlgoChoice::File(u) if u.collective() != crate::params::Collective::AllReduce => Some(u),
            _ => None,
        }) {
            return Err(input(format!(
                "`algo-file` {}: a {} schedule; repro compares all-reduces",
                u.file,
                u.schedule.program.coll.name()
            )));
        }
        let (mut configs, mut skipped) = (Vec::new(), Vec::new());
        for c in space {
            if let Some(reason) = c.inapplicable() {
                skipped.push(Skipped { config: c, reason });
                continue;
            }
            let prepared = self
                .allreduce_params(&c)
                .prepare(c.elems)
                .map_err(|e| input(format!("configuration ({}): {e}", c.describe())))?;
            configs.push(Planned { config: c, prepared });
        }
        if configs.is_empty() {
            let why = skipped.first().map_or_else(String::new, |s| format!(" ({})", s.reason));
            return Err(input(format!("no configuration of the lists can run{why}")));
        }
        let groups = groups(&configs);
        check_memory(&configs, &groups)?;
        Ok(ReproPlan { params: self.clone(), configs, skipped, groups, given })
    }
}

/// Each configuration of `all` once per value of `values`, set by `set` (the new axis varies
/// fastest).
fn expand<T>(all: Vec<ReproConfig>, values: &[T], set: impl Fn(&mut ReproConfig, &T)) -> Vec<ReproConfig> {
    let mut out = Vec::with_capacity(all.len() * values.len());
    for c in all {
        for v in values {
            let mut c = c.clone();
            set(&mut c, v);
            out.push(c);
        }
    }
    out
}

/// Given inputs must hold every rank count and size of the lists.
fn check_given(p: &ReproParams, g: GivenShape) -> Result<(), ApiError> {
    if let Some(r) = p.ranks.iter().find(|&&r| r > g.ranks as u64) {
        return Err(input(format!("`ranks` {r}: the inputs hold {} ranks", g.ranks)));
    }
    if let Some(e) = p.elems.iter().find(|&&e| e > g.elems) {
        return Err(input(format!("`elems` {e}: the inputs hold {} elements per rank", g.elems)));
    }
    if p.dtypes.len() > 1 {
        return Err(input("`dtype`: given inputs are of one dtype: list one"));
    }
    Ok(())
}

/// The input groups of `configs`, in the order their first members come.
fn groups(configs: &[Planned]) -> Vec<Group> {
    let mut groups: Vec<Group> = Vec::new();
    for (i, p) in configs.iter().enumerate() {
        let c = &p.config;
        match groups.iter_mut().find(|g| g.ranks == c.ranks && g.dtype == c.dtype) {
            Some(g) => g.members.push(i),
            None => groups.push(Group { ranks: c.ranks, dtype: c.dtype, members: vec![i], sizes: Vec::new() }),
        }
    }
    for g in &mut groups {
        let mut sizes: Vec<u64> = g.members.iter().map(|&i| configs[i].config.elems).collect();
        sizes.sort_unstable();
        sizes.dedup();
        g.sizes = sizes;
    }
    groups
}

/// Each run's model memory, with the reference output and the inputs at the group's largest
/// size held beside it, within the budget.
fn check_memory(configs: &[Planned], groups: &[Group]) -> Result<(), ApiError> {
    for g in groups {
        let size = u64::from(g.dtype.bytes().max(1));
        let reference = configs[g.members[0]].config.elems.saturating_mul(g.ranks).saturating_mul(size);
        for &i in &g.members {
            let p = &configs[i].prepared;
            let growth = (g.max_elems() - configs[i].config.elems).saturating_mul(g.ranks).saturating_mul(size);
            let need = p.memory_need().total().saturating_add(reference).saturating_add(growth);
            let budget = p.config().budget;
            if need > budget {
                return Err(input(format!(
                    "configuration ({}): {need} bytes with the reference output and inputs repro holds beside the run, over the budget of {budget}",
                    configs[i].config.describe()
                )));
            }
        }
    }
    Ok(())
}

impl ReproPlan {
    /// The configurations that run.
    pub fn configs(&self) -> impl Iterator<Item = &ReproConfig> {
        self.configs.iter().map(|p| &p.config)
    }

    /// The combinations skipped, with the reason.
    pub fn skipped(&self) -> &[Skipped] {
        &self.skipped
    }

    /// Runs of the first pass (one per configuration), for a progress bar.
    pub fn runs(&self) -> usize {
        self.configs.len()
    }

    /// The elements per rank given inputs must hold for this plan (its largest size).
    pub fn elems_needed(&self) -> u64 {
        self.groups.iter().map(Group::max_elems).max().unwrap_or(0)
    }

    /// The ranks given inputs must hold for this plan (its largest rank count).
    pub fn ranks_needed(&self) -> usize {
        self.groups.iter().map(|g| g.ranks as usize).max().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elems_lists_and_sweeps() {
        assert_eq!(elems_values("4104").unwrap(), vec![4104]);
        assert_eq!(elems_values("1024:5000").unwrap(), vec![1024, 2048, 4096]);
        assert_eq!(elems_values("7:7").unwrap(), vec![7]);
        for bad in ["8:4", "0:4", "x", "4:", ""] {
            assert!(elems_values(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_space_runs_rne_once_and_sr_once_per_seed() {
        let p = ReproParams {
            roundings: vec![RoundingMode::Rne, RoundingMode::Sr],
            seeds: vec![5, 6],
            ..ReproParams::new(vec![4], vec![AlgoChoice::Auto], vec![64, 128], vec![SdmaDtype::Bf16])
        };
        let space = p.configurations().unwrap();
        let seen: Vec<(u64, Option<u64>)> = space.iter().map(|c| (c.elems, c.seed)).collect();
        assert_eq!(seen, [(64, None), (64, Some(5)), (64, Some(6)), (128, None), (128, Some(5)), (128, Some(6))]);
        assert_eq!(p.swept(), [Axis::Elems, Axis::Rounding, Axis::Seed]);
        // The rounding axis carries its seed: two configurations differing in rounding alone.
        assert_eq!(space[0].differing(&space[1]), [Axis::Rounding, Axis::Seed]);
        let too_many = ReproParams { elems: (1..=1025).collect(), ..p.clone() };
        assert!(too_many.configurations().is_err());
        let empty = ReproParams { archs: Vec::new(), ..p };
        assert!(empty.configurations().unwrap_err().to_string().contains("`arch`: the list is empty"));
    }

    /// The channels are an axis (the last, varying fastest); more than one runs on the flat
    /// ring (ring, ring-2r2w, auto) without compression, and is skipped elsewhere with the
    /// collectives' reason; a value out of 1..=32 refuses the lists.
    #[test]
    fn channels_are_an_axis_of_the_flat_ring() {
        let algos = [Algo::Ring, Algo::Ring2r2w, Algo::Mesh, Algo::Hier].map(AlgoChoice::Algo);
        let p = ReproParams {
            channels: vec![1, 3],
            compress: vec![Compress::None, Compress::Gce],
            ranks_per_node: vec![Some(4)],
            ..ReproParams::new(vec![8], [&algos[..], &[AlgoChoice::Auto]].concat(), vec![64], vec![SdmaDtype::Bf16])
        };
        assert_eq!(p.swept(), [Axis::Algo, Axis::Compress, Axis::Channels]);
        let space = p.configurations().unwrap();
        assert_eq!(space.len(), 5 * 2 * 2);
        assert_eq!(space[0].differing(&space[1]), [Axis::Channels]);
        let why = |algo: &str, compress: Compress, channels: u64| {
            let c =
                space.iter().find(|c| c.value(Axis::Algo) == algo && c.compress == compress && c.channels == channels);
            c.unwrap().inapplicable()
        };
        for algo in ["ring", "ring-2r2w", "auto"] {
            assert_eq!(why(algo, Compress::None, 3), None, "{algo}");
        }
        assert_eq!(why("mesh", Compress::None, 1), None);
        let off = why("mesh", Compress::None, 3).unwrap();
        assert!(off.contains("`channels` 3 splits the flat ring into ring cycles: `algo` ring or ring-2r2w, not mesh"));
        let hier = why("hier", Compress::None, 3).unwrap();
        assert!(hier.contains("`channels` 3 splits the flat ring") && hier.contains("not hier(ring/ring)"), "{hier}");
        let gce = why("ring", Compress::Gce, 3).unwrap();
        assert_eq!(gce, "`channels` 3: `compress` gce runs the ring of one channel");
        assert_eq!(why("ring", Compress::Gce, 1), None);
        for bad in [0, 33] {
            let e = ReproParams { channels: vec![1, bad], ..p.clone() }.configurations().unwrap_err();
            assert!(e.to_string().contains(&format!("`channels` {bad}: between 1 and 32")), "{e}");
        }
    }

    #[test]
    fn separations_in_words() {
        let s = |axis, a: &str, b: &str, alone| Separation { axis, a: a.into(), b: b.into(), alone };
        assert_eq!(separation_words(&[s(Axis::Elems, "4096", "4104", true)]), "elems: 4096 vs 4104");
        let two = [s(Axis::Algo, "ring", "mesh", true), s(Axis::Arch, "2", "3", true)];
        assert_eq!(separation_words(&two), "algo: ring vs mesh or arch: 2 vs 3");
        let together = [s(Axis::Algo, "ring", "mesh", false), s(Axis::Elems, "4096", "4104", false)];
        assert_eq!(separation_words(&together), "algo: ring vs mesh and elems: 4096 vs 4104");
    }
}
