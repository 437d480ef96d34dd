//! `cce convert`: a raw array file from one dtype to another through [`cce_api::Conversion`].

use cce_api::ApiError;

use crate::args::ConvertArgs;
use crate::error::CliError;
use crate::files;

pub(crate) fn convert(a: &ConvertArgs) -> Result<(), CliError> {
    let (from, to) = (cce_api::num_type(&a.from)?, cce_api::num_type(&a.to)?);
    let rounding = crate::args::named("--rounding", &a.rounding)?;
    let conv = cce_api::Conversion::new(from, to, rounding, a.seed, a.saturate, a.threads)?;
    let len = std::fs::metadata(&a.input).map_err(CliError::io(&a.input))?.len();
    let out_len = conv.output_len(len).map_err(|e| match e {
        // The dtype as the user spelled it (`f32` as well as `fp32`), after the file.
        ApiError::Ragged { len, size, .. } => {
            let e = ApiError::Ragged { len, dtype: a.from.clone(), size };
            CliError::Input(format!("{}: {e}", a.input.display()))
        }
        e => e.into(),
    })?;
    let input = files::read(&a.input)?;
    let output = conv.run(&input)?;
    files::write_atomic(&a.output, &output)?;
    let v = conv.to_json(&a.input.display().to_string(), &a.output.display().to_string(), len);
    crate::output::emit(&v, a.json, |_| {
        let (rounding, seed) = conv.rounding_name();
        let sr = seed.map_or(String::new(), |s| format!(" seed {s}"));
        let sat = if a.saturate { ", saturating" } else { "" };
        format!(
            "converted {} elements {} -> {} ({rounding}{sr}{sat}): {len} bytes in, {out_len} bytes written to {}\n",
            len / conv.from.size() as u64,
            conv.from.name(),
            conv.to.name(),
            a.output.display()
        )
    });
    Ok(())
}
