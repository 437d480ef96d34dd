//! The slice against the whole schedule: its works are exactly the works the element's data
//! flows through, and its counts are the planned ones, on every algorithm, hierarchy,
//! collective and GCE ring over small rank counts and node shapes, uneven chunks and chunks
//! shorter than one element.

use std::collections::{BTreeMap, BTreeSet};

use cce_format::SdmaDtype;

use super::*;
use crate::collective::config::{Algo, Collective, Compress, Hier, Inter, RedOp};
use crate::collective::lowered::layout;
use crate::collective::schedule::{Step, schedule};

/// Every configuration the tests cover: every flat algorithm at 2–16 ranks and every
/// collective; every hierarchy over several node shapes and every collective; GCE rings (flat,
/// nodes of 1–4 ranks; and between the nodes of a hierarchy); each with `avg` too, on arch 3
/// and (where it runs) arch 2; at element counts that split evenly, unevenly, and below one
/// per chunk.
fn cases() -> Vec<Config> {
    let mut base = Vec::new();
    for algo in Algo::ALL {
        for ranks in 2..=16 {
            for c in Collective::ALL {
                let mut cfg = Config::new(ranks, algo, RedOp::Add, SdmaDtype::Bf16, 0);
                cfg.collective = c;
                base.push(cfg);
            }
        }
    }
    for intra in Algo::ALL {
        for inter in Inter::ALL {
            for (x, y) in [(2, 2), (2, 3), (3, 2), (4, 4), (2, 5), (4, 2)] {
                for c in Collective::ALL {
                    let mut cfg = Config::new(x * y, Algo::Hier, RedOp::Add, SdmaDtype::Bf16, 0);
                    cfg.collective = c;
                    cfg.model.ranks_per_node = y;
                    cfg.hier = Hier { intra, inter };
                    base.push(cfg.clone());
                    if inter == Inter::Ring && c == Collective::AllReduce {
                        cfg.compress = Compress::Gce;
                        base.push(cfg);
                    }
                }
            }
        }
    }
    for ranks in 2..=12 {
        for per_node in 1..=4 {
            let mut cfg = Config::new(ranks, Algo::Ring, RedOp::Add, SdmaDtype::Bf16, 0);
            cfg.compress = Compress::Gce;
            cfg.model.ranks_per_node = per_node;
            base.push(cfg);
        }
    }
    // The flat rings of several channels, in whole and partial nodes.
    for algo in [Algo::Ring, Algo::Ring2r2w] {
        for (ranks, per_node, channels) in [(2, 2, 2), (4, 2, 2), (6, 3, 3), (8, 4, 3), (7, 3, 2), (5, 5, 4), (9, 4, 5)]
        {
            for c in Collective::ALL {
                let mut cfg = Config::new(ranks, algo, RedOp::Add, SdmaDtype::Bf16, 0);
                (cfg.collective, cfg.channels, cfg.model.ranks_per_node) = (c, channels, per_node);
                base.push(cfg);
            }
        }
    }
    let mut out = Vec::new();
    for cfg in base {
        for (op, arch) in [(RedOp::Add, 3), (RedOp::Avg, 3), (RedOp::Add, 2)] {
            for elems in [cfg.ranks as u64 * 12, 1000 + cfg.ranks as u64, 5] {
                let mut c = cfg.clone();
                (c.op, c.arch, c.elems) = (op, arch, elems);
                if crate::collective::budget_shape(&c).is_ok() {
                    out.push(c);
                }
            }
        }
    }
    out
}

fn name(cfg: &Config) -> String {
    format!(
        "{} {:?} R={} {} {} {} arch {} per node {} elems {}",
        cfg.algo.name(),
        cfg.hier,
        cfg.ranks,
        cfg.collective.name(),
        cfg.op.name(),
        cfg.compress.name(),
        cfg.arch,
        cfg.model.ranks_per_node,
        cfg.elems
    )
}

/// The elements told: the first and last, each chunk's (each channel's piece's) first and
/// last, one inside.
fn elements(l: &Layout, channels: usize) -> Vec<u64> {
    let mut v = BTreeSet::from([0, l.n - 1, l.n / 2]);
    for c in 0..l.r {
        for k in 0..=channels as u64 {
            let s = l.start(c) + l.len(c) * k / channels as u64;
            v.extend([s.saturating_sub(1), s]);
        }
    }
    v.into_iter().filter(|&e| e < l.n).collect()
}

/// The fine chunk that holds element `e`.
fn chunk_of(l: &Layout, e: u64) -> usize {
    (0..l.r).rev().find(|&c| l.start(c) <= e).unwrap()
}

