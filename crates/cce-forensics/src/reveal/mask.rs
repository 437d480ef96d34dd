//! The masked inputs of a reveal and what their outputs say.
//!
//! A *query* of element `e` puts `+M` at rank `i`, `−M` at rank `j`, a unit `u` at the ranks of
//! a set `ones` and `0` everywhere else. Whatever tree sums the element, the units that meet
//! `±M` before the two cancel are rounded away with it, and the others add exactly, so the
//! output is `k·u` for the number `k` of units that survive (FPRev's masks, Xie et al., USENIX
//! ATC '25). Two scales ([`Regime`]):
//!
//! - [`Regime::Absorbed`]: `M` absorbs every unit in fp32 *and* in the buffer dtype, so every
//!   add that meets `±M` loses the units, whether it rounds to the buffer dtype or only to an
//!   fp32 accumulator: the outputs show the tree of adds.
//! - [`Regime::Buffer`] (bf16, fp16): `M + k·u` is exact in fp32 but rounds back to `M` in the
//!   buffer dtype, so units are lost only where a sum is rounded to the buffer dtype: the
//!   outputs show where the roundings are.
//!
//! ## Guarantees
//! - [`Scales::new`] returns only scales whose every claim above holds for `ranks` ranks, each
//!   checked on the dtype's own encodings (every mask value, and every count `k·u`, `k ≤ R − 2`,
//!   encodes exactly; the absorption and exactness bounds hold with ties to even), or a
//!   [`RevealError`] saying which dtype and rank count cannot.
//! - [`Scales::count`] returns a count only for an output that is exactly `k·u` with `k` in
//!   range; anything else (a stochastic rounding that moved a mask, a NaN) is `None`.

use cce_numerics::float::{decode, round_value};
use cce_numerics::{FloatFormat, NumType};

use super::RevealError;

/// Which roundings a query's `M` is absorbed by (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Regime {
    /// Absorbed by fp32 and by the buffer dtype: the tree of adds.
    Absorbed,
    /// Absorbed by the buffer dtype only: where the sums are rounded to it.
    Buffer,
}

/// One element's query: `+M` at `plus`, `−M` at `minus`, `u` at the ranks of `ones` (a bit
/// per rank), zero elsewhere.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Query {
    /// The rank holding `+M`.
    pub plus: u32,
    /// The rank holding `−M`.
    pub minus: u32,
    /// The ranks holding the unit `u` (bit r: rank r); never `plus` or `minus`.
    pub ones: u64,
    /// The scale of `M`.
    pub regime: Regime,
}

impl Query {
    /// `+M` at `plus`, `−M` at `minus`, units at every other rank of `0..ranks`.
    pub fn pair(plus: u32, minus: u32, ranks: u32, regime: Regime) -> Query {
        let all = if ranks >= 64 { u64::MAX } else { (1u64 << ranks) - 1 };
        Query { plus, minus, ones: all & !(1 << plus) & !(1 << minus), regime }
    }

    /// How many units it holds.
    pub fn units(&self) -> u32 {
        self.ones.count_ones()
    }
}

/// The mask values of one dtype and rank count, as encodings of the buffer dtype.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scales {
    fmt: FloatFormat,
    size: usize,
    ranks: u32,
    /// (M, u) of [`Regime::Absorbed`].
    absorbed: (f64, f64),
    /// (M, u) of [`Regime::Buffer`], where the dtype has one.
    buffer: Option<(f64, f64)>,
    /// The encodings of `[M, −M, u, 0]` per regime (absorbed, buffer).
    codes: [[u32; 4]; 2],
}

fn pow2(e: i32) -> f64 {
    f64::from_bits(((1023 + e) as u64) << 52)
}

/// The binade exponent of the largest finite value of `fmt`.
fn emax(fmt: FloatFormat) -> i32 {
    (1 << fmt.ebits) - 2 - fmt.bias
}

