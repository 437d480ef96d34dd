//! `cce build` and `cce disasm`: the flags to [`cce_api::BuildParams`], ring bytes to a
//! [`cce_api::Listing`]; files and printing.

use cce_api::values;
use cce_api::{FmaSelectors, SdmaDtype, SelectorsError};

use crate::args::{BuildArgs, DisasmArgs, named};
use crate::error::CliError;
use crate::files;

fn input(msg: impl Into<String>) -> CliError {
    CliError::Input(msg.into())
}

/// Splits `--out` values into the output dtype and the file (a value naming a dtype is the
/// dtype; anything else is the file).
fn out_dtype_and_file(a: &BuildArgs) -> Result<(SdmaDtype, Option<std::path::PathBuf>), CliError> {
    let mut dtype = a.out_dtype;
    let mut file = a.output.clone();
    for v in &a.out {
        match values::parse_sdma_dtype(v) {
            Ok(d) if dtype.is_none() => dtype = Some(d),
            _ if file.is_none() => file = Some(v.into()),
            _ => {
                return Err(input(format!("--out '{v}': the output dtype and the output file are both given already")));
            }
        }
    }
    Ok((dtype.ok_or_else(|| input("the output dtype is required: --out D (or --out-dtype D)"))?, file))
}

/// `--selectors a,b,c`; a refusal names the flag as the CLI always has.
fn selectors(text: &str) -> Result<FmaSelectors, CliError> {
    text.parse().map_err(|e| match e {
        SelectorsError::Operand(_) => input(format!("--selectors: {e}")),
        SelectorsError::Count => input(format!("--selectors {e}")),
    })
}

fn params(a: &BuildArgs, out_dt: SdmaDtype) -> Result<cce_api::BuildParams, CliError> {
    let op = named("--op", &a.op)?;
    let opts = crate::args::op_options(&a.opts)?;
    let selectors = a.selectors.as_deref().map(selectors).transpose()?.unwrap_or_default();
    Ok(cce_api::BuildParams {
        arch: a.arch,
        op,
        in_dt: a.in_dt,
        accum_dt: a.accum,
        out_dt,
        elems: a.elems,
        srcs: a.src.clone(),
        dsts: a.dst.clone(),
        opts,
        prio: a.prio,
        cap: a.cap,
        no_cce_info: a.no_cce_info,
        selectors,
        ring_size: a.ring_size,
        queue: a.queue,
        header: a.header,
    })
}

pub(crate) fn build(a: &BuildArgs) -> Result<(), CliError> {
    let (out_dt, file) = out_dtype_and_file(a)?;
    let built = cce_api::build(&params(a, out_dt)?)?;
    if let Some(path) = &file {
        files::write_atomic(path, &built.file_bytes())?;
    }
    if a.json {
        let file = file.as_ref().map(|p| p.display().to_string());
        crate::print_json(&built.to_json_with_file(file.as_deref()));
    } else {
        crate::output::outln!(
            "{}{}",
            built.summary(),
            file.map(|p| format!("; wrote {}", p.display())).unwrap_or_default()
        );
    }
    Ok(())
}

pub(crate) fn disasm(a: &DisasmArgs) -> Result<(), CliError> {
    let rings = crate::ring_input::read(a.file.as_deref(), &a.raw)?;
    let listing = cce_api::Listing::of(&rings.ring_file()?);
    if a.json {
        crate::print_json(&listing.to_json());
    } else {
        crate::output::out!("{}", listing.to_text());
    }
    Ok(())
}
