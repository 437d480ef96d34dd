//! What one core's memory allows a four-source reduce: `cargo run --release -p cce-numerics
//! --example memory_ceiling -- [MiB per source] [rounds]`.
//!
//! Each round times, in one process on the same buffers (best of 5 each): the bench's memcpy
//! (`copy_from_slice` of 4 × size), the least work a four-source job can do
//! ([`cce_numerics::bench::floor_pass`]: four 64-byte loads, three integer adds and one
//! non-temporal 64-byte store per 64 bytes, with a software prefetch — T0 2 KiB ahead, or T2
//! 8 KiB ahead) — and cce's add4-bf16-rne (`reduce_with`, one thread). GB/s count bytes read +
//! written, as `cce bench numerics` does (which times the same loop beside every job). Where the
//! floor loop's ratio to memcpy is below a goal, no kernel meets that goal on this machine.

use std::time::Instant;

use cce_numerics::bench::{PREFETCHES, floor_pass};
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
        for (f, p) in floor.iter_mut().zip(PREFETCHES) {
            let mut bytes = None;
            let t = best(|| bytes = floor_pass(&refs, &mut out, p, 1));
            if let Some(b) = bytes {
                *f = gbps(b as usize, t);
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
