//! Stochastic rounding: neighbours, unbiasedness, and bits that depend only on
//! (seed, stream, element index) — never on threads, chunking or the SIMD path.

use cce_numerics::{AccumType, Exec, Isa, NumType, Op, ReduceSpec, Rounding, convert_to_vec, reduce_with};

const SR: Rounding = Rounding::Stochastic { seed: 42, stream: 3 };

struct Gen(u64);
impl Gen {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        cce_numerics::rng::mix64(self.0)
    }
}

/// Every finite value of a ≤ 16-bit float type, sorted (decoded independently of rounding).
fn grid(t: NumType) -> Vec<f64> {
    let f = t.float_format().unwrap();
    let mut v: Vec<f64> =
        (0..(f.sign_bit() << 1)).map(|p| cce_numerics::float::decode(f, p)).filter(|x| x.is_finite()).collect();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v.dedup();
    v
}

fn bracket(g: &[f64], x: f64) -> (f64, f64) {
    let i = g.partition_point(|&v| v <= x);
    let lo = g[i - 1];
    if lo == x { (x, x) } else { (lo, g[i]) }
}

fn decode_out(t: NumType, bytes: &[u8]) -> Vec<f64> {
    let f = t.float_format().unwrap();
    bytes
        .chunks(t.size())
        .map(|c| {
            let mut w = [0u8; 4];
            w[..c.len()].copy_from_slice(c);
            cce_numerics::float::decode(f, u32::from_le_bytes(w))
        })
        .collect()
}

const NARROW: [NumType; 6] =
    [NumType::Bf16, NumType::F16, NumType::F8E3M4, NumType::F8E4M3, NumType::F8E5M2, NumType::F8E4M3Fn];

#[test]
fn every_result_is_one_of_the_two_neighbours() {
    let mut g = Gen(1);
    for t in NARROW {
        let grid = grid(t);
        let max = *grid.last().unwrap();
        let xs: Vec<f32> = (0..100_000)
            .map(|_| {
                loop {
                    let v = f32::from_bits(g.next() as u32);
                    // Values in range, mostly near the format's scale.
                    let v = v / 2f32.powi(((g.next() % 200) as i32) - 100).max(1e-30);
                    if v.is_finite() && f64::from(v).abs() < max {
                        break v;
                    }
                }
            })
            .collect();
        let bytes: Vec<u8> = xs.iter().flat_map(|x| x.to_le_bytes()).collect();
        let out = decode_out(t, &convert_to_vec(NumType::F32, t, &bytes, SR, false).unwrap());
        let mut ups = 0usize;
        for (x, y) in xs.iter().zip(&out) {
            let (lo, hi) = bracket(&grid, f64::from(*x));
            assert!(*y == lo || *y == hi, "{t}: {x:e} -> {y:e}, neighbours {lo:e} {hi:e}");
            ups += usize::from(*y == hi && lo != hi);
        }
        assert!(ups > 1000, "{t}: SR never rounds up?");
    }
}

#[test]
fn mean_is_within_three_sigma_of_the_exact_value() {
    const N: usize = 1_000_000;
    let cases: [(NumType, f32); 6] = [
        (NumType::Bf16, 1.0 + 0.3 / 128.0),
        (NumType::Bf16, -3.0e-39), // an fp32 subnormal: bf16 subnormal grid
        (NumType::F16, 1.0e-6),    // f16 subnormal
        (NumType::F8E4M3, 1.1),
        (NumType::F8E5M2, 0.7),
        (NumType::F8E3M4, 13.3),
    ];
    for (t, x) in cases {
        let grid = grid(t);
        let (lo, hi) = bracket(&grid, f64::from(x));
        assert!(lo < hi, "{t}: {x} must be inexact");
        let p = (f64::from(x) - lo) / (hi - lo);
        let bytes: Vec<u8> = std::iter::repeat_n(x.to_le_bytes(), N).flatten().collect();
        let out = decode_out(t, &convert_to_vec(NumType::F32, t, &bytes, SR, false).unwrap());
        let mean = out.iter().sum::<f64>() / N as f64;
        let sigma = (hi - lo) * (p * (1.0 - p) / N as f64).sqrt();
        let err = (mean - f64::from(x)).abs();
        assert!(err <= 3.0 * sigma, "{t}: x {x:e} mean {mean:e} off by {err:e} > 3σ = {:e}", 3.0 * sigma);
    }
}

