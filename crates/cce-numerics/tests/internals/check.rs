use cce_numerics::check::*;
use cce_numerics::float;
use cce_numerics::*;

/// The exact values of `ranks` for `combine`, as [`ExactBlock`] computes them.
fn exact_of(t: NumType, combine: Combine, ranks: &[Vec<u8>], divisor: f64) -> (Vec<f64>, Vec<f64>) {
    let len = ranks[0].len() / t.size();
    let mut b = ExactBlock::new(t, combine);
    b.start(len);
    for r in ranks {
        b.add(r).unwrap();
    }
    b.finish(divisor);
    (b.values().to_vec(), b.magnitudes().to_vec())
}

fn decode(t: NumType, c: &[u8]) -> f64 {
    let f = t.float_format().unwrap();
    let mut b = [0u8; 4];
    b[..c.len()].copy_from_slice(c);
    float::decode(f, u32::from_le_bytes(b))
}

fn bytes(seed: u64, n: usize) -> Vec<u8> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

#[test]
fn adding_every_rank_at_once_equals_the_element_by_element_f64_loop() {
    // Every float dtype (random bytes: NaN, inf and every pattern), each combine, lengths
    // around the stretch and the eight-element groups, against `float::decode` and a
    // plain f64 fold over the ranks in order. Any NaN stands for every NaN: its sign and
    // payload are the compiler's to choose (it may swap an addition's operands).
    let same = |a: f64, b: f64| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
    for t in [NumType::Bf16, NumType::F16, NumType::F32, NumType::F8E4M3, NumType::F8E5M2, NumType::F8E3M4] {
        for combine in [Combine::Sum, Combine::Min, Combine::Max] {
            for n in [1, 7, 8, 9, STRETCH - 1, STRETCH, 2 * STRETCH + 13] {
                let ranks: Vec<Vec<u8>> = (0..5).map(|r| bytes(r * 31 + n as u64, n * t.size())).collect();
                let mut b = ExactBlock::new(t, combine);
                b.start(n);
                b.add_ranks(&ranks.iter().map(Vec::as_slice).collect::<Vec<_>>()).unwrap();
                b.finish(1.0);
                for i in 0..n {
                    let xs: Vec<f64> = ranks.iter().map(|r| decode(t, &r[i * t.size()..(i + 1) * t.size()])).collect();
                    let want = match combine {
                        Combine::Sum => xs.iter().fold(0.0, |a, x| a + x),
                        Combine::Min => xs.iter().fold(f64::INFINITY, |a, &x| a.min(x)),
                        Combine::Max => xs.iter().fold(f64::NEG_INFINITY, |a, &x| a.max(x)),
                    };
                    let mag = xs.iter().fold(0.0, |a, x| a + x.abs());
                    assert!(same(b.values()[i], want), "{t:?} {combine:?} {n} {i}");
                    assert!(same(b.magnitudes()[i], mag), "{t:?} {combine:?} {n} {i}");
                }
            }
        }
    }
    // Integers add rank after rank through `add` (tested below): the same wrapped sums.
    let ints: Vec<Vec<u8>> = (0..3).map(|r| bytes(r + 5, 4 * 9)).collect();
    let mut b = ExactBlock::new(NumType::I32, Combine::Sum);
    b.start(9);
    b.add_ranks(&ints.iter().map(Vec::as_slice).collect::<Vec<_>>()).unwrap();
    b.finish(1.0);
    for i in 0..9 {
        let sum =
            ints.iter().fold(0i32, |a, r| a.wrapping_add(i32::from_le_bytes(r[4 * i..4 * i + 4].try_into().unwrap())));
        assert_eq!(b.values()[i], f64::from(sum), "{i}");
    }
    let mut b = ExactBlock::new(NumType::Bf16, Combine::Sum);
    b.start(4);
    assert!(matches!(b.add_ranks(&[&[0u8; 8], &[0u8; 6]]), Err(NumericsError::OutputLength { len: 6, .. })));
}

#[test]
fn exact_sums_equal_the_element_by_element_f64_loop_for_every_float_dtype() {
    for t in [NumType::Bf16, NumType::F16, NumType::F32, NumType::F8E4M3, NumType::F8E5M2, NumType::F8E3M4] {
        let n = 37;
        let ranks: Vec<Vec<u8>> = (0..5).map(|r| bytes(r + 11, n * t.size())).collect();
        for combine in [Combine::Sum, Combine::Min, Combine::Max] {
            let (v, m) = exact_of(t, combine, &ranks, 1.0);
            for i in 0..n {
                let xs: Vec<f64> = ranks.iter().map(|r| decode(t, &r[i * t.size()..(i + 1) * t.size()])).collect();
                let want = match combine {
                    Combine::Sum => xs.iter().fold(0.0, |a, x| a + x),
                    Combine::Min => xs.iter().fold(f64::INFINITY, |a, &x| a.min(x)),
                    Combine::Max => xs.iter().fold(f64::NEG_INFINITY, |a, &x| a.max(x)),
                };
                let mag = xs.iter().fold(0.0, |a, x| a + x.abs());
                assert!(want.to_bits() == v[i].to_bits() || (want.is_nan() && v[i].is_nan()), "{t:?} {i}");
                assert!(mag.to_bits() == m[i].to_bits() || (mag.is_nan() && m[i].is_nan()), "{t:?} {i}");
            }
        }
    }
}

