//! `cce bench reduce`: 4 × N-byte bf16 sources, fp32 accumulate, bf16 out, through the whole
//! path (ring build + engine), against a plain memcpy measured in the same run; `cce bench
//! allreduce`: every all-reduce algorithm over R ranks. Both check their sizes and memory budget
//! before allocating anything.
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

use cce_path::{PathError, ReduceJob, run_reduce};

/// One job at one thread count.
#[derive(Clone, Debug, PartialEq)]
pub struct ReduceBenchResult {
    /// `reduce4-bf16-rne` or `reduce4-bf16-sr`.
    pub name: &'static str,
    /// Engine threads.
    pub threads: usize,
    /// Bytes read + written per second / 10⁹.
    pub gbps: f64,
    /// `gbps / memcpy_gbps`.
    pub ratio: f64,
    /// Single-thread memcpy GB/s timed alternately with this job's repetitions (a shared
    /// host's memory changes speed from one tenth of a second to the next).
    pub memcpy_gbps: f64,
    /// Share of the time the engine spent decoding (reading and checking) descriptors.
    pub decode_fraction: f64,
    /// Share of the time the host spent building the rings (encoding).
    pub build_fraction: f64,
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
#[derive(Clone, Debug, PartialEq)]
pub struct ReduceBench {
    /// Single-thread memcpy, bytes read + written per second / 10⁹: the best of the run (each
    /// row's ratio uses the memcpy timed with it).
    pub memcpy_gbps: f64,
    /// Every job at every thread count.
    pub results: Vec<ReduceBenchResult>,
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

/// Same-run memcpy bandwidth for `bytes` bytes, best of `reps`.
pub fn memcpy_gbps(bytes: usize, reps: usize) -> f64 {
    let mut m = Memcpy::new(bytes);
    (0..reps.max(1)).map(|_| m.once()).fold(0.0, f64::max)
}

/// A single-thread memcpy of a fixed size, timed one repetition at a time (so that its
/// repetitions can alternate with a job's).
struct Memcpy {
    src: Vec<u8>,
    dst: Vec<u8>,
}

impl Memcpy {
    fn new(bytes: usize) -> Memcpy {
        Memcpy { src: vec![1u8; bytes], dst: vec![0u8; bytes] }
    }

