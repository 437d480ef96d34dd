//! One element's story: how element `I` of one rank's output was made — its chunk, every step
//! that touched it (rank, step, packet, descriptors), the operands in the order they were
//! accumulated, each partial before and after rounding, how it rounded (RNE; SR with its random
//! bits and the probability of rounding up; a GCE hop's quantisation), the error against the
//! exact reduction of the leaves so far, and the reduction as an order
//! ([`cce_numerics::order::Order`], the JSON key `expr`).
//!
//! ## How (no run)
//! The story follows the schedule for that element alone. A built-in algorithm's works that
//! carry the element's chunk are made on their own, without the rest of the schedule
//! ([`slice`]): the ranks and steps where the chunk is, in closed form per algorithm, put in
//! step order, then rank order (every step waits only for earlier steps, so the run allows this
//! order; a user schedule's steps are all made and put in an order a sweep over the ranks finds
//! them ready). The value at an address is made by the last work before that point that wrote
//! it, traced back through its sources to the ranks' input elements, which are the only data
//! read. Each reduce is planned by `cce-host` into its packets exactly as the run plans it, the
//! element's packet resolved by the executor's own rule ([`cce_engine::packet_spec`]: dtypes,
//! FMA scales, the seed) and computed by [`cce_numerics::trace::trace_element`] with the
//! element's stochastic-rounding index (its destination address over the output size, on the
//! rank's queue [`RANK_QUEUE`]); where that packet sits on its rank's queue is counted from
//! the schedule's runs of alike steps, not by planning the rank's earlier steps. A GCE hop
//! needs its whole block (the scale is its largest value): only that block's elements are
//! traced. Each step's order is an [`Expr`] that shares its parts with its operands' orders.
//! Memory and time grow with the steps that touch the element (about 2R for a ring, R for RDH)
//! and the text of their orders, not with the schedule or the element count: a 4096-rank RDH
//! story takes milliseconds and megabytes, and 2^30 elements cost what 2^10 do.

//! ## Guarantees
//! - The story's output bits are the full run's, for every algorithm, hierarchy, collective,
//!   op, dtype, accumulate dtype, rounding and user schedule (`tests::holds` against the run,
//!   `tests::every_hierarchy_gives_the_runs_bits` among them), and every step's bits are what
//!   the engine writes at that step's destination.
//! - A built-in schedule's story from the element's works alone is the story the whole
//!   schedule tells — the same steps in the same order, packets, descriptors, operands, bits
//!   and orders (`tests::stories_from_the_slice_are_the_whole_schedules`: every algorithm,
//!   hierarchy, collective and GCE ring, uneven chunks and chunks of no element); the slice is
//!   the whole schedule's works that carry the element ([`slice`]'s guarantees).
//! - Nothing panics on any configuration the shape check accepts; an element or rank out of
//!   range is a [`StoryError::Range`] naming both.

use std::collections::HashMap;

use cce_format::SdmaDtype;
use cce_host::Program;
use cce_numerics::NumType;
use cce_numerics::order::Order;
use cce_numerics::trace::{ElementTrace, HowRounded, Traced, TracedStep, trace_element};

use super::budget::check_model;
use super::buffers::Layout;
use super::config::{Algo, Collective, CollectiveError, Config, RedOp};
use super::lowered::{Lowered, Shape};
use super::program::plan_work;
use super::rank::RANK_QUEUE;
use super::schedule::{Plan, Work};
use super::slice::{self, Counter};
use crate::metrics::InputSource;

/// Why a story cannot be told.
#[derive(Debug, thiserror::Error)]
pub enum StoryError {
    /// The configuration (the shape rules, or a step the host cannot plan).
    #[error(transparent)]
    Collective(#[from] CollectiveError),
    /// An element or rank outside the run.
    #[error("{0}")]
    Range(String),
    /// A rank's input element could not be read.
    #[error("rank {rank}'s input element {element}: {message}")]
    Input {
        /// The rank.
        rank: usize,
        /// The element.
        element: u64,
        /// Why.
        message: String,
    },
    /// A packet the executor would refuse, or a schedule whose data cannot be followed.
    #[error("{0}")]
    Schedule(String),
}

/// What a step did to the element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepKind {
    /// A CCE reduce packet (ADD, FMA for avg, MIN, MAX): its sources combined and rounded.
    Reduce,
    /// A copy (or a one-source ADD that forwards): the bits as they are.
    Copy,
    /// A copy before the run (an all-gather's own share into its output).
    Preload,
    /// A reduce rounded to the buffer dtype and GCE-compressed (its fp8 code).
    Compress,
    /// A GCE payload expanded to the buffer dtype.
    Expand,
}

impl StepKind {
    /// `reduce`, `copy`, `preload`, `compress` or `expand`.
    pub fn name(self) -> &'static str {
        match self {
            StepKind::Reduce => "reduce",
            StepKind::Copy => "copy",
            StepKind::Preload => "preload",
            StepKind::Compress => "compress",
            StepKind::Expand => "expand",
        }
    }
}

/// The packet that moved the element: where it sits on its rank's queue.
#[derive(Clone, Debug, PartialEq)]
pub struct PacketRef {
    /// The queue (every rank's program runs on one queue, `RANK_QUEUE` = 0).
    pub queue: u32,
    /// Its index among the packets of the rank's queue, from 0.
    pub packet: u64,
    /// Its first tx (M2S) descriptor, counted from the queue's first.
    pub tx_descriptor: u64,
    /// Its first rx (S2M) descriptor, counted from the queue's first.
    pub rx_descriptor: u64,
    /// Elements (bytes, for a copy) it moves.
    pub elems: u64,
    /// The element's position in it.
    pub element: u64,
    /// Its source addresses.
    pub sources: Vec<u64>,
    /// Its destination addresses.
    pub dests: Vec<u64>,
    /// Its op as the ring dump names it (`copy`, `add`, `fma`, …).
    pub op: String,
}

/// One operand of a step, in accumulation order.
#[derive(Clone, Debug, PartialEq)]
pub struct StoryOperand {
    /// The rank whose buffer it was read from.
    pub rank: usize,
    /// Its address.
    pub address: u64,
    /// How it was made (an order, [`Expr`]; a rank number: that rank's input).
    pub expr: Expr,
    /// It in the buffer dtype (a GCE payload: the fp8 code).
    pub value: Traced,
    /// It converted into the accumulate dtype, and how that rounded (a copy: as it is).
    pub widened: Traced,
    /// How the conversion rounded.
    pub widening: HowRounded,
}

