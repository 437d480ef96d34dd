//! The error check's block kernels: the exact reduction of every rank's input over one block of
//! elements, in f64, and one output's errors against it. `cce allreduce` checks its result with
//! them block by block, on several threads, in constant memory (cce-collectives `metrics`
//! owns what the numbers mean; this module only computes them).
//!
//! Guarantees:
//! - A float element is widened to fp32 by [`crate::convert`]'s SIMD kernels (exact: every
//!   float dtype here is a subset of fp32; [`ExactBlock::add_ranks`] widens bf16 itself, its
//!   bits in the high half, the same value), then to f64 (exact). An integer element is read as
//!   i64 (sign-extended or zero-extended from its width) and as f64 (exact up to 2^53).
//! - [`ExactBlock`] adds the ranks in the order they are given, element by element, as an
//!   element-by-element f64 loop over the ranks would: its values depend neither on the block
//!   size nor on the ISA. Integer sums wrap at the dtype's width.
//! - [`measure_block`] keeps eight partial sums of the ulp errors — lane j takes the block's
//!   elements j, j + 8, j + 16, … — and adds them in lane order, so a block's sum is the same
//!   on every ISA (it may differ in the last bits from one running sum). Maxima and counts are
//!   exact.
//! - The loops are plain Rust compiled per CPU feature level (`crate::simd`'s dispatch), so
//!   every level computes the same operations in the same order: the same bits.

use alloc::vec::Vec;

use crate::simd::{Caps, Isa, Kernel, MeasureF32, detected_isa, dispatch};
use crate::{NumType, NumericsError, Rounding};

/// How the exact reduction combines the ranks' values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Combine {
    /// The sum (integers wrap at the dtype's width).
    Sum,
    /// The smallest value (NaN ignored, as `f64::min`).
    Min,
    /// The largest value (NaN ignored, as `f64::max`).
    Max,
}

/// The exact reduction of one block of elements: value and Σ|x| per element, in f64.
#[derive(Clone, Debug)]
pub struct ExactBlock {
    t: NumType,
    combine: Combine,
    value: Vec<f64>,
    magnitude: Vec<f64>,
    wrapped: Vec<i64>,
    wide: Vec<u8>,
    len: usize,
}

impl ExactBlock {
    /// An empty block for elements of `t` combined by `combine`.
    pub fn new(t: NumType, combine: Combine) -> ExactBlock {
        ExactBlock {
            t,
            combine,
            value: Vec::new(),
            magnitude: Vec::new(),
            wrapped: Vec::new(),
            wide: Vec::new(),
            len: 0,
        }
    }

    /// Starts a block of `len` elements (no rank added yet).
    pub fn start(&mut self, len: usize) {
        let start = match self.combine {
            Combine::Sum => 0.0,
            Combine::Min => f64::INFINITY,
            Combine::Max => f64::NEG_INFINITY,
        };
        self.len = len;
        self.value.clear();
        self.value.resize(len, start);
        self.magnitude.clear();
        self.magnitude.resize(len, 0.0);
        if !self.t.is_float() {
            self.wrapped.clear();
            self.wrapped.resize(len, 0);
        }
    }

    /// Adds one rank's elements of the block (`src` holds exactly the block's elements).
    ///
    /// # Errors
    /// [`NumericsError::OutputLength`] when `src` is not the block's length in bytes.
    pub fn add(&mut self, src: &[u8]) -> Result<(), NumericsError> {
        let size = self.t.size();
        if src.len() != self.len * size {
            return Err(NumericsError::OutputLength { index: 0, len: src.len(), expected: self.len * size });
        }
        if let Some((bits, signed)) = self.t.int_info() {
            for (i, c) in src.chunks_exact(size).enumerate() {
                let raw = int_of(c, bits, signed);
                let x = if signed { raw as f64 } else { raw as u64 as f64 };
                self.magnitude[i] += x.abs();
                match self.combine {
                    Combine::Sum => self.wrapped[i] = self.wrapped[i].wrapping_add(raw),
                    Combine::Min => self.value[i] = self.value[i].min(x),
                    Combine::Max => self.value[i] = self.value[i].max(x),
                }
            }
            return Ok(());
        }
        let wide = widen(self.t, src, &mut self.wide)?;
        let mut job =
            Accumulate { wide, value: &mut self.value, magnitude: &mut self.magnitude, combine: self.combine };
        dispatch(&mut job, detected_isa());
        Ok(())
    }

