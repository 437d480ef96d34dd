//! Runtime CPU dispatch and the explicit-SIMD kernels: the only modules with `unsafe`.
//!
//! A [`Kernel`]'s body is plain portable Rust marked `#[inline(always)]`. On x86-64 with `std`
//! it is compiled again inside functions with `#[target_feature(enable = …)]` (AVX2 + FMA +
//! F16C + BMI in `avx2`, and AVX-512 F/BW/DQ/VL (+ VBMI) in `avx512` where the compiler
//! supports those features), so the compiler vectorises it for that level; a copy runs only
//! after `is_x86_feature_detected!` confirms every feature it was compiled for. All copies are
//! the same source, and Rust never contracts `a * b + c` into an FMA or reorders float
//! operations, so they give identical bits (tested). Everywhere else the portable copy runs.
//! A kernel made of many loops hands each one to [`Caps::outline`], which runs it in a
//! function of its own at the same level.
//!
//! Each level also brings its hand-written kernels ([`Caps`]): the fp8 table decoder and
//! encoder, the fused fp8 ADD, the register-resident ADD / FMA / MIN / MAX into bf16 and ADD into fp16,
//! and the GCE codec's compress and expand. Each one computes
//! exactly the portable loop's operations in the same order (IEEE fp32 additions in source
//! order, the same integer rounding), so its bits are the portable bits (tested on every
//! pattern class, ragged tails, 1–32 sources and several first indices; the GCE kernels on
//! every e5m2 code under every scale byte and every block size, `tests/gce_isa.rs`).
//!
//! One file per ISA family; each file's `cfg` is written once, on its `mod` line here.
#![allow(unsafe_code)]

/// Calls `$f::<SAT, NT>(args…)` with a kernel's saturate and streaming flags as its
/// compile-time parameters (the kernels' checked entry points share this dispatch).
#[cfg(all(feature = "std", target_arch = "x86_64"))]
macro_rules! by_sat_nt {
    ($sat:expr, $nt:expr, $f:ident($($arg:expr),* $(,)?)) => {
        match ($sat, $nt) {
            (false, false) => $f::<false, false>($($arg),*),
            (false, true) => $f::<false, true>($($arg),*),
            (true, false) => $f::<true, false>($($arg),*),
            (true, true) => $f::<true, true>($($arg),*),
        }
    };
}

/// Runs `$body` once for every block index `$b` in `0..$blocks`, in an order that keeps more
/// reads in flight: the blocks cut into `$streams` equal stretches, visited round robin
/// `$group` blocks at a time, then the few left over in order. One core reading a single
/// stream leaves memory idle: on a 2-vCPU AMD EPYC (Zen 3) an f32 → bf16 narrowing read from
/// one stream ran at 0.73 of memcpy, from four interleaved stretches of 64 elements at
/// 0.96–0.99 (a stand-alone prototype). Blocks are independent, so the order changes no bit.
#[cfg(all(feature = "std", target_arch = "x86_64"))]
macro_rules! for_blocks {
    ($blocks:expr, $streams:expr, $group:expr, |$b:ident| $body:block) => {{
        let (blocks, streams, group): (usize, usize, usize) = ($blocks, $streams, $group);
        let (streams, group) = (streams.max(1), group.max(1));
        let per = blocks / streams;
        let mut i = 0;
        while i < per {
            let g = group.min(per - i);
            for c in 0..streams {
                for j in 0..g {
                    let $b = c * per + i + j;
                    $body
                }
            }
            i += g;
        }
        for $b in streams * per..blocks $body
    }};
}

/// How many read streams the register-resident kernels aim for: a call with fewer sources cuts
/// its blocks into `READ_STREAMS / sources` interleaved stretches ([`for_blocks`]).
#[cfg(all(feature = "std", target_arch = "x86_64"))]
const READ_STREAMS: usize = 4;

/// Elements a kernel takes from one stretch before it moves to the next ([`for_blocks`]).
#[cfg(all(feature = "std", target_arch = "x86_64"))]
const STRETCH_GROUP_ELEMS: usize = 64;

