//! The merges of `rule.rs`, proven: rules with one merge key give the same bits, checked against
//! an exact oracle written here (integer significands, one rounding to nearest even, no cce
//! code) and against cce-numerics' two accumulation paths (the fp32 kernels and the exact
//! any-dtype path) — exhaustively for every fp8 pair, and for bf16 / fp16 every value against
//! partners at every exponent gap 0..=40 (past that the smaller operand is below 2^-32 of the
//! larger's ulp: both roundings give the larger back, rule.rs).

mod common;

use cce_forensics::eval::{Reach, reachable};
use cce_forensics::{Family, Rounding, Rule, merge_key};
use cce_numerics::order::Order;
use cce_numerics::{FloatFormat, NumType, ReduceSpec, reduce};
use common::Rng;

/// An exact value: (negative, significand, exponent): (−1)^neg · m · 2^e.
type Exact = (bool, u128, i32);

/// The exact value of an encoding of `f` (finite).
fn decode(f: FloatFormat, enc: u32) -> Exact {
    let neg = enc & f.sign_bit() != 0;
    let e = (enc >> f.mbits) & ((1 << f.ebits) - 1);
    let m = enc & f.mant_mask();
    if e == 0 {
        (neg, u128::from(m), 1 - f.bias - f.mbits as i32)
    } else {
        (neg, u128::from(m | 1 << f.mbits), e as i32 - f.bias - f.mbits as i32)
    }
}

/// `a + b`, exactly (exponents within 100 of each other).
fn add(a: Exact, b: Exact) -> Exact {
    match (a.1, b.1) {
        (0, 0) => return (a.0 && b.0, 0, 0),
        (0, _) => return b,
        (_, 0) => return a,
        _ => {}
    }
    let e = a.2.min(b.2);
    let (x, y) = ((a.1 << (a.2 - e)) as i128, (b.1 << (b.2 - e)) as i128);
    let s = if a.0 { -x } else { x } + if b.0 { -y } else { y };
    // An exact zero sum is +0 under RNE (−0 only when both are −0).
    (s < 0 || (s == 0 && a.0 && b.0), s.unsigned_abs(), e)
}

/// The exact value rounded to nearest even into `f` (IEEE-like: overflow → inf).
fn round(f: FloatFormat, (neg, m, e): Exact) -> u32 {
    let sign = if neg { f.sign_bit() } else { 0 };
    if m == 0 {
        return sign;
    }
    let top = 127 - m.leading_zeros() as i32 + e; // exponent of the leading bit
    let q = (top - f.mbits as i32).max(1 - f.bias - f.mbits as i32); // the result's quantum
    let (mut n, s) = if q <= e { (m << (e - q), 0) } else { (m >> (q - e).min(127), (q - e).min(127) as u32) };
    if s > 0 {
        let rem = m & ((1u128 << s) - 1);
        let half = 1u128 << (s - 1);
        if rem > half || (rem == half && n & 1 == 1) {
            n += 1;
        }
    }
    // n · 2^q with n < 2^(mbits+1) (or = after a carry): encode.
    let (mut n, mut q) = (n, q);
    if n >> (f.mbits + 1) != 0 {
        n >>= 1;
        q += 1;
    }
    let biased = if n >> f.mbits == 0 { 0 } else { q + f.bias + f.mbits as i32 };
    if biased >= (1 << f.ebits) - 1 {
        return sign | f.exp_mask();
    }
    let field = if biased == 0 { n as u32 } else { ((biased as u32) << f.mbits) | (n as u32 & f.mant_mask()) };
    sign | field
}

/// The fp32 path: `a + b` rounded to fp32, then to `f` (double rounding), by the oracle.
fn via_f32(f: FloatFormat, a: Exact, b: Exact) -> u32 {
    let s = round(FloatFormat::F32, add(a, b));
    round(f, decode(FloatFormat::F32, s))
}

fn finite(f: FloatFormat, enc: u32) -> bool {
    enc & f.exp_mask() != f.exp_mask()
}

