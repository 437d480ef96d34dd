//! The streaming check (`metrics::measure_parts`, block by block on several threads) against
//! the element-by-element measure it replaced, kept here as the oracle: the same `wrong`, the
//! same maxima, the same mean (up to the order of its sum), for every kind of run the tests
//! exercise — float and integer dtypes, every op, RNE and SR, GCE, ranks that differ, and
//! inputs held, regenerated or read from files.

mod common;

use cce_collectives::collective::{Algo, Compress, Config, RedOp};
use cce_collectives::metrics::{self, Generated, Held, InputSource, Metrics, RankFiles, measure_parts};
use cce_format::SdmaDtype;
use cce_numerics::NumType;

/// The old measure, element by element over a table of (exact, Σ|x|) — as the module was
/// before the streaming check (commit e41c7b6), with the same f64 arithmetic.
mod oracle {
    use super::*;

    fn value_at(t: NumType, bytes: &[u8], i: usize) -> f64 {
        let size = t.size();
        let mut b = [0u8; 8];
        b[..size].copy_from_slice(&bytes[i * size..(i + 1) * size]);
        let raw = u64::from_le_bytes(b);
        match (t.float_format(), t.int_info()) {
            (Some(f), _) => cce_numerics::float::decode(f, raw as u32),
            (None, Some((bits, true))) => ((raw << (64 - bits)) as i64 >> (64 - bits)) as f64,
            _ => raw as f64,
        }
    }

    /// The ulp as the old module computed it (`metrics::ulp` now runs the check's rule).
    fn ulp(dtype: SdmaDtype, x: f64) -> Option<f64> {
        let t = NumType::from_sdma(dtype).ok()?;
        let Some(f) = t.float_format() else { return Some(1.0) };
        let p = f.precision() as i32;
        let min_exp = 1 - f.bias;
        let e = if x == 0.0 || !x.is_finite() {
            min_exp
        } else {
            let a = x.abs();
            if a.is_normal() { ((a.to_bits() >> 52) & 0x7FF) as i32 - 1023 } else { min_exp }
        };
        Some(2f64.powi(e.max(min_exp) - p + 1))
    }

    fn wrap(dtype: SdmaDtype, v: i64) -> f64 {
        let bits = 8 * dtype.bytes() as u32;
        let signed = matches!(dtype, SdmaDtype::I8 | SdmaDtype::I16 | SdmaDtype::I32 | SdmaDtype::I64);
        let m = (v as u64) & ((1u64 << bits) - 1);
        if signed { ((m << (64 - bits)) as i64 >> (64 - bits)) as f64 } else { m as f64 }
    }

