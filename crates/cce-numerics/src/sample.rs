//! Deterministic test arrays: the inputs `cce gen` writes (and Python's tests may ask for).
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
    /// Floats uniform in [−1, 1); signed integers in [−1000, 1000); unsigned in [0, 1000).
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

/// The xorshift64 stream of `seed` (never the all-zero state).
fn stream(seed: u64) -> impl Iterator<Item = u64> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03;
    if x == 0 {
        x = 1;
    }
    core::iter::repeat_with(move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    })
}

/// `count` elements of `t` as raw little-endian bytes.
///
/// # Errors
/// [`NumericsError`] from the float rounding (never for the dtypes [`NumType`] names).
pub fn sample(t: NumType, count: usize, seed: u64, kind: SampleKind) -> Result<Vec<u8>, NumericsError> {
    let size = t.size();
    if kind == SampleKind::Bits {
        let mut out: Vec<u8> = stream(seed).flat_map(u64::to_le_bytes).take(count * size).collect();
        out.truncate(count * size);
        return Ok(out);
    }
    let unit = |x: u64| (x >> 11) as f64 / (1u64 << 53) as f64; // [0, 1)
    if t.is_float() {
        let f32s: Vec<u8> = match kind {
            SampleKind::Uniform => {
                stream(seed).take(count).flat_map(|x| ((unit(x) * 2.0 - 1.0) as f32).to_le_bytes()).collect()
            }
            _ => (0..count).flat_map(|i| (i as f32).to_le_bytes()).collect(),
        };
        return crate::convert_to_vec(NumType::F32, t, &f32s, Rounding::Rne, false);
    }
    let signed = t.int_info().is_some_and(|(_, s)| s);
    let value = |i: usize, x: u64| -> i64 {
        match kind {
            SampleKind::Uniform if signed => (unit(x) * 2000.0) as i64 - 1000,
            SampleKind::Uniform => (unit(x) * 1000.0) as i64,
            _ => i as i64,
        }
    };
    Ok(stream(seed).take(count).enumerate().flat_map(|(i, x)| value(i, x).to_le_bytes()[..size].to_vec()).collect())
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
        assert!(a.chunks_exact(2).all(|c| (-1000..1000).contains(&i16::from_le_bytes([c[0], c[1]]))));
        let u = sample(NumType::U8, 300, 3, SampleKind::Ramp).unwrap();
        assert_eq!(u[299], (299 % 256) as u8);
        let f = sample(NumType::F32, 4, 0, SampleKind::Ramp).unwrap();
        assert_eq!(f32::from_le_bytes([f[12], f[13], f[14], f[15]]), 3.0);
        assert_eq!(sample(NumType::F8E4M3, 33, 1, SampleKind::Bits).unwrap().len(), 33);
    }
}
