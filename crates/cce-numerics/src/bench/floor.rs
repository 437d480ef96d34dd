//! The memory floor: the least work a job of k source streams and one destination can do on
//! this host, so a kernel's GB/s can be held to what the memory allows rather than to memcpy.
//!
//! Per 64 bytes of output, [`floor_pass`] loads the matching bytes of every source (32, 64 or
//! 128 of them: an output twice, once or half as long as a source), adds them as 32-bit
//! integer lanes and writes the 64 bytes with non-temporal stores, with a software prefetch
//! ahead of every source ([`Prefetch`]). No kernel that reads and writes those streams can do
//! less. It is the loop issue 13 measured with `examples/memory_ceiling.rs`, written once here
//! for that example and for `cce bench numerics`.
//!
//! Two copies, the widest the CPU has, as the kernels take:
//! - AVX-512 (`cfg(cce_avx512)` and avx512f): one 64-byte non-temporal store per block, and,
//!   like the kernels, a job of fewer than [`READ_STREAMS`] sources visits its blocks as
//!   `READ_STREAMS / sources` interleaved stretches. One core reading one stream leaves memory
//!   idle: on this project's 2-vCPU Xeon (2026-12-03, 64 MiB) the one-source loop read in order
//!   reached 14–17 GB/s for an f32 → bf16 shape where the interleaved one reached 19–21 and the
//!   kernel 22–24, so an in-order loop would be no floor.
//! - AVX2 (issue 13's loop): two 32-byte stores per block, in order. Interleaved, the half-line
//!   non-temporal stores to four places ran at 0.4 of in order on the same Xeon (7.7 against
//!   19 GB/s for a bf16 → f32 shape).
//!
//! Elsewhere (no AVX2, not x86-64) [`floor_pass`] returns `None`.
#![allow(
    unsafe_code,
    reason = "the floor loop is written with the intrinsics a kernel uses; each unsafe block says why it is sound"
)]
#![cfg_attr(
    cce_avx512,
    allow(
        clippy::incompatible_msrv,
        reason = "the AVX-512 copy is compiled only under cfg(cce_avx512), which build.rs sets for rustc >= 1.89 only"
    )
)]

use std::vec::Vec;

/// The software prefetch of the floor loop: issue 13 measured both, and neither won everywhere,
/// so the bench takes the better one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Prefetch {
    /// `prefetcht0`, 2 KiB ahead of every source.
    T0Near,
    /// `prefetcht2`, 8 KiB ahead of every source.
    T2Far,
}

/// Every [`Prefetch`], in the order the bench times them.
pub const PREFETCHES: [Prefetch; 2] = [Prefetch::T0Near, Prefetch::T2Far];

#[cfg(all(target_arch = "x86_64", cce_avx512))]
/// Read streams the AVX-512 copy keeps in flight: the kernels' choice (`simd::READ_STREAMS`,
/// for `for_blocks`), so the floor and the kernels read in the same order.
const READ_STREAMS: usize = 4;

#[cfg(all(target_arch = "x86_64", cce_avx512))]
/// Output blocks the loop takes from one stretch before it moves to the next (4 × 64 bytes: the
/// kernels' 64-element groups of a 32-bit type).
const GROUP_BLOCKS: usize = 4;

/// Source bytes per 64-byte output block that the loop takes: the output is twice, once or half
/// a source's length.
const IN_BLOCKS: [usize; 3] = [32, 64, 128];

/// The copy of the loop the CPU runs. Not API (hidden): named for the crate's own tests.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Avx2,
    #[cfg(cce_avx512)]
    Avx512,
}

/// One pass of the floor loop over `srcs` (equal lengths) into `out`, split over `threads`
/// contiguous parts as the kernels split a job. Returns the bytes read + written, or `None`
/// where the loop cannot run: no AVX2, no sources, sources of unequal lengths, an output that
/// is not twice, once or half a source's length, or one shorter than a 64-byte-aligned 64-byte
/// block.
///
/// The output's first bytes up to a 64-byte boundary and its last partial 64 bytes are left
/// alone (the non-temporal stores need the alignment) and not counted.
pub fn floor_pass(srcs: &[&[u8]], out: &mut [u8], prefetch: Prefetch, threads: usize) -> Option<u64> {
    pass_at(level()?, srcs, out, prefetch, threads)
}