    pub(crate) fn measure(cfg: &Config, inputs: &[Vec<u8>], outputs: &[Vec<u8>]) -> Metrics {
        let t = NumType::from_sdma(cfg.dtype).unwrap();
        let n = inputs[0].len() / t.size();
        let r = cfg.ranks as f64;
        let int = !cfg.dtype.is_float();
        let exact: Vec<(f64, f64)> = (0..n)
            .map(|i| {
                let xs = inputs.iter().map(|b| value_at(t, b, i));
                let mag: f64 = xs.clone().map(f64::abs).sum();
                let e = match cfg.op {
                    RedOp::Add | RedOp::Avg if int => {
                        wrap(cfg.dtype, xs.map(|v| v as i64).fold(0i64, i64::wrapping_add))
                    }
                    RedOp::Add => xs.sum(),
                    RedOp::Avg => xs.sum::<f64>() / r,
                    RedOp::Min => xs.fold(f64::INFINITY, f64::min),
                    RedOp::Max => xs.fold(f64::NEG_INFINITY, f64::max),
                };
                (e, mag)
            })
            .collect();
        let prec = t.float_format().map_or(24, |f| f.precision());
        let mut m = Metrics { ranks_identical: outputs.windows(2).all(|w| w[0] == w[1]), ..Metrics::default() };
        let u = 2f64.powi(-(prec as i32));
        let bound: Box<dyn Fn(f64) -> f64> = if cfg.compress == Compress::Gce {
            let q = cfg.nodes() as i32 + 1;
            let rel = (1.0 + 0.125f64).powi(q) * (1.0 + u).powi(cfg.ranks as i32 + q) - 1.0;
            let largest = exact.iter().map(|&(_, m)| m).filter(|m| m.is_finite()).fold(0.0, f64::max);
            let abs = f64::from(q) * 2f64.powi(-31) * largest;
            Box::new(move |mag: f64| rel * mag + abs)
        } else {
            Box::new(move |mag: f64| r * u * mag)
        };
        let (measured, times) = if m.ranks_identical { (&outputs[..1], outputs.len() as u64) } else { (outputs, 1) };
        let (mut max_exact, mut ulp_sum, mut counted) = (0f64, 0f64, 0u64);
        for out in measured {
            let mut wrong = 0;
            for (i, &(e, mag)) in exact.iter().enumerate() {
                let g = value_at(t, out, i);
                let err = (g - e).abs();
                if err.is_nan() || err > if int { 0.0 } else { bound(mag) } {
                    wrong += 1;
                }
                if e.is_finite() {
                    max_exact = max_exact.max(e.abs());
                }
                if err.is_finite() {
                    m.max_abs_err = m.max_abs_err.max(err);
                    let scale = if cfg.op == RedOp::Avg { mag / r } else { mag }.max(e.abs());
                    let u = err / ulp(cfg.dtype, scale).unwrap_or(1.0);
                    m.max_ulp_err = m.max_ulp_err.max(u);
                    ulp_sum += u;
                    counted += 1;
                }
            }
            m.wrong += wrong * times;
        }
        m.max_rel_err = if m.max_abs_err == 0.0 {
            0.0
        } else if max_exact == 0.0 {
            f64::INFINITY
        } else {
            m.max_abs_err / max_exact
        };
        m.mean_ulp_err = if counted == 0 { 0.0 } else { ulp_sum / counted as f64 };
        m
    }
}

fn assert_same(got: &Metrics, want: &Metrics, what: &str) {
    assert_eq!(got.ranks_identical, want.ranks_identical, "{what}");
    assert_eq!(got.wrong, want.wrong, "{what}");
    assert_eq!(got.max_abs_err.to_bits(), want.max_abs_err.to_bits(), "{what}");
    assert_eq!(got.max_ulp_err.to_bits(), want.max_ulp_err.to_bits(), "{what}");
    assert_eq!(got.max_rel_err.to_bits(), want.max_rel_err.to_bits(), "{what}");
    let tol = 1e-12 * want.mean_ulp_err.abs();
    assert!(
        (got.mean_ulp_err - want.mean_ulp_err).abs() <= tol,
        "{what}: {} vs {}",
        got.mean_ulp_err,
        want.mean_ulp_err
    );
}

/// Every thread count gives the same bits, held or regenerated, and the oracle's values.
fn check_run(cfg: &Config, seed: u64, outputs: &[Vec<u8>], what: &str) {
    let inputs = metrics::generate(cfg, seed);
    let want = oracle::measure(cfg, &inputs, outputs);
    let outs: Vec<&[u8]> = outputs.iter().map(Vec::as_slice).collect();
    let first = measure_parts(cfg, &Held::new(cfg, &inputs), &outs, 1).unwrap();
    assert_same(&first.metrics, &want, what);
    for threads in [2, 3] {
        let held = measure_parts(cfg, &Held::new(cfg, &inputs), &outs, threads).unwrap();
        assert_eq!(held, first, "{what}: {threads} threads");
    }
    let regenerated = measure_parts(cfg, &Generated::new(cfg, seed), &outs, 2).unwrap();
    assert_eq!(regenerated, first, "{what}: regenerated inputs");
}

/// Sizes that cross block boundaries: a whole block, one more, and a ragged tail.
const SIZES: [u64; 2] = [metrics::CHECK_BLOCK as u64 * 2 + 13, 777];

