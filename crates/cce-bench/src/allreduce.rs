//! `cce bench allreduce`: every all-reduce algorithm over R ranks of bf16 (and, at 8 ranks, the
//! MSCCL XML ring), against the bytes each moves at a same-run memcpy's speed; and the same as
//! one process of an MPI job. The configuration is checked before anything is allocated.

use cce_collectives::collective::{self, Algo, Checked, CollectiveError, Config, RedOp, UserAlgo};
use cce_collectives::metrics;
use cce_format::SdmaDtype;
use serde::Serialize;

use crate::memcpy::memcpy_gbps;

/// One algorithm of the all-reduce benchmark.
#[derive(Clone, Debug, PartialEq, Serialize)]
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
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AllreduceBench {
    /// Single-thread memcpy, bytes read + written per second / 10⁹.
    pub memcpy_gbps: f64,
    /// Per algorithm.
    pub results: Vec<AllreduceBenchResult>,
}

/// The benchmark's configuration for `algo`.
fn allreduce_config(ranks: usize, bytes_per_rank: usize, algo: Algo) -> Config {
    let elems = (bytes_per_rank / 2) as u64;
    Config::new(ranks, algo, RedOp::Add, SdmaDtype::Bf16, elems)
}

/// The MSCCL XML ring all-reduce of 8 ranks the benchmark runs beside cce's own algorithms
/// (`examples/msccl/ring-allreduce-8.xml`, written by `scripts/msccl_gen.py`).
pub const XML_RING: &str = include_str!("../../../examples/msccl/ring-allreduce-8.xml");

/// The benchmark's row name for [`XML_RING`].
pub const XML_RING_NAME: &str = "xml-ring";

/// The benchmark's configuration of [`XML_RING`], when `ranks` is its 8.
fn xml_ring_config(ranks: usize, bytes_per_rank: usize) -> Result<Option<Config>, CollectiveError> {
    let user = UserAlgo::from_xml("examples/msccl/ring-allreduce-8.xml", XML_RING)?;
    if user.ranks() != ranks {
        return Ok(None);
    }
    Ok(Some(Config::from_user(std::sync::Arc::new(user), RedOp::Add, SdmaDtype::Bf16, (bytes_per_rank / 2) as u64)))
}

/// Checks [`allreduce()`]'s configuration for every algorithm ([`collective::check`], the
/// memory budget included) without allocating anything: each run's name and its checked
/// configuration, cce's algorithms in [`Algo::ALL`] order, then the XML ring when it has the
/// ranks.
pub fn check_allreduce(ranks: usize, bytes_per_rank: usize) -> Result<Vec<(&'static str, Checked)>, CollectiveError> {
    let mut runs = Algo::ALL
        .into_iter()
        .map(|algo| Ok((algo.name(), collective::check(&allreduce_config(ranks, bytes_per_rank, algo))?)))
        .collect::<Result<Vec<_>, CollectiveError>>()?;
    if let Some(cfg) = xml_ring_config(ranks, bytes_per_rank)? {
        runs.push((XML_RING_NAME, collective::check(&cfg)?));
    }
    Ok(runs)
}

/// Runs every algorithm once after a warm-up of the inputs, best of `reps`.
pub fn allreduce(ranks: usize, bytes_per_rank: usize, reps: usize) -> Result<AllreduceBench, CollectiveError> {
    // Every algorithm's configuration and memory budget, before the inputs are generated.
    let runs = check_allreduce(ranks, bytes_per_rank)?;
    let base = allreduce_config(ranks, bytes_per_rank, Algo::Ring);
    let inputs = metrics::generate(&base, 7);
    let slices: Vec<&[u8]> = inputs.iter().map(Vec::as_slice).collect();
    let memcpy = memcpy_gbps(bytes_per_rank * 4, reps.max(2));
    let mut results = Vec::new();
    for (name, checked) in &runs {
        let mut best: Option<(f64, u64)> = None;
        for _ in 0..reps.max(1) {
            let (o, _) = collective::run(checked, collective::borrowed(&slices))?;
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
#[derive(Clone, Debug, PartialEq, Serialize)]
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

/// [`allreduce()`] as one process of an MPI job (between [`collective::with_mpi`]'s
/// initialisation and its end): every algorithm over `ranks` ranks spread over the job's
/// processes, best of `reps`; the results on process 0 (`None` elsewhere).
#[cfg(feature = "mpi")]
pub fn allreduce_mpi(
    ranks: usize,
    bytes_per_rank: usize,
    reps: usize,
) -> Result<Option<(f64, Vec<MpiAllreduceBenchResult>)>, CollectiveError> {
    use collective::{gather_u64, run_mpi};
    let runs = check_allreduce(ranks, bytes_per_rank)?;
    let memcpy = memcpy_gbps(bytes_per_rank * 4, reps.max(2));
    let mut results = Vec::new();
    // cce's own algorithms (the XML ring runs in one process only).
    for (algo, (_, checked)) in Algo::ALL.into_iter().zip(&runs) {
        let cfg = checked.config();
        let mut best: Option<Vec<Vec<u64>>> = None;
        for _ in 0..reps.max(1) {
            let run = run_mpi(checked, &|q| metrics::generate_rank(cfg, 7, q))?;
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
