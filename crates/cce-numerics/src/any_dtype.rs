//! The generic element path: any op, any in / accumulate / out dtype, one element at a time.
//! Values are held exactly: floats (≤ 32 bits) as f64, integers (≤ 64 bits) as i128.

use crate::float::{add_round_odd, decode, fma_round_odd, round_exact, round_f64};
use crate::rng::{bits32, site_key};
use crate::spec::{FmaSource, MAX_SOURCES, Op, Operand, Rounding, Scalar};
use crate::types::{FloatFormat, NumType};

/// An exact value of some dtype.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Val {
    F(f64),
    I(i128),
}

/// Number of rounding sites (see [`crate::rng`]).
pub(crate) const SITES: usize = 1 + 2 * MAX_SOURCES;

/// Reads element `j` of a little-endian buffer of `t`. The caller guarantees bounds.
pub(crate) fn load(t: NumType, bytes: &[u8], j: usize) -> Val {
    let sz = t.size();
    let mut b = [0u8; 8];
    b[..sz].copy_from_slice(&bytes[j * sz..j * sz + sz]);
    let raw = u64::from_le_bytes(b);
    if let Some(fmt) = t.float_format() {
        return Val::F(decode(fmt, raw as u32));
    }
    let (bits, signed) = t.int_info().unwrap_or((64, false));
    Val::I(wrap(i128::from(raw), bits, signed))
}

/// Writes `raw` (the encoding) as element `j`.
pub(crate) fn store(t: NumType, bytes: &mut [u8], j: usize, raw: u64) {
    let sz = t.size();
    bytes[j * sz..j * sz + sz].copy_from_slice(&raw.to_le_bytes()[..sz]);
}

/// Two's-complement wrap of `v` into a `bits`-wide integer.
pub fn wrap(v: i128, bits: u32, signed: bool) -> i128 {
    let m = (v as u128) & ((1u128 << bits) - 1);
    if signed && m >> (bits - 1) != 0 { m as i128 - (1i128 << bits) } else { m as i128 }
}

fn int_range(bits: u32, signed: bool) -> (i128, i128) {
    if signed { (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1) } else { (0, (1i128 << bits) - 1) }
}

/// Round-to-nearest-even of a finite f64 to an integer value (as f64).
fn rne_int(x: f64) -> f64 {
    let t = 4_503_599_627_370_496.0; // 2^52
    let ax = if x < 0.0 { -x } else { x };
    if ax >= t {
        return x;
    }
    let r = (ax + t) - t;
    if x < 0.0 { -r } else { r }
}

/// Float → integer: RNE, saturate to the type's range, NaN → 0.
pub fn f2i(x: f64, bits: u32, signed: bool) -> i128 {
    if x.is_nan() {
        return 0;
    }
    let (lo, hi) = int_range(bits, signed);
    (rne_int(x) as i128).clamp(lo, hi)
}

fn int_to_float(i: i128, fmt: FloatFormat, sr: Option<u32>, saturate: bool) -> u32 {
    round_exact(i < 0, i.unsigned_abs() as u64, 0, fmt, sr, saturate)
}

/// Everything the per-element loop needs, resolved once.
pub(crate) struct Plan<'a> {
    pub(crate) in_type: NumType,
    pub(crate) acc_type: NumType,
    pub(crate) out_type: NumType,
    pub(crate) op: &'a Op,
    pub(crate) saturate: bool,
    /// Per-site keys when stochastic.
    pub(crate) keys: Option<[u64; SITES]>,
    pub(crate) clamp: Option<Val>,
}

