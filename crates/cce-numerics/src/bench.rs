//! The numerics benchmark behind `cce bench numerics` (std only).
//!
//! Every job's GB/s counts bytes read + bytes written. The baseline is a plain single-thread
//! `copy_from_slice` of a buffer as large as the biggest job's sources (4 × size), measured in
//! the same run; `ratio = job GB/s / memcpy GB/s`. Each number is the best of `reps` runs.

use crate::reduce::{Exec, convert_par, reduce_with};
use crate::spec::{ReduceSpec, Rounding};
use crate::types::NumType;
use std::time::Instant;
use std::vec::Vec;

/// The job names, in report order.
pub const JOBS: [&str; 6] =
    ["widen-bf16", "narrow-bf16-rne", "narrow-bf16-sr", "add4-bf16-rne", "add4-bf16-sr", "add4-fp8e4-rne"];

/// One measured job at one thread count.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchResult {
    /// The job name (one of [`JOBS`]).
    pub name: &'static str,
    /// Threads used.
    pub threads: usize,
    /// Bytes read + written per second, in units of 10⁹.
    pub gbps: f64,
    /// `gbps / memcpy_gbps`.
    pub ratio: f64,
}

/// The whole report.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchReport {
    /// Bytes per source.
    pub size_bytes_per_source: usize,
    /// Single-thread memcpy, bytes read + written per second / 10⁹.
    pub memcpy_gbps: f64,
    /// Every job at every thread count.
    pub results: Vec<BenchResult>,
    /// For context: memcpy of the same buffers split over each thread count of the run
    /// (threads, GB/s). The ratios use the single-thread [`BenchReport::memcpy_gbps`].
    pub memcpy_gbps_by_threads: Vec<(usize, f64)>,
    /// The code path the kernels took.
    pub isa: crate::simd::Isa,
}

impl BenchReport {
    /// `{"memcpy_gbps": f, "results": [{"name": …, "threads": n, "gbps": f, "ratio": f}, …]}`.
    pub fn to_json(&self) -> std::string::String {
        use std::fmt::Write;
        let mut s = std::format!("{{\"memcpy_gbps\": {:.3}, \"memcpy_gbps_by_threads\": [", self.memcpy_gbps);
        for (i, (t, g)) in self.memcpy_gbps_by_threads.iter().enumerate() {
            let sep = if i == 0 { "" } else { ", " };
            let _ = write!(s, "{sep}{{\"threads\": {t}, \"gbps\": {g:.3}}}");
        }
        s.push_str("], \"results\": [");
        for (i, r) in self.results.iter().enumerate() {
            let sep = if i == 0 { "" } else { ", " };
            let _ = write!(
                s,
                "{sep}{{\"name\": \"{}\", \"threads\": {}, \"gbps\": {:.3}, \"ratio\": {:.3}}}",
                r.name, r.threads, r.gbps, r.ratio
            );
        }
        s.push_str("]}");
        s
    }

    /// A plain-text table.
    pub fn to_table(&self) -> std::string::String {
        use std::fmt::Write;
        let mut s = std::format!(
            "memcpy (1 thread): {:.2} GB/s   [{} MiB per source, {:?}]\n{:<18} {:>7} {:>9} {:>7}\n",
            self.memcpy_gbps,
            self.size_bytes_per_source >> 20,
            self.isa,
            "job",
            "threads",
            "GB/s",
            "ratio"
        );
        for (t, g) in &self.memcpy_gbps_by_threads {
            let _ = writeln!(s, "{:<18} {:>7} {:>9.2} {:>7.2}", "memcpy", t, g, g / self.memcpy_gbps);
        }
        for r in &self.results {
            let _ = writeln!(s, "{:<18} {:>7} {:>9.2} {:>7.2}", r.name, r.threads, r.gbps, r.ratio);
        }
        s
    }
}

fn best_of(reps: usize, mut f: impl FnMut()) -> f64 {
    let mut best = f64::INFINITY;
    for _ in 0..reps.max(1) {
        let t = Instant::now();
        f();
        best = best.min(t.elapsed().as_secs_f64());
    }
    best.max(1e-9)
}

fn fill(buf: &mut [u8], seed: u64, mask: u8) {
    let mut x = seed;
    for c in buf.chunks_mut(8) {
        x = crate::rng::mix64(x.wrapping_add(0x9e37_79b9_7f4a_7c15));
        for (b, v) in c.iter_mut().zip(x.to_le_bytes()) {
            *b = v & mask;
        }
    }
}