/// A GCE hop's quantisation of the element (docs/MODEL.md G6–G7, the codec MODEL).
#[derive(Clone, Debug, PartialEq)]
pub struct Quantised {
    /// The block's first and last element (global indices, inclusive).
    pub block: (u64, u64),
    /// The largest finite |value| of the block.
    pub amax: f32,
    /// The block's scale exponent E (scale byte E + 127).
    pub scale_exponent: i32,
    /// The element's fp8 e5m2 code.
    pub code: u8,
    /// The code expanded: `e5m2(code) · 2^E`.
    pub expanded: f32,
}

/// One step that touched the element.
#[derive(Clone, Debug, PartialEq)]
pub struct StoryStep {
    /// The rank that ran it.
    pub rank: usize,
    /// Its step in the rank's schedule (`None`: before the run).
    pub step: Option<usize>,
    /// What it did.
    pub kind: StepKind,
    /// The packet (`None` before the run).
    pub packet: Option<PacketRef>,
    /// The element's destination addresses (several: replication).
    pub dests: Vec<u64>,
    /// The order of its result ([`Expr`]: shared with its operands' and the other steps').
    pub expr: Expr,
    /// Its operands in accumulation order.
    pub operands: Vec<StoryOperand>,
    /// Every combine in the accumulate dtype (the trace's steps).
    pub accumulate: Vec<TracedStep>,
    /// The value before the rounding to the buffer dtype: the accumulator (a copy: the value).
    pub exact: f64,
    /// The result in the buffer dtype (a compress: the reduce's, before quantisation).
    pub rounded: Traced,
    /// How it rounded to the buffer dtype.
    pub rounding: HowRounded,
    /// The exact reduction of its leaves (f64; avg: their sum over R).
    pub reference: f64,
    /// `rounded − reference` (a compress: of the expanded value).
    pub error: f64,
    /// A GCE hop's quantisation.
    pub gce: Option<Quantised>,
}

/// One element's story ([`story`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Story {
    /// The element (its index in the rank's input; a reduce-scatter's output holds its
    /// owner's chunk).
    pub index: u64,
    /// The rank whose output is shown.
    pub rank: usize,
    /// Whether every rank's output holds the same bits there (all-reduce, all-gather).
    pub every_rank: bool,
    /// Its chunk (a user schedule's: its MSCCL chunk).
    pub chunk: u64,
    /// The reduction as an order.
    pub expr: Order,
    /// The ranks in the order they enter.
    pub leaves: Vec<u32>,
    /// Every step that touched it, in an order the run allows: by step index, then rank (a
    /// user schedule's: as a sweep over the ranks finds them ready).
    pub steps: Vec<StoryStep>,
    /// The output element.
    pub output: Traced,
    /// The exact reduction of the leaves (f64).
    pub reference: f64,
    /// `output − reference`.
    pub error: f64,
    /// The buffer dtype.
    pub dtype: SdmaDtype,
}

/// The story of element `index` of rank `rank`'s output (`None`: rank 0, or for a
/// reduce-scatter the rank that holds it) for `cfg`, the inputs read from `source` (only the
/// elements the story needs). The shape rules are checked (not the memory budget: any size).
///
/// # Errors
/// [`StoryError`]: a configuration the shape check refuses, an element or rank out of range,
/// an input that cannot be read.
pub fn story(cfg: &Config, source: &dyn InputSource, index: u64, rank: Option<usize>) -> Result<Story, StoryError> {
    check_model(cfg)?;
    if index >= cfg.elems {
        return Err(StoryError::Range(format!(
            "`element` {index} is past the run's {} elements per rank (0..={})",
            cfg.elems,
            cfg.elems.saturating_sub(1)
        )));
    }
    if let Some(r) = rank.filter(|&r| r >= cfg.ranks) {
        return Err(StoryError::Range(format!("`rank` {r}: the run has ranks 0..={}", cfg.ranks.saturating_sub(1))));
    }
    let low = Lowered::for_story(cfg);
    follow(cfg, &low, source, index, rank, |ev, root, q| ev.tell(root, index, q))
}

/// Follows element `index` (in range) of rank `rank`'s output back through the works that
/// made it — a built-in schedule's works of its chunk alone ([`slice`]), a user schedule's
/// whole — and hands the evaluator, the value shown and the rank that holds it to `f`.
fn follow<T>(
    cfg: &Config,
    low: &Lowered,
    source: &dyn InputSource,
    index: u64,
    rank: Option<usize>,
    f: impl FnOnce(&mut Eval, usize, usize) -> T,
) -> Result<T, StoryError> {
    let (q, addr) = output_address(cfg, low, index, rank)?;
    let mut ev = Eval::for_element(cfg, low, source, index)?;
    let root = ev.value_at_end(addr)?;
    Ok(f(&mut ev, root, q))
}

/// At most this many chunks get an order of their own in [`orders`] (a user schedule's chunks
/// repeat every loop; past this many, the orders are not given).
pub const MAX_ORDER_CHUNKS: u64 = 4096;

/// Reads nothing: every input element is +0 (an order does not depend on the values).
struct Zeros;

impl InputSource for Zeros {
    fn block<'a>(&'a self, _: usize, _: u64, count: usize, buf: &'a mut Vec<u8>) -> std::io::Result<&'a [u8]> {
        buf.clear();
        buf.resize(count.saturating_mul(8), 0);
        Ok(buf.as_slice())
    }
}

