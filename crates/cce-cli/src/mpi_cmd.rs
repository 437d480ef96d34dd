//! `mpirun -n P cce allreduce …` (feature `mpi`): this process's ranks only — their inputs made
//! from the seed (or read from `--input-dir`), their outputs written to `--output-dir` — and, on
//! process 0, one report for the job.

use cce_collectives::allreduce::{self, Config, MemoryNeed};
use cce_collectives::metrics;
use serde_json::json;

use crate::args::AllreduceArgs;
use crate::error::CliError;
use crate::files::write_atomic;

pub(crate) fn allreduce(a: &AllreduceArgs, cfg: &Config, need: &MemoryNeed) -> Result<(), CliError> {
    let reading = |q: usize| match &a.input_dir {
        Some(d) => std::fs::read(d.join(format!("rank{q}.bin"))).unwrap_or_default(),
        None => metrics::generate_rank(cfg, a.seed, q),
    };
    allreduce::with_mpi(|| {
        // Any error here ends the whole job: the other processes wait for this one.
        job(a, cfg, need, &reading).unwrap_or_else(|e| allreduce::abort_job(&e.to_string()))
    })?;
    Ok(())
}

fn job(a: &AllreduceArgs, cfg: &Config, need: &MemoryNeed, reading: &dyn Fn(usize) -> Vec<u8>) -> Result<(), CliError> {
    let mut run = allreduce::run_mpi(cfg, reading)?;
    if let Some(dir) = &a.output_dir {
        std::fs::create_dir_all(dir).map_err(CliError::io(dir))?;
        for &q in &run.ranks {
            write_atomic(&dir.join(format!("rank{q}.bin")), &run.outcome.outputs[q])?;
        }
    }
    let source: Box<dyn metrics::InputSource> = match &a.input_dir {
        Some(d) => Box::new(metrics::RankFiles::open(cfg, d).map_err(CliError::io(d))?),
        None => Box::new(metrics::Generated::new(cfg, a.seed)),
    };
    let Some(r) = allreduce::mpi_report(cfg, &mut run, source.as_ref(), a.check) else { return Ok(()) };
    let (m, o) = (&r.metrics, &run.outcome);
    if a.json {
        let mut v = json!({
            "ranks_identical": m.ranks_identical, "max_abs_err": m.max_abs_err, "max_rel_err": m.max_rel_err,
            "max_ulp_err": m.max_ulp_err, "mean_ulp_err": m.mean_ulp_err, "wrong": m.wrong,
            "processes": run.processes, "ranks": cfg.ranks, "algo": cfg.algo.name(), "op": cfg.op.name(),
            "dtype": cfg.dtype.name(), "elems": cfg.elems, "seconds": r.seconds,
            "model_seconds": o.model_seconds, "steps": o.steps, "packets": r.packets, "descriptors": r.descriptors,
            "bytes_moved": r.bytes_moved, "bytes_over_mpi": r.bytes_over_mpi, "process_peak_bytes": r.process_peak_bytes,
            "memory_bytes": need.total(),
        });
        cce_api::collective::add_file_keys(&mut v, cfg);
        cce_api::collective::add_check_keys(&mut v, a.check);
        crate::print_json(&v);
    } else {
        crate::output::outln!(
            "{} {} x {} {} on {} ranks over {} MPI processes: {:.3} s, {} bytes over MPI, peak memory per process {:?} bytes",
            cce_api::collective::algo_label(cfg),
            cfg.elems,
            cfg.dtype.name(),
            cfg.op.name(),
            cfg.ranks,
            run.processes,
            r.seconds,
            r.bytes_over_mpi,
            r.process_peak_bytes
        );
    }
    Ok(())
}

/// `mpirun -n P cce bench allreduce [--json]`: the all-reduce job over the MPI processes; one
/// report from process 0.
pub(crate) fn bench_allreduce(ranks: usize, bytes_per_rank: usize, json: bool) -> Result<(), CliError> {
    allreduce::with_mpi(|| {
        let r = cce_collectives::bench::allreduce_mpi(ranks, bytes_per_rank, 2)
            .unwrap_or_else(|e| allreduce::abort_job(&e.to_string()));
        let Some((memcpy, rows)) = r else { return };
        let processes = rows.first().map_or(0, |x| x.process_peak_bytes.len());
        if json {
            crate::print_json(&json!({"allreduce": {
                "processes": processes, "memcpy_gbps": memcpy,
                "results": rows.iter().map(|x| json!({
                    "name": x.name, "seconds": x.seconds, "bound_seconds": x.bound_seconds, "ratio": x.ratio,
                    "bytes_over_mpi": x.bytes_over_mpi, "process_peak_bytes": x.process_peak_bytes,
                })).collect::<Vec<_>>(),
            }}));
        } else {
            crate::output::outln!(
                "allreduce ({ranks} ranks x {} MiB bf16, add) over {processes} MPI processes\nmemcpy (1 thread, process 0): {memcpy:.2} GB/s",
                bytes_per_rank >> 20
            );
            crate::output::outln!(
                "{:<10} {:>9} {:>9} {:>7} {:>14} {:>16}",
                "algorithm",
                "seconds",
                "bound",
                "ratio",
                "bytes over MPI",
                "peak per process"
            );
            for x in &rows {
                crate::output::outln!(
                    "{:<10} {:>9.3} {:>9.3} {:>7.2} {:>14} {:>16}",
                    x.name,
                    x.seconds,
                    x.bound_seconds,
                    x.ratio,
                    x.bytes_over_mpi,
                    x.process_peak_bytes.iter().max().copied().unwrap_or(0)
                );
            }
        }
    })?;
    Ok(())
}
