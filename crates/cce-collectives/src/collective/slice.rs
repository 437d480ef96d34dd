//! One element's slice of a built-in schedule: the works that carry its chunk, made without
//! the others, and what a rank's queue holds before any of them, counted without making that
//! rank's other steps. This is what [`super::story`] follows, so a story costs what its element
//! touches — milliseconds at 4096 ranks — not what the whole schedule holds.
//!
//! ## How
//! The schedule's rules make any member's step on its own ([`Phase::step`]); each phase also
//! names, in closed form, the members and steps where a chunk is ([`Phase::touching`]), and
//! describes a member's steps as [`Run`]s: steps (or an RDH round's works) alike but for the
//! lengths of their chunks, which follow an arithmetic progression. A work's packets and
//! descriptors depend on its kind and its lengths, not on its addresses (`cce-host`'s planners
//! read addresses only into the descriptors), and the chunks of a group have two lengths, A and
//! A + 1. So a run of k steps counts k times its first step made over chunks of length A, plus,
//! for each of its chunks of length A + 1 (counted with floor sums over the progression), the
//! difference its first step makes over chunks of that length.
//!
//! ## Guarantees
//! - [`works`] are exactly the works of the whole schedule that carry the element's chunk:
//!   those its value flows through, from the ranks' inputs to every output that holds it, by
//!   rank, step and position in the step, bit for bit
//!   (`tests::slices_are_the_schedules_works_of_the_element`: every algorithm, hierarchy,
//!   collective, GCE, 2–16 ranks, several node shapes, chunk edges and uneven chunks).
//! - [`Counter::before`] equals planning every earlier work of the rank's steps
//!   (`tests::counts_before_a_work_are_the_planned_ones`, the same cases); and a story told from
//!   the slice equals one told from the whole schedule (`story` tests).

use std::collections::HashMap;

use super::buffers::Layout;
use super::config::{CollectiveError, Config};
use super::group::Group;
use super::program::plan_work;
use super::schedule::{Phase, Plan, Run, Work};

/// Packets, tx descriptors and rx descriptors on a queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Counts {
    pub(super) packets: u64,
    pub(super) tx: u64,
    pub(super) rx: u64,
}

impl Counts {
    fn add(&mut self, o: Counts) {
        self.packets += o.packets;
        self.tx += o.tx;
        self.rx += o.rx;
    }

    fn times(self, k: u64) -> Counts {
        Counts { packets: self.packets * k, tx: self.tx * k, rx: self.rx * k }
    }
}

/// One work of the slice: rank `rank`'s step `step`, its position `item` in the step.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct SliceWork {
    pub(super) rank: usize,
    pub(super) step: usize,
    pub(super) item: usize,
    pub(super) work: Work,
}

/// Every work of `plan` that reads or writes element `e` of fine chunk `f` (a group's chunk
/// that carries it: a channel's piece), by step, then rank, then position in the step joined
/// with the legs beside it: an order the dependencies allow, as every step waits only for
/// earlier steps.
pub(super) fn works(cfg: &Config, plan: &Plan, f: usize, e: u64) -> Vec<SliceWork> {
    let mut out = Vec::new();
    for i in 0..plan.legs() {
        for phase in plan.phases(i) {
            let Some(gc) = phase.g.carrying(f, e) else { continue };
            out.extend(phase.touching(cfg, gc).into_iter().map(|t| {
                let (rank, step) = (phase.g.g(t.q), phase.base + t.t);
                let item = t.item + plan.offset(cfg, i, rank, step);
                SliceWork { rank, step, item, work: t.work }
            }));
        }
    }
    out.sort_by_key(|w| (w.step, w.rank, w.item));
    out
}

/// What a work's packet and descriptor counts depend on: its kind, its source and
/// destination counts, its lengths and scales — not its addresses.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Shape {
    Reduce { srcs: usize, dsts: usize, elems: u64, scales: Vec<u32> },
    Copy { bytes: u64 },
    Compress { srcs: usize, elems: u64, scales: Vec<u32>, headers: u64 },
    Expand { elems: u64, headers: u64 },
}

impl Shape {
    fn of(w: &Work) -> Shape {
        let bits = |s: &[f32]| s.iter().map(|x| x.to_bits()).collect();
        match w {
            Work::Reduce { srcs, dsts, elems, scales } => {
                Shape::Reduce { srcs: srcs.len(), dsts: dsts.len(), elems: *elems, scales: bits(scales) }
            }
            Work::Copy { bytes, .. } => Shape::Copy { bytes: *bytes },
            Work::Compress { srcs, elems, scales, headers, .. } => {
                Shape::Compress { srcs: srcs.len(), elems: *elems, scales: bits(scales), headers: *headers }
            }
            Work::Expand { elems, headers, .. } => Shape::Expand { elems: *elems, headers: *headers },
        }
    }
}