impl<'a> Plan<'a> {
    pub(crate) fn new(
        op: &'a Op,
        in_type: NumType,
        acc_type: NumType,
        out_type: NumType,
        rounding: Rounding,
        saturate: bool,
    ) -> Plan<'a> {
        let keys = match rounding {
            Rounding::Rne => None,
            Rounding::Stochastic { seed, stream } => {
                let mut k = [0u64; SITES];
                for (site, key) in k.iter_mut().enumerate() {
                    *key = site_key(seed, stream, site as u32);
                }
                Some(k)
            }
        };
        let clamp = match op {
            Op::Min { clamp: Some(c) } | Op::Max { clamp: Some(c) } => Some(scalar_to(acc_type, *c)),
            _ => None,
        };
        Plan { in_type, acc_type, out_type, op, saturate, keys, clamp }
    }

    /// The SR bits for a rounding into `fmt` at `site`, or `None` (RNE). Only formats narrower
    /// than fp32 round stochastically.
    fn rnd(&self, fmt: FloatFormat, site: usize, index: u64) -> Option<u32> {
        match &self.keys {
            Some(k) if fmt != FloatFormat::F32 => Some(bits32(k[site], index)),
            _ => None,
        }
    }

    /// Converts a value into the accumulate dtype (no saturation).
    fn to_acc(&self, v: Val, site: usize, index: u64) -> Val {
        convert_val(v, self.acc_type, false, |f| self.rnd(f, site, index))
    }

    /// Rounds an f64 result of an operation into the float accumulator; a NaN result becomes
    /// the positive canonical NaN.
    fn round_acc(&self, fmt: FloatFormat, x: f64, site: usize, index: u64) -> Val {
        let y = decode(fmt, round_f64(x, fmt, self.rnd(fmt, site, index), false));
        Val::F(if y.is_nan() { f64::NAN } else { y })
    }

    /// Computes one element from its source values.
    pub(crate) fn element(&self, vals: &[Val], index: u64) -> u64 {
        self.element_observed(vals, index, &mut Quiet)
    }

    /// [`Self::element`], telling `obs` every conversion and step as it happens (the trace,
    /// `crate::trace`); with [`Quiet`] it is `element` itself.
    #[inline(always)]
    pub(crate) fn element_observed<O: Observe>(&self, vals: &[Val], index: u64, obs: &mut O) -> u64 {
        let acc_fmt = self.acc_type.float_format();
        let acc = match self.op {
            Op::Fma(ops) => {
                let fmt = acc_fmt.unwrap_or(FloatFormat::F32);
                let mut acc = 0.0f64;
                for (i, (v, src)) in vals.iter().zip(ops.iter()).enumerate() {
                    let widened = self.to_acc(*v, 1 + i, index);
                    if O::ON {
                        obs.operand(self, index, i, *v, widened);
                    }
                    let x = match widened {
                        Val::F(x) => x,
                        Val::I(i) => i as f64,
                    };
                    let exact = fma_step(acc, x, src);
                    let site = 1 + MAX_SOURCES + i;
                    let rounded = self.round_acc(fmt, exact, site, index);
                    if O::ON {
                        obs.step(self, index, Some(i), Val::F(exact), rounded, site);
                    }
                    acc = match rounded {
                        Val::F(f) => f,
                        Val::I(i) => i as f64,
                    };
                }
                Val::F(acc)
            }
            Op::Add | Op::Min { .. } | Op::Max { .. } => {
                let mut acc = self.to_acc(vals[0], 1, index);
                if O::ON {
                    obs.operand(self, index, 0, vals[0], acc);
                }
                for (i, v) in vals.iter().enumerate().skip(1) {
                    let x = self.to_acc(*v, 1 + i, index);
                    if O::ON {
                        obs.operand(self, index, i, *v, x);
                    }
                    let site = 1 + MAX_SOURCES + i;
                    let (exact, rounded) = self.step(acc, x, site, index);
                    if O::ON {
                        obs.step(self, index, Some(i), exact, rounded, site);
                    }
                    acc = rounded;
                }
                if let Some(c) = self.clamp {
                    let (exact, rounded) = self.step(acc, c, 0, index);
                    if O::ON {
                        obs.step(self, index, None, exact, rounded, 0);
                    }
                    acc = rounded;
                }
                acc
            }
        };
        let out = self.out_type;
        let sat = self.saturate;
        let raw = encode_val(acc, out, sat, |f| self.rnd(f, 0, index));
        if O::ON {
            obs.out(self, index, acc, raw);
        }
        raw
    }

    /// One combine of the accumulator with `x`: the exact result (an f64 rounded to odd for a
    /// float add, see [`add_round_odd`]) and the accumulator after rounding it.
    fn step(&self, acc: Val, x: Val, site: usize, index: u64) -> (Val, Val) {
        match (acc, x) {
            (Val::F(a), Val::F(b)) => {
                let fmt = self.acc_type.float_format().unwrap_or(FloatFormat::F32);
                match self.op {
                    Op::Min { .. } => {
                        let m = Val::F(fminmax(a, b, false));
                        (m, m)
                    }
                    Op::Max { .. } => {
                        let m = Val::F(fminmax(a, b, true));
                        (m, m)
                    }
                    _ => {
                        let exact = add_round_odd(a, b);
                        (Val::F(exact), self.round_acc(fmt, exact, site, index))
                    }
                }
            }
            (Val::I(a), Val::I(b)) => {
                let (bits, signed) = self.acc_type.int_info().unwrap_or((64, true));
                match self.op {
                    Op::Min { .. } => (Val::I(a.min(b)), Val::I(a.min(b))),
                    Op::Max { .. } => (Val::I(a.max(b)), Val::I(a.max(b))),
                    _ => (Val::I(a + b), Val::I(wrap(a + b, bits, signed))),
                }
            }
            // Both values are always in the accumulate domain; keep the accumulator otherwise.
            _ => (acc, acc),
        }
    }

    /// The SR bits a rounding into `fmt` at `site` uses for element `index` (`None`: RNE, or a
    /// format not narrower than fp32).
    pub(crate) fn random_bits(&self, fmt: FloatFormat, site: usize, index: u64) -> Option<u32> {
        self.rnd(fmt, site, index)
    }
}

