//! The MPI all-reduce's report as `mpirun -n P cce allreduce --json` prints it.

use serde_json::{Value, json};

use cce_collectives::collective::{Config, MemoryNeed, MpiReport, MpiRun};

use crate::mpi::MpiBench;
use cce_collectives::metrics::Check;

use crate::render::collective::{add_check_keys, add_file_keys};

/// Process 0's report of an MPI all-reduce, as one JSON object.
pub fn allreduce_json(cfg: &Config, run: &MpiRun, r: &MpiReport, need: &MemoryNeed, check: Check) -> Value {
    let (m, o) = (&r.metrics, &run.outcome);
    let mut v = json!({
        "ranks_identical": m.ranks_identical, "max_abs_err": m.max_abs_err, "max_rel_err": m.max_rel_err,
        "max_ulp_err": m.max_ulp_err, "mean_ulp_err": m.mean_ulp_err, "wrong": m.wrong,
        "nonfinite": crate::render::collective::nonfinite_json(&m.nonfinite),
        "processes": run.processes, "ranks": cfg.ranks, "algo": cfg.algo.name(), "op": cfg.op.name(),
        "dtype": cfg.dtype.name(), "elems": cfg.elems, "seconds": r.seconds,
        "model_seconds": o.model_seconds, "steps": o.steps, "packets": r.packets, "descriptors": r.descriptors,
        "bytes_moved": r.bytes_moved, "bytes_over_mpi": r.bytes_over_mpi, "process_peak_bytes": r.process_peak_bytes,
        "memory_bytes": need.total(),
    });
    add_file_keys(&mut v, cfg);
    add_check_keys(&mut v, check);
    v
}

/// The line process 0 prints for an MPI all-reduce.
pub fn allreduce_text(cfg: &Config, run: &MpiRun, r: &MpiReport) -> String {
    format!(
        "{} {} x {} {} on {} ranks over {} MPI processes: {:.3} s, {} bytes over MPI, peak memory per process {:?} bytes\n",
        crate::collective::algo_label(cfg),
        cfg.elems,
        cfg.dtype.name(),
        cfg.op.name(),
        cfg.ranks,
        run.processes,
        r.seconds,
        r.bytes_over_mpi,
        r.process_peak_bytes
    )
}

impl MpiBench {
    /// The object `mpirun -n P cce bench allreduce --json` prints: `{"allreduce": …}`.
    pub fn to_json(&self) -> Value {
        json!({ "allreduce": self })
    }

    /// The table `mpirun -n P cce bench allreduce` prints, for `ranks` ranks of
    /// `bytes_per_rank` bytes.
    pub fn to_text(&self, ranks: usize, bytes_per_rank: usize) -> String {
        use std::fmt::Write;
        let mut s = format!(
            "allreduce ({ranks} ranks x {} MiB bf16, add) over {} MPI processes\nmemcpy (1 thread, process 0): {:.2} GB/s\n",
            bytes_per_rank >> 20,
            self.processes,
            self.memcpy_gbps
        );
        let _ = writeln!(
            s,
            "{:<10} {:>9} {:>9} {:>7} {:>14} {:>16}",
            "algorithm", "seconds", "bound", "ratio", "bytes over MPI", "peak per process"
        );
        for x in &self.results {
            let _ = writeln!(
                s,
                "{:<10} {:>9.3} {:>9.3} {:>7.2} {:>14} {:>16}",
                x.name,
                x.seconds,
                x.bound_seconds,
                x.ratio,
                x.bytes_over_mpi,
                x.process_peak_bytes.iter().max().copied().unwrap_or(0)
            );
        }
        s
    }
}
