//! The hot path: ADD, MIN, MAX (and FMA with `std`) of float sources into an fp32
//! accumulator, written out to a float type.
//!
//! Works tile by tile ([`TILE`] elements whose fp32 partials stay in registers): decode source
//! 0 into the tile, combine each further source in order, encode into output 0; the other
//! outputs are copies of output 0. Every loop is plain element-wise integer / f32 code that
//! the compiler vectorises; [`crate::simd`] compiles it again per CPU feature level and picks
//! at run time. fp32 arithmetic is exact IEEE (no contraction; FMA only through `mul_add`,
//! which is correctly rounded everywhere), so every level gives the same bits as the generic
//! path. Each (decoder, encoder) pair's tile loop is a function of its own at each level
//! ([`Caps::outline`]), with the pair's formats in its types; inlined together into each
//! level's entry point they made this crate slow to compile (`docs/performance-history.md`, "Compile
//! time of cce-numerics").

use crate::float::{
    Fp8Enc, canon_f32, narrow_bf16_rne, narrow_bf16_sr, narrow_f32, narrow_f32_rne_small, widen_to_f32,
};
use crate::rng::{fmix32, run_key};
use crate::simd::Caps;
use crate::types::FloatFormat;

/// The hot operations.
#[derive(Clone, Copy, Debug)]
pub(crate) enum F32AccOp<'s> {
    Add,
    /// MIN or MAX, with the clamp constant already in fp32.
    MinMax {
        /// MAX (else MIN).
        max: bool,
        /// The clamp operand, if any.
        clamp: Option<f32>,
    },
    /// FMA with one operand set per source.
    #[cfg(feature = "std")]
    Fma(&'s [crate::spec::FmaSource]),
    #[cfg(not(feature = "std"))]
    #[allow(dead_code, reason = "keeps the lifetime used without std")]
    Never(&'s ()),
}

/// The resolved parameters of a hot reduce: float sources, an fp32 accumulator, a float
/// output, and one of the [`F32AccOp`]s.
#[derive(Clone, Copy, Debug)]
pub(crate) struct F32AccPlan<'s> {
    pub(crate) op: F32AccOp<'s>,
    pub(crate) in_fmt: FloatFormat,
    pub(crate) out_fmt: FloatFormat,
    /// SR key of site 0, when stochastic and the output is narrower than fp32.
    pub(crate) sr_key: Option<u64>,
    pub(crate) saturate: bool,
    /// A NaN keeps its sign only when no operation touched it (one source, no clamp, not FMA).
    pub(crate) keep_sign: bool,
    /// The call's whole output is large enough for non-temporal stores
    /// ([`crate::reduce`]'s `STREAM_MIN_BYTES`); the kernels that have them use them.
    pub(crate) streaming: bool,
}

/// Element decoders: raw little-endian bits → f32 bits.
trait Dec {
    const W: usize;
    fn dec(&self, raw: u32) -> u32;
    /// For one-byte formats: bf16 bits of every magnitude (for [`Caps::fp8_tile`]).
    fn fp8_table(&self) -> Option<&[u16; 128]> {
        None
    }
    /// For one-byte formats: the format (for [`Caps::fp8_add_encode`]).
    fn fp8_format(&self) -> Option<FloatFormat> {
        None
    }
}

struct DecF32;
impl Dec for DecF32 {
    const W: usize = 4;
    #[inline(always)]
    fn dec(&self, raw: u32) -> u32 {
        raw
    }
}

struct DecBf16;
impl Dec for DecBf16 {
    const W: usize = 2;
    #[inline(always)]
    fn dec(&self, raw: u32) -> u32 {
        raw << 16
    }
}

/// A float format as a type: the decoders and encoders of f16 and the one-byte formats carry
/// theirs in their type, so that each (decoder, encoder) pair's tile loop, a function of its own
/// ([`Caps::outline`]), is compiled with its formats' constants.
trait Format {
    const FMT: FloatFormat;
    /// Bytes per element.
    const W: usize = ((1 + Self::FMT.ebits + Self::FMT.mbits) / 8) as usize;
}