/// [`floor_pass`] with the copy `level` (which the CPU has). Not API (hidden): for the crate's
/// own tests, which run every copy.
#[doc(hidden)]
pub fn pass_at(level: Level, srcs: &[&[u8]], out: &mut [u8], prefetch: Prefetch, threads: usize) -> Option<u64> {
    let len = srcs.first()?.len();
    if srcs.iter().any(|s| s.len() != len) || out.is_empty() || (64 * len) % out.len() != 0 {
        return None;
    }
    let in_block = 64 * len / out.len();
    if !IN_BLOCKS.contains(&in_block) {
        return None;
    }
    let head = out.as_ptr().align_offset(64).min(out.len());
    let blocks = (out.len() - head) / 64;
    if blocks == 0 {
        return None;
    }
    let out = &mut out[head..head + 64 * blocks];
    let per = blocks.div_ceil(threads.max(1)).max(1);
    let parts = out.chunks_mut(64 * per).enumerate().map(|(p, o)| {
        let from = p * per * in_block;
        let s: Vec<&[u8]> = srcs.iter().map(|s| &s[from..from + o.len() / 64 * in_block]).collect();
        (s, o)
    });
    if threads <= 1 {
        for (s, o) in parts {
            run(level, &s, o, in_block, prefetch);
        }
    } else {
        std::thread::scope(|sc| {
            for (s, o) in parts {
                sc.spawn(move || run(level, &s, o, in_block, prefetch));
            }
        });
    }
    Some((blocks * (64 + srcs.len() * in_block)) as u64)
}

#[cfg(target_arch = "x86_64")]
fn level() -> Option<Level> {
    #[cfg(cce_avx512)]
    if std::is_x86_feature_detected!("avx512f") {
        return Some(Level::Avx512);
    }
    std::is_x86_feature_detected!("avx2").then_some(Level::Avx2)
}

#[cfg(not(target_arch = "x86_64"))]
fn level() -> Option<Level> {
    None
}

/// Every copy of the loop this CPU runs. Not API (hidden): for the crate's own tests.
#[doc(hidden)]
pub fn levels() -> Vec<Level> {
    let mut v = Vec::new();
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        v.push(Level::Avx2);
    }
    #[cfg(cce_avx512)]
    if level() == Some(Level::Avx512) {
        v.push(Level::Avx512);
    }
    v
}

#[cfg(all(target_arch = "x86_64", cce_avx512))]
/// Every block index of `0..blocks` once, `stretches` equal stretches visited round robin
/// [`GROUP_BLOCKS`] at a time, then the few left over in order (the kernels' `for_blocks`).
#[inline(always)]
fn for_blocks(blocks: usize, stretches: usize, mut f: impl FnMut(usize)) {
    let per = blocks / stretches.max(1);
    let mut i = 0;
    while i < per {
        let g = GROUP_BLOCKS.min(per - i);
        for c in 0..stretches {
            for j in 0..g {
                f(c * per + i + j);
            }
        }
        i += g;
    }
    for b in stretches.max(1) * per..blocks {
        f(b);
    }
}

