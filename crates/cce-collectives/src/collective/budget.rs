//! What a configuration needs before anything runs: the shape rules, the memory (inputs,
//! buffers, rings, outputs) against the budget, and the failure injection's bounds.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::buffers::P_OFF;
use super::config::{
    Algo, Collective, CollectiveError, Compress, Config, Inter, MAX_CHANNELS, MAX_RANKS, MIN_RANKS, RedOp,
};
use super::lifetimes::{Lifetimes, add_backpressure, lifetimes};
use super::lowered::{Lowered, layout};
use super::program::{plan_work, ring_size};
use super::schedule::Step;
use super::size::{ScheduleSize, schedule_size};
use super::user::Geometry;

/// A configuration [`check`] accepted, ready for [`run`](super::run): the configuration, the
/// memory it was checked for and its schedule lowered (with back pressure). Only [`check`]
/// (and [`check_chosen`]) make one, so a run never checks again: holding a `Checked` is the
/// proof its configuration passed.
#[derive(Clone, Debug)]
pub struct Checked {
    cfg: Config,
    need: MemoryNeed,
    lowered: Arc<Lowered>,
    life: Arc<Lifetimes>,
    model: Option<Arc<ModelTime>>,
}

/// The model's result a run reports: bytes per link and seconds (docs/MODEL.md C6).
#[derive(Clone, Debug, PartialEq)]
pub(super) struct ModelTime {
    pub(super) links: BTreeMap<(usize, usize), u64>,
    pub(super) seconds: f64,
}

impl Checked {
    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// What it needs of the memory budget ([`memory_need`]).
    pub fn need(&self) -> &MemoryNeed {
        &self.need
    }

    /// The schedule lowered for one memory, with back pressure.
    pub(super) fn lowered(&self) -> &Arc<Lowered> {
        &self.lowered
    }

    /// The scratch buffers' lifetimes in one memory.
    pub(super) fn lifetimes(&self) -> &Arc<Lifetimes> {
        &self.life
    }

    /// The model's time: the check's own, or what the [`Candidate`](super::Candidate) of this
    /// very configuration brought.
    pub(super) fn model(&self) -> Option<&Arc<ModelTime>> {
        self.model.as_ref()
    }
}

/// A run's steps with their back pressure, the scratch bytes that can be mapped at once, the
/// scratch lifetimes, and (when asked for) the model's time of the steps without back pressure.
pub(super) struct Scheduled {
    pub(super) lowered: Lowered,
    pub(super) scratch: u64,
    pub(super) life: Lifetimes,
    pub(super) model: Option<ModelTime>,
}

/// What [`run`](super::run) executes in one memory: the steps with back pressure added; with
/// `model`, the time model of the algorithm's own steps (before back pressure), made while
/// only the schedule exists (so its working memory is spent before the buffers are).
pub(super) fn scheduled(cfg: &Config, model: bool) -> Result<Scheduled, CollectiveError> {
    let mut lowered = Lowered::new(cfg);
    let model = match model {
        true => {
            let t = super::time_model(cfg, &lowered.l, &lowered.steps, false, None)?;
            Some(ModelTime { links: t.links, seconds: t.seconds })
        }
        false => None,
    };
    let life = lifetimes(&lowered, &lowered.steps);
    let scratch = if add_backpressure(&mut lowered.steps, &life) {
        life.two_steps.saturating_mul(cfg.ranks as u64)
    } else {
        life.allocs.iter().flatten().flatten().map(|(_, b)| b).sum()
    };
    Ok(Scheduled { lowered, scratch, life, model })
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
    /// The inputs: R × elems × size. [`run`](super::run) maps owned ones as the ranks'
    /// `IN` buffers as they are (no copy) and hands them back.
    pub inputs: u64,
    /// The model memory's other buffers: every rank's `W(r, c)` (an empty chunk still takes a
    /// 1-byte region), plus the scratch buffers (`P(r, c)`, `RECV(r, c)`) that can be mapped at
    /// once — two steps' worth per rank, the scratch buffers living only from their writer to
    /// their readers (docs/MODEL.md C12; all of them when back pressure cannot be added).
    pub buffers: u64,
    /// Each rank's descriptor programs (tx + rx, 16 bytes per descriptor) and its two ring
    /// regions in the model memory. `None` when the sizes do not fit the model's buffer slots,
    /// so no schedule can be planned.
    pub rings: Option<u64>,
    /// What the outputs add: they take the place of the `W` buffers chunk by chunk as they are
    /// assembled, so one rank's buffer (elems × size) at most.
    pub outputs: u64,
    /// The host memory the schedule takes while a run holds it: its steps and work items, from
    /// their counts ([`ScheduleSize::bytes`], docs/MODEL.md C26) — what a flat ring of
    /// thousands of ranks spends on its many small steps.
    pub schedule: u64,
}