/// The order (the story's `expr`) of every element of rank `rank`'s output (`None`: as
/// [`story`]), as `(first element, order)` segments in ascending order: an element's order is
/// its segment's, the last that starts at or before it. Every element of a chunk (of a
/// channel's piece of it) is reduced in the same order, so one story per chunk or piece (told
/// over zero inputs) gives them all; adjacent chunks of one order are one segment.
///
/// # Errors
/// As [`story`]; a user schedule of more than [`MAX_ORDER_CHUNKS`] chunks is a
/// [`StoryError::Range`] that says so.
pub fn orders(cfg: &Config, rank: Option<usize>) -> Result<Vec<(u64, Order)>, StoryError> {
    check_model(cfg)?;
    let low = Lowered::for_story(cfg);
    let starts: Vec<u64> = match &low.shape {
        Shape::User(g) => {
            let per = (g.chunk / low.l.size).max(1);
            let chunks = cfg.elems.div_ceil(per);
            if chunks > MAX_ORDER_CHUNKS {
                return Err(StoryError::Range(format!(
                    "the schedule's {chunks} chunks are more than the {MAX_ORDER_CHUNKS} whose orders are told"
                )));
            }
            (0..chunks).map(|c| c * per).collect()
        }
        // A chunk's pieces, one per channel (one piece without channels), each its own order.
        Shape::BuiltIn { .. } => {
            let pieces = cfg.channels.max(1) as u64;
            (0..low.l.r)
                .flat_map(|c| (0..pieces).map(move |k| (c, k)))
                .map(|(c, k)| low.l.start(c) + low.l.len(c) * k / pieces)
                .collect()
        }
    };
    let mut out: Vec<(u64, Order)> = Vec::new();
    let mut last = None;
    for first in starts {
        if first >= cfg.elems || last.is_some_and(|l| first <= l) {
            continue;
        }
        last = Some(first);
        let expr = follow(cfg, &low, &Zeros, first, rank, |ev, root, _| ev.order(root))?;
        if out.last().is_none_or(|(_, o)| *o != expr) {
            out.push((first, expr));
        }
    }
    Ok(out)
}

/// The chunk of element `index` (a user schedule's MSCCL chunk).
fn chunk_of(low: &Lowered, index: u64) -> u64 {
    match &low.shape {
        Shape::User(g) => index / (g.chunk / low.l.size).max(1),
        Shape::BuiltIn { .. } => (0..low.l.r).rev().find(|&c| low.l.start(c) <= index).unwrap_or(0) as u64,
    }
}

/// The elements `[first, last)` of rank `q`'s reduce-scatter output, as input indices.
fn share_of(low: &Lowered, q: usize) -> (u64, u64) {
    match &low.shape {
        Shape::BuiltIn { owner } => (low.l.start(owner[q]), low.l.start(owner[q] + 1)),
        Shape::User(g) => {
            let per = g.share * (g.chunk / low.l.size);
            (q as u64 * per, (q as u64 + 1) * per)
        }
    }
}

/// The rank shown and the address of element `index` in its output.
fn output_address(cfg: &Config, low: &Lowered, index: u64, rank: Option<usize>) -> Result<(usize, u64), StoryError> {
    let scatter = cfg.collective == Collective::ReduceScatter;
    let holder = |i: u64| (0..cfg.ranks).find(|&q| (share_of(low, q).0..share_of(low, q).1).contains(&i));
    let q = match (rank, scatter) {
        (Some(q), _) => q,
        (None, false) => 0,
        (None, true) => holder(index).ok_or_else(|| {
            StoryError::Range(format!("`element` {index}: no rank holds it after the reduce-scatter"))
        })?,
    };
    let first = if scatter {
        let (a, z) = share_of(low, q);
        if !(a..z).contains(&index) {
            let who = holder(index).map_or("no rank".to_string(), |p| format!("rank {p}"));
            return Err(StoryError::Range(format!(
                "`rank` {q} does not hold element {index} after a reduce-scatter (its elements are {a}..{z}): {who} does"
            )));
        }
        a
    } else {
        0
    };
    let mut offset = (index - first) * low.l.size;
    for (addr, kept) in low.outputs(cfg, q) {
        if offset < kept {
            return Ok((q, addr + offset));
        }
        offset -= kept;
    }
    Err(StoryError::Range(format!("`element` {index}: rank {q}'s output does not hold it")))
}

/// One work of the run, in the order the story follows.
struct Entry {
    rank: usize,
    /// The step (`None`: a copy before the run).
    step: Option<usize>,
    /// The work's position in its step.
    item: usize,
    work: Work,
    /// The work's destinations and the bytes it writes at each (computed once: the story
    /// asks every entry before a point whether it writes an address).
    dests: Vec<u64>,
    len: u64,
}

impl Entry {
    fn new(rank: usize, step: Option<usize>, item: usize, work: Work, size: u64) -> Entry {
        let (dests, len) = (work.writes(), work.write_len(size));
        Entry { rank, step, item, work, dests, len }
    }

    /// The destination that holds `addr` and the byte offset in it, if the work writes it.
    fn writes(&self, addr: u64, _size: u64) -> Option<(u64, u64)> {
        self.dests.iter().find(|&&d| addr >= d && addr - d < self.len).map(|&d| (d, addr - d))
    }
}

/// The works of every rank in an order the dependencies allow, after the copies before the
/// run: a built-in schedule's by step, then rank (every step waits only for earlier ones); a
/// user schedule's as a sweep over the ranks finds them ready (each rank's steps in order, a
/// step after every step it waits for).
fn entries(cfg: &Config, low: &Lowered) -> Result<Vec<Entry>, StoryError> {
    let mut out = Vec::new();
    for q in 0..cfg.ranks {
        for (i, (from, to, bytes)) in low.preload(cfg, q).into_iter().enumerate() {
            out.push(Entry::new(q, None, i, Work::Copy { src: from, dst: to, bytes }, low.l.size));
        }
    }
    if let Shape::BuiltIn { .. } = low.shape {
        let mut works = Vec::new();
        for (q, st) in low.steps.iter().enumerate() {
            for (s, step) in st.iter().enumerate() {
                for (i, w) in step.work.iter().enumerate().filter(|(_, w)| !w.is_empty()) {
                    works.push(Entry::new(q, Some(s), i, w.clone(), low.l.size));
                }
            }
        }
        works.sort_by_key(|e| (e.step, e.rank, e.item));
        out.extend(works);
        return Ok(out);
    }
    let steps = &low.steps;
    let mut next = vec![0usize; steps.len()];
    let total: usize = steps.iter().map(Vec::len).sum();
    let mut done = 0;
    while done < total {
        let before = done;
        for q in 0..steps.len() {
            while let Some(st) = steps[q].get(next[q]) {
                if !st.deps.iter().all(|&(p, t)| next.get(p).is_some_and(|&n| n > t)) {
                    break;
                }
                for (i, w) in st.work.iter().enumerate().filter(|(_, w)| !w.is_empty()) {
                    out.push(Entry::new(q, Some(next[q]), i, w.clone(), low.l.size));
                }
                next[q] += 1;
                done += 1;
            }
        }
        if done == before {
            return Err(StoryError::Schedule("the schedule's steps wait for each other in a cycle".into()));
        }
    }
    Ok(out)
}

