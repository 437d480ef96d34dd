//! The AVX2 level (AVX2, FMA, F16C, BMI1, BMI2): the entry point that [`super::dispatch`]
//! calls once the CPU has every feature, and the level's register-resident kernels: reduces into
//! bf16, ADD into fp16, widening of bf16 into fp32, the fused ADD of one-byte floats and the GCE
//! codec's compress and expand.
//! Compiled only for x86-64 with `std`.

use super::{Bf16Reduce, Bf16Widen, Caps, F16Add, FusedFp8, Kernel, StreamOp};
use crate::float::Fp8Enc;
use crate::types::FloatFormat;

/// Runs `k` with the AVX2 helpers.
///
/// Never inlined: [`Caps::outline`] calls it from inside another kernel's copy at this level.
///
/// # Safety
/// The CPU must have avx2, fma, f16c, bmi1 and bmi2.
#[target_feature(enable = "avx2,fma,f16c,bmi1,bmi2")]
#[inline(never)]
pub(super) unsafe fn run<K: Kernel>(k: &mut K) {
    k.run::<Avx2Caps>();
}

/// The AVX2 helpers. Private: only [`run`] names this type, and `run` runs only after the CPU
/// has been checked for every feature the helpers use.
struct Avx2Caps;

impl Caps for Avx2Caps {
    const LEVEL: &'static str = "avx2";
    #[inline(always)]
    fn outline<K: Kernel>(k: &mut K) {
        // SAFETY: `Avx2Caps` is private to this module and named only inside `run`, which
        // `dispatch` calls only after `is_x86_feature_detected!` confirmed avx2, fma, f16c,
        // bmi1 and bmi2: every feature `run` is compiled for; it has no other requirement.
        unsafe { run(k) }
    }
    const BF16_REDUCE: bool = true;
    const F16_ADD: bool = true;
    #[inline(always)]
    fn add_to_f16(k: &F16Add, srcs: &[&[u8]], out: &mut [u8]) -> usize {
        // SAFETY: only reachable from `run`, after `is_x86_feature_detected!` confirmed avx2
        // and f16c (the features `add_to_f16_avx2` needs). `add_to_f16_checked` checks every
        // length before it touches memory.
        unsafe { add_to_f16_checked(k, srcs, out) }
    }
    #[inline(always)]
    fn reduce_to_bf16(k: &Bf16Reduce, srcs: &[&[u8]], out: &mut [u8], lo: u32) -> usize {
        // SAFETY: only reachable from `run`, after `is_x86_feature_detected!` confirmed avx2
        // and fma (the features `reduce_to_bf16_avx2` needs). `reduce_to_bf16_checked` checks every
        // length before it touches memory.
        unsafe { reduce_to_bf16_checked(k, srcs, out, lo) }
    }
    const FUSED_FP8: FusedFp8 = FusedFp8::SameFormat;
    #[inline(always)]
    fn fp8_add_encode(
        _table: &[u16; 128],
        in_fmt: FloatFormat,
        p: &Fp8Enc,
        srcs: &[&[u8]],
        out: &mut [u8],
        start: usize,
    ) -> usize {
        // SAFETY: only reachable from `run`, after `is_x86_feature_detected!` confirmed avx2
        // (the feature `fp8_add_scaled_avx2` needs). `fp8_add_scaled_checked` checks every
        // length before it touches memory.
        unsafe { fp8_add_scaled_checked(in_fmt, p, srcs, out, start) }
    }
    const BF16_WIDEN: bool = true;
    #[inline(always)]
    fn widen_bf16(k: &Bf16Widen, src: &[u8], out: &mut [u8]) -> usize {
        // SAFETY: only reachable from `run`, after `is_x86_feature_detected!` confirmed avx2
        // (the feature `widen_bf16_avx2` needs). `widen_bf16_checked` checks every length
        // before it touches memory.
        unsafe { widen_bf16_checked(k, src, out) }
    }
    const GCE: bool = true;
    #[inline(always)]
    fn gce_compress(src: &[u8], block: usize, scales: &mut [u8], payload: &mut [u8]) -> usize {
        // SAFETY: only reachable from `run`, after `is_x86_feature_detected!` confirmed avx2
        // (the feature `gce_compress_checked` needs). It checks every length before it touches
        // memory.
        unsafe { gce_compress_checked(src, block, scales, payload) }
    }
    #[inline(always)]
    fn gce_expand(scales: &[u8], payload: &[u8], block: usize, out: &mut [u8]) -> usize {
        // SAFETY: only reachable from `run`, after `is_x86_feature_detected!` confirmed avx2
        // and f16c (the features `gce_expand_checked` needs). It checks every length before it
        // touches memory.
        unsafe { gce_expand_checked(scales, payload, block, out) }
    }
}

/// Elements per block of the register-resident bf16 kernel: one 32-byte output store.
const BF16_BLOCK: usize = 16;

/// How far ahead (bytes) of each source block the kernel asks for the cache line.
const PF_BF16: usize = 2048;

/// Checks an [`Caps::reduce_to_bf16`] call and runs [`reduce_to_bf16_avx2`] on its whole blocks;
/// returns the elements done (0 when the call does not qualify, see `super::stream_call`).
///
/// # Safety
/// The CPU must have avx2 and fma.
#[target_feature(enable = "avx2,fma")]
unsafe fn reduce_to_bf16_checked(k: &Bf16Reduce, srcs: &[&[u8]], out: &mut [u8], lo: u32) -> usize {
    let in_w = if k.f32_in { 4 } else { 2 };
    let Some((blocks, ptrs)) = super::stream_call(srcs, out, BF16_BLOCK, in_w, 2, k.streaming) else { return 0 };
    let ptrs = &ptrs[..srcs.len()];
    let o = out.as_mut_ptr();
    let rk = k.sr_run_key.unwrap_or(0);
    let keep = k.keep_sign;
    macro_rules! go {
        ($($f:literal $s:literal $t:literal $n:literal),*) => {
            match (k.f32_in, k.sr_run_key.is_some(), k.saturate, k.streaming) {
                // SAFETY: the CPU feature was confirmed by the caller (this function's
                // contract). `ptrs` holds one pointer per source, each to at least
                // `blocks · 16 · in_w` readable bytes (checked by `stream_call`), `o` points to
                // `blocks · 32` writable bytes (`out.len() >= 2 · blocks · 16`), aligned to 64
                // bytes when streaming (checked by `stream_call`); the slices outlive the call.
                $(($f, $s, $t, $n) => unsafe { reduce_to_bf16_avx2::<$f, $s, $t, $n>(&k.op, ptrs, o, blocks, lo, rk, keep) },)*
            }
        };
    }
    go!(false false false false, false false false true, false false true false, false false true true,
        false true false false, false true false true, false true true false, false true true true,
        true false false false, true false false true, true false true false, true false true true,
        true true false false, true true false true, true true true false, true true true true);
    blocks * BF16_BLOCK
}

