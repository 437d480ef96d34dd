//! `cce bench reduce`: 4 × N-byte bf16 sources, fp32 accumulate, bf16 out, through the whole
//! path (ring build + engine), against a plain memcpy measured in the same run. Its sizes and
//! memory budget are checked before anything is allocated.
//!
//! GB/s counts bytes read + written. The baseline copies a buffer as large as all sources
//! once, single-threaded (`copy_from_slice`), and counts read + written bytes likewise;
//! `ratio = job GB/s / memcpy GB/s`. Each number is the best of `reps` runs.
//!
//! A reduce row also times, alternately with its repetitions, the cce-numerics kernel the
//! engine calls for the job (`reduce_with` of the same spec on the same sources, at the same
//! thread count, one call over the whole buffers) and reports `ratio_to_kernel`: what the path
//! around the kernel (planning, rings, descriptor decode, the engine's pieces) costs. Under RNE
//! every repetition checks that the kernel alone wrote the engine's bytes.

use std::time::Instant;

use cce_format::SdmaDtype;
use cce_host::Rounding;

use cce_job::{PathError, ReduceJob, run_reduce};
use serde::Serialize;

use crate::memcpy::Memcpy;

/// One job at one thread count.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReduceBenchResult {
    /// `reduce4-bf16-rne` or `reduce4-bf16-sr`.
    pub name: &'static str,
    /// Engine threads.
    pub threads: usize,
    /// Bytes read + written per second / 10⁹.
    pub gbps: f64,
    /// `gbps / memcpy_gbps`.
    pub ratio: f64,
    /// Share of the time the engine spent decoding (reading and checking) descriptors.
    pub decode_fraction: f64,
    /// Share of the time the host spent building the rings (encoding).
    pub build_fraction: f64,
    /// Single-thread memcpy GB/s timed alternately with this job's repetitions (a shared
    /// host's memory changes speed from one tenth of a second to the next).
    pub memcpy_gbps: f64,
    /// The numerics kernel the engine calls for the job (`level:route`, see
    /// [`cce_numerics::kernel_name`]).
    pub kernel: String,
    /// That kernel alone on the same sources and thread count, bytes read + written per second
    /// / 10⁹, timed alternately with this job's repetitions.
    pub kernel_gbps: f64,
    /// `gbps / kernel_gbps`.
    pub ratio_to_kernel: f64,
}

/// The report.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReduceBench {
    /// Single-thread memcpy, bytes read + written per second / 10⁹: the best of the run (each
    /// row's ratio uses the memcpy timed with it).
    pub memcpy_gbps: f64,
    /// Every job at every thread count.
    pub results: Vec<ReduceBenchResult>,
    /// The first row's decode share, for scripts that read one number.
    pub decode_fraction: f64,
}

fn bf16_sources(bytes: usize) -> Vec<Vec<u8>> {
    (0..4u64)
        .map(|i| {
            let mut x = 0x9E37_79B9_7F4A_7C15u64.wrapping_mul(i + 1);
            let mut v = vec![0u8; bytes];
            for c in v.chunks_exact_mut(2) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                // Finite values near 1.0 with random mantissas and signs.
                c[0] = x as u8;
                c[1] = (x >> 8) as u8 & 0x80 | (0x3C + (x >> 16) as u8 % 8);
            }
            v
        })
        .collect()
}

/// The bytes per source [`reduce`] runs for `bytes_per_source` (whole 64-byte granules).
fn reduce_size(bytes_per_source: usize) -> usize {
    bytes_per_source.max(64) / 64 * 64
}

/// Checks [`reduce`]'s sizes and memory budget (its four sources and output against
/// [`ReduceJob::budget`]) without allocating anything.
pub fn check_reduce(bytes_per_source: usize) -> Result<(), PathError> {
    let job = ReduceJob::add(SdmaDtype::Bf16, SdmaDtype::Fp32, SdmaDtype::Bf16);
    cce_job::reduce::check_inputs(&job, &[reduce_size(bytes_per_source) as u64; 4]).map(drop)
}