#[cfg(all(feature = "std", target_arch = "x86_64"))]
mod avx2;
#[cfg(all(feature = "std", target_arch = "x86_64", cce_avx512))]
mod avx512;

use crate::float::Fp8Enc;
use crate::types::FloatFormat;

/// Which one-byte float ADDs a level's fused kernel ([`Caps::fp8_add_encode`]) takes.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // only the x86 kernels read it
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FusedFp8 {
    /// The level has no fused kernel.
    None,
    /// Any one-byte input format into any one-byte output format, every tile.
    AnyFormats,
    /// An output of the input's own format (the same exponent bias and mantissa width), and only
    /// tiles whose sources hold no infinity or NaN: the kernel declines the others, one tile at
    /// a time, to the caller's tile loop.
    SameFormat,
}

impl FusedFp8 {
    /// Whether the fused kernel takes an ADD of `in_fmt` sources encoded with `p`.
    pub(crate) fn takes(self, in_fmt: FloatFormat, p: &Fp8Enc) -> bool {
        match self {
            FusedFp8::None => false,
            FusedFp8::AnyFormats => true,
            FusedFp8::SameFormat => p.is_format(in_fmt),
        }
    }
}

/// A block of work whose body is compiled per CPU feature level.
pub(crate) trait Kernel {
    /// The body, given the explicit-SIMD helpers `C` of the level it runs at.
    /// Implementations mark it `#[inline(always)]`.
    fn run<C: Caps>(&mut self);

    /// Whether the job gains from the AVX-512 VBMI level (fp8 byte tables). Jobs without fp8
    /// stay on the plain AVX-512 level, which measured ~25 % faster for bf16.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // only the x86 dispatch asks
    fn wants_vbmi(&self) -> bool {
        false
    }
}

/// The element operation of the register-resident kernels into bf16, in fp32, in source
/// order — each exactly the tile loop's (`crate::fp32_tiles`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum StreamOp {
    /// `acc = x_0; acc = acc + x_i` (IEEE fp32 additions).
    Add,
    /// FMA with the runtime's default selectors: `acc = +0; acc = fma(x_i, scale_i, acc)`
    /// (fused, one rounding), one scale per source.
    Fma([f32; crate::spec::MAX_SOURCES]),
    /// The running MIN or MAX with the model's rules (a NaN gives the canonical NaN
    /// 0x7fc00000, equal values the AND (MAX) or OR (MIN) of their bits, so −0 < +0), then the
    /// same against the clamp, if any.
    MinMax {
        /// MAX (else MIN).
        max: bool,
        /// The clamp operand.
        clamp: Option<f32>,
    },
}

/// What the register-resident kernel into bf16 ([`Caps::reduce_to_bf16`]) computes: the sources
/// combined by [`StreamOp`] in fp32, in source order, rounded to bf16 exactly as
/// [`crate::float::narrow_bf16_rne`] / [`crate::float::narrow_bf16_sr`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Bf16Reduce {
    /// The element operation.
    pub(crate) op: StreamOp,
    /// The sources hold fp32 elements (else bf16).
    pub(crate) f32_in: bool,
    /// Stochastic rounding: the run key ([`crate::rng::run_key`]) of the high half of every
    /// element index of the call (the caller splits calls at 2³² boundaries).
    pub(crate) sr_run_key: Option<u32>,
    /// Overflow saturates to the largest finite bf16.
    pub(crate) saturate: bool,
    /// A NaN result keeps the sign of its sum.
    pub(crate) keep_sign: bool,
    /// Non-temporal stores; the caller gives an output that starts on a 64-byte boundary.
    pub(crate) streaming: bool,
}

/// What the register-resident ADD of fp16 sources into fp16 ([`Caps::add_to_f16`]) computes:
/// the sum of the sources in fp32 (each decoded exactly by the CPU's fp16 → fp32 conversion),
/// in source order, rounded to fp16 with RNE by the CPU's conversion, exactly as
/// [`crate::float::narrow_f32_rne_small`] (overflow → ±inf, or the largest finite when
/// saturating; NaN → 0x7e00, with the sum's sign when `keep_sign`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct F16Add {
    /// Overflow saturates to the largest finite fp16.
    pub(crate) saturate: bool,
    /// A NaN result keeps the sign of its sum.
    pub(crate) keep_sign: bool,
    /// Non-temporal stores; the caller gives an output that starts on a 64-byte boundary.
    pub(crate) streaming: bool,
}