    /// Adds every rank's elements of the block at once (`srcs[r]` holds exactly the block's
    /// elements of rank r, in rank order): the values [`add`](ExactBlock::add) of each rank in
    /// turn gives (a NaN's sign and payload aside). Each element's ranks are added in
    /// registers, a stretch of elements at a time, so the block's f64 sums are read and
    /// written once, not once per rank.
    ///
    /// # Errors
    /// [`NumericsError::OutputLength`] when a source is not the block's length in bytes.
    pub fn add_ranks(&mut self, srcs: &[&[u8]]) -> Result<(), NumericsError> {
        let size = self.t.size();
        if let Some(bad) = srcs.iter().find(|s| s.len() != self.len * size) {
            return Err(NumericsError::OutputLength { index: 0, len: bad.len(), expected: self.len * size });
        }
        if self.t.int_info().is_some() {
            return srcs.iter().try_for_each(|s| self.add(s));
        }
        if self.t == NumType::Bf16 {
            // A bf16 element is the high half of its fp32 value: widened in the loop itself.
            let mut job = AccumulateRanks {
                rows: Rows::Bf16(srcs),
                value: &mut self.value,
                magnitude: &mut self.magnitude,
                combine: self.combine,
            };
            dispatch(&mut job, detected_isa());
            return Ok(());
        }
        let mut first = 0;
        while first < self.len {
            let n = STRETCH.min(self.len - first);
            // Every rank's stretch widened to fp32, rank after rank, `n` elements each.
            self.wide.clear();
            self.wide.resize(srcs.len() * n * 4, 0);
            for (src, wide) in srcs.iter().zip(self.wide.chunks_exact_mut(n * 4)) {
                let part = &src[first * size..(first + n) * size];
                if self.t == NumType::F32 {
                    wide.copy_from_slice(part);
                } else {
                    crate::convert(self.t, NumType::F32, part, wide, Rounding::Rne, false)?;
                }
            }
            let mut job = AccumulateRanks {
                rows: Rows::F32 { wide: &self.wide, n },
                value: &mut self.value[first..first + n],
                magnitude: &mut self.magnitude[first..first + n],
                combine: self.combine,
            };
            dispatch(&mut job, detected_isa());
            first += n;
        }
        Ok(())
    }

    /// Ends the block: a float sum is divided by `divisor` (an average: the rank count; else
    /// pass 1), an integer sum wraps to the dtype.
    pub fn finish(&mut self, divisor: f64) {
        if let Some((bits, signed)) = self.t.int_info() {
            if self.combine == Combine::Sum {
                for (v, &w) in self.value.iter_mut().zip(&self.wrapped) {
                    *v = wrap(w, bits, signed);
                }
            }
        } else if divisor != 1.0 && self.combine == Combine::Sum {
            for v in &mut self.value {
                *v /= divisor;
            }
        }
    }

    /// The exact values of the block's elements.
    pub fn values(&self) -> &[f64] {
        &self.value
    }

    /// Σ|x| over the ranks, per element.
    pub fn magnitudes(&self) -> &[f64] {
        &self.magnitude
    }
}

/// What an error check allows: `|output − exact| ≤ rel · Σ|x| + abs` (NaN is always outside).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ErrorBound {
    /// The bound's factor of Σ|x|.
    pub rel: f64,
    /// The bound's constant term.
    pub abs: f64,
    /// Σ|x| is divided by this before it sets the ulp scale (an average: the rank count; else
    /// 1).
    pub scale_divisor: f64,
}

/// One output block's errors against an [`ExactBlock`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BlockErrors {
    /// Largest finite |output − exact|.
    pub max_abs_err: f64,
    /// Largest finite error in ulps of the dtype at max(Σ|x| / scale_divisor, |exact|)
    /// (integers: the absolute error).
    pub max_ulp_err: f64,
    /// The finite ulp errors summed (eight lanes, added in lane order).
    pub ulp_sum: f64,
    /// How many errors were finite (the terms of `ulp_sum`).
    pub counted: u64,
    /// Elements outside the bound, NaN errors included.
    pub wrong: u64,
    /// Largest finite |exact|.
    pub max_exact: f64,
}

impl BlockErrors {
    /// Adds `other` (the next block) into `self`: maxima, counts and `ulp_sum` in call order.
    pub fn merge(&mut self, other: &BlockErrors) {
        self.max_abs_err = self.max_abs_err.max(other.max_abs_err);
        self.max_ulp_err = self.max_ulp_err.max(other.max_ulp_err);
        self.ulp_sum += other.ulp_sum;
        self.counted += other.counted;
        self.wrong += other.wrong;
        self.max_exact = self.max_exact.max(other.max_exact);
    }
}

/// Scratch for [`measure_block`]: the widened output.
#[derive(Clone, Debug, Default)]
pub struct OutputScratch {
    wide: Vec<u8>,
    ints: Vec<f64>,
}