/// The register-resident AVX2 reduce into bf16 ([`StreamOp`]: ADD, FMA, MIN / MAX): the
/// AVX-512 kernel's steps on 256-bit vectors
/// (16 elements per block: one 32-byte load per bf16 source or two per fp32 source, even and
/// odd elements as fp32, IEEE fp32 additions in source order, integer RNE / SR rounding,
/// saturation as a minimum on the magnitude), with NaN found by a signed compare of the
/// magnitude against infinity — only in a block that one unordered compare of its two halves
/// shows to hold a NaN, the rare path — and the halves merged by a word blend (bf16 sources) or
/// a pack and a 64-bit permute (fp32 sources). Each source line is prefetched once. The
/// operation is decided once per call, one loop each; MIN / MAX of two or more bf16 sources
/// without a clamp run in 16-bit integer keys (`minmax_key_blocks!`). Calls with fewer than
/// [`super::READ_STREAMS`] sources read their blocks as interleaved stretches (`for_blocks!`).
///
/// # Safety
/// The CPU must have avx2 and fma; `srcs` is non-empty and each pointer reads `blocks · 16` elements
/// (2 bytes each, 4 when `F32_IN`); `out` writes `blocks · 32` bytes, aligned to 32 when `NT`.
#[target_feature(enable = "avx2,fma")]
unsafe fn reduce_to_bf16_avx2<const F32_IN: bool, const SR: bool, const SAT: bool, const NT: bool>(
    op: &StreamOp,
    srcs: &[*const u8],
    out: *mut u8,
    blocks: usize,
    lo: u32,
    rk: u32,
    keep_sign: bool,
) {
    use core::arch::x86_64::*;
    let Some((&head, rest)) = srcs.split_first() else { return };
    let splat = |v: u32| _mm256_set1_epi32(v as i32);
    let high_half = splat(0xffff_0000);
    let one = splat(1);
    let half_m1 = splat(0x7fff);
    let mag_high = splat(0x7fff_0000);
    let sat_lim = splat(0x7f7f_0000);
    let sign = splat(0x8000_0000);
    let abs = splat(0x7fff_ffff);
    let inf = splat(0x7f80_0000);
    let qnan = splat(0x7fc0_0000);
    let nan_sign = splat(if keep_sign { 0x8000_0000 } else { 0 });
    let rkv = splat(rk);
    let (c1, c2) = (splat(0x85eb_ca6b), splat(0xc2b2_ae35));
    let lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    let base = splat(lo);
    let (idx0_at0, idx1_at0) = if F32_IN {
        (_mm256_add_epi32(base, lanes), _mm256_add_epi32(base, _mm256_add_epi32(lanes, splat(8))))
    } else {
        let even = _mm256_add_epi32(base, _mm256_slli_epi32::<1>(lanes));
        (even, _mm256_add_epi32(even, one))
    };
    let in_bytes = if F32_IN { 64 } else { 32 };
    // One bf16 block's 32 raw bytes of a source, its line prefetched once (a block is half a
    // line).
    macro_rules! raw {
        ($p:expr, $off:expr) => {{
            let p: *const u8 = $p;
            // A hint only: prefetching never faults, and the address is not dereferenced.
            if $off % 64 == 0 {
                _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add($off + PF_BF16).cast());
            }
            // SAFETY: `$off + 32 <= blocks · 32` bytes the caller made readable.
            unsafe { _mm256_loadu_si256(p.add($off).cast()) }
        }};
    }
    // One block of a source as fp32: even and odd halves (bf16), or two loads (fp32).
    macro_rules! load {
        ($p:expr, $off:expr) => {{
            if F32_IN {
                let p: *const u8 = $p;
                // A hint only: prefetching never faults, and the address is not dereferenced.
                _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add($off + PF_BF16).cast());
                // SAFETY: `$off + 64 <= blocks · 64` bytes the caller made readable.
                unsafe { (_mm256_loadu_ps(p.add($off).cast()), _mm256_loadu_ps(p.add($off + 32).cast())) }
            } else {
                let w = raw!($p, $off);
                (_mm256_castsi256_ps(_mm256_slli_epi32::<16>(w)), _mm256_castsi256_ps(_mm256_and_si256(w, high_half)))
            }
        }};
    }
    // `$nan`: whether the block holds a NaN sum (a literal: the NaN selects are compiled only
    // into the block's rare path).
    macro_rules! round {
        ($x:expr, $idx:expr, $nan:literal) => {{
            let xi = _mm256_castps_si256($x);
            let t = if SR {
                // The high 16 bits of `fmix32(lo ^ rk)`, as `crate::rng::fmix32`. Its last step,
                // `h ^= h >> 16`, leaves the high 16 bits as they are, so they are taken before it.
                let mut h = _mm256_xor_si256($idx, rkv);
                h = _mm256_xor_si256(h, _mm256_srli_epi32::<16>(h));
                h = _mm256_mullo_epi32(h, c1);
                h = _mm256_xor_si256(h, _mm256_srli_epi32::<13>(h));
                h = _mm256_mullo_epi32(h, c2);
                _mm256_add_epi32(xi, _mm256_srli_epi32::<16>(h))
            } else {
                let lsb = _mm256_and_si256(_mm256_srli_epi32::<16>(xi), one);
                _mm256_add_epi32(_mm256_add_epi32(xi, half_m1), lsb)
            };
            let t = if SAT {
                let mag = _mm256_min_epu32(_mm256_and_si256(t, mag_high), sat_lim);
                _mm256_or_si256(mag, _mm256_and_si256(xi, sign))
            } else {
                t
            };
            if $nan {
                // The magnitude is below 2^31, so the signed compare is the unsigned one.
                let is_nan = _mm256_cmpgt_epi32(_mm256_and_si256(xi, abs), inf);
                let nan = _mm256_or_si256(_mm256_and_si256(xi, nan_sign), qnan);
                _mm256_blendv_epi8(t, nan, is_nan)
            } else {
                t
            }
        }};
    }
    let qnan_f = _mm256_castsi256_ps(splat(f32::NAN.to_bits()));
    // The model's MIN / MAX (`crate::fp32_tiles::minmax32`): the pick, equal values' AND / OR, NaN.
    macro_rules! minmax {
        ($a:expr, $b:expr, $max:expr) => {{
            let (a, b): (__m256, __m256) = ($a, $b);
            let (pick, both) = if $max {
                (_mm256_max_ps(a, b), _mm256_and_ps(a, b))
            } else {
                (_mm256_min_ps(a, b), _mm256_or_ps(a, b))
            };
            let eq = _mm256_cmp_ps::<_CMP_EQ_OQ>(a, b);
            let nan = _mm256_cmp_ps::<_CMP_UNORD_Q>(a, b);
            _mm256_blendv_ps(_mm256_blendv_ps(pick, both, eq), qnan_f, nan)
        }};
    }
    let streams = super::READ_STREAMS / srcs.len();
    let group = super::STRETCH_GROUP_ELEMS / BF16_BLOCK;
    // Rounds block `$b`'s sums, merges the halves and stores them.
    macro_rules! finish {
        ($b:expr, $a0:expr, $a1:expr) => {{
            let b: usize = $b;
            let (a0, a1): (__m256, __m256) = ($a0, $a1);
            // The element indices of the block's even and odd halves (used by SR only).
            let at = splat((b * BF16_BLOCK) as u32);
            let (idx0, idx1) = (_mm256_add_epi32(idx0_at0, at), _mm256_add_epi32(idx1_at0, at));
            // One unordered compare finds a NaN in either half; the NaN selects run only then.
            let (r0, r1) = if _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_UNORD_Q>(a0, a1)) != 0 {
                (round!(a0, idx0, true), round!(a1, idx1, true))
            } else {
                (round!(a0, idx0, false), round!(a1, idx1, false))
            };
            let v = if F32_IN {
                // Per 128-bit lane: 4 results of r0, then 4 of r1; the permute puts them in order.
                let packed = _mm256_packus_epi32(_mm256_srli_epi32::<16>(r0), _mm256_srli_epi32::<16>(r1));
                _mm256_permute4x64_epi64::<0xd8>(packed)
            } else {
                _mm256_blend_epi16::<0xaa>(_mm256_srli_epi32::<16>(r0), r1)
            };
            // SAFETY: `b · 32 + 32 <= blocks · 32` bytes the caller made writable, 32-byte
            // aligned when streaming.
            unsafe {
                let dst = out.add(b * 32);
                if NT { _mm256_stream_si256(dst.cast(), v) } else { _mm256_storeu_si256(dst.cast(), v) }
            }
        }};
    }
    // The running MIN or MAX over the sources, then the clamp; `$max` a literal, so that each
    // loop keeps only its own operation.
    macro_rules! minmax_blocks {
        ($max:literal, $clamp:expr) => {{
            let clamp: Option<f32> = $clamp;
            for_blocks!(blocks, streams, group, |b| {
                let off = b * in_bytes;
                let (mut a0, mut a1) = load!(head, off);
                for &p in rest {
                    let (x0, x1) = load!(p, off);
                    a0 = minmax!(a0, x0, $max);
                    a1 = minmax!(a1, x1, $max);
                }
                if let Some(c) = clamp {
                    let c = _mm256_set1_ps(c);
                    a0 = minmax!(a0, c, $max);
                    a1 = minmax!(a1, c, $max);
                }
                finish!(b, a0, a1);
            })
        }};
    }
    // MIN / MAX of two or more bf16 sources without a clamp, on 16 elements per vector: each
    // bf16 `w` mapped to the 16-bit integer key `w ^ ((w >> 15) & 0x7fff)` (a negative value's
    // magnitude bits flipped), whose signed order is the values' order with −0 below +0 — so
    // the keys' MAX / MIN is the model's MAX / MIN of non-NaN values, equal values giving their
    // AND / OR (the same bits, or +0 / −0 for a pair of zeros). The map is its own inverse. A
    // NaN in any source (largest magnitude above 0x7f80) gives the canonical NaN, as the model
    // does once two values meet. The result, exact in bf16, then takes `finish!`'s output
    // rules.
    macro_rules! minmax_key_blocks {
        ($max:literal) => {{
            let low15 = _mm256_set1_epi16(0x7fff);
            let nan_lim = _mm256_set1_epi16(0x7f80);
            let qnan16 = _mm256_set1_epi16(0x7fc0);
            macro_rules! key {
                ($w:expr) => {{
                    let w: __m256i = $w;
                    _mm256_xor_si256(w, _mm256_and_si256(_mm256_srai_epi16::<15>(w), low15))
                }};
            }
            for_blocks!(blocks, streams, group, |b| {
                let off = b * in_bytes;
                let w = raw!(head, off);
                let (mut k, mut mag) = (key!(w), _mm256_and_si256(w, low15));
                for &p in rest {
                    let w = raw!(p, off);
                    k = if $max { _mm256_max_epi16(k, key!(w)) } else { _mm256_min_epi16(k, key!(w)) };
                    mag = _mm256_max_epi16(mag, _mm256_and_si256(w, low15));
                }
                // Magnitudes are below 2^15, so the signed compare is the unsigned one.
                let r = _mm256_blendv_epi8(key!(k), qnan16, _mm256_cmpgt_epi16(mag, nan_lim));
                let a0 = _mm256_castsi256_ps(_mm256_slli_epi32::<16>(r));
                let a1 = _mm256_castsi256_ps(_mm256_and_si256(r, high_half));
                finish!(b, a0, a1);
            })
        }};
    }
    // One loop per operation (the operation is decided once per call, and a loop holds only
    // the constants its operation uses).
    match *op {
        StreamOp::Add => for_blocks!(blocks, streams, group, |b| {
            let off = b * in_bytes;
            let (mut a0, mut a1) = load!(head, off);
            for &p in rest {
                let (x0, x1) = load!(p, off);
                a0 = _mm256_add_ps(a0, x0);
                a1 = _mm256_add_ps(a1, x1);
            }
            finish!(b, a0, a1);
        }),
        StreamOp::Fma(scales) => for_blocks!(blocks, streams, group, |b| {
            let off = b * in_bytes;
            let (mut a0, mut a1) = (_mm256_setzero_ps(), _mm256_setzero_ps());
            for (&p, &sc) in srcs.iter().zip(&scales) {
                let (x0, x1) = load!(p, off);
                let s = _mm256_set1_ps(sc);
                a0 = _mm256_fmadd_ps(x0, s, a0);
                a1 = _mm256_fmadd_ps(x1, s, a1);
            }
            finish!(b, a0, a1);
        }),
        StreamOp::MinMax { max: true, clamp: None } if !F32_IN && !rest.is_empty() => minmax_key_blocks!(true),
        StreamOp::MinMax { max: false, clamp: None } if !F32_IN && !rest.is_empty() => minmax_key_blocks!(false),
        StreamOp::MinMax { max: true, clamp } => minmax_blocks!(true, clamp),
        StreamOp::MinMax { max: false, clamp } => minmax_blocks!(false, clamp),
    }
    if NT {
        _mm_sfence();
    }
}

