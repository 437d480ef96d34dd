//! The pure conversion core: decode any float format exactly, and round an exact value into any
//! float format with RNE or stochastic rounding.
//!
//! Two implementations of the same rounding rule live here: `round_exact` for an exact value
//! `mant · 2^exp` (used by the generic path, any source), and `narrow_f32`, a branch-free
//! version for an f32 source that the compiler vectorises (used by the hot kernels). Both
//! implement exactly this rule, so they agree bit for bit (tested):
//!
//! - RNE: round to nearest, ties to even mantissa.
//! - SR with a 32-bit random `r`: let `frac ∈ [0, 1)` be the discarded part in units of the
//!   result's ulp and `f32 = ⌊frac · 2³²⌋`; round away from zero iff `f32 + r ≥ 2³²`.
//!   So `P(up) = f32 / 2³²`, which is exactly `frac` when at most 32 bits are discarded and
//!   below it by less than `2⁻³²` otherwise.
//! - A finite result whose magnitude exceeds the format's max finite value becomes ±inf
//!   (IEEE-like formats) or NaN (`fn` formats), or ±max finite when saturating.

use crate::types::FloatFormat;

/// `2^k` as an f64, for `-1022 ≤ k ≤ 1023`.
pub(crate) fn pow2(k: i32) -> f64 {
    f64::from_bits(((1023 + k) as u64) << 52)
}

/// The exact value of the encoding `enc` (low bits; higher bits ignored) as an f64. NaNs come
/// back as an f64 NaN with the same sign.
pub fn decode(fmt: FloatFormat, enc: u32) -> f64 {
    let total = fmt.ebits + fmt.mbits;
    let enc = (u64::from(enc) & ((u64::from(fmt.sign_bit()) << 1) - 1)) as u32;
    let neg = enc >> total != 0;
    let mag = enc & (fmt.sign_bit() - 1);
    let v = if fmt.is_nan_mag(mag) {
        f64::NAN
    } else if fmt.has_inf && mag == fmt.exp_mask() {
        f64::INFINITY
    } else {
        let e = (mag >> fmt.mbits) as i32;
        let m = mag & fmt.mant_mask();
        if e == 0 {
            f64::from(m) * pow2(1 - fmt.bias - fmt.mbits as i32)
        } else {
            f64::from(m | (1 << fmt.mbits)) * pow2(e - fmt.bias - fmt.mbits as i32)
        }
    };
    if neg { -v } else { v }
}

/// Where an exact nonzero magnitude `mant · 2^exp` falls on `fmt`'s grid: the significand kept
/// when truncating (`n`, an integer count of the result's ulps), the exponent of the result's
/// binade (`e_eff`), whether anything was discarded, the discarded part in units of the
/// result's ulp as `⌊frac · 2³²⌋` (`frac32`), and whether RNE rounds away from zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Grid {
    pub(crate) n: u128,
    pub(crate) e_eff: i32,
    pub(crate) inexact: bool,
    pub(crate) frac32: u128,
    pub(crate) rne_up: bool,
}

impl Grid {
    /// The grid position of `mant · 2^exp` (`mant` ≠ 0) in `fmt`.
    pub(crate) fn of(mant: u64, exp: i32, fmt: FloatFormat) -> Grid {
        let mbits = fmt.mbits as i32;
        let top = 63 - mant.leading_zeros() as i32;
        let e_unb = top + exp;
        let emin = 1 - fmt.bias;
        let e_eff = e_unb.max(emin);
        let q = e_eff - mbits;
        let s = q - exp;
        if s <= 0 {
            // Exact: at most mbits + 1 significant bits.
            let n = u128::from(mant) << (-s).min(127);
            return Grid { n, e_eff, inexact: false, frac32: 0, rne_up: false };
        }
        let s = s.min(127) as u32;
        let m = u128::from(mant);
        let n = m >> s;
        let rem = m & ((1u128 << s) - 1);
        let half = 1u128 << (s - 1);
        let frac32 = if s <= 32 { rem << (32 - s) } else { rem >> (s - 32) };
        Grid { n, e_eff, inexact: rem != 0, frac32, rne_up: rem > half || (rem == half && n & 1 == 1) }
    }

