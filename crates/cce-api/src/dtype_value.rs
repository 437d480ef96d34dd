//! One value in one dtype, told in full (`cce value`, and the browser page's "dtypes" view):
//! its bits, exact value, class and bit fields, its neighbours and ulp, how a decimal rounds
//! into it (RNE, and the two outcomes of stochastic rounding with their probabilities), and the
//! value converted to every other dtype.
//!
//! ## Guarantees
//! - Every exact value is every digit of the stored value in decimal (`1.296875`), computed
//!   with integers (the `decimal` module); `inf`, `-inf`, `nan`, `-nan` for the specials.
//! - A decimal is read as numpy reads it: Rust's f64 parse (correctly rounded), then rounded
//!   to nearest even into the dtype by `cce_numerics::float::round_value`, the numerics' own
//!   rule (ml_dtypes' `astype`: overflow → ±inf, NaN for e4m3fn), or with `saturate` to ±max
//!   finite. That f64 is "the input": the RNE error and the stochastic-rounding fractions are
//!   exact against it, and `input_exact` shows it. An integer dtype takes an exact decimal
//!   integer in its range; `0x…` is the bit pattern itself in every dtype.
//! - Neighbours are IEEE nextDown / nextUp by value (both zeros step to the smallest
//!   subnormal; the largest finite value steps to ±inf where the format has one); `None` past
//!   the ends and for NaN.
//! - Stochastic rounding is the engine's (`cce_numerics::float`): `down` is the input
//!   truncated toward zero, `up` one ulp further from zero, `p` each one's exact share of the gap
//!   (as f64), `p32_up = ⌊p_up · 2³²⌋ / 2³²` the probability the engine's 32 random bits take
//!   `up`. Present only when the input lies strictly between two finite values of the dtype.
//! - Conversions are the library's own (`cce_numerics::convert`, RNE, `saturate` as given):
//!   float → float is ml_dtypes' `astype` bit for bit, a NaN the target's canonical quiet NaN
//!   with its sign (docs/MODEL.md, "Conversions"); each carries its rule's tag
//!   ([`conversion_tag`]).
//! - Every refusal is [`ApiError::Input`], one line naming `` `dtype` `` or `` `value` ``. No
//!   input panics. One value takes some microseconds (the page calls it per keystroke).

mod decimal;

use cce_format::Tag;
use cce_numerics::float::{decode, round_value};
use cce_numerics::{FloatFormat, NumType, Rounding};

use crate::error::ApiError;
use decimal::Dyadic;

/// How the value was given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputKind {
    /// A decimal number (or `inf`, `nan`): rounded into the dtype.
    Value,
    /// `0x…`: the bit pattern itself.
    Bits,
}

impl InputKind {
    /// `value` or `bits`.
    pub const fn name(self) -> &'static str {
        match self {
            InputKind::Value => "value",
            InputKind::Bits => "bits",
        }
    }
}

/// What kind of value the bits hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueClass {
    /// ±0.
    Zero,
    /// A float below the smallest normal.
    Subnormal,
    /// A normal float.
    Normal,
    /// ±inf.
    Inf,
    /// A NaN.
    Nan,
    /// A value of an integer dtype.
    Integer,
}

impl ValueClass {
    /// `zero`, `subnormal`, `normal`, `inf`, `nan` or `integer`.
    pub const fn name(self) -> &'static str {
        match self {
            ValueClass::Zero => "zero",
            ValueClass::Subnormal => "subnormal",
            ValueClass::Normal => "normal",
            ValueClass::Inf => "inf",
            ValueClass::Nan => "nan",
            ValueClass::Integer => "integer",
        }
    }
}

/// A value of some dtype: its bits and every digit of its value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stored {
    /// The encoding (little-endian bits in the low bytes).
    pub bits: u64,
    /// Hex of the bits, zero-padded to the dtype's width (`0x3fa6`): a rendering of `bits`.
    pub bits_hex: String,
    /// The exact decimal (`1.296875`), or `inf`, `-inf`, `nan`, `-nan`.
    pub exact: String,
}

/// One field of the encoding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BitField {
    /// `sign`, `exponent`, `mantissa`, or `value` (an integer dtype's one field).
    pub name: &'static str,
    /// Highest bit.
    pub hi: u32,
    /// Lowest bit.
    pub lo: u32,
    /// The field's bits as a number (an integer dtype's: its value, signed when the dtype is).
    pub value: i128,
    /// The exponent field only: the binade's exponent (`raw − bias`; `1 − bias` for zeros and
    /// subnormals; `None` for inf and NaN).
    pub unbiased: Option<i32>,
}