/// Σ_{i<n} ⌊(a·i + b) / m⌋, m > 0 (the floor sum of AtCoder's library).
fn floor_sum(mut n: u128, mut m: u128, mut a: u128, mut b: u128) -> u128 {
    let mut sum = 0;
    loop {
        if a >= m {
            sum += n * n.saturating_sub(1) / 2 * (a / m);
            a %= m;
        }
        if b >= m {
            sum += n * (b / m);
            b %= m;
        }
        let y = a * n + b;
        if y < m {
            return sum;
        }
        (n, b) = (y / m, y % m);
        std::mem::swap(&mut m, &mut a);
    }
}

/// The shorter of the two lengths of `g`'s chunks (elements), A = ⌊N·w / R⌋.
fn short_len(g: &Group) -> u64 {
    let (_, w) = g.span();
    (u128::from(g.l.n) * w as u128 / g.l.r as u128) as u64
}

/// Σ g.len(c + s·j) over j < k, chunks below the group's size (no wrap), s ≥ 0.
fn len_sum(g: &Group, c: usize, s: usize, k: usize) -> u128 {
    let (off, w) = g.span();
    let (n, r) = (u128::from(g.l.n), g.l.r as u128);
    let a = (s * w) as u128 * n;
    let at = |c: usize| (off + c * w) as u128 * n;
    floor_sum(k as u128, r, a, at(c + 1)) - floor_sum(k as u128, r, a, at(c))
}

/// How many of the chunks `c0 + d·j` (j < k, mod the group's size) are the longer ones.
fn long_chunks(g: &Group, c0: i64, d: i64, k: usize) -> u64 {
    let n = g.n();
    if k == 0 || g.l.n % (g.l.r / g.span().1) as u64 == 0 {
        return 0;
    }
    // The same chunks in ascending steps of |d| from the first.
    let (mut c, s) =
        if d < 0 { (g.m(c0 + d * (k as i64 - 1)), d.unsigned_abs() as usize) } else { (g.m(c0), d as usize) };
    let (mut left, mut sum) = (k, 0u128);
    while left > 0 {
        let cnt = ((n - 1 - c).checked_div(s)).map_or(left, |fit| left.min(fit + 1));
        sum += if s == 0 { u128::from(g.len(c)) * cnt as u128 } else { len_sum(g, c, s, cnt) };
        left -= cnt;
        c = (c + s * cnt) % n;
    }
    (sum - u128::from(short_len(g)) * k as u128) as u64
}

/// Counts a rank's queue before one of its works, from the plan's runs.
pub(super) struct Counter<'a> {
    cfg: &'a Config,
    plan: Plan<'a>,
    memo: HashMap<Shape, Counts>,
}