impl MemoryNeed {
    /// Everything, saturating (the ring part as 0 when it could not be counted).
    pub fn total(&self) -> u64 {
        self.inputs
            .saturating_add(self.buffers)
            .saturating_add(self.rings.unwrap_or(0))
            .saturating_add(self.outputs)
            .saturating_add(self.schedule)
    }
}

/// The ranks, algorithm, dtype and size rules, without scheduling anything.
fn check_shape(cfg: &Config) -> Result<(), CollectiveError> {
    let bad = |m: String| Err(CollectiveError::Config(m));
    if !(MIN_RANKS..=MAX_RANKS).contains(&cfg.ranks) {
        return bad(format!("{} ranks: between {MIN_RANKS} and {MAX_RANKS}", cfg.ranks));
    }
    if let Some(why) = cfg.algo.refusal(cfg.ranks, cfg.arch) {
        return bad(why);
    }
    if cfg.algo == Algo::File || cfg.user.is_some() {
        check_user(cfg)?;
    }
    if cfg.algo == Algo::Hier {
        check_hier(cfg)?;
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
    if cfg.compress == Compress::Gce {
        check_gce(cfg)?;
    }
    check_channels(cfg)
}

/// What the flat ring's channels run (docs/MODEL.md C29): 1 to [`MAX_CHANNELS`], more than one
/// only for the rings, without GCE.
fn check_channels(cfg: &Config) -> Result<(), CollectiveError> {
    let bad = |m: String| Err(CollectiveError::Config(m));
    let c = cfg.channels;
    if !(1..=MAX_CHANNELS).contains(&c) {
        return bad(format!("`channels` {c}: between 1 and {MAX_CHANNELS}"));
    }
    if c > 1 && !matches!(cfg.algo, Algo::Ring | Algo::Ring2r2w) {
        return bad(format!(
            "`channels` {c} splits the flat ring into ring cycles: `algo` ring or ring-2r2w, not {}",
            cfg.algo.label(cfg.hier)
        ));
    }
    if c > 1 && cfg.compress != Compress::None {
        return bad(format!("`channels` {c}: `compress` gce runs the ring of one channel"));
    }
    Ok(())
}

/// What a user's schedule runs (docs/MODEL.md X3, X9): its ranks and collective, add, min or
/// max, no compression, an element count its chunks divide.
fn check_user(cfg: &Config) -> Result<(), CollectiveError> {
    let bad = |m: String| Err(CollectiveError::Config(m));
    let (Algo::File, Some(u)) = (cfg.algo, &cfg.user) else {
        return bad("a user's schedule runs with algo file and its file (Config::from_user)".into());
    };
    if cfg.ranks != u.ranks() {
        return bad(format!("{}: the schedule is for {} ranks (ngpus), not {}", u.file, u.ranks(), cfg.ranks));
    }
    if cfg.collective != u.collective() {
        return bad(format!(
            "{}: the schedule's coll is {}, not the {} asked for",
            u.file,
            u.schedule.program.coll.name(),
            cfg.collective.name()
        ));
    }
    if cfg.op == RedOp::Avg {
        return bad(format!(
            "{}: avg is not an MSCCL reduction (the executor runs no pre- or post-op): use add, min or max",
            u.file
        ));
    }
    if cfg.compress != Compress::None {
        return bad(format!("{}: `compress` runs with cce's ring, not a user's schedule", u.file));
    }
    u.schedule
        .check_size(cfg.elems, cfg.dtype.bytes() as u64)
        .map_err(|e| CollectiveError::Config(format!("{}: {e}", u.file)))
}

/// What a hierarchy runs (docs/MODEL.md H1–H3): whole nodes of at least 2 ranks, at least
/// 2 of them, an intra-node algorithm that can run a node's ranks, an inter-node one that can
/// run the nodes in this collective, and at least one element per rank.
fn check_hier(cfg: &Config) -> Result<(), CollectiveError> {
    let bad = |m: String| Err(CollectiveError::Config(m));
    let (r, y) = (cfg.ranks, cfg.model.ranks_per_node);
    if y < 2 {
        return bad(format!("hier runs nodes of at least 2 ranks, not `ranks-per-node` {y}"));
    }
    if r % y != 0 {
        return bad(format!(
            "hier runs whole nodes: {r} ranks are not a multiple of `ranks-per-node` {y} (R = nodes x ranks-per-node)"
        ));
    }
    let x = r / y;
    if x < 2 {
        return bad(format!(
            "hier spans nodes, and {r} ranks of {y} per node are one node: give `nodes` of at least 2"
        ));
    }
    let intra = cfg.hier.intra;
    if !Algo::ALL.contains(&intra) {
        let names = cce_format::op::alternatives(Algo::ALL.map(Algo::name));
        return bad(format!("`intra` {}: expected {names}", intra.name()));
    }
    if let Some(why) = intra.refusal(y, cfg.arch) {
        return bad(format!("`intra` {} inside a node of {y} ranks: {why}", intra.name()));
    }
    if let Some(why) = cfg.hier.inter.refusal(x, cfg.collective) {
        return bad(format!("`inter` {} between {x} nodes: {why}", cfg.hier.inter.name()));
    }
    if cfg.elems < r as u64 {
        return bad(format!(
            "hier cuts every rank's elements into R = {r} chunks: at least {r} elements per rank, not {}",
            cfg.elems
        ));
    }
    Ok(())
}

/// What `--compress gce` runs (docs/MODEL.md G6): the ring all-reduce of float buffers over
/// at least two nodes, on an arch with the EXT combo packet.
fn check_gce(cfg: &Config) -> Result<(), CollectiveError> {
    let bad = |m: String| Err(CollectiveError::Config(m));
    if cfg.algo == Algo::Hier && cfg.hier.inter != Inter::Ring {
        return bad(format!(
            "`compress` gce compresses a hierarchy's inter-node ring: give `inter` ring, not {}",
            cfg.hier.inter.name()
        ));
    }
    if !matches!(cfg.algo, Algo::Ring | Algo::Hier) {
        return bad(format!("`compress` gce runs the ring all-reduce (`algo` ring), not {}", cfg.algo.name()));
    }
    if cfg.collective != Collective::AllReduce {
        return bad("`compress` gce runs the whole all-reduce, not a reduce-scatter or all-gather alone".into());
    }
    if !cce_format::gce::is_source_dtype(cfg.dtype) {
        let dtypes = cce_format::gce_source_dtypes!();
        return bad(format!("`compress` gce compresses {dtypes} buffers, not {}", cfg.dtype.name()));
    }
    if !cce_format::limits::replication_allowed(cfg.arch) {
        return bad(format!("`compress` gce needs the EXT combo packet: arch 3 or 4, not {}", cfg.arch));
    }
    if cfg.nodes() < 2 {
        return bad(format!(
            "`compress` gce compresses the hops between nodes, and {} ranks of {} per node are one node: give `ranks-per-node` below {}",
            cfg.ranks, cfg.model.ranks_per_node, cfg.ranks
        ));
    }
    Ok(())
}

/// The checks a model (without a run) needs: the shape rules and the address slots, not the
/// memory budget.
pub(super) fn check_model(cfg: &Config) -> Result<(), CollectiveError> {
    check_shape(cfg)?;
    if !fits_slots(cfg) {
        return Err(CollectiveError::Config(format!(
            "{} elements of {} per rank do not fit the model's buffer slots",
            cfg.elems,
            cfg.dtype.name()
        )));
    }
    Ok(())
}

/// Whether one rank's buffers fit the model's address slots (and so every address of the
/// schedule is representable).
pub(super) fn fits_slots(cfg: &Config) -> bool {
    let bytes = cfg.elems.saturating_mul(cfg.dtype.bytes() as u64);
    match &cfg.user {
        Some(u) if cfg.algo == Algo::File => Geometry::new(cfg, &u.schedule).fits(bytes),
        // A scratch slot holds a chunk (a hierarchy's: a node's block) and its GCE headers.
        _ => {
            let per_slot = if cfg.algo == Algo::Hier { cfg.model.ranks_per_node.max(1) } else { cfg.ranks };
            bytes / per_slot as u64 + 64 <= layout(cfg).stride() && bytes <= P_OFF
        }
    }
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
        let regions = 2 * cce_format::ring::ring_bytes(ring_size(per_ring) as u64);
        total = total.saturating_add(cce_format::ring::ring_bytes(1).saturating_mul(tx + rx)).saturating_add(regions);
    }
    Ok(total)
}

