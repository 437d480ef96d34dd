//! How good a collective's result is: every rank's output against the exact reduction of the
//! inputs, computed in f64 (exact for sums of up to 2^29 values of any float dtype here; an
//! integer sum wraps as the engine's integer accumulator does).

use cce_format::SdmaDtype;
use cce_numerics::NumType;
use cce_numerics::sample::{SampleKind, sample};

use crate::allreduce::{Collective, Compress, Config, RedOp};

/// Decodes element `i` of a raw little-endian array of `t` as f64 (integers exactly up to 2^53).
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

/// The values of a raw little-endian array of `dtype`, as f64 (integers exactly up to 2^53).
pub fn values(dtype: SdmaDtype, bytes: &[u8]) -> Vec<f64> {
    let Ok(t) = NumType::from_sdma(dtype) else { return Vec::new() };
    (0..bytes.len() / t.size()).map(|i| value_at(t, bytes, i)).collect()
}

/// The unit in the last place of `dtype` at `x`: for a float dtype of p-bit precision (the
/// implicit bit included) `2^(floor(log2 |x|) − p + 1)`, floored at the dtype's smallest
/// subnormal spacing `2^(1 − bias − (p − 1))` (so at 0 and below the normal range it is that
/// spacing); for an integer dtype 1. `None` for a dtype without values (fp32r, invalid).
pub fn ulp(dtype: SdmaDtype, x: f64) -> Option<f64> {
    let t = NumType::from_sdma(dtype).ok()?;
    let Some(f) = t.float_format() else { return Some(1.0) };
    let p = f.precision() as i32;
    let min_exp = 1 - f.bias; // exponent of the smallest normal
    let e = if x == 0.0 || !x.is_finite() {
        min_exp
    } else {
        // floor(log2 |x|), exactly: the f64 exponent (f64 subnormals are far below every dtype).
        let a = x.abs();
        if a.is_normal() { ((a.to_bits() >> 52) & 0x7FF) as i32 - 1023 } else { min_exp }
    };
    Some(2f64.powi(e.max(min_exp) - p + 1))
}

/// What [`measure`] found. Every error compares an output element with the exact reduction of
/// the inputs (computed in f64, see the module); for an all-reduce every rank's output is
/// measured, for reduce-scatter and all-gather alone only `ranks_identical` is (the other
/// fields are 0). Elements whose output is NaN or infinite while the exact value is finite are
/// left out of the error maxima and means and counted in `wrong`.
///
/// The keys of `cce allreduce --json` (a contract: extended, never renamed). From here, one per
/// field below: `ranks_identical`, `max_abs_err`, `max_rel_err`, `max_ulp_err`, `mean_ulp_err`,
/// `wrong`. From the run ([`crate::allreduce::Outcome`]): `packets` and `descriptors` (tx + rx)
/// executed over all ranks; `bytes_moved`, bytes read + written over all ranks; `seconds`, wall
/// time of the run (loading excluded); `model_seconds`, the time model's estimate; `algbw_gbps` =
/// elems · size / seconds / 10⁹ and `busbw_gbps` = algbw · 2(R−1)/R (all-reduce) or · (R−1)/R
/// ([`bandwidths`]); `steps`, steps per rank; `memory_bytes`, what
/// [`crate::allreduce::check`] counted against the budget; `per_rank`, each rank's `packets`,
/// `descriptors`, `bytes_read`, `bytes_written`; `per_link`, `{from, to, bytes}` for every
/// pair of ranks that exchanged bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Metrics {
    /// Every rank holds the same bytes (for reduce-scatter: trivially true).
    pub ranks_identical: bool,
    /// Largest |output − exact| over all ranks and elements, in the dtype's units.
    pub max_abs_err: f64,
    /// `max_abs_err` relative to the largest exact magnitude: max |output − exact| / max
    /// |exact|, both maxima over all ranks and elements (not a per-element ratio, which is
    /// meaningless where a sum cancels to near zero). 0 when every output is exact; infinite
    /// (JSON null) only if every exact value is 0 and some output is not.
    pub max_rel_err: f64,
    /// Largest |output − exact| / [`ulp`]`(dtype, scale)`: the error in units in the last place
    /// of the output dtype at the magnitude the reduction works at, `scale` = Σ|x| (for avg
    /// Σ|x| / R), never below |exact| (integers: the absolute error). Measured at Σ|x| rather
    /// than at the exact value, because a sum that cancels to near zero passes through partials
    /// of Σ|x|'s size and each of their roundings may add up to 0.5 of this unit: a correctly
    /// rounded result is within 0.5, a reduction over R ranks that rounds every partial within
    /// about R / 2 (the bound `wrong` counts against, in these units).
    pub max_ulp_err: f64,
    /// The mean of the same ulp error over every measured element of every rank.
    pub mean_ulp_err: f64,
    /// Elements (over all ranks) outside the bound of a sequential reduction that rounds at
    /// every step: |err| ≤ R · 2^-p · Σ|x| for a p-bit float dtype; for integers, any difference
    /// from the wrapping result. With GCE (`--compress gce`), the bound that adds Q = nodes + 1
    /// quantizations: |err| ≤ ((1 + 2^-3)^Q · (1 + 2^-p)^(R+Q) − 1) · Σ|x| + Q · 2^-31 · max Σ|x|.
    pub wrong: u64,
}

