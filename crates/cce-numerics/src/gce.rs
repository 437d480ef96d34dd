//! # GCE: the gradient-compression codec (MODEL)
//!
//! The compute-DMA's gradient compression (the GCE packet, `cce_format::packet`) runs a codec
//! that lives in silicon and is not public (GAPS.md §9). This module is a **model codec**: a
//! documented, checkable stand-in so that compressed gradients can flow through the model with
//! exact, testable bits. Nothing here claims to be what Trainium computes; every choice is
//! tagged MODEL (docs/MODEL.md, "GCE codec"). The header that describes a compressed buffer is
//! [`cce_format::gce`].
//!
//! ## The codec
//! Block-scaled fp8 e5m2 with one E8M0 scale byte per block: the shape of the OCP
//! Microscaling (MX) formats, with e5m2 elements because gradient FP8 recipes use e5m2 (range
//! over precision) and it keeps ±inf. The input is f32: the source dtype's values (bf16, fp16
//! or fp32) widened exactly. Elements are taken in blocks of `block` consecutive values; the
//! last block may be shorter.
//!
//! - **Scale** ([`scale_exponent`]): `amax` is the largest `|x|` over the block's *finite*
//!   elements (NaN and ±inf do not take part). With no finite nonzero element, `E = −127`.
//!   Otherwise write `amax = m · 2^e` exactly, `m ∈ [1, 2)` (f32 subnormals normalised
//!   exactly), and take `E = e − 15` if `m ≤ 1.75`, else `e − 14`: the smallest integer with
//!   `amax ≤ 57344 · 2^E` (57344 = 1.75 · 2^15 is e5m2's largest finite value), so no element
//!   is clipped. Then `E = max(E, −127)`. The scale byte is `E + 127`. The largest `E` an f32
//!   block can need is 113 (`amax` near `f32::MAX`), so the compressor writes bytes 0..=240.
//! - **Elements** ([`encode_element`]): `q = e5m2(x · 2^−E)`, rounded to nearest, ties to even.
//!   The product is formed exactly (the rounding happens once, into e5m2). This is the same
//!   byte as the f32 product `x * 2^−E` followed by an RNE cast (what the reference
//!   `scripts/gce_ref.py` does): `2^−E` is a normal f32 for every `E ∈ [−127, 113]`, and
//!   multiplying by a power of two is exact in f32 whenever the result is normal,
//!   `|v| ≥ 2^−126`; a smaller `|v|` is far below half the smallest e5m2 subnormal (`2^−17`),
//!   so both routes give `±0`. As `|x| ≤ amax ≤ 57344 · 2^E`, a finite `|v|` never exceeds
//!   57344, which e5m2 holds: nothing overflows. NaN becomes the e5m2 NaN `0x7E` with the
//!   input's sign (`0xFE` when negative: what ml_dtypes gives for any f32 NaN, payload
//!   ignored); ±inf becomes `0x7C` / `0xFC`; `−0` stays `0x80`.
//! - **Decompression** ([`decode_element`]): `x̂ = e5m2(q) · 2^E`. For a scale byte (any of
//!   0..=255, so `E ∈ [−127, 128]`) the product is an exact f32 unless it overflows: a finite
//!   e5m2 value is `k · 2^j` with `k < 8` (three significant bits) and `j ≥ −16`, so the product
//!   is `k · 2^(j+E)` with `j + E ≥ −143`, on the f32 grid (whose finest step is `2^−149`).
//!   A finite code whose product exceeds `f32::MAX` (it is then at least `2^128`) gives
//!   `±f32::MAX`: a finite code never decodes to inf. An infinite code gives ±inf; a NaN code
//!   gives the f32 quiet NaN with the code's sign, `0x7FC00000` / `0xFFC00000`. Scale byte
//!   255 is simply `E = 128` here (OCP MX reserves it for NaN; the compressor never writes it).
//!
//! ## The bound
//! For a finite `x` in a block with scale exponent `E`:
//! `|x − x̂| ≤ max(2^−3 · |x|, 2^(E−17))` ([`bound`]). `v = x · 2^−E` rounds to the nearest e5m2
//! value: in the normal range (`|v| ≥ 2^−14`) the error is at most half an ulp, `2^(k−3)` in
//! the binade `[2^k, 2^(k+1))`, so at most `2^−3 · |v|`; below it the spacing is `2^−16` and
//! the error at most `2^−17`. Scaling by `2^E` is exact, and a saturated `x̂ = ±f32::MAX` lies
//! between `x` and `q · 2^E`, so it is only closer. Non-finite elements come back as
//! themselves (inf with its sign; NaN as a NaN with its sign).
//!
//! ## Kernels
//! [`compress`] and [`decompress`] run the element loops written here (the reference) or, on
//! x86-64 CPUs with AVX2 or AVX-512 (chosen at run time, as the reduce kernels are), vector
//! kernels over whole blocks whose size is a multiple of 16 — every size a GCE header names —
//! with the element loop for the rest. The kernels give the element loops' bytes and bits for
//! every input (tested on every level: `tests/gce_isa.rs`); [`compress_with`] and
//! [`decompress_with`] cap the level (`Isa::Portable` runs the element loops alone), and
//! [`kernel_level`] names the one a call takes. [`compress_le`] and [`decompress_le`] take
//! and give the f32 values as little-endian bytes, the layout of the engine's buffers.
//!
//! ## Guarantees
//! - Pure and deterministic: the bytes depend only on the values and the block size, never on
//!   the CPU's SIMD level; no threads, no allocation except [`compress_to_vec`].
//! - No panics: every buffer-size mismatch and a zero block size is a [`GceError`].
//! - Checked byte for byte and bit for bit against an independent numpy + ml_dtypes reference
//!   (`scripts/gce_ref.py`, `tests/gce_ref.rs`) on every kind of block, every block size, and
//!   every e5m2 code under a range of scale bytes.
//!
//! ## Example
//! ```
//! use cce_numerics::gce;
//! let values = [1.0f32, -0.375, 3.0e-3, 1.125];
//! let (scales, payload) = gce::compress_to_vec(&values, 32).unwrap();
//! // amax = 1.0 = 1 · 2^0, m ≤ 1.75: E = −15, byte 112.
//! assert_eq!(scales, [112]);
//! let mut out = [0f32; 4];
//! gce::decompress(&scales, &payload, 32, &mut out).unwrap();
//! assert_eq!(out[0], 1.0);
//! for (x, y) in values.iter().zip(out) {
//!     assert!(f64::from(x - y).abs() <= gce::bound(*x, -15));
//! }
//! ```

