//! How good a collective's result is: every rank's output against the exact reduction of the
//! inputs, computed in f64 (exact for sums of up to 2^29 values of any float dtype here; an
//! integer sum wraps as the engine's integer accumulator does).

use cce_format::SdmaDtype;
use cce_numerics::NumType;

use crate::allreduce::{Collective, Config, RedOp};

/// The values of a raw little-endian array of `dtype`, as f64 (integers exactly up to 2^53).
pub fn values(dtype: SdmaDtype, bytes: &[u8]) -> Vec<f64> {
    let Ok(t) = NumType::from_sdma(dtype) else { return Vec::new() };
    let size = t.size();
    bytes
        .chunks_exact(size)
        .map(|c| {
            let mut b = [0u8; 8];
            b[..size].copy_from_slice(c);
            let raw = u64::from_le_bytes(b);
            match (t.float_format(), t.int_info()) {
                (Some(f), _) => cce_numerics::float::decode(f, raw as u32),
                (None, Some((bits, true))) => ((raw << (64 - bits)) as i64 >> (64 - bits)) as f64,
                _ => raw as f64,
            }
        })
        .collect()
}

/// What [`measure`] found.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Metrics {
    /// Every rank holds the same bytes (for reduce-scatter: trivially true).
    pub ranks_identical: bool,
    /// Largest |output − exact| over all ranks and elements.
    pub max_abs_err: f64,
    /// Largest |output − exact| / |exact| (elements whose exact value is 0 are skipped).
    pub max_rel_err: f64,
    /// Elements (over all ranks) outside the bound of a sequential reduction that rounds at
    /// every step: |err| ≤ R · 2^-p · Σ|x| for a p-bit float dtype; for integers, any difference
    /// from the wrapping result.
    pub wrong: u64,
}

/// The exact reduction of the inputs, per element: (value, Σ|x|).
pub struct Exact(Vec<(f64, f64)>);

/// Computes the exact reduction of `inputs` for `cfg` (in f64; integer sums wrap).
pub fn exact(cfg: &Config, inputs: &[Vec<u8>]) -> Exact {
    let ins: Vec<Vec<f64>> = inputs.iter().map(|b| values(cfg.dtype, b)).collect();
    let n = ins.first().map_or(0, Vec::len);
    let r = cfg.ranks as f64;
    let int = !cfg.dtype.is_float();
    Exact(
        (0..n)
            .map(|i| {
                let xs = ins.iter().map(|v| v[i]);
                let mag: f64 = ins.iter().map(|v| v[i].abs()).sum();
                let e = match cfg.op {
                    RedOp::Add | RedOp::Avg if int => {
                        wrap(cfg.dtype, ins.iter().map(|v| v[i] as i64).fold(0i64, i64::wrapping_add))
                    }
                    RedOp::Add => xs.sum(),
                    RedOp::Avg => xs.sum::<f64>() / r,
                    RedOp::Min => xs.fold(f64::INFINITY, f64::min),
                    RedOp::Max => xs.fold(f64::NEG_INFINITY, f64::max),
                };
                (e, mag)
            })
            .collect(),
    )
}

/// Compares `outputs` with the exact reduction of `inputs`.
pub fn measure(cfg: &Config, inputs: &[Vec<u8>], outputs: &[Vec<u8>]) -> Metrics {
    measure_exact(cfg, &exact(cfg, inputs), outputs)
}

/// Compares `outputs` with a precomputed [`Exact`]. Identical outputs are measured once.
pub fn measure_exact(cfg: &Config, exact: &Exact, outputs: &[Vec<u8>]) -> Metrics {
    let r = cfg.ranks as f64;
    let int = !cfg.dtype.is_float();
    let prec = NumType::from_sdma(cfg.dtype).ok().and_then(|t| t.float_format()).map_or(24, |f| f.precision());
    let mut m = Metrics {
        ranks_identical: outputs.windows(2).all(|w| w[0] == w[1]) || cfg.collective == Collective::ReduceScatter,
        ..Metrics::default()
    };
    if cfg.collective != Collective::AllReduce {
        return m; // the exact value of a partial buffer is the caller's to check
    }
    let bound = |mag: f64| r * 2f64.powi(-(prec as i32)) * mag;
    // When every rank holds the same bytes, one rank's errors are every rank's.
    let (measured, times) =
        if m.ranks_identical { (&outputs[..outputs.len().min(1)], outputs.len() as u64) } else { (outputs, 1) };
    for out in measured {
        let got = values(cfg.dtype, out);
        let mut wrong = 0;
        for (g, &(e, mag)) in got.iter().zip(&exact.0) {
            let err = (g - e).abs();
            if err.is_nan() || err > if int { 0.0 } else { bound(mag) } {
                wrong += 1;
            }
            if err.is_finite() {
                m.max_abs_err = m.max_abs_err.max(err);
                if e != 0.0 {
                    m.max_rel_err = m.max_rel_err.max(err / e.abs());
                }
            }
        }
        m.wrong += wrong * times;
    }
    m
}

fn wrap(dtype: SdmaDtype, v: i64) -> f64 {
    let bits = 8 * dtype.bytes() as u32;
    if bits >= 64 {
        return v as f64;
    }
    let signed = matches!(dtype, SdmaDtype::I8 | SdmaDtype::I16 | SdmaDtype::I32 | SdmaDtype::I64);
    let m = (v as u64) & ((1u64 << bits) - 1);
    if signed { ((m << (64 - bits)) as i64 >> (64 - bits)) as f64 } else { m as f64 }
}

/// nccl-tests' bandwidths: algbw = bytes per rank / seconds; busbw = algbw · 2(R−1)/R for an
/// all-reduce, · (R−1)/R for reduce-scatter and all-gather. In GB/s.
pub fn bandwidths(cfg: &Config, seconds: f64) -> (f64, f64) {
    let bytes = cfg.elems as f64 * cfg.dtype.bytes() as f64;
    let algbw = bytes / seconds.max(1e-12) / 1e9;
    let r = cfg.ranks as f64;
    let factor = match cfg.collective {
        Collective::AllReduce => 2.0 * (r - 1.0) / r,
        _ => (r - 1.0) / r,
    };
    (algbw, algbw * factor)
}

/// Deterministic inputs for `cfg` from `seed`: floats uniform in [−1, 1) rounded to the dtype,
/// integers uniform over a range that keeps sums from overflowing.
pub fn generate(cfg: &Config, seed: u64) -> Vec<Vec<u8>> {
    let t = NumType::from_sdma(cfg.dtype).unwrap_or(NumType::F32);
    (0..cfg.ranks)
        .map(|r| {
            let mut x = seed.wrapping_add(r as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03;
            let mut vals = Vec::with_capacity(cfg.elems as usize);
            for _ in 0..cfg.elems {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                vals.push((x >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0);
            }
            if t.is_float() {
                let f: Vec<u8> = vals.iter().flat_map(|v| (*v as f32).to_le_bytes()).collect();
                cce_numerics::convert_to_vec(NumType::F32, t, &f, cce_numerics::Rounding::Rne, false)
                    .unwrap_or_default()
            } else {
                let size = t.size();
                vals.iter().flat_map(|v| ((v * 1000.0) as i64).to_le_bytes()[..size].to_vec()).collect()
            }
        })
        .collect()
}
