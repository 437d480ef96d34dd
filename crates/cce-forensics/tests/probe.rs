//! The probe, checked with the independent reference of `common`: at R = 4, 8, 16, 32 every pair
//! of merged family candidates gives different bits in every chunk (chunks of at least 64
//! elements), and an output made chunk by chunk with a different order per chunk is named,
//! chunk by chunk, by the identification.

mod common;

use cce_forensics::{Identification, Problem, Rounding, family_candidates, make_probe};
use cce_numerics::NumType;
use cce_numerics::order::Order;
use common::{bf16_rne, eval, f32_keep};

/// Each rank's values of `probe` as f32, and the reference rounding, for `dtype`.
/// A rounding of the reference.
type Round = fn(f32) -> f32;

fn values(inputs: &[Vec<u8>], dtype: NumType) -> (Vec<Vec<f32>>, Round) {
    let vals = inputs
        .iter()
        .map(|b| match dtype {
            NumType::Bf16 => b.chunks_exact(2).map(|c| common::bf16_value(u16::from_le_bytes([c[0], c[1]]))).collect(),
            _ => b.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect(),
        })
        .collect();
    (vals, if dtype == NumType::Bf16 { bf16_rne } else { f32_keep })
}

/// Chunk `c` of `n` elements over `r` ranks, as the all-reduce splits them.
fn chunk(c: usize, n: usize, r: usize) -> std::ops::Range<usize> {
    c * n / r..(c + 1) * n / r
}

/// The reference's output of `order` (f32 accumulation) at every element.
fn outputs(order: &Order, vals: &[Vec<f32>], round: Round) -> Vec<u32> {
    (0..vals[0].len())
        .map(|i| {
            let v: Vec<f32> = vals.iter().map(|x| x[i]).collect();
            eval(order, &v, round).to_bits()
        })
        .collect()
}

#[test]
fn the_probe_separates_every_pair_in_every_chunk() {
    for dtype in [NumType::Bf16, NumType::F32] {
        for r in [4usize, 8, 16, 32] {
            // Chunks of 64 elements and (the odd remainder) 65.
            let n = 64 * r + 7;
            let probe = make_probe(r as u32, n, dtype).unwrap();
            assert!(probe.period <= 64, "{dtype} R={r}: period {}", probe.period);
            let (vals, round) = values(&probe.inputs, dtype);
            let cands = family_candidates(r as u32, dtype, &[NumType::F32, dtype], Rounding::Rne);
            assert_eq!(cands.len(), probe.orders);
            // Every representative accumulates in fp32 (the accumulations merged with it give
            // its bits: tests/merges.rs).
            let outs: Vec<Vec<u32>> = cands
                .iter()
                .map(|c| {
                    assert_eq!(c.accum[0], NumType::F32);
                    outputs(&c.order_of.as_ref().unwrap()(0), &vals, round)
                })
                .collect();
            let mut pairs = 0;
            for a in 0..outs.len() {
                for b in a + 1..outs.len() {
                    for c in 0..r {
                        let sep = chunk(c, n, r).any(|i| outs[a][i] != outs[b][i]);
                        assert!(sep, "{dtype} R={r}: {} and {} agree on chunk {c}", cands[a].name, cands[b].name);
                    }
                    pairs += 1;
                }
            }
            assert_eq!(pairs, cands.len() * (cands.len() - 1) / 2);
            println!("{dtype} R={r}: {} orders, {pairs} pairs, period {}", cands.len(), probe.period);
        }
    }
}

#[test]
fn on_the_probe_identify_names_the_order_of_every_chunk() {
    for r in [4usize, 8, 16, 32] {
        let dtype = NumType::Bf16;
        let n = 128 * r;
        let probe = make_probe(r as u32, n, dtype).unwrap();
        let (vals, round) = values(&probe.inputs, dtype);
        let cands = family_candidates(r as u32, dtype, &[NumType::F32, dtype], Rounding::Rne);
        // Chunk c made by candidate (5c + 3) mod C: other starts, both directions, trees.
        let pick = |c: usize| (5 * c + 3) % cands.len();
        let mut observed = vec![0u8; n * 2];
        for c in 0..r {
            let order = cands[pick(c)].order_of.as_ref().unwrap()(0);
            let out = outputs(&order, &vals, round);
            for i in chunk(c, n, r) {
                observed[2 * i..2 * i + 2].copy_from_slice(&common::bf16_bits(f32::from_bits(out[i])).to_le_bytes());
            }
        }
        let inputs: Vec<&[u8]> = probe.inputs.iter().map(Vec::as_slice).collect();
        let problem = Problem::new(dtype, inputs, vec![(0, &observed)]).unwrap();
        let mut id = Identification::new(&problem, Rounding::Rne, 2);
        id.add(cands.clone()).unwrap();
        let report = id.report();
        assert_eq!(report.unexplained.count, 0);
        // One listed order per chunk: every element explained by its range's order.
        assert_eq!(report.suspects.count, 0, "R={r}: {:?}", report.suspects);
        assert_eq!(report.verdict, cce_forensics::Verdict::Explained, "R={r}: {}", report.verdict_reason);
        let mut worst = 0;
        for c in 0..r {
            let want = &cands[pick(c)].name;
            let range = chunk(c, n, r);
            // Every element of the chunk but a few at its edges is mapped to its order.
            let named = range
                .clone()
                .filter(|&i| {
                    report.map.iter().any(|m| {
                        (m.first..=m.last).contains(&(i as u64)) && report.candidates[m.candidate].name == *want
                    })
                })
                .count();
            worst = worst.max(range.len() - named);
            assert!(range.len() - named <= 8, "R={r} chunk {c}: {named} of {} elements named {want}", range.len());
        }
        println!("R={r}: at most {worst} elements of a chunk's edges named otherwise");
    }
}
