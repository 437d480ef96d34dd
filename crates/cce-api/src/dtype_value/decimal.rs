//! Exact decimals of dyadic rationals `±m · 2^e`: every binary float value is one, and its
//! decimal expansion is finite (`m · 2^-k = m · 5^k / 10^k`).
//!
//! ## Guarantees
//! - [`Dyadic::decimal`] writes every digit: no rounding, no exponent notation, no float
//!   formatting; the shortest form (`1.296875`, `448`, `-0`, `0.001953125`): no trailing zeros
//!   after the point, no point for an integer.
//! - [`Dyadic::sub`] is exact whatever the exponents (a difference of an f64 near 2^-1074 and
//!   an f32 is some thousand bits wide): the integers are unbounded (32-bit limbs, by hand, so
//!   the crate needs no big-integer dependency and builds for the browser page's target).

use std::cmp::Ordering;

/// An unsigned integer of any size: little-endian 32-bit limbs, no zero limb at the top.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Big(Vec<u32>);

impl Big {
    fn from_u128(mut v: u128) -> Big {
        let mut limbs = Vec::with_capacity(4);
        while v != 0 {
            limbs.push(v as u32);
            v >>= 32;
        }
        Big(limbs)
    }

    fn is_zero(&self) -> bool {
        self.0.is_empty()
    }

    fn trim(mut self) -> Big {
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
        self
    }

    /// Trailing zero bits (0 for zero).
    fn trailing_zeros(&self) -> u32 {
        let mut n = 0;
        for &l in &self.0 {
            if l != 0 {
                return n + l.trailing_zeros();
            }
            n += 32;
        }
        0
    }

    fn shl(&self, k: u32) -> Big {
        if self.is_zero() {
            return Big::default();
        }
        let (limbs, bits) = ((k / 32) as usize, k % 32);
        let mut out = vec![0u32; limbs];
        let mut carry = 0u32;
        for &l in &self.0 {
            if bits == 0 {
                out.push(l);
            } else {
                out.push((l << bits) | carry);
                carry = l >> (32 - bits);
            }
        }
        out.push(carry);
        Big(out).trim()
    }

    fn shr(&self, k: u32) -> Big {
        let (limbs, bits) = ((k / 32) as usize, k % 32);
        if limbs >= self.0.len() {
            return Big::default();
        }
        let src = &self.0[limbs..];
        let out = (0..src.len())
            .map(|i| {
                let hi = src.get(i + 1).copied().unwrap_or(0);
                if bits == 0 { src[i] } else { (src[i] >> bits) | (hi << (32 - bits)) }
            })
            .collect();
        Big(out).trim()
    }

    fn cmp(&self, o: &Big) -> Ordering {
        self.0.len().cmp(&o.0.len()).then_with(|| self.0.iter().rev().cmp(o.0.iter().rev()))
    }

    fn add(&self, o: &Big) -> Big {
        let mut out = Vec::with_capacity(self.0.len().max(o.0.len()) + 1);
        let mut carry = 0u64;
        for i in 0..self.0.len().max(o.0.len()) {
            let s = u64::from(*self.0.get(i).unwrap_or(&0)) + u64::from(*o.0.get(i).unwrap_or(&0)) + carry;
            out.push(s as u32);
            carry = s >> 32;
        }
        out.push(carry as u32);
        Big(out).trim()
    }

    /// `self − o`, for `self ≥ o`.
    fn sub(&self, o: &Big) -> Big {
        let mut out = Vec::with_capacity(self.0.len());
        let mut borrow = 0i64;
        for (i, &l) in self.0.iter().enumerate() {
            let d = i64::from(l) - i64::from(*o.0.get(i).unwrap_or(&0)) - borrow;
            borrow = i64::from(d < 0);
            out.push((d + (borrow << 32)) as u32);
        }
        Big(out).trim()
    }

