//! `cce bench numerics`: the numerics kernels alone, each job against a same-run memcpy and the
//! memory floor of its streams (the runner is `cce_numerics::bench`, beside the kernels it
//! times); here, its report as a serialisable value. Numbers are rounded to 3 decimals, as the
//! JSON has always given them.

use serde::{Serialize, Serializer};

pub use cce_numerics::bench::{BenchReport, JOBS, LAYOUTS, run_numerics_bench, run_numerics_bench_reps};

/// `x` rounded to 3 decimals.
fn round3(x: f64) -> f64 {
    (x * 1e3).round() / 1e3
}

fn ser3<S: Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(round3(*x))
}

fn ser3_opt<S: Serializer>(x: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match x {
        Some(x) => s.serialize_some(&round3(*x)),
        None => s.serialize_none(),
    }
}

fn ser_layouts<S: Serializer>(v: &[(&'static str, f64)], s: S) -> Result<S::Ok, S::Error> {
    s.collect_map(v.iter().map(|(l, g)| (*l, round3(*g))))
}

/// Memcpy split over a thread count.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ThreadsGbps {
    /// Threads.
    pub threads: usize,
    /// GB/s (bytes read + written / 10⁹ per second).
    #[serde(serialize_with = "ser3")]
    pub gbps: f64,
}

/// One job at one thread count (see `cce_numerics::bench::BenchResult`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NumericsRow {
    /// The job (one of [`JOBS`]).
    pub name: &'static str,
    /// Threads.
    pub threads: usize,
    /// GB/s at the worse layout.
    #[serde(serialize_with = "ser3")]
    pub gbps: f64,
    /// `gbps / memcpy_gbps`.
    #[serde(serialize_with = "ser3")]
    pub ratio: f64,
    /// The layout `gbps` was measured at.
    pub layout: &'static str,
    /// GB/s at each layout of [`LAYOUTS`], as an object keyed by layout.
    #[serde(serialize_with = "ser_layouts")]
    pub gbps_by_layout: Vec<(&'static str, f64)>,
    /// The kernel the job ran (`level:route`).
    pub kernel: String,
    /// The memcpy timed with this row.
    #[serde(serialize_with = "ser3")]
    pub memcpy_gbps: f64,
    /// The memory floor of the job's streams, where it can run.
    #[serde(serialize_with = "ser3_opt")]
    pub floor_gbps: Option<f64>,
    /// `gbps / floor_gbps`.
    #[serde(serialize_with = "ser3_opt")]
    pub ratio_to_floor: Option<f64>,
}

/// `cce bench numerics`'s report.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NumericsBench {
    /// Single-thread memcpy, the run's best.
    #[serde(serialize_with = "ser3")]
    pub memcpy_gbps: f64,
    /// Memcpy split over each thread count of the run.
    pub memcpy_gbps_by_threads: Vec<ThreadsGbps>,
    /// Every job at every thread count.
    pub results: Vec<NumericsRow>,
    /// The runner's own report (its table, its ISA).
    #[serde(skip)]
    pub report: BenchReport,
}

impl From<BenchReport> for NumericsBench {
    fn from(report: BenchReport) -> Self {
        NumericsBench {
            memcpy_gbps: report.memcpy_gbps,
            memcpy_gbps_by_threads: report
                .memcpy_gbps_by_threads
                .iter()
                .map(|&(threads, gbps)| ThreadsGbps { threads, gbps })
                .collect(),
            results: report
                .results
                .iter()
                .map(|r| NumericsRow {
                    name: r.name,
                    threads: r.threads,
                    gbps: r.gbps,
                    ratio: r.ratio,
                    layout: r.layout,
                    gbps_by_layout: r.gbps_by_layout.clone(),
                    kernel: r.kernel.clone(),
                    memcpy_gbps: r.memcpy_gbps,
                    floor_gbps: r.floor_gbps,
                    ratio_to_floor: r.ratio_to_floor,
                })
                .collect(),
            report,
        }
    }
}

/// Runs the numerics benchmark with `bytes_per_source` per source at each thread count.
pub fn numerics(bytes_per_source: usize, threads: &[usize]) -> NumericsBench {
    run_numerics_bench(bytes_per_source, threads).into()
}