/// Runs every job at each thread count in `threads_list` (entries of 0 are skipped) on
/// `size_bytes_per_source`-byte sources, best of `reps`.
pub fn run_numerics_bench_reps(size_bytes_per_source: usize, threads_list: &[usize], reps: usize) -> BenchReport {
    let size = size_bytes_per_source.max(64) / 4 * 4;
    // Finite, normal values of moderate size: bf16 with exponents 2^-8..2^7 (for the bf16 and
    // f32 jobs) and fp8 e4m3 bytes without inf/NaN.
    let mut srcs: Vec<Vec<u8>> = (0..4).map(|_| std::vec![0u8; size]).collect();
    for (i, s) in srcs.iter_mut().enumerate() {
        fill(s, i as u64 + 1, 0xff);
        for c in s.chunks_mut(2) {
            let hi = c[c.len() - 1];
            c[c.len() - 1] = (hi & 0x80) | (0x3c + (hi & 0x07));
        }
    }
    let mut fp8: Vec<Vec<u8>> = (0..4).map(|_| std::vec![0u8; size]).collect();
    for (i, s) in fp8.iter_mut().enumerate() {
        fill(s, i as u64 + 11, 0xff);
        for b in s.iter_mut() {
            *b &= 0xf7;
        }
    }
    let mut out = std::vec![0u8; 2 * size];
    let mut big_src = std::vec![0u8; 4 * size];
    fill(&mut big_src, 9, 0xff);
    let mut big_dst = std::vec![0u8; 4 * size];
    big_dst.copy_from_slice(&big_src);
    let t = best_of(reps, || big_dst.copy_from_slice(&big_src));
    let memcpy_gbps = (8 * size) as f64 / t / 1e9;
    let mut memcpy_gbps_by_threads = Vec::new();
    for &threads in threads_list.iter().filter(|&&t| t > 0) {
        let per = (4 * size).div_ceil(threads);
        let t = best_of(reps, || {
            std::thread::scope(|sc| {
                for (d, s) in big_dst.chunks_mut(per).zip(big_src.chunks(per)) {
                    sc.spawn(move || d.copy_from_slice(s));
                }
            });
        });
        memcpy_gbps_by_threads.push((threads, (8 * size) as f64 / t / 1e9));
    }
    drop(big_src);
    drop(big_dst);

    let mut results = Vec::new();
    let sr = Rounding::Stochastic { seed: 0, stream: 0 };
    for &threads in threads_list.iter().filter(|&&t| t > 0) {
        for name in JOBS {
            let exec = Exec { threads, ..Exec::default() };
            let (secs, bytes) = match name {
                "widen-bf16" => {
                    let (i, o) = (&srcs[0][..], &mut out[..2 * size]);
                    let t = best_of(reps, || {
                        let _ = convert_par(NumType::Bf16, NumType::F32, i, o, Rounding::Rne, false, threads);
                    });
                    (t, 3 * size)
                }
                "narrow-bf16-rne" | "narrow-bf16-sr" => {
                    let r = if name.ends_with("sr") { sr } else { Rounding::Rne };
                    let (i, o) = (&srcs[0][..], &mut out[..size / 2]);
                    let t = best_of(reps, || {
                        let _ = convert_par(NumType::F32, NumType::Bf16, i, o, r, false, threads);
                    });
                    (t, size + size / 2)
                }
                _ => {
                    let (ty, r) = match name {
                        "add4-bf16-rne" => (NumType::Bf16, Rounding::Rne),
                        "add4-bf16-sr" => (NumType::Bf16, sr),
                        _ => (NumType::F8E4M3, Rounding::Rne),
                    };
                    let spec = ReduceSpec::add(ty, NumType::F32, ty).with_rounding(r);
                    let data = if ty == NumType::Bf16 { &srcs } else { &fp8 };
                    let s: Vec<&[u8]> = data.iter().map(|v| &v[..]).collect();
                    let o = &mut out[..size];
                    let t = best_of(reps, || {
                        let _ = reduce_with(&spec, &s, &mut [&mut *o], 0, &exec);
                    });
                    (t, 5 * size)
                }
            };
            let gbps = bytes as f64 / secs / 1e9;
            results.push(BenchResult { name, threads, gbps, ratio: gbps / memcpy_gbps });
        }
    }
    BenchReport {
        size_bytes_per_source: size,
        memcpy_gbps,
        results,
        memcpy_gbps_by_threads,
        isa: crate::simd::detected_isa(),
    }
}

/// [`run_numerics_bench_reps`] with 5 repetitions.
pub fn run_numerics_bench(size_bytes_per_source: usize, threads_list: &[usize]) -> BenchReport {
    run_numerics_bench_reps(size_bytes_per_source, threads_list, 5)
}