/// How the input rounded to nearest even.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rne {
    /// The result (the stored value).
    pub result: Stored,
    /// Whether the result differs from the input.
    pub inexact: bool,
    /// The exact decimal of input − result; `None` when either is not finite.
    pub error: Option<String>,
}

/// One outcome of stochastic rounding.
#[derive(Clone, Debug, PartialEq)]
pub struct SrOutcome {
    /// The value it rounds to.
    pub to: Stored,
    /// Its probability: the exact share of the gap (as the nearest f64).
    pub p: f64,
}

/// Stochastic rounding of an input that lies strictly between two finite values.
#[derive(Clone, Debug, PartialEq)]
pub struct Sr {
    /// Toward zero (the input truncated).
    pub down: SrOutcome,
    /// Away from zero, one ulp further.
    pub up: SrOutcome,
    /// `⌊p_up · 2³²⌋ / 2³²`: the probability the engine's 32 random bits round away from zero.
    pub p32_up: f64,
    /// Whether the engine ever rounds into this dtype stochastically (not into fp32, its
    /// internal precision: docs/MODEL.md, "Stochastic rounding").
    pub engine_uses: bool,
}

/// The value converted to another dtype.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Converted {
    /// The target dtype.
    pub dtype: NumType,
    /// The result.
    pub to: Stored,
    /// The conversion rule's tag ([`conversion_tag`]).
    pub tag: Tag,
}

/// Everything about one value in one dtype (see the module's guarantees).
#[derive(Clone, Debug, PartialEq)]
pub struct DtypeValue {
    /// The dtype.
    pub dtype: NumType,
    /// The dtype's tag ([`dtype_tag`]).
    pub tag: Tag,
    /// The text as given.
    pub input: String,
    /// How it was given.
    pub input_kind: InputKind,
    /// A decimal given for a float dtype: every digit of the f64 it reads as (the input the
    /// rounding sees).
    pub input_exact: Option<String>,
    /// The stored value.
    pub stored: Stored,
    /// Its value as an f64 (an integer's nearest); `None` for NaN and ±inf.
    pub value: Option<f64>,
    /// Its class.
    pub class: ValueClass,
    /// The encoding's fields, from the top bit down.
    pub fields: Vec<BitField>,
    /// The next value below; `None` past the end and for NaN.
    pub next_down: Option<Stored>,
    /// The next value above; `None` past the end and for NaN.
    pub next_up: Option<Stored>,
    /// The exact decimal of `next_up − value`, when both are finite.
    pub ulp: Option<String>,
    /// How a decimal input rounded (`None` for bits).
    pub rne: Option<Rne>,
    /// Stochastic rounding of a decimal input strictly between two finite values.
    pub sr: Option<Sr>,
    /// Overflow saturates to ±max finite (the input's rounding and the conversions).
    pub saturate: bool,
    /// The value in every other dtype, in [`NumType::ALL`]'s order.
    pub conversions: Vec<Converted>,
}

/// Several values of one dtype (`cce value` with several values).
#[derive(Clone, Debug, PartialEq)]
pub struct DtypeValues(pub Vec<DtypeValue>);

/// The tag of a dtype: its SDMA code's (how well value and name are known; `cce tables`),
/// MED for fp8e4fn, which has no SDMA code (its format: ml_dtypes' `float8_e4m3fn`, GAPS.md §8).
pub fn dtype_tag(t: NumType) -> Tag {
    t.to_sdma().map_or(Tag::Med, |d| d.tag())
}

/// The tag of the conversion rule from `from` to `to`: float → float MED (conversions behave as
/// ml_dtypes does, docs/SOURCES.md §8), every rule with an integer side MODEL (docs/MODEL.md,
/// "Conversions": float → integer rounds half to even and saturates, integer → integer wraps).
pub fn conversion_tag(from: NumType, to: NumType) -> Tag {
    if from.is_float() && to.is_float() { Tag::Med } else { Tag::Model }
}

/// What the text reads as, before any rounding.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Parsed {
    Bits(u64),
    Float(f64),
    Int(i128),
}

/// The bits of `text` in `dtype` (see the module's guarantees: `0x…` bits, a decimal rounded to
/// nearest even without saturation, an integer in range).
///
/// # Errors
/// [`ApiError::Input`] naming `` `value` ``: not a number, bits wider than the dtype, an
/// integer dtype's value that is no integer or out of its range.
pub fn value_bits(dtype: NumType, text: &str) -> Result<u64, ApiError> {
    Ok(stored_bits(dtype, parse(dtype, text)?, false))
}