/// The works of a built-in schedule that carry element `e` of fine chunk `f`
/// ([`slice::works`]), after the copies before the run that do: [`entries`] of the whole
/// schedule, filtered to the element's chunk (a channel's piece of it).
fn element_entries(cfg: &Config, low: &Lowered, plan: &Plan, f: usize, e: u64) -> Vec<Entry> {
    let mut out = Vec::new();
    if let Shape::BuiltIn { owner } = &low.shape {
        for q in (0..cfg.ranks).filter(|&q| owner[q] == f) {
            for (i, (from, to, bytes)) in low.preload(cfg, q).into_iter().enumerate() {
                out.push(Entry::new(q, None, i, Work::Copy { src: from, dst: to, bytes }, low.l.size));
            }
        }
    }
    let works = slice::works(cfg, plan, f, e).into_iter().filter(|w| !w.work.is_empty());
    out.extend(works.map(|w| Entry::new(w.rank, Some(w.step), w.item, w.work, low.l.size)));
    out
}

/// A value the story made: its bits at an address, and how.
#[derive(Clone, Debug)]
struct Node {
    /// In the buffer dtype (a GCE payload: the fp8 code).
    bits: u64,
    /// The rank whose buffer holds it.
    rank: usize,
    /// Its address.
    addr: u64,
    how: How,
}

#[derive(Clone, Debug)]
enum How {
    Input,
    Copy { at: usize, from: usize, dests: Vec<u64> },
    Reduce { at: usize, j: u64, from: Vec<usize>, trace: Box<ElementTrace>, dests: Vec<u64> },
    Compress { at: usize, j: u64, from: Vec<usize>, trace: Box<ElementTrace>, quant: Quantised },
    Expand { at: usize, j: u64, from: usize },
}

/// A compressed block: its first element (in the work), its values (f32) and scale exponent.
#[derive(Clone, Debug)]
struct Block {
    first: u64,
    values: Vec<f32>,
    scale_exponent: i32,
}

/// A rank's (packets, tx, rx descriptors) before each of its works, by (step, item).
type QueueMarks = HashMap<(usize, usize), (u64, u64, u64)>;

/// The evaluator: the run's works, and the values made so far.
struct Eval<'a> {
    cfg: &'a Config,
    /// The element the story tells (a block's offsets in a work become global indices by it).
    index: u64,
    low: &'a Lowered,
    source: &'a dyn InputSource,
    entries: Vec<Entry>,
    /// Per rank: the entries that write into its memory, ascending.
    writers: HashMap<usize, Vec<usize>>,
    nodes: Vec<Node>,
    /// Per node: the node whose value it is, through the copies that moved it.
    origins: Vec<usize>,
    memo: HashMap<(u64, usize), usize>,
    programs: HashMap<usize, Program>,
    blocks: HashMap<(usize, u64), Block>,
    /// Per rank: (packets, tx, rx descriptors) before each of its works, by (step, item)
    /// (a user schedule's, from its steps).
    queue_marks: HashMap<usize, QueueMarks>,
    /// A built-in schedule's queues, counted from its plan.
    counter: Option<Counter<'a>>,
    /// The orders of the first nodes, in node order ([`Eval::expr`]).
    exprs: Vec<Expr>,
    /// The folds of the first nodes' leaves, in node order ([`Eval::folded`]).
    folds: Vec<f64>,
}