    /// Whether the rounding goes away from zero: RNE (`sr` `None`), or stochastic with the 32
    /// random bits `sr` (iff `frac32 + r ≥ 2³²`).
    pub(crate) fn up(&self, sr: Option<u32>) -> bool {
        match sr {
            None => self.rne_up,
            Some(r) => self.frac32 + u128::from(r) >= 1u128 << 32,
        }
    }
}

/// Rounds the exact value `(-1)^neg · mant · 2^exp` into `fmt`. `sr` is `None` for RNE or the
/// 32 random bits for stochastic rounding. Never produces NaN from a finite value except on a
/// `fn` format's overflow.
pub(crate) fn round_exact(neg: bool, mant: u64, exp: i32, fmt: FloatFormat, sr: Option<u32>, saturate: bool) -> u32 {
    let sign = if neg { fmt.sign_bit() } else { 0 };
    if mant == 0 {
        return sign;
    }
    let g = Grid::of(mant, exp, fmt);
    let n = g.n + u128::from(g.up(sr));
    let base = ((g.e_eff + fmt.bias - 1) as u128) << fmt.mbits;
    let enc = base + n;
    let max = u128::from(fmt.max_finite());
    let mag = if enc > max { if saturate { fmt.max_finite() } else { fmt.overflow() } } else { enc as u32 };
    mag | sign
}

/// The grid position of a finite nonzero f64 in `fmt` (see [`Grid`]); `None` for 0, ±inf and
/// NaN, which round to themselves.
pub(crate) fn grid_f64(v: f64, fmt: FloatFormat) -> Option<Grid> {
    if !v.is_finite() || v == 0.0 {
        return None;
    }
    let bits = v.to_bits();
    let e = ((bits >> 52) & 0x7ff) as i32;
    let m = bits & ((1 << 52) - 1);
    let (mant, exp) = if e == 0 { (m, -1074) } else { (m | (1 << 52), e - 1075) };
    Some(Grid::of(mant, exp, fmt))
}

/// Rounds an f64 into `fmt` (see `round_exact`); NaN → the canonical NaN with the same sign;
/// ±inf → ±inf (NaN for `fn` formats), or ±max finite when saturating.
#[doc(hidden)]
pub fn round_f64(v: f64, fmt: FloatFormat, sr: Option<u32>, saturate: bool) -> u32 {
    let bits = v.to_bits();
    let neg = bits >> 63 != 0;
    let sign = if neg { fmt.sign_bit() } else { 0 };
    if v.is_nan() {
        return fmt.nan() | sign;
    }
    if v.is_infinite() {
        return sign | if saturate { fmt.max_finite() } else { fmt.overflow() };
    }
    let e = ((bits >> 52) & 0x7ff) as i32;
    let m = bits & ((1 << 52) - 1);
    let (mant, exp) = if e == 0 { (m, -1074) } else { (m | (1 << 52), e - 1075) };
    round_exact(neg, mant, exp, fmt, sr, saturate)
}

/// `a + b` rounded to odd at 53 bits: the f64 nearest `a + b` with the sticky information kept
/// in its last bit. Rounding this once more to any format of ≤ 51 bits of precision gives the
/// correctly rounded `a + b` (round-to-odd property). Exact when `a + b` is an f64.
#[doc(hidden)]
pub fn add_round_odd(a: f64, b: f64) -> f64 {
    let s = a + b;
    if !s.is_finite() {
        return s;
    }
    // TwoSum (Knuth): s + e == a + b exactly.
    let bb = s - a;
    let e = (a - (s - bb)) + (b - bb);
    if e == 0.0 {
        return s;
    }
    let bits = s.to_bits();
    if bits & 1 == 1 {
        return s;
    }
    // s is even and inexact: move one ulp toward the exact value.
    let toward_larger_mag = (e > 0.0) == (s > 0.0);
    let nb = if toward_larger_mag { bits + 1 } else { bits - 1 };
    f64::from_bits(nb)
}

