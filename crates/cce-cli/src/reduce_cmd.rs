//! `cce reduce` (files through the whole path) and `cce run` (a ring dump over loaded memory):
//! the files and their names here, everything else [`cce_api::reduce()`] and [`cce_api::run`].

use std::path::{Path, PathBuf};

use cce_api::error::PathError;
use cce_api::values;
use cce_api::{ApiError, LoadProblem};

use crate::args::{ReduceArgs, RunArgs};
use crate::error::CliError;
use crate::files::{self, file_len};

pub(crate) fn reduce(a: &ReduceArgs) -> Result<(), CliError> {
    let op = crate::args::named("--op", &a.op)?;
    let params = cce_api::ReduceParams {
        opts: crate::args::op_options(&a.opts)?,
        arch: a.arch,
        dests: a.dst.len(),
        threads: a.threads,
        ..cce_api::ReduceParams::new(op, a.in_dt, a.accum, a.out_dt)
    };
    let job = params.job()?;
    for (i, d) in a.dst.iter().enumerate() {
        if a.src.iter().chain(&a.dst[..i]).any(|p| same_file(p, d)) {
            return Err(CliError::Input(format!(
                "{}: a destination may not also be a source or another destination",
                d.display()
            )));
        }
    }
    // Sizes first: a request that would exhaust memory is refused before reading anything.
    let lens = a.src.iter().map(|p| file_len(p)).collect::<Result<Vec<_>, _>>()?;
    cce_api::reduce::check_sources(&job, &lens).map_err(|e| match e {
        // The library counts sources; the files have names.
        ApiError::Path(PathError::SourceLengths { index, first, len }) => CliError::Input(format!(
            "sources differ in length: {} has {first} bytes, {} has {len} bytes",
            a.src[0].display(),
            a.src[index].display()
        )),
        e => e.into(),
    })?;
    let data = a.src.iter().map(|p| files::read(p)).collect::<Result<Vec<_>, _>>()?;
    let views: Vec<&[u8]> = data.iter().map(Vec::as_slice).collect();
    let r = cce_api::reduce::reduce_job(&job, &views)?;
    for (path, bytes) in a.dst.iter().zip(&r.outcome.outputs) {
        files::write_atomic(path, bytes)?;
    }
    if a.json {
        crate::print_json(&r.to_json());
    } else {
        crate::output::out!("{}", r.to_text());
    }
    Ok(())
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

/// `ADDR=FILE`.
fn parse_load(s: &str) -> Result<(u64, PathBuf), CliError> {
    let (addr, file) = s.split_once('=').ok_or_else(|| CliError::Input(format!("--load '{s}': expected ADDR=FILE")))?;
    Ok((values::parse_u64(addr).map_err(|e| CliError::Input(format!("--load: {e}")))?, PathBuf::from(file)))
}

/// `ADDR:LEN=FILE`.
fn parse_dump(s: &str) -> Result<(u64, u64, PathBuf), CliError> {
    let bad = || CliError::Input(format!("--dump '{s}': expected ADDR:LEN=FILE"));
    let (range, file) = s.split_once('=').ok_or_else(bad)?;
    let (addr, len) = range.split_once(':').ok_or_else(bad)?;
    let addr = values::parse_u64(addr).map_err(|e| CliError::Input(format!("--dump: {e}")))?;
    let len = values::parse_u64(len).map_err(|e| CliError::Input(format!("--dump: {e}")))?;
    if len == 0 {
        return Err(CliError::Input(format!("--dump '{s}': the length must be positive")));
    }
    Ok((addr, len, PathBuf::from(file)))
}

pub(crate) fn run(a: &RunArgs) -> Result<(), CliError> {
    let rings = crate::ring_input::read(a.ring_file.as_deref(), &a.raw)?;
    let file = rings.ring_file()?;
    let loads = a.load.iter().map(|s| parse_load(s)).collect::<Result<Vec<_>, _>>()?;
    let dumps = a.dump.iter().map(|s| parse_dump(s)).collect::<Result<Vec<_>, _>>()?;
    cce_api::run::check_threads(a.threads)?;
    // Sizes first, against the budget, before any file is read.
    let lens = loads.iter().map(|(_, p)| file_len(p)).collect::<Result<Vec<_>, _>>()?;
    cce_api::run::check_loads(&lens)?;
    let data = loads.iter().map(|(_, p)| files::read(p)).collect::<Result<Vec<_>, _>>()?;
    let mapped: Vec<(u64, &[u8])> = loads.iter().zip(&data).map(|((addr, _), d)| (*addr, d.as_slice())).collect();
    let ranges: Vec<(u64, u64)> = dumps.iter().map(|(addr, len, _)| (*addr, *len)).collect();
    let result = cce_api::run::run_file(&file, &mapped, &ranges, a.threads).map_err(|e| match e {
        // The library counts loads and dumps; the command line names them.
        ApiError::Load { index, problem: LoadProblem::Empty, .. } => {
            CliError::Input(format!("--load {}: the file is empty", loads[index].1.display()))
        }
        ApiError::Load { index, problem: LoadProblem::Region { error, overlaps }, .. } => {
            let also = overlaps.map_or(String::new(), |j| format!(" (--load {})", a.load[j]));
            CliError::Input(format!("--load {}: {error}{also}", a.load[index]))
        }
        ApiError::Dump { index, error, .. } => CliError::Input(format!("--dump {}: {error}", dumps[index].2.display())),
        e => e.into(),
    })?;
    for ((_, _, p), buf) in dumps.iter().zip(&result.dumps) {
        files::write_atomic(p, buf)?;
    }
    if a.json {
        crate::print_json(&result.to_json());
    } else {
        crate::output::out!("{}", result.to_text());
    }
    Ok(result.check()?)
}