/// Measures `out` (the block's elements of one output, `t` as the block's) against `exact`.
///
/// # Errors
/// [`NumericsError::OutputLength`] when `out` is not the block's length in bytes.
pub fn measure_block(
    exact: &ExactBlock,
    out: &[u8],
    bound: &ErrorBound,
    scratch: &mut OutputScratch,
) -> Result<BlockErrors, NumericsError> {
    measure_block_with(exact, out, bound, scratch, detected_isa())
}

/// [`measure_block`] with the kernels capped at `max_isa`: the same result at every level
/// (`Isa::Portable` runs the element loop alone, the reference).
///
/// # Errors
/// As [`measure_block`].
pub fn measure_block_with(
    exact: &ExactBlock,
    out: &[u8],
    bound: &ErrorBound,
    scratch: &mut OutputScratch,
    max_isa: Isa,
) -> Result<BlockErrors, NumericsError> {
    let t = exact.t;
    let size = t.size();
    if out.len() != exact.len * size {
        return Err(NumericsError::OutputLength { index: 0, len: out.len(), expected: exact.len * size });
    }
    let ulp = match t.float_format() {
        Some(f) => UlpRule::Float { precision: f.precision() as i64, min_exp: 1 - i64::from(f.bias) },
        None => UlpRule::Integer,
    };
    let got = if let Some((bits, signed)) = t.int_info() {
        scratch.ints.clear();
        scratch.ints.extend(out.chunks_exact(size).map(|c| {
            let raw = int_of(c, bits, signed);
            if signed { raw as f64 } else { raw as u64 as f64 }
        }));
        Got::F64(&scratch.ints)
    } else {
        Got::F32(widen(t, out, &mut scratch.wide)?)
    };
    let mut job = Measure { exact: &exact.value, magnitude: &exact.magnitude, got, bound: *bound, ulp, result: None };
    dispatch(&mut job, max_isa);
    Ok(job.result.unwrap_or_default())
}

/// The fp32 bytes of `src`'s float elements (`src` itself when it is fp32).
fn widen<'a>(t: NumType, src: &'a [u8], wide: &'a mut Vec<u8>) -> Result<&'a [u8], NumericsError> {
    if t == NumType::F32 {
        return Ok(src);
    }
    wide.clear();
    wide.resize(src.len() / t.size() * 4, 0);
    crate::convert(t, NumType::F32, src, wide, Rounding::Rne, false)?;
    Ok(wide)
}

/// An integer element of `bits` bits, sign- or zero-extended to 64 bits.
fn int_of(c: &[u8], bits: u32, signed: bool) -> i64 {
    let mut b = [0u8; 8];
    b[..c.len()].copy_from_slice(c);
    let raw = u64::from_le_bytes(b);
    if signed && bits < 64 { ((raw << (64 - bits)) as i64) >> (64 - bits) } else { raw as i64 }
}

/// `v` wrapped to a `bits`-bit integer, as f64.
fn wrap(v: i64, bits: u32, signed: bool) -> f64 {
    if bits >= 64 {
        return if signed { v as f64 } else { v as u64 as f64 };
    }
    let m = (v as u64) & ((1u64 << bits) - 1);
    if signed { (((m << (64 - bits)) as i64) >> (64 - bits)) as f64 } else { m as f64 }
}

/// How an error becomes ulps.
#[derive(Clone, Copy, Debug)]
enum UlpRule {
    /// A float dtype of `precision` bits (implicit bit included) whose smallest normal has
    /// exponent `min_exp`: the ulp at x is 2^(max(floor(log2 |x|), min_exp) − precision + 1).
    Float { precision: i64, min_exp: i64 },
    /// An integer dtype: the ulp is 1.
    Integer,
}

impl UlpRule {
    /// 1 / ulp at `scale` (≥ 0), exactly (a power of two).
    #[inline(always)]
    fn inverse(self, scale: f64) -> f64 {
        match self {
            UlpRule::Integer => 1.0,
            UlpRule::Float { precision, min_exp } => {
                let field = ((scale.to_bits() >> 52) & 0x7FF) as i64;
                // Zero, f64 subnormals, infinities and NaN take the floor exponent.
                let e = if field == 0 || field == 0x7FF { min_exp } else { field - 1023 };
                let k = e.max(min_exp) - precision + 1;
                f64::from_bits(((1023 - k) as u64) << 52)
            }
        }
    }
}