/// `a · b + c` for f32-representable `a`, `b`, `c` (as f64): the product is exact in f64, the
/// sum rounded to odd (see [`add_round_odd`]), so one more rounding to ≤ 24 bits is the
/// correctly rounded fused result.
pub(crate) fn fma_round_odd(a: f64, b: f64, c: f64) -> f64 {
    add_round_odd(a * b, c)
}

/// The encoding of `x` rounded into `fmt` as the model rounds a result (no saturation): RNE
/// when `sr_bits` is `None`, else stochastic rounding with those 32 random bits (`Some(0)`
/// never rounds away from zero, `Some(u32::MAX)` gives the other outcome stochastic rounding
/// can reach; no bits between give a third). `x` is exact, or a sum from
/// [`sum_for_rounding`]. The one rule of this module, public for the forensics' reachable sets.
pub fn round_value(x: f64, fmt: FloatFormat, sr_bits: Option<u32>) -> u32 {
    round_f64(x, fmt, sr_bits, false)
}

/// `a + b` for values of formats of at most 24 bits of precision, as an f64 that
/// [`round_value`] rounds exactly as the model rounds the exact sum into any format narrower
/// than 52 bits (round to odd; exact when the sum is an f64).
pub fn sum_for_rounding(a: f64, b: f64) -> f64 {
    add_round_odd(a, b)
}

/// Branch-free narrowing of f32 bits `x` into `fmt` (`fmt` ≤ 32 bits wide), the same rule as
/// `round_exact`. `SR` selects stochastic rounding with the random bits `r`. `keep_sign`:
/// a NaN keeps its sign (else it becomes the positive canonical NaN).
#[inline(always)]
#[doc(hidden)]
pub fn narrow_f32<const SR: bool>(x: u32, r: u32, fmt: FloatFormat, saturate: bool, keep_sign: bool) -> u32 {
    let mbits = fmt.mbits as i32;
    let sign_shift = 31 - (fmt.ebits + fmt.mbits);
    let sign = (x & 0x8000_0000) >> sign_shift;
    let a = x & 0x7fff_ffff;
    let ef = (a >> 23) as i32;
    let mant = (a & 0x7f_ffff) | (u32::from(ef != 0) << 23);
    let ee = ef.max(1) - 127;
    let emin = 1 - fmt.bias;
    let e_eff = ee.max(emin);
    // Bits to drop. mant < 2^24, so capping at 31 keeps n = 0 and rem = mant for larger shifts.
    let s_true = (23 - mbits) + (e_eff - ee);
    let s = s_true.min(31) as u32;
    let n = mant >> s;
    let rem = mant & ((1u32 << s) - 1);
    let up = if SR {
        // ⌊rem · 2^32 / 2^s_true⌋, exact for any shift (0 once s_true ≥ 56).
        let frac32 = (u64::from(rem) << 32) >> s_true.min(63) as u32;
        ((frac32 + u64::from(r)) >> 32) as u32
    } else {
        let half = (1u32 << s) >> 1;
        u32::from(s != 0 && (rem > half || (rem == half && n & 1 == 1)))
    };
    let enc = (((e_eff + fmt.bias - 1) as u32) << fmt.mbits) + n + up;
    let over = if saturate { fmt.max_finite() } else { fmt.overflow() };
    let mag = if enc > fmt.max_finite() { over } else { enc };
    let mag = if a == 0x7f80_0000 { over } else { mag };
    let is_nan = a > 0x7f80_0000;
    let nan_sign = if keep_sign { sign } else { 0 };
    if is_nan { fmt.nan() | nan_sign } else { mag | sign }
}