use crate::float::{decode, pow2, round_exact};
use crate::simd::{Caps, Isa, Kernel, dispatch};
use crate::types::FloatFormat;
use alloc::vec;
use alloc::vec::Vec;

/// The payload's element format: fp8 e5m2 (bias 15, max 57344, has ±inf).
pub const PAYLOAD_FORMAT: FloatFormat = FloatFormat::E5M2;
/// e5m2's largest finite value, `1.75 · 2^15`.
pub const PAYLOAD_MAX: f32 = 57344.0;
/// The smallest scale exponent (scale byte 0); the compressor's floor.
pub const MIN_SCALE_EXPONENT: i32 = -127;
/// The largest scale exponent a scale byte can hold (byte 255); the compressor writes at most
/// [`MAX_WRITTEN_SCALE_EXPONENT`].
pub const MAX_SCALE_EXPONENT: i32 = 128;
/// The largest scale exponent an f32 block needs (`amax` near `f32::MAX`).
pub const MAX_WRITTEN_SCALE_EXPONENT: i32 = 113;
/// The E8M0 bias: scale byte = `E + 127`.
pub const SCALE_BIAS: i32 = 127;

/// e5m2 NaN (positive); the negative one has the sign bit `0x80` as well.
const Q_NAN: u8 = PAYLOAD_FORMAT.nan() as u8;
/// e5m2 +inf.
const Q_INF: u8 = PAYLOAD_FORMAT.exp_mask() as u8;
/// e5m2 sign bit.
const Q_SIGN: u8 = PAYLOAD_FORMAT.sign_bit() as u8;
/// f32 quiet NaN (positive).
const F32_QNAN: u32 = 0x7FC0_0000;
/// f32 magnitude bits of +inf; anything above is NaN.
const F32_INF: u32 = 0x7F80_0000;
/// The mantissa (with the implicit bit) above which `m > 1.75`: `1.75 · 2^23`.
const M_175: u32 = 0x00E0_0000;
/// `log2` of e5m2's largest binade: `57344 = 1.75 · 2^15`.
const PAYLOAD_MAX_EXP: i32 = 15;