/// Two-source reduces of `a[i] + b[i]` by cce-numerics with accumulate `acc`.
fn cce_pairs(t: NumType, acc: NumType, a: &[u32], b: &[u32]) -> Vec<u32> {
    let size = t.size();
    let bytes = |v: &[u32]| v.iter().flat_map(|x| x.to_le_bytes()[..size].to_vec()).collect::<Vec<u8>>();
    let (a, b) = (bytes(a), bytes(b));
    let mut out = vec![0u8; a.len()];
    reduce(&ReduceSpec::add(t, acc, t), &[&a, &b], &mut [&mut out], 0).unwrap();
    out.chunks_exact(size).map(|c| c.iter().rev().fold(0u32, |x, &y| x << 8 | u32::from(y))).collect()
}

/// Merge 4 over `pairs` of encodings of `t`: the oracle's single rounding, the oracle's fp32
/// double rounding, and cce's fp32- and buffer-accumulated reduces all agree.
fn check_accumulations_agree(t: NumType, pairs: &[(u32, u32)]) {
    let f = t.float_format().unwrap();
    let pairs: Vec<(u32, u32)> = pairs.iter().copied().filter(|&(a, b)| finite(f, a) && finite(f, b)).collect();
    let (a, b): (Vec<u32>, Vec<u32>) = pairs.iter().copied().unzip();
    let fp32 = cce_pairs(t, NumType::F32, &a, &b);
    let buf = cce_pairs(t, t, &a, &b);
    for (k, &(x, y)) in pairs.iter().enumerate() {
        let once = round(f, add(decode(f, x), decode(f, y)));
        let twice = via_f32(f, decode(f, x), decode(f, y));
        assert_eq!(once, twice, "{t}: {x:#x} + {y:#x}: double rounding differs");
        assert_eq!((fp32[k], buf[k]), (once, once), "{t}: {x:#x} + {y:#x}");
    }
    println!("{t}: {} pairs agree", pairs.len());
}

#[test]
fn fp32_and_buffer_accumulation_agree_on_every_fp8_pair() {
    for t in [NumType::F8E4M3, NumType::F8E5M2, NumType::F8E3M4] {
        let pairs: Vec<(u32, u32)> = (0..256u32).flat_map(|a| (0..256u32).map(move |b| (a, b))).collect();
        check_accumulations_agree(t, &pairs);
    }
}

#[test]
fn fp32_and_buffer_accumulation_agree_at_every_exponent_gap() {
    let mut rng = Rng(44);
    for t in [NumType::Bf16, NumType::F16] {
        let f = t.float_format().unwrap();
        let mut pairs = Vec::new();
        for a in 0..1u32 << 16 {
            let ea = (a >> f.mbits) & ((1 << f.ebits) - 1);
            for gap in 0..=40u32 {
                let Some(eb) = ea.checked_sub(gap) else { break };
                let m = rng.next() as u32 & f.mant_mask();
                let s = if rng.next() & 1 == 1 { f.sign_bit() } else { 0 };
                pairs.push((a, s | eb << f.mbits | m));
            }
        }
        check_accumulations_agree(t, &pairs);
    }
}

/// Values of `t` with exponents spread over `spread` binades around 1, random signs.
fn values(rng: &mut Rng, f: FloatFormat, n: usize, spread: u32) -> Vec<u32> {
    (0..n)
        .map(|_| {
            let e = (f.bias as u32 - spread / 2 + (rng.next() % u64::from(spread)) as u32) << f.mbits;
            let s = if rng.next() & 1 == 1 { f.sign_bit() } else { 0 };
            s | e | (rng.next() as u32 & f.mant_mask())
        })
        .collect()
}

