//! What one core's memory allows a four-source reduce: `cargo run --release -p cce-numerics
//! --example memory_ceiling -- [MiB per source] [rounds]`.
//!
//! Each round times, in one process on the same buffers (best of 5 each): the bench's memcpy
//! (`copy_from_slice` of 4 × size), the least work a four-source job can do — four 64-byte loads,
//! three integer adds and one non-temporal 64-byte store per 64 bytes, with a software prefetch
//! (T0 2 KiB ahead, or T2 8 KiB ahead) — and cce's add4-bf16-rne (`reduce_with`, one thread).
//! GB/s count bytes read + written, as `cce bench numerics` does. Where the floor loop's ratio
//! to memcpy is below a goal, no kernel meets that goal on this machine.
#![allow(
    unsafe_code,
    reason = "the floor loop is written with the intrinsics a kernel uses; each unsafe block says why it is sound"
)]

use std::time::Instant;

use cce_numerics::{Exec, NumType, ReduceSpec, reduce_with};

fn best(mut f: impl FnMut()) -> f64 {
    let mut b = f64::INFINITY;
    for _ in 0..5 {
        let t = Instant::now();
        f();
        b = b.min(t.elapsed().as_secs_f64());
    }
    b
}

/// The floor loop: `out[i..i + 64] = Σ srcs[k][i..i + 64]` as 32-bit integer lanes, streamed.
#[cfg(target_arch = "x86_64")]
fn floor_loop(srcs: &[&[u8]], out: &mut [u8], far: bool) -> bool {
    if !std::is_x86_feature_detected!("avx2") {
        return false;
    }
    // SAFETY: avx2 was just confirmed; `floor_avx2` reads and writes only inside the slices.
    unsafe { floor_avx2(srcs, out, far) };
    true
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn floor_avx2(srcs: &[&[u8]], out: &mut [u8], far: bool) {
    use std::arch::x86_64::*;
    // Non-temporal stores need 32-byte alignment: start at the first aligned byte.
    let head = out.as_ptr().align_offset(32).min(out.len());
    let n = (out.len() - head) / 64 * 64;
    let o = out[head..].as_mut_ptr();
    for i in (0..n).step_by(64) {
        let mut a = [_mm256_setzero_si256(); 2];
        for s in srcs {
            let s = &s[head..head + n];
            let p = s.as_ptr().wrapping_add(i);
            // A hint only: prefetching never faults, and the address is not dereferenced.
            if far {
                _mm_prefetch::<_MM_HINT_T2>(p.wrapping_add(8192).cast());
            } else {
                _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(2048).cast());
            }
            for (h, acc) in a.iter_mut().enumerate() {
                // SAFETY: `i + 32 h + 32 <= n <= s.len()`; unaligned load.
                *acc = _mm256_add_epi32(*acc, unsafe { _mm256_loadu_si256(p.add(32 * h).cast()) });
            }
        }
        for (h, acc) in a.iter().enumerate() {
            // SAFETY: `head + i + 32 h + 32 <= out.len()`, 32-byte aligned by the choice of `head`.
            unsafe { _mm256_stream_si256(o.add(i + 32 * h).cast(), *acc) };
        }
    }
    _mm_sfence();
}

#[cfg(not(target_arch = "x86_64"))]
fn floor_loop(_srcs: &[&[u8]], _out: &mut [u8], _far: bool) -> bool {
    false
}

fn main() {
    let mut args = std::env::args().skip(1);
    let size = args.next().and_then(|a| a.parse::<usize>().ok()).unwrap_or(64) << 20;
    let rounds = args.next().and_then(|a| a.parse::<usize>().ok()).unwrap_or(5);
    let fill = |k: usize, len: usize| -> Vec<u8> {
        // Finite bf16 values of moderate size (exponent fields 0x3c..0x43).
        (0..len).map(|j| if j % 2 == 1 { 0x3c + ((j / 2 + k) % 8) as u8 } else { (j * 31 + k) as u8 }).collect()
    };
    let srcs: Vec<Vec<u8>> = (0..4).map(|k| fill(k, size)).collect();
    let refs: Vec<&[u8]> = srcs.iter().map(|s| &s[..]).collect();
    let mut out = vec![0u8; size];
    let big_src = fill(9, 4 * size);
    let mut big_dst = vec![0u8; 4 * size];
    let spec = ReduceSpec::add(NumType::Bf16, NumType::F32, NumType::Bf16);
    let exec = Exec { threads: 1, ..Exec::default() };
    let gbps = |bytes: usize, t: f64| bytes as f64 / t / 1e9;
    println!("{} MiB per source, one thread; GB/s (ratio to the same round's memcpy)", size >> 20);
    for round in 0..rounds {
        let memcpy = gbps(8 * size, best(|| big_dst.copy_from_slice(&big_src)));
        let mut floor = [f64::NAN; 2];
        for (f, far) in floor.iter_mut().zip([false, true]) {
            let mut ran = true;
            let t = best(|| ran = floor_loop(&refs, &mut out, far));
            if ran {
                *f = gbps(5 * size, t);
            }
        }
        let cce =
            gbps(5 * size, best(|| reduce_with(&spec, &refs, &mut [&mut out[..]], 0, &exec).map(|_| ()).unwrap()));
        println!(
            "round {round}: memcpy {memcpy:.2}  floor T0 2K {:.2} ({:.2})  floor T2 8K {:.2} ({:.2})  cce add4-bf16-rne {cce:.2} ({:.2})",
            floor[0],
            floor[0] / memcpy,
            floor[1],
            floor[1] / memcpy,
            cce / memcpy
        );
    }
}
