//! `cce gen`: a deterministic raw test array (cce-numerics' `sample`), written atomically.

use cce_numerics::sample::{SampleKind, sample};
use serde_json::json;

use crate::args::GenArgs;
use crate::convert_cmd::{FILE_BUDGET, dtype};
use crate::error::CliError;
use crate::ring_cmd::write_atomic;

pub(crate) fn generate(a: &GenArgs) -> Result<(), CliError> {
    let t = dtype(&a.dtype)?;
    let kind = SampleKind::from_name(&a.values)
        .ok_or_else(|| CliError::Input(format!("--values '{}': expected uniform, ramp or bits", a.values)))?;
    let bytes = a.elems.saturating_mul(t.size() as u64);
    if bytes > FILE_BUDGET {
        return Err(CliError::Input(format!(
            "--elems {}: {bytes} bytes of {} exceed the {FILE_BUDGET}-byte budget",
            a.elems,
            t.name()
        )));
    }
    let data = sample(t, a.elems as usize, a.seed, kind)?;
    write_atomic(&a.output, &data)?;
    let v = json!({
        "output": a.output.display().to_string(), "dtype": t.name(), "elements": a.elems,
        "bytes": data.len(), "values": a.values, "seed": a.seed,
    });
    crate::output::emit(&v, a.json, |_| {
        format!(
            "wrote {} {} elements ({} bytes, {}, seed {}) to {}\n",
            a.elems,
            t.name(),
            data.len(),
            a.values,
            a.seed,
            a.output.display()
        )
    });
    Ok(())
}
