//! Deterministic test arrays: the inputs `cce gen` writes and the all-reduce generates.
//!
//! Guarantees:
//! - Counter-based: element `i` of a sample depends only on (dtype, kind, seed, i) — never on
//!   the elements before it, the count, the thread count or the machine — so any block can be
//!   made on its own ([`sample_into`]), by any thread or process.
//! - For element index `i` (64 bits) and seed `s`: two 32-bit keys `k0`, `k1` from SplitMix64's
//!   finaliser of `s` and the index's high half, then 32 bits
//!   `x = fmix32(fmix32(lo ^ k0) ^ k1)` (`lo` the index's low half, `fmix32` MurmurHash3's
//!   finaliser, as in [`crate::rng`]). For a fixed seed and high half this is a bijection of
//!   the 32-bit integers.
//! - `uniform`: `u = x >> 8`, v = (2u + 1 − 2²⁴) · 2⁻²⁴, an odd multiple of 2⁻²⁴ in (−1, 1)
//!   (exact in fp32, never 0); floats hold v rounded to the dtype with RNE by
//!   [`crate::convert`] (bf16: by the same carry-add rounding in the generating loop, the same
//!   bytes; `tests/python/test_gen.py` checks both against ml_dtypes); integers hold trunc(1000 v) ∈ (−1000, 1000) in two's complement,
//!   wrapped to the dtype's width.
//! - `ramp`: element i holds i (floats: i as fp32, then the dtype, both RNE; integers wrap).
//! - `bits`: byte b of the array is byte b mod 4 of the 32 bits of counter b / 4 (any pattern,
//!   NaN and inf included).
//! - The loops are plain integer arithmetic compiled per CPU feature level (`crate::simd`),
//!   identical on every path.

use alloc::vec;
use alloc::vec::Vec;

use crate::rng::{fmix32, mix64};
use crate::simd::{Caps, Kernel, detected_isa, dispatch};
use crate::{NumType, NumericsError, Rounding};

/// What values a sample holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SampleKind {
    /// v in (−1, 1), an odd multiple of 2⁻²⁴: floats hold v rounded to the dtype, integers
    /// trunc(1000 · v) ∈ (−1000, 1000) in two's complement, wrapped to the dtype's width (so an
    /// unsigned dtype holds 0..1000 or values near its top). The all-reduce's generated inputs.
    Uniform,
    /// 0, 1, 2, … (floats as f32 rounded to the dtype, integers wrapping at the dtype's width).
    Ramp,
    /// Pseudo-random bytes: every bit pattern, NaN and inf included.
    Bits,
}

impl SampleKind {
    /// Every kind.
    pub const ALL: [SampleKind; 3] = [SampleKind::Uniform, SampleKind::Ramp, SampleKind::Bits];

    /// `uniform`, `ramp` or `bits`.
    pub fn from_name(name: &str) -> Option<SampleKind> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Its name: `uniform`, `ramp` or `bits`.
    pub const fn name(self) -> &'static str {
        match self {
            SampleKind::Uniform => "uniform",
            SampleKind::Ramp => "ramp",
            SampleKind::Bits => "bits",
        }
    }
}

