use cce_numerics::gce::*;

/// fp32's quiet NaN and +infinity, as IEEE 754 writes them.
const F32_QNAN: u32 = 0x7FC0_0000;
const F32_INF: u32 = 0x7F80_0000;

/// splitmix64: test data only.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [−1, 1).
    fn unit(&mut self) -> f32 {
        ((self.next() >> 40) as f32) / (1u64 << 23) as f32 - 1.0
    }
}

/// `2^k`, by repeated doubling or halving (independent of `float::pow2`).
fn p2(k: i32) -> f64 {
    let mut v = 1.0f64;
    for _ in 0..k.unsigned_abs() {
        v = if k > 0 { v * 2.0 } else { v * 0.5 };
    }
    v
}

/// Every kind of block the codec must handle, as (name, values).
fn kinds() -> Vec<(&'static str, Vec<f32>)> {
    let mut r = Rng(0x6CE);
    let mut kinds: Vec<(&'static str, Vec<f32>)> = Vec::new();
    for mag in [1e-30f32, 1e-20, 1e-10, 1e-3, 1.0, 1e3, 1e10, 1e20, 1e30] {
        kinds.push(("uniform", (0..1000).map(|_| r.unit() * mag).collect()));
    }
    kinds.push(("random finite bits", (0..1000).map(|_| f32::from_bits(r.next() as u32 & 0xFF7F_FFFF)).collect()));
    kinds.push(("random bits", (0..1000).map(|_| f32::from_bits(r.next() as u32)).collect()));
    for c in [3.0f32, -1.75, 1.75, f32::from_bits(0x3FE0_0001), 57344.0, 1e-40, -f32::MAX] {
        kinds.push(("constant", vec![c; 300]));
    }
    kinds.push(("zeros", vec![0.0; 300]));
    kinds.push(("signed zeros", (0..300).map(|i| if i % 3 == 0 { -0.0 } else { 0.0 }).collect()));
    kinds.push(("subnormals", (0..1000).map(|_| f32::from_bits(r.next() as u32 & 0x807F_FFFF)).collect()));
    kinds.push(("tiny subnormals", (0..300).map(|_| f32::from_bits(r.next() as u32 & 0x8000_00FF)).collect()));
    let mut mix: Vec<f32> = (0..1000).map(|_| r.unit() * 100.0).collect();
    for (i, v) in
        [f32::NAN, -f32::NAN, f32::INFINITY, f32::NEG_INFINITY, f32::from_bits(0x7F80_0001)].into_iter().enumerate()
    {
        for j in (i * 37..1000).step_by(97) {
            mix[j] = v;
        }
    }
    kinds.push(("nan and inf", mix));
    kinds.push(("only nan and inf", (0..300).map(|i| [f32::NAN, f32::NEG_INFINITY, -f32::NAN][i % 3]).collect()));
    kinds.push((
        "near f32::MAX",
        (0..1000)
            .map(|_| f32::from_bits(0x7F60_0000 + (r.next() as u32 & 0x1F_FFFF) + (r.next() as u32 & 0x8000_0000)))
            .collect(),
    ));
    kinds
}

const BLOCKS: [usize; 7] = [1, 7, 32, 64, 128, 256, 1000];

/// (significand integer, without trailing zeros) of a finite nonzero f32.
fn odd_significand(y: f32) -> u32 {
    let a = y.to_bits() & 0x7FFF_FFFF;
    let m = if a >> 23 == 0 { a } else { (a & 0x7F_FFFF) | 0x80_0000 };
    m >> m.trailing_zeros()
}

#[test]
fn gce_round_trip_is_within_the_bound() {
    let mut saturated = 0;
    for (name, xs) in kinds() {
        for block in BLOCKS {
            let (scales, payload) = compress_to_vec(&xs, block).unwrap();
            let mut out = vec![0f32; xs.len()];
            decompress(&scales, &payload, block, &mut out).unwrap();
            for (i, (&x, &y)) in xs.iter().zip(&out).enumerate() {
                let e = scale_exponent_of_byte(scales[i / block]);
                let ctx = || std::format!("{name} block {block} [{i}]: {x:e} ({:08x}) -> {y:e}", x.to_bits());
                if x.is_nan() {
                    assert_eq!(y.to_bits(), F32_QNAN | (x.to_bits() & 0x8000_0000), "{}", ctx());
                } else if x.is_infinite() {
                    assert_eq!(y.to_bits(), x.to_bits(), "{}", ctx());
                } else {
                    let err = (f64::from(x) - f64::from(y)).abs();
                    assert!(err <= bound(x, e), "{}: err {err:e} > {:e}", ctx(), bound(x, e));
                    assert!(y.is_finite(), "{}", ctx());
                    // The sign survives, zeros included.
                    assert_eq!(x.is_sign_negative(), y.is_sign_negative(), "{}", ctx());
                    if y.abs() == f32::MAX {
                        saturated += 1;
                    } else if y != 0.0 {
                        assert!(odd_significand(y) < 8, "{}: more than 3 significant bits", ctx());
                    }
                }
            }
        }
    }
    assert!(saturated > 0, "the near-f32::MAX blocks must reach the decode saturation");
}

#[test]
fn gce_every_code_decodes_as_the_formula() {
    for e in [-127, -126, -100, -20, -1, 0, 1, 15, 100, 112, 113, 114, 126, 127, 128] {
        for q in 0..=255u8 {
            let neg = q & 0x80 != 0;
            let ef = i32::from((q >> 2) & 0x1F);
            let mf = f64::from(q & 3);
            let y = decode_element(q, e);
            if ef == 31 {
                let want = match (mf == 0.0, neg) {
                    (true, false) => 0x7F80_0000,
                    (true, true) => 0xFF80_0000,
                    (false, false) => 0x7FC0_0000,
                    (false, true) => 0xFFC0_0000,
                };
                assert_eq!(y.to_bits(), want, "q {q:02x} E {e}");
                continue;
            }
            let mag = if ef == 0 { mf / 4.0 * p2(-14) } else { (1.0 + mf / 4.0) * p2(ef - 15) } * p2(e);
            let want = if mag > f64::from(f32::MAX) { f32::MAX } else { mag as f32 };
            assert_eq!(f64::from(want), mag.min(f64::from(f32::MAX)), "q {q:02x} E {e}: not exact");
            let want = if neg { -want } else { want };
            assert_eq!(y.to_bits(), want.to_bits(), "q {q:02x} E {e}");
        }
    }
}

#[test]
fn gce_scale_exponent_is_minimal() {
    let mut r = Rng(7);
    let edges = [
        0x0000_0001u32, // smallest subnormal
        0x007F_FFFF,    // largest subnormal
        0x0080_0000,    // smallest normal
        0x3F80_0000,    // 1.0
        0x3FE0_0000,    // 1.75: m = 1.75 exactly
        0x3FE0_0001,    // just above 1.75
        0x4760_0000,    // 57344
        0x4760_0001,    // just above 57344
        0x0760_0000,    // 1.75 · 2^−113: E = −128 → clamped
        0x07E0_0000,    // 1.75 · 2^−112: E = −127 exactly
        0x7F7F_FFFF,    // f32::MAX
    ];
    let randoms = (0..20_000).map(|_| r.next() as u32 & 0x7FFF_FFFF).filter(|&a| a < F32_INF);
    for a in edges.into_iter().chain(randoms) {
        let x = f32::from_bits(a);
        let e = scale_exponent(&[x]);
        let amax = f64::from(x);
        assert!((MIN_SCALE_EXPONENT..=MAX_WRITTEN_SCALE_EXPONENT).contains(&e), "{x:e}: E {e}");
        assert!(amax <= 57344.0 * p2(e), "{x:e}: E {e} clips");
        assert!(e == MIN_SCALE_EXPONENT || amax > 57344.0 * p2(e - 1), "{x:e}: E {e} is not minimal");
        // Sign, NaN, inf and smaller elements do not change it.
        let block = [-x, f32::NAN, f32::INFINITY, x * 0.5, -f32::INFINITY];
        assert_eq!(scale_exponent(&block), e, "{x:e}");
    }
    assert_eq!(scale_exponent(&[]), -127);
    assert_eq!(scale_exponent(&[0.0, -0.0, f32::NAN, f32::INFINITY]), -127);
    assert_eq!(scale_exponent(&[f32::from_bits(0x4760_0000)]), 0);
    assert_eq!(scale_exponent(&[f32::from_bits(0x4760_0001)]), 1);
    assert_eq!(scale_exponent(&[f32::MAX]), 113);
}

#[test]
fn gce_element_vectors() {
    // (x, E, byte, why): exact bits, ties to even.
    let cases: [(f32, i32, u8, &str); 16] = [
        (1.0, 0, 0x3C, "1.0 = exponent 15, mantissa 0"),
        (1.125, 0, 0x3C, "tie between 1.0 and 1.25: even mantissa 0"),
        (1.375, 0, 0x3E, "tie between 1.25 and 1.5: even mantissa 2"),
        (f32::from_bits(0x3F90_0001), 0, 0x3D, "just above the tie: up"),
        (57344.0, 0, 0x7B, "the largest finite"),
        (f32::from_bits(0x476F_FFFF), 0, 0x7B, "just below the overflow tie 61440"),
        (61440.0, 0, 0x7C, "overflow tie rounds to even = inf (another E than the block's)"),
        (f32::from_bits(0x3780_0000), 0, 0x01, "2^-16: the smallest subnormal"),
        (f32::from_bits(0x3700_0000), 0, 0x00, "2^-17: tie between 0 and 2^-16, even 0"),
        (f32::from_bits(0x37C0_0000), 0, 0x02, "3 · 2^-17: tie between 1 and 2 quanta, even 2"),
        (-0.0, 5, 0x80, "-0 keeps its sign"),
        (-1e-45, 0, 0x80, "a tiny negative rounds to -0"),
        (f32::INFINITY, 0, 0x7C, "+inf"),
        (f32::NEG_INFINITY, -127, 0xFC, "-inf"),
        (f32::MAX, 113, 0x78, "(2 - 2^-23) · 2^14 rounds up to 2^15"),
        (1e-40, -127, 0x24, "subnormal 1e-40 · 2^127 ≈ 1.089 · 2^-6, nearer 2^-6 than 1.25 · 2^-6"),
    ];
    for (x, e, q, why) in cases {
        assert_eq!(encode_element(x, e), q, "{x:e} E {e}: {why}");
    }
    for nan in [0x7FC0_0000u32, 0x7F80_0001, 0x7FFF_FFFF] {
        assert_eq!(encode_element(f32::from_bits(nan), 3), 0x7E, "{nan:08x}");
        assert_eq!(encode_element(f32::from_bits(nan | 0x8000_0000), 3), 0xFE, "-{nan:08x}");
    }
    assert_eq!(decode_element(0x78, 113), f32::MAX, "2^128 saturates");
    assert_eq!(decode_element(0xFB, 128), -f32::MAX, "-57344 · 2^128 saturates");
    assert_eq!(decode_element(0x01, -127).to_bits(), 1 << 6, "2^-143 is the f32 subnormal 64 · 2^-149");
    assert_eq!(decode_element(0x7C, 128), f32::INFINITY);
}

#[test]
fn gce_scale_bytes() {
    assert_eq!(scale_byte(-127), 0);
    assert_eq!(scale_byte(0), 127);
    assert_eq!(scale_byte(113), 240);
    assert_eq!(scale_byte(128), 255);
    assert_eq!(scale_byte(-1000), 0);
    assert_eq!(scale_byte(1000), 255);
    for b in 0..=255u8 {
        assert_eq!(scale_byte(scale_exponent_of_byte(b)), b);
    }
}

#[test]
fn gce_sizes_are_refused_not_panicked() {
    let xs = [1.0f32; 65];
    let mut q = [0u8; 65];
    let mut s = [0u8; 3];
    assert_eq!(compress(&xs, 0, &mut s, &mut q), Err(GceError::ZeroBlock));
    assert_eq!(
        compress(&xs, 32, &mut s[..2], &mut q),
        Err(GceError::ScaleCount { got: 2, expected: 3, elems: 65, block: 32 })
    );
    assert_eq!(compress(&xs, 32, &mut s, &mut q[..64]), Err(GceError::PayloadLength { got: 64, expected: 65 }));
    compress(&xs, 32, &mut s, &mut q).unwrap();
    let mut out = [0f32; 65];
    assert_eq!(decompress(&s, &q, 0, &mut out), Err(GceError::ZeroBlock));
    assert_eq!(
        decompress(&s, &q, 64, &mut out),
        Err(GceError::ScaleCount { got: 3, expected: 2, elems: 65, block: 64 })
    );
    assert_eq!(decompress(&s, &q, 32, &mut out[..1]), Err(GceError::OutputLength { got: 1, expected: 65 }));
    assert_eq!(out, [0.0; 65], "nothing written before an error");
    decompress(&s, &q, 32, &mut out).unwrap();
    assert_eq!(out, xs);
    assert_eq!(compress_to_vec(&[], 32), Ok((vec![], vec![])));
    assert_eq!(
        GceError::ScaleCount { got: 2, expected: 3, elems: 65, block: 32 }.to_string(),
        "gce scale table has 2 bytes, expected ceil(65 / 32) = 3"
    );
}
