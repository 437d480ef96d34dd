//! The reveal's mechanics against black boxes whose trees are known: each class's order is
//! evaluated by cce-numerics' reduce (bit-exact, its own tests), so these check the masks,
//! the rebuilding, the classes, the roundings and the check — not the evaluation. The
//! independent checks (numpy trees, Open MPI, gloo, XLA) are tests/python/test_reveal.py.

use cce_forensics::eval::rne_block;
use cce_forensics::reveal::{BlackBox, RevealError, reveal};
use cce_forensics::rule::Rule;
use cce_numerics::NumType;
use cce_numerics::order::Order;

/// Element ranges, each summed by one order.
struct Trees {
    dtype: NumType,
    classes: Vec<(usize, usize, Rule)>,
    runs: u32,
}

impl BlackBox for Trees {
    fn run(&mut self, _run: u32, inputs: &[Vec<u8>]) -> Result<Vec<Vec<u8>>, RevealError> {
        self.runs += 1;
        let slices: Vec<&[u8]> = inputs.iter().map(Vec::as_slice).collect();
        let size = self.dtype.size();
        let mut out = vec![0u8; inputs[0].len()];
        for (first, last, rule) in &self.classes {
            let got = rne_block(rule, self.dtype, &slices, *first, last - first + 1).unwrap();
            out[first * size..(last + 1) * size].copy_from_slice(&got);
        }
        Ok(vec![out; inputs.len()])
    }
}

fn rule(text: &str, accum: NumType) -> Rule {
    Rule { order: Order::parse(text).unwrap(), accum }
}

/// The merge key: equal exactly when no input tells the two apart (the first two operands of
/// a parenthesis commute; cce-forensics' merges, each proven in tests/merges.rs).
fn key(order: &Order, accum: NumType, dtype: NumType) -> String {
    cce_forensics::rule::merge_key(&Rule { order: order.clone(), accum }, dtype, cce_forensics::Rounding::Rne)
}

#[test]
fn a_ring_of_eight_is_revealed_chunk_by_chunk_in_three_runs() {
    let (r, chunk) = (8u32, 40usize);
    let classes: Vec<(usize, usize, Rule)> = (0..r)
        .map(|c| {
            let o = Order::sequential(&(0..r).map(|k| (c + k) % r).collect::<Vec<_>>());
            (c as usize * chunk, (c as usize + 1) * chunk - 1, Rule { order: o, accum: NumType::Bf16 })
        })
        .collect();
    let mut bb = Trees { dtype: NumType::Bf16, classes: classes.clone(), runs: 0 };
    let got = reveal(r, r as usize * chunk, NumType::Bf16, &mut bb).unwrap();
    assert!(got.revealed, "{:?}", got.reason);
    assert_eq!(got.runs, 3);
    assert_eq!(got.classes.len(), 8);
    for (c, (first, last, rule)) in got.classes.iter().zip(&classes) {
        assert_eq!((c.first, c.last), (*first, *last));
        assert_eq!(key(&c.order, c.accum, NumType::Bf16), key(&rule.order, rule.accum, NumType::Bf16));
        assert_eq!(c.accum, NumType::Bf16);
    }
    assert_eq!(got.classes[3].equals.as_deref(), Some("sequential from 3 up"));
}

#[test]
fn multiway_roundings_show_as_one_parenthesis_accumulated_in_fp32() {
    for text in ["((0+1+2)+3+4)", "(0+1+2+3+4+5)", "((3+1)+(0+2+5)+4)", "(((4+0)+2+1)+(3+5))"] {
        let o = rule(text, NumType::F32);
        let r = o.order.leaves().len() as u32;
        let n = 3 * (r * (r - 1) / 2) as usize;
        let mut bb = Trees { dtype: NumType::Bf16, classes: vec![(0, n - 1, o.clone())], runs: 0 };
        let got = reveal(r, n, NumType::Bf16, &mut bb).unwrap();
        assert!(got.revealed, "{text}: {:?}", got.reason);
        assert_eq!(got.classes.len(), 1, "{text}");
        assert_eq!(got.classes[0].accum, NumType::F32, "{text}");
        // The first two operands of a parenthesis commute; compare with the text's.
        let back = cce_forensics::rule::merge_key(
            &Rule { order: got.classes[0].order.clone(), accum: NumType::F32 },
            NumType::Bf16,
            cce_forensics::Rounding::Rne,
        );
        let want = cce_forensics::rule::merge_key(&o, NumType::Bf16, cce_forensics::Rounding::Rne);
        assert_eq!(back, want, "{text}: got {}", got.classes[0].order);
    }
}