/// The numerics spec the engine resolves for [`reduce`]'s bf16 → fp32 → bf16 ADD with
/// `rounding` on queue 0 (the stochastic-rounding stream is the queue).
fn kernel_spec(rounding: Rounding) -> cce_numerics::ReduceSpec {
    use cce_numerics::{NumType, ReduceSpec, Rounding as R};
    let r = match rounding {
        Rounding::Rne => R::Rne,
        Rounding::Stochastic { seed } => R::Stochastic { seed: seed as u64, stream: 0 },
    };
    ReduceSpec::add(NumType::Bf16, NumType::F32, NumType::Bf16).with_rounding(r)
}

/// Runs both jobs at each thread count, `bytes_per_source` per source, best of `reps`.
pub fn reduce(bytes_per_source: usize, threads_list: &[usize], reps: usize) -> Result<ReduceBench, PathError> {
    // The sizes and the budget, before anything is allocated.
    check_reduce(bytes_per_source)?;
    let size = reduce_size(bytes_per_source);
    let srcs = bf16_sources(size);
    let views: Vec<&[u8]> = srcs.iter().map(Vec::as_slice).collect();
    let mut memcpy = Memcpy::new(4 * size);
    let mut memcpy_best = memcpy.once();
    // The kernel's output, touched now so no repetition pays first-touch faults (the engine's
    // output region is touched before its timing starts too).
    let mut kernel_out = vec![1u8; size];
    let kernel_bytes = (views.len() * size + size) as f64;
    let mut results = Vec::new();
    for (name, rounding) in [("reduce4-bf16-rne", Rounding::Rne), ("reduce4-bf16-sr", Rounding::Stochastic { seed: 1 })]
    {
        for &threads in threads_list.iter().filter(|t| **t > 0) {
            let job =
                ReduceJob { rounding, threads, ..ReduceJob::add(SdmaDtype::Bf16, SdmaDtype::Fp32, SdmaDtype::Bf16) };
            let spec = kernel_spec(rounding);
            let exec = cce_numerics::Exec { threads, ..cce_numerics::Exec::default() };
            let mut best: Option<(f64, f64, f64, u64)> = None;
            let mut copy_gbps: f64 = 0.0;
            let mut kernel_s = f64::INFINITY;
            for _ in 0..reps.max(1) {
                copy_gbps = copy_gbps.max(memcpy.once());
                let o = run_reduce(&job, &views)?;
                let bytes = o.bytes_read + o.bytes_written;
                if best.is_none_or(|b| o.seconds < b.0) {
                    best = Some((o.seconds, o.decode_seconds / o.seconds, o.build_seconds / o.seconds, bytes));
                }
                let t = Instant::now();
                cce_numerics::reduce_with(&spec, &views, &mut [&mut kernel_out[..]], 0, &exec)
                    .map_err(|e| PathError::Input(format!("the kernel alone: {e}")))?;
                kernel_s = kernel_s.min(t.elapsed().as_secs_f64().max(1e-9));
                // `kernel_spec` restates how the engine resolves the job: under RNE the bytes
                // prove it timed the same computation. (Stochastic rounding draws from the
                // destination's address in the engine and from element 0 here: the same work,
                // other bits.)
                let same = o.outputs.first().is_some_and(|e| e[..] == kernel_out[..]);
                if rounding == Rounding::Rne && !same {
                    return Err(PathError::Input(format!(
                        "{name}: the kernel alone gave other bytes than the engine at {threads} thread(s)"
                    )));
                }
            }
            memcpy_best = memcpy_best.max(copy_gbps);
            if let Some((secs, decode, build, bytes)) = best {
                let gbps = bytes as f64 / secs / 1e9;
                let kernel_gbps = kernel_bytes / kernel_s / 1e9;
                results.push(ReduceBenchResult {
                    name,
                    threads,
                    gbps,
                    ratio: gbps / copy_gbps,
                    memcpy_gbps: copy_gbps,
                    decode_fraction: decode,
                    build_fraction: build,
                    kernel: cce_numerics::kernel_name(&spec, views.len(), size / 2, &exec),
                    kernel_gbps,
                    ratio_to_kernel: gbps / kernel_gbps,
                });
            }
        }
    }
    let decode_fraction = results.first().map_or(0.0, |x| x.decode_fraction);
    Ok(ReduceBench { memcpy_gbps: memcpy_best, results, decode_fraction })
}