#[test]
fn float_runs_measure_as_the_element_by_element_oracle() {
    for dtype in [SdmaDtype::Bf16, SdmaDtype::Fp16, SdmaDtype::Fp32, SdmaDtype::Fp8E4] {
        for op in [RedOp::Add, RedOp::Avg, RedOp::Min, RedOp::Max] {
            for (algo, ranks) in [(Algo::Ring, 5), (Algo::Mesh, 3)] {
                let cfg = Config::new(ranks, algo, op, dtype, SIZES[ranks % 2]);
                let inputs = metrics::generate(&cfg, 11);
                let o = common::run(&cfg, &inputs).unwrap();
                check_run(&cfg, 11, &o.outputs, &format!("{dtype:?} {op:?} {algo:?}"));
            }
        }
    }
}

#[test]
fn stochastic_rounding_gce_and_integers_measure_as_the_oracle() {
    let n = SIZES[0];
    let sr = Config {
        rounding: cce_host::Rounding::Stochastic { seed: 9 },
        ..Config::new(4, Algo::Ring, RedOp::Add, SdmaDtype::Bf16, n)
    };
    let mut gce = Config { compress: Compress::Gce, ..Config::new(4, Algo::Ring, RedOp::Add, SdmaDtype::Bf16, n) };
    gce.model.ranks_per_node = 2;
    let int = Config::new(4, Algo::Ring, RedOp::Add, SdmaDtype::I8, n);
    let max_int = Config::new(3, Algo::Mesh, RedOp::Max, SdmaDtype::U16, 999);
    for cfg in [sr, gce, int, max_int] {
        let inputs = metrics::generate(&cfg, 5);
        let o = common::run(&cfg, &inputs).unwrap();
        check_run(&cfg, 5, &o.outputs, &format!("{:?} {:?} {:?}", cfg.dtype, cfg.rounding, cfg.compress));
    }
}

#[test]
fn ranks_that_differ_are_each_measured_as_the_oracle_does() {
    let cfg = Config::new(4, Algo::Ring, RedOp::Add, SdmaDtype::Bf16, SIZES[0]);
    let inputs = metrics::generate(&cfg, 3);
    let mut outs = common::run(&cfg, &inputs).unwrap().outputs;
    // Rank 2 wrong in one element of the second block, rank 3 NaN in the tail.
    let at = (metrics::CHECK_BLOCK + 5) * 2;
    outs[2][at + 1] ^= 0x40;
    let tail = outs[3].len() - 2;
    outs[3][tail..].copy_from_slice(&0x7fc0u16.to_le_bytes());
    check_run(&cfg, 3, &outs, "differing ranks");
    let m = metrics::measure(&cfg, &inputs, &outs);
    assert!(!m.ranks_identical);
    assert_eq!(m.wrong, 2);
}

#[test]
fn inputs_read_from_files_block_by_block_measure_the_same() {
    let cfg = Config::new(3, Algo::Ring, RedOp::Add, SdmaDtype::Fp16, SIZES[0]);
    let inputs = metrics::generate(&cfg, 8);
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("metrics-files-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (r, b) in inputs.iter().enumerate() {
        std::fs::write(dir.join(format!("rank{r}.bin")), b).unwrap();
    }
    let o = common::run(&cfg, &inputs).unwrap();
    let outs: Vec<&[u8]> = o.outputs.iter().map(Vec::as_slice).collect();
    let files = RankFiles::open(&cfg, &dir).unwrap();
    let got = measure_parts(&cfg, &files, &outs, 2).unwrap();
    assert_eq!(got, measure_parts(&cfg, &Held::new(&cfg, &inputs), &outs, 2).unwrap());
    // A file shorter than the outputs is an error, not a short measure.
    std::fs::write(dir.join("rank1.bin"), &inputs[1][..100]).unwrap();
    let files = RankFiles::open(&cfg, &dir).unwrap();
    assert!(measure_parts(&cfg, &files, &outs, 2).is_err());
    let mut buf = Vec::new();
    assert!(files.block(0, 0, 10, &mut buf).is_ok());
    std::fs::remove_dir_all(&dir).unwrap();
}