impl<'a> Eval<'a> {
    /// The evaluator of element `index`: a built-in schedule's works of its chunk alone, a
    /// user schedule's every work.
    fn for_element(
        cfg: &'a Config,
        low: &'a Lowered,
        source: &'a dyn InputSource,
        index: u64,
    ) -> Result<Eval<'a>, StoryError> {
        match &low.shape {
            Shape::User(_) => Ok(Eval::new(cfg, low, source, index, entries(cfg, low)?, None)),
            Shape::BuiltIn { .. } => {
                let counter = Counter::new(cfg, &low.l);
                let entries = element_entries(cfg, low, counter.plan(), chunk_of(low, index) as usize, index);
                Ok(Eval::new(cfg, low, source, index, entries, Some(counter)))
            }
        }
    }

    fn new(
        cfg: &'a Config,
        low: &'a Lowered,
        source: &'a dyn InputSource,
        index: u64,
        entries: Vec<Entry>,
        counter: Option<Counter<'a>>,
    ) -> Eval<'a> {
        let mut writers: HashMap<usize, Vec<usize>> = HashMap::new();
        for (p, e) in entries.iter().enumerate() {
            let mut ranks: Vec<usize> = e.dests.iter().map(|&d| Layout::rank_of(d)).collect();
            ranks.dedup();
            for r in ranks {
                let list = writers.entry(r).or_default();
                if list.last() != Some(&p) {
                    list.push(p);
                }
            }
        }
        Eval {
            cfg,
            index,
            low,
            source,
            entries,
            writers,
            nodes: Vec::new(),
            origins: Vec::new(),
            memo: HashMap::new(),
            programs: HashMap::new(),
            blocks: HashMap::new(),
            queue_marks: HashMap::new(),
            counter,
            exprs: Vec::new(),
            folds: Vec::new(),
        }
    }

    fn size(&self) -> u64 {
        self.low.l.size
    }

    fn push(&mut self, node: Node) -> usize {
        let n = self.nodes.len();
        self.origins.push(if let How::Copy { from, .. } = node.how { self.origins[from] } else { n });
        self.nodes.push(node);
        n
    }

    /// The node whose value node `n` is, through the copies that moved it.
    fn origin(&self, n: usize) -> &How {
        &self.nodes[self.origins[n]].how
    }

    /// The entry that last wrote `addr` before entry `before` runs (`None`: an input).
    fn writer(&self, addr: u64, before: usize) -> Option<usize> {
        self.writers.get(&Layout::rank_of(addr)).and_then(|list| {
            let below = list.partition_point(|&p| p < before);
            list[..below].iter().rev().copied().find(|&p| self.entries[p].writes(addr, self.size()).is_some())
        })
    }

    /// The value at `addr` once every entry has run: the values it is made from are made
    /// first, deepest first, so that making each recurses into none it has not made yet (a
    /// 4096-rank ring's element passes through 8,190 works: a recursion that deep would need
    /// megabytes of stack).
    fn value_at_end(&mut self, addr: u64) -> Result<usize, StoryError> {
        let mut todo = vec![(addr, self.entries.len())];
        let mut seen = std::collections::HashSet::new();
        let mut order = Vec::new();
        while let Some((a, before)) = todo.pop() {
            let at = self.writer(a, before);
            let key = (a, at.unwrap_or(usize::MAX));
            if self.memo.contains_key(&key) || !seen.insert(key) {
                continue;
            }
            order.push((a, before));
            if let Some(p) = at {
                let reads = self.entries[p].writes(a, self.size()).map_or(Vec::new(), |(_, off)| self.reads(p, off));
                todo.extend(reads.into_iter().map(|r| (r, p)));
            }
        }
        for (a, before) in order.into_iter().rev() {
            self.value(a, before)?;
        }
        self.value(addr, self.entries.len())
    }

    /// The addresses entry `p` reads to make its value at byte offset `off` of a destination
    /// (a compression: the element's own; the rest of its block is read with the block).
    fn reads(&self, p: usize, off: u64) -> Vec<u64> {
        let size = self.size();
        match &self.entries[p].work {
            Work::Copy { src, .. } => vec![src + off],
            Work::Reduce { srcs, .. } => srcs.iter().map(|&s| s + off / size * size).collect(),
            Work::Compress { srcs, headers, .. } if off >= *headers => {
                srcs.iter().map(|&s| s + (off - headers) * size).collect()
            }
            Work::Compress { .. } => Vec::new(),
            Work::Expand { src, headers, .. } => vec![src + headers + off / size],
        }
    }

    /// The value at `addr` just before entry `before` runs.
    fn value(&mut self, addr: u64, before: usize) -> Result<usize, StoryError> {
        let at = self.writer(addr, before);
        let key = (addr, at.map_or(usize::MAX, |p| p));
        if let Some(&n) = self.memo.get(&key) {
            return Ok(n);
        }
        let n = match at {
            None => self.input(addr)?,
            Some(p) => self.made_by(p, addr)?,
        };
        self.memo.insert(key, n);
        Ok(n)
    }

    /// A rank's input element at `addr`.
    fn input(&mut self, addr: u64) -> Result<usize, StoryError> {
        let rank = Layout::rank_of(addr);
        let off = addr.wrapping_sub(Layout::base(rank));
        let size = self.size();
        if rank >= self.cfg.ranks || off >= self.cfg.elems * size || off % size != 0 {
            return Err(StoryError::Schedule(format!("the element reads 0x{addr:x}, which no step wrote before")));
        }
        let element = off / size;
        let mut buf = Vec::new();
        let bytes = self.source.block(rank, element, 1, &mut buf).map_err(|e| StoryError::Input {
            rank,
            element,
            message: e.to_string(),
        })?;
        let mut raw = [0u8; 8];
        let take = bytes.len().min(8);
        raw[..take].copy_from_slice(&bytes[..take]);
        Ok(self.push(Node { bits: u64::from_le_bytes(raw), rank, addr, how: How::Input }))
    }

    /// The value entry `p` wrote at `addr`.
    fn made_by(&mut self, p: usize, addr: u64) -> Result<usize, StoryError> {
        let size = self.size();
        let Some((_, off)) = self.entries[p].writes(addr, size) else {
            return Err(StoryError::Schedule(format!("0x{addr:x}: not written by its writer")));
        };
        let rank = Layout::rank_of(addr);
        let reads = self.reads(p, off);
        match self.entries[p].work.clone() {
            Work::Copy { .. } => {
                let from = self.value(reads[0], p)?;
                let bits = self.nodes[from].bits;
                Ok(self.push(Node { bits, rank, addr, how: How::Copy { at: p, from, dests: vec![addr] } }))
            }
            Work::Reduce { dsts, .. } => {
                let j = off / size;
                let from = reads.iter().map(|&a| self.value(a, p)).collect::<Result<Vec<_>, _>>()?;
                let dests: Vec<u64> = dsts.iter().map(|d| d + j * size).collect();
                match self.trace(p, j, &from)? {
                    Some(trace) => {
                        let bits = trace.out.bits;
                        let how = How::Reduce { at: p, j, from, trace: Box::new(trace), dests };
                        Ok(self.push(Node { bits, rank, addr, how }))
                    }
                    None => {
                        let bits = self.nodes[from[0]].bits;
                        Ok(self.push(Node { bits, rank, addr, how: How::Copy { at: p, from: from[0], dests } }))
                    }
                }
            }
            Work::Compress { headers, .. } => {
                if off < headers {
                    return Err(StoryError::Schedule(format!("0x{addr:x} is a GCE header, not an element")));
                }
                self.compressed(p, off - headers, rank, addr)
            }
            Work::Expand { .. } => {
                let j = off / size;
                let from = self.value(reads[0], p)?;
                let e = self.scale_of(from)?;
                let code = self.nodes[from].bits as u8;
                let bits = expand_bits(self.cfg.dtype, cce_numerics::gce::decode_element(code, e))?;
                Ok(self.push(Node { bits, rank, addr, how: How::Expand { at: p, j, from } }))
            }
        }
    }

    /// Entry `p`'s program (planned as the run plans it).
    fn program(&mut self, p: usize) -> Result<&Program, StoryError> {
        if !self.programs.contains_key(&p) {
            let e = &self.entries[p];
            let prog = plan_work(self.cfg, e.rank, e.step.unwrap_or(0), &e.work)?
                .ok_or_else(|| StoryError::Schedule("an empty work wrote an element".into()))?;
            self.programs.insert(p, prog);
        }
        Ok(&self.programs[&p])
    }

    /// Entry `p`'s packet holding its element `j`, and `j`'s position in it.
    fn packet(&mut self, p: usize, j: u64) -> Result<(u64, cce_format::packet::Packet, u64), StoryError> {
        let prog = self.program(p)?;
        let per = prog.elems_per_packet().max(1);
        let k = j / per;
        let packet = prog.packet(k).ok_or_else(|| StoryError::Schedule(format!("element {j} past its work")))?;
        Ok((k, packet, j - k * per))
    }

    /// Entry `p`'s reduce of its element `j` over the values `from`, traced; `None` when its
    /// packet only moves bytes (a one-source ADD in promoted lanes).
    fn trace(&mut self, p: usize, j: u64, from: &[usize]) -> Result<Option<ElementTrace>, StoryError> {
        let (_, packet, within) = self.packet(p, j)?;
        let spec = cce_engine::packet_spec(&packet, RANK_QUEUE).map_err(|e| StoryError::Schedule(e.to_string()))?;
        let Some(spec) = spec.filter(|_| packet.in_dt == self.cfg.dtype) else { return Ok(None) };
        // The packet's output size: a compressing packet's is its fp8 payload's.
        let out_size = u64::from(packet.out_dt.bytes().max(1));
        let index = packet.dests.first().map_or(0, |d| d + within * out_size) / out_size;
        let bits: Vec<u64> = from.iter().map(|&n| self.nodes[n].bits).collect();
        trace_element(&spec, &bits, index).map(Some).map_err(|e| StoryError::Schedule(e.to_string()))
    }

    /// The compressed element `j` of entry `p` (a [`Work::Compress`]): its block compressed.
    fn compressed(&mut self, p: usize, j: u64, rank: usize, addr: u64) -> Result<usize, StoryError> {
        let (k, packet, within) = self.packet(p, j)?;
        let per = self.program(p)?.elems_per_packet().max(1);
        let start = k * per;
        let bsize = u64::from(cce_format::gce::COMPRESS_BLOCK);
        let first = start + (within / bsize) * bsize;
        let last = (first + bsize).min(start + u64::from(packet.elems)) - 1;
        let Work::Compress { srcs, .. } = self.entries[p].work.clone() else {
            return Err(StoryError::Schedule("not a compression".into()));
        };
        let size = self.size();
        let mut traced = None;
        if !self.blocks.contains_key(&(p, first)) {
            let mut values = Vec::new();
            for i in first..=last {
                let from = srcs.iter().map(|&s| self.value(s + i * size, p)).collect::<Result<Vec<_>, _>>()?;
                let t = self
                    .trace(p, i, &from)?
                    .ok_or_else(|| StoryError::Schedule("a compression without a reduce".into()))?;
                values.push(t.out.value as f32);
                if i == j {
                    traced = Some((from, t));
                }
            }
            let scale_exponent = cce_numerics::gce::scale_exponent(&values);
            self.blocks.insert((p, first), Block { first, values, scale_exponent });
        }
        let (from, trace) = match traced {
            Some(t) => t,
            None => {
                let from = srcs.iter().map(|&s| self.value(s + j * size, p)).collect::<Result<Vec<_>, _>>()?;
                let t = self
                    .trace(p, j, &from)?
                    .ok_or_else(|| StoryError::Schedule("a compression without a reduce".into()))?;
                (from, t)
            }
        };
        let b = &self.blocks[&(p, first)];
        let x = b.values[(j - b.first) as usize];
        let code = cce_numerics::gce::encode_element(x, b.scale_exponent);
        let quant = Quantised {
            block: (first, last),
            amax: b.values.iter().filter(|v| v.is_finite()).fold(0f32, |m, v| m.max(v.abs())),
            scale_exponent: b.scale_exponent,
            code,
            expanded: cce_numerics::gce::decode_element(code, b.scale_exponent),
        };
        let how = How::Compress { at: p, j, from, trace: Box::new(trace), quant };
        Ok(self.push(Node { bits: u64::from(code), rank, addr, how }))
    }

    /// The scale exponent of the compressed value `n` (through the copies that moved it).
    fn scale_of(&self, n: usize) -> Result<i32, StoryError> {
        match self.origin(n) {
            How::Compress { quant, .. } => Ok(quant.scale_exponent),
            _ => Err(StoryError::Schedule("an expansion of bytes no compression wrote".into())),
        }
    }
}

