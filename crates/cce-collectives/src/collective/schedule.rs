//! The schedule, pure: for every rank and step, the work (reduces and copies between buffers
//! of the [`Layout`]) and the (rank, step) pairs it waits for. Nothing here touches memory or
//! rings; the reduction order it encodes is the one the module docs of [`super`] state.
//!
//! A built-in collective is a list of *legs* ([`Plan`]): one part ([`Part`] — a reduce-scatter,
//! an all-gather, the GCE ring, the single-step mesh) of one algorithm, run by every group of a
//! split of the ranks (all of them, each node, each local index). One group's leg is a
//! [`Phase`], and a phase makes any member's step on its own ([`Phase::step`]): the rules are
//! written once, per step, and the whole schedule is every member's every step. Besides, a
//! phase names the works of one chunk alone ([`Phase::touching`], what one element's story
//! follows) and describes each member's steps as [`Run`]s of works alike but for their chunks'
//! lengths (what counts a rank's packets before one step without making the others,
//! [`super::slice`]). Tests hold both against the schedule made: the works of a chunk are the
//! works its data flows through, the counts from the runs are the planned ones
//! (`slice::tests::slices_are_the_schedules_works_of_the_element`,
//! `slice::tests::counts_before_a_work_are_the_planned_ones`).

use super::buffers::Layout;
use super::config::{Algo, Collective, Compress, Config, RedOp};
use super::group::{self, Group, Stage};
use super::hier;

/// One operation of a step.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Work {
    Reduce {
        srcs: Vec<u64>,
        dsts: Vec<u64>,
        elems: u64,
        scales: Vec<f32>,
    },
    Copy {
        src: u64,
        dst: u64,
        bytes: u64,
    },
    /// Reduce `srcs` (one source: take it as it is) and GCE-compress the result into the
    /// compressed buffer `dst`: its `headers` bytes of headers, then one fp8 byte per element.
    Compress {
        srcs: Vec<u64>,
        dst: u64,
        elems: u64,
        scales: Vec<f32>,
        headers: u64,
    },
    /// Expand the compressed buffer `src` (laid out as [`Work::Compress`] writes it) into `dst`.
    Expand {
        src: u64,
        dst: u64,
        elems: u64,
        headers: u64,
    },
}

impl Work {
    /// The buffer addresses it reads, in source order.
    pub(super) fn reads(&self) -> Vec<u64> {
        match self {
            Work::Reduce { srcs, .. } | Work::Compress { srcs, .. } => srcs.clone(),
            Work::Copy { src, .. } | Work::Expand { src, .. } => vec![*src],
        }
    }

    /// The buffer addresses it writes.
    pub(super) fn writes(&self) -> Vec<u64> {
        match self {
            Work::Reduce { dsts, .. } => dsts.clone(),
            Work::Copy { dst, .. } | Work::Compress { dst, .. } | Work::Expand { dst, .. } => vec![*dst],
        }
    }

    /// Bytes it reads from each source (`size`: the dtype's).
    pub(super) fn read_len(&self, size: u64) -> u64 {
        match self {
            Work::Reduce { elems, .. } | Work::Compress { elems, .. } => elems * size,
            Work::Copy { bytes, .. } => *bytes,
            Work::Expand { elems, headers, .. } => headers + elems,
        }
    }

    /// Bytes it writes to each destination (`size`: the dtype's).
    pub(super) fn write_len(&self, size: u64) -> u64 {
        match self {
            Work::Reduce { elems, .. } | Work::Expand { elems, .. } => elems * size,
            Work::Copy { bytes, .. } => *bytes,
            Work::Compress { elems, headers, .. } => headers + elems,
        }
    }

    /// Whether it moves nothing (no elements, or a copy of no bytes): nothing to plan.
    pub(super) fn is_empty(&self) -> bool {
        match self {
            Work::Reduce { elems, .. } | Work::Compress { elems, .. } | Work::Expand { elems, .. } => *elems == 0,
            Work::Copy { bytes, .. } => *bytes == 0,
        }
    }
}

/// One step of one rank: its work and the (rank, step) it waits for.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Step {
    pub(super) work: Vec<Work>,
    pub(super) deps: Vec<(usize, usize)>,
}

/// The partial slot `P(q, slot)` that RDH's round `k` writes for chunk `c` (R a power of two):
/// the rounds' chunk sets, R/2, R/4, … chunks (those ≡ q mod 2^(k+1)), laid one after another,
/// so every (round, chunk) of a rank has its own buffer (slots below R − 1; the last round
/// writes `W`).
pub(super) fn rdh_slot(r: usize, k: usize, c: usize) -> usize {
    (r - (r >> k)) + (c >> (k + 1))
}

fn reduce(g: &Group, c: usize, srcs: Vec<u64>, dsts: Vec<u64>, scales: Vec<f32>) -> Work {
    Work::Reduce { srcs, dsts, elems: g.len(c), scales }
}

/// What a phase runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Part {
    /// The group's reduce-scatter; its final chunks go to [`Group::result`].
    ReduceScatter,
    /// The group's all-gather, from the chunk each member owns after the reduce-scatter
    /// ([`group::owner`]); `after_rs`: that reduce-scatter ran just before (ring-2R2W's then
    /// delivered a chunk already).
    AllGather { after_rs: bool },
    /// The ring all-reduce with GCE over the node boundaries ([`Phase::gce_step`]).
    RingGce,
    /// A hierarchy's single-step mesh: every member reduces the whole block from every
    /// member's `T`, in member order, into its own `W`.
    SingleStepMesh,
}

/// One group's part of a collective: its members' steps from `base` on (every member has as
/// many steps before it).
#[derive(Clone, Debug)]
pub(super) struct Phase<'a> {
    pub(super) g: Group<'a>,
    pub(super) part: Part,
    pub(super) base: usize,
}

/// One work of a phase ([`Phase::touching`]): member `q`'s step `t` (counted from the phase's
/// start), the work's position `item` in it.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Touch {
    pub(super) q: usize,
    pub(super) t: usize,
    pub(super) item: usize,
    pub(super) work: Work,
}

/// A member's steps whose works are alike but for the lengths of their chunks, which follow an
/// arithmetic progression mod the group's size ([`Phase::runs`]): what counts packets without
/// making the steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Run {
    /// Steps `t0..t1`: every work of step t acts on chunk `c0 + dt·(t − t0)`.
    Steps { t0: usize, t1: usize, c0: i64, dt: i64 },
    /// Step `t`'s works `j0..j1`, work j on chunk `c0 + dj·(j − j0)` alone.
    Items { t: usize, j0: usize, j1: usize, c0: i64, dj: i64 },
    /// Steps `t0..t1`, counted as made (a few small steps).
    Made { t0: usize, t1: usize },
}