macro_rules! formats {
    ($($(#[$doc:meta])* $name:ident = $fmt:ident;)*) => {$(
        $(#[$doc])*
        struct $name;
        impl Format for $name {
            const FMT: FloatFormat = FloatFormat::$fmt;
        }
    )*};
}

formats! {
    /// fp32 (as an output).
    F32 = F32;
    /// fp16.
    F16 = F16;
    /// fp8 e3m4.
    E3M4 = E3M4;
    /// fp8 e4m3.
    E4M3 = E4M3;
    /// fp8 e5m2.
    E5M2 = E5M2;
    /// fp8 e4m3fn.
    E4M3FN = E4M3FN;
}

struct DecFmt<F>(core::marker::PhantomData<F>);
impl<F: Format> Dec for DecFmt<F> {
    const W: usize = F::W;
    #[inline(always)]
    fn dec(&self, raw: u32) -> u32 {
        widen_to_f32(raw, F::FMT)
    }
}

/// A one-byte float format with its magnitude table: `table[m] = widen_to_f32(m) >> 16`
/// (every fp8 value is exactly a bf16, so the low half is always zero).
struct DecFp8<F> {
    table: [u16; 128],
    fmt: core::marker::PhantomData<F>,
}
impl<F: Format> DecFp8<F> {
    fn new() -> DecFp8<F> {
        let mut table = [0u16; 128];
        for (m, t) in table.iter_mut().enumerate() {
            *t = (widen_to_f32(m as u32, F::FMT) >> 16) as u16;
        }
        DecFp8 { table, fmt: core::marker::PhantomData }
    }
}
impl<F: Format> Dec for DecFp8<F> {
    const W: usize = 1;
    #[inline(always)]
    fn dec(&self, raw: u32) -> u32 {
        widen_to_f32(raw, F::FMT)
    }
    #[inline(always)]
    fn fp8_table(&self) -> Option<&[u16; 128]> {
        Some(&self.table)
    }
    #[inline(always)]
    fn fp8_format(&self) -> Option<FloatFormat> {
        Some(F::FMT)
    }
}

/// Element encoders: f32 bits → raw bits. `lo` is the low half of the global element index
/// and `rk` the [`run_key`] of its high half (used only when stochastic).
trait Enc {
    const W: usize;
    /// The 64-bit SR key, if stochastic.
    fn key(&self) -> Option<u64>;
    fn enc(&self, x: u32, lo: u32, rk: u32) -> u32;
    /// For RNE into a one-byte format: the constants of [`Caps::fp8_encode`].
    fn fp8_enc(&self) -> Option<Fp8Enc> {
        None
    }
}

struct EncBf16Rne {
    sat: bool,
    keep: bool,
}
impl Enc for EncBf16Rne {
    const W: usize = 2;
    #[inline(always)]
    fn key(&self) -> Option<u64> {
        None
    }
    #[inline(always)]
    fn enc(&self, x: u32, _: u32, _: u32) -> u32 {
        u32::from(narrow_bf16_rne(x, self.sat, self.keep))
    }
}

struct EncBf16Sr {
    key: u64,
    sat: bool,
    keep: bool,
}
impl Enc for EncBf16Sr {
    const W: usize = 2;
    #[inline(always)]
    fn key(&self) -> Option<u64> {
        Some(self.key)
    }
    #[inline(always)]
    fn enc(&self, x: u32, lo: u32, rk: u32) -> u32 {
        u32::from(narrow_bf16_sr(x, fmix32(lo ^ rk), self.sat, self.keep))
    }
}

struct EncFmt<F, const SR: bool> {
    key: u64,
    sat: bool,
    keep: bool,
    fmt: core::marker::PhantomData<F>,
}
impl<F: Format, const SR: bool> EncFmt<F, SR> {
    fn new(key: u64, sat: bool, keep: bool) -> EncFmt<F, SR> {
        EncFmt { key, sat, keep, fmt: core::marker::PhantomData }
    }
}
impl<F: Format, const SR: bool> Enc for EncFmt<F, SR> {
    const W: usize = F::W;
    #[inline(always)]
    fn key(&self) -> Option<u64> {
        if SR { Some(self.key) } else { None }
    }
    #[inline(always)]
    fn enc(&self, x: u32, lo: u32, rk: u32) -> u32 {
        if SR {
            narrow_f32::<true>(x, fmix32(lo ^ rk), F::FMT, self.sat, self.keep)
        } else if F::FMT == FloatFormat::F32 {
            canon_f32(x, self.sat, self.keep)
        } else if F::FMT.ebits < 8 {
            narrow_f32_rne_small(x, F::FMT, self.sat, self.keep)
        } else {
            narrow_f32::<false>(x, 0, F::FMT, self.sat, self.keep)
        }
    }
    #[inline(always)]
    fn fp8_enc(&self) -> Option<Fp8Enc> {
        // Exactly the formats whose portable `enc` is `narrow_f32_rne_small` and one byte wide.
        if SR || F::W != 1 { None } else { Fp8Enc::new(F::FMT, self.sat, self.keep) }
    }
}

#[inline(always)]
fn load<const W: usize>(c: &[u8]) -> u32 {
    match W {
        1 => u32::from(c[0]),
        2 => u32::from(u16::from_le_bytes([c[0], c[1]])),
        _ => u32::from_le_bytes([c[0], c[1], c[2], c[3]]),
    }
}

/// Elements per tile: the fp32 partial sums of one tile live in eight 256-bit registers.
pub(crate) const TILE: usize = 64;

/// The hot reduce over whole (validated) buffers; element `j` has global index `first + j`.
#[inline(always)]
pub(crate) fn run<C: Caps>(p: &F32AccPlan<'_>, sources: &[&[u8]], outputs: &mut [&mut [u8]], first: u64) {
    if let (Some(kind), Some(op)) = (p.stream_at::<C>(sources.len()), p.stream_op(sources.len())) {
        run_stream::<C>(kind, op, p, sources, outputs, first);
    } else {
        run_tiles::<C>(p, sources, outputs, first);
    }
}

/// A register-resident kernel ([`Caps::reduce_to_bf16`], [`Caps::add_to_f16`],
/// [`Caps::widen_bf16`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stream {
    /// ADD into bf16 of bf16 sources, or of fp32 ones when `f32_in`.
    Bf16 { f32_in: bool },
    /// ADD of fp16 sources into fp16 with RNE.
    F16,
    /// One bf16 source into fp32 (a widening convert).
    Widen,
}

impl F32AccPlan<'_> {
    /// The register-resident kernels' form of the op over `n` sources: every op but FMA with
    /// selectors other than the runtime's default (`scale · src + acc`), or with another number
    /// of operand sets than sources.
    fn stream_op(&self, n: usize) -> Option<crate::simd::StreamOp> {
        use crate::simd::StreamOp;
        Some(match self.op {
            F32AccOp::Add => StreamOp::Add,
            F32AccOp::MinMax { max, clamp } => StreamOp::MinMax { max, clamp },
            #[cfg(feature = "std")]
            F32AccOp::Fma(ops) => {
                use crate::spec::Operand::{Input, Scale, Stored};
                let default = |o: &crate::spec::FmaSource| {
                    matches!((o.a, o.b, o.c), (Input, Scale, Stored) | (Scale, Input, Stored))
                };
                if ops.len() != n || n > crate::spec::MAX_SOURCES || !ops.iter().all(default) {
                    return None;
                }
                let mut scales = [0f32; crate::spec::MAX_SOURCES];
                for (s, o) in scales.iter_mut().zip(ops) {
                    *s = o.scale;
                }
                StreamOp::Fma(scales)
            }
            #[cfg(not(feature = "std"))]
            F32AccOp::Never(_) => return None,
        })
    }

    /// The register-resident kernel that does this job over `n` sources at level `C`, if any.
    fn stream_at<C: Caps>(&self, n: usize) -> Option<Stream> {
        let op = self.stream_op(n)?;
        match (self.in_fmt, self.out_fmt) {
            (FloatFormat::BF16, FloatFormat::BF16) if C::BF16_REDUCE => Some(Stream::Bf16 { f32_in: false }),
            (FloatFormat::F32, FloatFormat::BF16) if C::BF16_REDUCE => Some(Stream::Bf16 { f32_in: true }),
            (FloatFormat::BF16, FloatFormat::F32) if C::BF16_WIDEN && n == 1 && op == crate::simd::StreamOp::Add => {
                Some(Stream::Widen)
            }
            (FloatFormat::F16, FloatFormat::F16)
                if C::F16_ADD && self.sr_key.is_none() && op == crate::simd::StreamOp::Add =>
            {
                Some(Stream::F16)
            }
            _ => None,
        }
    }

    /// Whether the job gains from the AVX-512 VBMI level: one-byte floats on either side (the
    /// VBMI decode tables and the fp8 encoder).
    pub(crate) fn wants_vbmi(&self) -> bool {
        let one_byte = |f: FloatFormat| 1 + f.ebits + f.mbits == 8;
        one_byte(self.in_fmt) || one_byte(self.out_fmt)
    }

    /// The route [`run`] takes at level `C` over `n` sources, for kernel reports.
    pub(crate) fn route<C: Caps>(&self, n: usize) -> &'static str {
        use crate::simd::StreamOp;
        let one_byte = |f: FloatFormat| 1 + f.ebits + f.mbits == 8;
        let op = self.stream_op(n);
        match (self.stream_at::<C>(n), self.streaming) {
            (Some(Stream::Bf16 { .. }), nt) => match (op, nt) {
                (Some(StreamOp::Fma(_)), true) => "bf16-fma-nt",
                (Some(StreamOp::Fma(_)), false) => "bf16-fma",
                (Some(StreamOp::MinMax { max: true, .. }), true) => "bf16-max-nt",
                (Some(StreamOp::MinMax { max: true, .. }), false) => "bf16-max",
                (Some(StreamOp::MinMax { max: false, .. }), true) => "bf16-min-nt",
                (Some(StreamOp::MinMax { max: false, .. }), false) => "bf16-min",
                (_, true) => "bf16-add-nt",
                (_, false) => "bf16-add",
            },
            (Some(Stream::F16), true) => "f16-add-nt",
            (Some(Stream::F16), false) => "f16-add",
            (Some(Stream::Widen), true) => "bf16-widen-nt",
            (Some(Stream::Widen), false) => "bf16-widen",
            _ if matches!(self.op, F32AccOp::Add)
                && one_byte(self.in_fmt)
                && self.sr_key.is_none()
                && Fp8Enc::new(self.out_fmt, self.saturate, self.keep_sign)
                    .is_some_and(|p| C::FUSED_FP8.takes(self.in_fmt, &p)) =>
            {
                "fp8-fused"
            }
            _ => "tiles",
        }
    }
}

