//! The numerics benchmark behind `cce bench numerics` (std only).
//!
//! Every job's GB/s counts bytes read + bytes written. The baseline is a plain single-thread
//! `copy_from_slice` of a buffer as large as the biggest job's sources (4 × size). Each number
//! is the best of `reps` runs.
//!
//! The memory of a shared host can change speed from one tenth of a second to the next (on the
//! 2-vCPU AMD EPYC measured here a 256 MiB memcpy alternated between 15 and 34 GB/s in runs of a
//! few hundred milliseconds), so a ratio against a memcpy timed once, earlier, can halve or
//! double a result. Every job's repetitions therefore alternate with memcpy repetitions, and
//! its `ratio` is its GB/s over the memcpy GB/s timed between them (`memcpy_gbps` of the row).
//!
//! A job's speed depends on where its buffers sit (sources a multiple of 4 KiB apart alias in
//! the cache and the store buffer), so every job runs at each of [`LAYOUTS`] and its row
//! reports the worse: its sources and output in one buffer, back to back (`contiguous`), or
//! with an odd gap between them (`staggered`). Each row also names the kernel the job took
//! ([`crate::kernel_name`]).
//!
//! memcpy is not what a four-source job can reach on every host: four read streams and a
//! non-temporal write stream may move fewer bytes per second than one copy (issue 13 measured
//! 0.74–0.85 of memcpy for the least work such a job can do). So every job's repetitions also
//! alternate with [`floor_pass`] over the job's own buffers (its streams, its layout, its thread
//! count; the better of [`PREFETCHES`]), and each row reports `ratio_to_floor`, its GB/s over
//! that floor's (`floor_gbps`). A kernel at 1.0 of it does all the memory allows.

pub(crate) mod floor;

pub use floor::{PREFETCHES, Prefetch, floor_pass};

use crate::reduce::{Exec, convert_spec, reduce_with};
use crate::spec::{FmaSource, Op, ReduceSpec, Rounding};
use crate::types::NumType;
use std::time::Instant;
use std::vec::Vec;

/// The job names, in report order.
pub const JOBS: [&str; 9] = [
    "widen-bf16",
    "narrow-bf16-rne",
    "narrow-bf16-sr",
    "add4-bf16-rne",
    "add4-bf16-sr",
    "add4-fp16-rne",
    "add4-fp8e4-rne",
    "fma4-bf16-rne",
    "max4-bf16",
];

/// The buffer layouts every job runs at: (name, bytes between one buffer's end and the next
/// one's start). `contiguous` puts the sources and the output back to back; `staggered`
/// leaves 1 MiB + 192 bytes (an odd number of cache lines) between them.
pub const LAYOUTS: [(&str, usize); 2] = [("contiguous", 0), ("staggered", (1 << 20) + 192)];

/// One measured job at one thread count.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchResult {
    /// The job name (one of [`JOBS`]).
    pub name: &'static str,
    /// Threads used.
    pub threads: usize,
    /// Bytes read + written per second, in units of 10⁹: the worse of the layouts.
    pub gbps: f64,
    /// `gbps / memcpy_gbps`.
    pub ratio: f64,
    /// Single-thread memcpy GB/s timed alternately with the job's repetitions at its reported
    /// layout (the ratio's denominator).
    pub memcpy_gbps: f64,
    /// The layout `gbps` was measured at (the slower one).
    pub layout: &'static str,
    /// GB/s at every layout of [`LAYOUTS`], in that order.
    pub gbps_by_layout: Vec<(&'static str, f64)>,
    /// The kernel the job ran (`level:route`, see [`crate::kernel_name`]).
    pub kernel: std::string::String,
    /// [`floor_pass`] over the job's streams at its reported layout and thread count, GB/s
    /// counted as the job's, timed alternately with its repetitions; `None` where the floor loop
    /// cannot run (no AVX2).
    pub floor_gbps: Option<f64>,
    /// `gbps / floor_gbps`.
    pub ratio_to_floor: Option<f64>,
}