/// Steps `t0..t1` on chunks `c0 + dt·(t − t0)` as runs: the first and the last step alone (a
/// phase's first and last steps read and write other buffers), the ones between together.
fn edges(v: &mut Vec<Run>, t0: usize, t1: usize, c0: i64, dt: i64) {
    let mut t = t0;
    while t < t1 {
        let end = if t == t0 || t + 1 == t1 { t + 1 } else { t1 - 1 };
        v.push(Run::Steps { t0: t, t1: end, c0: c0 + dt * (t - t0) as i64, dt });
        t = end;
    }
}

impl Phase<'_> {
    /// Steps each member makes.
    pub(super) fn steps(&self) -> usize {
        let n = self.g.n();
        match (self.part, self.g.algo) {
            (_, Algo::File | Algo::Hier) => 0,
            (Part::RingGce, _) => 1 + 2 * (n - 1),
            (Part::SingleStepMesh, _) | (_, Algo::Mesh) => 1,
            (_, Algo::Rdh) => n.trailing_zeros() as usize,
            (Part::ReduceScatter, Algo::Ring | Algo::Ring2r2w) => n - 1,
            (Part::ReduceScatter, Algo::KangaRing) => (n - 1) / 2 + usize::from(n % 2 == 0),
            (Part::AllGather { .. }, Algo::Ring | Algo::Ring2r2w) => {
                let skip = self.skip();
                n - 1 - skip + usize::from(skip == 1 && n == 2)
            }
            (Part::AllGather { .. }, Algo::KangaRing) => (n - 1).div_ceil(2) + 1,
        }
    }

    /// Member `q`'s step `t` of the phase, its dependencies in the members' whole lists.
    pub(super) fn step(&self, cfg: &Config, q: usize, t: usize) -> Step {
        match self.part {
            Part::ReduceScatter => self.rs_step(cfg, q, t),
            Part::AllGather { .. } => self.ag_step(cfg, q, t),
            Part::RingGce => self.gce_step(cfg, q, t),
            Part::SingleStepMesh => self.single_step_mesh(cfg, q),
        }
    }

    /// Joins the steps of every member into its list, from the phase's base on ([`join`]).
    pub(super) fn join_into(&self, cfg: &Config, steps: &mut [Vec<Step>]) {
        for q in 0..self.g.n() {
            let mine = &mut steps[self.g.g(q)];
            for t in 0..self.steps() {
                join(&mut mine[self.base + t], self.step(cfg, q, t));
            }
        }
    }

    /// Member `p`'s step `t` of the phase, in its whole list.
    fn dep(&self, p: usize, t: usize) -> (usize, usize) {
        (self.g.g(p), self.base + t)
    }

    /// Member `p`'s last step before the phase (none at the start).
    fn last_before(&self, p: usize) -> Vec<(usize, usize)> {
        if self.base == 0 { vec![] } else { vec![(self.g.g(p), self.base - 1)] }
    }

    /// The FMA scales of a reduce (`avg` only): 1 on a partial (else the input scale) first,
    /// then the input scale on each of `n_in` inputs.
    fn scales(&self, cfg: &Config, partial: bool, n_in: usize) -> Vec<f32> {
        if cfg.op != RedOp::Avg {
            return Vec::new();
        }
        let inv = self.g.input_scale;
        let mut v = vec![if partial { 1.0 } else { inv }];
        v.extend(std::iter::repeat_n(inv, n_in));
        v
    }

    /// 1 when ring-2R2W's reduce-scatter already delivered the neighbour's final chunk.
    fn skip(&self) -> usize {
        let after_rs = self.part == Part::AllGather { after_rs: true };
        usize::from(self.g.algo == Algo::Ring2r2w && after_rs && self.g.replicates_result())
    }

    /// A copy of chunk `c` from member `from`'s output to member `to`'s.
    fn copy(&self, from: usize, to: usize, c: usize) -> Work {
        Work::Copy { src: self.g.w(from, c), dst: self.g.w(to, c), bytes: self.g.bytes(c) }
    }

    fn rs_step(&self, cfg: &Config, q: usize, s: usize) -> Step {
        let g = &self.g;
        let (r, qi) = (g.n(), q as i64);
        match g.algo {
            Algo::Ring | Algo::Ring2r2w => {
                let two = g.algo == Algo::Ring2r2w;
                let c = g.m(qi - s as i64 - 1);
                let last = s == r - 2;
                let prev = g.m(qi - 1);
                let first_src = if s == 0 {
                    g.input(prev, c)
                } else if two {
                    g.recv(q, c)
                } else {
                    g.p(prev, c)
                };
                let dsts = match (last, two) {
                    (true, true) if g.replicates_result() => vec![g.result(q, c), g.w(g.m(qi + 1), c)],
                    (true, _) => vec![g.result(q, c)],
                    (false, false) => vec![g.p(q, c)],
                    (false, true) => vec![g.p(q, c), g.recv(g.m(qi + 1), c)],
                };
                let deps = if s == 0 { vec![] } else { vec![self.dep(prev, s - 1)] };
                let srcs = vec![first_src, g.input(q, c)];
                Step { work: vec![reduce(g, c, srcs, dsts, self.scales(cfg, s > 0, 1))], deps }
            }
            Algo::KangaRing if s < (r - 1) / 2 => {
                // 3-source steps.
                let c = g.m(qi - 2 - 2 * s as i64);
                let last = s + 1 == (r - 1) / 2 && r % 2 == 1;
                let p2 = g.m(qi - 2);
                let first_src = if s == 0 { g.input(p2, c) } else { g.p(p2, c) };
                let dst = if last { g.result(q, c) } else { g.p(q, c) };
                let deps = if s == 0 { vec![] } else { vec![self.dep(p2, s - 1)] };
                let srcs = vec![first_src, g.input(g.m(qi - 1), c), g.input(q, c)];
                Step { work: vec![reduce(g, c, srcs, vec![dst], self.scales(cfg, s > 0, 2))], deps }
            }
            Algo::KangaRing => {
                // R even: the last step reduces two sources.
                let c = g.m(qi - 1 - 2 * s as i64);
                let p1 = g.m(qi - 1);
                let first_src = if s == 0 { g.input(p1, c) } else { g.p(p1, c) };
                let deps = if s == 0 { vec![] } else { vec![self.dep(p1, s - 1)] };
                let srcs = vec![first_src, g.input(q, c)];
                Step { work: vec![reduce(g, c, srcs, vec![g.result(q, c)], self.scales(cfg, s > 0, 1))], deps }
            }
            Algo::Rdh => {
                let d = 1usize << s;
                let work = (q % (2 * d)..r).step_by(2 * d).map(|c| self.rdh_rs_work(cfg, q, s, c)).collect();
                let deps = if s == 0 { vec![] } else { vec![self.dep(q ^ d, s - 1)] };
                Step { work, deps }
            }
            Algo::Mesh => {
                let srcs = (0..r).map(|p| g.input(p, q)).collect();
                let scales = if cfg.op == RedOp::Avg { vec![g.input_scale; r] } else { Vec::new() };
                Step { work: vec![reduce(g, q, srcs, vec![g.result(q, q)], scales)], deps: vec![] }
            }
            // A user's schedule is lowered from its plan (`user`), not scheduled here; a
            // hierarchy is made of groups that each run one of the others.
            Algo::File | Algo::Hier => Step::default(),
        }
    }

    /// RDH's reduce-scatter round `k`, d = 2^k (the nearest partner first, with the most
    /// data): member `q` reduces chunk `c` of its set (c ≡ q mod 2d) from both partners'
    /// values, the member with bit d clear first.
    fn rdh_rs_work(&self, cfg: &Config, q: usize, k: usize, c: usize) -> Work {
        let g = &self.g;
        let (r, d) = (g.n(), 1usize << k);
        let value = |x: usize| if k == 0 { g.input(x, c) } else { g.p(x, rdh_slot(r, k - 1, c)) };
        let dst = if 2 * d == r { g.result(q, c) } else { g.p(q, rdh_slot(r, k, c)) };
        let scales = match (cfg.op == RedOp::Avg, k) {
            (false, _) => Vec::new(),
            (true, 0) => vec![g.input_scale; 2],
            (true, _) => vec![1.0, 1.0],
        };
        reduce(g, c, vec![value(q & !d), value(q | d)], vec![dst], scales)
    }

    fn ag_step(&self, cfg: &Config, q: usize, s: usize) -> Step {
        let g = &self.g;
        let (r, qi) = (g.n(), q as i64);
        let owner = |p: usize| group::owner(g.algo, r, p) as i64;
        match g.algo {
            Algo::Ring | Algo::Ring2r2w => {
                let skip = self.skip();
                let prev = g.m(qi - 1);
                if s + 1 + skip >= r {
                    // 2R2W over two ranks: nothing left to gather, but the output is complete
                    // only when the neighbour's last reduce wrote it: an empty step that waits.
                    return Step { work: vec![], deps: self.last_before(prev) };
                }
                let c = g.m(owner(prev) - s as i64 - skip as i64);
                let mut deps = if s == 0 { self.last_before(prev) } else { vec![self.dep(prev, s - 1)] };
                if skip == 1 && s == 0 {
                    // W(prev, c) arrived from prev's predecessor's last reduce.
                    deps.extend(self.last_before(g.m(qi - 2)));
                }
                Step { work: vec![self.copy(prev, q, c)], deps }
            }
            Algo::KangaRing => {
                let k_steps = (r - 1).div_ceil(2);
                if s == k_steps {
                    // The last chunks arrive from members q-1 and q-2: wait for them.
                    let deps = vec![self.dep(g.m(qi - 1), k_steps - 1), self.dep(g.m(qi - 2), k_steps - 1)];
                    return Step { work: vec![], deps };
                }
                let k = g.m(owner(q) - 2 * s as i64);
                let last = s + 1 == k_steps;
                let mut dsts = vec![g.w(g.m(qi + 1), k)];
                if !(last && (r - 1) % 2 == 1) {
                    dsts.push(g.w(g.m(qi + 2), k));
                }
                let deps = if s == 0 { vec![] } else { vec![self.dep(g.m(qi - 2), s - 1)] };
                let work = if cfg.arch > 2 {
                    vec![Work::Reduce { srcs: vec![g.w(q, k)], dsts, elems: g.len(k), scales: Vec::new() }]
                } else {
                    dsts.iter().map(|&d| Work::Copy { src: g.w(q, k), dst: d, bytes: g.bytes(k) }).collect()
                };
                Step { work, deps }
            }
            Algo::Rdh => {
                // Round j pairs q with q ^ d, d = R >> (j + 1) (the halving's partners in
                // reverse): q copies the chunks its partner holds, those ≡ partner mod 2d.
                let d = r >> (s + 1);
                let partner = q ^ d;
                let work = (partner % (2 * d)..r).step_by(2 * d).map(|c| self.copy(partner, q, c)).collect();
                let deps = if s == 0 { self.last_before(partner) } else { vec![self.dep(partner, s - 1)] };
                Step { work, deps }
            }
            Algo::Mesh => {
                let work = (0..r).filter(|&p| p != q).map(|p| self.copy(p, q, owner(p) as usize)).collect();
                let deps = (0..r).filter(|&p| p != q).flat_map(|p| self.last_before(p)).collect();
                Step { work, deps }
            }
            Algo::File | Algo::Hier => Step::default(),
        }
    }

    /// Whether the hop after member `x` crosses a node boundary: every hop of a group across
    /// nodes; in the flat ring, where the next rank is in another node.
    fn boundary_after(&self, cfg: &Config, x: usize) -> bool {
        match self.g.stage {
            // A flat group's members are the ranks.
            Stage::Flat => cfg.node(x) != cfg.node(self.g.l.m(x as i64 + 1)),
            Stage::Channel { .. } => cfg.node(self.g.g(x)) != cfg.node(self.g.g(self.g.m(x as i64 + 1))),
            _ => true,
        }
    }

    /// Bytes of the GCE headers of chunk `c` (`check` has refused an arch without a CCE element
    /// count).
    fn headers(&self, cfg: &Config, c: usize) -> u64 {
        cce_host::gradient::header_bytes(self.g.len(c), cfg.arch).unwrap_or(0)
    }

    fn compress(&self, cfg: &Config, srcs: Vec<u64>, dst: u64, c: usize, scales: Vec<f32>) -> Work {
        Work::Compress { srcs, dst, elems: self.g.len(c), scales, headers: self.headers(cfg, c) }
    }

    fn expand(&self, cfg: &Config, src: u64, dst: u64, c: usize) -> Work {
        Work::Expand { src, dst, elems: self.g.len(c), headers: self.headers(cfg, c) }
    }

    /// The ring all-reduce with GCE over the node boundaries (docs/MODEL.md G6, G7). Step 0: a
    /// member whose successor is in the next node compresses the chunk that successor starts
    /// from (`IN(q)[q] → C(q, q)`); the other members' step 0 is empty. Reduce-scatter step s
    /// (index s + 1), chunk c = q − s − 1: a member whose predecessor is in another node first
    /// expands `C(q−1, c) → RECV(q, c)` and reduces from it; the reduce `[first, IN(q)[c]]`
    /// goes to `P(q, c)`, or, fused with the compression in one EXT combo, to `C(q, c)` when
    /// the successor is in the next node, and on the last step to the owner's `CW(q, c)`,
    /// which it then expands into its own `W(q, c)`. All-gather step s (index R + s): member q
    /// copies `CW(q−1, g) → CW(q, g)` and expands it into `W(q, g)`, so every member expands
    /// the owner's bytes.
    fn gce_step(&self, cfg: &Config, q: usize, t: usize) -> Step {
        let g = &self.g;
        let (r, qi) = (g.n(), q as i64);
        let prev = g.m(qi - 1);
        if t == 0 {
            let work = if self.boundary_after(cfg, q) {
                vec![self.compress(cfg, vec![g.input(q, q)], g.c(q, q), q, Vec::new())]
            } else {
                vec![]
            };
            return Step { work, deps: vec![] };
        }
        if t >= r {
            let s = t - r;
            let c = g.m(group::owner(Algo::Ring, r, prev) as i64 - s as i64);
            let work = vec![
                Work::Copy { src: g.cw(prev, c), dst: g.cw(q, c), bytes: self.headers(cfg, c) + g.len(c) },
                self.expand(cfg, g.cw(q, c), g.w(q, c), c),
            ];
            return Step { work, deps: vec![self.dep(prev, r + s - 1)] };
        }
        let s = t - 1;
        let c = g.m(qi - s as i64 - 1);
        let mut work = Vec::new();
        let from = if self.boundary_after(cfg, prev) {
            work.push(self.expand(cfg, g.c(prev, c), g.recv(q, c), c));
            g.recv(q, c)
        } else if s == 0 {
            g.input(prev, c)
        } else {
            g.p(prev, c)
        };
        let srcs = vec![from, g.input(q, c)];
        let scales = self.scales(cfg, s > 0, 1);
        if s == r - 2 {
            work.push(self.compress(cfg, srcs, g.cw(q, c), c, scales));
            work.push(self.expand(cfg, g.cw(q, c), g.w(q, c), c));
        } else if self.boundary_after(cfg, q) {
            work.push(self.compress(cfg, srcs, g.c(q, c), c, scales));
        } else {
            work.push(Work::Reduce { srcs, dsts: vec![g.p(q, c)], elems: g.len(c), scales });
        }
        // What this reads, prev wrote at its step s (index s; 0 is the first compression).
        let deps = if s == 0 && !self.boundary_after(cfg, prev) { vec![] } else { vec![self.dep(prev, s)] };
        Step { work, deps }
    }

    fn single_step_mesh(&self, cfg: &Config, q: usize) -> Step {
        let g = &self.g;
        let n = g.n();
        let elems: u64 = (0..n).map(|c| g.len(c)).sum();
        let scales = if cfg.op == RedOp::Avg { vec![1.0; n] } else { Vec::new() };
        let srcs = (0..n).map(|p| g.input(p, 0)).collect();
        Step { work: vec![Work::Reduce { srcs, dsts: vec![g.w(q, 0)], elems, scales }], deps: vec![] }
    }

    /// Every work of the phase that reads or writes group chunk `gc` (a single-step mesh: every
    /// work of the block), in closed form per algorithm: the members and steps where the
    /// chunk is, found from the rules of the steps above read backwards.
    pub(super) fn touching(&self, cfg: &Config, gc: usize) -> Vec<Touch> {
        let g = &self.g;
        let (n, c) = (g.n(), gc as i64);
        let of = |x: i64| group::owner_of(g.algo, n, g.m(x));
        // (member, step) whose every work acts on the chunk.
        let mut whole: Vec<(usize, usize)> = Vec::new();
        let mut out = Vec::new();
        match (self.part, g.algo) {
            (_, Algo::File | Algo::Hier) => {}
            (Part::SingleStepMesh, _) => whole.extend((0..n).map(|q| (q, 0))),
            (Part::RingGce, _) => {
                if self.boundary_after(cfg, gc) {
                    whole.push((gc, 0));
                }
                whole.extend((0..n - 1).map(|s| (g.m(c + s as i64 + 1), 1 + s)));
                whole.extend((0..n - 1).map(|s| (g.m(c + s as i64), n + s)));
            }
            (Part::ReduceScatter, Algo::Ring | Algo::Ring2r2w) => {
                whole.extend((0..n - 1).map(|s| (g.m(c + s as i64 + 1), s)));
            }
            (Part::ReduceScatter, Algo::KangaRing) => {
                let three = (n - 1) / 2;
                let q = |s: usize| if s < three { c + 2 + 2 * s as i64 } else { c + 1 + 2 * s as i64 };
                whole.extend((0..self.steps()).map(|s| (g.m(q(s)), s)));
            }
            (Part::ReduceScatter, Algo::Mesh) => whole.push((gc, 0)),
            (Part::ReduceScatter, Algo::Rdh) => {
                for k in 0..self.steps() {
                    let d2 = 2 << k;
                    out.extend((gc % d2..n).step_by(d2).map(|q| Touch {
                        q,
                        t: k,
                        item: gc / d2,
                        work: self.rdh_rs_work(cfg, q, k, gc),
                    }));
                }
            }
            (Part::AllGather { .. }, Algo::Ring | Algo::Ring2r2w) => {
                let skip = self.skip() as i64;
                whole.extend((0..n - 1 - skip as usize).map(|s| (g.m(of(c + s as i64 + skip) as i64 + 1), s)));
            }
            (Part::AllGather { .. }, Algo::KangaRing) => {
                whole.extend((0..(n - 1).div_ceil(2)).map(|s| (of(c + 2 * s as i64), s)));
            }
            (Part::AllGather { .. }, Algo::Rdh) => {
                for j in 0..self.steps() {
                    let d = n >> (j + 1);
                    let d2 = 2 * d;
                    out.extend(((gc % d2) ^ d..n).step_by(d2).map(|q| Touch {
                        q,
                        t: j,
                        item: gc / d2,
                        work: self.copy(q ^ d, q, gc),
                    }));
                }
            }
            (Part::AllGather { .. }, Algo::Mesh) => {
                let p = of(c);
                out.extend((0..n).filter(|&q| q != p).map(|q| Touch {
                    q,
                    t: 0,
                    item: p - usize::from(p > q),
                    work: self.copy(p, q, gc),
                }));
            }
        }
        for (q, t) in whole {
            let works = self.step(cfg, q, t).work.into_iter().enumerate();
            out.extend(works.map(|(item, work)| Touch { q, t, item, work }));
        }
        out
    }

    /// Member `q`'s steps as [`Run`]s, in order: the chunks of each step read off the rules
    /// above, the steps alike but for those chunks' lengths grouped. A channel's pieces are
    /// not an arithmetic progression of lengths: its steps are counted as made.
    pub(super) fn runs(&self, q: usize) -> Vec<Run> {
        let g = &self.g;
        let (n, qi) = (g.n(), q as i64);
        let owner = |p: usize| group::owner(g.algo, n, p) as i64;
        let mut v = Vec::new();
        if g.lane().is_some() {
            return vec![Run::Made { t0: 0, t1: self.steps() }];
        }
        match (self.part, g.algo) {
            (_, Algo::File | Algo::Hier) => {}
            (Part::SingleStepMesh, _) | (Part::AllGather { .. }, Algo::Mesh) => v.push(Run::Made { t0: 0, t1: 1 }),
            (Part::ReduceScatter, Algo::Mesh) => v.push(Run::Steps { t0: 0, t1: 1, c0: qi, dt: 0 }),
            (Part::RingGce, _) => {
                v.push(Run::Steps { t0: 0, t1: 1, c0: qi, dt: 0 });
                edges(&mut v, 1, n, qi - 1, -1);
                edges(&mut v, n, 2 * n - 1, group::owner(Algo::Ring, n, g.m(qi - 1)) as i64, -1);
            }
            (Part::ReduceScatter, Algo::Ring | Algo::Ring2r2w) => edges(&mut v, 0, n - 1, qi - 1, -1),
            (Part::ReduceScatter, Algo::KangaRing) => {
                let three = (n - 1) / 2;
                edges(&mut v, 0, three, qi - 2, -2);
                if n % 2 == 0 {
                    v.push(Run::Steps { t0: three, t1: three + 1, c0: qi - 1 - 2 * three as i64, dt: 0 });
                }
            }
            (Part::ReduceScatter, Algo::Rdh) => {
                for k in 0..self.steps() {
                    let d2 = 2usize << k;
                    v.push(Run::Items { t: k, j0: 0, j1: n / d2, c0: (q % d2) as i64, dj: d2 as i64 });
                }
            }
            (Part::AllGather { .. }, Algo::Ring | Algo::Ring2r2w) => {
                let skip = self.skip();
                let copies = n - 1 - skip;
                edges(&mut v, 0, copies, owner(g.m(qi - 1)) - skip as i64, -1);
                if self.steps() > copies {
                    v.push(Run::Made { t0: copies, t1: copies + 1 });
                }
            }
            (Part::AllGather { .. }, Algo::KangaRing) => {
                let k_steps = (n - 1).div_ceil(2);
                edges(&mut v, 0, k_steps, owner(q), -2);
                v.push(Run::Made { t0: k_steps, t1: k_steps + 1 });
            }
            (Part::AllGather { .. }, Algo::Rdh) => {
                for j in 0..self.steps() {
                    let d = n >> (j + 1);
                    let d2 = 2 * d;
                    v.push(Run::Items { t: j, j0: 0, j1: n / d2, c0: ((q ^ d) % d2) as i64, dj: d2 as i64 });
                }
            }
        }
        v
    }

    /// The work on chunk `c` of member `q`'s step `t`, a step of [`Run::Items`] (RDH's rounds),
    /// made alone (a round's works are many); `None` for the parts without such runs.
    pub(super) fn item(&self, cfg: &Config, q: usize, t: usize, c: usize) -> Option<Work> {
        match (self.part, self.g.algo) {
            (Part::ReduceScatter, Algo::Rdh) => Some(self.rdh_rs_work(cfg, q, t, c)),
            (Part::AllGather { .. }, Algo::Rdh) => Some(self.copy(q ^ (self.g.n() >> (t + 1)), q, c)),
            _ => None,
        }
    }
}