/// The exact reduction of the inputs, per element: (value, Σ|x|).
pub struct Exact(Vec<(f64, f64)>);

impl Exact {
    /// Bytes an [`Exact`] of `elems` elements holds (two f64 per element).
    pub fn bytes(elems: u64) -> u64 {
        elems.saturating_mul(16)
    }
}

/// [`exact`] from inputs made one rank at a time by `input(rank)` (a process that holds only
/// some ranks): the same values, the ranks taken in the same order, one input held at a time.
pub fn exact_streaming(cfg: &Config, input: &dyn Fn(usize) -> Vec<u8>) -> Exact {
    let Ok(t) = NumType::from_sdma(cfg.dtype) else { return Exact(Vec::new()) };
    let n = cfg.elems as usize;
    let int = !cfg.dtype.is_float();
    let start = match cfg.op {
        RedOp::Min => f64::INFINITY,
        RedOp::Max => f64::NEG_INFINITY,
        _ => 0.0,
    };
    let mut acc = vec![(start, 0.0f64, 0i64); n];
    for r in 0..cfg.ranks {
        let b = input(r);
        for (i, a) in acc.iter_mut().enumerate().take(b.len() / t.size()) {
            let x = value_at(t, &b, i);
            a.1 += x.abs();
            match cfg.op {
                RedOp::Add | RedOp::Avg if int => a.2 = a.2.wrapping_add(x as i64),
                RedOp::Add | RedOp::Avg => a.0 += x,
                RedOp::Min => a.0 = a.0.min(x),
                RedOp::Max => a.0 = a.0.max(x),
            }
        }
    }
    let r = cfg.ranks as f64;
    Exact(
        acc.into_iter()
            .map(|(v, mag, i)| {
                let e = match cfg.op {
                    RedOp::Add | RedOp::Avg if int => wrap(cfg.dtype, i),
                    RedOp::Avg => v / r,
                    _ => v,
                };
                (e, mag)
            })
            .collect(),
    )
}

/// Computes the exact reduction of `inputs` for `cfg` (in f64; integer sums wrap). Element by
/// element: no decoded copy of the inputs is held.
pub fn exact(cfg: &Config, inputs: &[Vec<u8>]) -> Exact {
    let Ok(t) = NumType::from_sdma(cfg.dtype) else { return Exact(Vec::new()) };
    let n = inputs.first().map_or(0, |b| b.len() / t.size());
    let r = cfg.ranks as f64;
    let int = !cfg.dtype.is_float();
    Exact(
        (0..n)
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
            .collect(),
    )
}

/// Compares `outputs` with the exact reduction of `inputs`.
pub fn measure(cfg: &Config, inputs: &[Vec<u8>], outputs: &[Vec<u8>]) -> Metrics {
    measure_exact(cfg, &exact(cfg, inputs), outputs)
}