/// A reduce into bf16 (`op`), an ADD into fp16 or a widening of bf16 into fp32 through the
/// level's register-resident kernel: a head of up to 63 bytes of output runs the tile loop when
/// streaming (so the kernel's stores start on a 64-byte boundary), then the kernel runs each stretch of indices that share their high half
/// (stochastic rounding keys on it), and the tile loop finishes each stretch's ragged end.
/// Output 0 is computed; the others are copies.
#[inline(always)]
fn run_stream<'a, C: Caps>(
    kind: Stream,
    op: crate::simd::StreamOp,
    p: &F32AccPlan<'_>,
    srcs: &[&'a [u8]],
    outs: &mut [&mut [u8]],
    first: u64,
) {
    let Some((out0, rest)) = outs.split_first_mut() else { return };
    let in_w = if kind == (Stream::Bf16 { f32_in: true }) { 4 } else { 2 };
    let out_w = if kind == Stream::Widen { 4 } else { 2 };
    let n = out0.len() / out_w;
    let addr = out0.as_ptr() as usize;
    let streaming = p.streaming && addr % out_w == 0;
    let head = if streaming { ((64 - addr % 64) % 64 / out_w).min(n) } else { 0 };
    let mut views: [&'a [u8]; crate::spec::MAX_SOURCES] = [&[]; crate::spec::MAX_SOURCES];
    let views = &mut views[..srcs.len()];
    let tiles = |views: &mut [&'a [u8]], out0: &mut [u8], a: usize, b: usize| {
        if a < b {
            for (v, s) in views.iter_mut().zip(srcs) {
                *v = &s[a * in_w..b * in_w];
            }
            run_tiles::<C>(p, views, &mut [&mut out0[out_w * a..out_w * b]], first.wrapping_add(a as u64));
        }
    };
    tiles(views, out0, 0, head);
    let mut s = head;
    while s < n {
        let g = first.wrapping_add(s as u64);
        // (A widening has no run key: rounding into fp32 is never stochastic, see `fast_plan`.)
        let seg = match p.sr_key {
            Some(_) => (n - s).min(usize::try_from((1u64 << 32) - (g & 0xffff_ffff)).unwrap_or(usize::MAX)),
            None => n - s,
        };
        for (v, src) in views.iter_mut().zip(srcs) {
            *v = &src[s * in_w..(s + seg) * in_w];
        }
        let out = &mut out0[out_w * s..out_w * (s + seg)];
        let streaming = streaming && out.as_ptr() as usize % 64 == 0;
        let done = match kind {
            Stream::Bf16 { f32_in } => {
                let k = crate::simd::Bf16Reduce {
                    op,
                    f32_in,
                    sr_run_key: p.sr_key.map(|key| run_key(key, (g >> 32) as u32)),
                    saturate: p.saturate,
                    keep_sign: p.keep_sign,
                    streaming,
                };
                C::reduce_to_bf16(&k, views, out, g as u32)
            }
            Stream::F16 => {
                let k = crate::simd::F16Add { saturate: p.saturate, keep_sign: p.keep_sign, streaming };
                C::add_to_f16(&k, views, out)
            }
            Stream::Widen => {
                let k = crate::simd::Bf16Widen { saturate: p.saturate, keep_sign: p.keep_sign, streaming };
                views.first().map_or(0, |src| C::widen_bf16(&k, src, out))
            }
        };
        tiles(views, out0, s + done, s + seg);
        s += seg;
    }
    for o in rest {
        o.copy_from_slice(out0);
    }
}

/// The tile loop (and the fused fp8 kernel where the level has it).
#[inline(always)]
fn run_tiles<C: Caps>(p: &F32AccPlan<'_>, sources: &[&[u8]], outputs: &mut [&mut [u8]], first: u64) {
    match p.in_fmt {
        FloatFormat::F32 => run_d::<C, _>(DecF32, p, sources, outputs, first),
        FloatFormat::BF16 => run_d::<C, _>(DecBf16, p, sources, outputs, first),
        FloatFormat::F16 => run_d::<C, _>(DecFmt::<F16>(core::marker::PhantomData), p, sources, outputs, first),
        FloatFormat::E3M4 => run_d::<C, _>(DecFp8::<E3M4>::new(), p, sources, outputs, first),
        FloatFormat::E4M3 => run_d::<C, _>(DecFp8::<E4M3>::new(), p, sources, outputs, first),
        FloatFormat::E5M2 => run_d::<C, _>(DecFp8::<E5M2>::new(), p, sources, outputs, first),
        FloatFormat::E4M3FN => run_d::<C, _>(DecFp8::<E4M3FN>::new(), p, sources, outputs, first),
        // Not reachable: `fast_plan` admits only the formats above.
        _ => {}
    }
}

/// Picks the encoder and runs the (decoder, encoder) pair's tile loop as a function of its own
/// ([`Tiles`], [`Caps::outline`]): every format is in the pair's types, so the loop is compiled
/// with its formats' constants, once per pair and level.
#[inline(always)]
fn run_d<C: Caps, D: Dec>(d: D, p: &F32AccPlan<'_>, srcs: &[&[u8]], outs: &mut [&mut [u8]], first: u64) {
    let (sat, keep) = (p.saturate, p.keep_sign);
    macro_rules! go {
        ($e:expr) => {
            C::outline(&mut Tiles { op: p.op, d: &d, e: &$e, srcs, outs, first })
        };
    }
    macro_rules! fmt_enc {
        ($f:ty) => {
            match p.sr_key {
                Some(key) => go!(EncFmt::<$f, true>::new(key, sat, keep)),
                None => go!(EncFmt::<$f, false>::new(0, sat, keep)),
            }
        };
    }
    match p.out_fmt {
        FloatFormat::BF16 => match p.sr_key {
            Some(key) => go!(EncBf16Sr { key, sat, keep }),
            None => go!(EncBf16Rne { sat, keep }),
        },
        // Rounding into fp32 is never stochastic.
        FloatFormat::F32 => go!(EncFmt::<F32, false>::new(0, sat, keep)),
        FloatFormat::F16 => fmt_enc!(F16),
        FloatFormat::E3M4 => fmt_enc!(E3M4),
        FloatFormat::E4M3 => fmt_enc!(E4M3),
        FloatFormat::E5M2 => fmt_enc!(E5M2),
        FloatFormat::E4M3FN => fmt_enc!(E4M3FN),
        _ => {}
    }
}

/// One (decoder, encoder) pair's tile loop ([`run_de`]) as a [`crate::simd::Kernel`], for
/// [`Caps::outline`].
struct Tiles<'a, 'b, 'c, 's, D, E> {
    op: F32AccOp<'s>,
    d: &'a D,
    e: &'a E,
    srcs: &'a [&'b [u8]],
    outs: &'a mut [&'c mut [u8]],
    first: u64,
}