/// How a leg splits the ranks into groups.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Split {
    /// One group of every rank.
    All,
    /// One group per node (a hierarchy's intra-node legs).
    Nodes,
    /// One group per local index, over the block the `intra` reduce-scatter leaves that index
    /// (a hierarchy's inter-node legs).
    Across { intra: Algo },
    /// One group of every rank, channel `k` of the flat ring's ([`Group::channel`]): the legs
    /// of channels 1, 2, … run beside channel 0's, in the same steps.
    Channel { k: usize },
}

/// One leg of a collective: `part` of `algo`, run by every group of `split`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Leg {
    pub(super) part: Part,
    pub(super) algo: Algo,
    pub(super) split: Split,
}

/// A built-in collective as its legs, in order, each with the step every rank starts it at.
/// Legs of the same start run side by side (a ring's channels): a rank's step is theirs joined,
/// in leg order ([`join`]).
#[derive(Clone, Debug)]
pub(super) struct Plan<'a> {
    l: &'a Layout,
    /// Ranks per node (a hierarchy's; a channel's ring turns inside them).
    y: usize,
    /// The flat ring's channels.
    channels: usize,
    legs: Vec<(Leg, usize)>,
}

/// Appends `more` (a leg's step beside the others of the same index) to `step`: its works
/// after, its dependencies those not already there.
pub(super) fn join(step: &mut Step, more: Step) {
    step.work.extend(more.work);
    for d in more.deps {
        if !step.deps.contains(&d) {
            step.deps.push(d);
        }
    }
}

