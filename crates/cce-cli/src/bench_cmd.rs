//! `cce bench`: runs the libraries' benchmarks and prints them.

use cce_api::bench::{self as api, Benchmark};

use crate::args::BenchArgs;
use crate::error::CliError;

pub(crate) fn bench(a: &BenchArgs) -> Result<(), CliError> {
    if crate::allreduce_cmd::under_mpi() {
        if a.which.as_deref() != Some("allreduce") {
            return Err(CliError::Input("under an MPI launcher only `cce bench allreduce` runs".into()));
        }
        #[cfg(feature = "mpi")]
        return crate::mpi_cmd::bench_allreduce(api::ALLREDUCE_RANKS, api::SOURCE_BYTES, a.json);
        #[cfg(not(feature = "mpi"))]
        return Err(CliError::Input(
            "started by an MPI launcher, but this cce was built without MPI: cargo build --release --features mpi"
                .into(),
        ));
    }
    let which: Vec<Benchmark> = match a.which.as_deref() {
        None => Benchmark::ALL.to_vec(),
        Some(w) => vec![w.parse()?],
    };
    // Every selected job's sizes and memory budget, before any job allocates or runs.
    api::check(&which)?;
    let threads = api::thread_counts();
    let mut results = Vec::new();
    for w in &which {
        let r = api::run(*w, &threads)?;
        if !a.json {
            crate::output::out!("{}", r.to_text());
        }
        results.push((*w, r));
    }
    if a.json {
        crate::print_json(&cce_api::render::bench::bench_json(&results)?);
    }
    Ok(())
}