/// Why a buffer cannot be compressed or decompressed. Messages are lowercase and name the
/// values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GceError {
    /// A block size of 0.
    #[error("gce block size is 0, at least 1 element per block is needed")]
    ZeroBlock,
    /// The scale table does not hold one byte per block.
    #[error("gce scale table has {got} bytes, expected ceil({elems} / {block}) = {expected}")]
    ScaleCount {
        /// Bytes given.
        got: usize,
        /// `ceil(elems / block)`.
        expected: usize,
        /// Elements.
        elems: usize,
        /// Block size.
        block: usize,
    },
    /// The payload does not hold one byte per value.
    #[error("gce payload has {got} bytes, expected one per value: {expected}")]
    PayloadLength {
        /// Bytes given.
        got: usize,
        /// Values.
        expected: usize,
    },
    /// The output does not hold one f32 per payload byte.
    #[error("gce output has {got} values, expected one per payload byte: {expected}")]
    OutputLength {
        /// Values given.
        got: usize,
        /// Payload bytes.
        expected: usize,
    },
    /// Little-endian input bytes that are not whole f32 values ([`compress_le`]).
    #[error("gce input has {len} bytes, not a whole number of 4-byte f32 values")]
    InputBytes {
        /// Bytes given.
        len: usize,
    },
    /// A little-endian output that does not hold four bytes per payload byte
    /// ([`decompress_le`]).
    #[error("gce output has {got} bytes, expected four per payload byte: {expected}")]
    OutputBytes {
        /// Bytes given.
        got: usize,
        /// Four times the payload bytes.
        expected: usize,
    },
}

/// Scale bytes for `elems` values in blocks of `block`: `ceil(elems / block)`.
pub fn scale_count(elems: usize, block: usize) -> Result<usize, GceError> {
    if block == 0 { Err(GceError::ZeroBlock) } else { Ok(elems.div_ceil(block)) }
}

/// The scale exponent `E` of a block (see the module docs): the smallest integer with
/// `amax ≤ 57344 · 2^E`, at least −127, where `amax` is the largest finite `|x|`; −127 when the
/// block has no finite nonzero element (or is empty).
pub fn scale_exponent(block: &[f32]) -> i32 {
    amax_scale_exponent(finite_amax(block.iter().copied()))
}

/// The largest finite magnitude's bits (0 for none): finite magnitudes order like their bit
/// patterns.
fn finite_amax(values: impl Iterator<Item = f32>) -> u32 {
    values.map(|x| x.to_bits() & 0x7FFF_FFFF).filter(|&a| a < F32_INF).max().unwrap_or(0)
}

/// [`scale_exponent`] of one magnitude's bits `a` (finite, sign clear).
fn amax_scale_exponent(a: u32) -> i32 {
    if a == 0 {
        return MIN_SCALE_EXPONENT;
    }
    // amax = (m / 2^23) · 2^e with m ∈ [2^23, 2^24).
    let (m, e) = if a >> 23 == 0 {
        // Subnormal: a · 2^−149; shift the top bit to bit 23.
        let sh = a.leading_zeros() - 8;
        (a << sh, -126 - sh as i32)
    } else {
        ((a & 0x7F_FFFF) | 0x80_0000, (a >> 23) as i32 - 127)
    };
    let e_scale = if m <= M_175 { e - PAYLOAD_MAX_EXP } else { e - PAYLOAD_MAX_EXP + 1 };
    e_scale.max(MIN_SCALE_EXPONENT)
}