impl<'a> Plan<'a> {
    /// The legs of `cfg` (a built-in algorithm that passed the shape check) over `l`.
    pub(super) fn new(cfg: &Config, l: &'a Layout) -> Plan<'a> {
        let legs = if cfg.algo == Algo::Hier { hier::legs(cfg) } else { flat_legs(cfg) };
        let channels = cfg.channels.max(1);
        let mut plan = Plan { l, y: cfg.model.ranks_per_node.max(1), channels, legs: Vec::new() };
        let (mut base, mut next) = (0, 0);
        for leg in legs {
            if !matches!(leg.split, Split::Channel { k } if k > 0) {
                base = next;
            }
            plan.legs.push((leg, base));
            next = next.max(base + plan.phase(plan.legs.len() - 1, 0).steps());
        }
        plan
    }

    /// The works that the legs before leg `i` beside it put in rank `q`'s step `s` (its
    /// works' first position in the joined step).
    pub(super) fn offset(&self, cfg: &Config, i: usize, q: usize, s: usize) -> usize {
        let base = self.legs[i].1;
        (0..i)
            .rev()
            .take_while(|&j| self.legs[j].1 == base)
            .map(|j| {
                let phase = self.phase(j, q);
                let m = phase.g.member(q).expect("a channel's group holds every rank");
                if s < base + phase.steps() { phase.step(cfg, m, s - base).work.len() } else { 0 }
            })
            .sum()
    }

    /// Whether leg `i + 1` runs beside leg `i`.
    pub(super) fn beside_next(&self, i: usize) -> bool {
        self.legs.get(i + 1).is_some_and(|&(_, base)| base == self.legs[i].1)
    }

    /// How many legs.
    pub(super) fn legs(&self) -> usize {
        self.legs.len()
    }

    /// Leg `i`'s phase of the group that holds rank `q`.
    pub(super) fn phase(&self, i: usize, q: usize) -> Phase<'a> {
        let (leg, base) = self.legs[i];
        let g = match leg.split {
            Split::All => Group::flat(self.l, leg.algo),
            Split::Nodes => Group::intra(self.l, leg.algo, q / self.y, self.y),
            Split::Across { intra } => {
                let i = q % self.y;
                Group::inter(self.l, leg.algo, i, self.y, group::owner(intra, self.y, i))
            }
            Split::Channel { k } => Group::channel(self.l, leg.algo, k, self.channels, self.y),
        };
        Phase { g, part: leg.part, base }
    }