/// The output's elements, widened.
#[derive(Clone, Copy)]
enum Got<'a> {
    /// fp32 bytes.
    F32(&'a [u8]),
    /// f64 values (integers).
    F64(&'a [f64]),
}

/// Adds one rank's widened elements into the block.
struct Accumulate<'a> {
    wide: &'a [u8],
    value: &'a mut [f64],
    magnitude: &'a mut [f64],
    combine: Combine,
}

impl Kernel for Accumulate<'_> {
    #[inline(always)]
    fn run<C: Caps>(&mut self) {
        let xs = self.wide.chunks_exact(4).map(|c| f64::from(f32::from_le_bytes([c[0], c[1], c[2], c[3]])));
        let slots = self.value.iter_mut().zip(self.magnitude.iter_mut());
        match self.combine {
            Combine::Sum => {
                for ((v, m), x) in slots.zip(xs) {
                    *m += x.abs();
                    *v += x;
                }
            }
            Combine::Min => {
                for ((v, m), x) in slots.zip(xs) {
                    *m += x.abs();
                    *v = v.min(x);
                }
            }
            Combine::Max => {
                for ((v, m), x) in slots.zip(xs) {
                    *m += x.abs();
                    *v = v.max(x);
                }
            }
        }
    }
}

/// Elements [`ExactBlock::add_ranks`] widens per rank before it adds them: eight ranks'
/// fp32 stretches fit in L1 (16 KiB).
#[doc(hidden)]
pub const STRETCH: usize = 512;

/// Every rank's values of one stretch of elements, combined into `value` and `magnitude`
/// element by element, ranks in order.
struct AccumulateRanks<'a> {
    rows: Rows<'a>,
    value: &'a mut [f64],
    magnitude: &'a mut [f64],
    combine: Combine,
}

/// Where [`AccumulateRanks`] reads each rank's values.
#[derive(Clone, Copy)]
enum Rows<'a> {
    /// fp32 bytes, `n` elements per rank, rank after rank.
    F32 { wide: &'a [u8], n: usize },
    /// Every rank's bf16 bytes of the stretch.
    Bf16(&'a [&'a [u8]]),
}

impl AccumulateRanks<'_> {
    /// The elements `at .. at + W` of every rank into `v`, `m`.
    #[inline(always)]
    fn group<const W: usize>(&self, at: usize, v: &mut [f64; W], m: &mut [f64; W]) {
        match self.rows {
            Rows::F32 { wide, n } => {
                for row in wide.chunks_exact(n * 4) {
                    let row = &row[at * 4..(at + W) * 4];
                    let xs: [f32; W] = core::array::from_fn(|j| {
                        f32::from_le_bytes([row[4 * j], row[4 * j + 1], row[4 * j + 2], row[4 * j + 3]])
                    });
                    self.take(&xs, v, m);
                }
            }
            Rows::Bf16(srcs) => {
                for src in srcs {
                    let row = &src[at * 2..(at + W) * 2];
                    let xs: [f32; W] = core::array::from_fn(|j| {
                        f32::from_bits(u32::from(u16::from_le_bytes([row[2 * j], row[2 * j + 1]])) << 16)
                    });
                    self.take(&xs, v, m);
                }
            }
        }
    }

    /// One rank's values `xs` combined into `v`, `m`.
    #[inline(always)]
    fn take<const W: usize>(&self, xs: &[f32; W], v: &mut [f64; W], m: &mut [f64; W]) {
        for j in 0..W {
            let x = f64::from(xs[j]);
            m[j] += x.abs();
            v[j] = match self.combine {
                Combine::Sum => v[j] + x,
                Combine::Min => v[j].min(x),
                Combine::Max => v[j].max(x),
            };
        }
    }
}

impl Kernel for AccumulateRanks<'_> {
    #[inline(always)]
    fn run<C: Caps>(&mut self) {
        const W: usize = 8;
        let n = self.value.len();
        let mut at = 0;
        while at < n {
            if n - at >= W {
                let mut v: [f64; W] = self.value[at..at + W].try_into().unwrap_or([0.0; W]);
                let mut m: [f64; W] = self.magnitude[at..at + W].try_into().unwrap_or([0.0; W]);
                self.group(at, &mut v, &mut m);
                self.value[at..at + W].copy_from_slice(&v);
                self.magnitude[at..at + W].copy_from_slice(&m);
                at += W;
            } else {
                let (mut v, mut m) = ([self.value[at]], [self.magnitude[at]]);
                self.group(at, &mut v, &mut m);
                (self.value[at], self.magnitude[at]) = (v[0], m[0]);
                at += 1;
            }
        }
    }
}

