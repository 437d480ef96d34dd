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
                numerics_json(&r)?
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
                    crate::output::out!("{}", reduce_table(&r));
                }
                reduce_json(&r)
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

/// `cce bench numerics --json`: the library's report as it renders it.
fn numerics_json(r: &cce_numerics::bench::BenchReport) -> Result<Value, CliError> {
    serde_json::from_str(&r.to_json()).map_err(|e| CliError::Input(format!("numerics bench JSON: {e}")))
}

/// `cce bench reduce`'s table: each row against the memcpy and the kernel timed with it.
fn reduce_table(r: &cce_collectives::bench::ReduceBench) -> String {
    use std::fmt::Write;
    let mut s = format!(
        "reduce (build + execute, 4 x 64 MiB bf16 -> fp32 -> bf16)\nmemcpy (1 thread): {:.2} GB/s, the run's best (ratio: to the memcpy timed with each row; /kernel: to the engine's numerics kernel alone, timed with it)\n",
        r.memcpy_gbps
    );
    let _ = writeln!(
        s,
        "{:<18} {:>7} {:>9} {:>7} {:>7} {:>8} {:>8} {:>7} {:>7}  level:route",
        "job", "threads", "GB/s", "ratio", "memcpy", "decode", "build", "kernel", "/kernel"
    );
    for x in &r.results {
        let _ = writeln!(
            s,
            "{:<18} {:>7} {:>9.2} {:>7.2} {:>7.2} {:>7.1}% {:>7.1}% {:>7.2} {:>7.2}  {}",
            x.name,
            x.threads,
            x.gbps,
            x.ratio,
            x.memcpy_gbps,
            100.0 * x.decode_fraction,
            100.0 * x.build_fraction,
            x.kernel_gbps,
            x.ratio_to_kernel,
            x.kernel
        );
    }
    s
}

/// `cce bench reduce --json`.
fn reduce_json(r: &cce_collectives::bench::ReduceBench) -> Value {
    json!({
        "memcpy_gbps": r.memcpy_gbps,
        "results": r.results.iter().map(|x| json!({
            "name": x.name, "threads": x.threads, "gbps": x.gbps, "ratio": x.ratio,
            "decode_fraction": x.decode_fraction, "build_fraction": x.build_fraction,
            "memcpy_gbps": x.memcpy_gbps,
            "kernel": x.kernel, "kernel_gbps": x.kernel_gbps, "ratio_to_kernel": x.ratio_to_kernel,
        })).collect::<Vec<_>>(),
        "decode_fraction": r.results.first().map_or(0.0, |x| x.decode_fraction),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Small runs of both benchmarks: every row of the JSON the CLI prints carries the new keys
    /// beside the old ones, and its ratios are its GB/s over theirs; the tables have the columns.
    #[test]
    fn bench_rows_carry_their_floor_and_kernel_ratios() {
        let r = cce_numerics::bench::run_numerics_bench_reps(1 << 16, &[1, 2], 1);
        let v = numerics_json(&r).unwrap();
        let rows = v["results"].as_array().unwrap();
        assert_eq!(rows.len(), 2 * cce_numerics::bench::JOBS.len());
        for (row, x) in rows.iter().zip(&r.results) {
            for k in ["name", "threads", "gbps", "ratio", "layout", "gbps_by_layout", "kernel", "memcpy_gbps"] {
                assert!(row.get(k).is_some(), "{k} missing: {row}");
            }
            let (Some(floor), Some(q)) = (x.floor_gbps, x.ratio_to_floor) else {
                // Only a machine without the floor loop (no AVX2) reports none.
                assert!(row["floor_gbps"].is_null() && row["ratio_to_floor"].is_null(), "{row}");
                continue;
            };
            assert_eq!(q, x.gbps / floor, "{row}");
            let (g, f) = (row["gbps"].as_f64().unwrap(), row["floor_gbps"].as_f64().unwrap());
            // The JSON rounds each number to 3 decimals (an error of up to 0.0005 in each).
            let want = g / f;
            let tol = 5e-4 + 5e-4 * (1.0 + want) / (f - 5e-4) + 1e-9;
            assert!((row["ratio_to_floor"].as_f64().unwrap() - want).abs() <= tol, "{row}");
        }
        assert!(r.to_table().lines().nth(1).unwrap().contains("/floor"));

        let r = cce_collectives::bench::reduce(1 << 16, &[1, 2], 1).unwrap();
        let v = reduce_json(&r);
        let rows = v["results"].as_array().unwrap();
        assert_eq!(rows.len(), 4);
        for (row, x) in rows.iter().zip(&r.results) {
            for k in ["name", "threads", "gbps", "ratio", "decode_fraction", "build_fraction", "memcpy_gbps"] {
                assert!(row.get(k).is_some(), "{k} missing: {row}");
            }
            assert!(row["kernel"].as_str().unwrap().contains(':'), "{row}");
            assert_eq!(row["ratio_to_kernel"].as_f64().unwrap(), x.gbps / x.kernel_gbps, "{row}");
            assert_eq!(row["kernel_gbps"].as_f64().unwrap(), x.kernel_gbps);
        }
        assert!(reduce_table(&r).lines().nth(2).unwrap().contains("/kernel"));
    }
}
