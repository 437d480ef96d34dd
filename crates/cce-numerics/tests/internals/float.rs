use cce_numerics::float::*;
use cce_numerics::rng::bits32;
use cce_numerics::*;

const FMTS: [FloatFormat; 7] = [
    FloatFormat::F32,
    FloatFormat::F16,
    FloatFormat::BF16,
    FloatFormat::E3M4,
    FloatFormat::E4M3,
    FloatFormat::E5M2,
    FloatFormat::E4M3FN,
];

/// f32 patterns: a stride over all 2^32 plus the neighbourhood of every power of two.
fn patterns() -> impl Iterator<Item = u32> {
    (0..(1u64 << 32)).step_by(65_521).map(|x| x as u32).chain((0..512u32).flat_map(|e| {
        let b = (e & 0xff) << 23 | (e >> 8) << 31;
        [b, b.wrapping_add(1), b.wrapping_sub(1), b | 0x8000, b | 0x7fff, b | 0x1_0000, b | 0x4_0000]
    }))
}

#[test]
fn branch_free_narrowing_equals_the_exact_rounder() {
    for fmt in FMTS {
        for x in patterns() {
            let v = f32::from_bits(x) as f64;
            let r = bits32(7, u64::from(x));
            for sat in [false, true] {
                let a = narrow_f32::<false>(x, 0, fmt, sat, true);
                let b = round_f64(if v.is_nan() { f64::from_bits(v.to_bits()) } else { v }, fmt, None, sat);
                let nan = fmt.is_nan_mag(a & (fmt.sign_bit() - 1));
                assert!(
                    a == b || (nan && fmt.is_nan_mag(b & (fmt.sign_bit() - 1))),
                    "{fmt:?} {x:#x} sat {sat}: {a:#x} {b:#x}"
                );
                let a = narrow_f32::<true>(x, r, fmt, sat, true);
                let b = round_f64(v, fmt, Some(r), sat);
                assert!(
                    a == b || (nan && fmt.is_nan_mag(b & (fmt.sign_bit() - 1))),
                    "SR {fmt:?} {x:#x}: {a:#x} {b:#x}"
                );
            }
        }
    }
}

#[test]
fn small_format_and_f32_tricks_equal_the_general_narrowing() {
    for fmt in FMTS.iter().filter(|f| f.ebits < 8) {
        for x in patterns().chain((0..1u32 << 20).map(|i| i.wrapping_mul(4093))) {
            for sat in [false, true] {
                for keep in [false, true] {
                    let g = narrow_f32::<false>(x, 0, *fmt, sat, keep);
                    assert_eq!(narrow_f32_rne_small(x, *fmt, sat, keep), g, "{fmt:?} {x:#x} sat {sat}");
                }
            }
        }
    }
    for x in patterns() {
        for sat in [false, true] {
            for keep in [false, true] {
                assert_eq!(canon_f32(x, sat, keep), narrow_f32::<false>(x, 0, FloatFormat::F32, sat, keep), "{x:#x}");
            }
        }
    }
}

#[test]
fn bf16_bit_tricks_equal_the_general_narrowing() {
    for x in patterns().chain((0..1u32 << 20).map(|i| i.wrapping_mul(4093))) {
        for sat in [false, true] {
            for keep in [false, true] {
                let g = narrow_f32::<false>(x, 0, FloatFormat::BF16, sat, keep);
                assert_eq!(u32::from(narrow_bf16_rne(x, sat, keep)), g, "{x:#x}");
                let r = bits32(3, u64::from(x));
                let g = narrow_f32::<true>(x, r, FloatFormat::BF16, sat, keep);
                assert_eq!(u32::from(narrow_bf16_sr(x, r, sat, keep)), g, "SR {x:#x}");
            }
        }
    }
}

#[test]
fn widen_equals_decode_for_every_pattern() {
    // widen_to_f32 serves f16 and the fp8 formats (bf16 widens by a shift).
    for fmt in FMTS.iter().filter(|f| f.ebits < 8) {
        for p in 0..(fmt.sign_bit() << 1) {
            let a = widen_to_f32(p, *fmt);
            let d = decode(*fmt, p);
            assert!(if d.is_nan() { f32::from_bits(a).is_nan() } else { a == (d as f32).to_bits() }, "{fmt:?} {p:#x}");
        }
    }
}

#[test]
fn hand_checked_values() {
    // 1 + 2^-8 is a tie between bf16 1.0 and 1.0078125: even (1.0) wins.
    assert_eq!(round_f64(1.0 + 1.0 / 256.0, FloatFormat::BF16, None, false), 0x3f80);
    // 1 + 3·2^-8 ties between 1.0078125 (odd) and 1.015625 (even).
    assert_eq!(round_f64(1.0 + 3.0 / 256.0, FloatFormat::BF16, None, false), 0x3f82);
    // e4m3: max 240 (0x77); 248 is the tie to the would-be 256 → inf (0x78).
    assert_eq!(round_f64(240.0, FloatFormat::E4M3, None, false), 0x77);
    assert_eq!(round_f64(247.9, FloatFormat::E4M3, None, false), 0x77);
    assert_eq!(round_f64(248.0, FloatFormat::E4M3, None, false), 0x78);
    assert_eq!(round_f64(1e9, FloatFormat::E4M3, None, true), 0x77);
    assert_eq!(round_f64(f64::NEG_INFINITY, FloatFormat::E4M3, None, true), 0xf7);
    // e4m3fn: max 448 (0x7e); 464 ties to even (448); beyond → NaN (0x7f).
    assert_eq!(round_f64(464.0, FloatFormat::E4M3FN, None, false), 0x7e);
    assert_eq!(round_f64(465.0, FloatFormat::E4M3FN, None, false), 0x7f);
    assert_eq!(round_f64(-1e6, FloatFormat::E4M3FN, None, true), 0xfe);
    assert_eq!(round_f64(f64::INFINITY, FloatFormat::E4M3FN, None, false), 0x7f);
    // NaN keeps its sign.
    assert_eq!(round_f64(-f64::NAN, FloatFormat::F16, None, false), 0xfe00);
    // Smallest e5m2 subnormal 2^-16; half of it ties to 0, just above rounds up.
    assert_eq!(round_f64(2f64.powi(-17), FloatFormat::E5M2, None, false), 0);
    assert_eq!(round_f64(2f64.powi(-17) * 1.0001, FloatFormat::E5M2, None, false), 1);
    // SR: r = 0 never rounds up, r = u32::MAX rounds up anything inexact.
    assert_eq!(round_f64(1.0 + 1.0 / 1024.0, FloatFormat::BF16, Some(0), false), 0x3f80);
    assert_eq!(round_f64(1.0 + 1.0 / 1024.0, FloatFormat::BF16, Some(u32::MAX), false), 0x3f81);
    assert_eq!(round_f64(1.0, FloatFormat::BF16, Some(u32::MAX), false), 0x3f80);
}

#[test]
fn round_to_odd_sum_is_exactly_rounded() {
    // 1 + 2^-60 is not an f64; rounded to odd it must stay above 1 so bf16 SR/RNE see it.
    let s = add_round_odd(1.0, 2f64.powi(-60));
    assert!(s > 1.0 && s < 1.0 + 2f64.powi(-51));
    assert_eq!(add_round_odd(1.0, 2.0), 3.0);
}