/// f32 → bf16, RNE: the classic bit trick; equal to `narrow_f32::<false>` with the BF16 format
/// (tested exhaustively on f32 patterns).
#[inline(always)]
#[doc(hidden)]
pub fn narrow_bf16_rne(x: u32, saturate: bool, keep_sign: bool) -> u16 {
    let a = x & 0x7fff_ffff;
    let sign = (x >> 16) & 0x8000;
    let lsb = (x >> 16) & 1;
    let r = (a + 0x7fff + lsb) >> 16;
    let r = if saturate && r >= 0x7f80 { 0x7f7f } else { r };
    let nan = if keep_sign { 0x7fc0 | sign } else { 0x7fc0 };
    (if a > 0x7f80_0000 { nan } else { r | sign }) as u16
}

/// f32 → bf16, stochastic: add 16 random bits below the kept bits, truncate.
#[inline(always)]
#[doc(hidden)]
pub fn narrow_bf16_sr(x: u32, rnd: u32, saturate: bool, keep_sign: bool) -> u16 {
    let a = x & 0x7fff_ffff;
    let sign = (x >> 16) & 0x8000;
    // inf (0x7f800000) stays inf: its low 16 bits are 0 and adding < 2^16 cannot carry.
    let r = (a + (rnd >> 16)) >> 16;
    let r = if saturate && r >= 0x7f80 { 0x7f7f } else { r };
    let nan = if keep_sign { 0x7fc0 | sign } else { 0x7fc0 };
    (if a > 0x7f80_0000 { nan } else { r | sign }) as u16
}

/// Exact widening of an f16 or fp8 encoding (formats whose subnormals are normal f32s) to f32
/// bits, without touching f32 subnormals (slow on many CPUs): the magnitude bits are moved into
/// f32 position and re-biased; a subnormal gets the exponent of the smallest normal and that
/// normal's value is subtracted again (exact). A NaN becomes the positive-payload quiet NaN
/// with its sign (payloads do not survive a reduce anyway).
#[inline(always)]
#[doc(hidden)]
pub fn widen_to_f32(enc: u32, fmt: FloatFormat) -> u32 {
    let total = fmt.ebits + fmt.mbits;
    let sign = (enc << (31 - total)) & 0x8000_0000;
    let mag = enc & (fmt.sign_bit() - 1);
    let x = mag << (23 - fmt.mbits);
    let is_sub = mag <= fmt.mant_mask();
    let rebias = (127 - fmt.bias) as u32;
    let min_normal = f32::from_bits((rebias + 1) << 23);
    let v = f32::from_bits(x + ((rebias + u32::from(is_sub)) << 23));
    let v = (v - if is_sub { min_normal } else { 0.0 }).to_bits();
    let special = if fmt.has_inf { mag >= fmt.exp_mask() } else { mag == fmt.exp_mask() | fmt.mant_mask() };
    let patched = if fmt.has_inf && mag == fmt.exp_mask() { 0x7f80_0000 } else { 0x7fc0_0000 };
    (if special { patched } else { v }) | sign
}

/// f32 → f16 / fp8 with RNE, branch-free and cheaper than [`narrow_f32`] (same results,
/// tested): normal results round in the integer domain (add half-ulp − 1 + lsb, shift), subnormal
/// results through one fp32 addition of a power of two whose ulp is the target's subnormal
/// quantum (IEEE RNE does the rounding).
#[inline(always)]
#[doc(hidden)]
pub fn narrow_f32_rne_small(x: u32, fmt: FloatFormat, saturate: bool, keep_sign: bool) -> u32 {
    let s0 = 23 - fmt.mbits;
    let sign_shift = 31 - (fmt.ebits + fmt.mbits);
    let sign = (x & 0x8000_0000) >> sign_shift;
    let a = x & 0x7fff_ffff;
    let rebias = ((127 - fmt.bias) as u32) << 23;
    let lsb = (a >> s0) & 1;
    let norm = a.wrapping_sub(rebias).wrapping_add((1 << (s0 - 1)) - 1 + lsb) >> s0;
    let magic = ((127 - fmt.bias) as u32 + s0 + 1) << 23;
    let sub = (f32::from_bits(a) + f32::from_bits(magic)).to_bits().wrapping_sub(magic);
    let enc = if a < rebias + (1 << 23) { sub } else { norm };
    let over = if saturate { fmt.max_finite() } else { fmt.overflow() };
    let mag = if enc > fmt.max_finite() || a >= 0x7f80_0000 { over } else { enc };
    let nan_sign = if keep_sign { sign } else { 0 };
    if a > 0x7f80_0000 { fmt.nan() | nan_sign } else { mag | sign }
}

