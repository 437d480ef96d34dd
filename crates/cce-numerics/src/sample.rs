//! Deterministic test arrays: the inputs `cce gen` writes and the all-reduce generates.
//!
//! Guarantees: the bytes depend only on (dtype, count, seed, kind) — the same on every machine
//! and thread count; floats are produced as f32 and rounded to the dtype with RNE by
//! [`crate::convert`], so every value is exactly representable; integers never exceed the
//! dtype's range.

use alloc::vec::Vec;

use crate::{NumType, NumericsError, Rounding};

/// What values a sample holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SampleKind {
    /// v uniform in [−1, 1): floats hold v (as f32, rounded to the dtype), integers
    /// trunc(1000 · v) ∈ (−1000, 1000) in two's complement, wrapped to the dtype's width (so an
    /// unsigned dtype holds 0..1000 or values near its top). The all-reduce's generated inputs.
    Uniform,
    /// 0, 1, 2, … (floats as f32 rounded to the dtype, integers wrapping at the dtype's width).
    Ramp,
    /// Pseudo-random bytes: every bit pattern, NaN and inf included.
    Bits,
}

impl SampleKind {
    /// `uniform`, `ramp` or `bits`.
    pub fn from_name(name: &str) -> Option<SampleKind> {
        match name {
            "uniform" => Some(SampleKind::Uniform),
            "ramp" => Some(SampleKind::Ramp),
            "bits" => Some(SampleKind::Bits),
            _ => None,
        }
    }
}

/// The xorshift64 stream of `seed`.
fn stream(seed: u64) -> impl Iterator<Item = u64> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03;
    core::iter::repeat_with(move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    })
}

/// The stream's value as a uniform f64 in [−1, 1).
fn signed_unit(x: u64) -> f64 {
    (x >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
}

/// `count` elements of `t` as raw little-endian bytes.
///
/// # Errors
/// [`NumericsError`] from the float rounding (never for the dtypes [`NumType`] names).
pub fn sample(t: NumType, count: usize, seed: u64, kind: SampleKind) -> Result<Vec<u8>, NumericsError> {
    let size = t.size();
    let mut out = Vec::with_capacity(count * size.max(4));
    if kind == SampleKind::Bits {
        for x in stream(seed).take(count.saturating_mul(size).div_ceil(8)) {
            out.extend_from_slice(&x.to_le_bytes());
        }
        out.truncate(count * size);
        return Ok(out);
    }
    let mut values = stream(seed).enumerate().map(|(i, x)| match kind {
        SampleKind::Uniform => signed_unit(x),
        _ => i as f64,
    });
    if t.is_float() {
        for v in values.by_ref().take(count) {
            out.extend_from_slice(&(v as f32).to_le_bytes());
        }
        if t == NumType::F32 {
            return Ok(out);
        }
        return crate::convert_to_vec(NumType::F32, t, &out, Rounding::Rne, false);
    }
    let scale = if kind == SampleKind::Uniform { 1000.0 } else { 1.0 };
    for v in values.take(count) {
        out.extend_from_slice(&((v * scale) as i64).to_le_bytes()[..size]);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_floats_lie_in_range_and_are_deterministic() {
        let a = sample(NumType::Bf16, 1000, 7, SampleKind::Uniform).unwrap();
        assert_eq!(a.len(), 2000);
        assert_eq!(a, sample(NumType::Bf16, 1000, 7, SampleKind::Uniform).unwrap());
        assert_ne!(a, sample(NumType::Bf16, 1000, 8, SampleKind::Uniform).unwrap());
        for c in a.chunks_exact(2) {
            let f = f32::from_bits(u32::from(u16::from_le_bytes([c[0], c[1]])) << 16);
            assert!((-1.0..=1.0).contains(&f), "{f}");
        }
    }

    #[test]
    fn integers_stay_in_range_and_ramp_counts() {
        let a = sample(NumType::I16, 500, 3, SampleKind::Uniform).unwrap();
        assert!(a.chunks_exact(2).all(|c| (-999..=999).contains(&i16::from_le_bytes([c[0], c[1]]))));
        // The same values as two's complement in an unsigned dtype of the same width.
        let u = sample(NumType::U16, 500, 3, SampleKind::Uniform).unwrap();
        assert_eq!(u, a);
        let u = sample(NumType::U8, 300, 3, SampleKind::Ramp).unwrap();
        assert_eq!(u[299], (299 % 256) as u8);
        let f = sample(NumType::F32, 4, 0, SampleKind::Ramp).unwrap();
        assert_eq!(f32::from_le_bytes([f[12], f[13], f[14], f[15]]), 3.0);
        assert_eq!(sample(NumType::F8E4M3, 33, 1, SampleKind::Bits).unwrap().len(), 33);
    }
}
