//! One element's reduce, step by step: what [`reduce`](crate::reduce()) computes for one
//! element, with every value it passes through — each source converted into the accumulate
//! dtype, each combine's exact result and the accumulator after rounding it, and the final
//! rounding to the output dtype, each with how it rounded (nothing to round, round to nearest
//! even, or stochastic rounding with its 32 random bits and the probability of rounding up).
//!
//! ## Guarantees
//! - The trace is made by the generic element path itself (`any_dtype`, through an observer
//!   that the bulk path compiles away), so its output bits are the bits [`reduce`](crate::reduce())
//!   writes for that element at that index, whatever kernel the bulk path takes (the kernels
//!   equal the generic path, tested).
//! - An `exact` value is the combine's exact result as an f64, or, when that needs more than
//!   53 bits, the f64 rounded to odd (which rounds to the same accumulator bits).
//! - Stochastic rounding: `p_up` is `⌊frac · 2³²⌋ / 2³²` where `frac` is the discarded part in
//!   units of the result's ulp (see [`crate::float`]), and `up` is `⌊frac · 2³²⌋ + random ≥ 2³²`.

use alloc::vec::Vec;

use crate::any_dtype::{Observe, Plan, Val, encode_val, load};
use crate::error::NumericsError;
use crate::float::grid_f64;
use crate::reduce::validate;
use crate::spec::ReduceSpec;
use crate::types::NumType;

/// A value of some dtype: its encoding and its value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Traced {
    /// The encoding (little-endian bits in the low bytes).
    pub bits: u64,
    /// The value (an integer as the nearest f64).
    pub value: f64,
}

/// How one conversion rounded.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum HowRounded {
    /// The value was on the target's grid (or not finite): nothing rounded.
    Exact,
    /// Round to nearest, ties to even; `up`: away from zero.
    Nearest {
        /// Rounded away from zero.
        up: bool,
    },
    /// Stochastic rounding with these 32 random bits.
    Stochastic {
        /// The random bits of this rounding (site and element index, [`crate::rng`]).
        random: u32,
        /// The probability of rounding away from zero: the discarded fraction of an ulp,
        /// `⌊frac · 2³²⌋ / 2³²`.
        p_up: f64,
        /// Rounded away from zero.
        up: bool,
    },
}

/// One source of the element.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TracedOperand {
    /// The source's element, in the input dtype.
    pub input: Traced,
    /// It converted into the accumulate dtype.
    pub widened: Traced,
    /// How that conversion rounded.
    pub widening: HowRounded,
}

/// One combine of the accumulator.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TracedStep {
    /// The source combined (`None`: a MIN / MAX clamp constant). An ADD, MIN or MAX starts
    /// from source 0 and combines 1, 2, …; an FMA combines every source from 0.
    pub source: Option<usize>,
    /// The exact result before rounding (see the module's guarantees).
    pub exact: f64,
    /// The accumulator after rounding it, in the accumulate dtype.
    pub rounded: Traced,
    /// How it rounded.
    pub rounding: HowRounded,
}

/// One element's reduce, step by step.
#[derive(Clone, Debug, PartialEq)]
pub struct ElementTrace {
    /// Every source, in order.
    pub operands: Vec<TracedOperand>,
    /// Every combine, in order.
    pub steps: Vec<TracedStep>,
    /// The accumulator before the final rounding, in the accumulate dtype.
    pub accumulator: Traced,
    /// The output element, in the output dtype: what the reduce writes.
    pub out: Traced,
    /// How the accumulator rounded to the output dtype.
    pub out_rounding: HowRounded,
}

/// The element at `index` (its stochastic-rounding index) of the reduce `spec` over one
/// element of each source, `sources` holding their encodings in the input dtype, traced.
///
/// # Errors
/// As [`reduce`](crate::reduce()) for a one-element call: a source count outside
/// 1..=[`MAX_SOURCES`](crate::MAX_SOURCES), FMA operand sets that do not match the sources, an
/// FMA without a float accumulator.
pub fn trace_element(spec: &ReduceSpec, sources: &[u64], index: u64) -> Result<ElementTrace, NumericsError> {
    let isz = spec.in_type.size();
    let bytes: Vec<[u8; 8]> = sources.iter().map(|b| b.to_le_bytes()).collect();
    let views: Vec<&[u8]> = bytes.iter().map(|b| &b[..isz]).collect();
    let mut out = [0u8; 8];
    validate(spec, &views, &[&mut out[..spec.out_type.size()]], index)?;
    let plan =
        Plan::new(&spec.op, spec.in_type, spec.accum_type.num_type(), spec.out_type, spec.rounding, spec.saturate);
    let vals: Vec<Val> = views.iter().map(|v| load(spec.in_type, v, 0)).collect();
    let mut tracer = Tracer { sources, trace: ElementTrace::default() };
    plan.element_observed(&vals, index, &mut tracer);
    Ok(tracer.trace)
}