/// The inputs, buffers and outputs of `cfg` (closed form, saturating; no rings).
fn data_need(cfg: &Config) -> MemoryNeed {
    let r = cfg.ranks as u64;
    let bytes = cfg.elems.saturating_mul(cfg.dtype.bytes() as u64);
    let all = bytes.saturating_mul(r);
    if let (Algo::File, Some(u)) = (cfg.algo, &cfg.user) {
        // O and S chunk by chunk, and the input's copy when the run works on one (X12).
        let g = Geometry::new(cfg, &u.schedule);
        return MemoryNeed { inputs: all, buffers: g.buffer_bytes(), rings: None, outputs: bytes, schedule: 0 };
    }
    // Chunks of one element or none when elems < R: each empty chunk still maps one byte.
    let empty = r.saturating_sub(cfg.elems);
    // W only: the scratch buffers are counted with the schedule (memory_need).
    let buffers = bytes.saturating_add(empty).saturating_mul(r);
    let schedule = schedule_size(cfg).map_or(0, |n| n.bytes(cfg.ranks));
    MemoryNeed { inputs: all, buffers, rings: None, outputs: bytes, schedule }
}

/// What a run of `cfg` needs at least, from closed forms alone (the shape rules checked, the
/// inputs, outputs and buffers, the schedule's size, not the rings): nothing is made, so a
/// caller can size many configurations before it checks and runs each one.
pub fn estimate(cfg: &Config) -> Result<MemoryNeed, CollectiveError> {
    check_shape(cfg)?;
    Ok(data_need(cfg))
}