#[test]
fn a_buffer_dtype_accumulator_rounds_after_every_add() {
    // Merge 2: an 8-source reduce accumulated in bf16 is the sequential sum rounded after each
    // add (the oracle), element by element.
    let (t, f, r, n) = (NumType::Bf16, FloatFormat::BF16, 8, 20_000);
    let mut rng = Rng(7);
    let ranks: Vec<Vec<u32>> = (0..r).map(|_| values(&mut rng, f, n, 24)).collect();
    let bytes: Vec<Vec<u8>> =
        ranks.iter().map(|v| v.iter().flat_map(|x| (*x as u16).to_le_bytes()).collect()).collect();
    let srcs: Vec<&[u8]> = bytes.iter().map(Vec::as_slice).collect();
    let mut out = vec![0u8; 2 * n];
    reduce(&ReduceSpec::add(t, t, t), &srcs, &mut [&mut out], 0).unwrap();
    for i in 0..n {
        let mut acc = ranks[0][i];
        for rank in &ranks[1..] {
            acc = round(f, add(decode(f, acc), decode(f, rank[i])));
        }
        assert_eq!(u32::from(u16::from_le_bytes([out[2 * i], out[2 * i + 1]])), acc, "element {i}");
    }
    let single = Rule { order: Family::Single.order(8), accum: t };
    let seq = Rule { order: Family::Sequential { start: 0, up: true }.order(8), accum: t };
    for rounding in [Rounding::Rne, Rounding::Sr] {
        assert_eq!(merge_key(&single, t, rounding), merge_key(&seq, t, rounding));
    }
    // With stochastic rounding, the two reach the same sets.
    for i in 0..2000 {
        let v: Vec<u32> = ranks.iter().map(|x| x[i]).collect();
        assert_eq!(reachable(&single, t, &v), reachable(&seq, t, &v), "element {i}");
    }
}

#[test]
fn the_first_add_commutes() {
    // Merge 3, for both accumulations, signed zeros included.
    let mut rng = Rng(3);
    let f = FloatFormat::BF16;
    let mut a = values(&mut rng, f, 50_000, 40);
    let mut b = values(&mut rng, f, 50_000, 40);
    a.extend([0x0000, 0x8000, 0x8000, 0x3f80]);
    b.extend([0x8000, 0x0000, 0x8000, 0xbf80]);
    for acc in [NumType::F32, NumType::Bf16] {
        assert_eq!(cce_pairs(NumType::Bf16, acc, &a, &b), cce_pairs(NumType::Bf16, acc, &b, &a), "{acc}");
    }
    for (k, (&x, &y)) in a.iter().zip(&b).enumerate().take(2000) {
        for acc in [NumType::F32, NumType::Bf16] {
            let rule = |o: Order| Rule { order: o, accum: acc };
            let (p, q) = (rule(Order::single(&[0, 1])), rule(Order::single(&[1, 0])));
            assert_eq!(reachable(&p, NumType::Bf16, &[x, y]), reachable(&q, NumType::Bf16, &[x, y]), "{k}");
        }
    }
    // At R = 3, sequential from s + 1 down is sequential from s up, and they share a key.
    let up = Rule { order: Family::Sequential { start: 1, up: true }.order(3), accum: NumType::F32 };
    let down = Rule { order: Family::Sequential { start: 2, up: false }.order(3), accum: NumType::F32 };
    assert_eq!(merge_key(&up, NumType::Bf16, Rounding::Rne), merge_key(&down, NumType::Bf16, Rounding::Rne));
}

#[test]
fn with_stochastic_rounding_fp32_accumulation_is_not_merged() {
    // 1 + 2^-30 in bf16: an fp32 add rounds the addend away (one outcome), a bf16 accumulator
    // may still round up (two): the sets differ, so merge 4 is for RNE only.
    let rule = |accum| Rule { order: Order::single(&[0, 1]), accum };
    let (one, tiny) = (0x3f80, 0x3080);
    assert_eq!(reachable(&rule(NumType::F32), NumType::Bf16, &[one, tiny]), Reach::Values(vec![0x3f80]));
    assert_eq!(reachable(&rule(NumType::Bf16), NumType::Bf16, &[one, tiny]), Reach::Values(vec![0x3f80, 0x3f81]));
    assert_ne!(
        merge_key(&rule(NumType::F32), NumType::Bf16, Rounding::Sr),
        merge_key(&rule(NumType::Bf16), NumType::Bf16, Rounding::Sr)
    );
}