/// An expanded f32 in the buffer dtype, rounded to nearest even (what the expansion writes).
fn expand_bits(dtype: SdmaDtype, x: f32) -> Result<u64, StoryError> {
    let to = NumType::from_sdma(dtype).map_err(|e| StoryError::Schedule(e.to_string()))?;
    let mut out = [0u8; 8];
    cce_numerics::convert(
        NumType::F32,
        to,
        &x.to_le_bytes(),
        &mut out[..to.size()],
        cce_numerics::Rounding::Rne,
        false,
    )
    .map_err(|e| StoryError::Schedule(e.to_string()))?;
    Ok(u64::from_le_bytes(out))
}

/// The value of `bits` in `dtype` (f64; integers as the nearest f64).
pub(crate) fn value_of(dtype: SdmaDtype, bits: u64) -> f64 {
    crate::metrics::values(dtype, &bits.to_le_bytes()[..usize::from(dtype.bytes().clamp(1, 8))])
        .first()
        .copied()
        .unwrap_or(0.0)
}

/// What a node was made of, for its order and its leaves.
enum MadeOf {
    /// A rank's input.
    Leaf,
    /// The value of another node as it is (a copy, a one-source reduce).
    Same(usize),
    /// Operands combined and rounded once.
    Round(Vec<usize>),
    /// A GCE hop over another node.
    Gce(usize),
}