/// Everything about `text` in `dtype` (a name [`crate::num_type`] takes); `saturate` makes an
/// overflow of the input's rounding and of the conversions ±max finite.
///
/// # Errors
/// [`ApiError::Input`] naming `` `dtype` `` (an unknown name, fp32r) or `` `value` `` (as
/// [`value_bits`]).
pub fn dtype_value(dtype: &str, text: &str, saturate: bool) -> Result<DtypeValue, ApiError> {
    describe(value_dtype(dtype)?, text, saturate)
}

/// [`dtype_value`] of each text, the dtype read once.
///
/// # Errors
/// As [`dtype_value`], for the first text refused.
pub fn dtype_values(dtype: &str, texts: &[&str], saturate: bool) -> Result<DtypeValues, ApiError> {
    let t = value_dtype(dtype)?;
    Ok(DtypeValues(texts.iter().map(|text| describe(t, text, saturate)).collect::<Result<_, _>>()?))
}

/// The dtype named `name`, or a refusal naming `` `dtype` ``.
fn value_dtype(name: &str) -> Result<NumType, ApiError> {
    name.parse::<NumType>().map_err(|e| match e {
        cce_numerics::NumericsError::UnknownDtypeName(_) => {
            let names: Vec<&str> = NumType::ALL.iter().map(|t| t.name()).collect();
            ApiError::Input(format!(
                "`dtype` '{name}': expected one of {} (or f16, f32, e3m4, e4m3, e5m2, e4m3fn)",
                names.join(", ")
            ))
        }
        e => ApiError::Input(format!("`dtype` '{name}': {e}")),
    })
}

/// The text read in `t`, unrounded.
fn parse(t: NumType, text: &str) -> Result<Parsed, ApiError> {
    let s = text.trim();
    if let Some(hex) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        if hex.is_empty() || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(ApiError::Input(format!("`value` '{text}': expected 0x and hex digits (the bits of {t})")));
        }
        let width = 8 * t.size() as u32;
        let max = u64::MAX >> (64 - width);
        return match u64::from_str_radix(hex, 16) {
            Ok(v) if v <= max => Ok(Parsed::Bits(v)),
            _ => Err(ApiError::Input(format!("`value` '{text}' is wider than {t}'s {width} bits (at most {max:#x})"))),
        };
    }
    match t.int_info() {
        None => s.parse::<f64>().map(Parsed::Float).map_err(|_| {
            ApiError::Input(format!(
                "`value` '{text}': expected a decimal number, inf, -inf, nan, or 0x and the bits of {t}"
            ))
        }),
        Some(_) => {
            let (lo, hi) = int_range(t);
            match s.parse::<i128>() {
                Ok(v) if (lo..=hi).contains(&v) => Ok(Parsed::Int(v)),
                _ => Err(ApiError::Input(format!(
                    "`value` '{text}': expected an integer in {lo}..={hi} (a {t}), or 0x and its bits"
                ))),
            }
        }
    }
}

/// An integer dtype's range.
fn int_range(t: NumType) -> (i128, i128) {
    match t.int_info() {
        Some((bits, true)) => (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1),
        Some((bits, false)) => (0, (1i128 << bits) - 1),
        None => (0, 0),
    }
}

/// The bits a parsed input is stored as in `t`.
fn stored_bits(t: NumType, p: Parsed, saturate: bool) -> u64 {
    match (p, t.float_format()) {
        (Parsed::Bits(b), _) => b,
        (Parsed::Int(v), _) => (v as u64) & width_mask(t),
        (Parsed::Float(x), Some(fmt)) => u64::from(round_float(x, fmt, saturate)),
        (Parsed::Float(_), None) => 0,
    }
}

/// `x` to nearest even in `fmt` (the numerics' rule), an overflow ±max finite when saturating.
fn round_float(x: f64, fmt: FloatFormat, saturate: bool) -> u32 {
    let r = round_value(x, fmt, None);
    let sign = r & fmt.sign_bit();
    if saturate && !x.is_nan() && r & !fmt.sign_bit() == fmt.overflow() { sign | fmt.max_finite() } else { r }
}

fn width_mask(t: NumType) -> u64 {
    u64::MAX >> (64 - 8 * t.size() as u32)
}

