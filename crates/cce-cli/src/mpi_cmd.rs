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
    let run = allreduce::run_mpi(cfg, reading)?;
    if let Some(dir) = &a.output_dir {
        std::fs::create_dir_all(dir).map_err(CliError::io(dir))?;
        for &q in &run.ranks {
            write_atomic(&dir.join(format!("rank{q}.bin")), &run.outcome.outputs[q])?;
        }
    }
    let o = &run.outcome;
    let mine = |f: &dyn Fn(&cce_collectives::allreduce::RankCounts) -> u64| -> u64 {
        run.ranks.iter().map(|&q| f(&o.ranks[q])).sum()
    };
    let stats = [
        run.bytes_sent,
        run.peak_bytes,
        mine(&|r| r.packets),
        mine(&|r| r.descriptors),
        mine(&|r| r.bytes_read + r.bytes_written),
        (o.seconds * 1e9) as u64,
    ];
    if let Some(all) = allreduce::gather_u64(&stats) {
        let sum = |i: usize| all.iter().map(|s| s[i]).sum::<u64>();
        let peaks: Vec<u64> = all.iter().map(|s| s[1]).collect();
        let seconds = all.iter().map(|s| s[5]).max().unwrap_or(0) as f64 / 1e9;
        if a.json {
            crate::print_json(&json!({
                "processes": run.processes, "ranks": cfg.ranks, "algo": cfg.algo.name(), "op": cfg.op.name(),
                "dtype": cfg.dtype.name(), "elems": cfg.elems, "seconds": seconds,
                "model_seconds": o.model_seconds, "steps": o.steps, "packets": sum(2), "descriptors": sum(3),
                "bytes_moved": sum(4), "bytes_over_mpi": sum(0), "process_peak_bytes": peaks,
                "memory_bytes": need.total(),
            }));
        } else {
            crate::output::outln!(
                "{} {} x {} {} on {} ranks over {} MPI processes: {seconds:.3} s, {} bytes over MPI, peak memory per process {peaks:?} bytes",
                cfg.algo.name(),
                cfg.elems,
                cfg.dtype.name(),
                cfg.op.name(),
                cfg.ranks,
                run.processes,
                sum(0)
            );
        }
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