/// The E8M0 scale byte of a scale exponent: `E + 127`, `E` clamped to `[−127, 128]`.
pub const fn scale_byte(scale_exponent: i32) -> u8 {
    let e = if scale_exponent < MIN_SCALE_EXPONENT {
        MIN_SCALE_EXPONENT
    } else if scale_exponent > MAX_SCALE_EXPONENT {
        MAX_SCALE_EXPONENT
    } else {
        scale_exponent
    };
    (e + SCALE_BIAS) as u8
}

/// The scale exponent of an E8M0 scale byte: `byte − 127`.
pub const fn scale_exponent_of_byte(byte: u8) -> i32 {
    byte as i32 - SCALE_BIAS
}

/// One element: `e5m2(x · 2^−E)`, RNE, the product exact (one rounding). NaN → `0x7E` with
/// the sign of `x`; ±inf → `0x7C` / `0xFC`; −0 → `0x80`. With the block's own `E` a finite
/// result never overflows; with another `E`, `|x · 2^−E| ≥ 61440` rounds to ±inf (as an
/// ml_dtypes cast does). `E` outside `[−300, 300]` gives the same byte as ±300 (every f32 is
/// then far past overflow or far below half the smallest subnormal).
pub fn encode_element(x: f32, scale_exponent: i32) -> u8 {
    let bits = x.to_bits();
    let sign = if bits >> 31 != 0 { Q_SIGN } else { 0 };
    let a = bits & 0x7FFF_FFFF;
    if a > F32_INF {
        return Q_NAN | sign;
    }
    if a == F32_INF {
        return Q_INF | sign;
    }
    let ef = a >> 23;
    let (mant, exp) = if ef == 0 { (a, -149) } else { ((a & 0x7F_FFFF) | 0x80_0000, ef as i32 - 150) };
    let e = scale_exponent.clamp(-300, 300);
    round_exact(sign != 0, u64::from(mant), exp - e, PAYLOAD_FORMAT, None, false) as u8
}

/// One element back: `e5m2(q) · 2^E` as an f32 (see the module docs). For `E ∈ [−127, 128]`
/// (every scale byte) a finite result is exact, or `±f32::MAX` when it exceeds `f32::MAX`;
/// for other `E` it is rounded to f32 (RNE) and saturated the same way. ±inf → ±inf; NaN →
/// `0x7FC00000` / `0xFFC00000` by the code's sign.
pub fn decode_element(q: u8, scale_exponent: i32) -> f32 {
    let neg = q & Q_SIGN != 0;
    let d = decode(PAYLOAD_FORMAT, u32::from(q));
    if d.is_nan() {
        return f32::from_bits(F32_QNAN | if neg { 0x8000_0000 } else { 0 });
    }
    if d.is_infinite() {
        return d as f32;
    }
    // |d| ≤ 57344, so beyond ±200 the result is saturated or rounds to ±0 either way.
    let p = d * pow2(scale_exponent.clamp(-200, 200));
    let max = f64::from(f32::MAX);
    if p > max {
        f32::MAX
    } else if p < -max {
        -f32::MAX
    } else {
        p as f32
    }
}

/// The stated error bound for a finite `x` compressed with scale exponent `E`:
/// `max(2^−3 · |x|, 2^(E−17))` (see the module docs). `f64::INFINITY` for a non-finite `x`,
/// which no bound describes (it comes back as itself). `E` is clamped to `[−1000, 1000]`.
pub fn bound(x: f32, scale_exponent: i32) -> f64 {
    if !x.is_finite() {
        return f64::INFINITY;
    }
    let abs = f64::from(f32::from_bits(x.to_bits() & 0x7FFF_FFFF));
    (abs * 0.125).max(pow2(scale_exponent.clamp(-1000, 1000) - 17))
}

/// Compresses `values` in blocks of `block`: one scale byte per block into `scales`
/// (`ceil(len / block)` bytes), one e5m2 byte per value into `payload` (`len` bytes). Errors on
/// a zero block or a wrong buffer size, before writing anything. The best kernel this CPU has
/// ([`compress_with`] at [`Isa::Avx512`]).
pub fn compress(values: &[f32], block: usize, scales: &mut [u8], payload: &mut [u8]) -> Result<(), GceError> {
    compress_with(values, block, scales, payload, Isa::Avx512)
}