impl<D: Dec, E: Enc> crate::simd::Kernel for Tiles<'_, '_, '_, '_, D, E> {
    #[inline(always)]
    fn run<C: Caps>(&mut self) {
        run_de::<C, D, E>(self.op, self.d, self.e, self.srcs, self.outs, self.first);
    }
}

/// Decodes `len` elements of `src` starting at element `base` into `acc` (or adds them).
#[inline(always)]
fn dec_into<D: Dec, const ADD: bool>(d: &D, src: &[u8], base: usize, acc: &mut [f32]) {
    let w = D::W;
    let src = &src[base * w..(base + acc.len()) * w];
    match w {
        1 => dec_w::<D, 1, ADD>(d, src, acc),
        2 => dec_w::<D, 2, ADD>(d, src, acc),
        _ => dec_w::<D, 4, ADD>(d, src, acc),
    }
}

#[inline(always)]
fn dec_w<D: Dec, const W: usize, const ADD: bool>(d: &D, src: &[u8], acc: &mut [f32]) {
    for (a, c) in acc.iter_mut().zip(src.chunks_exact(W)) {
        let v = f32::from_bits(d.dec(load::<W>(c)));
        if ADD {
            *a += v;
        } else {
            *a = v;
        }
    }
}

#[inline(always)]
fn enc_from<E: Enc>(e: &E, acc: &[f32], out: &mut [u8], base: usize, first: u64) {
    let w = E::W;
    let out = &mut out[base * w..(base + acc.len()) * w];
    let f = first.wrapping_add(base as u64);
    let last = f.wrapping_add(acc.len() as u64).wrapping_sub(1);
    if e.key().is_some() && f >> 32 != last >> 32 {
        // The tile crosses a 2^32 boundary of the element index (or wraps): split it there.
        let cut = (f.wrapping_neg() & 0xffff_ffff) as usize;
        let (a0, a1) = acc.split_at(cut.min(acc.len()));
        let (o0, o1) = out.split_at_mut(a0.len() * w);
        enc_part(e, a0, o0, f);
        enc_part(e, a1, o1, f.wrapping_add(a0.len() as u64));
    } else {
        enc_part(e, acc, out, f);
    }
}

