//! The map and the verdict on outputs made by the independent reference of `common` (Rust's f32
//! additions, a bf16 rounding written from the format) in orders read from the libraries'
//! documentation: a ring with three flipped bits (all three found, nothing else), gloo's
//! reverse ring (one candidate explains every element), Open MPI's recursive doubling at six
//! ranks when it is a candidate (named) and when it is not (never `explained`, on random
//! inputs and on the probe alike), a tree and a permutation no family holds, and fp32
//! accumulation with one rounding.

mod common;

use cce_forensics::{
    Candidate, Identification, Problem, Report, Rounding, Verdict, family_candidates, make_probe, ring_candidates,
};
use cce_numerics::NumType;
use cce_numerics::order::Order;
use common::{Rng, bf16_bits, bf16_rne, bf16_value, eval};

const BF: NumType = NumType::Bf16;

/// bf16 inputs differing per rank and element, over several binades and both signs.
fn random_inputs(ranks: usize, n: usize, seed: u64) -> Vec<Vec<u8>> {
    let mut rng = Rng(seed);
    (0..ranks)
        .map(|_| {
            (0..n)
                .flat_map(|_| {
                    let m = 1.0 + (rng.next() >> 40) as f32 / (1u64 << 24) as f32;
                    let e = (rng.next() % 13) as i32 - 6;
                    let s = if rng.next() & 1 == 1 { -1.0 } else { 1.0 };
                    bf16_bits(bf16_rne(s * m * 2f32.powi(e))).to_le_bytes()
                })
                .collect()
        })
        .collect()
}

fn probe_inputs(ranks: usize, n: usize) -> Vec<Vec<u8>> {
    make_probe(ranks as u32, n, BF).unwrap().inputs
}

fn value(inputs: &[Vec<u8>], r: usize, i: usize) -> f32 {
    bf16_value(u16::from_le_bytes([inputs[r][2 * i], inputs[r][2 * i + 1]]))
}

/// The reference's output: element i reduced by `order_at(i)`, f32 adds, bf16 roundings.
fn reference(inputs: &[Vec<u8>], order_at: impl Fn(usize) -> Order) -> Vec<u8> {
    let n = inputs[0].len() / 2;
    (0..n)
        .flat_map(|i| {
            let vals: Vec<f32> = (0..inputs.len()).map(|r| value(inputs, r, i)).collect();
            bf16_bits(eval(&order_at(i), &vals, bf16_rne)).to_le_bytes()
        })
        .collect()
}

/// The sequential sum over `ranks` in the order given.
fn seq(order: &[u32]) -> Order {
    let mut acc = Order::Round(vec![Order::Rank(order[0]), Order::Rank(order[1])]);
    for &r in &order[2..] {
        acc = Order::Round(vec![acc, Order::Rank(r)]);
    }
    acc
}

/// Every family and ring candidate (both accumulations), but those `drop` names.
fn candidates(ranks: usize, n: usize, drop: &[&str]) -> Vec<Candidate> {
    let accums = [NumType::F32, BF];
    let mut all = family_candidates(ranks as u32, BF, &accums, Rounding::Rne);
    all.extend(ring_candidates(ranks as u32, n as u64, BF, &accums, Rounding::Rne));
    all.retain(|c| !drop.iter().any(|d| c.name.starts_with(d) || c.aliases.iter().any(|a| a.starts_with(d))));
    all
}

fn identify(inputs: &[Vec<u8>], observed: &[u8], cands: Vec<Candidate>) -> Report {
    let slices: Vec<&[u8]> = inputs.iter().map(Vec::as_slice).collect();
    let problem = Problem::new(BF, slices, vec![(0, observed)]).unwrap();
    let mut id = Identification::new(&problem, Rounding::Rne, 2);
    id.add(cands).unwrap();
    id.report()
}

/// Open MPI's ring layout (written here from its documentation): the first n mod R chunks
/// hold one element more.
fn ompi_chunk(i: usize, n: usize, r: usize) -> usize {
    let (late, split) = (n / r, n % r);
    if i < split * (late + 1) { i / (late + 1) } else { split + (i - split * (late + 1)) / late }
}

#[test]
fn three_flipped_bits_of_a_ring_are_found_and_nothing_else() {
    let (r, n) = (8usize, 8 * 300 + 5);
    for (what, inputs) in [("random", random_inputs(r, n, 11)), ("probe", probe_inputs(r, n))] {
        // Open MPI's ring: chunk c summed from rank c upward.
        let mut out = reference(&inputs, |i| {
            let c = ompi_chunk(i, n, r) as u32;
            seq(&(0..r as u32).map(|k| (c + k) % r as u32).collect::<Vec<_>>())
        });
        let flipped = [17usize, 1000, 2201];
        for &i in &flipped {
            out[2 * i] ^= 1;
        }
        let rep = identify(&inputs, &out, candidates(r, n, &[]));
        let mut found: Vec<u64> = rep.suspects.first.clone();
        found.extend(&rep.unexplained.first);
        found.sort_unstable();
        assert_eq!(found, flipped.map(|i| i as u64).to_vec(), "{what}: {:?} {:?}", rep.suspects, rep.unexplained);
        assert_eq!(rep.suspects.count + rep.unexplained.count, 3, "{what}");
        assert_eq!(rep.segments, 1, "{what}: one order explains the rest");
        assert_ne!(rep.verdict, Verdict::Explained, "{what}: {}", rep.verdict_reason);
        assert!(rep.candidates[0].name.starts_with("ring, chunk c from c up"), "{what}: {}", rep.candidates[0].name);
    }
}