impl core::fmt::Display for SampleKind {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

impl core::str::FromStr for SampleKind {
    type Err = alloc::string::String;
    /// [`SampleKind::from_name`]; a refusal says what is expected, without the flag.
    fn from_str(s: &str) -> Result<SampleKind, Self::Err> {
        SampleKind::from_name(s).ok_or_else(|| alloc::format!("'{s}': expected uniform, ramp or bits"))
    }
}

/// The keys (k0, k1) of `seed` for the counters whose high half is `hi`.
#[doc(hidden)]
pub fn keys(seed: u64, hi: u32) -> (u32, u32) {
    let k = mix64(mix64(seed ^ 0x5a3c_e1b4_96f2_0d87) ^ u64::from(hi).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    (k as u32, (k >> 32) as u32)
}

/// The 32 bits of counter `lo` under `keys`.
#[inline(always)]
fn bits_of(lo: u32, (k0, k1): (u32, u32)) -> u32 {
    fmix32(fmix32(lo ^ k0) ^ k1)
}

/// The uniform value of 32 counter bits: an odd multiple of 2⁻²⁴ in (−1, 1), exact in fp32.
#[inline(always)]
#[doc(hidden)]
pub fn uniform_of(x: u32) -> f32 {
    (((x >> 8) as i32) * 2 + 1 - (1 << 24)) as f32 * (1.0 / 16_777_216.0)
}

/// trunc(1000 · v) for the uniform value of `x`, in integers: (1000 · (2u + 1 − 2²⁴)) / 2²⁴
/// rounded toward zero.
#[inline(always)]
fn uniform_int_of(x: u32) -> i64 {
    (1000 * (i64::from(x >> 8) * 2 + 1 - (1 << 24))) / (1 << 24)
}

/// Elements made per pass through the fp32 scratch.
#[doc(hidden)]
pub const PASS: usize = 2048;

/// The uniform values of counters `lo ..` (no wrap of the low half), as little-endian bytes
/// filling `out`: fp32 when `BYTES` is 4; bf16 when it is 2, the fp32 value rounded to
/// nearest-even in the same loop (the value is finite, never NaN, so the rounding is the
/// carry-add on its bits).
struct Uniform<'a, const BYTES: usize> {
    lo: u32,
    keys: (u32, u32),
    out: &'a mut [u8],
}

impl<const BYTES: usize> Kernel for Uniform<'_, BYTES> {
    #[inline(always)]
    fn run<C: Caps>(&mut self) {
        let (lo, keys) = (self.lo, self.keys);
        for (j, o) in self.out.chunks_exact_mut(BYTES).enumerate() {
            let b = uniform_of(bits_of(lo.wrapping_add(j as u32), keys)).to_bits();
            let word = if BYTES == 2 { b.wrapping_add(0x7fff + ((b >> 16) & 1)) >> 16 } else { b };
            o.copy_from_slice(&word.to_le_bytes()[..BYTES]);
        }
    }
}

