//! The AVX-512 level (F/BW/DQ/VL, and VBMI for the fp8 byte tables): the entry points that
//! [`super::dispatch`] calls once the CPU has every feature, and the level's hand-written
//! kernels — the fp8 table decoders and encoder, the fused fp8 ADD, the register-resident
//! ADD / FMA / MIN / MAX into bf16, ADD into fp16, widening of bf16 into fp32 and the GCE codec's
//! compress and expand. Compiled only for x86-64 with `std` and a compiler that accepts the
//! `avx512*` target features (`cfg(cce_avx512)`, set by build.rs for rustc >= 1.89: hence the
//! module-wide `incompatible_msrv` allowance).
#![allow(
    clippy::incompatible_msrv,
    reason = "compiled only under cfg(cce_avx512), which build.rs sets for rustc >= 1.89 only"
)]

use super::{Bf16Reduce, Bf16Widen, Caps, F16Add, FusedFp8, Kernel, MeasureF32, StreamOp};
use crate::float::Fp8Enc;
use crate::types::FloatFormat;

/// Runs `k` with the AVX-512 helpers.
///
/// Never inlined: [`Caps::outline`] calls it from inside another kernel's copy at this level.
///
/// # Safety
/// The CPU must have avx2, fma, f16c, bmi1, bmi2, avx512f, avx512bw, avx512dq and avx512vl.
#[target_feature(enable = "avx2,fma,f16c,bmi1,bmi2,avx512f,avx512bw,avx512dq,avx512vl")]
#[inline(never)]
pub(super) unsafe fn run<K: Kernel>(k: &mut K) {
    k.run::<Avx512Caps>();
}

/// Runs `k` with the AVX-512 VBMI helpers.
///
/// Never inlined, as [`run`].
///
/// # Safety
/// As [`run`], plus avx512vbmi.
#[target_feature(enable = "avx2,fma,f16c,bmi1,bmi2,avx512f,avx512bw,avx512dq,avx512vl,avx512vbmi")]
#[inline(never)]
pub(super) unsafe fn run_vbmi<K: Kernel>(k: &mut K) {
    k.run::<Avx512VbmiCaps>();
}

/// The helpers both AVX-512 levels share: the fp8 encoder, the register-resident reduce into
/// bf16 and ADD into fp16. Expanded inside the `Caps` impls of [`Avx512Caps`] and [`Avx512VbmiCaps`] only.
macro_rules! shared_avx512_helpers {
    () => {
        const BF16_REDUCE: bool = true;
        const F16_ADD: bool = true;
        #[inline(always)]
        fn fp8_encode(p: &Fp8Enc, acc: &[f32; 64], out: &mut [u8; 64]) -> bool {
            // SAFETY: `Self` is private to this module and named only inside `run` and
            // `run_vbmi`, which `dispatch` calls only after `is_x86_feature_detected!`
            // confirmed avx512f, avx512bw and avx512dq (the features `fp8_encode_avx512`
            // needs). It reads and writes only through the given fixed-size references.
            unsafe { fp8_encode_avx512(p, acc, out) };
            true
        }
        #[inline(always)]
        fn reduce_to_bf16(k: &Bf16Reduce, srcs: &[&[u8]], out: &mut [u8], lo: u32) -> usize {
            // SAFETY: as for `fp8_encode`: avx512f, avx512bw, avx512dq and fma (the features
            // `reduce_to_bf16_checked` needs; `run` and `run_vbmi` require fma too) were
            // confirmed; it checks every length before it touches memory.
            unsafe { reduce_to_bf16_checked(k, srcs, out, lo) }
        }
        #[inline(always)]
        fn add_to_f16(k: &F16Add, srcs: &[&[u8]], out: &mut [u8]) -> usize {
            // SAFETY: as for `fp8_encode`: avx512f and avx512bw (the features
            // `add_to_f16_checked` needs) were confirmed; it checks every length before it
            // touches memory.
            unsafe { add_to_f16_checked(k, srcs, out) }
        }
        const BF16_WIDEN: bool = true;
        #[inline(always)]
        fn widen_bf16(k: &Bf16Widen, src: &[u8], out: &mut [u8]) -> usize {
            // SAFETY: as for `fp8_encode`: avx512f and avx512dq (the features
            // `widen_bf16_checked` needs) were confirmed; it checks every length before it
            // touches memory.
            unsafe { widen_bf16_checked(k, src, out) }
        }
        #[inline(always)]
        fn measure_f32(job: &MeasureF32<'_>, lanes: &mut crate::check::Lanes) -> usize {
            // SAFETY: as for `fp8_encode`: avx512f and avx512dq (the features
            // `measure_f32_avx512` needs) were confirmed; it reads only within the slices'
            // lengths it checks.
            unsafe { measure_f32_avx512(job, lanes) }
        }
        const GCE: bool = true;
        #[inline(always)]
        fn gce_compress(src: &[u8], block: usize, scales: &mut [u8], payload: &mut [u8]) -> usize {
            // SAFETY: as for `fp8_encode`: avx512f (the feature `gce_compress_checked` needs)
            // was confirmed; it checks every length before it touches memory.
            unsafe { gce_compress_checked(src, block, scales, payload) }
        }
        #[inline(always)]
        fn gce_expand(scales: &[u8], payload: &[u8], block: usize, out: &mut [u8]) -> usize {
            // SAFETY: as for `fp8_encode`: avx512f, avx512bw and avx2 (the features
            // `gce_expand_checked` needs; `run` and `run_vbmi` require avx2 too) were
            // confirmed; it checks every length before it touches memory.
            unsafe { gce_expand_checked(scales, payload, block, out) }
        }
        #[inline(always)]
        fn gce_expand_bf16(scales: &[u8], payload: &[u8], block: usize, out: &mut [u8]) -> usize {
            // SAFETY: as for `gce_expand`: avx512f, avx512bw and avx2 (the features
            // `gce_expand_bf16_checked` needs) were confirmed; it checks every length before it
            // touches memory.
            unsafe { gce_expand_bf16_checked(scales, payload, block, out) }
        }
    };
}

/// AVX-512 BW helpers. Private: only [`run`] names this type, and `run` runs only after the
/// CPU has been checked for every feature the helpers use.
struct Avx512Caps;

impl Caps for Avx512Caps {
    const LEVEL: &'static str = "avx512";
    #[inline(always)]
    fn outline<K: Kernel>(k: &mut K) {
        // SAFETY: `Avx512Caps` is private to this module and named only inside `run`, which
        // `dispatch` calls only after `is_x86_feature_detected!` confirmed every feature `run`
        // is compiled for; it has no other requirement.
        unsafe { run(k) }
    }
    shared_avx512_helpers!();
    #[inline(always)]
    fn fp8_tile(table: &[u16; 128], src: &[u8; 64], acc: &mut [f32; 64], add: bool) -> bool {
        // SAFETY: `Avx512Caps` is private to this module and used only as the type argument
        // of `k.run::<Avx512Caps>()` inside `run`, which `dispatch` calls only after
        // `is_x86_feature_detected!` confirmed avx512f and avx512bw (the features
        // `fp8_tile_avx512` needs). The function reads and writes only through the given
        // fixed-size references.
        unsafe { fp8_tile_avx512(table, src, acc, add) };
        true
    }
}

/// The AVX-512 f32 → one-byte float RNE encoder: the steps of `narrow_f32_rne_small` on 16
/// lanes at a time (integer rounding for normal results, one IEEE fp32 addition of a power of
/// two for subnormal ones, then the overflow and NaN selects), each lane narrowed to its low
/// byte (`vpmovdb`), as the portable loop stores the low byte of the encoding.
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
unsafe fn fp8_encode_avx512(p: &Fp8Enc, acc: &[f32; 64], out: &mut [u8; 64]) {
    use core::arch::x86_64::*;
    let splat = |v: u32| _mm512_set1_epi32(v as i32);
    let abs_mask = splat(0x7fff_ffff);
    let s0 = _mm_cvtsi32_si128(p.s0 as i32);
    let one = splat(1);
    // `a - rebias + (half - 1)`, wrapping as in the scalar code.
    let bias_c = splat(p.half_m1.wrapping_sub(p.rebias));
    let magic = splat(p.magic);
    let magic_f = _mm512_castsi512_ps(magic);
    let small_lim = splat(p.rebias + (1 << 23));
    let inf = splat(0x7f80_0000);
    let over = splat(p.over);
    let nan = splat(p.nan);
    let sign_bit = splat(0x80);
    let keep = p.nan_sign_mask != 0;
    for q in 0..4 {
        // SAFETY: `acc` holds 64 f32s and `16 * q + 16 <= 64`; unaligned load.
        let x = _mm512_castps_si512(unsafe { _mm512_loadu_ps(acc.as_ptr().add(16 * q)) });
        let a = _mm512_and_si512(x, abs_mask);
        let lsb = _mm512_and_si512(_mm512_srl_epi32(a, s0), one);
        let norm = _mm512_srl_epi32(_mm512_add_epi32(_mm512_add_epi32(a, bias_c), lsb), s0);
        let sum = _mm512_add_ps(_mm512_castsi512_ps(a), magic_f);
        let is_small = _mm512_cmplt_epu32_mask(a, small_lim);
        let enc = _mm512_mask_sub_epi32(norm, is_small, _mm512_castps_si512(sum), magic);
        // `over` is the largest finite encoding or the one above it (`Fp8Enc::new`), and a
        // normal-path `enc` above the largest finite (which includes every infinity) is at
        // least one above it: so the scalar overflow select is this minimum.
        let mag = _mm512_min_epu32(enc, over);
        let is_nan = _mm512_cmpgt_epu32_mask(a, inf);
        // The sign bit of the f32 moved to bit 7 (`vpternlogd` 0xf8: A | (B & C)).
        let sh = _mm512_srli_epi32::<24>(x);
        let r = if keep {
            _mm512_ternarylogic_epi32::<0xf8>(_mm512_mask_mov_epi32(mag, is_nan, nan), sh, sign_bit)
        } else {
            _mm512_mask_mov_epi32(_mm512_ternarylogic_epi32::<0xf8>(mag, sh, sign_bit), is_nan, nan)
        };
        let bytes = _mm512_cvtepi32_epi8(r);
        // SAFETY: `out` holds 64 bytes and `16 * q + 16 <= 64`; unaligned store.
        unsafe { _mm_storeu_si128(out.as_mut_ptr().add(16 * q).cast(), bytes) };
    }
}