impl Scales {
    /// The scales for `ranks` ranks of `dtype` (fp32, bf16 or fp16).
    pub fn new(dtype: NumType, ranks: u32) -> Result<Scales, RevealError> {
        let fmt = match dtype {
            NumType::F32 | NumType::Bf16 | NumType::F16 => dtype.float_format().ok_or(RevealError::Dtype(dtype))?,
            _ => return Err(RevealError::Dtype(dtype)),
        };
        let p = fmt.precision() as i32;
        let units = f64::from(ranks.saturating_sub(2).max(1));
        let log_units = units.log2().ceil() as i32;
        // The unit's exponent: 0 where the dtype's range allows, else lower, down to its
        // smallest subnormal (fp16 past 18 ranks: a library that flushes subnormals to zero
        // then shows no counts, and the reveal says so).
        let e_u_lowest = 1 - fmt.bias - fmt.mbits as i32;
        // Absorbed: ·u at most half an fp32 ulp of the binade *below* M (M − k·u lies
        // there; ties go to M, whose significand is even), M a power of two the dtype holds.
        let absorbed = (e_u_lowest..=0).rev().find_map(|e_u| {
            let e_m = e_u + 25 + log_units;
            (e_m <= emax(fmt)).then(|| (pow2(e_m), pow2(e_u)))
        });
        let Some(absorbed) = absorbed else {
            return Err(RevealError::Scales {
                dtype,
                ranks,
                why: "no power of two it holds absorbs the units in fp32",
            });
        };
        // Buffer: ·u at most half a buffer-dtype ulp of the binade below M, and M ± ·u
        // exact in fp32.
        let buffer = (p < 24)
            .then(|| {
                (e_u_lowest..=0).rev().find_map(|e_u| {
                    let e_m = e_u + p + 1 + log_units;
                    (e_m <= emax(fmt) && e_m - e_u <= 23).then(|| (pow2(e_m), pow2(e_u)))
                })
            })
            .flatten();
        if p < 24 && buffer.is_none() {
            return Err(RevealError::Scales {
                dtype,
                ranks,
                why: "no mask is both absorbed by the dtype's rounding and exact in fp32",
            });
        }
        let code = |(m, u): (f64, f64)| [m, -m, u, 0.0].map(|x| round_value(x, fmt, None));
        let codes = [code(absorbed), code(buffer.unwrap_or(absorbed))];
        let s = Scales { fmt, size: dtype.size(), ranks, absorbed, buffer, codes };
        s.check(dtype)?;
        Ok(s)
    }

    /// Every value a query writes, and every count, encodes exactly; the absorbed scale's `M`
    /// absorbs up to R − 2 units in fp32 and in the dtype; the buffer scale's does in the dtype
    /// and keeps them exactly in fp32.
    fn check(&self, dtype: NumType) -> Result<(), RevealError> {
        let fail = |why| Err(RevealError::Scales { dtype, ranks: self.ranks, why });
        let in_dtype = |x: f64| decode(self.fmt, round_value(x, self.fmt, None));
        let in_f32 = |x: f64| decode(FloatFormat::F32, round_value(x, FloatFormat::F32, None));
        let units = self.ranks.saturating_sub(2);
        for (m, u) in [Some(self.absorbed), self.buffer].into_iter().flatten() {
            if in_dtype(m) != m
                || in_dtype(-m) != -m
                || (0..=self.ranks).any(|k| in_dtype(f64::from(k) * u) != f64::from(k) * u)
            {
                return fail("a mask value does not encode exactly");
            }
        }
        let (m, u) = self.absorbed;
        if (1..=units).any(|k| in_f32(m + f64::from(k) * u) != m || in_dtype(m + f64::from(k) * u) != m) {
            return fail("the absorbed mask keeps a unit");
        }
        if let Some((m, u)) = self.buffer {
            if (1..=units)
                .any(|k| in_f32(m + f64::from(k) * u) != m + f64::from(k) * u || in_dtype(m + f64::from(k) * u) != m)
            {
                return fail("the buffer mask is not exact in fp32 or keeps a unit in the dtype");
            }
        }
        Ok(())
    }

    /// Whether the dtype has a [`Regime::Buffer`] scale (bf16 and fp16: fp32 is its own
    /// accumulator).
    pub fn has_buffer_regime(&self) -> bool {
        self.buffer.is_some()
    }

    fn scale(&self, regime: Regime) -> (f64, f64) {
        match regime {
            Regime::Absorbed => self.absorbed,
            Regime::Buffer => self.buffer.unwrap_or(self.absorbed),
        }
    }

    /// The encoding rank `r` holds for `q`.
    pub fn value(&self, q: &Query, r: u32) -> u32 {
        let codes = &self.codes[usize::from(q.regime == Regime::Buffer)];
        if r == q.plus {
            codes[0]
        } else if r == q.minus {
            codes[1]
        } else if q.ones >> r & 1 == 1 {
            codes[2]
        } else {
            codes[3]
        }
    }

    /// Writes element `e` of every rank's buffer for `q`.
    pub fn write(&self, q: &Query, e: usize, inputs: &mut [Vec<u8>]) {
        for (r, buf) in inputs.iter_mut().enumerate() {
            let bits = self.value(q, r as u32).to_le_bytes();
            buf[e * self.size..(e + 1) * self.size].copy_from_slice(&bits[..self.size]);
        }
    }

    /// The surviving units of an output element `bits` of query `q`, or `None` when it is not
    /// `k·u` for a `k` in `0..=q.units()`.
    pub fn count(&self, q: &Query, bits: u32) -> Option<u32> {
        let (_, u) = self.scale(q.regime);
        let v = decode(self.fmt, bits) / u;
        let k = v as u32;
        (v.is_finite() && v >= 0.0 && f64::from(k) == v && k <= q.units()).then_some(k)
    }

    /// The element size in bytes.
    pub fn size(&self) -> usize {
        self.size
    }
}
