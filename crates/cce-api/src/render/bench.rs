//! `cce bench`'s reports, as text tables and as the JSON object `cce bench --json` prints.

use std::fmt::Write;

use serde_json::{Map, Value};

use crate::bench::{ALLREDUCE_RANKS, AllreduceBench, BenchResult, Benchmark, ReduceBench, SOURCE_BYTES};
use crate::error::ApiError;

impl BenchResult {
    /// The benchmark's text, as `cce bench` prints it.
    pub fn to_text(&self) -> String {
        match self {
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

    /// The benchmark's JSON object.
    pub fn to_json(&self) -> Result<Value, ApiError> {
        serde_json::to_value(self).map_err(|e| ApiError::Input(format!("bench JSON: {e}")))
    }
}

/// The object `cce bench --json` prints for the benchmarks run: one benchmark's own object
/// (the issues' contracts), or every one keyed by its name.
pub fn bench_json(results: &[(Benchmark, BenchResult)]) -> Result<Value, ApiError> {
    if let [(_, one)] = results {
        return one.to_json();
    }
    let mut out = Map::new();
    for (which, r) in results {
        out.insert(which.name().to_string(), r.to_json()?);
    }
    Ok(Value::Object(out))
}

/// `cce bench allreduce`'s table.
fn allreduce_table(r: &AllreduceBench) -> String {
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
fn reduce_table(r: &ReduceBench) -> String {
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
        let r = crate::bench::numerics(1 << 16, &[1, 2], 1);
        let v = BenchResult::Numerics(r.clone()).to_json().unwrap();
        let r = r.report;
        let rows = v["results"].as_array().unwrap();
        assert_eq!(rows.len(), 2 * crate::bench::NUMERICS_JOBS.len());
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

        let r = crate::bench::reduce(1 << 16, &[1, 2], 1).unwrap();
        let v = BenchResult::Reduce(r.clone()).to_json().unwrap();
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