/// AVX-512 BW helpers plus the VBMI byte-table decoder. Private: only [`run_vbmi`] names
/// this type, and it runs only after the CPU has been checked for every feature they use.
struct Avx512VbmiCaps;

impl Caps for Avx512VbmiCaps {
    const LEVEL: &'static str = "avx512-vbmi";
    #[inline(always)]
    fn outline<K: Kernel>(k: &mut K) {
        // SAFETY: `Avx512VbmiCaps` is private to this module and named only inside `run_vbmi`,
        // which `dispatch` calls only after `is_x86_feature_detected!` confirmed every feature
        // `run_vbmi` is compiled for; it has no other requirement.
        unsafe { run_vbmi(k) }
    }
    const FUSED_FP8: FusedFp8 = FusedFp8::AnyFormats;
    shared_avx512_helpers!();
    #[inline(always)]
    fn fp8_tile(table: &[u16; 128], src: &[u8; 64], acc: &mut [f32; 64], add: bool) -> bool {
        // SAFETY: `Avx512VbmiCaps` is private to this module and used only as the type
        // argument of `k.run::<Avx512VbmiCaps>()` inside `run_vbmi`, which `dispatch`
        // calls only after `is_x86_feature_detected!` confirmed avx512f, avx512bw and
        // avx512vbmi (the features `fp8_tile_vbmi` needs). The function reads and writes only
        // through the given fixed-size references.
        unsafe { fp8_tile_vbmi(table, src, acc, add) };
        true
    }
    #[inline(always)]
    fn fp8_add_encode(
        table: &[u16; 128],
        _in_fmt: FloatFormat,
        p: &Fp8Enc,
        srcs: &[&[u8]],
        out: &mut [u8],
        start: usize,
    ) -> usize {
        if !super::fused_fp8_call(srcs, out, start) {
            return start;
        }
        // SAFETY: as for `fp8_tile` above: avx512f, avx512bw and avx512vbmi (the features
        // `fp8_add_encode_vbmi` needs) were confirmed before `run_vbmi` ran. The
        // function reaches memory only through bounds-checked subslices of its arguments.
        unsafe {
            // The const is the shift in 16-bit lanes, `p.s0 - 16`.
            match (p.s0, p.nan_sign_mask != 0) {
                (19, false) => fp8_add_encode_vbmi::<3, false>(table, p, srcs, out, start),
                (19, true) => fp8_add_encode_vbmi::<3, true>(table, p, srcs, out, start),
                (20, false) => fp8_add_encode_vbmi::<4, false>(table, p, srcs, out, start),
                (20, true) => fp8_add_encode_vbmi::<4, true>(table, p, srcs, out, start),
                (21, false) => fp8_add_encode_vbmi::<5, false>(table, p, srcs, out, start),
                (21, true) => fp8_add_encode_vbmi::<5, true>(table, p, srcs, out, start),
                // No one-byte format keeps another mantissa width: the caller's portable loop.
                _ => return start,
            }
        }
        out.len()
    }
}

/// The VBMI decoders' byte tables `[lo0, lo1, hi0, hi1]`: the low and the high bytes of the
/// bf16 entries of `table`, entries 0..64 in the first vector of each pair and 64..128 in the
/// second, as `vpermi2b` indexes them with the low 7 bits of a byte.
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
fn vbmi_byte_tables(table: &[u16; 128]) -> [core::arch::x86_64::__m512i; 4] {
    use core::arch::x86_64::*;
    let tp = table.as_ptr();
    // SAFETY: the table holds 4 × 32 u16 and every offset stays inside it; unaligned loads.
    let t = unsafe {
        [
            _mm512_loadu_si512(tp.cast()),
            _mm512_loadu_si512(tp.add(32).cast()),
            _mm512_loadu_si512(tp.add(64).cast()),
            _mm512_loadu_si512(tp.add(96).cast()),
        ]
    };
    let low_bytes = |a: __m512i, b: __m512i| {
        _mm512_inserti64x4::<1>(_mm512_castsi256_si512(_mm512_cvtepi16_epi8(a)), _mm512_cvtepi16_epi8(b))
    };
    let high_bytes = |a: __m512i, b: __m512i| low_bytes(_mm512_srli_epi16::<8>(a), _mm512_srli_epi16::<8>(b));
    [low_bytes(t[0], t[1]), low_bytes(t[2], t[3]), high_bytes(t[0], t[1]), high_bytes(t[2], t[3])]
}

/// Where each element of a fused fp8 tile sits after the decode: `(v, d)`, dword `d` of f32
/// vector `v` (0..4). The decode's byte unpacks and word → dword shifts work inside 128-bit
/// lanes: in lane `l`, vector 0 holds the even elements `16 l + 2 q` (`q` = 0..4), vector 1 the
/// odd ones `16 l + 2 q + 1`, vectors 2 and 3 the same from `16 l + 8`.
const fn fused_slot(e: usize) -> (usize, usize) {
    let (l, r) = (e / 16, e % 16);
    (2 * (r / 8) + r % 2, 4 * l + (r % 8) / 2)
}

/// `vpermt2b` indices that gather the encoded tile. The encoder packs f32 vectors `v` = 0, 1
/// into word vector 0 and 2, 3 into word vector 1 with `vpackusdw`, which works inside 128-bit
/// lanes: word `8 l + r` of a word vector is dword `4 l + r` of its first f32 vector (`r` < 4)
/// or dword `4 l + r - 4` of its second. Output byte `e` is the low byte of the word that holds
/// element `e` ([`fused_slot`]), the second word vector's bytes counted from 64.
const FUSED_GATHER: [u8; 64] = {
    let mut idx = [0u8; 64];
    let mut e = 0;
    while e < 64 {
        let (v, d) = fused_slot(e);
        let word = 8 * (d / 4) + d % 4 + 4 * (v % 2);
        idx[e] = (64 * (v / 2) + 2 * word) as u8;
        e += 1;
    }
    idx
};