/// A full tile into a one-byte format through the level's explicit-SIMD RNE encoder, if any.
#[inline(always)]
fn fp8_full_enc<C: Caps>(p: Option<&Fp8Enc>, acc: &[f32], out: &mut [u8], base: usize) -> bool {
    let Some(p) = p else { return false };
    let (Ok(acc), Some(Ok(out))) =
        (<&[f32; TILE]>::try_from(acc), out.get_mut(base..base + TILE).map(<&mut [u8; TILE]>::try_from))
    else {
        return false;
    };
    C::fp8_encode(p, acc, out)
}

/// Encodes elements whose indices `f..f + acc.len()` share their high half.
#[inline(always)]
fn enc_part<E: Enc>(e: &E, acc: &[f32], out: &mut [u8], f: u64) {
    let rk = e.key().map_or(0, |k| run_key(k, (f >> 32) as u32));
    match E::W {
        1 => enc_w::<E, 1>(e, acc, out, f as u32, rk),
        2 => enc_w::<E, 2>(e, acc, out, f as u32, rk),
        _ => enc_w::<E, 4>(e, acc, out, f as u32, rk),
    }
}

#[inline(always)]
fn enc_w<E: Enc, const W: usize>(e: &E, acc: &[f32], out: &mut [u8], lo: u32, rk: u32) {
    for ((k, a), o) in acc.iter().enumerate().zip(out.chunks_exact_mut(W)) {
        let v = e.enc(a.to_bits(), lo.wrapping_add(k as u32), rk);
        o.copy_from_slice(&v.to_le_bytes()[..W]);
    }
}