    /// One copy; bytes read + written per second / 10⁹.
    fn once(&mut self) -> f64 {
        let t = Instant::now();
        self.dst.copy_from_slice(&self.src);
        std::hint::black_box(&mut self.dst);
        2.0 * self.src.len() as f64 / t.elapsed().as_secs_f64().max(1e-9) / 1e9
    }
}

/// The bytes per source [`reduce`] runs for `bytes_per_source` (whole 64-byte granules).
fn reduce_size(bytes_per_source: usize) -> usize {
    bytes_per_source.max(64) / 64 * 64
}

/// Checks [`reduce`]'s sizes and memory budget (its four sources and output against
/// [`ReduceJob::budget`]) without allocating anything.
pub fn check_reduce(bytes_per_source: usize) -> Result<(), PathError> {
    let job = ReduceJob::add(SdmaDtype::Bf16, SdmaDtype::Fp32, SdmaDtype::Bf16);
    cce_path::reduce::check_inputs(&job, &[reduce_size(bytes_per_source) as u64; 4]).map(drop)
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
    Ok(ReduceBench { memcpy_gbps: memcpy_best, results })
}

/// One algorithm of the all-reduce benchmark.
#[derive(Clone, Debug, PartialEq)]
pub struct AllreduceBenchResult {
    /// Algorithm name.
    pub name: &'static str,
    /// Best wall seconds.
    pub seconds: f64,
    /// Bytes the algorithm reads and writes / same-run memcpy bandwidth.
    pub bound_seconds: f64,
    /// `seconds / bound_seconds`.
    pub ratio: f64,
}

/// The all-reduce benchmark: `ranks` ranks × `bytes_per_rank` bf16, every algorithm and, at 8
/// ranks, the MSCCL XML ring ([`XML_RING`]).
#[derive(Clone, Debug, PartialEq)]
pub struct AllreduceBench {
    /// Single-thread memcpy, bytes read + written per second / 10⁹.
    pub memcpy_gbps: f64,
    /// Per algorithm.
    pub results: Vec<AllreduceBenchResult>,
}

/// The benchmark's configuration for `algo`.
fn allreduce_config(ranks: usize, bytes_per_rank: usize, algo: crate::allreduce::Algo) -> crate::allreduce::Config {
    let elems = (bytes_per_rank / 2) as u64;
    crate::allreduce::Config::new(ranks, algo, crate::allreduce::RedOp::Add, SdmaDtype::Bf16, elems)
}

/// The MSCCL XML ring all-reduce of 8 ranks the benchmark runs beside cce's own algorithms
/// (`examples/msccl/ring-allreduce-8.xml`, written by `scripts/msccl_gen.py`).
pub const XML_RING: &str = include_str!("../../../examples/msccl/ring-allreduce-8.xml");

/// The benchmark's row name for [`XML_RING`].
pub const XML_RING_NAME: &str = "xml-ring";

/// The benchmark's configuration of [`XML_RING`], when `ranks` is its 8.
fn xml_ring_config(
    ranks: usize,
    bytes_per_rank: usize,
) -> Result<Option<crate::allreduce::Config>, crate::allreduce::CollectiveError> {
    use crate::allreduce::{Config, RedOp, UserAlgo};
    let user = UserAlgo::from_xml("examples/msccl/ring-allreduce-8.xml", XML_RING)?;
    if user.ranks() != ranks {
        return Ok(None);
    }
    Ok(Some(Config::from_user(std::sync::Arc::new(user), RedOp::Add, SdmaDtype::Bf16, (bytes_per_rank / 2) as u64)))
}

/// Checks [`allreduce`]'s configuration for every algorithm ([`crate::allreduce::check`], the
/// memory budget included) without allocating anything.
pub fn check_allreduce(ranks: usize, bytes_per_rank: usize) -> Result<(), crate::allreduce::CollectiveError> {
    for algo in crate::allreduce::Algo::ALL {
        crate::allreduce::check(&allreduce_config(ranks, bytes_per_rank, algo))?;
    }
    if let Some(cfg) = xml_ring_config(ranks, bytes_per_rank)? {
        crate::allreduce::check(&cfg)?;
    }
    Ok(())
}

/// Runs every algorithm once after a warm-up of the inputs, best of `reps`.
pub fn allreduce(
    ranks: usize,
    bytes_per_rank: usize,
    reps: usize,
) -> Result<AllreduceBench, crate::allreduce::CollectiveError> {
    use crate::allreduce::{Algo, Config};
    // Every algorithm's configuration and memory budget, before the inputs are generated.
    check_allreduce(ranks, bytes_per_rank)?;
    let base = allreduce_config(ranks, bytes_per_rank, Algo::Ring);
    let inputs = crate::metrics::generate(&base, 7);
    let memcpy = memcpy_gbps(bytes_per_rank * 4, reps.max(2));
    let mut results = Vec::new();
    let xml = xml_ring_config(ranks, bytes_per_rank)?;
    let runs = Algo::ALL.iter().map(|&algo| (algo.name(), Config { algo, ..base.clone() }));
    for (name, cfg) in runs.chain(xml.map(|c| (XML_RING_NAME, c))) {
        let mut best: Option<(f64, u64)> = None;
        for _ in 0..reps.max(1) {
            let o = crate::allreduce::run(&cfg, &inputs)?;
            if best.is_none_or(|b| o.seconds < b.0) {
                best = Some((o.seconds, o.bytes_moved()));
            }
        }
        if let Some((seconds, bytes)) = best {
            let bound = bytes as f64 / (memcpy * 1e9);
            results.push(AllreduceBenchResult { name, seconds, bound_seconds: bound, ratio: seconds / bound });
        }
    }
    Ok(AllreduceBench { memcpy_gbps: memcpy, results })
}

/// One algorithm of [`allreduce_mpi`].
#[cfg(feature = "mpi")]
#[derive(Clone, Debug, PartialEq)]
pub struct MpiAllreduceBenchResult {
    /// Algorithm name.
    pub name: &'static str,
    /// Best wall seconds of the slowest process.
    pub seconds: f64,
    /// Bytes read and written by every rank / process 0's memcpy bandwidth.
    pub bound_seconds: f64,
    /// `seconds / bound_seconds`.
    pub ratio: f64,
    /// Bytes sent between processes.
    pub bytes_over_mpi: u64,
    /// Each process's model memory at its peak.
    pub process_peak_bytes: Vec<u64>,
}

/// [`allreduce`] as one process of an MPI job (between [`crate::allreduce::with_mpi`]'s
/// initialisation and its end): every algorithm over `ranks` ranks spread over the job's
/// processes, best of `reps`; the results on process 0 (`None` elsewhere).
#[cfg(feature = "mpi")]
pub fn allreduce_mpi(
    ranks: usize,
    bytes_per_rank: usize,
    reps: usize,
) -> Result<Option<(f64, Vec<MpiAllreduceBenchResult>)>, crate::allreduce::CollectiveError> {
    use crate::allreduce::{Algo, gather_u64, run_mpi};
    check_allreduce(ranks, bytes_per_rank)?;
    let memcpy = memcpy_gbps(bytes_per_rank * 4, reps.max(2));
    let mut results = Vec::new();
    for algo in Algo::ALL {
        let cfg = allreduce_config(ranks, bytes_per_rank, algo);
        let mut best: Option<Vec<Vec<u64>>> = None;
        for _ in 0..reps.max(1) {
            let run = run_mpi(&cfg, &|q| crate::metrics::generate_rank(&cfg, 7, q))?;
            let o = &run.outcome;
            let moved: u64 = run.ranks.iter().map(|&q| o.ranks[q].bytes_read + o.ranks[q].bytes_written).sum();
            let stats = [(o.seconds * 1e9) as u64, run.bytes_sent, run.peak_bytes, moved];
            if let Some(all) = gather_u64(&stats) {
                let slowest = |a: &Vec<Vec<u64>>| a.iter().map(|s| s[0]).max().unwrap_or(0);
                if best.as_ref().is_none_or(|b| slowest(&all) < slowest(b)) {
                    best = Some(all);
                }
            }
        }
        if let Some(all) = best {
            let seconds = all.iter().map(|s| s[0]).max().unwrap_or(0) as f64 / 1e9;
            let bound = all.iter().map(|s| s[3]).sum::<u64>() as f64 / (memcpy * 1e9);
            results.push(MpiAllreduceBenchResult {
                name: algo.name(),
                seconds,
                bound_seconds: bound,
                ratio: seconds / bound,
                bytes_over_mpi: all.iter().map(|s| s[1]).sum(),
                process_peak_bytes: all.iter().map(|s| s[2]).collect(),
            });
        }
    }
    Ok((!results.is_empty()).then_some((memcpy, results)))
}