/// The fused AVX-512 VBMI ADD of one-byte float sources into a one-byte float output (see
/// [`Caps::fp8_add_encode`]). Per source tile: two 128-entry byte lookups (`vpermi2b`) give the
/// low and high bytes of each element's bf16 value, the sign is ORed in, byte unpacks make
/// bf16 words and a shift / mask puts each word in the high half of an f32, in an element
/// order that every source shares (so the element-wise fp32 sums are those of the portable
/// loop).
///
/// The encoder works on 32 lanes of 16 bits. Each f32 sum is rounded to odd at bit 16 (the
/// OR of its low half folded into bit 16, as `x | ((x + 0xffff) & 0x10000)`) and its high half
/// kept: every one-byte format keeps at most 4 mantissa bits, so the round bit and everything
/// the portable encoder's nearest-even tie test looks at survive, and the integer rounding of
/// normal results, the subnormal / overflow / NaN compares and the sign give the portable
/// bits on the 16-bit value. Subnormal results still come from one IEEE fp32 addition of the
/// power of two whose ulp is the subnormal quantum (as in [`fp8_encode_avx512`]). Two f32
/// vectors become one word vector by `vpackusdw` (in-lane, every value fits 16 bits); the
/// shift (`SW` = `p.s0 - 16`) and the NaN-sign choice (`KEEP`) are fixed at compile time; one
/// `vpermt2b` ([`FUSED_GATHER`]) gathers the 64 encoded bytes in element order. Each source is
/// prefetched [`PF_FUSED`] bytes ahead.
///
/// Tried and left out: running the subnormal path (`sub`) only for vector pairs that hold a
/// sum below the smallest normal. Alternated with this kernel on an Intel Xeon at 2.9 GHz
/// (five runs at 4 × 1 MiB, four at 4 × 64 MiB), it measured no different: 11.5–14.4 against
/// 11.7–13.0 GB/s, and 11.7–13.2 against 12.7–12.8.
///
/// Why not the AVX2 level's scaled domain (which needs no subnormal path): there, one-byte
/// subnormals become fp32 subnormals, and on the Intel cores measured here fp32 additions among
/// such values take microcode assists — the four-source sums of random e4m3 bytes, scaled, ran
/// 1.5 G elements/s against 3.8 with every subnormal replaced by a normal value (a stand-alone
/// loop of the same `vaddps`), and this kernel with a scaled table ran 6.5 GB/s against 12.6.
/// Here every decoded value and every sum is an fp32 normal.
///
/// Measured (4 × 256 KiB, in cache, one thread): 17.9 GB/s, against 16.3 with the 32-bit
/// encoder before. What is left is the decode: a 128-entry byte lookup (`vpermi2b` or
/// `vpermt2b`) occupies port 5 for two cycles on the Intel cores measured here (0.5 per cycle,
/// where `vpermb` and the unpacks run one per cycle), and every source takes two.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
unsafe fn fp8_add_encode_vbmi<const SW: u32, const KEEP: bool>(
    table: &[u16; 128],
    p: &Fp8Enc,
    srcs: &[&[u8]],
    out: &mut [u8],
    start: usize,
) {
    use core::arch::x86_64::*;
    let Some((head, rest)) = srcs.split_first() else { return };
    let [lo0, lo1, hi0, hi1] = vbmi_byte_tables(table);
    let sign8 = _mm512_set1_epi8(0x80u8 as i8);
    let high_half = _mm512_set1_epi32(0xffff_0000u32 as i32);
    let load = |s: &[u8], b: usize| {
        let tile = &s[b..b + 64];
        _mm_prefetch::<_MM_HINT_T0>(s.as_ptr().wrapping_add(b + PF_FUSED).cast());
        // SAFETY: `tile` is a 64-byte subslice (bounds-checked above); unaligned load.
        unsafe { _mm512_loadu_si512(tile.as_ptr().cast()) }
    };
    macro_rules! decode {
        ($bytes:expr) => {{
            let bytes = $bytes;
            let lo = _mm512_permutex2var_epi8(lo0, bytes, lo1);
            let hi = _mm512_permutex2var_epi8(hi0, bytes, hi1);
            // hi | (bytes & 0x80): `vpternlogd` 0xf8 is A | (B & C).
            let hi = _mm512_ternarylogic_epi32::<0xf8>(hi, bytes, sign8);
            let (w0, w1) = (_mm512_unpacklo_epi8(lo, hi), _mm512_unpackhi_epi8(lo, hi));
            [
                _mm512_castsi512_ps(_mm512_slli_epi32::<16>(w0)),
                _mm512_castsi512_ps(_mm512_and_si512(w0, high_half)),
                _mm512_castsi512_ps(_mm512_slli_epi32::<16>(w1)),
                _mm512_castsi512_ps(_mm512_and_si512(w1, high_half)),
            ]
        }};
    }
    let splat = |v: u32| _mm512_set1_epi32(v as i32);
    let abs_mask = splat(0x7fff_ffff);
    debug_assert_eq!(p.s0, SW + 16);
    debug_assert_eq!(p.nan_sign_mask != 0, KEEP);
    debug_assert!(p.rebias & 0xffff == 0 && p.magic & 0xffff == 0);
    let magic = splat(p.magic);
    let magic_f = _mm512_castsi512_ps(magic);
    // 16-bit lanes: the 32-bit constants' high halves (the rebias and the limits are multiples
    // of 2^16), half an ulp minus one at the 16-bit shift.
    let word = |v: u32| _mm512_set1_epi16(v as u16 as i16);
    let low_ones = splat(0xffff);
    let bit16 = splat(0x1_0000);
    let abs16 = word(0x7fff);
    let one16 = word(1);
    let bias_c = word(((1u32 << (SW - 1)) - 1).wrapping_sub(p.rebias >> 16));
    let small_lim = word((p.rebias + (1 << 23)) >> 16);
    let inf = word(0x7f80);
    let over = word(p.over);
    let nan = word(p.nan);
    let sign_bit = word(0x80);
    // SAFETY: the table holds 64 bytes; unaligned load.
    let gather = unsafe { _mm512_loadu_si512(FUSED_GATHER.as_ptr().cast()) };
    // Two f32 sum vectors in, 32 encodings (one per word, at most 0xff) out. A macro, not a
    // closure: the compiler kept a closure out of line, passing vectors through memory.
    macro_rules! encode {
        ($x0:expr, $x1:expr) => {{
            let (x0, x1) = (_mm512_castps_si512($x0), _mm512_castps_si512($x1));
            // Subnormal results: the low bits of |x| + 2^k minus 2^k.
            let sub = |x: __m512i| {
                let sum = _mm512_add_ps(_mm512_castsi512_ps(_mm512_and_si512(x, abs_mask)), magic_f);
                _mm512_sub_epi32(_mm512_castps_si512(sum), magic)
            };
            // Round to odd at bit 16 (`vpternlogd` 0xf8: A | (B & C)), keep the high half.
            let odd = |x: __m512i| {
                _mm512_srli_epi32::<16>(_mm512_ternarylogic_epi32::<0xf8>(x, _mm512_add_epi32(x, low_ones), bit16))
            };
            let sub = _mm512_packus_epi32(sub(x0), sub(x1));
            let h = _mm512_packus_epi32(odd(x0), odd(x1));
            let a = _mm512_and_si512(h, abs16);
            let lsb = _mm512_and_si512(_mm512_srli_epi16::<SW>(a), one16);
            let norm = _mm512_srli_epi16::<SW>(_mm512_add_epi16(_mm512_add_epi16(a, bias_c), lsb));
            let is_small = _mm512_cmplt_epu16_mask(a, small_lim);
            let enc = _mm512_mask_mov_epi16(norm, is_small, sub);
            let mag = _mm512_min_epu16(enc, over);
            let is_nan = _mm512_cmpgt_epu16_mask(a, inf);
            let sh = _mm512_srli_epi16::<8>(h);
            if KEEP {
                _mm512_ternarylogic_epi32::<0xf8>(_mm512_mask_mov_epi16(mag, is_nan, nan), sh, sign_bit)
            } else {
                _mm512_mask_mov_epi16(_mm512_ternarylogic_epi32::<0xf8>(mag, sh, sign_bit), is_nan, nan)
            }
        }};
    }
    // The tiles, the other sources held in registers (`$rest`, an array): read from `srcs`
    // in every tile, the kernel lost up to a quarter of its speed on a Zen 5 EPYC when the
    // sources sat 4 KiB or 1 MiB + 192 bytes apart (as the bf16 FMA, `reduce_to_bf16_avx512`).
    macro_rules! tiles {
        ($rest:expr) => {{
            let rest = $rest;
            for (t, o) in out[start..].chunks_exact_mut(64).enumerate() {
                let b = start + 64 * t;
                let mut acc = decode!(load(head, b));
                for s in rest {
                    let x = decode!(load(s, b));
                    for (a, x) in acc.iter_mut().zip(x) {
                        *a = _mm512_add_ps(*a, x);
                    }
                }
                let (e01, e23) = (encode!(acc[0], acc[1]), encode!(acc[2], acc[3]));
                let bytes = _mm512_permutex2var_epi8(e01, gather, e23);
                // SAFETY: `o` is a 64-byte chunk of `out`; unaligned store.
                unsafe { _mm512_storeu_si512(o.as_mut_ptr().cast(), bytes) };
            }
        }};
    }
    match *rest {
        [] => tiles!([] as [&[u8]; 0]),
        [s1] => tiles!([s1]),
        [s1, s2] => tiles!([s1, s2]),
        [s1, s2, s3] => tiles!([s1, s2, s3]),
        _ => tiles!(rest),
    }
}

/// How far ahead (bytes) of each source tile the VBMI decoder asks for the cache line.
const PREFETCH: usize = 2048;
/// How far ahead (bytes) of each source tile the fused kernel asks for the cache line
/// (measured on 4 × 64 MiB: none 11.3 GB/s, 512 to 2048 bytes 14.0–14.3 GB/s; streaming stores
/// for the output measured no better, so it is written through the cache).
const PF_FUSED: usize = 1024;

/// Byte order fed to the VBMI decoder's lookups: position `16 l + 4 k + j` (128-bit lane `l`)
/// takes element `16 k + 4 l + j`, so that after the in-lane byte → word → dword unpacks the
/// `k`-th dword vector holds elements `16 k .. 16 k + 16` in order.
const VBMI_ORDER: [u8; 64] = {
    let mut idx = [0u8; 64];
    let mut p = 0;
    while p < 64 {
        let (l, k, j) = (p / 16, (p / 4) % 4, p % 4);
        idx[p] = (16 * k + 4 * l + j) as u8;
        p += 1;
    }
    idx
};

/// The AVX-512 VBMI fp8 tile decoder: the 64 bytes are reordered (`vpermb`), the high and low
/// bytes of the bf16 magnitude looked up in two 128-entry byte tables (`vpermi2b`, which
/// ignores bit 7), the sign ORed into the high byte, the bytes interleaved into bf16 words and
/// the words into f32 bits (bf16 in the high half), then stored or added with IEEE fp32
/// addition — the same operation, in the same order, as the portable loop.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
#[inline]
unsafe fn fp8_tile_vbmi(table: &[u16; 128], src: &[u8; 64], acc: &mut [f32; 64], add: bool) {
    use core::arch::x86_64::*;
    let [lo0, lo1, hi0, hi1] = vbmi_byte_tables(table);
    // SAFETY (whole body): every pointer comes from a fixed-size array reference (or the
    // 64-byte `VBMI_ORDER`) and every offset stays inside it (src: 64 bytes; acc: 4 × 16 f32);
    // the loads and stores are the unaligned forms.
    let (order, bytes) =
        unsafe { (_mm512_loadu_si512(VBMI_ORDER.as_ptr().cast()), _mm512_loadu_si512(src.as_ptr().cast())) };
    // A hint only: prefetching never faults, and the address is not dereferenced here.
    _mm_prefetch::<_MM_HINT_T0>(src.as_ptr().wrapping_add(PREFETCH).cast());
    let b = _mm512_permutexvar_epi8(order, bytes);
    let lo = _mm512_permutex2var_epi8(lo0, b, lo1);
    let hi = _mm512_permutex2var_epi8(hi0, b, hi1);
    // hi | (b & 0x80): `vpternlogd` 0xf8 is A | (B & C).
    let hi = _mm512_ternarylogic_epi32::<0xf8>(hi, b, _mm512_set1_epi8(0x80u8 as i8));
    let (w0, w1) = (_mm512_unpacklo_epi8(lo, hi), _mm512_unpackhi_epi8(lo, hi));
    let z = _mm512_setzero_si512();
    let parts = [
        _mm512_unpacklo_epi16(z, w0),
        _mm512_unpackhi_epi16(z, w0),
        _mm512_unpacklo_epi16(z, w1),
        _mm512_unpackhi_epi16(z, w1),
    ];
    for (k, v) in parts.into_iter().enumerate() {
        let f = _mm512_castsi512_ps(v);
        // SAFETY: see above; `16 * k + 16 <= 64`.
        unsafe {
            let p = acc.as_mut_ptr().add(16 * k);
            let r = if add { _mm512_add_ps(_mm512_loadu_ps(p), f) } else { f };
            _mm512_storeu_ps(p, r);
        }
    }
}