/// The whole report.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchReport {
    /// Bytes per source.
    pub size_bytes_per_source: usize,
    /// Single-thread memcpy, bytes read + written per second / 10⁹: the best of the whole run
    /// (the rows' ratios use the memcpy timed with each row).
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
    /// A plain-text table.
    pub fn to_table(&self) -> std::string::String {
        use std::fmt::Write;
        let mut s = std::format!(
            "memcpy (1 thread): {:.2} GB/s, the run's best   [{} MiB per source, {:?}; GB/s and ratio: the worse layout, ratio to the memcpy timed with it; floor: the least work on the job's streams timed with it]\n{:<16} {:>7} {:>7} {:>6} {:>7} {:>7} {:>6} {:>10} {:>9}  {}\n",
            self.memcpy_gbps,
            self.size_bytes_per_source >> 20,
            self.isa,
            "job",
            "threads",
            "GB/s",
            "ratio",
            "memcpy",
            "floor",
            "/floor",
            LAYOUTS[0].0,
            LAYOUTS[1].0,
            "kernel"
        );
        for (t, g) in &self.memcpy_gbps_by_threads {
            let _ = writeln!(s, "{:<16} {:>7} {:>7.2} {:>6.2}", "memcpy", t, g, g / self.memcpy_gbps);
        }
        for r in &self.results {
            let _ =
                write!(s, "{:<16} {:>7} {:>7.2} {:>6.2} {:>7.2}", r.name, r.threads, r.gbps, r.ratio, r.memcpy_gbps);
            match (r.floor_gbps, r.ratio_to_floor) {
                (Some(f), Some(q)) => write!(s, " {f:>7.2} {q:>6.2}"),
                _ => write!(s, " {:>7} {:>6}", "-", "-"),
            }
            .ok();
            for (_, g) in &r.gbps_by_layout {
                let _ = write!(s, " {g:>9.2}");
            }
            let _ = writeln!(s, "  {}", r.kernel);
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

/// A job: its spec, its sources' contents, and its output size in bytes.
struct Job<'d> {
    spec: ReduceSpec,
    data: &'d [Vec<u8>],
    out_bytes: usize,
}

/// What [`time_layout`] measured: the best seconds of the job and of memcpy, and the floor's
/// best seconds and bytes (`None` without a floor).
struct Timed {
    job_s: f64,
    copy_s: f64,
    floor: Option<(f64, u64)>,
}

/// Runs `job` at one layout (its buffers `gap` bytes apart in `arena`), best of `reps`, each
/// repetition followed by one of `memcpy` and one [`floor_pass`] of each of [`PREFETCHES`] over
/// the job's own buffers at its thread count.
fn time_layout(
    job: &Job<'_>,
    gap: usize,
    arena: &mut Vec<u8>,
    exec: &Exec,
    reps: usize,
    mut memcpy: impl FnMut(),
) -> Timed {
    let len = job.data[0].len();
    let stride = len + gap;
    let need = job.data.len() * stride + job.out_bytes;
    arena.resize(need, 0);
    for (k, d) in job.data.iter().enumerate() {
        arena[k * stride..k * stride + len].copy_from_slice(d);
    }
    let (srcs, out) = arena.split_at_mut(job.data.len() * stride);
    let srcs: Vec<&[u8]> = (0..job.data.len()).map(|k| &srcs[k * stride..k * stride + len]).collect();
    let out = &mut out[..job.out_bytes];
    let (mut job_s, mut copy_s) = (f64::INFINITY, f64::INFINITY);
    let mut floor: Option<(f64, u64)> = None;
    for _ in 0..reps.max(1) {
        job_s = job_s.min(best_of(1, || {
            let _ = reduce_with(&job.spec, &srcs, &mut [&mut *out], 0, exec);
        }));
        copy_s = copy_s.min(best_of(1, &mut memcpy));
        for p in PREFETCHES {
            let t = Instant::now();
            if let Some(bytes) = floor_pass(&srcs, out, p, exec.threads) {
                let t = t.elapsed().as_secs_f64().max(1e-9);
                floor = Some(floor.map_or((t, bytes), |(b, _)| (b.min(t), bytes)));
            }
        }
    }
    Timed { job_s, copy_s, floor }
}

/// Runs every job at each thread count in `threads_list` (entries of 0 are skipped) and each
/// of [`LAYOUTS`] on `size_bytes_per_source`-byte sources, best of `reps`.
pub fn run_numerics_bench_reps(size_bytes_per_source: usize, threads_list: &[usize], reps: usize) -> BenchReport {
    run_numerics_bench_at(size_bytes_per_source, threads_list, reps, crate::simd::Isa::Avx512)
}

/// [`run_numerics_bench_reps`] with the kernels capped at `max_isa` (as [`Exec::max_isa`]),
/// to measure a lower level on a machine that has a higher one.
pub fn run_numerics_bench_at(
    size_bytes_per_source: usize,
    threads_list: &[usize],
    reps: usize,
    max_isa: crate::simd::Isa,
) -> BenchReport {
    let size = size_bytes_per_source.max(64) / 4 * 4;
    let sources = BenchSources::new(size);
    let mut big_src = std::vec![0u8; 4 * size];
    fill(&mut big_src, 9, 0xff);
    let mut big_dst = std::vec![0u8; 4 * size];
    big_dst.copy_from_slice(&big_src);
    let t = best_of(reps, || big_dst.copy_from_slice(&big_src));
    let memcpy_gbps = (8 * size) as f64 / t / 1e9;
    let memcpy_gbps_by_threads = memcpy_by_threads(size, &big_src, &mut big_dst, threads_list, reps);
    let mut memcpy_best = memcpy_gbps;
    let mut arena = Vec::new();
    let mut results = Vec::new();
    for &threads in threads_list.iter().filter(|&&t| t > 0) {
        for name in JOBS {
            let exec = Exec { threads, max_isa, ..Exec::default() };
            let j = sources.job(name);
            let bytes = j.data.len() * size + j.out_bytes;
            // (layout, GB/s, memcpy GB/s, floor GB/s) per layout.
            let timed: Vec<(&'static str, f64, f64, Option<f64>)> = LAYOUTS
                .iter()
                .map(|&(l, gap)| {
                    let t = time_layout(&j, gap, &mut arena, &exec, reps, || big_dst.copy_from_slice(&big_src));
                    let floor = t.floor.map(|(s, b)| b as f64 / s / 1e9);
                    (l, bytes as f64 / t.job_s / 1e9, (8 * size) as f64 / t.copy_s / 1e9, floor)
                })
                .collect();
            memcpy_best = memcpy_best.max(timed.iter().fold(0.0, |m, x| x.2.max(m)));
            results.push(bench_result(name, &j, &exec, size, &timed));
        }
    }
    BenchReport {
        size_bytes_per_source: size,
        memcpy_gbps: memcpy_best,
        results,
        memcpy_gbps_by_threads,
        isa: {
            use crate::simd::Isa;
            match (crate::simd::detected_isa(), max_isa) {
                (Isa::Portable, _) | (_, Isa::Portable) => Isa::Portable,
                (Isa::Avx2, _) | (_, Isa::Avx2) => Isa::Avx2,
                _ => Isa::Avx512,
            }
        },
    }
}

/// The sources the jobs read, `size` bytes each.
struct BenchSources {
    size: usize,
    /// Four sources of finite, normal values of moderate size: bf16 with exponents 2^-8..2^7
    /// (for the bf16 and f32 jobs).
    values: Vec<Vec<u8>>,
    /// Four sources of fp8 e4m3 bytes without inf/NaN.
    fp8: Vec<Vec<u8>>,
}

impl BenchSources {
    /// The sources of `size` bytes each.
    fn new(size: usize) -> Self {
        let mut values: Vec<Vec<u8>> = (0..4).map(|_| std::vec![0u8; size]).collect();
        for (i, s) in values.iter_mut().enumerate() {
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
        BenchSources { size, values, fp8 }
    }

    /// The job named `name` (one of [`JOBS`]) over these sources.
    fn job(&self, name: &str) -> Job<'_> {
        let (size, srcs) = (self.size, &self.values);
        let sr = Rounding::Stochastic { seed: 0, stream: 0 };
        match name {
            "widen-bf16" => Job {
                spec: convert_spec(NumType::Bf16, NumType::F32, Rounding::Rne, false),
                data: &srcs[..1],
                out_bytes: 2 * size,
            },
            "narrow-bf16-rne" | "narrow-bf16-sr" => {
                let r = if name.ends_with("sr") { sr } else { Rounding::Rne };
                Job { spec: convert_spec(NumType::F32, NumType::Bf16, r, false), data: &srcs[..1], out_bytes: size / 2 }
            }
            // avg's FMA (scale 1/4 on every source) and an unclamped MAX, over the same sources.
            "fma4-bf16-rne" => Job {
                spec: ReduceSpec::add(NumType::Bf16, NumType::F32, NumType::Bf16)
                    .with_op(Op::Fma(std::vec![FmaSource::scaled(0.25); 4])),
                data: &srcs[..],
                out_bytes: size,
            },
            "max4-bf16" => Job {
                spec: ReduceSpec::add(NumType::Bf16, NumType::F32, NumType::Bf16).with_op(Op::Max { clamp: None }),
                data: &srcs[..],
                out_bytes: size,
            },
            _ => {
                let (ty, r) = match name {
                    "add4-bf16-rne" => (NumType::Bf16, Rounding::Rne),
                    "add4-bf16-sr" => (NumType::Bf16, sr),
                    "add4-fp16-rne" => (NumType::F16, Rounding::Rne),
                    _ => (NumType::F8E4M3, Rounding::Rne),
                };
                // The bf16 sources read as fp16 are finite too (exponent fields 15 and 16).
                let data = if ty == NumType::F8E4M3 { &self.fp8[..] } else { &srcs[..] };
                Job { spec: ReduceSpec::add(ty, NumType::F32, ty).with_rounding(r), data, out_bytes: size }
            }
        }
    }
}

/// memcpy's GB/s (bytes read and written) of `big_src` into `big_dst` (`4 · size` bytes) split
/// over each thread count of `threads_list` (0 skipped), best of `reps`.
fn memcpy_by_threads(
    size: usize,
    big_src: &[u8],
    big_dst: &mut [u8],
    threads_list: &[usize],
    reps: usize,
) -> Vec<(usize, f64)> {
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
    memcpy_gbps_by_threads
}

/// Job `name`'s row from its `timed` layouts (layout, GB/s, memcpy GB/s, floor GB/s): the
/// slowest layout's figures, each layout's GB/s and the kernel that ran.
fn bench_result(
    name: &'static str,
    j: &Job<'_>,
    exec: &Exec,
    size: usize,
    timed: &[(&'static str, f64, f64, Option<f64>)],
) -> BenchResult {
    let gbps_by_layout: Vec<(&'static str, f64)> = timed.iter().map(|&(l, g, ..)| (l, g)).collect();
    let (layout, gbps, copy_gbps, floor_gbps) =
        timed.iter().copied().fold(("", f64::INFINITY, 0.0, None), |w, x| if x.1 < w.1 { x } else { w });
    let elements = size / j.spec.in_type.size();
    let kernel = crate::reduce::kernel_name(&j.spec, j.data.len(), elements, exec);
    BenchResult {
        name,
        threads: exec.threads,
        gbps,
        ratio: gbps / copy_gbps,
        memcpy_gbps: copy_gbps,
        layout,
        gbps_by_layout,
        kernel,
        floor_gbps,
        ratio_to_floor: floor_gbps.map(|f| gbps / f),
    }
}

/// [`run_numerics_bench_reps`] with 5 repetitions.
pub fn run_numerics_bench(size_bytes_per_source: usize, threads_list: &[usize]) -> BenchReport {
    run_numerics_bench_reps(size_bytes_per_source, threads_list, 5)
}
