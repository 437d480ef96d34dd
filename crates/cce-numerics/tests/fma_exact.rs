//! FMA against exact rational arithmetic (big integers): ≥ 10^5 triples, including exact ties,
//! near-ties, cancellation and overflow, for an fp32 and a bf16 accumulator.
//!
//! The oracle does not round: it checks that the engine's result is a nearest value of the
//! format to the exact `a·b + c` (comparing exact distances to both neighbours, as big
//! integers scaled by 2^400), with ties going to the even encoding, and that ±inf is returned
//! exactly when the exact value is at or beyond the overflow threshold.

use cce_numerics::{AccumType, FloatFormat, FmaSource, NumType, Op, Operand, ReduceSpec, Rounding, reduce};
use num_bigint::BigInt;
use num_traits::{Signed, Zero};

const SCALE: i32 = 400;

/// The exact value of a finite f64 times 2^SCALE, as an integer.
fn exact(v: f64) -> BigInt {
    assert!(v.is_finite());
    if v == 0.0 {
        return BigInt::zero();
    }
    let bits = v.to_bits();
    let e = ((bits >> 52) & 0x7ff) as i32;
    let m = bits & ((1 << 52) - 1);
    let (m, e) = if e == 0 { (m, -1074) } else { (m | (1 << 52), e - 1075) };
    let mag = BigInt::from(m) << (e + SCALE) as usize;
    if v < 0.0 { -mag } else { mag }
}

/// exact(a) · exact(b) / 2^SCALE + exact(c): the exact a·b + c times 2^SCALE.
fn exact_fma(a: f64, b: f64, c: f64) -> BigInt {
    ((exact(a) * exact(b)) >> SCALE as usize) + exact(c)
}

fn decode(fmt: FloatFormat, enc: u32) -> f64 {
    cce_numerics::float::decode(fmt, enc)
}

/// Next encoding toward +inf / -inf (finite `enc`).
fn step(fmt: FloatFormat, enc: u32, up: bool) -> u32 {
    let sign = enc & fmt.sign_bit();
    let mag = enc & (fmt.sign_bit() - 1);
    if mag == 0 {
        return if up { 1 } else { fmt.sign_bit() | 1 };
    }
    if (sign == 0) == up { enc + 1 } else { enc - 1 }
}

/// Checks that `got` (an encoding of `fmt`) is the RNE of the exact value `x` (scaled).
fn check(fmt: FloatFormat, x: &BigInt, got: u32, what: &str) {
    let sign = got & fmt.sign_bit();
    let mag = got & (fmt.sign_bit() - 1);
    let max = decode(fmt, fmt.max_finite());
    let ulp_top = max - decode(fmt, fmt.max_finite() - 1);
    let threshold = exact(max) + (exact(ulp_top) >> 1usize);
    if fmt.inf() == Some(mag) {
        let ok = if sign == 0 { *x >= threshold } else { *x <= -threshold };
        assert!(ok, "{what}: got inf for exact {x}");
        return;
    }
    assert!(!fmt.is_nan_mag(mag), "{what}: got NaN");
    let y = exact(decode(fmt, got));
    let d = (x - &y).abs();
    for up in [false, true] {
        let n = step(fmt, got, up);
        let nmag = n & (fmt.sign_bit() - 1);
        if nmag > fmt.max_finite() {
            // Beyond max finite: the exact value must be below the overflow threshold.
            assert!(x.abs() < threshold, "{what}: exact {x} overflows but got finite {got:#x}");
            continue;
        }
        let dn = (x - exact(decode(fmt, n))).abs();
        assert!(d <= dn, "{what}: got {got:#x}, neighbour {n:#x} is nearer to exact {x}");
        if d == dn {
            assert!(got & 1 == 0, "{what}: tie not broken to even ({got:#x} vs {n:#x})");
        }
    }
    if x.is_zero() {
        assert_eq!(mag, 0, "{what}: exact zero");
    }
}

struct Gen(u64);
impl Gen {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        cce_numerics::rng::mix64(self.0)
    }
    fn f32_in(&mut self, emin: i32, emax: i32) -> f32 {
        let r = self.next();
        let e = emin + (r % (emax - emin + 1) as u64) as i32;
        let m = (r >> 32) as u32 & 0x7f_ffff;
        let s = ((r >> 60) & 1) as u32;
        f32::from_bits(s << 31 | ((e + 127) as u32) << 23 | m)
    }
    fn odd13(&mut self) -> f32 {
        // An odd integer in [2^12, 2^13) times 2^k: odd × odd products have 25 or 26 bits.
        let r = self.next();
        let v = (4096 + (r % 4096)) | 1;
        let k = ((r >> 20) % 21) as i32 - 10;
        (v as f32) * 2f32.powi(k) * if (r >> 40) & 1 == 1 { -1.0 } else { 1.0 }
    }
}