/// Checks an [`Caps::add_to_f16`] call and runs [`add_to_f16_avx2`] on its whole blocks of 16
/// elements; returns the elements done (0 when the call does not qualify, see
/// `super::stream_call`).
///
/// # Safety
/// The CPU must have avx2 and f16c.
#[target_feature(enable = "avx2,f16c")]
unsafe fn add_to_f16_checked(k: &F16Add, srcs: &[&[u8]], out: &mut [u8]) -> usize {
    let Some((blocks, ptrs)) = super::stream_call(srcs, out, BF16_BLOCK, 2, 2, k.streaming) else { return 0 };
    let ptrs = &ptrs[..srcs.len()];
    let o = out.as_mut_ptr();
    // SAFETY: the CPU features were confirmed by the caller (this function's contract).
    // `ptrs` holds one pointer per source, each to at least `blocks · 32` readable bytes
    // (checked by `stream_call`), `o` points to `blocks · 32` writable bytes, aligned to 64 bytes when
    // streaming (checked by `stream_call`); the slices outlive the call.
    unsafe { by_sat_nt!(k.saturate, k.streaming, add_to_f16_avx2(ptrs, o, blocks, k.keep_sign)) }
    blocks * BF16_BLOCK
}

/// The register-resident AVX2 + F16C ADD of fp16 into fp16: the AVX-512 kernel's steps on
/// 256-bit vectors (16 elements per block: one 32-byte load per source, widened by `vcvtph2ps`,
/// IEEE fp32 additions in source order, rounded by `vcvtps2ph` with RNE, saturation as a
/// minimum on the magnitude, NaN found by a compare of the magnitude against infinity).
///
/// # Safety
/// The CPU must have avx2 and f16c; `srcs` is non-empty and each pointer reads `blocks · 32`
/// bytes; `out` writes `blocks · 32` bytes, aligned to 32 when `NT`.
#[target_feature(enable = "avx2,f16c")]
unsafe fn add_to_f16_avx2<const SAT: bool, const NT: bool>(
    srcs: &[*const u8],
    out: *mut u8,
    blocks: usize,
    keep_sign: bool,
) {
    use core::arch::x86_64::*;
    let Some((&head, rest)) = srcs.split_first() else { return };
    let abs = _mm256_set1_epi16(0x7fff);
    let inf = _mm256_set1_epi16(0x7c00);
    let max_finite = _mm256_set1_epi16(0x7bff);
    let sign = _mm256_set1_epi16(0x8000u16 as i16);
    let qnan = _mm256_set1_epi16(0x7e00);
    let nan_sign = _mm256_set1_epi16(if keep_sign { 0x8000u16 as i16 } else { 0 });
    macro_rules! load {
        ($p:expr, $off:expr) => {{
            let p: *const u8 = $p;
            // A hint only: prefetching never faults, and the address is not dereferenced.
            _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add($off + PF_BF16).cast());
            // SAFETY: `$off + 32 <= blocks · 32` bytes the caller made readable.
            let w = unsafe { _mm256_loadu_si256(p.add($off).cast()) };
            (_mm256_cvtph_ps(_mm256_castsi256_si128(w)), _mm256_cvtph_ps(_mm256_extracti128_si256::<1>(w)))
        }};
    }
    let streams = super::READ_STREAMS / srcs.len();
    for_blocks!(blocks, streams, super::STRETCH_GROUP_ELEMS / BF16_BLOCK, |b| {
        let off = b * 32;
        let (mut a0, mut a1) = load!(head, off);
        for &p in rest {
            let (x0, x1) = load!(p, off);
            a0 = _mm256_add_ps(a0, x0);
            a1 = _mm256_add_ps(a1, x1);
        }
        let h0 = _mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(a0);
        let h1 = _mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(a1);
        let h = _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(h0), h1);
        let mag = _mm256_and_si256(h, abs);
        // The magnitude is below 2^15, so the signed compare is the unsigned one.
        let is_nan = _mm256_cmpgt_epi16(mag, inf);
        let r = if SAT { _mm256_or_si256(_mm256_min_epu16(mag, max_finite), _mm256_and_si256(h, sign)) } else { h };
        let nan = _mm256_or_si256(_mm256_and_si256(h, nan_sign), qnan);
        let v = _mm256_blendv_epi8(r, nan, is_nan);
        // SAFETY: `b · 32 + 32 <= blocks · 32` bytes the caller made writable, 32-byte aligned
        // when streaming.
        unsafe {
            let dst = out.add(off);
            if NT { _mm256_stream_si256(dst.cast(), v) } else { _mm256_storeu_si256(dst.cast(), v) }
        }
    });
    if NT {
        _mm_sfence();
    }
}