/// What the register-resident widening of bf16 into fp32 ([`Caps::widen_bf16`]) computes: each
/// element's fp32 value exactly (the bf16 bits in the high half), then the fp32 output rules of
/// [`crate::float::canon_f32`]: NaN → 0x7fc0_0000 (with its sign when `keep_sign`), ±inf → the
/// largest finite fp32 of that sign when `saturate`, everything else unchanged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Bf16Widen {
    /// Infinities saturate to the largest finite fp32.
    pub(crate) saturate: bool,
    /// A NaN keeps its sign.
    pub(crate) keep_sign: bool,
    /// Non-temporal stores; the caller gives an output that starts on a 64-byte boundary.
    pub(crate) streaming: bool,
}

/// Explicit-SIMD helpers available at a feature level. Each defaults to "not here" (`false`,
/// or 0 elements done), and the caller then runs its portable loop (same bits).
pub(crate) trait Caps {
    /// The level's name in kernel reports (`cce bench numerics --json`).
    const LEVEL: &'static str;

    /// Runs `k` at this level in a function of its own: compiled for the level's CPU features
    /// (the level's entry point, or the portable twin of one) and never inlined into its caller.
    /// A kernel whose body picks one of many inlined loops hands each loop to this, so that each
    /// loop is one function of ordinary size, compiled once per level; all of them inlined into
    /// the entry point made functions of ~1 MB of machine code, which took most of this crate's
    /// compile time (`docs/performance-history.md`, "Compile time of cce-numerics"). One call per loop,
    /// not per element.
    fn outline<K: Kernel>(k: &mut K);