/// The (rank, step, item) of every work of `steps` that element `e`'s data flows through,
/// found by following its addresses from every rank's input through the works, by step then
/// rank (and through the copies before the run): independent of the closed forms.
fn carriers(cfg: &Config, l: &Layout, steps: &[Vec<Step>], owner: &[usize], e: u64) -> BTreeSet<(usize, usize, usize)> {
    let size = l.size;
    let mut held: BTreeSet<u64> = (0..l.r).map(|q| l.input(q, 0) + e * size).collect();
    if cfg.collective == Collective::AllGather {
        for (q, &c) in owner.iter().enumerate() {
            if (l.start(c)..l.start(c + 1)).contains(&e) {
                held.insert(l.w(q, c) + (e - l.start(c)) * size);
            }
        }
    }
    let mut order = Vec::new();
    for (q, st) in steps.iter().enumerate() {
        for (s, step) in st.iter().enumerate() {
            order.extend((0..step.work.len()).map(|i| (s, q, i)));
        }
    }
    order.sort();
    let mut out = BTreeSet::new();
    let find = |held: &BTreeSet<u64>, from: u64, len: u64| held.range(from..from + len).next().map(|&a| a - from);
    for (s, q, i) in order {
        let w = &steps[q][s].work[i];
        let new: Vec<u64> = match w {
            Work::Reduce { srcs, dsts, elems, .. } => srcs
                .iter()
                .find_map(|&a| find(&held, a, elems * size))
                .map(|off| dsts.iter().map(|d| d + off / size * size).collect())
                .unwrap_or_default(),
            Work::Copy { src, dst, bytes } => find(&held, *src, *bytes).map(|off| vec![dst + off]).unwrap_or_default(),
            Work::Compress { srcs, dst, elems, headers, .. } => srcs
                .iter()
                .find_map(|&a| find(&held, a, elems * size))
                .map(|off| vec![dst + headers + off / size])
                .unwrap_or_default(),
            Work::Expand { src, dst, elems, headers } => {
                find(&held, src + headers, *elems).map(|j| vec![dst + j * size]).unwrap_or_default()
            }
        };
        if !new.is_empty() {
            out.insert((q, s, i));
            held.extend(new);
        }
    }
    out
}

/// The slice of every element told is the whole schedule's works its data flows through, each
/// work bit for bit, in step-then-rank order.
#[test]
fn slices_are_the_schedules_works_of_the_element() {
    let mut told = 0;
    for cfg in cases() {
        let l = layout(&cfg);
        let (steps, owner) = schedule(&cfg, &l);
        let plan = Plan::new(&cfg, &l);
        for e in elements(&l, cfg.channels) {
            let f = chunk_of(&l, e);
            let slice = works(&cfg, &plan, f, e);
            let keys: Vec<(usize, usize, usize)> = slice.iter().map(|w| (w.step, w.rank, w.item)).collect();
            assert!(keys.windows(2).all(|p| p[0] < p[1]), "{}: element {e}: not in order", name(&cfg));
            for w in &slice {
                assert_eq!(
                    Some(&w.work),
                    steps[w.rank].get(w.step).and_then(|s| s.work.get(w.item)),
                    "{}: element {e}: rank {} step {} item {}",
                    name(&cfg),
                    w.rank,
                    w.step,
                    w.item
                );
            }
            let made: BTreeSet<(usize, usize, usize)> = slice.iter().map(|w| (w.rank, w.step, w.item)).collect();
            assert_eq!(made, carriers(&cfg, &l, &steps, &owner, e), "{}: element {e}", name(&cfg));
            told += 1;
        }
    }
    assert!(told > 20_000, "{told}");
}

/// What every rank's queue holds before each of its works (and after its last), counted from
/// the runs, is what planning its earlier works gives.
#[test]
fn counts_before_a_work_are_the_planned_ones() {
    let mut checked = 0;
    for cfg in cases() {
        let l = layout(&cfg);
        let (steps, _) = schedule(&cfg, &l);
        let mut counter = Counter::new(&cfg, &l);
        for (q, st) in steps.iter().enumerate() {
            let mut planned = Counts::default();
            let mut want = BTreeMap::new();
            for (s, step) in st.iter().enumerate() {
                for (i, w) in step.work.iter().enumerate() {
                    want.insert((s, i), planned);
                    if let Some(p) = plan_work(&cfg, q, s, w).unwrap() {
                        planned.add(Counts {
                            packets: p.packet_count(),
                            tx: p.tx_descriptors(),
                            rx: p.rx_descriptors(),
                        });
                    }
                }
                want.insert((s, step.work.len()), planned);
            }
            want.insert((st.len(), 0), planned);
            for ((s, i), n) in want {
                assert_eq!(counter.before(q, s, i).unwrap(), n, "{}: rank {q} step {s} item {i}", name(&cfg));
                checked += 1;
            }
        }
    }
    assert!(checked > 100_000, "{checked}");
}

/// The floor sum and the longer chunks of a progression, against counting.
#[test]
fn floor_sums_and_long_chunks_count() {
    for m in 1..12u128 {
        for a in 0..30u128 {
            for b in 0..30u128 {
                for n in 0..9u128 {
                    assert_eq!(floor_sum(n, m, a, b), (0..n).map(|i| (a * i + b) / m).sum::<u128>(), "{n} {m} {a} {b}");
                }
            }
        }
    }
    for r in [3usize, 4, 6, 8, 12] {
        for n in [1u64, 5, 7, 13, 100, 1001] {
            let l = Layout::new(r, n, 2);
            let mut groups = vec![Group::flat(&l, Algo::Ring)];
            for y in (2..r).filter(|y| r % y == 0 && r / y >= 2) {
                groups.push(Group::intra(&l, Algo::Ring, 0, y));
                groups.extend((0..r / y).map(|b| Group::inter(&l, Algo::Ring, 0, y, b)));
            }
            for g in &groups {
                let a = short_len(g);
                let gn = g.n() as i64;
                for c0 in -gn..2 * gn {
                    for d in [-2i64, -1, 0, 1, 2, 4] {
                        for k in 0..=g.n() {
                            let want = (0..k as i64).filter(|j| g.len(g.m(c0 + d * j)) == a + 1).count() as u64;
                            assert_eq!(long_chunks(g, c0, d, k), want, "R={r} N={n} {:?} c0={c0} d={d} k={k}", g.stage);
                        }
                    }
                }
            }
        }
    }
}
