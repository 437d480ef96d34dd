//! The schedule, pure: for every rank and step, the work (reduces and copies between buffers
//! of the [`Layout`]) and the (rank, step) pairs it waits for. Nothing here touches memory or
//! rings; the reduction order it encodes is the one the module docs of [`super`] state.

use super::buffers::Layout;
use super::config::{Algo, Collective, Compress, Config, RedOp};
use super::group::{self, Group};
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

/// The chunk each rank owns after the reduce-scatter (and starts from in an all-gather alone).
fn owners(cfg: &Config, l: &Layout) -> Vec<usize> {
    group::owners(cfg.algo, l.r)
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

/// Appends group `g`'s reduce-scatter to its members' steps (each member's steps so far all
/// of the same count, which the dependencies count from); its final chunks go to
/// [`Group::result`].
#[allow(clippy::needless_range_loop, reason = "member indices take part in the chunk arithmetic")]
pub(super) fn reduce_scatter(cfg: &Config, g: &Group, steps: &mut [Vec<Step>]) {
    let r = g.n();
    let base = steps[g.g(0)].len();
    let inv = g.input_scale;
    let avg = cfg.op == RedOp::Avg;
    let sc = |partial: bool, n_in: usize| -> Vec<f32> {
        if !avg {
            return Vec::new();
        }
        let mut v = vec![if partial { 1.0 } else { inv }];
        v.extend(std::iter::repeat_n(inv, n_in));
        v
    };
    let dep = |p: usize, t: usize| (g.g(p), base + t);
    for q in 0..r {
        if !g.keeps(q) {
            continue;
        }
        let qi = q as i64;
        let mine = &mut steps[g.g(q)];
        match g.algo {
            Algo::Ring | Algo::Ring2r2w => {
                let two = g.algo == Algo::Ring2r2w;
                for s in 0..r - 1 {
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
                    let deps = if s == 0 { vec![] } else { vec![dep(prev, s - 1)] };
                    mine.push(Step {
                        work: vec![reduce(g, c, vec![first_src, g.input(q, c)], dsts, sc(s > 0, 1))],
                        deps,
                    });
                }
            }
            Algo::KangaRing => {
                let three = (r - 1) / 2; // 3-source steps
                for s in 0..three {
                    let c = g.m(qi - 2 - 2 * s as i64);
                    let last = s + 1 == three && r % 2 == 1;
                    let p2 = g.m(qi - 2);
                    let first_src = if s == 0 { g.input(p2, c) } else { g.p(p2, c) };
                    let dst = if last { g.result(q, c) } else { g.p(q, c) };
                    let deps = if s == 0 { vec![] } else { vec![dep(p2, s - 1)] };
                    let srcs = vec![first_src, g.input(g.m(qi - 1), c), g.input(q, c)];
                    mine.push(Step { work: vec![reduce(g, c, srcs, vec![dst], sc(s > 0, 2))], deps });
                }
                if r % 2 == 0 {
                    let s = three;
                    let c = g.m(qi - 1 - 2 * s as i64);
                    let p1 = g.m(qi - 1);
                    let first_src = if s == 0 { g.input(p1, c) } else { g.p(p1, c) };
                    let deps = if s == 0 { vec![] } else { vec![dep(p1, s - 1)] };
                    mine.push(Step {
                        work: vec![reduce(g, c, vec![first_src, g.input(q, c)], vec![g.result(q, c)], sc(s > 0, 1))],
                        deps,
                    });
                }
            }
            Algo::Rdh => {
                // Round k pairs q with q ^ d, d = 2^k (the nearest partner first, with the
                // most data); q keeps the chunks of its set whose bit d matches its own and
                // reduces each from both ranks' values, the rank with bit d clear first.
                for k in 0..r.trailing_zeros() as usize {
                    let d = 1usize << k;
                    let partner = q ^ d;
                    let (lo, hi) = (q.min(partner), q.max(partner));
                    let value = |x: usize, c: usize| if k == 0 { g.input(x, c) } else { g.p(x, rdh_slot(r, k - 1, c)) };
                    let work = (0..r)
                        .filter(|&c| c % (2 * d) == q % (2 * d))
                        .map(|c| {
                            let dst = if 2 * d == r { g.result(q, c) } else { g.p(q, rdh_slot(r, k, c)) };
                            let scales = match (avg, k) {
                                (false, _) => Vec::new(),
                                (true, 0) => vec![inv, inv],
                                (true, _) => vec![1.0, 1.0],
                            };
                            reduce(g, c, vec![value(lo, c), value(hi, c)], vec![dst], scales)
                        })
                        .collect();
                    let deps = if k == 0 { vec![] } else { vec![dep(partner, k - 1)] };
                    mine.push(Step { work, deps });
                }
            }
            // A user's schedule is lowered from its plan (`user`), not scheduled here; a
            // hierarchy is made of groups that each run one of the others.
            Algo::File | Algo::Hier => {}
            Algo::Mesh => {
                let srcs = (0..r).map(|p| g.input(p, q)).collect();
                let scales = if avg { vec![inv; r] } else { Vec::new() };
                mine.push(Step { work: vec![reduce(g, q, srcs, vec![g.result(q, q)], scales)], deps: vec![] });
            }
        }
    }
}

/// Appends group `g`'s all-gather to its members' steps. `owner[q]` is the chunk member q
/// holds in its output when the all-gather starts; `after_rs` says that a reduce-scatter of the
/// same group ran just before (ring-2R2W's then delivered a chunk already).
pub(super) fn all_gather(cfg: &Config, g: &Group, steps: &mut [Vec<Step>], owner: &[usize], after_rs: bool) {
    let r = g.n();
    let base = steps[g.g(0)].len();
    let copy = |src: u64, dst: u64, c: usize| Work::Copy { src, dst, bytes: g.bytes(c) };
    let dep = |p: usize, t: usize| (g.g(p), base + t);
    let last_rs = |q: usize| -> Vec<(usize, usize)> { if base == 0 { vec![] } else { vec![(g.g(q), base - 1)] } };
    for q in 0..r {
        if !g.keeps(q) {
            continue;
        }
        let qi = q as i64;
        let mine = &mut steps[g.g(q)];
        match g.algo {
            Algo::Ring | Algo::Ring2r2w => {
                // 2R2W already delivered the neighbour's final chunk with its last reduce.
                let skip = usize::from(g.algo == Algo::Ring2r2w && after_rs && g.replicates_result());
                let prev = g.m(qi - 1);
                for s in 0..r - 1 - skip {
                    let c = g.m(owner[prev] as i64 - s as i64 - skip as i64);
                    let mut deps = if s == 0 { last_rs(prev) } else { vec![dep(prev, s - 1)] };
                    if skip == 1 && s == 0 {
                        // W(prev, c) arrived from prev's predecessor's last reduce.
                        deps.extend(last_rs(g.m(qi - 2)));
                    }
                    mine.push(Step { work: vec![copy(g.w(prev, c), g.w(q, c), c)], deps });
                }
                if skip == 1 && r == 2 {
                    // Nothing left to gather, but the output is complete only when the
                    // neighbour's last reduce wrote it: an empty step that waits for it.
                    mine.push(Step { work: vec![], deps: last_rs(prev) });
                }
            }
            Algo::KangaRing => {
                let k_steps = (r - 1).div_ceil(2);
                for s in 0..k_steps {
                    let k = g.m(owner[q] as i64 - 2 * s as i64);
                    let last = s + 1 == k_steps;
                    let mut dsts = vec![g.w(g.m(qi + 1), k)];
                    if !(last && (r - 1) % 2 == 1) {
                        dsts.push(g.w(g.m(qi + 2), k));
                    }
                    let deps = if s == 0 { vec![] } else { vec![dep(g.m(qi - 2), s - 1)] };
                    let work = if cfg.arch > 2 {
                        vec![Work::Reduce { srcs: vec![g.w(q, k)], dsts, elems: g.len(k), scales: Vec::new() }]
                    } else {
                        dsts.iter().map(|&d| copy(g.w(q, k), d, k)).collect()
                    };
                    mine.push(Step { work, deps });
                }
                // The last chunks arrive from ranks q-1 and q-2: wait for them before finishing.
                if k_steps > 0 {
                    mine.push(Step {
                        work: vec![],
                        deps: vec![dep(g.m(qi - 1), k_steps - 1), dep(g.m(qi - 2), k_steps - 1)],
                    });
                }
            }
            Algo::Rdh => {
                // Round j pairs q with q ^ d, d = R >> (j + 1) (the halving's partners in
                // reverse): q copies the chunks its partner holds, those ≡ partner mod 2d.
                let rounds = r.trailing_zeros() as usize;
                for j in 0..rounds {
                    let d = r >> (j + 1);
                    let partner = q ^ d;
                    let work = (0..r)
                        .filter(|&c| c % (2 * d) == partner % (2 * d))
                        .map(|c| copy(g.w(partner, c), g.w(q, c), c))
                        .collect();
                    let deps = if j == 0 { last_rs(partner) } else { vec![dep(partner, j - 1)] };
                    mine.push(Step { work, deps });
                }
            }
            Algo::File | Algo::Hier => {}
            Algo::Mesh => {
                let work =
                    (0..r).filter(|&p| p != q).map(|p| copy(g.w(p, owner[p]), g.w(q, owner[p]), owner[p])).collect();
                let deps = (0..r).filter(|&p| p != q).flat_map(last_rs).collect();
                mine.push(Step { work, deps });
            }
        }
    }
}

/// The ring all-reduce with GCE over the node boundaries (docs/MODEL.md G6, G7). Step 0: a rank
/// whose successor is in the next node compresses the chunk that successor starts from
/// (`IN(q)[q] → C(q, q)`); the other ranks' step 0 is empty. Reduce-scatter step s (index
/// s + 1), chunk c = q − s − 1: a rank whose predecessor is in another node first expands
/// `C(q−1, c) → RECV(q, c)` and reduces from it; the reduce `[first, IN(q)[c]]` goes to `P(q, c)`,
/// or, fused with the compression in one EXT combo, to `C(q, c)` when the successor is in the
/// next node, and on the last step to the owner's `CW(q, c)`, which it then expands into its
/// own `W(q, c)`. All-gather step s: rank q copies `CW(q−1, g) → CW(q, g)` and expands it into
/// `W(q, g)`, so every rank expands the owner's bytes.
#[allow(clippy::needless_range_loop, reason = "member indices take part in the chunk arithmetic")]
pub(super) fn ring_gce(cfg: &Config, g: &Group, steps: &mut [Vec<Step>], boundary_after: &dyn Fn(usize) -> bool) {
    let r = g.n();
    let base = steps[g.g(0)].len();
    let inv = g.input_scale;
    let sc = |partial: bool| -> Vec<f32> {
        if cfg.op != RedOp::Avg {
            return Vec::new();
        }
        vec![if partial { 1.0 } else { inv }, inv]
    };
    // `check` has refused an arch without a CCE element count.
    let headers = |c: usize| cce_host::gradient::header_bytes(g.len(c), cfg.arch).unwrap_or(0);
    let compress = |srcs: Vec<u64>, dst: u64, c: usize, scales: Vec<f32>| Work::Compress {
        srcs,
        dst,
        elems: g.len(c),
        scales,
        headers: headers(c),
    };
    let expand = |src: u64, dst: u64, c: usize| Work::Expand { src, dst, elems: g.len(c), headers: headers(c) };
    let dep = |p: usize, t: usize| (g.g(p), base + t);
    for q in 0..r {
        if !g.keeps(q) {
            continue;
        }
        let qi = q as i64;
        let prev = g.m(qi - 1);
        let mine = &mut steps[g.g(q)];
        let first =
            if boundary_after(q) { vec![compress(vec![g.input(q, q)], g.c(q, q), q, Vec::new())] } else { vec![] };
        mine.push(Step { work: first, deps: vec![] });
        for s in 0..r - 1 {
            let c = g.m(qi - s as i64 - 1);
            let mut work = Vec::new();
            let from = if boundary_after(prev) {
                work.push(expand(g.c(prev, c), g.recv(q, c), c));
                g.recv(q, c)
            } else if s == 0 {
                g.input(prev, c)
            } else {
                g.p(prev, c)
            };
            let srcs = vec![from, g.input(q, c)];
            if s == r - 2 {
                work.push(compress(srcs, g.cw(q, c), c, sc(s > 0)));
                work.push(expand(g.cw(q, c), g.w(q, c), c));
            } else if boundary_after(q) {
                work.push(compress(srcs, g.c(q, c), c, sc(s > 0)));
            } else {
                work.push(Work::Reduce { srcs, dsts: vec![g.p(q, c)], elems: g.len(c), scales: sc(s > 0) });
            }
            // What this reads, prev wrote at its step s (index s; 0 is the first compression).
            let deps = if s == 0 && !boundary_after(prev) { vec![] } else { vec![dep(prev, s)] };
            mine.push(Step { work, deps });
        }
    }
    let owner = group::owners(Algo::Ring, r);
    for q in 0..r {
        if !g.keeps(q) {
            continue;
        }
        let prev = g.m(q as i64 - 1);
        for s in 0..r - 1 {
            let c = g.m(owner[prev] as i64 - s as i64);
            let work = vec![
                Work::Copy { src: g.cw(prev, c), dst: g.cw(q, c), bytes: headers(c) + g.len(c) },
                expand(g.cw(q, c), g.w(q, c), c),
            ];
            steps[g.g(q)].push(Step { work, deps: vec![dep(prev, r + s - 1)] });
        }
    }
}

/// The schedule of every rank, and the chunk each rank owns after the reduce-scatter.
pub(super) fn schedule(cfg: &Config, l: &Layout) -> (Vec<Vec<Step>>, Vec<usize>) {
    schedule_below(cfg, l, l.r)
}

/// [`schedule`] with only the steps of ranks below `keep` made (the others' lists empty): a
/// symmetric model's representatives ([`super::symmetry`]).
pub(super) fn schedule_below(cfg: &Config, l: &Layout, keep: usize) -> (Vec<Vec<Step>>, Vec<usize>) {
    if cfg.algo == Algo::Hier {
        return hier::schedule(cfg, l, keep);
    }
    if cfg.compress == Compress::Gce {
        // `check` admits only the ring all-reduce.
        let mut steps = vec![Vec::new(); l.r];
        let boundary_after = |q: usize| cfg.node(q) != cfg.node(l.m(q as i64 + 1));
        ring_gce(cfg, &Group::flat(l, Algo::Ring).keeping(keep), &mut steps, &boundary_after);
        return (steps, owners(cfg, l));
    }
    let g = Group::flat(l, cfg.algo).keeping(keep);
    let owner = owners(cfg, l);
    let mut steps = vec![Vec::new(); l.r];
    if cfg.collective != Collective::AllGather {
        reduce_scatter(cfg, &g, &mut steps);
    }
    if cfg.collective != Collective::ReduceScatter {
        all_gather(cfg, &g, &mut steps, &owner, cfg.collective == Collective::AllReduce);
    }
    (steps, owner)
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