/// Checks a [`Caps::widen_bf16`] call and runs [`widen_bf16_avx2`] on its whole blocks of 16
/// elements; returns the elements done (0 when the call does not qualify, see
/// `super::stream_call`).
///
/// # Safety
/// The CPU must have avx2.
#[target_feature(enable = "avx2")]
unsafe fn widen_bf16_checked(k: &Bf16Widen, src: &[u8], out: &mut [u8]) -> usize {
    let Some((blocks, _)) = super::stream_call(&[src], out, BF16_BLOCK, 2, 4, k.streaming) else { return 0 };
    let (s, o) = (src.as_ptr(), out.as_mut_ptr());
    // SAFETY: the CPU feature was confirmed by the caller (this function's contract). `s`
    // reads at least `blocks · 32` bytes and `o` writes `blocks · 64` (checked by
    // `stream_call`), 64-byte aligned when streaming; the slices outlive the call.
    unsafe { by_sat_nt!(k.saturate, k.streaming, widen_bf16_avx2(s, o, blocks, k.keep_sign)) }
    blocks * BF16_BLOCK
}

/// The register-resident AVX2 widening of bf16 into fp32: the AVX-512 kernel's steps on 256-bit
/// vectors (16 elements per block: one 32-byte load, each half zero-extended in element order
/// and shifted into the high half; NaN and infinity found by compares of the magnitude).
///
/// # Safety
/// The CPU must have avx2; `src` reads `blocks · 32` bytes; `out` writes `blocks · 64` bytes,
/// aligned to 32 when `NT`.
#[target_feature(enable = "avx2")]
unsafe fn widen_bf16_avx2<const SAT: bool, const NT: bool>(
    src: *const u8,
    out: *mut u8,
    blocks: usize,
    keep_sign: bool,
) {
    use core::arch::x86_64::*;
    let abs = _mm256_set1_epi32(0x7fff_ffff);
    let inf = _mm256_set1_epi32(0x7f80_0000);
    let qnan = _mm256_set1_epi32(0x7fc0_0000);
    let nan_sign = _mm256_set1_epi32(if keep_sign { 0x8000_0000u32 as i32 } else { 0 });
    let to_max = _mm256_set1_epi32(0x00ff_ffff);
    let canon = |x: __m256i| {
        let mag = _mm256_and_si256(x, abs);
        // The magnitude is below 2^31, so the signed compare is the unsigned one.
        let is_nan = _mm256_cmpgt_epi32(mag, inf);
        let x = if SAT { _mm256_xor_si256(x, _mm256_and_si256(_mm256_cmpeq_epi32(mag, inf), to_max)) } else { x };
        let nan = _mm256_or_si256(_mm256_and_si256(x, nan_sign), qnan);
        _mm256_blendv_epi8(x, nan, is_nan)
    };
    for_blocks!(blocks, super::READ_STREAMS, super::STRETCH_GROUP_ELEMS / BF16_BLOCK, |b| {
        // A hint only: prefetching never faults, and the address is not dereferenced.
        _mm_prefetch::<_MM_HINT_T0>(src.wrapping_add(b * 32 + PF_BF16).cast());
        // SAFETY: `b · 32 + 32 <= blocks · 32` bytes the caller made readable.
        let (w0, w1) =
            unsafe { (_mm_loadu_si128(src.add(b * 32).cast()), _mm_loadu_si128(src.add(b * 32 + 16).cast())) };
        let lo = canon(_mm256_slli_epi32::<16>(_mm256_cvtepu16_epi32(w0)));
        let hi = canon(_mm256_slli_epi32::<16>(_mm256_cvtepu16_epi32(w1)));
        // SAFETY: `b · 64 + 64 <= blocks · 64` bytes the caller made writable, 64-byte aligned
        // when streaming.
        unsafe {
            let dst = out.add(b * 64);
            if NT {
                _mm256_stream_si256(dst.cast(), lo);
                _mm256_stream_si256(dst.add(32).cast(), hi);
            } else {
                _mm256_storeu_si256(dst.cast(), lo);
                _mm256_storeu_si256(dst.add(32).cast(), hi);
            }
        }
    });
    if NT {
        _mm_sfence();
    }
}

