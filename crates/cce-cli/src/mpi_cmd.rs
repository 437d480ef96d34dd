//! `mpirun -n P cce allreduce …` (feature `mpi`): this process's ranks only — their inputs made
//! from the seed (or read from `--input-dir`), their outputs written to `--output-dir` — and, on
//! process 0, one report for the job.

use cce_api::collective::Prepared;
use cce_api::mpi::{self, MpiInputs};

use crate::args::AllreduceArgs;
use crate::error::CliError;
use crate::files::write_atomic;

pub(crate) fn allreduce(a: &AllreduceArgs, prepared: &Prepared) -> Result<(), CliError> {
    mpi::with_mpi(|| {
        // Any error here ends the whole job: the other processes wait for this one.
        job(a, prepared).unwrap_or_else(|e| mpi::abort_job(&e.to_string()))
    })?;
    Ok(())
}

fn job(a: &AllreduceArgs, prepared: &Prepared) -> Result<(), CliError> {
    let (cfg, need) = (prepared.config(), prepared.memory_need());
    let inputs = match &a.input_dir {
        Some(d) => MpiInputs::Files(d),
        None => MpiInputs::Seeded(a.seed),
    };
    if let Some(dir) = &a.output_dir {
        std::fs::create_dir_all(dir).map_err(CliError::io(dir))?;
    }
    let mut write = |q: usize, bytes: &[u8]| -> Result<(), cce_api::ApiError> {
        let Some(dir) = &a.output_dir else { return Ok(()) };
        write_atomic(&dir.join(format!("rank{q}.bin")), bytes).map_err(|e| cce_api::ApiError::Input(e.to_string()))
    };
    let done = mpi::allreduce(prepared, inputs, Some(&mut write))?;
    let Some(r) = &done.report else { return Ok(()) };
    let run = &done.run;
    if a.json {
        crate::print_json(&cce_api::render::mpi::allreduce_json(cfg, run, r, need, a.check));
    } else {
        crate::output::out!("{}", cce_api::render::mpi::allreduce_text(cfg, run, r));
    }
    Ok(())
}

/// `mpirun -n P cce bench allreduce [--json]`: the all-reduce job over the MPI processes; one
/// report from process 0.
pub(crate) fn bench_allreduce(ranks: usize, bytes_per_rank: usize, json: bool) -> Result<(), CliError> {
    mpi::with_mpi(|| {
        let r = mpi::bench(ranks, bytes_per_rank, 2).unwrap_or_else(|e| mpi::abort_job(&crate::error::api_message(&e)));
        let Some(b) = r else { return };
        if json {
            crate::print_json(&b.to_json());
        } else {
            crate::output::out!("{}", b.to_text(ranks, bytes_per_rank));
        }
    })?;
    Ok(())
}
