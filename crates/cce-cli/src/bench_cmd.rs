//! `cce bench`: runs the libraries' benchmarks and prints them.

use cce_api::bench::{self as api, ALLREDUCE_RANKS, BenchResult, Benchmark, SOURCE_BYTES};
use serde_json::{Map, Value};

use crate::args::BenchArgs;
use crate::error::CliError;

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
    let which: Vec<Benchmark> = match a.which.as_deref() {
        None => Benchmark::ALL.to_vec(),
        Some(w) => vec![w.parse()?],
    };
    // Every selected job's sizes and memory budget, before any job allocates or runs.
    api::check(&which)?;
    let threads = api::thread_counts();
    let mut out = Map::new();
    for w in &which {
        let r = api::run(*w, &threads)?;
        if !a.json {
            crate::output::out!("{}", text(&r));
        }
        out.insert(w.name().to_string(), to_value(&r)?);
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

fn to_value(r: &BenchResult) -> Result<Value, CliError> {
    serde_json::to_value(r).map_err(|e| CliError::Input(format!("bench JSON: {e}")))
}

/// A benchmark's text, as `cce bench` prints it.
fn text(r: &BenchResult) -> String {
    match r {
        BenchResult::Numerics(n) => format!("numerics\n{}", n.report.to_table()),
        BenchResult::Encode(r) => format!(
            "encode: {} descriptors for a 4 x 1 GiB bf16 reduce in {:.1} ms = {:.1} M descriptors/s (1 thread)\n",
            r.descriptors,
            r.seconds * 1e3,
            r.descriptors_per_sec / 1e6
        ),
        BenchResult::Allreduce(r) => allreduce_table(r),
        BenchResult::Reduce(r) => reduce_table(r),
    }
}

/// `cce bench allreduce`'s table.
fn allreduce_table(r: &api::AllreduceBench) -> String {
    use std::fmt::Write;
    let mut s = format!(
        "allreduce ({ALLREDUCE_RANKS} ranks x {} MiB bf16, add)\nmemcpy (1 thread): {:.2} GB/s\n",
        SOURCE_BYTES >> 20,
        r.memcpy_gbps
    );
    let _ = writeln!(s, "{:<10} {:>9} {:>9} {:>7}", "algorithm", "seconds", "bound", "ratio");
    for x in &r.results {
        let _ = writeln!(s, "{:<10} {:>9.3} {:>9.3} {:>7.2}", x.name, x.seconds, x.bound_seconds, x.ratio);
    }
    s
}

/// `cce bench reduce`'s table: each row against the memcpy and the kernel timed with it.
fn reduce_table(r: &api::ReduceBench) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Small runs of both benchmarks: every row of the JSON the CLI prints carries the new keys
    /// beside the old ones, and its ratios are its GB/s over theirs; the tables have the columns.
    #[test]
    fn bench_rows_carry_their_floor_and_kernel_ratios() {
        let r = cce_api::bench::numerics(1 << 16, &[1, 2], 1);
        let v = to_value(&BenchResult::Numerics(r.clone())).unwrap();
        let r = r.report;
        let rows = v["results"].as_array().unwrap();
        assert_eq!(rows.len(), 2 * cce_api::bench::NUMERICS_JOBS.len());
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

        let r = cce_api::bench::reduce(1 << 16, &[1, 2], 1).unwrap();
        let v = to_value(&BenchResult::Reduce(r.clone())).unwrap();
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