/// How far ahead (bytes) of each source tile the fused fp8 kernel asks for the cache line.
const PF_FP8: usize = 2048;

/// `vpshufb` indices that put the fused fp8 kernel's packed encodings back in element order:
/// per 128-bit lane the packs leave element `j` (0..16) at `(j & 8) + 4 (j & 1) + (j & 7) / 2`
/// (the even elements of a half before its odd ones).
const FP8_PACK_ORDER: [u8; 32] = {
    let mut idx = [0u8; 32];
    let mut j = 0;
    while j < 32 {
        let e = j % 16;
        idx[j] = ((e & 8) + 4 * (e & 1) + (e & 7) / 2) as u8;
        j += 1;
    }
    idx
};

/// Checks a [`Caps::fp8_add_encode`] call and runs [`fp8_add_scaled_avx2`] from `start`; returns
/// where it stopped (`start` when the call does not qualify: see `super::fused_fp8_call`,
/// more than [`crate::spec::MAX_SOURCES`] sources, or an encoding that is not `in_fmt`'s own,
/// see [`FusedFp8::SameFormat`]).
///
/// # Safety
/// The CPU must have avx2.
#[target_feature(enable = "avx2")]
unsafe fn fp8_add_scaled_checked(
    in_fmt: FloatFormat,
    p: &Fp8Enc,
    srcs: &[&[u8]],
    out: &mut [u8],
    start: usize,
) -> usize {
    if !super::fused_fp8_call(srcs, out, start) || !FusedFp8::SameFormat.takes(in_fmt, p) {
        return start;
    }
    let Some((tiles, ptrs)) = super::stream_call(srcs, out, 64, 1, 1, false) else { return start };
    let ptrs = &ptrs[..srcs.len()];
    // The smallest magnitude that is an infinity or a NaN; every larger one is one too.
    let special = if in_fmt.has_inf { in_fmt.exp_mask() } else { in_fmt.exp_mask() | in_fmt.mant_mask() };
    let o = out.as_mut_ptr();
    // SAFETY: the CPU feature was confirmed by the caller (this function's contract). `ptrs`
    // holds one pointer per source, each to at least `tiles · 64` readable bytes, and `o`
    // points to `tiles · 64 = out.len()` writable bytes (checked by `stream_call`); `start` is
    // a tile boundary below `out.len()`; the slices outlive the call.
    unsafe {
        match in_fmt.mbits {
            2 => fp8_add_scaled_avx2::<3, 21>(ptrs, o, start, tiles * 64, special, p),
            3 => fp8_add_scaled_avx2::<4, 20>(ptrs, o, start, tiles * 64, special, p),
            4 => fp8_add_scaled_avx2::<5, 19>(ptrs, o, start, tiles * 64, special, p),
            // No one-byte format here keeps another mantissa width: the caller's tile loop.
            _ => start,
        }
    }
}

