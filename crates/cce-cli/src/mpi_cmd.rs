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
    // This process's outputs against the exact reduction (made from every rank's input, one
    // at a time), in parts process 0 combines.
    let local: Vec<Vec<u8>> = run.ranks.iter().map(|&q| std::mem::take(&mut run.outcome.outputs[q])).collect();
    let exact = metrics::exact_streaming(cfg, reading);
    let parts = metrics::measure_parts(cfg, &exact, &local);
    drop(exact);
    let first_hash = local.first().map_or(0, |b| cce_format::ringfile::fnv1a64(b));
    let m = &parts.metrics;
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
        m.ranks_identical as u64,
        first_hash,
        m.max_abs_err.to_bits(),
        m.max_ulp_err.to_bits(),
        parts.ulp_sum.to_bits(),
        parts.counted,
        m.wrong,
        parts.max_exact.to_bits(),
    ];
    if let Some(all) = allreduce::gather_u64(&stats) {
        let sum = |i: usize| all.iter().map(|s| s[i]).sum::<u64>();
        let peaks: Vec<u64> = all.iter().map(|s| s[1]).collect();
        let seconds = all.iter().map(|s| s[5]).max().unwrap_or(0) as f64 / 1e9;
        let fmax = |i: usize| all.iter().map(|s| f64::from_bits(s[i])).fold(0.0, f64::max);
        let identical = all.iter().all(|s| s[6] == 1 && s[7] == all[0][7]);
        let (max_abs, max_exact) = (fmax(8), fmax(13));
        let max_rel = if max_abs == 0.0 {
            Some(0.0)
        } else if max_exact == 0.0 {
            None
        } else {
            Some(max_abs / max_exact)
        };
        let counted = sum(11);
        let ulp_sum: f64 = all.iter().map(|s| f64::from_bits(s[10])).sum();
        let mean_ulp = if counted == 0 { 0.0 } else { ulp_sum / counted as f64 };
        if a.json {
            crate::print_json(&json!({
                "ranks_identical": identical, "max_abs_err": max_abs, "max_rel_err": max_rel,
                "max_ulp_err": fmax(9), "mean_ulp_err": mean_ulp, "wrong": sum(12),
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
