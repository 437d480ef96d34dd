//! `cce bench`: runs the libraries' benchmarks and prints them.

use serde_json::{Map, Value, json};

use crate::args::BenchArgs;
use crate::error::CliError;

const ALL: [&str; 1] = ["encode"];

pub(crate) fn bench(a: &BenchArgs) -> Result<(), CliError> {
    let which: Vec<&str> = match a.which.as_deref() {
        None => ALL.to_vec(),
        Some(w) if ALL.contains(&w) => vec![w],
        Some(w) => {
            return Err(CliError::Input(format!("unknown benchmark '{w}' (expected one of: {})", ALL.join(" "))));
        }
    };
    let mut out = Map::new();
    for w in which {
        if w == "encode" {
            // 1 GiB per source: the "1 GiB bf16 4-source reduce".
            let r = cce_host::bench::encode(1 << 30, 5)?;
            if !a.json {
                println!(
                    "encode: {} descriptors for a 4 x 1 GiB bf16 reduce in {:.1} ms = {:.1} M descriptors/s (1 thread)",
                    r.descriptors,
                    r.seconds * 1e3,
                    r.descriptors_per_sec / 1e6
                );
            }
            out.insert(
                "encode".into(),
                json!({"descriptors": r.descriptors, "seconds": r.seconds, "descriptors_per_sec": r.descriptors_per_sec}),
            );
        }
    }
    if a.json {
        crate::print_json(&Value::Object(out));
    }
    Ok(())
}