    fn mul_small(&mut self, m: u32) {
        let mut carry = 0u64;
        for l in &mut self.0 {
            let p = u64::from(*l) * u64::from(m) + carry;
            *l = p as u32;
            carry = p >> 32;
        }
        if carry != 0 {
            self.0.push(carry as u32);
        }
    }

    /// Divides in place, returning the remainder.
    fn divrem_small(&mut self, d: u32) -> u32 {
        let mut rem = 0u64;
        for l in self.0.iter_mut().rev() {
            let cur = (rem << 32) | u64::from(*l);
            *l = (cur / u64::from(d)) as u32;
            rem = cur % u64::from(d);
        }
        let trimmed = std::mem::take(self).trim();
        *self = trimmed;
        rem as u32
    }

    /// The decimal digits ("0" for zero).
    fn digits(&self) -> String {
        if self.is_zero() {
            return "0".to_string();
        }
        let mut n = self.clone();
        let mut chunks = Vec::new();
        while !n.is_zero() {
            chunks.push(n.divrem_small(1_000_000_000));
        }
        let mut s = chunks.last().map_or(String::new(), u32::to_string);
        for c in chunks.iter().rev().skip(1) {
            s.push_str(&format!("{c:09}"));
        }
        s
    }

    /// Significant bits (0 for zero).
    fn bit_len(&self) -> u32 {
        self.0.last().map_or(0, |l| self.0.len() as u32 * 32 - l.leading_zeros())
    }
}

/// An exact dyadic rational `(−1)^neg · mant · 2^exp`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Dyadic {
    neg: bool,
    mant: Big,
    exp: i32,
}

impl Dyadic {
    /// `(−1)^neg · mant · 2^exp`.
    pub(crate) fn new(neg: bool, mant: u128, exp: i32) -> Dyadic {
        Dyadic { neg, mant: Big::from_u128(mant), exp }
    }

    /// An integer.
    pub(crate) fn int(v: i128) -> Dyadic {
        Dyadic::new(v < 0, v.unsigned_abs(), 0)
    }

    /// A finite f64, exactly (its sign kept, `-0` included).
    pub(crate) fn of_f64(x: f64) -> Dyadic {
        let bits = x.to_bits();
        let e = ((bits >> 52) & 0x7ff) as i32;
        let m = bits & ((1 << 52) - 1);
        let (mant, exp) = if e == 0 { (m, -1074) } else { (m | (1 << 52), e - 1075) };
        Dyadic::new(bits >> 63 != 0, u128::from(mant), exp)
    }

    /// Whether the value is zero (of either sign).
    pub(crate) fn is_zero(&self) -> bool {
        self.mant.is_zero()
    }

    /// Both mantissas on the smaller exponent.
    fn aligned(&self, o: &Dyadic) -> (Big, Big, i32) {
        let e = self.exp.min(o.exp);
        (self.mant.shl((self.exp - e) as u32), o.mant.shl((o.exp - e) as u32), e)
    }

    /// `self − o`, exactly; a zero difference is `+0`.
    pub(crate) fn sub(&self, o: &Dyadic) -> Dyadic {
        let (a, b, exp) = self.aligned(o);
        let (neg, mant) = if self.neg != o.neg {
            (self.neg, a.add(&b))
        } else {
            match a.cmp(&b) {
                Ordering::Less => (!self.neg, b.sub(&a)),
                _ => (self.neg, a.sub(&b)),
            }
        };
        let neg = neg && !mant.is_zero();
        Dyadic { neg, mant, exp }
    }

    /// `|self| / 2^k` as an f64: exact when it has at most 53 significant bits and is a normal
    /// f64 (always true of the discarded part of an f64 in the units of a narrower format's
    /// ulp), else truncated to 53 bits.
    pub(crate) fn abs_over_pow2(&self, k: i32) -> f64 {
        if self.is_zero() {
            return 0.0;
        }
        let tz = self.mant.trailing_zeros();
        let mut m = self.mant.shr(tz);
        let mut e = self.exp + tz as i32 - k;
        let bits = m.bit_len();
        if bits > 53 {
            m = m.shr(bits - 53);
            e += (bits - 53) as i32;
        }
        let mut v = m.0.iter().rev().fold(0u64, |acc, &l| (acc << 32) | u64::from(l)) as f64;
        let pow2 = |k: i32| f64::from_bits(((1023 + k) as u64) << 52);
        while e > 1000 {
            v *= pow2(1000);
            e -= 1000;
        }
        while e < -1000 {
            v *= pow2(-1000);
            e += 1000;
        }
        v * pow2(e)
    }