/// Fills `out` (whole elements of `t`) with elements `first ..` of the sample of (`t`, `seed`,
/// `kind`): the bytes [`sample`] would hold there.
///
/// # Errors
/// [`NumericsError::NotElementMultiple`] when `out` is not whole elements.
pub fn sample_into(t: NumType, first: u64, seed: u64, kind: SampleKind, out: &mut [u8]) -> Result<(), NumericsError> {
    let size = t.size();
    if out.len() % size != 0 {
        return Err(NumericsError::NotElementMultiple { role: "output", index: 0, len: out.len(), dtype: t, size });
    }
    if kind == SampleKind::Bits {
        let start = first.wrapping_mul(size as u64);
        let mut b = 0;
        while b < out.len() {
            let at = start.wrapping_add(b as u64);
            let word = bits_of((at / 4) as u32, keys(seed, ((at / 4) >> 32) as u32)).to_le_bytes();
            let skip = (at % 4) as usize;
            let n = (4 - skip).min(out.len() - b);
            out[b..b + n].copy_from_slice(&word[skip..skip + n]);
            b += n;
        }
        return Ok(());
    }
    let mut wide = [0u8; 4 * PASS];
    // fp32 and bf16 uniform values are written in place; other floats go through fp32.
    let direct = kind == SampleKind::Uniform && matches!(t, NumType::F32 | NumType::Bf16);
    for (c, chunk) in out.chunks_mut(PASS * size).enumerate() {
        let n = chunk.len() / size;
        let start = first.wrapping_add((c * PASS) as u64);
        // The low half must not wrap inside one kernel call: split at 2³² boundaries.
        let mut done = 0;
        while done < n {
            let at = start.wrapping_add(done as u64);
            let lo = at as u32;
            // In u64: the room left, up to 2³², is 0 as a 32-bit usize (wasm32), which looped.
            let room = u64::from(u32::MAX) - u64::from(lo) + 1;
            let run = ((n - done) as u64).min(room) as usize;
            let (keys, part) = (keys(seed, (at >> 32) as u32), &mut chunk[done * size..(done + run) * size]);
            match (kind, t.is_float()) {
                (SampleKind::Uniform, true) if direct && size == 2 => {
                    dispatch(&mut Uniform::<2> { lo, keys, out: part }, detected_isa());
                }
                (SampleKind::Uniform, true) if direct => {
                    dispatch(&mut Uniform::<4> { lo, keys, out: part }, detected_isa());
                }
                (SampleKind::Uniform, true) => {
                    dispatch(&mut Uniform::<4> { lo, keys, out: &mut wide[..4 * run] }, detected_isa());
                }
                (SampleKind::Ramp, true) => {
                    for (j, w) in wide[..4 * run].chunks_exact_mut(4).enumerate() {
                        w.copy_from_slice(&(at.wrapping_add(j as u64) as f32).to_le_bytes());
                    }
                }
                (SampleKind::Uniform, false) => {
                    for (j, e) in part.chunks_exact_mut(size).enumerate() {
                        let v = uniform_int_of(bits_of(lo.wrapping_add(j as u32), keys));
                        e.copy_from_slice(&v.to_le_bytes()[..size]);
                    }
                }
                _ => {
                    for (j, e) in part.chunks_exact_mut(size).enumerate() {
                        e.copy_from_slice(&at.wrapping_add(j as u64).to_le_bytes()[..size]);
                    }
                }
            }
            if t.is_float() && !direct {
                let w = &wide[..4 * run];
                if t == NumType::F32 {
                    part.copy_from_slice(w);
                } else {
                    crate::convert(NumType::F32, t, w, part, Rounding::Rne, false)?;
                }
            }
            done += run;
        }
    }
    Ok(())
}

/// `count` elements of `t` as raw little-endian bytes (see the module for the values).
///
/// # Errors
/// [`NumericsError`] from the float rounding (never for the dtypes [`NumType`] names).
pub fn sample(t: NumType, count: usize, seed: u64, kind: SampleKind) -> Result<Vec<u8>, NumericsError> {
    let mut out = vec![0u8; count * t.size()];
    sample_into(t, 0, seed, kind, &mut out)?;
    Ok(out)
}

/// [`sample`] made on `threads` threads, each filling its own stretch (the same bytes).
///
/// # Errors
/// As [`sample`].
#[cfg(feature = "std")]
pub fn sample_par(
    t: NumType,
    count: usize,
    seed: u64,
    kind: SampleKind,
    threads: usize,
) -> Result<Vec<u8>, NumericsError> {
    let mut out = crate::buffer::zeroed(count * t.size());
    sample_into_par(t, 0, seed, kind, &mut out, threads)?;
    Ok(out)
}

/// [`sample_into`] on `threads` threads, each filling its own stretch of `out` (the same bytes).
///
/// # Errors
/// As [`sample_into`].
#[cfg(feature = "std")]
pub fn sample_into_par(
    t: NumType,
    first: u64,
    seed: u64,
    kind: SampleKind,
    out: &mut [u8],
    threads: usize,
) -> Result<(), NumericsError> {
    let size = t.size();
    let count = out.len() / size;
    // Stretches of whole passes, so no thread's last pass is cut short.
    let per = count.div_ceil(threads.max(1)).div_ceil(PASS) * PASS;
    if per == 0 || per >= count || out.len() % size != 0 {
        return sample_into(t, first, seed, kind, out);
    }
    std::thread::scope(|s| {
        let handles: Vec<_> = out
            .chunks_mut(per * size)
            .enumerate()
            .map(|(i, part)| s.spawn(move || sample_into(t, first.wrapping_add((i * per) as u64), seed, kind, part)))
            .collect();
        handles.into_iter().try_for_each(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
    })
}