impl Default for ElementTrace {
    fn default() -> Self {
        let zero = Traced { bits: 0, value: 0.0 };
        ElementTrace {
            operands: Vec::new(),
            steps: Vec::new(),
            accumulator: zero,
            out: zero,
            out_rounding: HowRounded::Exact,
        }
    }
}

struct Tracer<'a> {
    sources: &'a [u64],
    trace: ElementTrace,
}

fn value(v: Val) -> f64 {
    match v {
        Val::F(x) => x,
        Val::I(i) => i as f64,
    }
}

/// A value already in `t`'s domain, encoded.
fn traced(v: Val, t: NumType) -> Traced {
    Traced { bits: encode_val(v, t, false, |_| None), value: value(v) }
}

/// How `v` rounds into `t`, with the random bits `sr` when stochastic.
fn how(v: Val, t: NumType, sr: Option<u32>) -> HowRounded {
    let x = value(v);
    let Some(fmt) = t.float_format() else {
        // Into an integer: a float rounds to nearest even; an integer is exact (or wraps).
        return match v {
            Val::F(f) if f.is_finite() && f != libm_trunc(f) => {
                let r = crate::any_dtype::f2i(f, 64, true) as f64;
                HowRounded::Nearest { up: r.abs() > f.abs() }
            }
            _ => HowRounded::Exact,
        };
    };
    match grid_f64(x, fmt) {
        Some(g) if g.inexact => match sr {
            None => HowRounded::Nearest { up: g.rne_up },
            Some(r) => HowRounded::Stochastic { random: r, p_up: g.frac32 as f64 / 4_294_967_296.0, up: g.up(Some(r)) },
        },
        _ => HowRounded::Exact,
    }
}

/// How `value` rounds to nearest even into `to` (what a conversion outside a reduce does, e.g.
/// a GCE expansion's f32 into the buffer dtype).
pub fn rounding_into(value: f64, to: NumType) -> HowRounded {
    how(Val::F(value), to, None)
}

/// `f` truncated toward zero (no_std: no `f64::trunc`).
fn libm_trunc(f: f64) -> f64 {
    if f.abs() >= 4_503_599_627_370_496.0 { f } else { (f as i64) as f64 }
}

impl Observe for Tracer<'_> {
    const ON: bool = true;

    fn operand(&mut self, plan: &Plan<'_>, index: u64, i: usize, input: Val, widened: Val) {
        let sr = plan.acc_type.float_format().and_then(|f| plan.random_bits(f, 1 + i, index));
        let mask = if plan.in_type.size() >= 8 { u64::MAX } else { (1u64 << (8 * plan.in_type.size())) - 1 };
        self.trace.operands.push(TracedOperand {
            input: Traced { bits: self.sources.get(i).copied().unwrap_or(0) & mask, value: value(input) },
            widened: traced(widened, plan.acc_type),
            widening: how(input, plan.acc_type, sr),
        });
    }

    fn step(&mut self, plan: &Plan<'_>, index: u64, i: Option<usize>, exact: Val, rounded: Val, site: usize) {
        let sr = plan.acc_type.float_format().and_then(|f| plan.random_bits(f, site, index));
        self.trace.steps.push(TracedStep {
            source: i,
            exact: value(exact),
            rounded: traced(rounded, plan.acc_type),
            rounding: how(exact, plan.acc_type, sr),
        });
    }

    fn out(&mut self, plan: &Plan<'_>, index: u64, acc: Val, raw: u64) {
        let sr = plan.out_type.float_format().and_then(|f| plan.random_bits(f, 0, index));
        let out_value = match plan.out_type.float_format() {
            Some(fmt) => crate::float::decode(fmt, raw as u32),
            None => value(crate::any_dtype::load(plan.out_type, &raw.to_le_bytes(), 0)),
        };
        self.trace.accumulator = traced(acc, plan.acc_type);
        self.trace.out = Traced { bits: raw, value: out_value };
        self.trace.out_rounding = how(acc, plan.out_type, sr);
    }
}