/// The fused AVX2 ADD of one-byte float sources into a format of their own grid — the same
/// exponent bias and mantissa width, so the same format or e4m3 ↔ e4m3fn (see
/// [`Caps::fp8_add_encode`] and [`FusedFp8::SameFormat`]) — computed in the format's **scaled
/// domain**: each finite byte `s·m` (sign `s`, magnitude bits `m`) read as the fp32 bits
/// `s << 31 | m << (23 - mbits)`, which is the value times 2^(bias − 127) (normal bytes get the
/// exponent field of their own format, subnormal bytes become fp32 subnormals of the same
/// ratio). Why that gives the portable bits:
/// - Every one-byte value is a multiple of its format's quantum q = 2^(1 − bias − mbits), so
///   every fp32 sum of them in source order is too (an exact sum is; a rounded one has an ulp
///   of at least q). Scaled, q becomes 2^(−126 − mbits), a multiple of fp32's smallest
///   subnormal: a scaled sum below 2^−126 is exact, one above rounds at the same relative
///   place as the unscaled sum. So each scaled sum is exactly the portable fp32 sum times
///   2^(bias − 127), and no sum overflows.
/// - In the scaled domain the format's own encoding is the fp32 bits shifted right by
///   `S0 = 23 − mbits` (the exponent fields coincide, and subnormals continue the same integer
///   grid), so RNE is the integer `(a + half − 1 + lsb) >> S0` for normal and subnormal results
///   alike, and overflow is the minimum against `p.over` (as in the portable encoder).
///
/// A tile whose sources hold an infinity or a NaN (a magnitude of at least `special`) has no
/// scaled value: the kernel returns its start, unstored, for the caller's tile loop.
///
/// The price on Intel cores: one-byte subnormals are fp32 subnormals here, and fp32 additions
/// among them take microcode assists there (measured, and why the AVX-512 levels keep the
/// unscaled table domain: `fp8_add_encode_vbmi` in `avx512.rs`). On that Xeon this kernel ran
/// 6.6 GB/s in cache, where it ran 15.8 GB/s in L2 on the AMD Zen 3 it was written on — still
/// twice the tile loop.
///
/// Per 32 elements of a source: one 32-byte load, two byte → word unpacks (byte in the high
/// half), an arithmetic shift by `SH = 1 + mbits` and a mask (sign bit and magnitude, i.e. the
/// high half of the scaled fp32), then the even and odd words as fp32 (shift / mask, as the
/// bf16 kernel). The order is the unpacks' (in 128-bit lanes), the same for every source.
/// The encoder rounds each sum's magnitude in its dword, packs the magnitudes to bytes with
/// unsigned saturation and the sums themselves with signed saturation (which keeps each sign
/// down to the byte), ORs the sign bits in and puts the 32 bytes back in element order with
/// one `vpshufb` ([`FP8_PACK_ORDER`]).
///
/// # Safety
/// The CPU must have avx2; `srcs` is non-empty and each pointer reads `end` bytes; `out` writes
/// `end` bytes; `start` and `end` are multiples of 64.
#[target_feature(enable = "avx2")]
unsafe fn fp8_add_scaled_avx2<const SH: i32, const S0: i32>(
    srcs: &[*const u8],
    out: *mut u8,
    start: usize,
    end: usize,
    special: u32,
    p: &Fp8Enc,
) -> usize {
    use core::arch::x86_64::*;
    let Some((&head, rest)) = srcs.split_first() else { return start };
    let zero = _mm256_setzero_si256();
    // The scaled fp32's high half: the sign and the magnitude bits, `m << (7 - mbits)`.
    let word_mask = _mm256_set1_epi16((0x8000 | (0x7f << (8 - SH))) as u16 as i16);
    let high_half = _mm256_set1_epi32(0xffff_0000u32 as i32);
    let abs = _mm256_set1_epi32(0x7fff_ffff);
    let one = _mm256_set1_epi32(1);
    let half_m1 = _mm256_set1_epi32(p.half_m1 as i32);
    let over = _mm256_set1_epi32(p.over as i32);
    let sign_byte = _mm256_set1_epi8(0x80u8 as i8);
    // SAFETY: the table holds 32 bytes; unaligned load.
    let in_order = unsafe { _mm256_loadu_si256(FP8_PACK_ORDER.as_ptr().cast()) };
    // Magnitudes doubled (the sign shifted out) against the special limit doubled.
    let special2 = _mm256_set1_epi8((special << 1) as u8 as i8);
    macro_rules! decode {
        ($p:expr, $off:expr, $seen:ident) => {{
            let p: *const u8 = $p;
            // SAFETY: `$off + 32 <= end` bytes the caller made readable.
            let b = unsafe { _mm256_loadu_si256(p.add($off).cast()) };
            $seen = _mm256_max_epu8($seen, _mm256_add_epi8(b, b));
            let lo = _mm256_and_si256(_mm256_srai_epi16::<SH>(_mm256_unpacklo_epi8(zero, b)), word_mask);
            let hi = _mm256_and_si256(_mm256_srai_epi16::<SH>(_mm256_unpackhi_epi8(zero, b)), word_mask);
            [
                _mm256_castsi256_ps(_mm256_slli_epi32::<16>(lo)),
                _mm256_castsi256_ps(_mm256_and_si256(lo, high_half)),
                _mm256_castsi256_ps(_mm256_slli_epi32::<16>(hi)),
                _mm256_castsi256_ps(_mm256_and_si256(hi, high_half)),
            ]
        }};
    }
    // One scaled sum vector → eight magnitude encodings, one per dword (at most `p.over`, which
    // is below 0x80).
    macro_rules! magnitude {
        ($x:expr) => {{
            let a = _mm256_and_si256($x, abs);
            let lsb = _mm256_and_si256(_mm256_srli_epi32::<S0>(a), one);
            _mm256_min_epu32(_mm256_srli_epi32::<S0>(_mm256_add_epi32(_mm256_add_epi32(a, half_m1), lsb)), over)
        }};
    }
    // 32 elements at `$off`: the sums of every source, encoded in element order.
    macro_rules! block {
        ($off:expr, $seen:ident) => {{
            let off: usize = $off;
            let mut acc = decode!(head, off, $seen);
            for &s in rest {
                let x = decode!(s, off, $seen);
                for (a, x) in acc.iter_mut().zip(x) {
                    *a = _mm256_add_ps(*a, x);
                }
            }
            let [e0, o0, e1, o1] = acc;
            let (e0, o0) = (_mm256_castps_si256(e0), _mm256_castps_si256(o0));
            let (e1, o1) = (_mm256_castps_si256(e1), _mm256_castps_si256(o1));
            // The magnitudes, and the sums' signs through signed saturating packs (a negative
            // dword stays negative down to a byte), in the packs' order: per 128-bit lane the
            // elements 0 2 4 6 1 3 5 7 8 10 12 14 9 11 13 15 of the lane's sixteen.
            let mags = _mm256_packus_epi16(
                _mm256_packus_epi32(magnitude!(e0), magnitude!(o0)),
                _mm256_packus_epi32(magnitude!(e1), magnitude!(o1)),
            );
            let signs = _mm256_packs_epi16(_mm256_packs_epi32(e0, o0), _mm256_packs_epi32(e1, o1));
            _mm256_shuffle_epi8(_mm256_or_si256(mags, _mm256_and_si256(signs, sign_byte)), in_order)
        }};
    }
    let mut off = start;
    while off < end {
        for &s in srcs {
            // A hint only: prefetching never faults, and the address is not dereferenced.
            _mm_prefetch::<_MM_HINT_T0>(s.wrapping_add(off + PF_FP8).cast());
        }
        let mut seen = zero;
        let r0 = block!(off, seen);
        let r1 = block!(off + 32, seen);
        // Any doubled magnitude at or above the limit: an infinity or a NaN in some source.
        if _mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_max_epu8(seen, special2), seen)) != 0 {
            return off;
        }
        // SAFETY: `off + 64 <= end` bytes the caller made writable; unaligned stores.
        unsafe {
            _mm256_storeu_si256(out.add(off).cast(), r0);
            _mm256_storeu_si256(out.add(off + 32).cast(), r1);
        }
        off += 64;
    }
    end
}