/// What every tile of one run reads: the op, the decoder and encoder, the fused fp8 encoder
/// (when the output is fp8), the sources and the first element's index.
struct TileInputs<'a, 'o, D, E> {
    op: F32AccOp<'o>,
    d: &'a D,
    e: &'a E,
    fp8: Option<&'a Fp8Enc>,
    srcs: &'a [&'a [u8]],
    first: u64,
}

impl<D: Dec, E: Enc> TileInputs<'_, '_, D, E> {
    /// One tile (or the final partial tile) of `acc.len()` elements at `base`, into `out`.
    #[inline(always)]
    fn tile<C: Caps>(&self, out: &mut [u8], base: usize, acc: &mut [f32]) {
        let TileInputs { op, d, e, fp8, srcs, first } = *self;
        match op {
            F32AccOp::Add => {
                if !fp8_full_tile::<C, D>(d, srcs, base, acc) {
                    dec_into::<D, false>(d, srcs[0], base, acc);
                    for s in &srcs[1..] {
                        dec_into::<D, true>(d, s, base, acc);
                    }
                }
            }
            F32AccOp::MinMax { max, clamp } => {
                dec_into::<D, false>(d, srcs[0], base, acc);
                let mut x = [0f32; TILE];
                let x = &mut x[..acc.len()];
                for s in &srcs[1..] {
                    dec_into::<D, false>(d, s, base, x);
                    for (a, b) in acc.iter_mut().zip(x.iter()) {
                        *a = minmax32(*a, *b, max);
                    }
                }
                if let Some(c) = clamp {
                    for a in acc.iter_mut() {
                        *a = minmax32(*a, c, max);
                    }
                }
            }
            #[cfg(feature = "std")]
            F32AccOp::Fma(ops) => {
                use crate::spec::Operand;
                acc.fill(0.0);
                let mut x = [0f32; TILE];
                let x = &mut x[..acc.len()];
                for (s, o) in srcs.iter().zip(ops) {
                    dec_into::<D, false>(d, s, base, x);
                    let sc = o.scale;
                    match (o.a, o.b, o.c) {
                        // The runtime's default, scale·src + acc: one loop the compiler vectorises
                        // (the same correctly rounded fused multiply-add as the general arm).
                        (Operand::Input, Operand::Scale, Operand::Stored)
                        | (Operand::Scale, Operand::Input, Operand::Stored) => {
                            for (a, xv) in acc.iter_mut().zip(x.iter()) {
                                *a = xv.mul_add(sc, *a);
                            }
                        }
                        _ => {
                            let pick = |sel: Operand, a: f32, x: f32| match sel {
                                Operand::Stored => a,
                                Operand::Input => x,
                                Operand::Scale => sc,
                            };
                            for (a, xv) in acc.iter_mut().zip(x.iter()) {
                                *a = pick(o.a, *a, *xv).mul_add(pick(o.b, *a, *xv), pick(o.c, *a, *xv));
                            }
                        }
                    }
                }
            }
            #[cfg(not(feature = "std"))]
            F32AccOp::Never(_) => {}
        }
        if !fp8_full_enc::<C>(fp8, acc, out, base) {
            enc_from(e, acc, out, base, first);
        }
    }
}