    /// Decodes 64 one-byte float elements through `table` (bf16 bits of every magnitude
    /// 0..=127, sign from bit 7) into `acc`, or adds them to `acc` when `add`.
    #[inline(always)]
    fn fp8_tile(_table: &[u16; 128], _src: &[u8; 64], _acc: &mut [f32; 64], _add: bool) -> bool {
        false
    }
    /// Encodes 64 f32 values into a one-byte float format with RNE, exactly as
    /// [`crate::float::narrow_f32_rne_small`] with the format behind `p`.
    #[inline(always)]
    fn fp8_encode(_p: &Fp8Enc, _acc: &[f32; 64], _out: &mut [u8; 64]) -> bool {
        false
    }
    /// Which one-byte ADDs [`Caps::fp8_add_encode`] takes, if the level has it.
    const FUSED_FP8: FusedFp8 = FusedFp8::None;
    /// The whole ADD of one-byte float sources into a one-byte float output, fused, from
    /// element `start` on: for each tile of 64 elements of `out` (`out.len()` and `start` are
    /// multiples of 64, and every source is at least as long as `out`), decodes every source
    /// (format `in_fmt`, magnitudes `table`), adds them in fp32 in source order (IEEE addition,
    /// as the portable loop) and encodes the sums exactly as [`Caps::fp8_encode`] does, with
    /// `p`. The sums never leave registers. Returns where it stopped: `out.len()`, or the start
    /// of a tile it leaves to the caller's tile loop (a level may decline tiles it cannot do,
    /// see [`FusedFp8`]); `start` when it does nothing.
    #[inline(always)]
    fn fp8_add_encode(
        _table: &[u16; 128],
        _in_fmt: FloatFormat,
        _p: &Fp8Enc,
        _srcs: &[&[u8]],
        _out: &mut [u8],
        start: usize,
    ) -> usize {
        start
    }
    /// Whether [`Caps::reduce_to_bf16`] is there.
    const BF16_REDUCE: bool = false;
    /// The register-resident reduce into bf16 (see [`Bf16Reduce`]) of the longest prefix of whole
    /// blocks of `out` (bf16 elements; every source holds at least as many elements), where
    /// element `j` has index low half `lo + j` (no wrap: the caller splits). Returns the
    /// elements done; the caller runs the rest portably.
    #[inline(always)]
    fn reduce_to_bf16(_k: &Bf16Reduce, _srcs: &[&[u8]], _out: &mut [u8], _lo: u32) -> usize {
        0
    }
    /// Whether [`Caps::add_to_f16`] is there.
    const F16_ADD: bool = false;
    /// The register-resident ADD of fp16 sources into fp16 (see [`F16Add`]) of the longest
    /// prefix of whole blocks of `out` (every source holds at least as many elements).
    /// Returns the elements done; the caller runs the rest portably.
    #[inline(always)]
    fn add_to_f16(_k: &F16Add, _srcs: &[&[u8]], _out: &mut [u8]) -> usize {
        0
    }
    /// Whether [`Caps::widen_bf16`] is there.
    const BF16_WIDEN: bool = false;
    /// The register-resident widening of one bf16 source into fp32 (see [`Bf16Widen`]) of the
    /// longest prefix of whole blocks of `out` (fp32 elements; the source holds at least as
    /// many). Returns the elements done; the caller runs the rest portably.
    #[inline(always)]
    fn widen_bf16(_k: &Bf16Widen, _src: &[u8], _out: &mut [u8]) -> usize {
        0
    }
    /// The error check's element measures ([`crate::check`]) of the longest prefix of whole
    /// groups of eight elements of `job`, element `i` into lane `i mod 8` of `lanes`, with
    /// exactly the operations of the portable `Lanes::take` in the same order (so the same
    /// bits). Returns the elements done; the caller runs the rest portably.
    #[inline(always)]
    fn measure_f32(_job: &MeasureF32<'_>, _lanes: &mut crate::check::Lanes) -> usize {
        0
    }
    /// Whether [`Caps::gce_compress`] and [`Caps::gce_expand`] are there.
    const GCE: bool = false;
    /// The GCE codec's compression ([`crate::gce`]) of the longest prefix of whole blocks of
    /// `block` values (`src`: f32, little-endian; `block` a multiple of `GCE_STEP`): per block
    /// its scale byte into `scales` and one e5m2 byte per value into `payload`, exactly the
    /// bytes of the portable element loop. Returns the blocks done (see `gce_call`); the
    /// caller runs the rest portably.
    #[inline(always)]
    fn gce_compress(_src: &[u8], _block: usize, _scales: &mut [u8], _payload: &mut [u8]) -> usize {
        0
    }
    /// The GCE codec's expansion ([`crate::gce`]) of the longest prefix of whole blocks of
    /// `block` payload bytes (a multiple of `GCE_STEP`), each block scaled by its byte of
    /// `scales`, into `out` (f32, little-endian), exactly the bits of the portable element
    /// loop. Returns the blocks done (see `gce_call`); the caller runs the rest portably.
    #[inline(always)]
    fn gce_expand(_scales: &[u8], _payload: &[u8], _block: usize, _out: &mut [u8]) -> usize {
        0
    }
    /// [`Caps::gce_expand`] with each f32 rounded to bf16 in registers (RNE as `convert` from
    /// f32 rounds: no saturation, a NaN keeps its sign), two bytes per value into `out`.
    /// Returns the blocks done (see `gce_call`).
    #[inline(always)]
    fn gce_expand_bf16(_scales: &[u8], _payload: &[u8], _block: usize, _out: &mut [u8]) -> usize {
        0
    }
}

/// The e5m2 encoder constants the GCE compressors use: RNE, an infinity stays one, a NaN keeps
/// its sign (`crate::gce`'s payload rule). `None` never happens for e5m2; a kernel that gets it
/// leaves every block to the element loop.
#[cfg(all(feature = "std", target_arch = "x86_64"))]
fn gce_e5m2() -> Option<crate::float::Fp8Enc> {
    crate::float::Fp8Enc::new(crate::types::FloatFormat::E5M2, false, true)
}

/// The values one step of the GCE kernels takes: a block size must be a multiple of it.
#[cfg(all(feature = "std", target_arch = "x86_64"))]
const GCE_STEP: usize = 16;

