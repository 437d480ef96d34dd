//! The metrics against values computed by hand: ulps of each dtype, and an all-reduce whose
//! exact sum cancels to near zero (the old per-element relative error was 127 there; the
//! relative error of the largest magnitude is small, and the ulp error is what the documented
//! reduction order gives).

mod common;

use cce_collectives::collective::{Algo, Config, RedOp};
use cce_collectives::metrics::{self, ulp};
use cce_format::SdmaDtype;

/// bf16 bits of a value bf16 holds exactly (checked: the low half of its f32 bits is zero).
fn bf16(x: f32) -> [u8; 2] {
    let b = x.to_bits();
    assert_eq!(b & 0xFFFF, 0, "{x} is not a bf16 value");
    ((b >> 16) as u16).to_le_bytes()
}

fn bf16s(xs: &[f32]) -> Vec<u8> {
    xs.iter().flat_map(|&x| bf16(x)).collect()
}

#[test]
fn ulp_of_every_kind_of_dtype() {
    // p = 8 (bf16), 24 (fp32), 11 (fp16), 4 (fp8 e4m3); smallest subnormal spacing
    // 2^(1 − bias − (p − 1)).
    let p2 = |k: i32| 2f64.powi(k);
    assert_eq!(ulp(SdmaDtype::Bf16, 1.0), Some(p2(-7)));
    assert_eq!(ulp(SdmaDtype::Bf16, 3.0), Some(p2(-6)));
    assert_eq!(ulp(SdmaDtype::Bf16, -0.75), Some(p2(-8)));
    assert_eq!(ulp(SdmaDtype::Bf16, 256.0), Some(2.0));
    assert_eq!(ulp(SdmaDtype::Bf16, 0.0), Some(p2(1 - 127 - 7)));
    assert_eq!(ulp(SdmaDtype::Fp32, 1.0), Some(p2(-23)));
    assert_eq!(ulp(SdmaDtype::Fp32, 0.0), Some(p2(-149)));
    assert_eq!(ulp(SdmaDtype::Fp16, 1000.0), Some(p2(9 - 10)));
    // Below fp16's normal range (2^-14) the spacing stays 2^-24.
    assert_eq!(ulp(SdmaDtype::Fp16, p2(-20)), Some(p2(-24)));
    assert_eq!(ulp(SdmaDtype::Fp16, 0.0), Some(p2(-24)));
    assert_eq!(ulp(SdmaDtype::Fp8E4, 1.0), Some(p2(-3)));
    assert_eq!(ulp(SdmaDtype::Fp8E4, 0.0), Some(p2(1 - 7 - 3)));
    assert_eq!(ulp(SdmaDtype::I32, 12345.0), Some(1.0));
    assert_eq!(ulp(SdmaDtype::U8, 0.0), Some(1.0));
}

/// 4 ranks × 8 bf16 elements. Chunk c is elements 2c and 2c + 1. Element 2c is
/// [256, 1.0078125, −256, −1] starting at rank c (so ring reduces it in that order); element
/// 2c + 1 is 256 on every rank.
fn cancelling_inputs() -> Vec<Vec<u8>> {
    let near_zero = [256.0f32, 1.0078125, -256.0, -1.0];
    (0..4)
        .map(|r: usize| {
            let mut v = Vec::new();
            for c in 0..4usize {
                // Rank r is position (r − c) mod 4 of chunk c's order.
                v.push(near_zero[(r + 4 - c) % 4]);
                v.push(256.0);
            }
            bf16s(&v)
        })
        .collect()
}

// By hand: the exact sum of element 2c is 2^-7 = 0.0078125. Ring (RING_2R1W, docs: rounded to
// bf16 after each step) gives 256 + 1.0078125 = 257.0078125 → 258 (above the 257 tie), then
// 258 − 256 = 2, then 2 − 1 = 1. So the output is 1, the error 1 − 2^-7 = 0.9921875. The ulp
// error is measured at Σ|x| = 514.0078125 (floor(log2) = 9, bf16 ulp 2^(9 − 8 + 1) = 4):
// 0.9921875 / 4 = 0.248046875 — inside the 0.5 of one rounding of a partial of that size (at
// the exact value 2^-7 it would be 16256 ulps, an alarm for nothing). Element 2c + 1 sums to 1024
// exactly (512, 768, 1024 are bf16 values). The largest exact magnitude is 1024.
const ERR: f64 = 0.9921875;
const ERR_ULPS: f64 = 0.248046875;