/// MIN / MAX on fp32 with the model's rules: NaN propagates, −0 < +0.
#[inline(always)]
fn minmax32(a: f32, b: f32, max: bool) -> f32 {
    let (ab, bb) = (a.to_bits(), b.to_bits());
    let eq = if max { f32::from_bits(ab & bb) } else { f32::from_bits(ab | bb) };
    let pick = if max {
        if a > b { a } else { b }
    } else if a < b {
        a
    } else {
        b
    };
    if a.is_nan() || b.is_nan() {
        f32::NAN
    } else if a == b {
        eq
    } else {
        pick
    }
}

/// A full tile of a one-byte input through the level's explicit-SIMD table decoder, if any.
#[inline(always)]
fn fp8_full_tile<C: Caps, D: Dec>(d: &D, srcs: &[&[u8]], base: usize, acc: &mut [f32]) -> bool {
    let (Some(table), Ok(acc)) = (d.fp8_table(), <&mut [f32; TILE]>::try_from(acc)) else { return false };
    let mut add = false;
    for s in srcs {
        let Some(Ok(src)) = s.get(base..base + TILE).map(<&[u8; TILE]>::try_from) else { return false };
        if !C::fp8_tile(table, src, acc, add) {
            return false;
        }
        add = true;
    }
    true
}