impl<'a> Counter<'a> {
    /// A counter for `cfg` (a built-in algorithm that passed the shape check) over `l`.
    pub(super) fn new(cfg: &'a Config, l: &'a Layout) -> Counter<'a> {
        Counter { cfg, plan: Plan::new(cfg, l), memo: HashMap::new() }
    }

    /// The plan counted.
    pub(super) fn plan(&self) -> &Plan<'a> {
        &self.plan
    }

    /// What rank `q`'s queue holds before work `item` of its step `step`: every earlier work
    /// of the rank planned (`cce-host`) and counted.
    pub(super) fn before(&mut self, q: usize, step: usize, item: usize) -> Result<Counts, CollectiveError> {
        let mut total = Counts::default();
        // Works of the legs before, beside this one, in the step of `item`.
        let mut beside = 0;
        for i in 0..self.plan.legs() {
            let phase = self.plan.phase(i, q);
            let Some(m) = phase.g.member(q) else { continue };
            if step >= phase.base + phase.steps() {
                total.add(self.phase(&phase, m, phase.steps(), 0)?);
                continue;
            }
            if step < phase.base {
                break;
            }
            let t = step - phase.base;
            total.add(self.phase(&phase, m, t, item.saturating_sub(beside))?);
            if !self.plan.beside_next(i) {
                break;
            }
            beside += phase.step(self.cfg, m, t).work.len();
        }
        Ok(total)
    }

    /// A work's counts (an empty work: none).
    fn work(&mut self, rank: usize, step: usize, w: &Work) -> Result<Counts, CollectiveError> {
        if w.is_empty() {
            return Ok(Counts::default());
        }
        let shape = Shape::of(w);
        if let Some(&c) = self.memo.get(&shape) {
            return Ok(c);
        }
        let c = plan_work(self.cfg, rank, step, w)?.map_or(Counts::default(), |p| Counts {
            packets: p.packet_count(),
            tx: p.tx_descriptors(),
            rx: p.rx_descriptors(),
        });
        self.memo.insert(shape, c);
        Ok(c)
    }

    /// Member `m`'s works of `phase` before work `item` of its step `t` (of the phase).
    fn phase(&mut self, phase: &Phase, m: usize, t: usize, item: usize) -> Result<Counts, CollectiveError> {
        let mut total = Counts::default();
        let rank = phase.g.g(m);
        for run in phase.runs(m) {
            match run {
                Run::Steps { t0, t1, c0, dt } => {
                    if t0 < t {
                        total.add(self.steps(phase, m, t0, (c0, dt), t1.min(t) - t0)?);
                    }
                    if (t0..t1).contains(&t) && item > 0 {
                        let step = phase.step(self.cfg, m, t);
                        for w in step.work.iter().take(item) {
                            total.add(self.work(rank, phase.base + t, w)?);
                        }
                    }
                }
                Run::Items { t: at, j0, j1, c0, dj } => {
                    let end = if at < t {
                        j1
                    } else if at == t {
                        j1.min(item)
                    } else {
                        j0
                    };
                    if end > j0 {
                        total.add(self.items(phase, m, at, (c0, dj), end - j0)?);
                    }
                }
                Run::Made { t0, t1 } => {
                    for s in t0..t1.min(t + 1) {
                        let step = phase.step(self.cfg, m, s);
                        let take = if s < t { step.work.len() } else { item };
                        for w in step.work.iter().take(take) {
                            total.add(self.work(rank, phase.base + s, w)?);
                        }
                    }
                }
            }
        }
        Ok(total)
    }

    /// `phase` over chunks all of length `len` (its works alike but for their addresses).
    fn uniform(phase: &Phase, len: u64) -> Layout {
        let l = phase.g.l;
        Layout { n: len * (l.r / phase.g.span().1) as u64, ..*l }
    }

    /// Member `m`'s `k` steps from `t0` of a [`Run::Steps`] on chunks `c0 + dt·j`.
    fn steps(
        &mut self,
        phase: &Phase,
        m: usize,
        t0: usize,
        (c0, dt): (i64, i64),
        k: usize,
    ) -> Result<Counts, CollectiveError> {
        let cfg = self.cfg;
        self.alike(phase, (m, t0), (c0, dt), k, &|alike| alike.step(cfg, m, t0).work)
    }

    /// Member `m`'s first `k` works of step `t`, a [`Run::Items`] on chunks `c0 + dj·j`.
    fn items(
        &mut self,
        phase: &Phase,
        m: usize,
        t: usize,
        (c0, dj): (i64, i64),
        k: usize,
    ) -> Result<Counts, CollectiveError> {
        let (cfg, c) = (self.cfg, phase.g.m(c0));
        self.alike(phase, (m, t), (c0, dj), k, &|alike| alike.item(cfg, m, t, c).into_iter().collect())
    }

    /// The counts of `k` works on chunks `c0 + d·j` that differ only in their chunks' lengths:
    /// `made`'s works (member `m`'s, at step `t`) over chunks of the short length, times how many
    /// are short, and over chunks one longer, times how many are long.
    fn alike(
        &mut self,
        phase: &Phase,
        (m, t): (usize, usize),
        (c0, d): (i64, i64),
        k: usize,
        made: &dyn Fn(&Phase) -> Vec<Work>,
    ) -> Result<Counts, CollectiveError> {
        let long = long_chunks(&phase.g, c0, d, k);
        let a = short_len(&phase.g);
        let mut total = Counts::default();
        for (len, times) in [(a, k as u64 - long), (a + 1, long)] {
            if times == 0 {
                continue;
            }
            let l = Self::uniform(phase, len);
            let alike = Phase { g: phase.g.over(&l), ..phase.clone() };
            for w in made(&alike) {
                total.add(self.work(phase.g.g(m), phase.base + t, &w)?.times(times));
            }
        }
        Ok(total)
    }
}

#[cfg(test)]
#[path = "slice_tests.rs"]
mod tests;