/// [`compress`] with the kernels capped at `max_isa`: the same bytes at every level;
/// `Isa::Portable` runs the element loop alone (the reference).
pub fn compress_with(
    values: &[f32],
    block: usize,
    scales: &mut [u8],
    payload: &mut [u8],
    max_isa: Isa,
) -> Result<(), GceError> {
    check_compress(values.len(), block, scales, payload)?;
    compress_checked(Values::F32(values), block, scales, payload, max_isa);
    Ok(())
}

/// [`compress_with`] of f32 values given as little-endian bytes (four per value), as the
/// engine holds them. Errors as [`compress`], and on bytes that are not whole values.
pub fn compress_le(
    values: &[u8],
    block: usize,
    scales: &mut [u8],
    payload: &mut [u8],
    max_isa: Isa,
) -> Result<(), GceError> {
    if values.len() % 4 != 0 {
        return Err(GceError::InputBytes { len: values.len() });
    }
    check_compress(values.len() / 4, block, scales, payload)?;
    compress_checked(Values::Le(values), block, scales, payload, max_isa);
    Ok(())
}

/// [`compress`] into new buffers: `(scales, payload)`.
pub fn compress_to_vec(values: &[f32], block: usize) -> Result<(Vec<u8>, Vec<u8>), GceError> {
    let mut scales = vec![0u8; scale_count(values.len(), block)?];
    let mut payload = vec![0u8; values.len()];
    compress(values, block, &mut scales, &mut payload)?;
    Ok((scales, payload))
}

/// Decompresses `payload` (one e5m2 byte per value, in blocks of `block`, each block scaled by
/// its byte of `scales`) into `out` (one f32 per payload byte). Any scale byte is accepted
/// (`E = byte − 127`). Errors on a zero block or a wrong buffer size, before writing anything.
/// The best kernel this CPU has ([`decompress_with`] at [`Isa::Avx512`]).
pub fn decompress(scales: &[u8], payload: &[u8], block: usize, out: &mut [f32]) -> Result<(), GceError> {
    decompress_with(scales, payload, block, out, Isa::Avx512)
}

/// [`decompress`] with the kernels capped at `max_isa`: the same bits at every level;
/// `Isa::Portable` runs the element loop alone (the reference).
pub fn decompress_with(
    scales: &[u8],
    payload: &[u8],
    block: usize,
    out: &mut [f32],
    max_isa: Isa,
) -> Result<(), GceError> {
    check_scales(scales, payload.len(), block)?;
    if out.len() != payload.len() {
        return Err(GceError::OutputLength { got: out.len(), expected: payload.len() });
    }
    decompress_checked(scales, payload, block, Out::F32(out), max_isa);
    Ok(())
}

/// [`decompress_with`] into little-endian f32 bytes (four per payload byte), as the engine
/// holds them. Errors as [`decompress`], the output counted in bytes.
pub fn decompress_le(
    scales: &[u8],
    payload: &[u8],
    block: usize,
    out: &mut [u8],
    max_isa: Isa,
) -> Result<(), GceError> {
    check_out_bytes(scales, payload, block, out, 4)?;
    decompress_checked(scales, payload, block, Out::Le(out), max_isa);
    Ok(())
}

