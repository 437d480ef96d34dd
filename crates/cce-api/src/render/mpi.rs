//! The MPI all-reduce's report as `mpirun -n P cce allreduce --json` prints it.

use serde_json::{Value, json};

use cce_collectives::allreduce::{Config, MemoryNeed, MpiReport, MpiRun};
use cce_collectives::metrics::Check;

use crate::render::collective::{add_check_keys, add_file_keys};

/// Process 0's report of an MPI all-reduce, as one JSON object.
pub fn allreduce_json(cfg: &Config, run: &MpiRun, r: &MpiReport, need: &MemoryNeed, check: Check) -> Value {
    let (m, o) = (&r.metrics, &run.outcome);
    let mut v = json!({
        "ranks_identical": m.ranks_identical, "max_abs_err": m.max_abs_err, "max_rel_err": m.max_rel_err,
        "max_ulp_err": m.max_ulp_err, "mean_ulp_err": m.mean_ulp_err, "wrong": m.wrong,
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