/// What [`Plan::element_observed`] tells as it computes: every source's conversion into the
/// accumulator, every combine, the final rounding. `ON` false compiles every call away.
pub(crate) trait Observe {
    /// Whether the calls are made at all.
    const ON: bool;
    /// Source `i`'s value `input`, `widened` into the accumulate dtype (rounding site `1 + i`).
    fn operand(&mut self, plan: &Plan<'_>, index: u64, i: usize, input: Val, widened: Val);
    /// A combine with source `i` (`None`: the clamp constant): its `exact` result and the
    /// accumulator after rounding it at `site`.
    fn step(&mut self, plan: &Plan<'_>, index: u64, i: Option<usize>, exact: Val, rounded: Val, site: usize);
    /// The accumulator `acc` rounded to the output dtype: `raw` (site 0).
    fn out(&mut self, plan: &Plan<'_>, index: u64, acc: Val, raw: u64);
}

/// The observer of the fast path: nothing.
pub(crate) struct Quiet;

impl Observe for Quiet {
    const ON: bool = false;
    #[inline(always)]
    fn operand(&mut self, _: &Plan<'_>, _: u64, _: usize, _: Val, _: Val) {}
    #[inline(always)]
    fn step(&mut self, _: &Plan<'_>, _: u64, _: Option<usize>, _: Val, _: Val, _: usize) {}
    #[inline(always)]
    fn out(&mut self, _: &Plan<'_>, _: u64, _: Val, _: u64) {}
}

fn fma_step(acc: f64, x: f64, src: &FmaSource) -> f64 {
    let pick = |o: Operand| match o {
        Operand::Stored => acc,
        Operand::Input => x,
        Operand::Scale => f64::from(src.scale),
    };
    fma_round_odd(pick(src.a), pick(src.b), pick(src.c))
}

/// MIN / MAX on floats: NaN-propagating (any NaN → the positive canonical NaN); −0 < +0.
pub fn fminmax(a: f64, b: f64, max: bool) -> f64 {
    if a.is_nan() || b.is_nan() {
        return f64::NAN;
    }
    if a == b {
        // Equal values differ at most in the sign of zero.
        let a_neg = a.is_sign_negative();
        return if a_neg == max { b } else { a };
    }
    if (a < b) != max { a } else { b }
}

/// Converts an exact value to type `t` (encoding not produced): the accumulator domain.
fn convert_val(v: Val, t: NumType, saturate: bool, rnd: impl Fn(FloatFormat) -> Option<u32>) -> Val {
    if let Some(fmt) = t.float_format() {
        let enc = match v {
            Val::F(x) => round_f64(x, fmt, rnd(fmt), saturate),
            Val::I(i) => int_to_float(i, fmt, rnd(fmt), saturate),
        };
        return Val::F(decode(fmt, enc));
    }
    let (bits, signed) = t.int_info().unwrap_or((64, true));
    Val::I(match v {
        Val::F(x) => f2i(x, bits, signed),
        Val::I(i) if saturate => {
            let (lo, hi) = int_range(bits, signed);
            i.clamp(lo, hi)
        }
        Val::I(i) => wrap(i, bits, signed),
    })
}

/// Encodes an exact value as type `t` (raw little-endian bits in a u64).
pub(crate) fn encode_val(v: Val, t: NumType, saturate: bool, rnd: impl Fn(FloatFormat) -> Option<u32>) -> u64 {
    if let Some(fmt) = t.float_format() {
        return u64::from(match v {
            Val::F(x) => round_f64(x, fmt, rnd(fmt), saturate),
            Val::I(i) => int_to_float(i, fmt, rnd(fmt), saturate),
        });
    }
    match convert_val(v, t, saturate, rnd) {
        Val::I(i) => i as u64,
        Val::F(_) => 0,
    }
}

/// A clamp constant for an fp32 accumulator (exact: the value is an f32).
pub(crate) fn scalar_to_f32(c: Scalar) -> f32 {
    match scalar_to(NumType::F32, c) {
        Val::F(x) => x as f32,
        Val::I(i) => i as f32,
    }
}

/// A clamp constant in the accumulate domain: RNE, saturating.
fn scalar_to(t: NumType, c: Scalar) -> Val {
    let v = match c {
        Scalar::F64(x) => Val::F(x),
        Scalar::I64(i) => Val::I(i128::from(i)),
        Scalar::U64(u) => Val::I(i128::from(u)),
    };
    convert_val(v, t, true, |_| None)
}

/// Runs the generic path over whole (already validated) buffers; element `j` has global index
/// `first + j`.
pub(crate) fn run(plan: &Plan<'_>, sources: &[&[u8]], outputs: &mut [&mut [u8]], first: u64) {
    let n = sources[0].len() / plan.in_type.size();
    let mut vals = [Val::I(0); MAX_SOURCES];
    let vals = &mut vals[..sources.len()];
    for j in 0..n {
        for (v, s) in vals.iter_mut().zip(sources) {
            *v = load(plan.in_type, s, j);
        }
        let raw = plan.element(vals, first.wrapping_add(j as u64));
        for o in outputs.iter_mut() {
            store(plan.out_type, o, j, raw);
        }
    }
}