/// The AVX-512 BW fp8 tile decoder: 32 bytes at a time, zero-extended to 16-bit indices,
/// looked up in the 128-entry bf16 table with two `vpermi2w` and a blend on bit 6, the sign
/// ORed in, widened to f32 (bf16 bits in the high half), then stored or added with IEEE fp32
/// addition — the same operation, in the same order, as the portable loop.
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn fp8_tile_avx512(table: &[u16; 128], src: &[u8; 64], acc: &mut [f32; 64], add: bool) {
    use core::arch::x86_64::*;
    let tp = table.as_ptr();
    // SAFETY (whole body): every pointer comes from a fixed-size array reference and every
    // offset stays inside it (table: 4 × 32 u16; src: 2 × 32 bytes; acc: 4 × 16 f32); the
    // loads and stores are the unaligned forms.
    let (t0, t1, t2, t3) = unsafe {
        (
            _mm512_loadu_si512(tp.cast()),
            _mm512_loadu_si512(tp.add(32).cast()),
            _mm512_loadu_si512(tp.add(64).cast()),
            _mm512_loadu_si512(tp.add(96).cast()),
        )
    };
    for half in 0..2 {
        // SAFETY: see above; `half * 32 + 32 <= 64`.
        let bytes = unsafe { _mm256_loadu_si256(src.as_ptr().add(32 * half).cast()) };
        let w = _mm512_cvtepu8_epi16(bytes);
        let lo = _mm512_permutex2var_epi16(t0, w, t1);
        let hi = _mm512_permutex2var_epi16(t2, w, t3);
        let upper = _mm512_test_epi16_mask(w, _mm512_set1_epi16(0x40));
        let v = _mm512_mask_blend_epi16(upper, lo, hi);
        let sign = _mm512_slli_epi16::<8>(_mm512_and_si512(w, _mm512_set1_epi16(0x80)));
        let v = _mm512_or_si512(v, sign);
        let parts = [_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64::<1>(v)];
        for (q, h) in parts.into_iter().enumerate() {
            let f = _mm512_castsi512_ps(_mm512_slli_epi32::<16>(_mm512_cvtepu16_epi32(h)));
            // SAFETY: see above; `32 * half + 16 * q + 16 <= 64`.
            unsafe {
                let p = acc.as_mut_ptr().add(32 * half + 16 * q);
                let r = if add { _mm512_add_ps(_mm512_loadu_ps(p), f) } else { f };
                _mm512_storeu_ps(p, r);
            }
        }
    }
}

/// Elements per block of the register-resident bf16 kernel: one 64-byte output store.
const BF16_BLOCK: usize = 32;

/// How far ahead (bytes) of each source block the register-resident bf16 kernels ask for the
/// cache line.
pub(super) const PF_BF16: usize = 2048;

/// Checks an [`Caps::reduce_to_bf16`] call and runs [`reduce_to_bf16_avx512`] on its whole blocks;
/// returns the elements done (0 when the call does not qualify, see `super::stream_call`).
///
/// # Safety
/// The CPU must have avx512f, avx512bw, avx512dq and fma.
#[target_feature(enable = "avx512f,avx512bw,avx512dq,fma")]
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
                // SAFETY: the CPU features were confirmed by the caller (this function's
                // contract). `ptrs` holds one pointer per source, each to at least
                // `blocks · 32 · in_w` readable bytes (checked by `stream_call`), `o` points to
                // `blocks · 64` writable bytes (`out.len() >= 2 · blocks · 32`), aligned to 64
                // bytes when streaming (checked by `stream_call`); the slices outlive the call.
                $(($f, $s, $t, $n) => unsafe { reduce_to_bf16_avx512::<$f, $s, $t, $n>(&k.op, ptrs, o, blocks, lo, rk, keep) },)*
            }
        };
    }
    go!(false false false false, false false false true, false false true false, false false true true,
        false true false false, false true false true, false true true false, false true true true,
        true false false false, true false false true, true false true false, true false true true,
        true true false false, true true false true, true true true false, true true true true);
    blocks * BF16_BLOCK
}

/// `vpermt2w` indices of the high word of every dword of two vectors, in order.
const ODD_WORDS: [u16; 32] = {
    let mut idx = [0u16; 32];
    let mut w = 0;
    while w < 32 {
        idx[w] = 2 * w as u16 + 1;
        w += 1;
    }
    idx
};