#[test]
fn a_cancelling_sum_measured_by_hand() {
    let cfg = Config::new(4, Algo::Ring, RedOp::Add, SdmaDtype::Bf16, 8);
    let inputs = cancelling_inputs();
    let out = bf16s(&[1.0, 1024.0, 1.0, 1024.0, 1.0, 1024.0, 1.0, 1024.0]);
    let m = metrics::measure(&cfg, &inputs, &vec![out; 4]);
    assert!(m.ranks_identical);
    assert_eq!(m.max_abs_err, ERR);
    // The per-element ratio would be 0.9921875 / 0.0078125 = 127: an alarm for nothing.
    assert_eq!(m.max_rel_err, ERR / 1024.0);
    assert!(m.max_rel_err < 1e-3);
    assert_eq!(m.max_ulp_err, ERR_ULPS);
    // Half the elements are off by 0.248046875 ulps, half are exact.
    assert_eq!(m.mean_ulp_err, ERR_ULPS / 2.0);
    // The bound R · 2^-8 · Σ|x| = 4/256 · 514.0078125 ≈ 8.03 holds the error.
    assert_eq!(m.wrong, 0);

    // A rank that differs is measured on its own: rank 3 holds 1032 for one 1024 (the bf16
    // spacing at 1024 = Σ|x| is 8), an error of 8 = 1 ulp, now the largest.
    let mut outs = vec![bf16s(&[1.0, 1024.0, 1.0, 1024.0, 1.0, 1024.0, 1.0, 1024.0]); 4];
    outs[3] = bf16s(&[1.0, 1032.0, 1.0, 1024.0, 1.0, 1024.0, 1.0, 1024.0]);
    let m = metrics::measure(&cfg, &inputs, &outs);
    assert!(!m.ranks_identical);
    assert_eq!(m.max_abs_err, 8.0);
    assert_eq!(m.max_rel_err, 8.0 / 1024.0);
    assert_eq!(m.max_ulp_err, 1.0);
    // 32 elements: 16 at 0.248046875 ulps, one at 1 ulp.
    assert_eq!(m.mean_ulp_err, (16.0 * ERR_ULPS + 1.0) / 32.0);
}

#[test]
fn the_engine_gives_the_hand_computed_cancelling_sum() {
    let cfg = Config::new(4, Algo::Ring, RedOp::Add, SdmaDtype::Bf16, 8);
    let inputs = cancelling_inputs();
    let o = common::run(&cfg, &inputs).unwrap();
    let want = bf16s(&[1.0, 1024.0, 1.0, 1024.0, 1.0, 1024.0, 1.0, 1024.0]);
    for (r, out) in o.outputs.iter().enumerate() {
        assert_eq!(out, &want, "rank {r}");
    }
    let m = metrics::measure(&cfg, &inputs, &o.outputs);
    assert_eq!((m.max_abs_err, m.max_ulp_err, m.wrong), (ERR, ERR_ULPS, 0));
}

#[test]
fn exact_outputs_and_integers() {
    // i32: the ulp is 1, so the ulp error is the absolute error.
    let cfg = Config::new(2, Algo::Ring, RedOp::Add, SdmaDtype::I32, 2);
    let ins = |a: [i32; 2]| a.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let inputs = vec![ins([5, -7]), ins([10, 7])];
    let exact = vec![ins([15, 0]); 2];
    let m = metrics::measure(&cfg, &inputs, &exact);
    assert_eq!((m.max_abs_err, m.max_rel_err, m.max_ulp_err, m.mean_ulp_err, m.wrong), (0.0, 0.0, 0.0, 0.0, 0));
    let off = vec![ins([18, 0]); 2];
    let m = metrics::measure(&cfg, &inputs, &off);
    assert_eq!((m.max_abs_err, m.max_ulp_err, m.mean_ulp_err), (3.0, 3.0, 1.5));
    assert_eq!(m.max_rel_err, 3.0 / 15.0);
    assert_eq!(m.wrong, 2, "both ranks' first element differs from the exact integer sum");
    // Every exact value 0 and an output that is not: no magnitude to compare with.
    let zero = vec![ins([0, 0]), ins([0, 0])];
    let m = metrics::measure(&cfg, &zero, &vec![ins([1, 0]); 2]);
    assert!(m.max_rel_err.is_infinite());
}