#[inline(always)]
fn run_de<C: Caps, D: Dec, E: Enc>(op: F32AccOp<'_>, d: &D, e: &E, srcs: &[&[u8]], outs: &mut [&mut [u8]], first: u64) {
    let Some((out0, rest)) = outs.split_first_mut() else { return };
    let n = srcs[0].len() / D::W;
    let mut acc = [0f32; TILE];
    let fp8 = e.fp8_enc();
    let fp8 = fp8.as_ref();
    let full = n / TILE * TILE;
    let mut base = 0;
    // One-byte in and out (`fp8_table` and `fp8_enc` are only given for those, so an element
    // is a byte): the whole tiles through the fused kernel, if the level has one that takes
    // the formats; a tile it declines runs the tile loop, and the kernel goes on after it.
    let fused = match (op, d.fp8_table(), d.fp8_format(), fp8) {
        (F32AccOp::Add, Some(table), Some(f), Some(p)) if C::FUSED_FP8.takes(f, p) => Some((table, f, p)),
        _ => None,
    };
    let tiles = TileInputs { op, d, e, fp8, srcs, first };
    while base < full {
        if let Some((table, f, p)) = fused {
            base = C::fp8_add_encode(table, f, p, srcs, &mut out0[..full], base);
            if base >= full {
                break;
            }
        }
        tiles.tile::<C>(out0, base, &mut acc);
        base += TILE;
    }
    if full < n {
        tiles.tile::<C>(out0, full, &mut acc[..n - full]);
    }
    for o in rest {
        o.copy_from_slice(out0);
    }
}

/// The hot path as a [`crate::simd::Kernel`].
pub(crate) struct F32AccJob<'a, 'b, 'c, 's> {
    pub(crate) plan: F32AccPlan<'s>,
    pub(crate) sources: &'a [&'b [u8]],
    pub(crate) outputs: &'a mut [&'c mut [u8]],
    pub(crate) first: u64,
}

impl crate::simd::Kernel for F32AccJob<'_, '_, '_, '_> {
    #[inline(always)]
    fn run<C: Caps>(&mut self) {
        run::<C>(&self.plan, self.sources, self.outputs, self.first);
    }

    fn wants_vbmi(&self) -> bool {
        self.plan.wants_vbmi()
    }
}