/// The register-resident AVX-512 reduce into bf16. Per block of 32 elements: each source is
/// one 64-byte load of bf16 (split into even and odd elements as fp32: `w << 16` and
/// `w & 0xffff0000`) or two of fp32, combined in source order by the [`StreamOp`] — IEEE fp32
/// additions, fused multiply-adds (`vfmadd`, from +0) or the model's MIN / MAX (`vmaxps` /
/// `vminps`, equal values' AND / OR, NaN by an unordered compare) — into two accumulators that
/// never leave registers; the sums are rounded in the integer domain
/// exactly as `narrow_bf16_rne` (`x + 0x7fff + lsb`) or `narrow_bf16_sr` (`x + (r >> 16)`, `r`
/// the counter generator's bits for the element index), the carry never reaching the sign of
/// a non-NaN; saturation is a minimum on the magnitude; NaN (found by `vfpclassps`) becomes
/// 0x7fc0 with the sum's sign when `keep_sign`. The rounded halves are merged into one 64-byte
/// store (non-temporal when `NT`, then one `sfence`). Each source is prefetched [`PF_BF16`]
/// bytes ahead.
///
/// As at the AVX2 level: one loop per operation, decided once per call; the NaN selects run
/// only in blocks where one unordered compare finds a NaN; MIN / MAX of two or more bf16
/// sources without a clamp works on 16-bit integer keys; calls with fewer than
/// [`super::READ_STREAMS`] sources read interleaved stretches ([`for_blocks`]).
///
/// # Safety
/// The CPU must have avx512f, avx512bw, avx512dq and fma; `srcs` is non-empty and each pointer
/// reads `blocks · 32` elements (2 bytes each, 4 when `F32_IN`); `out` writes `blocks · 64`
/// bytes, aligned to 64 when `NT`.
#[target_feature(enable = "avx512f,avx512bw,avx512dq,fma")]
unsafe fn reduce_to_bf16_avx512<const F32_IN: bool, const SR: bool, const SAT: bool, const NT: bool>(
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
    let splat = |v: u32| _mm512_set1_epi32(v as i32);
    let high_half = splat(0xffff_0000);
    let one = splat(1);
    let half_m1 = splat(0x7fff);
    let mag_high = splat(0x7fff_0000);
    let sat_lim = splat(0x7f7f_0000);
    let sign = splat(0x8000_0000);
    let qnan = splat(0x7fc0_0000);
    let qnan_f32 = splat(f32::NAN.to_bits());
    let nan_sign = splat(if keep_sign { 0x8000_0000 } else { 0 });
    let rkv = splat(rk);
    let (c1, c2) = (splat(0x85eb_ca6b), splat(0xc2b2_ae35));
    // The element index (low half) of every lane of the two accumulators at block 0: elements
    // 0..16 and 16..32 for fp32 sources, even and odd elements for bf16 ones.
    let lanes = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    let base = splat(lo);
    let (idx0_at0, idx1_at0) = if F32_IN {
        (_mm512_add_epi32(base, lanes), _mm512_add_epi32(base, _mm512_add_epi32(lanes, splat(16))))
    } else {
        let even = _mm512_add_epi32(base, _mm512_slli_epi32::<1>(lanes));
        (even, _mm512_add_epi32(even, one))
    };
    // SAFETY: `ODD_WORDS` holds 64 bytes; unaligned load.
    let odd_words = unsafe { _mm512_loadu_si512(ODD_WORDS.as_ptr().cast()) };
    let in_bytes = if F32_IN { 128 } else { 64 };
    // One bf16 block's 64 raw bytes (one line) of a source, prefetched [`PF_BF16`] ahead.
    macro_rules! raw {
        ($p:expr, $off:expr) => {{
            let p: *const u8 = $p;
            // A hint only: prefetching never faults, and the address is not dereferenced.
            _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add($off + PF_BF16).cast());
            // SAFETY: `$off + 64 <= blocks · 64` bytes the caller made readable.
            unsafe { _mm512_loadu_si512(p.add($off).cast()) }
        }};
    }
    // One block of a source as fp32: even and odd halves (bf16), or two loads (fp32).
    macro_rules! load {
        ($p:expr, $off:expr) => {{
            if F32_IN {
                let p: *const u8 = $p;
                // A hint only: prefetching never faults, and the address is not dereferenced.
                _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add($off + PF_BF16).cast());
                _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add($off + 64 + PF_BF16).cast());
                // SAFETY: `$off + 128 <= blocks · 128` bytes the caller made readable.
                unsafe { (_mm512_loadu_ps(p.add($off).cast()), _mm512_loadu_ps(p.add($off + 64).cast())) }
            } else {
                let w = raw!($p, $off);
                (_mm512_castsi512_ps(_mm512_slli_epi32::<16>(w)), _mm512_castsi512_ps(_mm512_and_si512(w, high_half)))
            }
        }};
    }
    // `$nan`: whether the block holds a NaN sum (a literal: the NaN selects are compiled only
    // into the block's rare path).
    macro_rules! round {
        ($x:expr, $idx:expr, $nan:literal) => {{
            let x: __m512 = $x;
            let xi = _mm512_castps_si512(x);
            let t = if SR {
                // The high 16 bits of `fmix32(lo ^ rk)`, as `crate::rng::fmix32`. Its last step,
                // `h ^= h >> 16`, leaves the high 16 bits as they are, so they are taken before it.
                let mut h = _mm512_xor_si512($idx, rkv);
                h = _mm512_xor_si512(h, _mm512_srli_epi32::<16>(h));
                h = _mm512_mullo_epi32(h, c1);
                h = _mm512_xor_si512(h, _mm512_srli_epi32::<13>(h));
                h = _mm512_mullo_epi32(h, c2);
                _mm512_add_epi32(xi, _mm512_srli_epi32::<16>(h))
            } else {
                let lsb = _mm512_and_si512(_mm512_srli_epi32::<16>(xi), one);
                _mm512_add_epi32(_mm512_add_epi32(xi, half_m1), lsb)
            };
            let t = if SAT {
                // min(magnitude, largest finite) | sign (`vpternlogd` 0xf8: A | (B & C)).
                let mag = _mm512_min_epu32(_mm512_and_si512(t, mag_high), sat_lim);
                _mm512_ternarylogic_epi32::<0xf8>(mag, xi, sign)
            } else {
                t
            };
            if $nan {
                // QNaN | SNaN; the NaN is 0x7fc0 | (sign & nan_sign) (0xea: (A & B) | C).
                let is_nan = _mm512_fpclass_ps_mask::<0x81>(x);
                _mm512_mask_mov_epi32(t, is_nan, _mm512_ternarylogic_epi32::<0xea>(xi, nan_sign, qnan))
            } else {
                t
            }
        }};
    }
    let qnan_f = _mm512_castsi512_ps(qnan_f32);
    // The model's MIN / MAX (`crate::fp32_tiles::minmax32`): the pick, equal values' AND / OR, NaN.
    macro_rules! minmax {
        ($a:expr, $b:expr, $max:expr) => {{
            let (a, b): (__m512, __m512) = ($a, $b);
            let (ai, bi) = (_mm512_castps_si512(a), _mm512_castps_si512(b));
            let (pick, both) = if $max {
                (_mm512_max_ps(a, b), _mm512_and_si512(ai, bi))
            } else {
                (_mm512_min_ps(a, b), _mm512_or_si512(ai, bi))
            };
            let eq = _mm512_cmp_ps_mask::<_CMP_EQ_OQ>(a, b);
            let nan = _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(a, b);
            _mm512_mask_mov_ps(
                _mm512_castsi512_ps(_mm512_mask_mov_epi32(_mm512_castps_si512(pick), eq, both)),
                nan,
                qnan_f,
            )
        }};
    }
    let streams = super::READ_STREAMS / srcs.len();
    let group = super::STRETCH_GROUP_ELEMS / BF16_BLOCK;
    // Rounds block `$b`'s sums, merges the halves and stores them.
    macro_rules! finish {
        ($b:expr, $a0:expr, $a1:expr) => {{
            let b: usize = $b;
            let (a0, a1): (__m512, __m512) = ($a0, $a1);
            // The element indices of the block's two halves (used by SR only).
            let at = splat((b * BF16_BLOCK) as u32);
            let (idx0, idx1) = (_mm512_add_epi32(idx0_at0, at), _mm512_add_epi32(idx1_at0, at));
            // One unordered compare finds a NaN in either half; the NaN selects run only then.
            let (r0, r1) = if _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(a0, a1) != 0 {
                (round!(a0, idx0, true), round!(a1, idx1, true))
            } else {
                (round!(a0, idx0, false), round!(a1, idx1, false))
            };
            let v = if F32_IN {
                _mm512_permutex2var_epi16(r0, odd_words, r1)
            } else {
                _mm512_mask_blend_epi16(0xaaaa_aaaa, _mm512_srli_epi32::<16>(r0), r1)
            };
            // SAFETY: `b · 64 + 64 <= blocks · 64` bytes the caller made writable, 64-byte
            // aligned when streaming.
            unsafe {
                let dst = out.add(b * 64);
                if NT { _mm512_stream_si512(dst.cast(), v) } else { _mm512_storeu_si512(dst.cast(), v) }
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
                    let c = _mm512_set1_ps(c);
                    a0 = minmax!(a0, c, $max);
                    a1 = minmax!(a1, c, $max);
                }
                finish!(b, a0, a1);
            })
        }};
    }
    // MIN / MAX of two or more bf16 sources without a clamp, on 32 elements per vector, in the
    // 16-bit integer keys `w ^ ((w >> 15) & 0x7fff)` — why they give the model's MIN / MAX is
    // written once, at the AVX2 kernel's key loop (`avx2.rs`).
    macro_rules! minmax_key_blocks {
        ($max:literal) => {{
            let low15 = _mm512_set1_epi16(0x7fff);
            let nan_lim = _mm512_set1_epi16(0x7f80);
            let qnan16 = _mm512_set1_epi16(0x7fc0);
            macro_rules! key {
                ($w:expr) => {{
                    let w: __m512i = $w;
                    _mm512_xor_si512(w, _mm512_and_si512(_mm512_srai_epi16::<15>(w), low15))
                }};
            }
            for_blocks!(blocks, streams, group, |b| {
                let off = b * in_bytes;
                let w = raw!(head, off);
                let (mut k, mut mag) = (key!(w), _mm512_and_si512(w, low15));
                for &p in rest {
                    let w = raw!(p, off);
                    k = if $max { _mm512_max_epi16(k, key!(w)) } else { _mm512_min_epi16(k, key!(w)) };
                    mag = _mm512_max_epu16(mag, _mm512_and_si512(w, low15));
                }
                let r = _mm512_mask_mov_epi16(key!(k), _mm512_cmpgt_epu16_mask(mag, nan_lim), qnan16);
                let a0 = _mm512_castsi512_ps(_mm512_slli_epi32::<16>(r));
                let a1 = _mm512_castsi512_ps(_mm512_and_si512(r, high_half));
                finish!(b, a0, a1);
            })
        }};
    }
    // The FMA over the sources `$ptrs` with the scales `$scales` (zipped; arrays of a fixed
    // length keep both in registers).
    macro_rules! fma_blocks {
        ($ptrs:expr, $scales:expr) => {{
            let (ptrs, scales) = ($ptrs, $scales);
            for_blocks!(blocks, streams, group, |b| {
                let off = b * in_bytes;
                let (mut a0, mut a1) = (_mm512_setzero_ps(), _mm512_setzero_ps());
                for (&p, &sc) in ptrs.iter().zip(scales.iter()) {
                    let (x0, x1) = load!(p, off);
                    let s = _mm512_set1_ps(sc);
                    a0 = _mm512_fmadd_ps(x0, s, a0);
                    a1 = _mm512_fmadd_ps(x1, s, a1);
                }
                finish!(b, a0, a1);
            })
        }};
    }
    // `fma_blocks` over exactly `$n` sources.
    macro_rules! fma_fixed {
        ($n:literal, $scales:expr) => {{
            let ptrs: [*const u8; $n] = core::array::from_fn(|i| srcs[i]);
            let scales: [f32; $n] = core::array::from_fn(|i| $scales[i]);
            fma_blocks!(ptrs, scales)
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
                a0 = _mm512_add_ps(a0, x0);
                a1 = _mm512_add_ps(a1, x1);
            }
            finish!(b, a0, a1);
        }),
        // Two to four sources: their pointers and scales held in registers. Loaded from memory
        // in every block (the loop below), the FMA ran at 0.62 of the same-run floor on a Zen 5
        // EPYC when the sources sat 1 MiB + 192 bytes or 4 KiB apart, and at 1.0 back to back
        // (`cce bench numerics`, staggered against contiguous); held here, 1.0 at every gap.
        StreamOp::Fma(scales) if srcs.len() == 2 => fma_fixed!(2, scales),
        StreamOp::Fma(scales) if srcs.len() == 3 => fma_fixed!(3, scales),
        StreamOp::Fma(scales) if srcs.len() == 4 => fma_fixed!(4, scales),
        StreamOp::Fma(scales) => fma_blocks!(srcs, scales),
        StreamOp::MinMax { max: true, clamp: None } if !F32_IN && !rest.is_empty() => minmax_key_blocks!(true),
        StreamOp::MinMax { max: false, clamp: None } if !F32_IN && !rest.is_empty() => minmax_key_blocks!(false),
        StreamOp::MinMax { max: true, clamp } => minmax_blocks!(true, clamp),
        StreamOp::MinMax { max: false, clamp } => minmax_blocks!(false, clamp),
    }
    if NT {
        _mm_sfence();
    }
}