    /// `⌊|self| / 2^k · 2^32⌋`: how the engine's stochastic rounding sees a discarded part of
    /// `|self|` in units of `2^k`.
    pub(crate) fn floor_scaled32(&self, k: i32) -> u64 {
        let shift = self.exp + 32 - k;
        let v = if shift >= 0 { self.mant.shl(shift as u32) } else { self.mant.shr(shift.unsigned_abs()) };
        v.0.iter().rev().fold(0u64, |acc, &l| (acc << 32) | u64::from(l))
    }

    /// Every digit of the value in decimal (see the module's guarantees).
    pub(crate) fn decimal(&self) -> String {
        let sign = if self.neg { "-" } else { "" };
        let tz = self.mant.trailing_zeros();
        let (mant, exp) = (self.mant.shr(tz), self.exp + tz as i32);
        if exp >= 0 || mant.is_zero() {
            return format!("{sign}{}", mant.shl(exp.max(0) as u32).digits());
        }
        // mant · 2^-k = mant · 5^k / 10^k.
        let k = exp.unsigned_abs() as usize;
        let mut n = mant;
        let mut left = k;
        while left > 0 {
            let step = left.min(13);
            n.mul_small(5u32.pow(step as u32));
            left -= step;
        }
        let digits = n.digits();
        let digits = if digits.len() <= k { format!("{}{digits}", "0".repeat(k + 1 - digits.len())) } else { digits };
        let (int, frac) = digits.split_at(digits.len() - k);
        let frac = frac.trim_end_matches('0');
        if frac.is_empty() { format!("{sign}{int}") } else { format!("{sign}{int}.{frac}") }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals() {
        assert_eq!(Dyadic::new(false, 0x53, -6).decimal(), "1.296875");
        assert_eq!(Dyadic::new(true, 0, 0).decimal(), "-0");
        assert_eq!(Dyadic::new(false, 7, 6).decimal(), "448");
        assert_eq!(Dyadic::new(false, 1, -9).decimal(), "0.001953125");
        assert_eq!(Dyadic::int(-128).decimal(), "-128");
        assert_eq!(Dyadic::of_f64(0.1).decimal(), "0.1000000000000000055511151231257827021181583404541015625");
        let tiny = Dyadic::of_f64(f64::from_bits(1)).decimal();
        assert!(tiny.starts_with("0.000") && tiny.ends_with("5") && tiny.len() == 2 + 1074);
        let big = Dyadic::of_f64(f64::MAX).decimal();
        assert_eq!(big.len(), 309);
        assert!(big.starts_with("17976931348623157"));
    }

    #[test]
    fn differences() {
        let a = Dyadic::of_f64(1.3);
        let b = Dyadic::new(false, 0x53, -6);
        assert_eq!(a.sub(&b).decimal(), "0.0031250000000000444089209850062616169452667236328125");
        assert_eq!(b.sub(&a).decimal(), "-0.0031250000000000444089209850062616169452667236328125");
        assert_eq!(a.sub(&a).decimal(), "0");
        let tiny = Dyadic::of_f64(f64::from_bits(1));
        let d = tiny.sub(&Dyadic::new(false, 1, -149));
        assert!(d.decimal().starts_with("-0.0000000000000000000000000000000000000000000014012984643"));
        assert_eq!(Dyadic::new(false, 3, -10).abs_over_pow2(-8), 0.75);
        assert_eq!(Dyadic::new(false, 3, -10).floor_scaled32(-8), 3 << 30);
    }
}