fn random_bytes(seed: u64, n: usize) -> Vec<u8> {
    let mut g = Gen(seed);
    (0..n).map(|_| g.next() as u8).collect()
}

/// `n` elements of `t` with moderate values (so sums stay finite and mostly inexact), and
/// every 50th element a random bit pattern (inf, NaN, extremes).
fn moderate(t: NumType, seed: u64, n: usize) -> Vec<u8> {
    let mut g = Gen(seed);
    let raw = random_bytes(seed ^ 0xabc, n * t.size());
    if !t.is_float() {
        let vals: Vec<u8> = (0..n)
            .flat_map(|_| (((g.next() % 4001) as i64 - 2000) as u64).to_le_bytes()[..t.size()].to_vec())
            .collect();
        return vals;
    }
    let f: Vec<u8> = (0..n)
        .flat_map(|_| {
            let r = g.next();
            let v = ((r >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 2f64.powi((r % 8) as i32);
            (v as f32).to_le_bytes()
        })
        .collect();
    let mut out = convert_to_vec(NumType::F32, t, &f, Rounding::Rne, false).unwrap();
    for (j, c) in out.chunks_mut(t.size()).enumerate().step_by(50) {
        c.copy_from_slice(&raw[j * t.size()..(j + 1) * t.size()]);
    }
    out
}

fn specs() -> Vec<ReduceSpec> {
    let add = |i, a, o| ReduceSpec::add(i, a, o).with_rounding(SR);
    vec![
        add(NumType::Bf16, NumType::F32, NumType::Bf16),
        add(NumType::F8E4M3, NumType::F32, NumType::F8E4M3),
        add(NumType::F16, NumType::F32, NumType::F8E5M2),
        add(NumType::F32, NumType::F32, NumType::F16),
        ReduceSpec { accum_type: AccumType::Fp32r, ..add(NumType::Bf16, NumType::F32, NumType::F8E3M4) },
        // Generic path: a bf16 accumulator rounds every input and every step stochastically.
        add(NumType::F32, NumType::Bf16, NumType::F8E4M3Fn),
        add(NumType::I32, NumType::F16, NumType::Bf16),
        add(NumType::F32, NumType::F32, NumType::F16).with_op(Op::Fma(vec![cce_numerics::FmaSource::scaled(0.3); 3])),
    ]
}

fn run(spec: &ReduceSpec, srcs: &[Vec<u8>], first: u64, exec: &Exec) -> Vec<u8> {
    let refs: Vec<&[u8]> = srcs.iter().map(|v| &v[..]).collect();
    let n = srcs[0].len() / spec.in_type.size();
    let mut a = vec![0xa5u8; n * spec.out_type.size()];
    let mut b = vec![0x5au8; n * spec.out_type.size()];
    reduce_with(spec, &refs, &mut [&mut a, &mut b], first, exec).unwrap();
    assert_eq!(a, b, "the two outputs differ");
    a
}

#[test]
fn same_seed_same_bits_at_any_thread_count_chunk_size_and_isa() {
    for spec in specs() {
        let n = 10_007;
        let srcs: Vec<Vec<u8>> = (0..3).map(|i| moderate(spec.in_type, i + 7, n)).collect();
        let base = run(&spec, &srcs, 1 << 40, &Exec::default());
        for exec in [
            Exec { threads: 2, ..Exec::default() },
            Exec { threads: 3, chunk_elements: 1000, max_isa: Isa::Avx512 },
            Exec { threads: 1, chunk_elements: 1, max_isa: Isa::Portable },
            Exec { threads: 2, chunk_elements: 4095, max_isa: Isa::Portable },
            Exec { threads: 2, chunk_elements: 100, max_isa: Isa::Avx2 },
            Exec { threads: 1, chunk_elements: 0, max_isa: Isa::Avx512 },
        ] {
            assert!(run(&spec, &srcs, 1 << 40, &exec) == base, "{spec:?} {exec:?}");
        }
        // Chunked calls with the right first_element_index give the same bits as one call.
        let isz = spec.in_type.size();
        let cut = 3001;
        let head: Vec<Vec<u8>> = srcs.iter().map(|s| s[..cut * isz].to_vec()).collect();
        let tail: Vec<Vec<u8>> = srcs.iter().map(|s| s[cut * isz..].to_vec()).collect();
        let mut joined = run(&spec, &head, 1 << 40, &Exec::default());
        joined.extend(run(&spec, &tail, (1 << 40) + cut as u64, &Exec { threads: 2, ..Exec::default() }));
        assert!(joined == base, "{spec:?}: chunked calls");
        // Another seed or stream changes the bits (the inputs are random, so many elements are
        // inexact), and another first index shifts the random stream.
        let other = |r| ReduceSpec { rounding: r, ..spec.clone() };
        let seed = run(&other(Rounding::Stochastic { seed: 43, stream: 3 }), &srcs, 1 << 40, &Exec::default());
        let stream = run(&other(Rounding::Stochastic { seed: 42, stream: 4 }), &srcs, 1 << 40, &Exec::default());
        assert!(
            seed != base && stream != base && run(&spec, &srcs, 0, &Exec::default()) != base,
            "{spec:?}: SR bits ignore the key"
        );
    }
}

#[test]
fn simd_and_portable_code_agree_on_every_hot_combination() {
    let floats = [
        NumType::F32,
        NumType::Bf16,
        NumType::F16,
        NumType::F8E3M4,
        NumType::F8E4M3,
        NumType::F8E5M2,
        NumType::F8E4M3Fn,
    ];
    for tin in floats {
        for tout in floats {
            for rounding in [Rounding::Rne, SR] {
                for saturate in [false, true] {
                    for nsrc in [1, 2, 5] {
                        let spec =
                            ReduceSpec { saturate, ..ReduceSpec::add(tin, NumType::F32, tout).with_rounding(rounding) };
                        let srcs: Vec<Vec<u8>> = (0..nsrc).map(|i| random_bytes(i + 100, 5000 * tin.size())).collect();
                        let a = run(&spec, &srcs, 9, &Exec::default());
                        let b = run(&spec, &srcs, 9, &Exec { max_isa: Isa::Portable, ..Exec::default() });
                        let c = run(&spec, &srcs, 9, &Exec { max_isa: Isa::Avx2, ..Exec::default() });
                        assert!(a == b && a == c, "{spec:?} nsrc {nsrc}");
                    }
                }
            }
        }
    }
}

#[test]
fn tiles_that_cross_a_2_pow_32_index_boundary() {
    for spec in specs() {
        let n = 300;
        let srcs: Vec<Vec<u8>> = (0..3).map(|i| moderate(spec.in_type, i + 70, n)).collect();
        let first = (1u64 << 32) - 37;
        let whole = run(&spec, &srcs, first, &Exec::default());
        let (isz, osz) = (spec.in_type.size(), spec.out_type.size());
        for j in 0..n {
            let one: Vec<Vec<u8>> = srcs.iter().map(|s| s[j * isz..(j + 1) * isz].to_vec()).collect();
            let got = run(&spec, &one, first + j as u64, &Exec::default());
            assert!(got[..] == whole[j * osz..(j + 1) * osz], "{spec:?} element {j}");
        }
    }
}