/// [`decompress_le`] rounded to bf16 in the same pass: two little-endian bytes per payload
/// byte, each the bf16 that [`crate::convert`] from f32 (RNE, no saturation) gives for the
/// decompressed f32 — an f32 past bf16's largest finite value becomes inf, a NaN stays the
/// quiet NaN with its sign. The AVX-512 kernel rounds in registers; other levels decompress
/// stretches to f32 with their kernel and round them. Errors as [`decompress_le`], the output
/// counted in bytes (two per element).
pub fn decompress_bf16_le(
    scales: &[u8],
    payload: &[u8],
    block: usize,
    out: &mut [u8],
    max_isa: Isa,
) -> Result<(), GceError> {
    check_out_bytes(scales, payload, block, out, 2)?;
    let done = if max_isa == Isa::Portable {
        0
    } else {
        let mut job = ExpandJob { scales, payload, block, out: &mut *out, bf16: true, done: 0 };
        dispatch(&mut job, max_isa);
        job.done
    };
    // The rest: whole blocks decompressed to f32 in stretches of at most STRETCH values, then
    // rounded; a block longer than a stretch element by element.
    const STRETCH: usize = 256;
    let per = (STRETCH / block).max(1);
    let mut wide = [0u8; 4 * STRETCH];
    let mut b = done;
    while b < scales.len() {
        let k = per.min(scales.len() - b);
        let (start, end) = (b * block, ((b + k) * block).min(payload.len()));
        let round = |bits: u32| crate::float::narrow_bf16_rne(bits, false, true).to_le_bytes();
        if end - start <= STRETCH {
            let wide = &mut wide[..4 * (end - start)];
            decompress_checked(&scales[b..b + k], &payload[start..end], block, Out::Le(wide), max_isa);
            for (o, w) in out[2 * start..2 * end].chunks_exact_mut(2).zip(wide.chunks_exact(4)) {
                o.copy_from_slice(&round(u32::from_le_bytes([w[0], w[1], w[2], w[3]])));
            }
        } else {
            let e = scale_exponent_of_byte(scales[b]);
            for (i, q) in (start..end).zip(&payload[start..end]) {
                out[2 * i..2 * i + 2].copy_from_slice(&round(decode_element(*q, e).to_bits()));
            }
        }
        b += k;
    }
    Ok(())
}

/// The code path [`compress_with`] and [`decompress_with`] take at `max_isa` on this machine,
/// for a block size that is a multiple of 16: `avx512` or `avx2` (the vector kernels), or
/// `portable` (the element loops, which also run every other block size and a partial last
/// block).
pub fn kernel_level(max_isa: Isa) -> &'static str {
    struct Probe(&'static str);
    impl Kernel for Probe {
        fn run<C: Caps>(&mut self) {
            self.0 = if C::GCE { C::LEVEL } else { "portable" };
        }
    }
    let mut probe = Probe("portable");
    dispatch(&mut probe, max_isa);
    probe.0
}

/// The scale-table check shared by both directions: a nonzero block and one scale byte per
/// block of `elems` values.
fn check_scales(scales: &[u8], elems: usize, block: usize) -> Result<(), GceError> {
    let expected = scale_count(elems, block)?;
    if scales.len() != expected {
        return Err(GceError::ScaleCount { got: scales.len(), expected, elems, block });
    }
    Ok(())
}

/// A byte-output expansion's size checks: the scale table for `payload`, and `width` output
/// bytes per payload byte.
fn check_out_bytes(scales: &[u8], payload: &[u8], block: usize, out: &[u8], width: usize) -> Result<(), GceError> {
    check_scales(scales, payload.len(), block)?;
    let expected = payload.len().saturating_mul(width);
    if out.len() != expected {
        return Err(GceError::OutputBytes { got: out.len(), expected });
    }
    Ok(())
}

/// [`compress`]'s size checks for `elems` values.
fn check_compress(elems: usize, block: usize, scales: &[u8], payload: &[u8]) -> Result<(), GceError> {
    check_scales(scales, elems, block)?;
    if payload.len() != elems {
        return Err(GceError::PayloadLength { got: payload.len(), expected: elems });
    }
    Ok(())
}

/// The values to compress: f32s, or their little-endian bytes.
#[derive(Clone, Copy)]
enum Values<'a> {
    F32(&'a [f32]),
    Le(&'a [u8]),
}

impl<'a> Values<'a> {
    fn len(self) -> usize {
        match self {
            Values::F32(v) => v.len(),
            Values::Le(b) => b.len() / 4,
        }
    }

    /// Value `i` (in bounds: the caller's loops stay below [`Values::len`]).
    fn get(self, i: usize) -> f32 {
        match self {
            Values::F32(v) => v[i],
            Values::Le(b) => f32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]]),
        }
    }

    /// The little-endian bytes the vector kernels read.
    fn le_bytes(self) -> Option<&'a [u8]> {
        match self {
            Values::F32(v) => crate::simd::f32_le_bytes(v),
            Values::Le(b) => Some(b),
        }
    }
}