/// One part: `out` 64-byte aligned and a whole number of 64-byte blocks, every source
/// `out.len() / 64 · in_block` bytes, `in_block` one of [`IN_BLOCKS`], `level` detected.
#[cfg(target_arch = "x86_64")]
fn run(level: Level, srcs: &[&[u8]], out: &mut [u8], in_block: usize, prefetch: Prefetch) {
    assert!(out.as_ptr().align_offset(64) == 0 && out.len() % 64 == 0, "floor part misaligned");
    assert!(srcs.iter().all(|s| s.len() == out.len() / 64 * in_block), "floor part of unequal shape");
    let far = prefetch == Prefetch::T2Far;
    match level {
        // SAFETY: `level()` found avx2; the asserts above are the loop's bounds and alignment
        // conditions.
        Level::Avx2 => unsafe {
            match in_block {
                32 => floor_avx2::<1>(srcs, out, far),
                64 => floor_avx2::<2>(srcs, out, far),
                _ => floor_avx2::<4>(srcs, out, far),
            }
        },
        // SAFETY: `level()` found avx512f; the asserts above are the loop's conditions.
        #[cfg(cce_avx512)]
        Level::Avx512 => unsafe {
            let stretches = (READ_STREAMS / srcs.len()).max(1);
            match in_block {
                32 => floor_avx512::<1>(srcs, out, far, stretches),
                64 => floor_avx512::<2>(srcs, out, far, stretches),
                _ => floor_avx512::<4>(srcs, out, far, stretches),
            }
        },
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn run(_level: Level, _srcs: &[&[u8]], _out: &mut [u8], _in_block: usize, _prefetch: Prefetch) {}

/// `out[64 b..64 b + 64] = Σ_k srcs[k][32 L b..32 L (b + 1)]` as 32-bit lanes (with `L = 1`
/// both halves of the block hold the one 32-byte sum), two 32-byte streamed stores per block,
/// the blocks in order.
///
/// # Safety
/// AVX2 is available; `out` is 32-byte aligned and a multiple of 64 bytes long; every source
/// holds `out.len() / 64 · 32 L` bytes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn floor_avx2<const L: usize>(srcs: &[&[u8]], out: &mut [u8], far: bool) {
    use core::arch::x86_64::*;
    let o = out.as_mut_ptr();
    for b in 0..out.len() / 64 {
        let mut a = [_mm256_setzero_si256(); 2];
        for s in srcs {
            let p = s.as_ptr().wrapping_add(32 * L * b);
            // A hint only: prefetching never faults, and the address is not dereferenced.
            if far {
                _mm_prefetch::<_MM_HINT_T2>(p.wrapping_add(8192).cast());
            } else {
                _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(2048).cast());
            }
            for h in 0..L {
                // SAFETY: `32 L b + 32 h + 32 <= 32 L (b + 1) <= s.len()`; an unaligned load.
                a[h % 2] = _mm256_add_epi32(a[h % 2], unsafe { _mm256_loadu_si256(p.add(32 * h).cast()) });
            }
        }
        if L == 1 {
            a[1] = a[0];
        }
        for (h, acc) in a.iter().enumerate() {
            // SAFETY: `64 b + 32 h + 32 <= out.len()`, 32-byte aligned as `out` is.
            unsafe { _mm256_stream_si256(o.add(64 * b + 32 * h).cast(), *acc) };
        }
    }
    _mm_sfence();
}

/// As [`floor_avx2`] with one 64-byte streamed store per block (`L = 1`: the 32-byte sum in both
/// halves; `L = 4`: the two 64-byte halves of the source block summed), the blocks visited as
/// [`for_blocks`] with `stretches`.
///
/// # Safety
/// avx512f is available; `out` is 64-byte aligned and a multiple of 64 bytes long; every source
/// holds `out.len() / 64 · 32 L` bytes.
#[cfg(all(target_arch = "x86_64", cce_avx512))]
#[target_feature(enable = "avx2,avx512f")]
unsafe fn floor_avx512<const L: usize>(srcs: &[&[u8]], out: &mut [u8], far: bool, stretches: usize) {
    use core::arch::x86_64::*;
    let o = out.as_mut_ptr();
    for_blocks(out.len() / 64, stretches, |b| {
        let mut a = _mm512_setzero_si512();
        for s in srcs {
            let p = s.as_ptr().wrapping_add(32 * L * b);
            // A hint only: prefetching never faults, and the address is not dereferenced.
            if far {
                _mm_prefetch::<_MM_HINT_T2>(p.wrapping_add(8192).cast());
            } else {
                _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(2048).cast());
            }
            if L == 1 {
                // SAFETY: `32 b + 32 <= s.len()`; an unaligned load.
                let v = unsafe { _mm256_loadu_si256(p.cast()) };
                a = _mm512_add_epi32(a, _mm512_inserti64x4::<1>(_mm512_castsi256_si512(v), v));
            } else {
                for h in 0..L / 2 {
                    // SAFETY: `32 L b + 64 h + 64 <= 32 L (b + 1) <= s.len()`; an unaligned load.
                    a = _mm512_add_epi32(a, unsafe { _mm512_loadu_si512(p.add(64 * h).cast()) });
                }
            }
        }
        // SAFETY: `64 b + 64 <= out.len()`, 64-byte aligned as `out` is.
        unsafe { _mm512_stream_si512(o.add(64 * b).cast(), a) };
    });
    _mm_sfence();
}