impl Eval<'_> {
    fn made_of(&self, n: usize) -> MadeOf {
        match &self.nodes[n].how {
            How::Input => MadeOf::Leaf,
            How::Copy { from, .. } => MadeOf::Same(*from),
            How::Reduce { from, .. } | How::Compress { from, .. } if from.len() == 1 => MadeOf::Same(from[0]),
            How::Reduce { from, .. } | How::Compress { from, .. } => MadeOf::Round(from.clone()),
            How::Expand { from, .. } => MadeOf::Gce(*from),
        }
    }

    /// The order that made node `n`, shared with the orders of the nodes it was made from
    /// (each made once). A node's operands come before it, so the orders are made in node
    /// order, without recursion.
    fn expr(&mut self, n: usize) -> Expr {
        while self.exprs.len() <= n {
            let m = self.exprs.len();
            let e = match self.made_of(m) {
                MadeOf::Leaf => Expr::rank(self.nodes[m].rank as u32),
                MadeOf::Same(f) => self.exprs[f].clone(),
                MadeOf::Round(from) => Expr::round(from.into_iter().map(|f| self.exprs[f].clone()).collect()),
                MadeOf::Gce(f) => Expr::gce(self.exprs[f].clone()),
            };
            self.exprs.push(e);
        }
        self.exprs[n].clone()
    }

    /// The order that made node `n`, whole.
    fn order(&mut self, n: usize) -> Order {
        self.expr(n).to_order()
    }

    /// The input values of node `n`'s leaves, in order.
    fn leaf_values(&self, n: usize, out: &mut Vec<f64>) {
        match &self.nodes[n].how {
            How::Input => out.push(value_of(self.cfg.dtype, self.nodes[n].bits)),
            How::Copy { from, .. } | How::Expand { from, .. } => self.leaf_values(*from, out),
            How::Reduce { from, .. } | How::Compress { from, .. } => {
                for &f in from {
                    self.leaf_values(f, out);
                }
            }
        }
    }

    /// The op's combine of two exact values (f64), and where its left fold starts: the sum
    /// of nothing (as `Iterator::sum` has it), +∞ for a min, −∞ for a max.
    fn combine(&self, a: f64, b: f64) -> f64 {
        match self.cfg.op {
            RedOp::Add | RedOp::Avg => a + b,
            RedOp::Min => a.min(b),
            RedOp::Max => a.max(b),
        }
    }

    fn fold_start(&self) -> f64 {
        match self.cfg.op {
            RedOp::Add | RedOp::Avg => std::iter::empty::<f64>().sum(),
            RedOp::Min => f64::INFINITY,
            RedOp::Max => f64::NEG_INFINITY,
        }
    }

    /// The op's left fold of node `n`'s leaf values, in order, from [`Self::fold_start`]:
    /// its first operand's fold continued over the other operands' leaves (made in node order,
    /// as [`Self::expr`]).
    fn folded(&mut self, n: usize) -> f64 {
        let mut leaves = Vec::new();
        while self.folds.len() <= n {
            let m = self.folds.len();
            let v = match self.made_of(m) {
                MadeOf::Leaf => self.combine(self.fold_start(), value_of(self.cfg.dtype, self.nodes[m].bits)),
                MadeOf::Same(f) | MadeOf::Gce(f) => self.folds[f],
                MadeOf::Round(from) => {
                    let mut acc = self.folds[from[0]];
                    for &f in &from[1..] {
                        leaves.clear();
                        self.leaf_values(f, &mut leaves);
                        acc = leaves.iter().fold(acc, |a, &b| self.combine(a, b));
                    }
                    acc
                }
            };
            self.folds.push(v);
        }
        self.folds[n]
    }

    /// The exact reduction of node `n`'s leaves (avg: their sum over R).
    fn reference(&mut self, n: usize) -> f64 {
        let v = self.folded(n);
        if self.cfg.op == RedOp::Avg { v / self.cfg.ranks as f64 } else { v }
    }

    /// Every node the value `root` was made from (its own included), in the run's order.
    fn history(&self, root: usize) -> Vec<usize> {
        let mut seen = vec![false; self.nodes.len()];
        let mut todo = vec![root];
        let mut out = Vec::new();
        while let Some(n) = todo.pop() {
            if std::mem::replace(&mut seen[n], true) {
                continue;
            }
            match &self.nodes[n].how {
                How::Input => continue,
                How::Copy { from, .. } | How::Expand { from, .. } => todo.push(*from),
                How::Reduce { from, .. } | How::Compress { from, .. } => todo.extend(from),
            }
            out.push(n);
        }
        out.sort_by_key(|&n| self.at(n));
        out
    }

    fn at(&self, n: usize) -> usize {
        match &self.nodes[n].how {
            How::Input => 0,
            How::Copy { at, .. } | How::Reduce { at, .. } | How::Compress { at, .. } | How::Expand { at, .. } => *at,
        }
    }

    /// The story of the element whose value is `root`, shown for rank `rank`.
    fn tell(&mut self, root: usize, index: u64, rank: usize) -> Story {
        let steps: Vec<StoryStep> = self.history(root).into_iter().map(|n| self.step(n)).collect();
        let expr = self.order(root);
        let output = Traced { bits: self.nodes[root].bits, value: value_of(self.cfg.dtype, self.nodes[root].bits) };
        let reference = self.reference(root);
        Story {
            index,
            rank,
            every_rank: self.cfg.collective != Collective::ReduceScatter,
            chunk: chunk_of(self.low, index),
            leaves: expr.leaves(),
            expr,
            steps,
            output,
            reference,
            error: output.value - reference,
            dtype: self.cfg.dtype,
        }
    }
}