#[test]
fn fp32_and_fp16_trees_with_unaligned_classes() {
    for dtype in [NumType::F32, NumType::F16] {
        let r = 6u32;
        let p = 15usize;
        let classes = vec![
            (0, p + 6, rule("(((0+1)+(2+3))+(4+5))", dtype)),
            (p + 7, 3 * p + 2, rule("(((((5+4)+3)+2)+1)+0)", dtype)),
            (3 * p + 3, 4 * p + 9, rule("((0+(1+(2+(3+4))))+5)", dtype)),
        ];
        let n = 4 * p + 10;
        let mut bb = Trees { dtype, classes: classes.clone(), runs: 0 };
        let got = reveal(r, n, dtype, &mut bb).unwrap();
        assert!(got.revealed, "{dtype}: {:?}", got.reason);
        let ranges: Vec<(usize, usize)> = got.classes.iter().map(|c| (c.first, c.last)).collect();
        assert_eq!(ranges, classes.iter().map(|c| (c.0, c.1)).collect::<Vec<_>>(), "{dtype}");
        for (c, want) in got.classes.iter().zip(&classes) {
            assert_eq!(key(&c.order, c.accum, dtype), key(&want.2.order, want.2.accum, dtype), "{dtype}");
        }
        assert!(got.runs <= 3, "{dtype}: {} runs", got.runs);
    }
}

/// Sums each element in increasing order of magnitude: an order that depends on the values.
struct Sorted {
    dtype: NumType,
}

impl BlackBox for Sorted {
    fn run(&mut self, _run: u32, inputs: &[Vec<u8>]) -> Result<Vec<Vec<u8>>, RevealError> {
        let size = self.dtype.size();
        let fmt = self.dtype.float_format().unwrap();
        let n = inputs[0].len() / size;
        let mut out = vec![0u8; n * size];
        for e in 0..n {
            let mut v: Vec<f64> = inputs
                .iter()
                .map(|b| {
                    let mut x = [0u8; 4];
                    x[..size].copy_from_slice(&b[e * size..(e + 1) * size]);
                    cce_numerics::float::decode(fmt, u32::from_le_bytes(x))
                })
                .collect();
            v.sort_by(|a, b| a.abs().total_cmp(&b.abs()));
            let mut acc = cce_numerics::float::round_value(v[0], fmt, None);
            for x in &v[1..] {
                let s = cce_numerics::float::decode(fmt, acc) + x;
                acc = cce_numerics::float::round_value(s, fmt, None);
            }
            out[e * size..(e + 1) * size].copy_from_slice(&acc.to_le_bytes()[..size]);
        }
        Ok(vec![out; inputs.len()])
    }
}

#[test]
fn an_order_that_depends_on_the_values_is_not_revealed() {
    let got = reveal(5, 200, NumType::Bf16, &mut Sorted { dtype: NumType::Bf16 }).unwrap();
    assert!(!got.revealed);
    assert!(got.classes.is_empty());
    assert!(got.reason.is_some());
}

#[test]
fn a_downward_ring_with_chunks_of_exactly_one_window() {
    // gloo's ring: chunk c is the sequential sum from rank c - 1 down; chunks of R(R-1)/2.
    for (r, dtype) in [(8u32, NumType::F32), (8, NumType::Bf16), (5, NumType::F16)] {
        let p = (r * (r - 1) / 2) as usize;
        let classes: Vec<(usize, usize, Rule)> = (0..r)
            .map(|c| {
                let seq: Vec<u32> = (0..r).map(|k| (c + 2 * r - 1 - k) % r).collect();
                (c as usize * p, (c as usize + 1) * p - 1, Rule { order: Order::sequential(&seq), accum: dtype })
            })
            .collect();
        let mut bb = Trees { dtype, classes: classes.clone(), runs: 0 };
        let got = reveal(r, r as usize * p, dtype, &mut bb).unwrap();
        assert!(got.revealed, "{r} {dtype}: {:?}", got.reason);
        let ranges: Vec<(usize, usize)> = got.classes.iter().map(|c| (c.first, c.last)).collect();
        assert_eq!(ranges, classes.iter().map(|c| (c.0, c.1)).collect::<Vec<_>>());
    }
}