/// The lane constants of [`narrow_f32_rne_small`] for a one-byte format, for the explicit-SIMD
/// encoder ([`crate::simd::Caps::fp8_encode`]), which runs the same steps on 16 lanes at a time.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // only the x86 kernels read it
#[derive(Clone, Copy, Debug)]
pub(crate) struct Fp8Enc {
    /// Dropped mantissa bits of a normal result (`23 - mbits`).
    pub(crate) s0: u32,
    /// The exponent rebias `(127 - bias) << 23`.
    pub(crate) rebias: u32,
    /// Half an ulp minus one: `(1 << (s0 - 1)) - 1`.
    pub(crate) half_m1: u32,
    /// The f32 bits of the power of two whose ulp is the subnormal quantum.
    pub(crate) magic: u32,
    /// What an overflow or an infinity becomes (without sign).
    pub(crate) over: u32,
    /// The canonical NaN (without sign).
    pub(crate) nan: u32,
    /// `0x80` when a NaN keeps its sign, else 0.
    pub(crate) nan_sign_mask: u32,
}

impl Fp8Enc {
    /// The constants for `fmt` (one byte wide, `ebits < 8`), or `None` if the overflow
    /// encoding is not the largest finite one or the one just above it (true of every format
    /// here; the SIMD encoder relies on it).
    pub(crate) fn new(fmt: FloatFormat, saturate: bool, keep_sign: bool) -> Option<Fp8Enc> {
        let s0 = 23 - fmt.mbits;
        let over = if saturate { fmt.max_finite() } else { fmt.overflow() };
        if fmt.ebits + fmt.mbits != 7 || fmt.ebits >= 8 || !(over == fmt.max_finite() || over == fmt.max_finite() + 1) {
            return None;
        }
        Some(Fp8Enc {
            s0,
            rebias: ((127 - fmt.bias) as u32) << 23,
            half_m1: (1 << (s0 - 1)) - 1,
            magic: ((127 - fmt.bias) as u32 + s0 + 1) << 23,
            over,
            nan: fmt.nan(),
            nan_sign_mask: if keep_sign { 0x80 } else { 0 },
        })
    }

    /// Whether these constants encode into `fmt`'s grid: the same mantissa width and exponent
    /// bias (what a one-byte value's position in fp32 depends on).
    pub(crate) fn is_format(&self, fmt: FloatFormat) -> bool {
        fmt.mbits < 23 && fmt.bias < 127 && self.s0 == 23 - fmt.mbits && self.rebias == ((127 - fmt.bias) as u32) << 23
    }
}

/// f32 → f32: NaN → the canonical quiet NaN (sign kept when `keep_sign`), ±inf → ±max when
/// saturating; everything else unchanged.
#[inline(always)]
#[doc(hidden)]
pub fn canon_f32(x: u32, saturate: bool, keep_sign: bool) -> u32 {
    let a = x & 0x7fff_ffff;
    let sign = x & 0x8000_0000;
    let nan = if keep_sign { 0x7fc0_0000 | sign } else { 0x7fc0_0000 };
    if a > 0x7f80_0000 {
        nan
    } else if saturate && a == 0x7f80_0000 {
        0x7f7f_ffff | sign
    } else {
        x
    }
}