impl Eval<'_> {
    /// Node `n` as a step of the story.
    fn step(&mut self, n: usize) -> StoryStep {
        let node = self.nodes[n].clone();
        let dtype = self.cfg.dtype;
        let value = Traced { bits: node.bits, value: self.node_value(n) };
        let reference = self.reference(n);
        let at = self.at(n);
        let (rank, step) = (self.entries[at].rank, self.entries[at].step);
        let mut s = StoryStep {
            rank,
            step,
            kind: if step.is_none() { StepKind::Preload } else { StepKind::Copy },
            packet: None,
            dests: vec![node.addr],
            expr: self.expr(n),
            operands: Vec::new(),
            accumulate: Vec::new(),
            exact: value.value,
            rounded: value,
            rounding: HowRounded::Exact,
            reference,
            error: value.value - reference,
            gce: None,
        };
        let j = match &node.how {
            How::Input => return s,
            How::Copy { from, dests, .. } => {
                s.dests = dests.clone();
                s.operands = vec![self.operand(*from, None)];
                self.offset_in(at, node.addr)
            }
            How::Reduce { from, trace, dests, j, .. } => {
                s.kind = StepKind::Reduce;
                s.dests = dests.clone();
                s.operands = from.iter().enumerate().map(|(i, &f)| self.operand(f, trace.operands.get(i))).collect();
                s.accumulate = trace.steps.clone();
                s.exact = trace.accumulator.value;
                s.rounding = trace.out_rounding;
                *j
            }
            How::Compress { from, trace, quant, j, .. } => {
                s.kind = StepKind::Compress;
                s.operands = from.iter().enumerate().map(|(i, &f)| self.operand(f, trace.operands.get(i))).collect();
                s.accumulate = trace.steps.clone();
                s.exact = trace.accumulator.value;
                s.rounded = trace.out;
                s.rounding = trace.out_rounding;
                s.error = f64::from(quant.expanded) - reference;
                // The block in the work's offsets, as global element indices.
                let global = |k: u64| (self.index + k).saturating_sub(*j);
                s.gce = Some(Quantised { block: (global(quant.block.0), global(quant.block.1)), ..quant.clone() });
                *j
            }
            How::Expand { from, j, .. } => {
                s.kind = StepKind::Expand;
                s.operands = vec![self.operand(*from, None)];
                let x = self.expanded(*from);
                s.exact = f64::from(x);
                if let Ok(t) = NumType::from_sdma(dtype) {
                    s.rounding = cce_numerics::trace::rounding_into(f64::from(x), t);
                }
                *j
            }
        };
        if step.is_some() {
            s.packet = self.packet_ref(at, j).ok();
        }
        s
    }

    /// The element offset (bytes, for a copy) of `addr` in entry `at`'s work.
    fn offset_in(&self, at: usize, addr: u64) -> u64 {
        self.entries[at].writes(addr, self.size()).map_or(0, |(_, off)| off)
    }

    /// The expanded f32 of the compressed value `n`.
    fn expanded(&self, n: usize) -> f32 {
        match self.origin(n) {
            How::Compress { quant, .. } => quant.expanded,
            _ => 0.0,
        }
    }

    /// Node `f` as an operand (with its conversion into the accumulator, when traced).
    fn operand(&mut self, f: usize, traced: Option<&cce_numerics::trace::TracedOperand>) -> StoryOperand {
        let node = &self.nodes[f];
        let value = Traced { bits: node.bits, value: self.node_value(f) };
        StoryOperand {
            rank: node.rank,
            address: node.addr,
            expr: self.expr(f),
            value: traced.map_or(value, |t| t.input),
            widened: traced.map_or(value, |t| t.widened),
            widening: traced.map_or(HowRounded::Exact, |t| t.widening),
        }
    }

    /// The value node `n` stands for: its bits in the buffer dtype, or for an fp8 code (a
    /// compressed value, through the copies that moved it) the value it expands to.
    fn node_value(&self, n: usize) -> f64 {
        match self.origin(n) {
            How::Compress { quant, .. } => f64::from(quant.expanded),
            _ => value_of(self.cfg.dtype, self.nodes[n].bits),
        }
    }

    /// Where entry `at`'s packet that holds its element `j` sits on its rank's queue.
    fn packet_ref(&mut self, at: usize, j: u64) -> Result<PacketRef, StoryError> {
        let (rank, step, item) = (self.entries[at].rank, self.entries[at].step.unwrap_or(0), self.entries[at].item);
        let (packets, tx, rx) = self.queue_mark(rank, step, item)?;
        let (k, packet, within) = self.packet(at, j)?;
        let prog = self.program(at)?;
        let count = prog.packet_count().max(1);
        let (tx_per, rx_per) = (prog.tx_descriptors() / count, prog.rx_descriptors() / count);
        Ok(PacketRef {
            queue: RANK_QUEUE,
            packet: packets + k,
            tx_descriptor: tx + k * tx_per,
            rx_descriptor: rx + k * rx_per,
            elems: u64::from(packet.elems),
            element: within,
            sources: packet.sources.iter().map(|s| s.addr).collect(),
            dests: packet.dests.clone(),
            op: packet.op.name().to_string(),
        })
    }

    /// The packets and tx / rx descriptors of rank `rank`'s queue before its work `item` of
    /// step `step`.
    fn queue_mark(&mut self, rank: usize, step: usize, item: usize) -> Result<(u64, u64, u64), StoryError> {
        if let Some(counter) = &mut self.counter {
            let n = counter.before(rank, step, item)?;
            return Ok((n.packets, n.tx, n.rx));
        }
        if !self.queue_marks.contains_key(&rank) {
            let mut marks = HashMap::new();
            let (mut packets, mut tx, mut rx) = (0u64, 0u64, 0u64);
            for (s, st) in self.low.steps[rank].iter().enumerate() {
                for (i, w) in st.work.iter().enumerate() {
                    marks.insert((s, i), (packets, tx, rx));
                    if let Some(p) = plan_work(self.cfg, rank, s, w)? {
                        packets += p.packet_count();
                        tx += p.tx_descriptors();
                        rx += p.rx_descriptors();
                    }
                }
            }
            self.queue_marks.insert(rank, marks);
        }
        Ok(self.queue_marks[&rank].get(&(step, item)).copied().unwrap_or((0, 0, 0)))
    }
}

/// One parameter in which two configurations differ: its name (the CLI's option without its
/// dashes) and both values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Difference {
    /// The parameter (`algo`, `ranks`, `elems`, …).
    pub parameter: &'static str,
    /// Its value in the first configuration.
    pub a: String,
    /// Its value in the second.
    pub b: String,
}

/// The parameters in which `a` and `b` differ (what splits their results), in a fixed order.
pub fn differences(a: &Config, b: &Config) -> Vec<Difference> {
    let rounding = |c: &Config| match c.rounding {
        cce_host::Rounding::Rne => "rne".to_string(),
        cce_host::Rounding::Stochastic { seed } => format!("sr (seed {seed})"),
    };
    type Field = (&'static str, fn(&Config) -> String);
    let fields: [Field; 9] = [
        ("algo", |c| match &c.user {
            Some(u) if c.algo == Algo::File => u.file.clone(),
            _ => c.algo.name().to_string(),
        }),
        ("ranks", |c| c.ranks.to_string()),
        ("elems", |c| c.elems.to_string()),
        ("dtype", |c| c.dtype.name().to_string()),
        ("accum", |c| c.accum.name().to_string()),
        ("op", |c| c.op.name().to_string()),
        ("arch", |c| c.arch.to_string()),
        ("compress", |c| c.compress.name().to_string()),
        ("ranks-per-node", |c| c.model.ranks_per_node.to_string()),
    ];
    let mut out: Vec<Difference> = fields
        .iter()
        .filter(|(_, f)| f(a) != f(b))
        .map(|(p, f)| Difference { parameter: p, a: f(a), b: f(b) })
        .collect();
    if rounding(a) != rounding(b) {
        out.push(Difference { parameter: "rounding", a: rounding(a), b: rounding(b) });
    }
    out
}

#[path = "story_expr.rs"]
mod expr;
pub use expr::Expr;

#[cfg(test)]
#[path = "story_tests.rs"]
mod tests;