/// Checks a [`Caps::gce_compress`] call and runs [`gce_compress_avx2`] on its whole blocks;
/// returns the blocks done (0 when the call does not qualify, see `super::gce_call`).
///
/// # Safety
/// The CPU must have avx2.
#[target_feature(enable = "avx2")]
unsafe fn gce_compress_checked(src: &[u8], block: usize, scales: &mut [u8], payload: &mut [u8]) -> usize {
    let Some(e5m2) = super::gce_e5m2() else { return 0 };
    let blocks = super::gce_call(src, 4, payload, scales, block);
    // SAFETY: the CPU feature was confirmed by the caller (this function's contract). `src`
    // holds at least `blocks · block · 4` bytes, `payload` `blocks · block` and `scales`
    // `blocks` (checked by `gce_call`); the slices outlive the call.
    unsafe { gce_compress_avx2(&e5m2, src.as_ptr(), block / 16, blocks, scales.as_mut_ptr(), payload.as_mut_ptr()) };
    blocks
}

/// The AVX2 GCE compressor: the AVX-512 kernel's steps (see `gce_compress_avx512` in the
/// AVX-512 level) on 256-bit vectors, 16 values (two vectors) per step. Masks are compare
/// vectors: the magnitudes are below 2^31, so the signed compares are the unsigned ones.
/// The 16 encodings of a step become bytes by two unsigned-saturating packs (every code fits)
/// and one dword permute that undoes their in-lane order.
///
/// # Safety
/// The CPU must have avx2; `src` reads `blocks · steps · 64` bytes, `payload` writes
/// `blocks · steps · 16` and `scales` writes `blocks`.
#[target_feature(enable = "avx2")]
unsafe fn gce_compress_avx2(
    e5m2: &Fp8Enc,
    src: *const u8,
    steps: usize,
    blocks: usize,
    scales: *mut u8,
    payload: *mut u8,
) {
    use core::arch::x86_64::*;
    let splat = |v: u32| _mm256_set1_epi32(v as i32);
    let zero = _mm256_setzero_si256();
    let abs = splat(0x7fff_ffff);
    let inf = splat(0x7f80_0000);
    let carry = splat(0x1f_ffff);
    let byte_bias = splat(15);
    let exp_254 = splat(254);
    // e5m2's encoder constants (`Fp8Enc`), as `fp8_encode` uses them.
    let s0 = _mm_cvtsi32_si128(e5m2.s0 as i32);
    let bias_c = splat(e5m2.half_m1.wrapping_sub(e5m2.rebias));
    let small_lim = splat(e5m2.rebias + (1 << 23));
    let magic = splat(e5m2.magic);
    let magic_f = _mm256_castsi256_ps(magic);
    let one = splat(1);
    let q_inf = splat(e5m2.over);
    let q_nan = splat(e5m2.nan);
    let sign_bit = splat(0x80);
    // Dword order after the two packs: (v0 0..4, v1 0..4, dup, dup | v0 4..8, v1 4..8, dup, dup).
    let order = _mm256_setr_epi32(0, 4, 1, 5, 0, 4, 1, 5);
    for b in 0..blocks {
        let at = b * steps * 2;
        // SAFETY: `(at + v) · 32 + 32 <= blocks · steps · 64` bytes the caller made readable;
        // unaligned loads.
        let load = |v: usize| unsafe { _mm256_loadu_si256(src.add((at + v) * 32).cast()) };
        let mut m = zero;
        for v in 0..2 * steps {
            let a = _mm256_and_si256(load(v), abs);
            m = _mm256_max_epu32(m, _mm256_and_si256(a, _mm256_cmpgt_epi32(inf, a)));
        }
        m = _mm256_max_epu32(m, _mm256_permute4x64_epi64::<0x4e>(m));
        m = _mm256_max_epu32(m, _mm256_shuffle_epi32::<0x4e>(m));
        m = _mm256_max_epu32(m, _mm256_shuffle_epi32::<0xb1>(m));
        let byte =
            _mm256_max_epi32(_mm256_sub_epi32(_mm256_srli_epi32::<23>(_mm256_add_epi32(m, carry)), byte_bias), zero);
        let scale = _mm256_castsi256_ps(_mm256_slli_epi32::<23>(_mm256_sub_epi32(exp_254, byte)));
        // SAFETY: `b < blocks` bytes the caller made writable.
        unsafe { *scales.add(b) = _mm_cvtsi128_si32(_mm256_castsi256_si128(byte)) as u8 };
        let encode = |x: __m256i| {
            let a = _mm256_and_si256(_mm256_castps_si256(_mm256_mul_ps(_mm256_castsi256_ps(x), scale)), abs);
            let lsb = _mm256_and_si256(_mm256_srl_epi32(a, s0), one);
            let norm = _mm256_srl_epi32(_mm256_add_epi32(_mm256_add_epi32(a, bias_c), lsb), s0);
            let sub = _mm256_sub_epi32(_mm256_castps_si256(_mm256_add_ps(_mm256_castsi256_ps(a), magic_f)), magic);
            let enc = _mm256_blendv_epi8(norm, sub, _mm256_cmpgt_epi32(small_lim, a));
            let mag = _mm256_blendv_epi8(_mm256_min_epu32(enc, q_inf), q_nan, _mm256_cmpgt_epi32(a, inf));
            _mm256_or_si256(mag, _mm256_and_si256(_mm256_srli_epi32::<24>(x), sign_bit))
        };
        for s in 0..steps {
            let (r0, r1) = (encode(load(2 * s)), encode(load(2 * s + 1)));
            let words = _mm256_packus_epi32(r0, r1);
            let bytes = _mm256_permutevar8x32_epi32(_mm256_packus_epi16(words, words), order);
            // SAFETY: `(b · steps + s) · 16 + 16 <= blocks · steps · 16` bytes the caller made
            // writable; unaligned store.
            unsafe { _mm_storeu_si128(payload.add((b * steps + s) * 16).cast(), _mm256_castsi256_si128(bytes)) };
        }
    }
}

