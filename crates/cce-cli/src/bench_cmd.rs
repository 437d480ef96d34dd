//! `cce bench`: runs the libraries' benchmarks and prints them.

use serde_json::{Map, Value, json};

use crate::args::BenchArgs;
use crate::error::CliError;

/// Every benchmark, in the order a bare `cce bench` runs them (`cce bench --help` describes each).
const ALL: [&str; 4] = ["numerics", "encode", "reduce", "allreduce"];
/// Bytes per source of the numerics and reduce jobs, and per rank of the all-reduce job (the
/// issues' 64 MiB).
const SOURCE_BYTES: usize = 64 << 20;
/// Ranks of the all-reduce job.
const ALLREDUCE_RANKS: usize = 8;

fn all_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

pub(crate) fn bench(a: &BenchArgs) -> Result<(), CliError> {
    if crate::allreduce_cmd::under_mpi() {
        if a.which.as_deref() != Some("allreduce") {
            return Err(CliError::Input("under an MPI launcher only `cce bench allreduce` runs".into()));
        }
        #[cfg(feature = "mpi")]
        return crate::mpi_cmd::bench_allreduce(ALLREDUCE_RANKS, SOURCE_BYTES, a.json);
        #[cfg(not(feature = "mpi"))]
        return Err(CliError::Input(
            "started by an MPI launcher, but this cce was built without MPI: cargo build --release --features mpi"
                .into(),
        ));
    }
    let which: Vec<&str> = match a.which.as_deref() {
        None => ALL.to_vec(),
        Some(w) if ALL.contains(&w) => vec![w],
        Some(w) => {
            return Err(CliError::Input(format!("unknown benchmark '{w}' (expected one of: {})", ALL.join(" "))));
        }
    };
    // Every selected job's sizes and memory budget, before any job allocates or runs.
    for w in &which {
        match *w {
            "reduce" => cce_collectives::bench::check_reduce(SOURCE_BYTES)?,
            "allreduce" => cce_collectives::bench::check_allreduce(ALLREDUCE_RANKS, SOURCE_BYTES)?,
            _ => {}
        }
    }
    let threads: Vec<usize> = if all_threads() > 1 { vec![1, all_threads()] } else { vec![1] };
    let mut out = Map::new();
    for w in &which {
        let v = match *w {
            "numerics" => {
                let r = cce_numerics::bench::run_numerics_bench(SOURCE_BYTES, &threads);
                if !a.json {
                    crate::output::out!("numerics\n{}", r.to_table());
                }
                serde_json::from_str(&r.to_json()).map_err(|e| CliError::Input(format!("numerics bench JSON: {e}")))?
            }
            "encode" => {
                // 1 GiB per source: the "1 GiB bf16 4-source reduce".
                let r = cce_host::bench::encode(1 << 30, 5)?;
                if !a.json {
                    crate::output::outln!(
                        "encode: {} descriptors for a 4 x 1 GiB bf16 reduce in {:.1} ms = {:.1} M descriptors/s (1 thread)",
                        r.descriptors,
                        r.seconds * 1e3,
                        r.descriptors_per_sec / 1e6
                    );
                }
                json!({"descriptors": r.descriptors, "seconds": r.seconds, "descriptors_per_sec": r.descriptors_per_sec})
            }
            "allreduce" => {
                let r = cce_collectives::bench::allreduce(ALLREDUCE_RANKS, SOURCE_BYTES, 2)?;
                if !a.json {
                    crate::output::outln!(
                        "allreduce ({ALLREDUCE_RANKS} ranks x {} MiB bf16, add)\nmemcpy (1 thread): {:.2} GB/s",
                        SOURCE_BYTES >> 20,
                        r.memcpy_gbps
                    );
                    crate::output::outln!("{:<10} {:>9} {:>9} {:>7}", "algorithm", "seconds", "bound", "ratio");
                    for x in &r.results {
                        crate::output::outln!(
                            "{:<10} {:>9.3} {:>9.3} {:>7.2}",
                            x.name,
                            x.seconds,
                            x.bound_seconds,
                            x.ratio
                        );
                    }
                }
                json!({
                    "memcpy_gbps": r.memcpy_gbps,
                    "results": r.results.iter().map(|x| json!({"name": x.name, "seconds": x.seconds, "bound_seconds": x.bound_seconds, "ratio": x.ratio})).collect::<Vec<_>>(),
                })
            }
            _ => {
                let r = cce_collectives::bench::reduce(SOURCE_BYTES, &threads, 3)
                    .map_err(|e| CliError::Input(e.to_string()))?;
                if !a.json {
                    crate::output::outln!(
                        "reduce (build + execute, 4 x 64 MiB bf16 -> fp32 -> bf16)\nmemcpy (1 thread): {:.2} GB/s, the run's best (ratio: to the memcpy timed with each row)",
                        r.memcpy_gbps
                    );
                    crate::output::outln!(
                        "{:<18} {:>7} {:>9} {:>7} {:>7} {:>8} {:>8}",
                        "job",
                        "threads",
                        "GB/s",
                        "ratio",
                        "memcpy",
                        "decode",
                        "build"
                    );
                    for x in &r.results {
                        crate::output::outln!(
                            "{:<18} {:>7} {:>9.2} {:>7.2} {:>7.2} {:>7.1}% {:>7.1}%",
                            x.name,
                            x.threads,
                            x.gbps,
                            x.ratio,
                            x.memcpy_gbps,
                            100.0 * x.decode_fraction,
                            100.0 * x.build_fraction
                        );
                    }
                }
                json!({
                    "memcpy_gbps": r.memcpy_gbps,
                    "results": r.results.iter().map(|x| json!({
                        "name": x.name, "threads": x.threads, "gbps": x.gbps, "ratio": x.ratio,
                        "decode_fraction": x.decode_fraction, "build_fraction": x.build_fraction,
                        "memcpy_gbps": x.memcpy_gbps,
                    })).collect::<Vec<_>>(),
                    "decode_fraction": r.results.first().map_or(0.0, |x| x.decode_fraction),
                })
            }
        };
        out.insert((*w).to_string(), v);
    }
    if a.json {
        // One benchmark: its own object (the issues' contracts); all: keyed by name.
        let v = if which.len() == 1 {
            out.into_iter().next().map(|(_, v)| v).unwrap_or(Value::Null)
        } else {
            Value::Object(out)
        };
        crate::print_json(&v);
    }
    Ok(())
}