/// Where decompressed values go: f32s, or their little-endian bytes.
enum Out<'a> {
    F32(&'a mut [f32]),
    Le(&'a mut [u8]),
}

impl Out<'_> {
    /// Writes value `i` (in bounds: the caller's loops stay below the payload length).
    fn set(&mut self, i: usize, y: f32) {
        match self {
            Out::F32(v) => v[i] = y,
            Out::Le(b) => b[4 * i..4 * i + 4].copy_from_slice(&y.to_le_bytes()),
        }
    }

    /// The little-endian bytes the vector kernels write.
    fn le_bytes(&mut self) -> Option<&mut [u8]> {
        match self {
            Out::F32(v) => crate::simd::f32_le_bytes_mut(v),
            Out::Le(b) => Some(b),
        }
    }
}

/// The vector compressor's job: whole blocks, at the best level allowed.
struct CompressJob<'a> {
    src: &'a [u8],
    block: usize,
    scales: &'a mut [u8],
    payload: &'a mut [u8],
    /// Blocks the kernel did.
    done: usize,
}

impl Kernel for CompressJob<'_> {
    #[inline(always)]
    fn run<C: Caps>(&mut self) {
        self.done = C::gce_compress(self.src, self.block, self.scales, self.payload);
    }
}

/// The vector expander's job: whole blocks, at the best level allowed, into f32 or (`bf16`)
/// rounded to bf16.
struct ExpandJob<'a> {
    scales: &'a [u8],
    payload: &'a [u8],
    block: usize,
    out: &'a mut [u8],
    bf16: bool,
    /// Blocks the kernel did.
    done: usize,
}

impl Kernel for ExpandJob<'_> {
    #[inline(always)]
    fn run<C: Caps>(&mut self) {
        self.done = if self.bf16 {
            C::gce_expand_bf16(self.scales, self.payload, self.block, self.out)
        } else {
            C::gce_expand(self.scales, self.payload, self.block, self.out)
        };
    }
}

/// Compresses checked buffers: the vector kernel's whole blocks, then the element loop.
fn compress_checked(values: Values<'_>, block: usize, scales: &mut [u8], payload: &mut [u8], max_isa: Isa) {
    let done = match values.le_bytes() {
        Some(src) if max_isa != Isa::Portable => {
            let mut job = CompressJob { src, block, scales: &mut *scales, payload: &mut *payload, done: 0 };
            dispatch(&mut job, max_isa);
            job.done
        }
        _ => 0,
    };
    compress_blocks(values, block, scales, payload, done);
}

/// The element loop (the reference): blocks `first..` of checked buffers.
fn compress_blocks(values: Values<'_>, block: usize, scales: &mut [u8], payload: &mut [u8], first: usize) {
    let n = values.len();
    for (b, s) in scales.iter_mut().enumerate().skip(first) {
        let (start, end) = (b * block, (b * block).saturating_add(block).min(n));
        let e = amax_scale_exponent(finite_amax((start..end).map(|i| values.get(i))));
        *s = scale_byte(e);
        for (i, q) in (start..end).zip(&mut payload[start..end]) {
            *q = encode_element(values.get(i), e);
        }
    }
}

/// Decompresses checked buffers: the vector kernel's whole blocks, then the element loop.
fn decompress_checked(scales: &[u8], payload: &[u8], block: usize, mut out: Out<'_>, max_isa: Isa) {
    let done = match out.le_bytes() {
        Some(bytes) if max_isa != Isa::Portable => {
            let mut job = ExpandJob { scales, payload, block, out: bytes, bf16: false, done: 0 };
            dispatch(&mut job, max_isa);
            job.done
        }
        _ => 0,
    };
    // The element loop (the reference) for the rest.
    for (b, s) in scales.iter().enumerate().skip(done) {
        let e = scale_exponent_of_byte(*s);
        let (start, end) = (b * block, (b * block).saturating_add(block).min(payload.len()));
        for (i, q) in (start..end).zip(&payload[start..end]) {
            out.set(i, decode_element(*q, e));
        }
    }
}