/// The triples: (x, s, c) meaning "input, scale, stored".
fn triples() -> Vec<(f32, f32, f32)> {
    let mut g = Gen(12345);
    let mut v = Vec::new();
    for i in 0..120_000 {
        let t = match i % 6 {
            // Random moderate operands, c near the product's magnitude.
            0 => {
                let (x, s) = (g.f32_in(-30, 30), g.f32_in(-30, 30));
                let p = f64::from(x) * f64::from(s);
                let e = p.abs().log2().floor() as i32;
                (x, s, g.f32_in(e - 30, e + 5))
            }
            // Exact ties of the product, c = 0.
            1 => (g.odd13(), g.odd13(), 0.0),
            // Near-ties: a tie nudged by a tiny c of either sign.
            2 => {
                let (x, s) = (g.odd13(), g.odd13());
                let p = (f64::from(x) * f64::from(s)).abs();
                let e = p.log2().floor() as i32;
                (x, s, g.f32_in(e - 60, e - 26))
            }
            // Cancellation: c ≈ −x·s.
            3 => {
                let (x, s) = (g.f32_in(-20, 20), g.f32_in(-20, 20));
                let c = -((f64::from(x) * f64::from(s)) as f32);
                let c = if g.next() & 1 == 1 { f32::from_bits(c.to_bits() ^ 1) } else { c };
                (x, s, c)
            }
            // Any finite patterns: subnormals, overflow to inf.
            4 => {
                let mut f = || loop {
                    let b = g.next() as u32;
                    let v = f32::from_bits(b);
                    if v.is_finite() {
                        break v;
                    }
                };
                (f(), f(), f())
            }
            // Products near the overflow threshold and deep in the subnormal range.
            _ => {
                if g.next() & 1 == 1 {
                    (g.f32_in(60, 64), g.f32_in(60, 64), g.f32_in(120, 127))
                } else {
                    (g.f32_in(-80, -70), g.f32_in(-80, -60), g.f32_in(-126, -120))
                }
            }
        };
        v.push(t);
    }
    v
}

fn run_one(accum: NumType, out: NumType, x: f32, s: f32, c: f32, sel: (Operand, Operand, Operand)) -> u32 {
    // Source 0 loads c into the accumulator (c·1 + 0, exact); source 1 computes the FMA.
    let spec = ReduceSpec {
        op: Op::Fma(vec![FmaSource::scaled(1.0), FmaSource { scale: s, a: sel.0, b: sel.1, c: sel.2 }]),
        in_type: NumType::F32,
        accum_type: AccumType::Num(accum),
        out_type: out,
        rounding: Rounding::Rne,
        saturate: false,
    };
    let (cb, xb) = (c.to_le_bytes(), x.to_le_bytes());
    let mut o = [0u8; 4];
    let n = out.size();
    reduce(&spec, &[&cb, &xb], &mut [&mut o[..n]], 0).unwrap();
    let mut w = [0u8; 4];
    w[..n].copy_from_slice(&o[..n]);
    u32::from_le_bytes(w)
}

#[test]
fn fma_fp32_accumulator_matches_exact_rationals() {
    use Operand::*;
    let ts = triples();
    assert!(ts.len() >= 100_000);
    for (i, &(x, s, c)) in ts.iter().enumerate() {
        let (x64, s64, c64) = (f64::from(x), f64::from(s), f64::from(c));
        // Rotate through selector combinations: the same three values, different roles.
        let (sel, exact) = match i % 3 {
            0 => ((Input, Scale, Stored), exact_fma(x64, s64, c64)),
            1 => ((Scale, Stored, Input), exact_fma(s64, c64, x64)),
            _ => ((Stored, Input, Scale), exact_fma(c64, x64, s64)),
        };
        let got = run_one(NumType::F32, NumType::F32, x, s, c, sel);
        check(FloatFormat::F32, &exact, got, &format!("triple {i} ({x:e}, {s:e}, {c:e}) sel {sel:?}"));
        if i % 5 == 0 {
            // fp32 accumulate then bf16 out: the fused fp32 result, rounded once more.
            let bf = run_one(NumType::F32, NumType::Bf16, x, s, c, sel);
            let want =
                cce_numerics::convert_to_vec(NumType::F32, NumType::Bf16, &got.to_le_bytes(), Rounding::Rne, false)
                    .unwrap();
            assert_eq!(bf, u32::from(u16::from_le_bytes([want[0], want[1]])), "triple {i} bf16 out");
        }
    }
}

#[test]
fn fma_bf16_accumulator_rounds_once() {
    // With a bf16 accumulator the element and the stored value are bf16; the scale stays fp32.
    let to_bf16 = |v: f32| f32::from_bits(v.to_bits() & 0xffff_0000);
    let ts = triples();
    for (i, &(x, s, c)) in ts.iter().enumerate().step_by(4) {
        let (x, c) = (to_bf16(x), to_bf16(c));
        let exact = exact_fma(f64::from(x), f64::from(s), f64::from(c));
        let got = run_one(NumType::Bf16, NumType::Bf16, x, s, c, (Operand::Input, Operand::Scale, Operand::Stored));
        check(FloatFormat::BF16, &exact, got, &format!("bf16 triple {i} ({x:e}, {s:e}, {c:e})"));
    }
}