/// The memory a run of `cfg` needs: the inputs handed to [`run`](super::run), the model memory's buffers and
/// rings, and the outputs. Nothing is allocated; the ring part plans every step's packets (which
/// fails as [`run`](super::run) would) and is left out when the sizes do not fit the model's slots.
pub fn memory_need(cfg: &Config) -> Result<MemoryNeed, CollectiveError> {
    check_shape(cfg)?;
    need_scheduled(cfg, false).map(|(need, _)| need)
}

/// [`memory_need`] of a configuration that passed the shape rules, with the schedule it
/// counted (`None` when the sizes do not fit the model's slots).
fn need_scheduled(cfg: &Config, model: bool) -> Result<(MemoryNeed, Option<Scheduled>), CollectiveError> {
    let mut need = data_need(cfg);
    if !fits_slots(cfg) {
        return Ok((need, None));
    }
    let s = scheduled(cfg, model)?;
    need.buffers = need.buffers.saturating_add(s.scratch);
    // The schedule as made (a user's is counted only now).
    need.schedule = ScheduleSize::of(&s.lowered.steps).bytes(cfg.ranks);
    need.rings = Some(ring_need(cfg, &s.lowered.steps)?);
    Ok((need, Some(s)))
}

/// Refuses a configuration [`run`](super::run) cannot execute — ranks, algorithm limits, dtypes, sizes, the
/// failure injection's rank and step, every step's packets, and the memory budget
/// ([`memory_need`] against [`Config::budget`]) — before anything is allocated; accepted, the
/// [`Checked`] run: the configuration with its need and its lowered schedule, which
/// [`run`](super::run) executes without checking again. Callers that prepare inputs
/// themselves check before generating or reading them.
pub fn check(cfg: &Config) -> Result<Checked, CollectiveError> {
    check_with(cfg, None)
}