/// The whole blocks a [`Caps::gce_compress`], [`Caps::gce_expand`] or
/// [`Caps::gce_expand_bf16`] call can run: every block that `values` (`width` bytes per value:
/// 4 for f32, 2 for bf16), `payload` (one byte per value) and `scales` (one byte per block) all
/// hold, or 0 when `block` is 0 or not a multiple of `GCE_STEP`.
#[cfg(all(feature = "std", target_arch = "x86_64"))]
fn gce_call(values: &[u8], width: usize, payload: &[u8], scales: &[u8], block: usize) -> usize {
    if block == 0 || block % GCE_STEP != 0 {
        return 0;
    }
    (values.len() / width / block).min(payload.len() / block).min(scales.len())
}

/// `v`'s bytes, which are its little-endian f32 encodings on a little-endian target (the
/// only targets with SIMD levels here); `None` elsewhere.
pub(crate) fn f32_le_bytes(v: &[f32]) -> Option<&[u8]> {
    if cfg!(target_endian = "big") {
        return None;
    }
    // SAFETY: `v` is `size_of_val(v)` initialised bytes, aligned for f32 and so for u8,
    // borrowed for the lifetime of the result; every byte is a valid u8.
    Some(unsafe { core::slice::from_raw_parts(v.as_ptr().cast::<u8>(), core::mem::size_of_val(v)) })
}

/// [`f32_le_bytes`], writable.
pub(crate) fn f32_le_bytes_mut(v: &mut [f32]) -> Option<&mut [u8]> {
    if cfg!(target_endian = "big") {
        return None;
    }
    // SAFETY: as in `f32_le_bytes`, and the borrow is exclusive; any bytes written through the
    // view form valid f32 values (every bit pattern is one).
    Some(unsafe { core::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<u8>(), core::mem::size_of_val(v)) })
}

/// One block of the error check's measures of an fp32-widened output ([`Caps::measure_f32`]).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // only the x86 kernels read it
#[derive(Clone, Copy)]
pub(crate) struct MeasureF32<'a> {
    /// The exact values.
    pub(crate) exact: &'a [f64],
    /// Σ|x| per element.
    pub(crate) magnitude: &'a [f64],
    /// The output, as little-endian fp32 bytes.
    pub(crate) wide: &'a [u8],
    /// The bound: |err| ≤ rel · Σ|x| + abs.
    pub(crate) rel: f64,
    /// See `rel`.
    pub(crate) abs: f64,
    /// Σ|x| / this is the ulp's magnitude (at least |exact|).
    pub(crate) scale_divisor: f64,
    /// The dtype's precision (implicit bit included).
    pub(crate) precision: i64,
    /// The exponent of its smallest normal.
    pub(crate) min_exp: i64,
}

/// The source pointers of a register-resident kernel call ([`Caps::reduce_to_bf16`],
/// [`Caps::add_to_f16`], [`Caps::widen_bf16`]) and its whole blocks of `block` elements (`in_w`
/// bytes each in the sources, `out_w` in `out`), or `None` when the call does not qualify: no
/// whole block, no sources or more than [`crate::spec::MAX_SOURCES`], a source shorter than the
/// blocks, or a streaming output not on a 64-byte boundary. The first `srcs.len()` pointers are the sources'.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // only the x86 kernels read it
fn stream_call(
    srcs: &[&[u8]],
    out: &[u8],
    block: usize,
    in_w: usize,
    out_w: usize,
    streaming: bool,
) -> Option<(usize, [*const u8; crate::spec::MAX_SOURCES])> {
    let blocks = out.len() / out_w / block;
    if blocks == 0
        || srcs.is_empty()
        || srcs.len() > crate::spec::MAX_SOURCES
        || srcs.iter().any(|s| s.len() < blocks * block * in_w)
        || (streaming && out.as_ptr() as usize % 64 != 0)
    {
        return None;
    }
    let mut ptrs = [core::ptr::null::<u8>(); crate::spec::MAX_SOURCES];
    for (p, s) in ptrs.iter_mut().zip(srcs) {
        *p = s.as_ptr();
    }
    Some((blocks, ptrs))
}