/// Checks an [`Caps::add_to_f16`] call and runs [`add_to_f16_avx512`] on its whole blocks of 32
/// elements; returns the elements done (0 when the call does not qualify, see
/// `super::stream_call`).
///
/// # Safety
/// The CPU must have avx512f and avx512bw.
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn add_to_f16_checked(k: &F16Add, srcs: &[&[u8]], out: &mut [u8]) -> usize {
    let Some((blocks, ptrs)) = super::stream_call(srcs, out, BF16_BLOCK, 2, 2, k.streaming) else { return 0 };
    let ptrs = &ptrs[..srcs.len()];
    let o = out.as_mut_ptr();
    // SAFETY: the CPU features were confirmed by the caller (this function's contract).
    // `ptrs` holds one pointer per source, each to at least `blocks · 64` readable bytes
    // (checked by `stream_call`), `o` points to `blocks · 64` writable bytes, aligned to 64 bytes when
    // streaming (checked by `stream_call`); the slices outlive the call.
    unsafe { by_sat_nt!(k.saturate, k.streaming, add_to_f16_avx512(ptrs, o, blocks, k.keep_sign)) }
    blocks * BF16_BLOCK
}

/// The register-resident AVX-512 ADD of fp16 into fp16. Per block of 32 elements: each source
/// is one 64-byte load whose halves the CPU widens exactly (`vcvtph2ps`), added in source order
/// with IEEE fp32 additions into two accumulators that never leave registers; the sums are
/// rounded by the CPU's RNE conversion (`vcvtps2ph`, rounding fixed by the immediate), which
/// is IEEE's: subnormals exact, overflow → ±inf. Then, on the 16-bit results, saturation is a
/// minimum on the magnitude and NaN becomes 0x7e00 (with the sign when `keep_sign`). One
/// 64-byte store per block (non-temporal when `NT`, then one `sfence`); each source is
/// prefetched [`PF_BF16`] bytes ahead.
///
/// # Safety
/// The CPU must have avx512f and avx512bw; `srcs` is non-empty and each pointer reads
/// `blocks · 64` bytes; `out` writes `blocks · 64` bytes, aligned to 64 when `NT`.
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn add_to_f16_avx512<const SAT: bool, const NT: bool>(
    srcs: &[*const u8],
    out: *mut u8,
    blocks: usize,
    keep_sign: bool,
) {
    use core::arch::x86_64::*;
    let Some((&head, rest)) = srcs.split_first() else { return };
    let abs = _mm512_set1_epi16(0x7fff);
    let inf = _mm512_set1_epi16(0x7c00);
    let max_finite = _mm512_set1_epi16(0x7bff);
    let sign = _mm512_set1_epi16(0x8000u16 as i16);
    let qnan = _mm512_set1_epi16(0x7e00);
    let nan_sign = _mm512_set1_epi16(if keep_sign { 0x8000u16 as i16 } else { 0 });
    macro_rules! load {
        ($p:expr, $off:expr) => {{
            let p: *const u8 = $p;
            // A hint only: prefetching never faults, and the address is not dereferenced.
            _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add($off + PF_BF16).cast());
            // SAFETY: `$off + 64 <= blocks · 64` bytes the caller made readable.
            let w = unsafe { _mm512_loadu_si512(p.add($off).cast()) };
            (_mm512_cvtph_ps(_mm512_castsi512_si256(w)), _mm512_cvtph_ps(_mm512_extracti64x4_epi64::<1>(w)))
        }};
    }
    for b in 0..blocks {
        let off = b * 64;
        let (mut a0, mut a1) = load!(head, off);
        for &p in rest {
            let (x0, x1) = load!(p, off);
            a0 = _mm512_add_ps(a0, x0);
            a1 = _mm512_add_ps(a1, x1);
        }
        let h0 = _mm512_cvtps_ph::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(a0);
        let h1 = _mm512_cvtps_ph::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(a1);
        let h = _mm512_inserti64x4::<1>(_mm512_castsi256_si512(h0), h1);
        let mag = _mm512_and_si512(h, abs);
        let is_nan = _mm512_cmpgt_epu16_mask(mag, inf);
        let r = if SAT {
            // min(magnitude, largest finite) | sign (`vpternlogd` 0xf8: A | (B & C)).
            _mm512_ternarylogic_epi32::<0xf8>(_mm512_min_epu16(mag, max_finite), h, sign)
        } else {
            h
        };
        // The NaN is 0x7e00 | (sign & nan_sign) (0xea: (A & B) | C).
        let v = _mm512_mask_mov_epi16(r, is_nan, _mm512_ternarylogic_epi32::<0xea>(h, nan_sign, qnan));
        // SAFETY: `b · 64 + 64 <= blocks · 64` bytes the caller made writable, 64-byte aligned
        // when streaming.
        unsafe {
            let dst = out.add(off);
            if NT { _mm512_stream_si512(dst.cast(), v) } else { _mm512_storeu_si512(dst.cast(), v) }
        }
    }
    if NT {
        _mm_sfence();
    }
}

/// Checks a [`Caps::widen_bf16`] call and runs [`widen_bf16_avx512`] on its whole blocks of 32
/// elements; returns the elements done (0 when the call does not qualify, see
/// `super::stream_call`).
///
/// # Safety
/// The CPU must have avx512f and avx512dq.
#[target_feature(enable = "avx512f,avx512dq")]
unsafe fn widen_bf16_checked(k: &Bf16Widen, src: &[u8], out: &mut [u8]) -> usize {
    let Some((blocks, _)) = super::stream_call(&[src], out, BF16_BLOCK, 2, 4, k.streaming) else { return 0 };
    let (s, o) = (src.as_ptr(), out.as_mut_ptr());
    // SAFETY: the CPU features were confirmed by the caller (this function's contract). `s`
    // reads at least `blocks · 64` bytes and `o` writes `blocks · 128` (checked by
    // `stream_call`), 64-byte aligned when streaming; the slices outlive the call.
    unsafe { by_sat_nt!(k.saturate, k.streaming, widen_bf16_avx512(s, o, blocks, k.keep_sign)) }
    blocks * BF16_BLOCK
}

/// The register-resident AVX-512 widening of bf16 into fp32. Per block of 32 elements: one
/// 64-byte load, each half zero-extended to 32-bit lanes in element order (`vpmovzxwd`) and
/// shifted into the high half (the exact fp32 value); NaN (`vfpclassps`) becomes 0x7fc0_0000
/// with the sign when `keep_sign`, and with `SAT` an infinity becomes the largest finite fp32
/// of its sign (`x ^ 0x00ff_ffff`). Two 64-byte stores per block (non-temporal when `NT`, then
/// one `sfence`); the source is prefetched [`PF_BF16`] bytes ahead.
///
/// # Safety
/// The CPU must have avx512f and avx512dq; `src` reads `blocks · 64` bytes; `out` writes
/// `blocks · 128` bytes, aligned to 64 when `NT`.
#[target_feature(enable = "avx512f,avx512dq")]
unsafe fn widen_bf16_avx512<const SAT: bool, const NT: bool>(
    src: *const u8,
    out: *mut u8,
    blocks: usize,
    keep_sign: bool,
) {
    use core::arch::x86_64::*;
    let qnan = _mm512_set1_epi32(0x7fc0_0000);
    let nan_sign = _mm512_set1_epi32(if keep_sign { 0x8000_0000u32 as i32 } else { 0 });
    let to_max = _mm512_set1_epi32(0x00ff_ffff);
    let canon = |x: __m512i| {
        let xf = _mm512_castsi512_ps(x);
        // 0x81: quiet or signalling NaN; 0x18: +inf or -inf.
        let is_nan = _mm512_fpclass_ps_mask::<0x81>(xf);
        let x = if SAT { _mm512_mask_xor_epi32(x, _mm512_fpclass_ps_mask::<0x18>(xf), x, to_max) } else { x };
        // The NaN is 0x7fc0_0000 | (sign & nan_sign) (0xea: (A & B) | C).
        _mm512_mask_mov_epi32(x, is_nan, _mm512_ternarylogic_epi32::<0xea>(x, nan_sign, qnan))
    };
    for b in 0..blocks {
        // A hint only: prefetching never faults, and the address is not dereferenced.
        _mm_prefetch::<_MM_HINT_T0>(src.wrapping_add(b * 64 + PF_BF16).cast());
        // SAFETY: `b · 64 + 64 <= blocks · 64` bytes the caller made readable.
        let w = unsafe { _mm512_loadu_si512(src.add(b * 64).cast()) };
        let lo = canon(_mm512_slli_epi32::<16>(_mm512_cvtepu16_epi32(_mm512_castsi512_si256(w))));
        let hi = canon(_mm512_slli_epi32::<16>(_mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64::<1>(w))));
        // SAFETY: `b · 128 + 128 <= blocks · 128` bytes the caller made writable, 64-byte
        // aligned when streaming.
        unsafe {
            let dst = out.add(b * 128);
            if NT {
                _mm512_stream_si512(dst.cast(), lo);
                _mm512_stream_si512(dst.add(64).cast(), hi);
            } else {
                _mm512_storeu_si512(dst.cast(), lo);
                _mm512_storeu_si512(dst.add(64).cast(), hi);
            }
        }
    }
    if NT {
        _mm_sfence();
    }
}