/// The largest schedule (in host bytes, [`ScheduleSize::bytes`]) a check makes to count its
/// rings when the configuration is over its budget already: a larger one is refused from its
/// size alone, before it is made.
const MADE_BEFORE_REFUSED: u64 = 64 << 20;

/// [`check`], with the model's time already known (`model`) or made by the check.
fn check_with(cfg: &Config, model: Option<Arc<ModelTime>>) -> Result<Checked, CollectiveError> {
    super::count_check();
    check_shape(cfg)?;
    let budget_error = |need: &MemoryNeed| CollectiveError::Budget {
        ranks: cfg.ranks,
        elems: cfg.elems,
        dtype: cfg.dtype.name(),
        need: Bytes { bytes: need.total(), at_least: need.rings.is_none() },
        budget: Bytes { bytes: cfg.budget, at_least: false },
    };
    // A schedule too large to make just to learn its rings: refused from its size and the
    // data alone (the need then reads "at least").
    let early = data_need(cfg);
    if early.total() > cfg.budget && early.schedule >= MADE_BEFORE_REFUSED {
        return Err(budget_error(&early));
    }
    let (need, scheduled) = match need_scheduled(cfg, model.is_none()) {
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
    let Some(scheduled) = scheduled else {
        let bytes = cfg.elems.saturating_mul(cfg.dtype.bytes() as u64);
        return Err(CollectiveError::Config(format!("{bytes} bytes per rank exceed the model's buffer slots")));
    };
    if let Some((k, s)) = cfg.fail {
        // Back pressure adds waits, not steps.
        let nsteps = scheduled.lowered.nsteps();
        if k >= cfg.ranks || s >= nsteps {
            return Err(CollectiveError::Config(format!(
                "`fail-rank` {k} `fail-step` {s}: ranks 0..{}, steps 0..{nsteps}",
                cfg.ranks
            )));
        }
    }
    let model = model.or(scheduled.model.map(Arc::new));
    Ok(Checked { cfg: cfg.clone(), need, lowered: Arc::new(scheduled.lowered), life: Arc::new(scheduled.life), model })
}

/// [`check`] of `cfg`, keeping the model's time of the candidate among `candidates` that was
/// modelled for exactly this configuration (what [`choose`](super::choose) returned), so the
/// run does not model it again.
pub fn check_chosen(cfg: &Config, candidates: &[super::Candidate]) -> Result<Checked, CollectiveError> {
    let model = candidates
        .iter()
        .find_map(|c| c.model_of(cfg))
        .map(|t| Arc::new(ModelTime { links: t.links.clone(), seconds: t.seconds }));
    check_with(cfg, model)
}