/// Whether a [`Caps::fp8_add_encode`] call is one a fused kernel can run from `start`: some
/// sources, `out` and `start` on tile (64-element) boundaries with `start` inside `out`, and
/// every source at least as long as `out`. Every level's fused kernel checks it first.
#[cfg(all(feature = "std", target_arch = "x86_64"))]
fn fused_fp8_call(srcs: &[&[u8]], out: &[u8], start: usize) -> bool {
    !srcs.is_empty()
        && out.len() % 64 == 0
        && start % 64 == 0
        && start < out.len()
        && srcs.iter().all(|s| s.len() >= out.len())
}

/// No helpers: the portable level.
struct NoCaps;

impl Caps for NoCaps {
    const LEVEL: &'static str = "portable";
    #[inline(always)]
    fn outline<K: Kernel>(k: &mut K) {
        run_portable(k);
    }
}

/// [`NoCaps::outline`]'s function: `k` at the portable level, never inlined.
#[inline(never)]
fn run_portable<K: Kernel>(k: &mut K) {
    k.run::<NoCaps>();
}

/// Which code path the kernels take (see [`detected_isa`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Isa {
    /// Portable code (the baseline target features).
    Portable,
    /// x86-64 with AVX2, FMA, F16C, BMI1 and BMI2.
    Avx2,
    /// The AVX2 set plus AVX-512 F, BW, DQ and VL.
    Avx512,
}

/// The best code path this machine (and this build) supports.
pub fn detected_isa() -> Isa {
    #[cfg(all(feature = "std", target_arch = "x86_64"))]
    {
        let avx2 = std::is_x86_feature_detected!("avx2")
            && std::is_x86_feature_detected!("fma")
            && std::is_x86_feature_detected!("f16c")
            && std::is_x86_feature_detected!("bmi1")
            && std::is_x86_feature_detected!("bmi2");
        #[cfg(cce_avx512)]
        {
            if avx2
                && std::is_x86_feature_detected!("avx512f")
                && std::is_x86_feature_detected!("avx512bw")
                && std::is_x86_feature_detected!("avx512dq")
                && std::is_x86_feature_detected!("avx512vl")
            {
                return Isa::Avx512;
            }
        }
        if avx2 {
            return Isa::Avx2;
        }
    }
    Isa::Portable
}

/// Runs `k` on the best path for this machine; `isa` caps the level (`Portable` pins the
/// portable copy).
pub(crate) fn dispatch<K: Kernel>(k: &mut K, cap: Isa) {
    #[cfg(all(feature = "std", target_arch = "x86_64"))]
    {
        let isa = detected_isa();
        #[cfg(cce_avx512)]
        if isa == Isa::Avx512 && cap == Isa::Avx512 {
            if k.wants_vbmi() && std::is_x86_feature_detected!("avx512vbmi") {
                // SAFETY: `detected_isa` returned `Avx512` only after `is_x86_feature_detected!`
                // confirmed avx2, fma, f16c, bmi1, bmi2, avx512f, avx512bw, avx512dq and
                // avx512vl, and avx512vbmi was confirmed just above: every feature
                // `run_vbmi` is compiled for; it has no other safety requirement.
                unsafe { avx512::run_vbmi(k) };
                return;
            }
            // SAFETY: `detected_isa` returned `Avx512` only after `is_x86_feature_detected!`
            // confirmed avx2, fma, f16c, bmi1, bmi2, avx512f, avx512bw, avx512dq and avx512vl
            // on this CPU — every feature `avx512::run` is compiled for; it has no other
            // safety requirement.
            unsafe { avx512::run(k) };
            return;
        }
        if isa != Isa::Portable && cap != Isa::Portable {
            // SAFETY: `detected_isa` returned `Avx2` or `Avx512` only after
            // `is_x86_feature_detected!` confirmed avx2, fma, f16c, bmi1 and bmi2 on this CPU,
            // exactly the features `avx2::run` is compiled for; it has no other safety
            // requirement.
            unsafe { avx2::run(k) };
            return;
        }
    }
    let _ = cap;
    k.run::<NoCaps>();
}