/// The value of `bits` in `t` exactly; `None` for NaN and ±inf.
fn dyadic(t: NumType, bits: u64) -> Option<Dyadic> {
    let Some(fmt) = t.float_format() else { return Some(Dyadic::int(int_value(t, bits))) };
    let b = bits as u32;
    let mag = b & (fmt.sign_bit() - 1);
    if fmt.is_nan_mag(mag) || fmt.inf() == Some(mag) {
        return None;
    }
    let (e, m) = (mag >> fmt.mbits, mag & fmt.mant_mask());
    let neg = b & fmt.sign_bit() != 0;
    let quantum = e.max(1) as i32 - fmt.bias - fmt.mbits as i32;
    let mant = if e == 0 { m } else { m | (1 << fmt.mbits) };
    Some(Dyadic::new(neg, u128::from(mant), quantum))
}

/// An integer dtype's value (two's complement when signed).
fn int_value(t: NumType, bits: u64) -> i128 {
    match t.int_info() {
        Some((w, true)) => i128::from(((bits << (64 - w)) as i64) >> (64 - w)),
        _ => i128::from(bits),
    }
}

/// `bits` of `t` with its hex and exact decimal.
fn stored(t: NumType, bits: u64) -> Stored {
    let exact = match dyadic(t, bits) {
        Some(d) => d.decimal(),
        None => {
            let neg = t.float_format().is_some_and(|f| bits as u32 & f.sign_bit() != 0);
            let nan = t.float_format().is_some_and(|f| f.is_nan_mag(bits as u32 & (f.sign_bit() - 1)));
            format!("{}{}", if neg { "-" } else { "" }, if nan { "nan" } else { "inf" })
        }
    };
    Stored { bits, bits_hex: format!("0x{bits:0w$x}", w = 2 * t.size()), exact }
}

/// The class of `bits` in `t`.
fn class(t: NumType, bits: u64) -> ValueClass {
    let Some(fmt) = t.float_format() else { return ValueClass::Integer };
    let mag = bits as u32 & (fmt.sign_bit() - 1);
    if fmt.is_nan_mag(mag) {
        ValueClass::Nan
    } else if fmt.inf() == Some(mag) {
        ValueClass::Inf
    } else if mag == 0 {
        ValueClass::Zero
    } else if mag <= fmt.mant_mask() {
        ValueClass::Subnormal
    } else {
        ValueClass::Normal
    }
}

/// The encoding's fields, top bit first.
fn fields(t: NumType, bits: u64) -> Vec<BitField> {
    let width = 8 * t.size() as u32;
    let Some(fmt) = t.float_format() else {
        return vec![BitField { name: "value", hi: width - 1, lo: 0, value: int_value(t, bits), unbiased: None }];
    };
    let b = bits as u32;
    let e = (b & fmt.exp_mask()) >> fmt.mbits;
    let special = matches!(class(t, bits), ValueClass::Nan | ValueClass::Inf);
    let unbiased = (!special).then(|| e.max(1) as i32 - fmt.bias);
    vec![
        BitField { name: "sign", hi: width - 1, lo: width - 1, value: i128::from(b >> (width - 1)), unbiased: None },
        BitField { name: "exponent", hi: width - 2, lo: fmt.mbits, value: i128::from(e), unbiased },
        BitField { name: "mantissa", hi: fmt.mbits - 1, lo: 0, value: i128::from(b & fmt.mant_mask()), unbiased: None },
    ]
}

/// The next value above `bits` (IEEE nextUp; see the module's guarantees).
fn next_up(t: NumType, bits: u64) -> Option<u64> {
    let Some(fmt) = t.float_format() else {
        let v = int_value(t, bits);
        return (v < int_range(t).1).then(|| ((v + 1) as u64) & width_mask(t));
    };
    let (b, sign) = (bits as u32, fmt.sign_bit());
    let mag = b & (sign - 1);
    if fmt.is_nan_mag(mag) || (b & sign == 0 && Some(mag) == fmt.inf()) {
        return None;
    }
    // From either zero to the smallest subnormal; a negative value's magnitude shrinks.
    let up = if mag == 0 {
        1
    } else if b & sign != 0 {
        b - 1
    } else {
        b + 1
    };
    (!fmt.is_nan_mag(up & (sign - 1))).then_some(u64::from(up))
}

/// The next value below `bits`: nextUp of the negation, negated.
fn next_down(t: NumType, bits: u64) -> Option<u64> {
    let Some(fmt) = t.float_format() else {
        let v = int_value(t, bits);
        return (v > int_range(t).0).then(|| ((v - 1) as u64) & width_mask(t));
    };
    let flip = u64::from(fmt.sign_bit());
    next_up(t, bits ^ flip).map(|b| b ^ flip)
}