/// The error check's element measures ([`Caps::measure_f32`]): the portable `Lanes::take` on
/// eight f64 lanes at once, each lane the portable lane of the same index, each operation the
/// portable one — the bound as a product then a sum (not fused), `f64::max`'s NaN rule for the
/// ulp's magnitude, the `a > b ? a : b` maxima (`vmaxpd`'s own rule) and the exponent-field
/// arithmetic of `UlpRule::inverse` in 64-bit integer lanes. Returns the elements done (whole
/// groups of eight).
///
/// # Safety
/// The CPU must have avx512f and avx512dq.
#[target_feature(enable = "avx512f,avx512dq")]
unsafe fn measure_f32_avx512(job: &MeasureF32<'_>, lanes: &mut crate::check::Lanes) -> usize {
    use core::arch::x86_64::*;
    let n = job.exact.len().min(job.magnitude.len()).min(job.wide.len() / 4) / 8 * 8;
    // SAFETY: the array is exactly one 64-byte vector, borrowed for the load; unaligned load.
    let pd = |v: &[f64; 8]| unsafe { _mm512_loadu_pd(v.as_ptr()) };
    // SAFETY: as for `pd`.
    let epi = |v: &[u64; 8]| unsafe { _mm512_loadu_si512(v.as_ptr().cast()) };
    let (mut max_abs, mut max_ulp, mut sum, mut max_exact) =
        (pd(&lanes.max_abs), pd(&lanes.max_ulp), pd(&lanes.sum), pd(&lanes.max_exact));
    let (mut counted, mut wrong) = (epi(&lanes.counted), epi(&lanes.wrong));
    let abs_mask = _mm512_castsi512_pd(_mm512_set1_epi64(0x7FFF_FFFF_FFFF_FFFF));
    let inf = _mm512_set1_pd(f64::INFINITY);
    let (rel, add, div) = (_mm512_set1_pd(job.rel), _mm512_set1_pd(job.abs), _mm512_set1_pd(job.scale_divisor));
    let one = _mm512_set1_epi64(1);
    let field_mask = _mm512_set1_epi64(0x7FF);
    let field_top = _mm512_set1_epi64(0x7FF);
    let zero_i = _mm512_setzero_si512();
    let min_exp = _mm512_set1_epi64(job.min_exp);
    let bias = _mm512_set1_epi64(1023);
    let shift = _mm512_set1_epi64(1 - job.precision);
    for i in (0..n).step_by(8) {
        // SAFETY: `i + 8 <= n`, and `n` is within every slice's length (in f64 or f32 units);
        // unaligned loads.
        let (e, m, g) = unsafe {
            (
                _mm512_loadu_pd(job.exact.as_ptr().add(i)),
                _mm512_loadu_pd(job.magnitude.as_ptr().add(i)),
                _mm512_cvtps_pd(_mm256_loadu_ps(job.wide.as_ptr().add(4 * i).cast())),
            )
        };
        let err = _mm512_and_pd(_mm512_sub_pd(g, e), abs_mask);
        let limit = _mm512_add_pd(_mm512_mul_pd(rel, m), add);
        let outside = _mm512_cmp_pd_mask::<_CMP_UNORD_Q>(err, err) | _mm512_cmp_pd_mask::<_CMP_GT_OQ>(err, limit);
        wrong = _mm512_mask_add_epi64(wrong, outside, wrong, one);
        let e_abs = _mm512_and_pd(e, abs_mask);
        let ae = _mm512_maskz_mov_pd(_mm512_cmp_pd_mask::<_CMP_LT_OQ>(e_abs, inf), e_abs);
        max_exact = _mm512_max_pd(ae, max_exact);
        let finite = _mm512_cmp_pd_mask::<_CMP_LT_OQ>(err, inf);
        let err = _mm512_maskz_mov_pd(finite, err);
        max_abs = _mm512_max_pd(err, max_abs);
        // f64::max(m / divisor, |e|): the larger, or the one that is not NaN.
        let q = _mm512_div_pd(m, div);
        let scale = _mm512_max_pd(q, e_abs);
        let scale = _mm512_mask_mov_pd(scale, _mm512_cmp_pd_mask::<_CMP_UNORD_Q>(e_abs, e_abs), q);
        // UlpRule::inverse: 2^-(max(exponent, min_exp) - precision + 1).
        let field = _mm512_and_si512(_mm512_srli_epi64::<52>(_mm512_castpd_si512(scale)), field_mask);
        let edge = _mm512_cmpeq_epi64_mask(field, zero_i) | _mm512_cmpeq_epi64_mask(field, field_top);
        let ex = _mm512_mask_mov_epi64(_mm512_sub_epi64(field, bias), edge, min_exp);
        let k = _mm512_add_epi64(_mm512_max_epi64(ex, min_exp), shift);
        let inverse = _mm512_castsi512_pd(_mm512_slli_epi64::<52>(_mm512_sub_epi64(bias, k)));
        let u = _mm512_mul_pd(err, inverse);
        max_ulp = _mm512_max_pd(u, max_ulp);
        sum = _mm512_add_pd(sum, u);
        counted = _mm512_mask_add_epi64(counted, finite, counted, one);
    }
    // SAFETY: the array is exactly one 64-byte vector, borrowed for the store; unaligned store.
    let st = |v: __m512d, to: &mut [f64; 8]| unsafe { _mm512_storeu_pd(to.as_mut_ptr(), v) };
    st(max_abs, &mut lanes.max_abs);
    st(max_ulp, &mut lanes.max_ulp);
    st(sum, &mut lanes.sum);
    st(max_exact, &mut lanes.max_exact);
    // SAFETY: each array is exactly one 64-byte vector, borrowed for its store; unaligned.
    unsafe {
        _mm512_storeu_si512(lanes.counted.as_mut_ptr().cast(), counted);
        _mm512_storeu_si512(lanes.wrong.as_mut_ptr().cast(), wrong);
    }
    n
}

/// Checks a [`Caps::gce_compress`] call and runs [`gce_compress_avx512`] on its whole blocks;
/// returns the blocks done (0 when the call does not qualify, see `super::gce_call`).
///
/// # Safety
/// The CPU must have avx512f.
#[target_feature(enable = "avx512f")]
unsafe fn gce_compress_checked(src: &[u8], block: usize, scales: &mut [u8], payload: &mut [u8]) -> usize {
    let Some(e5m2) = super::gce_e5m2() else { return 0 };
    let blocks = super::gce_call(src, 4, payload, scales, block);
    // SAFETY: the CPU feature was confirmed by the caller (this function's contract). `src`
    // holds at least `blocks · block · 4` bytes, `payload` `blocks · block` and `scales`
    // `blocks` (checked by `gce_call`); the slices outlive the call.
    unsafe { gce_compress_avx512(&e5m2, src.as_ptr(), block / 16, blocks, scales.as_mut_ptr(), payload.as_mut_ptr()) };
    blocks
}

/// The AVX-512 GCE compressor ([`crate::gce`], 16 values per vector). Per block: the largest
/// finite magnitude, an unsigned maximum of the f32 bits with the sign cleared where they are
/// below infinity's, brought into every lane by four shuffle / maximum steps. The scale byte
/// is `max(((amax + 0x1f_ffff) >> 23) - 15, 0)`, which is the portable `scale_exponent` plus
/// 127: the addition carries into the exponent field exactly when the mantissa is above 1.75,
/// and a subnormal or zero `amax` gives 0. Each value is multiplied by `2^-E` (an f32 with
/// exponent field `254 - byte`; the product is exact wherever it can round to a nonzero e5m2,
/// see the module docs of `crate::gce`) and the product encoded into e5m2 with RNE by the
/// steps of `fp8_encode_avx512` with e5m2's constants: integer rounding for normal results, one
/// IEEE fp32 addition of 2^7 (whose ulp is e5m2's subnormal quantum 2^-16) for subnormal ones.
/// A finite product is at most 57344, so only an infinity reaches past the largest finite code
/// and the minimum with 0x7c is its encoding; a NaN becomes 0x7e; the input's sign goes to
/// bit 7, and `vpmovdb` stores the low bytes.
///
/// # Safety
/// The CPU must have avx512f; `src` reads `blocks · vecs · 64` bytes, `payload` writes
/// `blocks · vecs · 16` and `scales` writes `blocks`.
#[target_feature(enable = "avx512f")]
unsafe fn gce_compress_avx512(
    e5m2: &Fp8Enc,
    src: *const u8,
    vecs: usize,
    blocks: usize,
    scales: *mut u8,
    payload: *mut u8,
) {
    use core::arch::x86_64::*;
    let splat = |v: u32| _mm512_set1_epi32(v as i32);
    let zero = _mm512_setzero_si512();
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
    let magic_f = _mm512_castsi512_ps(magic);
    let one = splat(1);
    let q_inf = splat(e5m2.over);
    let q_nan = splat(e5m2.nan);
    let sign_bit = splat(0x80);
    for b in 0..blocks {
        let at = b * vecs;
        // SAFETY: `(at + v) · 64 + 64 <= blocks · vecs · 64` bytes the caller made
        // readable; unaligned loads.
        let load = |v: usize| unsafe { _mm512_loadu_si512(src.add((at + v) * 64).cast()) };
        let mut m = zero;
        for v in 0..vecs {
            let a = _mm512_and_si512(load(v), abs);
            m = _mm512_mask_max_epu32(m, _mm512_cmplt_epu32_mask(a, inf), m, a);
        }
        m = _mm512_max_epu32(m, _mm512_shuffle_i32x4::<0x4e>(m, m));
        m = _mm512_max_epu32(m, _mm512_shuffle_i32x4::<0xb1>(m, m));
        m = _mm512_max_epu32(m, _mm512_shuffle_epi32::<0x4e>(m));
        m = _mm512_max_epu32(m, _mm512_shuffle_epi32::<0xb1>(m));
        let byte =
            _mm512_max_epi32(_mm512_sub_epi32(_mm512_srli_epi32::<23>(_mm512_add_epi32(m, carry)), byte_bias), zero);
        let scale = _mm512_castsi512_ps(_mm512_slli_epi32::<23>(_mm512_sub_epi32(exp_254, byte)));
        // SAFETY: `b < blocks` bytes the caller made writable.
        unsafe { *scales.add(b) = _mm_cvtsi128_si32(_mm512_castsi512_si128(byte)) as u8 };
        for v in 0..vecs {
            let x = load(v);
            let a = _mm512_and_si512(_mm512_castps_si512(_mm512_mul_ps(_mm512_castsi512_ps(x), scale)), abs);
            let lsb = _mm512_and_si512(_mm512_srl_epi32(a, s0), one);
            let norm = _mm512_srl_epi32(_mm512_add_epi32(_mm512_add_epi32(a, bias_c), lsb), s0);
            let sum = _mm512_add_ps(_mm512_castsi512_ps(a), magic_f);
            let is_small = _mm512_cmplt_epu32_mask(a, small_lim);
            let enc = _mm512_mask_sub_epi32(norm, is_small, _mm512_castps_si512(sum), magic);
            let mag = _mm512_mask_mov_epi32(_mm512_min_epu32(enc, q_inf), _mm512_cmpgt_epu32_mask(a, inf), q_nan);
            // mag | ((x >> 24) & 0x80): `vpternlogd` 0xf8 is A | (B & C).
            let r = _mm512_ternarylogic_epi32::<0xf8>(mag, _mm512_srli_epi32::<24>(x), sign_bit);
            // SAFETY: `(at + v) · 16 + 16 <= blocks · vecs · 16` bytes the caller made
            // writable; unaligned store.
            unsafe { _mm_storeu_si128(payload.add((at + v) * 16).cast(), _mm512_cvtepi32_epi8(r)) };
        }
    }
}