    /// Leg `i`'s phases, one per group.
    pub(super) fn phases(&self, i: usize) -> Vec<Phase<'a>> {
        let firsts: Vec<usize> = match self.legs[i].0.split {
            Split::All | Split::Channel { .. } => vec![0],
            Split::Nodes => (0..self.l.r / self.y).map(|n| n * self.y).collect(),
            Split::Across { .. } => (0..self.y).collect(),
        };
        firsts.into_iter().map(|q| self.phase(i, q)).collect()
    }

    /// Steps per rank.
    pub(super) fn nsteps(&self) -> usize {
        (0..self.legs()).map(|i| self.legs[i].1 + self.phase(i, 0).steps()).max().unwrap_or(0)
    }

    /// Every rank's steps.
    fn steps(&self, cfg: &Config) -> Vec<Vec<Step>> {
        let mut steps = vec![vec![Step::default(); self.nsteps()]; self.l.r];
        let across = |i: usize| matches!(self.legs.get(i).map(|(leg, _)| leg.split), Some(Split::Across { .. }));
        let across_from = (0..self.legs()).find(|&i| across(i)).map(|i| self.legs[i].1);
        for i in 0..self.legs() {
            for phase in self.phases(i) {
                phase.join_into(cfg, &mut steps);
            }
            if across(i) && !across(i + 1) {
                hier::wait_for_inputs(self.l, &mut steps, across_from.unwrap_or(0));
            }
        }
        steps
    }
}