/// Each rank's output from its own classes.
struct PerRank {
    dtype: NumType,
    by_rank: Vec<Vec<(usize, usize, Rule)>>,
}

impl BlackBox for PerRank {
    fn run(&mut self, run: u32, inputs: &[Vec<u8>]) -> Result<Vec<Vec<u8>>, RevealError> {
        self.by_rank
            .iter()
            .map(|classes| {
                let mut one = Trees { dtype: self.dtype, classes: classes.clone(), runs: 0 };
                Ok(one.run(run, inputs)?.swap_remove(0))
            })
            .collect()
    }
}

#[test]
fn ranks_whose_outputs_differ_get_classes_of_their_own_in_three_runs() {
    let (r, dtype) = (6u32, NumType::Bf16);
    let n = 60;
    let a = vec![(0, n - 1, rule("((0+1+2)+(3+4+5))", NumType::F32))];
    let b = vec![(0, 29, rule("(((0+1)+(2+3))+(4+5))", dtype)), (30, n - 1, rule("(0+1+2+3+4+5)", NumType::F32))];
    let by_rank = vec![a.clone(), a.clone(), a, b.clone(), b.clone(), b];
    let got = reveal(r, n, dtype, &mut PerRank { dtype, by_rank: by_rank.clone() }).unwrap();
    assert!(got.revealed, "{:?}", got.reason);
    assert_eq!(got.runs, 3);
    // Ranks 0..=2: one class each; ranks 3..=5: two each.
    assert_eq!(got.classes.len(), 3 + 3 * 2);
    for c in &got.classes {
        let rank = c.rank.expect("per-rank classes");
        let want = by_rank[rank].iter().find(|w| w.0 == c.first && w.1 == c.last).expect("a class's range");
        assert_eq!(key(&c.order, c.accum, dtype), key(&want.2.order, want.2.accum, dtype), "rank {rank}");
    }
}

/// Open MPI's block layout: the first N mod R blocks one element longer.
fn blocks(n: usize, r: usize) -> Vec<(usize, usize)> {
    let (q, extra) = (n / r, n % r);
    let mut at = 0;
    (0..r)
        .map(|b| {
            let len = q + usize::from(b < extra);
            at += len;
            (at - len, at - 1)
        })
        .collect()
}

#[test]
fn classes_too_short_for_every_pair_are_found_among_the_listed_orders() {
    for (r, n, dtype) in
        [(8u32, 30usize, NumType::F32), (8, 30, NumType::Bf16), (16, 40, NumType::Bf16), (5, 9, NumType::F16)]
    {
        let classes: Vec<(usize, usize, Rule)> = blocks(n, r as usize)
            .into_iter()
            .enumerate()
            .map(|(c, (first, last))| {
                let seq: Vec<u32> = (0..r).map(|k| (c as u32 + k) % r).collect();
                (first, last, Rule { order: Order::sequential(&seq), accum: dtype })
            })
            .collect();
        let mut bb = Trees { dtype, classes: classes.clone(), runs: 0 };
        let got = reveal(r, n, dtype, &mut bb).unwrap();
        assert!(got.revealed, "{r} {n} {dtype}: {:?}", got.reason);
        let bound = (u32::BITS - (r - 1).leading_zeros()) + 3;
        assert!(got.runs <= bound, "{r} {dtype}: {} runs over {bound}", got.runs);
        let ranges: Vec<(usize, usize)> = got.classes.iter().map(|c| (c.first, c.last)).collect();
        assert_eq!(ranges, classes.iter().map(|c| (c.0, c.1)).collect::<Vec<_>>(), "{r} {dtype}");
        for (c, want) in got.classes.iter().zip(&classes) {
            assert_eq!(key(&c.order, c.accum, dtype), key(&want.2.order, want.2.accum, dtype));
        }
    }
}

#[test]
fn a_short_class_of_an_unlisted_order_is_not_revealed() {
    let (r, n, dtype) = (6u32, 12usize, NumType::F32);
    let o = rule("(((0+5)+(2+3))+(1+4))", dtype);
    let mut bb =
        Trees { dtype, classes: vec![(0, 5, o.clone()), (6, n - 1, rule("(((((0+1)+2)+3)+4)+5)", dtype))], runs: 0 };
    let got = reveal(r, n, dtype, &mut bb).unwrap();
    assert!(!got.revealed);
    assert!(got.classes.is_empty());
    assert!(got.reason.as_deref().is_some_and(|w| w.contains("none of the")), "{:?}", got.reason);
}