/// The vector measure kernels give the portable loop's bits: random bit patterns (NaN,
/// infinities, subnormals) as outputs and inputs of every float dtype, lengths with and
/// without a ragged tail, sums and maxima, and bounds tight, loose and with a divisor.
#[test]
fn every_isa_measures_a_block_as_the_portable_loop_does() {
    let bits = |b: &BlockErrors| {
        (
            b.max_abs_err.to_bits(),
            b.max_ulp_err.to_bits(),
            b.ulp_sum.to_bits(),
            b.max_exact.to_bits(),
            b.counted,
            b.wrong,
        )
    };
    for t in [NumType::Bf16, NumType::F16, NumType::F32, NumType::F8E4M3, NumType::F8E5M2] {
        for (seed, n) in [(1u64, 1000usize), (2, 1003), (3, 7), (4, 4096)] {
            let ranks: Vec<Vec<u8>> = (0..4).map(|r| bytes(seed * 10 + r, n * t.size())).collect();
            for combine in [Combine::Sum, Combine::Max] {
                for divisor in [1.0, 4.0] {
                    let mut e = ExactBlock::new(t, combine);
                    e.start(n);
                    for r in &ranks {
                        e.add(r).unwrap();
                    }
                    e.finish(divisor);
                    // Outputs: a random pattern, and the first rank's input (near-exact
                    // where one rank dominates).
                    for out in [bytes(seed * 10 + 7, n * t.size()), ranks[0].clone()] {
                        for bound in [
                            ErrorBound { rel: 4.0 * 2f64.powi(-8), abs: 0.0, scale_divisor: divisor },
                            ErrorBound { rel: 0.0, abs: 1e-3, scale_divisor: divisor },
                            ErrorBound { rel: 0.5, abs: 1.0, scale_divisor: 1.0 },
                        ] {
                            let mut s = OutputScratch::default();
                            let want = bits(&measure_block_with(&e, &out, &bound, &mut s, Isa::Portable).unwrap());
                            for isa in [Isa::Avx2, Isa::Avx512] {
                                let got = bits(&measure_block_with(&e, &out, &bound, &mut s, isa).unwrap());
                                assert_eq!(got, want, "{t:?} n {n} {combine:?} {bound:?} {isa:?}");
                            }
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn integer_sums_wrap_at_the_width() {
    let a = [100u8, 200, 255];
    let b = [100u8, 100, 2];
    let (v, m) = exact_of(NumType::U8, Combine::Sum, &[a.to_vec(), b.to_vec()], 1.0);
    assert_eq!(v, vec![200.0, 44.0, 1.0]);
    assert_eq!(m, vec![200.0, 300.0, 257.0]);
    let (v, _) = exact_of(NumType::I8, Combine::Sum, &[vec![100], vec![100]], 1.0);
    assert_eq!(v, vec![-56.0]);
}

#[test]
fn ulps_are_powers_of_two_at_the_floor_and_above() {
    assert_eq!(ulp_of(NumType::Bf16, 1.0), 2f64.powi(-7));
    assert_eq!(ulp_of(NumType::Bf16, 1.5), 2f64.powi(-7));
    assert_eq!(ulp_of(NumType::Bf16, 2.0), 2f64.powi(-6));
    assert_eq!(ulp_of(NumType::Bf16, 0.0), 2f64.powi(-133));
    assert_eq!(ulp_of(NumType::F16, 0.0), 2f64.powi(-24));
    assert_eq!(ulp_of(NumType::F32, f64::INFINITY), 2f64.powi(-149));
    assert_eq!(ulp_of(NumType::I32, 5.0), 1.0);
}

#[test]
fn a_block_counts_errors_outside_the_bound_and_nan() {
    let t = NumType::F32;
    let ranks =
        [[1.0f32, 2.0, 0.5].map(f32::to_le_bytes).concat(), [1.0f32, -2.0, 0.25].map(f32::to_le_bytes).concat()];
    let mut e = ExactBlock::new(t, Combine::Sum);
    e.start(3);
    for r in &ranks {
        e.add(r).unwrap();
    }
    e.finish(1.0);
    let out = [2.0f32, 1.0, f32::NAN].map(f32::to_le_bytes).concat();
    let bound = ErrorBound { rel: 2.0 * 2f64.powi(-24), abs: 0.0, scale_divisor: 1.0 };
    let b = measure_block(&e, &out, &bound, &mut OutputScratch::default()).unwrap();
    assert_eq!(b.wrong, 2);
    assert_eq!(b.counted, 2);
    assert_eq!(b.max_abs_err, 1.0);
    // 1.0 off at scale Σ|x| = 4: the ulp of fp32 at 4 is 2^-21.
    assert_eq!(b.max_ulp_err, 2f64.powi(21));
    assert_eq!(b.max_exact, 2.0);
    assert!(measure_block(&e, &out[..8], &bound, &mut OutputScratch::default()).is_err());
}