/// Where a walk reads rank `q`'s step `s`: lists made whole, or steps made one at a time
/// ([`Streamed`]).
pub(super) trait StepSource {
    /// Steps per rank.
    fn nsteps(&self) -> usize;
    /// Rank `q`'s step `s`.
    fn step(&self, q: usize, s: usize) -> std::borrow::Cow<'_, Step>;
}

impl StepSource for Vec<Vec<Step>> {
    fn nsteps(&self) -> usize {
        self.first().map_or(0, Vec::len)
    }
    fn step(&self, q: usize, s: usize) -> std::borrow::Cow<'_, Step> {
        std::borrow::Cow::Borrowed(&self[q][s])
    }
}

/// A built-in collective's steps made one at a time, each equal to [`schedule`]'s (a test holds
/// it on every algorithm, hierarchy and collective): what the time model walks so that it holds
/// one step index's steps, not every rank's lists.
pub(super) struct Streamed<'a> {
    cfg: &'a Config,
    plan: Plan<'a>,
    /// The steps of the inter-node legs, `[from, to)`, when a hierarchy has them: the first
    /// waits for every rank whose `T` they read ([`hier::wait_for_inputs`]).
    across: Option<(usize, usize)>,
    nsteps: usize,
}

impl<'a> Streamed<'a> {
    /// The steps of `cfg` (a built-in algorithm that passed the shape check) over `l`.
    pub(super) fn new(cfg: &'a Config, l: &'a Layout) -> Self {
        let plan = Plan::new(cfg, l);
        let span = |i: usize| {
            let (_, base) = plan.legs[i];
            (base, base + plan.phase(i, 0).steps())
        };
        let nsteps = plan.nsteps();
        let across_legs: Vec<usize> =
            (0..plan.legs()).filter(|&i| matches!(plan.legs[i].0.split, Split::Across { .. })).collect();
        let across = match (across_legs.first(), across_legs.last()) {
            (Some(&f), Some(&t)) if span(f).0 > 0 => Some((span(f).0, span(t).1)),
            _ => None,
        };
        Streamed { cfg, plan, across, nsteps }
    }

    /// Rank `q`'s step `s` as its legs make it (joined, [`join`]).
    fn leg_step(&self, q: usize, s: usize) -> Step {
        let covers = |i: usize| {
            let (_, base) = self.plan.legs[i];
            base <= s && s < base + self.plan.phase(i, q).steps()
        };
        let last = (0..self.plan.legs()).rev().find(|&i| covers(i)).expect("every step index lies in a leg");
        let mut first = last;
        while first > 0 && self.plan.legs[first - 1].1 == self.plan.legs[last].1 && covers(first - 1) {
            first -= 1;
        }
        let mut step = Step::default();
        for i in first..=last {
            let phase = self.plan.phase(i, q);
            let member = phase.g.member(q).expect("a rank is a member of its leg's group");
            join(&mut step, phase.step(self.cfg, member, s - phase.base));
        }
        step
    }
}

impl StepSource for Streamed<'_> {
    fn nsteps(&self) -> usize {
        self.nsteps
    }
    fn step(&self, q: usize, s: usize) -> std::borrow::Cow<'_, Step> {
        let mut step = self.leg_step(q, s);
        if let Some((from, to)) = self.across.filter(|&(from, _)| from == s) {
            let later: Vec<Step> = (from + 1..to).map(|t| self.leg_step(q, t)).collect();
            let works = step.work.iter().chain(later.iter().flat_map(|st| &st.work));
            let peers = hier::input_peers(self.plan.l, q, works);
            hier::add_input_waits(&mut step, peers, from);
        }
        std::borrow::Cow::Owned(step)
    }
}

/// A flat collective's legs: the GCE ring, or the reduce-scatter and the all-gather its
/// collective runs.
fn flat_legs(cfg: &Config) -> Vec<Leg> {
    if cfg.compress == Compress::Gce {
        // `check` admits only the ring all-reduce.
        return vec![Leg { part: Part::RingGce, algo: Algo::Ring, split: Split::All }];
    }
    let channels = cfg.channels.max(1);
    let legs = |part| {
        (0..channels).map(move |k| {
            let split = if channels == 1 { Split::All } else { Split::Channel { k } };
            Leg { part, algo: cfg.algo, split }
        })
    };
    let mut v = Vec::new();
    if cfg.collective != Collective::AllGather {
        v.extend(legs(Part::ReduceScatter));
    }
    if cfg.collective != Collective::ReduceScatter {
        v.extend(legs(Part::AllGather { after_rs: cfg.collective == Collective::AllReduce }));
    }
    v
}

/// The chunk each rank owns after the reduce-scatter (and starts from in an all-gather alone):
/// a hierarchy's fine chunk ([`hier::owners`]).
pub(super) fn owners(cfg: &Config, l: &Layout) -> Vec<usize> {
    if cfg.algo == Algo::Hier { hier::owners(cfg, l) } else { group::owners(cfg.algo, l.r) }
}

