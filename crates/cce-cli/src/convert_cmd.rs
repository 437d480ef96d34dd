//! `cce convert`: a raw array from one dtype to another through `cce-numerics`.

use cce_format::SdmaDtype;
use cce_numerics::{NumType, Rounding};

use serde_json::json;

use crate::args::ConvertArgs;
use crate::error::CliError;
use crate::ring_cmd::write_atomic;

/// Most bytes `convert` (input + output) and `gen` will hold in memory: 16 GiB.
pub(crate) const FILE_BUDGET: u64 = 16 << 30;

/// A dtype by its SDMA name (so fp32r gets the numerics' own refusal) or a numerics name.
pub(crate) fn dtype(name: &str) -> Result<NumType, CliError> {
    match SdmaDtype::from_name(name) {
        Some(d) => Ok(NumType::from_sdma(d)?),
        None => Ok(NumType::from_name(name)?),
    }
}

pub(crate) fn convert(a: &ConvertArgs) -> Result<(), CliError> {
    let (from, to) = (dtype(&a.from)?, dtype(&a.to)?);
    let rounding = match crate::values::rounding_seed(&a.rounding, a.seed).map_err(CliError::Input)? {
        None => Rounding::Rne,
        Some(seed) => Rounding::Stochastic { seed, stream: 0 },
    };
    if a.threads == 0 {
        return Err(CliError::Input("--threads must be at least 1".into()));
    }
    let io = |source| CliError::Io { path: a.input.display().to_string(), source };
    let len = std::fs::metadata(&a.input).map_err(io)?.len();
    if len % from.size() as u64 != 0 {
        return Err(CliError::Input(format!(
            "{}: {len} bytes is not a multiple of the {} element size ({})",
            a.input.display(),
            a.from,
            from.size()
        )));
    }
    let out_len = len / from.size() as u64 * to.size() as u64;
    if len.saturating_add(out_len) > FILE_BUDGET {
        return Err(CliError::Input(format!("{} + {} bytes exceed the {FILE_BUDGET}-byte budget", len, out_len)));
    }
    let input = std::fs::read(&a.input).map_err(io)?;
    let mut output = vec![0u8; out_len as usize];
    if !input.is_empty() {
        cce_numerics::convert_par(from, to, &input, &mut output, rounding, a.saturate, a.threads as usize)?;
    }
    write_atomic(&a.output, &output)?;
    let (rounding_name, seed) = match rounding {
        Rounding::Rne => ("rne", None),
        Rounding::Stochastic { seed, .. } => ("sr", Some(seed)),
    };
    let elements = len / from.size() as u64;
    let v = json!({
        "input": a.input.display().to_string(), "output": a.output.display().to_string(),
        "from": from.name(), "to": to.name(), "elements": elements,
        "bytes_read": len, "bytes_written": out_len,
        "rounding": rounding_name, "seed": seed, "saturate": a.saturate,
    });
    crate::output::emit(&v, a.json, |_| {
        let sr = seed.map_or(String::new(), |s| format!(" seed {s}"));
        let sat = if a.saturate { ", saturating" } else { "" };
        format!(
            "converted {elements} elements {} -> {} ({rounding_name}{sr}{sat}): {len} bytes in, {out_len} bytes written to {}\n",
            from.name(),
            to.name(),
            a.output.display()
        )
    });
    Ok(())
}