/// Compares `outputs` with a precomputed [`Exact`]. Identical outputs are measured once.
pub fn measure_exact(cfg: &Config, exact: &Exact, outputs: &[Vec<u8>]) -> Metrics {
    measure_parts(cfg, exact, outputs).metrics
}

/// [`measure_exact`] with what combining the metrics of several processes needs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MetricParts {
    /// The metrics of these outputs.
    pub metrics: Metrics,
    /// The ulp errors summed, and how many were counted (the mean's parts).
    pub ulp_sum: f64,
    /// Errors counted in `ulp_sum`.
    pub counted: u64,
    /// The largest finite |exact| (the relative error's denominator).
    pub max_exact: f64,
}

/// [`measure_exact`], keeping its parts.
pub fn measure_parts(cfg: &Config, exact: &Exact, outputs: &[Vec<u8>]) -> MetricParts {
    let r = cfg.ranks as f64;
    let int = !cfg.dtype.is_float();
    let t = NumType::from_sdma(cfg.dtype).ok();
    let prec = t.and_then(|t| t.float_format()).map_or(24, |f| f.precision());
    let mut m = Metrics {
        ranks_identical: outputs.windows(2).all(|w| w[0] == w[1]) || cfg.collective == Collective::ReduceScatter,
        ..Metrics::default()
    };
    let Some(t) = t else { return MetricParts { metrics: m, ..MetricParts::default() } };
    if cfg.collective != Collective::AllReduce {
        // The exact value of a partial buffer is the caller's to check.
        return MetricParts { metrics: m, ..MetricParts::default() };
    }
    let u = 2f64.powi(-(prec as i32));
    let bound: Box<dyn Fn(f64) -> f64> = if cfg.compress == Compress::Gce {
        // Each GCE quantization (one per node boundary a chunk crosses, and the owner's) errs
        // by at most 2^-3 of its value (e5m2's half ulp) plus an e5m2-subnormal step below
        // 2^-31 of its block's largest magnitude, and its expansion rounds once more to the
        // dtype (docs/MODEL.md G8).
        let q = cfg.nodes() as i32 + 1;
        let rel = (1.0 + 0.125f64).powi(q) * (1.0 + u).powi(cfg.ranks as i32 + q) - 1.0;
        let largest = exact.0.iter().map(|&(_, m)| m).filter(|m| m.is_finite()).fold(0.0, f64::max);
        let abs = f64::from(q) * 2f64.powi(-31) * largest;
        Box::new(move |mag: f64| rel * mag + abs)
    } else {
        Box::new(move |mag: f64| r * u * mag)
    };
    // When every rank holds the same bytes, one rank's errors are every rank's.
    let (measured, times) =
        if m.ranks_identical { (&outputs[..outputs.len().min(1)], outputs.len() as u64) } else { (outputs, 1) };
    let (mut max_exact, mut ulp_sum, mut counted) = (0f64, 0f64, 0u64);
    for out in measured {
        let n = (out.len() / t.size()).min(exact.0.len());
        let mut wrong = 0;
        for (i, &(e, mag)) in exact.0.iter().enumerate().take(n) {
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
    MetricParts { metrics: m, ulp_sum, counted, max_exact }
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

/// Deterministic inputs for `cfg` from `seed`: rank r holds
/// [`cce_numerics::sample::sample`]`(dtype, elems, seed + r, Uniform)` — floats uniform in
/// [−1, 1) rounded to the dtype, integers in (−1000, 1000) — the bytes `cce gen --seed <seed + r>`
/// writes.
pub fn generate(cfg: &Config, seed: u64) -> Vec<Vec<u8>> {
    (0..cfg.ranks).map(|r| generate_rank(cfg, seed, r)).collect()
}

/// Rank `r`'s input of [`generate`], alone (a process that holds only some ranks makes only
/// theirs).
pub fn generate_rank(cfg: &Config, seed: u64, r: usize) -> Vec<u8> {
    let t = NumType::from_sdma(cfg.dtype).unwrap_or(NumType::F32);
    sample(t, cfg.elems as usize, seed.wrapping_add(r as u64), SampleKind::Uniform).unwrap_or_default()
}