/// The schedule of every rank, and the chunk each rank owns after the reduce-scatter.
pub(super) fn schedule(cfg: &Config, l: &Layout) -> (Vec<Vec<Step>>, Vec<usize>) {
    (Plan::new(cfg, l).steps(cfg), owners(cfg, l))
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use cce_format::SdmaDtype;

    use super::*;

    fn plan(algo: Algo, ranks: usize, collective: Collective) -> (Layout, Vec<Vec<Step>>) {
        let mut cfg = Config::new(ranks, algo, RedOp::Add, SdmaDtype::Bf16, 1000);
        cfg.collective = collective;
        let l = Layout::new(ranks, cfg.elems, 2);
        let (steps, _) = schedule(&cfg, &l);
        (l, steps)
    }

    fn cases() -> Vec<Config> {
        let mut v = Vec::new();
        for algo in Algo::ALL {
            for ranks in 2..=9 {
                for c in [Collective::AllReduce, Collective::ReduceScatter, Collective::AllGather] {
                    if (algo == Algo::Ring2r2w && ranks < 3) || algo.refusal(ranks, 3).is_some() {
                        continue;
                    }
                    let mut cfg = Config::new(ranks, algo, RedOp::Add, SdmaDtype::Bf16, 1000);
                    cfg.collective = c;
                    v.push(cfg);
                }
            }
        }
        // Every hierarchy over 2-4 nodes of 2-4 ranks, every collective.
        for intra in Algo::ALL {
            for inter in crate::collective::Inter::ALL {
                for (x, y) in [(2, 2), (2, 3), (3, 2), (4, 4), (2, 5)] {
                    for c in Collective::ALL {
                        let mut cfg = Config::new(x * y, Algo::Hier, RedOp::Add, SdmaDtype::Bf16, 1000);
                        cfg.collective = c;
                        cfg.model.ranks_per_node = y;
                        cfg.hier = crate::collective::Hier { intra, inter };
                        if crate::collective::budget_shape(&cfg).is_ok() {
                            v.push(cfg);
                        }
                    }
                }
            }
        }
        // Hierarchies with GCE on the inter-node ring.
        for intra in Algo::ALL {
            for (x, y) in [(2, 2), (3, 2), (4, 3)] {
                let mut cfg = Config::new(x * y, Algo::Hier, RedOp::Add, SdmaDtype::Bf16, 1000);
                cfg.model.ranks_per_node = y;
                cfg.hier = crate::collective::Hier { intra, inter: crate::collective::Inter::Ring };
                cfg.compress = Compress::Gce;
                if crate::collective::budget_shape(&cfg).is_ok() {
                    v.push(cfg);
                }
            }
        }
        // The flat rings of 2-4 channels, one node or nodes of 2-4 ranks, the last one short.
        for algo in [Algo::Ring, Algo::Ring2r2w] {
            for (ranks, per_node, channels) in [(4, 4, 2), (6, 2, 2), (6, 3, 3), (7, 4, 4), (3, 3, 3), (8, 4, 4)] {
                for c in Collective::ALL {
                    let mut cfg = Config::new(ranks, algo, RedOp::Add, SdmaDtype::Bf16, 1000);
                    (cfg.collective, cfg.channels, cfg.model.ranks_per_node) = (c, channels, per_node);
                    v.push(cfg);
                }
            }
        }
        // The ring all-reduce with GCE, nodes of 1, 2 and 3 ranks.
        for ranks in 2..=9 {
            for per_node in 1..=3 {
                let mut cfg = Config::new(ranks, Algo::Ring, RedOp::Add, SdmaDtype::Bf16, 1000);
                cfg.compress = Compress::Gce;
                cfg.model.ranks_per_node = per_node;
                v.push(cfg);
            }
        }
        v
    }

    fn steps_of(cfg: &Config) -> Vec<Vec<Step>> {
        schedule(cfg, &crate::collective::lowered::layout(cfg)).0
    }

    fn name(cfg: &Config) -> String {
        format!(
            "{:?} {:?} R={} {:?} {} per node {}",
            cfg.algo,
            cfg.hier,
            cfg.ranks,
            cfg.collective,
            cfg.compress.name(),
            cfg.model.ranks_per_node
        )
    }

    /// The ring's reduce-scatter, restated from the module docs: at step s rank r reduces
    /// chunk c = r − s − 1 from `[s = 0 ? IN(r−1)[c] : P(r−1, c), IN(r)[c]]` into `P(r, c)`, the
    /// last step into `W(r, c)`; then rank r copies `W(r−1, r−s) → W(r, r−s)`.
    #[test]
    #[allow(clippy::needless_range_loop, reason = "rank indices take part in the chunk arithmetic")]
    fn the_ring_follows_the_documented_order() {
        let r = 5;
        let (l, steps) = plan(Algo::Ring, r, Collective::AllReduce);
        let m = |x: i64| x.rem_euclid(r as i64) as usize;
        for q in 0..r {
            assert_eq!(steps[q].len(), 2 * (r - 1));
            for s in 0..r - 1 {
                let c = m(q as i64 - s as i64 - 1);
                let prev = m(q as i64 - 1);
                let first = if s == 0 { l.input(prev, c) } else { l.p(prev, c) };
                let dst = if s == r - 2 { l.w(q, c) } else { l.p(q, c) };
                match &steps[q][s].work[..] {
                    [Work::Reduce { srcs, dsts, elems, .. }] => {
                        assert_eq!(
                            (srcs.clone(), dsts.clone(), *elems),
                            (vec![first, l.input(q, c)], vec![dst], l.len(c))
                        );
                    }
                    w => panic!("rank {q} step {s}: {w:?}"),
                }
            }
            for s in 0..r - 1 {
                let k = m(q as i64 - s as i64);
                let w = &steps[q][r - 1 + s].work;
                assert_eq!(w, &vec![Work::Copy { src: l.w(m(q as i64 - 1), k), dst: l.w(q, k), bytes: l.len(k) * 2 }]);
            }
        }
    }

    /// RDH, restated from the module docs: at round k (d = 2^k) rank q reduces each chunk c of
    /// its set (c ≡ q mod 2d) from `[value(q & !d, c), value(q | d, c)]`, a value being
    /// `IN(x)[c]` at round 0 and x's partial of round k−1 after; every rank ends with chunk q.
    /// Then at gather round j (d = R >> (j+1)) it copies the chunks its partner q ^ d holds.
    #[test]
    #[allow(clippy::needless_range_loop, reason = "rank indices take part in the pairing arithmetic")]
    fn rdh_follows_the_documented_order() {
        for r in [2usize, 4, 8, 16] {
            let (l, steps) = plan(Algo::Rdh, r, Collective::AllReduce);
            let rounds = r.trailing_zeros() as usize;
            // Which partial buffer holds x's value of chunk c after round k.
            let mut partial = BTreeMap::new();
            for k in 0..rounds {
                let d = 1 << k;
                let mut written = BTreeMap::new();
                for q in 0..r {
                    let (lo, hi) = (q & !d, q | d);
                    let value = |x: usize, c: usize| if k == 0 { l.input(x, c) } else { partial[&(x, k - 1, c)] };
                    let set: Vec<usize> = (0..r).filter(|&c| (c ^ q) & (2 * d - 1) == 0).collect();
                    assert_eq!(set.len(), r / (2 * d));
                    let work = &steps[q][k].work;
                    assert_eq!(work.len(), set.len(), "R={r} rank {q} round {k}");
                    for (w, &c) in work.iter().zip(&set) {
                        let Work::Reduce { srcs, dsts, elems, .. } = w else { panic!("{w:?}") };
                        assert_eq!(
                            (srcs.clone(), *elems),
                            (vec![value(lo, c), value(hi, c)], l.len(c)),
                            "R={r} q={q} k={k} c={c}"
                        );
                        if k + 1 == rounds {
                            assert_eq!((c, dsts.clone()), (q, vec![l.w(q, q)]));
                        } else {
                            written.insert((q, k, c), dsts[0]);
                        }
                    }
                }
                partial.extend(written);
            }
            for q in 0..r {
                let mut have = BTreeSet::from([q]);
                for j in 0..rounds {
                    let p = q ^ (r >> (j + 1));
                    let got: BTreeSet<usize> = steps[q][rounds + j]
                        .work
                        .iter()
                        .map(|w| match w {
                            Work::Copy { src, dst, .. } => {
                                let c = (0..r).find(|&c| l.w(p, c) == *src).expect("a copy from the partner's W");
                                assert_eq!(*dst, l.w(q, c));
                                c
                            }
                            w => panic!("{w:?}"),
                        })
                        .collect();
                    // The partner holds what q held, mirrored in bit d.
                    let theirs: BTreeSet<usize> = have.iter().map(|&c| c ^ (r >> (j + 1))).collect();
                    assert_eq!(got, theirs, "R={r} rank {q} gather round {j}");
                    have.extend(got);
                }
                assert_eq!(have.len(), r);
            }
        }
    }

    /// Every buffer a step reads that some step writes was written by a step it waits for,
    /// directly or through others (its own queue runs its steps in order): the schedule never
    /// reads what its writer may not have finished. This is also what a transport between
    /// processes relies on to know when to move the bytes.
    #[test]
    fn every_read_waits_for_its_writer() {
        for cfg in cases() {
            let steps = steps_of(&cfg);
            // Writer of each buffer: (rank, step, work item).
            let mut writer = BTreeMap::new();
            for (q, st) in steps.iter().enumerate() {
                for (s, step) in st.iter().enumerate() {
                    for (i, w) in step.work.iter().enumerate() {
                        for a in w.writes() {
                            writer.insert(a, (q, s, i));
                        }
                    }
                }
            }
            for (q, st) in steps.iter().enumerate() {
                for (s, step) in st.iter().enumerate() {
                    // Everything (q, s) waits for, transitively.
                    let mut seen = BTreeSet::new();
                    let mut todo = vec![(q, s)];
                    while let Some((p, t)) = todo.pop() {
                        if !seen.insert((p, t)) {
                            continue;
                        }
                        if t > 0 {
                            todo.push((p, t - 1));
                        }
                        todo.extend(steps[p][t].deps.iter().copied());
                    }
                    for (i, w) in step.work.iter().enumerate() {
                        for a in w.reads() {
                            let Some(&(p, t, j)) = writer.get(&a) else { continue };
                            // An earlier item of the same step runs first on the same queue.
                            let earlier_here = (p, t) == (q, s) && j < i;
                            assert!(
                                earlier_here || ((p, t) != (q, s) && seen.contains(&(p, t))),
                                "{}: rank {q} step {s} reads 0x{a:x}, written by {:?}",
                                name(&cfg),
                                (p, t, j)
                            );
                        }
                    }
                }
            }
        }
    }

    /// The closed-form size of every schedule equals the schedule made, on arch 2 and 3.
    #[test]
    fn sizes_match_the_schedules() {
        use crate::collective::size::{ScheduleSize, schedule_size};
        for mut cfg in cases() {
            for arch in [2, 3] {
                if arch == 2
                    && (cfg.algo == Algo::Ring2r2w || cfg.hier.intra == Algo::Ring2r2w || cfg.compress == Compress::Gce)
                {
                    continue;
                }
                cfg.arch = arch;
                let made = ScheduleSize::of(&steps_of(&cfg));
                assert_eq!(schedule_size(&cfg), Some(made), "{} arch {arch}", name(&cfg));
            }
        }
    }

    /// Each buffer is written by one step only (module docs), so no step overwrites a buffer
    /// another rank may still read.
    #[test]
    fn every_buffer_is_written_once() {
        for cfg in cases() {
            let steps = steps_of(&cfg);
            let mut seen = BTreeSet::new();
            for st in &steps {
                for step in st {
                    for a in step.work.iter().flat_map(Work::writes) {
                        assert!(seen.insert(a), "{}: 0x{a:x} written twice", name(&cfg));
                    }
                }
            }
        }
    }

    /// The GCE ring, restated from `ring_gce`'s docs for 8 ranks in nodes of 4: only ranks 3
    /// and 7 (before a boundary) compress on step 0 and reduce into `C`; ranks 4 and 0 expand
    /// before every reduce; every owner compresses its final chunk into `CW` and expands it;
    /// the all-gather moves only compressed bytes.
    #[test]
    #[allow(clippy::needless_range_loop, reason = "rank indices take part in the chunk arithmetic")]
    fn the_gce_ring_compresses_at_the_node_boundaries() {
        let r = 8;
        let mut cfg = Config::new(r, Algo::Ring, RedOp::Add, SdmaDtype::Bf16, 100_000);
        cfg.compress = Compress::Gce;
        cfg.model.ranks_per_node = 4;
        let l = Layout::new(r, cfg.elems, 2);
        let steps = schedule(&cfg, &l).0;
        let m = |x: i64| x.rem_euclid(r as i64) as usize;
        let h = |c: usize| cce_host::gradient::header_bytes(l.len(c), 3).unwrap();
        for q in 0..r {
            assert_eq!(steps[q].len(), 1 + 2 * (r - 1));
            let before = q == 3 || q == 7;
            let after = q == 4 || q == 0;
            let first = &steps[q][0].work;
            if before {
                assert_eq!(
                    first,
                    &vec![Work::Compress {
                        srcs: vec![l.input(q, q)],
                        dst: l.c(q, q),
                        elems: l.len(q),
                        scales: vec![],
                        headers: h(q)
                    }]
                );
            } else {
                assert!(first.is_empty());
            }
            for s in 0..r - 1 {
                let c = m(q as i64 - s as i64 - 1);
                let prev = m(q as i64 - 1);
                let w = &steps[q][1 + s].work;
                let (head, from) = if after {
                    assert_eq!(
                        w[0],
                        Work::Expand { src: l.c(prev, c), dst: l.recv(q, c), elems: l.len(c), headers: h(c) }
                    );
                    (1, l.recv(q, c))
                } else {
                    (0, if s == 0 { l.input(prev, c) } else { l.p(prev, c) })
                };
                let srcs = vec![from, l.input(q, c)];
                match (&w[head..], s == r - 2) {
                    ([Work::Compress { srcs: got, dst, .. }, Work::Expand { src, dst: out, .. }], true) => {
                        assert_eq!((got, *dst, *src, *out), (&srcs, l.cw(q, c), l.cw(q, c), l.w(q, c)));
                    }
                    ([Work::Compress { srcs: got, dst, .. }], false) if before => {
                        assert_eq!((got, *dst), (&srcs, l.c(q, c)));
                    }
                    ([Work::Reduce { srcs: got, dsts, .. }], false) if !before => {
                        assert_eq!((got, dsts), (&srcs, &vec![l.p(q, c)]));
                    }
                    (w, _) => panic!("rank {q} step {s}: {w:?}"),
                }
            }
            for s in 0..r - 1 {
                let g = m(q as i64 - s as i64);
                let prev = m(q as i64 - 1);
                assert_eq!(
                    steps[q][r + s].work,
                    vec![
                        Work::Copy { src: l.cw(prev, g), dst: l.cw(q, g), bytes: h(g) + l.len(g) },
                        Work::Expand { src: l.cw(q, g), dst: l.w(q, g), elems: l.len(g), headers: h(g) }
                    ]
                );
            }
        }
    }
}