/// Checks a [`Caps::gce_expand`] call and runs [`gce_expand_avx512`] on its whole blocks;
/// returns the blocks done (0 when the call does not qualify, see `super::gce_call`).
///
/// # Safety
/// The CPU must have avx512f, avx512bw and avx2.
#[target_feature(enable = "avx512f,avx512bw,avx2")]
unsafe fn gce_expand_checked(scales: &[u8], payload: &[u8], block: usize, out: &mut [u8]) -> usize {
    let blocks = super::gce_call(out, 4, payload, scales, block);
    // SAFETY: the CPU features were confirmed by the caller (this function's contract).
    // `scales` holds at least `blocks` bytes, `payload` `blocks · block` and `out`
    // `blocks · block · 4` (checked by `gce_call`); the slices outlive the call.
    unsafe { gce_expand_avx512::<false>(scales.as_ptr(), payload.as_ptr(), block / 16, blocks, out.as_mut_ptr()) };
    blocks
}

/// Checks a [`Caps::gce_expand_bf16`] call and runs [`gce_expand_avx512`] rounding to bf16 on
/// its whole blocks; returns the blocks done (0 when the call does not qualify, see
/// `super::gce_call`, two bytes per value in `out`).
///
/// # Safety
/// The CPU must have avx512f, avx512bw and avx2.
#[target_feature(enable = "avx512f,avx512bw,avx2")]
unsafe fn gce_expand_bf16_checked(scales: &[u8], payload: &[u8], block: usize, out: &mut [u8]) -> usize {
    let blocks = super::gce_call(out, 2, payload, scales, block);
    // SAFETY: the CPU features were confirmed by the caller (this function's contract).
    // `scales` holds at least `blocks` bytes, `payload` `blocks · block` and `out`
    // `blocks · block · 2` (checked by `gce_call`); the slices outlive the call.
    unsafe { gce_expand_avx512::<true>(scales.as_ptr(), payload.as_ptr(), block / 16, blocks, out.as_mut_ptr()) };
    blocks
}

/// The AVX-512 GCE expander ([`crate::gce`], 16 values per vector): each e5m2 byte is the high
/// byte of an fp16 with the same value, which `vcvtph2ps` widens exactly (subnormals included;
/// an infinity stays one, a NaN stays a NaN with its sign). The value times `2^E` is formed as
/// two products by the normal powers of two `2^(E >> 1)` and `2^(E - (E >> 1))` (`E` in
/// −127..=128, the halves in −64..=64): the first never rounds, and the second is exact
/// wherever the portable result is exact (the product lies on the f32 grid, module docs of
/// `crate::gce`), and infinite exactly where the portable result saturates — the minimum with
/// the largest finite magnitude. Infinite codes give infinity, NaN codes 0x7fc0_0000, each with
/// the code's sign. With `BF16`, the product is rounded to bf16 (RNE) in registers instead:
/// adding `0x7fff` plus the kept low bit never carries into the sign (no magnitude above inf
/// takes that path), an overflowing product is inf — where the f32 result's `f32::MAX` rounds
/// to inf as well —, a NaN lane becomes `0x7fc0` with its sign, and the high halves are kept
/// (`vpmovdw`; with an even count of vectors per block, `vpermt2w` merges two vectors' halves
/// into one 64-byte store: 0.077 against 0.091 ns per value over 16 Mi values on a Zen 5
/// EPYC): `convert`'s bits for the f32 results.
///
/// # Safety
/// The CPU must have avx512f, avx512bw and avx2; `scales` reads `blocks` bytes, `payload` reads
/// `blocks · vecs · 16` and `out` writes `blocks · vecs · 64` (`blocks · vecs · 32` with
/// `BF16`).
#[target_feature(enable = "avx512f,avx512bw,avx2")]
unsafe fn gce_expand_avx512<const BF16: bool>(
    scales: *const u8,
    payload: *const u8,
    vecs: usize,
    blocks: usize,
    out: *mut u8,
) {
    use core::arch::x86_64::*;
    let splat = |v: u32| _mm512_set1_epi32(v as i32);
    let abs = splat(0x7fff_ffff);
    let inf = splat(0x7f80_0000);
    let qnan = splat(0x7fc0_0000);
    let max = splat(0x7f7f_ffff);
    let sign = splat(0x8000_0000);
    let pow2 = |e: i32| _mm512_castsi512_ps(splat(((127 + e) as u32) << 23));
    // SAFETY: `ODD_WORDS` holds 64 bytes; unaligned load.
    let odd_words = unsafe { _mm512_loadu_si512(ODD_WORDS.as_ptr().cast()) };
    for b in 0..blocks {
        // SAFETY: `b < blocks` bytes the caller made readable.
        let e = i32::from(unsafe { *scales.add(b) }) - 127;
        let (m1, m2) = (pow2(e >> 1), pow2(e - (e >> 1)));
        // Vector `at`'s codes as f32 (`d`) and their values times 2^E (`p`).
        let value = |at: usize| {
            // SAFETY: `at · 16 + 16 <= blocks · vecs · 16` bytes the caller made readable;
            // unaligned load.
            let q = unsafe { _mm_loadu_si128(payload.add(at * 16).cast()) };
            let d = _mm512_cvtph_ps(_mm256_slli_epi16::<8>(_mm256_cvtepu8_epi16(q)));
            (d, _mm512_mul_ps(_mm512_mul_ps(d, m1), m2))
        };
        // The product rounded to bf16 in the high half of each lane: an overflowing product is
        // already inf (the f32 path's f32::MAX rounds to that inf too), so only NaN needs a lane
        // of its own, 0x7fc0_0000 | (p & sign) (`vpternlogd` 0xf8 is A | (B & C)).
        let bf16_hi = |p: __m512| {
            let pi = _mm512_castps_si512(p);
            let lsb = _mm512_and_si512(_mm512_srli_epi32::<16>(pi), splat(1));
            let t = _mm512_add_epi32(_mm512_add_epi32(pi, splat(0x7fff)), lsb);
            let nan = _mm512_ternarylogic_epi32::<0xf8>(qnan, pi, sign);
            _mm512_mask_mov_epi32(t, _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(p, p), nan)
        };
        if BF16 && vecs % 2 == 0 {
            // Two vectors at a time, merged by one `vpermt2w` into one 64-byte store.
            for v in (0..vecs).step_by(2) {
                let at = b * vecs + v;
                let w = _mm512_permutex2var_epi16(bf16_hi(value(at).1), odd_words, bf16_hi(value(at + 1).1));
                // SAFETY: `at · 32 + 64 <= blocks · vecs · 32` bytes the caller made writable
                // (`at + 1 < blocks · vecs`); unaligned store.
                unsafe { _mm512_storeu_si512(out.add(at * 32).cast(), w) };
            }
            continue;
        }
        for v in 0..vecs {
            let at = b * vecs + v;
            let (d, p) = value(at);
            if BF16 {
                let t = _mm512_srli_epi32::<16>(bf16_hi(p));
                // SAFETY: `at · 32 + 32 <= blocks · vecs · 32` bytes the caller made writable;
                // unaligned store.
                unsafe { _mm256_storeu_si256(out.add(at * 32).cast(), _mm512_cvtepi32_epi16(t)) };
                continue;
            }
            let da = _mm512_and_si512(_mm512_castps_si512(d), abs);
            let mag = _mm512_min_epu32(_mm512_and_si512(_mm512_castps_si512(p), abs), max);
            let mag = _mm512_mask_mov_epi32(mag, _mm512_cmpeq_epi32_mask(da, inf), inf);
            let mag = _mm512_mask_mov_epi32(mag, _mm512_cmpgt_epu32_mask(da, inf), qnan);
            // mag | (d & sign): `vpternlogd` 0xf8 is A | (B & C).
            let r = _mm512_ternarylogic_epi32::<0xf8>(mag, _mm512_castps_si512(d), sign);
            // SAFETY: `at · 64 + 64 <= blocks · vecs · 64` bytes the caller made writable;
            // unaligned store.
            unsafe { _mm512_storeu_si512(out.add(at * 64).cast(), r) };
        }
    }
}