/// How a decimal input rounded into `bits`.
fn rne(t: NumType, p: Parsed, bits: u64) -> Option<Rne> {
    let input = match p {
        Parsed::Bits(_) => return None,
        Parsed::Int(v) => Some(Dyadic::int(v)),
        Parsed::Float(x) => x.is_finite().then(|| Dyadic::of_f64(x)),
    };
    let result = dyadic(t, bits);
    let error = input.as_ref().zip(result.as_ref()).map(|(x, r)| x.sub(r));
    let inexact = match (p, &error) {
        (_, Some(e)) => !e.is_zero(),
        (Parsed::Float(x), None) => {
            let same_special = (x.is_nan() && class(t, bits) == ValueClass::Nan)
                || (x.is_infinite() && class(t, bits) == ValueClass::Inf);
            !same_special
        }
        _ => false,
    };
    Some(Rne { result: stored(t, bits), inexact, error: error.map(|e| e.decimal()) })
}

/// Stochastic rounding of `x` into `t`, when it lies strictly between two finite values.
fn sr(t: NumType, x: f64) -> Option<Sr> {
    let fmt = t.float_format()?;
    if !x.is_finite() {
        return None;
    }
    // Truncation toward zero (the numerics' rule with random bits 0), then one ulp further.
    let down = round_value(x, fmt, Some(0));
    let mag = down & (fmt.sign_bit() - 1);
    if mag >= fmt.max_finite() {
        return None;
    }
    let rem = Dyadic::of_f64(x).sub(&dyadic(t, u64::from(down))?);
    if rem.is_zero() {
        return None;
    }
    // The gap: the quantum of down's binade.
    let q = (mag >> fmt.mbits).max(1) as i32 - fmt.bias - fmt.mbits as i32;
    let p_up = rem.abs_over_pow2(q);
    let p32 = rem.floor_scaled32(q);
    Some(Sr {
        down: SrOutcome { to: stored(t, u64::from(down)), p: 1.0 - p_up },
        up: SrOutcome { to: stored(t, u64::from(down + 1)), p: p_up },
        p32_up: p32 as f64 / 4_294_967_296.0,
        engine_uses: t != NumType::F32,
    })
}

/// `bits` of `from` converted to every other dtype.
fn conversions(from: NumType, bits: u64, saturate: bool) -> Result<Vec<Converted>, ApiError> {
    let input = bits.to_le_bytes();
    let mut out = Vec::with_capacity(NumType::ALL.len() - 1);
    for to in NumType::ALL.into_iter().filter(|&to| to != from) {
        let mut buf = [0u8; 8];
        cce_numerics::convert(from, to, &input[..from.size()], &mut buf[..to.size()], Rounding::Rne, saturate)?;
        out.push(Converted { dtype: to, to: stored(to, u64::from_le_bytes(buf)), tag: conversion_tag(from, to) });
    }
    Ok(out)
}

/// Everything about `text` in `t`.
fn describe(t: NumType, text: &str, saturate: bool) -> Result<DtypeValue, ApiError> {
    let p = parse(t, text)?;
    let bits = stored_bits(t, p, saturate);
    let fin = |b: Option<u64>| b.map(|b| stored(t, b));
    let (down, up) = (next_down(t, bits), next_up(t, bits));
    let ulp = up.and_then(|u| Some(dyadic(t, u)?.sub(&dyadic(t, bits)?).decimal()));
    let value = match t.float_format() {
        Some(fmt) => Some(decode(fmt, bits as u32)).filter(|v| v.is_finite()),
        None => Some(int_value(t, bits) as f64),
    };
    let (input_kind, input_exact, x) = match p {
        Parsed::Bits(_) => (InputKind::Bits, None, None),
        Parsed::Int(_) => (InputKind::Value, None, None),
        Parsed::Float(x) => (InputKind::Value, x.is_finite().then(|| Dyadic::of_f64(x).decimal()), Some(x)),
    };
    Ok(DtypeValue {
        dtype: t,
        tag: dtype_tag(t),
        input: text.to_string(),
        input_kind,
        input_exact,
        stored: stored(t, bits),
        value,
        class: class(t, bits),
        fields: fields(t, bits),
        next_down: fin(down),
        next_up: fin(up),
        ulp,
        rne: rne(t, p, bits),
        sr: x.and_then(|x| sr(t, x)),
        saturate,
        conversions: conversions(t, bits, saturate)?,
    })
}