/// Checks a [`Caps::gce_expand`] call and runs [`gce_expand_avx2`] on its whole blocks;
/// returns the blocks done (0 when the call does not qualify, see `super::gce_call`).
///
/// # Safety
/// The CPU must have avx2 and f16c.
#[target_feature(enable = "avx2,f16c")]
unsafe fn gce_expand_checked(scales: &[u8], payload: &[u8], block: usize, out: &mut [u8]) -> usize {
    let blocks = super::gce_call(out, 4, payload, scales, block);
    // SAFETY: the CPU features were confirmed by the caller (this function's contract).
    // `scales` holds at least `blocks` bytes, `payload` `blocks · block` and `out`
    // `blocks · block · 4` (checked by `gce_call`); the slices outlive the call.
    unsafe { gce_expand_avx2(scales.as_ptr(), payload.as_ptr(), block / 16, blocks, out.as_mut_ptr()) };
    blocks
}

/// The AVX2 GCE expander: the AVX-512 kernel's steps (see `gce_expand_avx512` in the AVX-512
/// level) on 256-bit vectors, 16 payload bytes per step widened to fp16 words and converted by
/// `vcvtph2ps` in two halves, the selects as blends on compare vectors.
///
/// # Safety
/// The CPU must have avx2 and f16c; `scales` reads `blocks` bytes, `payload` reads
/// `blocks · steps · 16` and `out` writes `blocks · steps · 64`.
#[target_feature(enable = "avx2,f16c")]
unsafe fn gce_expand_avx2(scales: *const u8, payload: *const u8, steps: usize, blocks: usize, out: *mut u8) {
    use core::arch::x86_64::*;
    let splat = |v: u32| _mm256_set1_epi32(v as i32);
    let abs = splat(0x7fff_ffff);
    let inf = splat(0x7f80_0000);
    let qnan = splat(0x7fc0_0000);
    let max = splat(0x7f7f_ffff);
    let sign = splat(0x8000_0000);
    let pow2 = |e: i32| _mm256_castsi256_ps(splat(((127 + e) as u32) << 23));
    for b in 0..blocks {
        // SAFETY: `b < blocks` bytes the caller made readable.
        let e = i32::from(unsafe { *scales.add(b) }) - 127;
        let (m1, m2) = (pow2(e >> 1), pow2(e - (e >> 1)));
        let expand = |d: __m256| {
            let p = _mm256_mul_ps(_mm256_mul_ps(d, m1), m2);
            let da = _mm256_and_si256(_mm256_castps_si256(d), abs);
            let mag = _mm256_min_epu32(_mm256_and_si256(_mm256_castps_si256(p), abs), max);
            let mag = _mm256_blendv_epi8(mag, inf, _mm256_cmpeq_epi32(da, inf));
            let mag = _mm256_blendv_epi8(mag, qnan, _mm256_cmpgt_epi32(da, inf));
            _mm256_or_si256(mag, _mm256_and_si256(_mm256_castps_si256(d), sign))
        };
        for s in 0..steps {
            let at = b * steps + s;
            // SAFETY: `at · 16 + 16 <= blocks · steps · 16` bytes the caller made readable;
            // unaligned load.
            let q = unsafe { _mm_loadu_si128(payload.add(at * 16).cast()) };
            let h = _mm256_slli_epi16::<8>(_mm256_cvtepu8_epi16(q));
            let lo = expand(_mm256_cvtph_ps(_mm256_castsi256_si128(h)));
            let hi = expand(_mm256_cvtph_ps(_mm256_extracti128_si256::<1>(h)));
            // SAFETY: `at · 64 + 64 <= blocks · steps · 64` bytes the caller made writable;
            // unaligned stores.
            unsafe {
                _mm256_storeu_si256(out.add(at * 64).cast(), lo);
                _mm256_storeu_si256(out.add(at * 64 + 32).cast(), hi);
            }
        }
    }
}