#[test]
fn gloos_reverse_ring_is_one_candidate_matching_every_element() {
    let r = 8usize;
    // gloo's ring (allreduce.cc, written here from its documentation): 2R segments of
    // ⌈n/2R⌉ elements (under 1 MiB), two per chunk; chunk c summed from rank c − 1 downward.
    for n in [4096usize, 1000] {
        let seg = n.div_ceil(2 * r);
        let inputs = random_inputs(r, n, 5 + n as u64);
        let out = reference(&inputs, |i| {
            let c = (i / seg / 2) as u32;
            seq(&(0..r as u32).map(|k| (c + 2 * r as u32 - 1 - k) % r as u32).collect::<Vec<_>>())
        });
        let rep = identify(&inputs, &out, candidates(r, n, &[]));
        let full: Vec<&str> =
            rep.candidates.iter().filter(|c| c.matched == rep.total).map(|c| c.name.as_str()).collect();
        assert_eq!(full.len(), 1, "n={n}: {full:?}");
        assert!(full[0].starts_with("ring, chunk c from c-1 down"), "n={n}: {full:?}");
        assert_eq!(rep.verdict, Verdict::Explained, "n={n}: {}", rep.verdict_reason);
        assert_eq!(rep.answer(), Some(0));
    }
}

/// Open MPI's recursive doubling at 6 ranks (coll_base_allreduce.c's diagram): the pairs first.
fn ompi_rd6() -> Order {
    let p = |a, b| Order::Round(vec![a, b]);
    let r = Order::Rank;
    p(p(p(r(0), r(1)), p(r(2), r(3))), p(r(4), r(5)))
}

#[test]
fn open_mpi_recursive_doubling_is_named_and_never_explained_by_another_order() {
    let (r, n) = (6usize, 4096);
    for (what, inputs) in [("random", random_inputs(r, n, 21)), ("probe", probe_inputs(r, n))] {
        let out = reference(&inputs, |_| ompi_rd6());
        let rep = identify(&inputs, &out, candidates(r, n, &[]));
        assert_eq!(rep.verdict, Verdict::Explained, "{what}: {}", rep.verdict_reason);
        let best = &rep.candidates[0];
        let names: Vec<&String> = std::iter::once(&best.name).chain(&best.aliases).collect();
        assert!(names.iter().any(|x| x.starts_with("recursive doubling")), "{what}: {names:?}");
        // Not a candidate: what random inputs flag, the probe flags too.
        let rep = identify(&inputs, &out, candidates(r, n, &["recursive doubling", "binomial"]));
        assert_ne!(rep.verdict, Verdict::Explained, "{what}: {}", rep.verdict_reason);
        assert_eq!(rep.answer(), None, "{what}");
        assert!(rep.suspects.count + rep.unexplained.count > 0, "{what}: nothing flagged");
        println!("RD6 not a candidate, {what}: {} — {}", rep.verdict.name(), rep.verdict_reason);
    }
}

#[test]
fn orders_no_family_holds_are_fragmented_or_unexplained() {
    // ((0+2)+(1+3)) on a 4-rank probe; a left-to-right sum over a permutation on an 8-rank one.
    let p = |a, b| Order::Round(vec![a, b]);
    let cases = [
        (4usize, 256usize, p(p(Order::Rank(0), Order::Rank(2)), p(Order::Rank(1), Order::Rank(3)))),
        (8, 4096, seq(&[5, 2, 7, 0, 3, 6, 1, 4])),
    ];
    for (r, n, order) in cases {
        for (what, inputs) in [("random", random_inputs(r, n, 31)), ("probe", probe_inputs(r, n))] {
            let out = reference(&inputs, |_| order.clone());
            let rep = identify(&inputs, &out, candidates(r, n, &[]));
            assert_ne!(rep.verdict, Verdict::Explained, "{order} {what}: {}", rep.verdict_reason);
            assert!(rep.suspects.count + rep.unexplained.count > 0, "{order} {what}");
        }
    }
}

#[test]
fn fp32_accumulation_with_one_rounding_is_one_candidate() {
    let (r, n) = (8usize, 2048);
    let inputs = random_inputs(r, n, 41);
    // XLA's bf16 psum: every value in f32, added left to right, rounded once.
    let out: Vec<u8> = (0..n)
        .flat_map(|i| {
            let s = (0..r).fold(0f32, |acc, q| acc + value(&inputs, q, i));
            bf16_bits(bf16_rne(s)).to_le_bytes()
        })
        .collect();
    let rep = identify(&inputs, &out, candidates(r, n, &[]));
    assert_eq!(rep.verdict, Verdict::Explained, "{}", rep.verdict_reason);
    let full: Vec<&str> = rep.candidates.iter().filter(|c| c.matched == rep.total).map(|c| c.name.as_str()).collect();
    assert_eq!(full, ["single 8-source reduce, accumulate fp32"]);
    assert!(rep.separating.unwrap() > 0);
}