/// Eight lanes of a block's error sums.
#[derive(Clone, Copy, Default)]
pub(crate) struct Lanes {
    pub(crate) max_abs: [f64; LANES],
    pub(crate) max_ulp: [f64; LANES],
    pub(crate) sum: [f64; LANES],
    pub(crate) max_exact: [f64; LANES],
    pub(crate) counted: [u64; LANES],
    pub(crate) wrong: [u64; LANES],
}

const LANES: usize = 8;

impl Lanes {
    /// Element `g` (output) against `e` (exact) with Σ|x| `m`, in lane `j`.
    #[inline(always)]
    fn take(&mut self, j: usize, g: f64, e: f64, m: f64, bound: &ErrorBound, ulp: UlpRule) {
        let err = (g - e).abs();
        let outside = err.is_nan() || err > bound.rel * m + bound.abs;
        self.wrong[j] += u64::from(outside);
        let ae = if e.is_finite() { e.abs() } else { 0.0 };
        self.max_exact[j] = if ae > self.max_exact[j] { ae } else { self.max_exact[j] };
        let finite = err.is_finite();
        let err = if finite { err } else { 0.0 };
        self.max_abs[j] = if err > self.max_abs[j] { err } else { self.max_abs[j] };
        let scale = (m / bound.scale_divisor).max(e.abs());
        let u = err * ulp.inverse(scale);
        self.max_ulp[j] = if u > self.max_ulp[j] { u } else { self.max_ulp[j] };
        self.sum[j] += u;
        self.counted[j] += u64::from(finite);
    }

    fn total(&self) -> BlockErrors {
        let mut b = BlockErrors::default();
        for j in 0..LANES {
            b.max_abs_err = b.max_abs_err.max(self.max_abs[j]);
            b.max_ulp_err = b.max_ulp_err.max(self.max_ulp[j]);
            b.ulp_sum += self.sum[j];
            b.counted += self.counted[j];
            b.wrong += self.wrong[j];
            b.max_exact = b.max_exact.max(self.max_exact[j]);
        }
        b
    }
}

/// One output block against the exact values.
struct Measure<'a> {
    exact: &'a [f64],
    magnitude: &'a [f64],
    got: Got<'a>,
    bound: ErrorBound,
    ulp: UlpRule,
    result: Option<BlockErrors>,
}

impl Kernel for Measure<'_> {
    #[inline(always)]
    fn run<C: Caps>(&mut self) {
        let mut lanes = Lanes::default();
        let (bound, ulp) = (self.bound, self.ulp);
        let n = self.exact.len().min(self.magnitude.len());
        let whole = n / LANES * LANES;
        match self.got {
            Got::F32(wide) => {
                let wide = &wide[..n * 4];
                // The vector kernel's whole groups of eight where the CPU has one (the same
                // lanes, the same bits), then the portable loop from there.
                let done = match ulp {
                    UlpRule::Float { precision, min_exp } => {
                        let job = MeasureF32 {
                            exact: &self.exact[..n],
                            magnitude: &self.magnitude[..n],
                            wide,
                            rel: bound.rel,
                            abs: bound.abs,
                            scale_divisor: bound.scale_divisor,
                            precision,
                            min_exp,
                        };
                        C::measure_f32(&job, &mut lanes)
                    }
                    UlpRule::Integer => 0,
                };
                for ((e8, m8), g8) in self.exact[done..whole]
                    .chunks_exact(LANES)
                    .zip(self.magnitude[done..whole].chunks_exact(LANES))
                    .zip(wide[4 * done..].chunks_exact(4 * LANES))
                {
                    for j in 0..LANES {
                        let g = f32::from_le_bytes([g8[4 * j], g8[4 * j + 1], g8[4 * j + 2], g8[4 * j + 3]]);
                        lanes.take(j, f64::from(g), e8[j], m8[j], &bound, ulp);
                    }
                }
                for i in whole..n {
                    let c = &wide[4 * i..4 * i + 4];
                    let g = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                    lanes.take(i % LANES, f64::from(g), self.exact[i], self.magnitude[i], &bound, ulp);
                }
            }
            Got::F64(got) => {
                for (i, &g) in got.iter().enumerate().take(n) {
                    lanes.take(i % LANES, g, self.exact[i], self.magnitude[i], &bound, ulp);
                }
            }
        }
        self.result = Some(lanes.total());
    }
}

/// The ulp of `t` at `x` as the check computes it: a power of two (1 for an integer dtype).
pub fn ulp_of(t: NumType, x: f64) -> f64 {
    match t.float_format() {
        Some(f) => {
            let rule = UlpRule::Float { precision: f.precision() as i64, min_exp: 1 - i64::from(f.bias) };
            1.0 / rule.inverse(x.abs())
        }
        None => 1.0,
    }
}
