//! `cce repro`: the lists parsed into [`cce_api::repro::ReproParams`], the inputs read from
//! `--input-dir` (rank{r}.bin or rank{r}.npy) when given, progress, printing and the heatmap.

use std::path::{Path, PathBuf};

use cce_api::repro::{GivenShape, ReproInputs, ReproParams};
use cce_api::{AlgoChoice, SdmaDtype};

use crate::args::{ReproArgs, named};
use crate::error::CliError;
use crate::files::{Layout, write_atomic};

fn input(m: impl Into<String>) -> CliError {
    CliError::Input(m.into())
}

/// Every value of a list flag parsed by its type's `FromStr`.
fn each<T: std::str::FromStr>(flag: &str, texts: &[String]) -> Result<Vec<T>, CliError>
where
    T::Err: std::fmt::Display,
{
    texts.iter().map(|t| named(flag, t)).collect()
}

/// The command's lists as the library's parameters (`elems` from `files` when not given).
fn params(a: &ReproArgs, file_elems: Option<u64>) -> Result<ReproParams, CliError> {
    let mut algos: Vec<AlgoChoice> = each("--algo", &a.algo)?;
    for f in &a.algo_file {
        algos.push(AlgoChoice::File(crate::algo_cmd::load(f)?));
    }
    let mut elems = Vec::new();
    for text in &a.elems {
        elems.extend(cce_api::repro::elems_values(text)?);
    }
    if a.elems.is_empty() {
        elems.extend(file_elems);
    }
    Ok(ReproParams {
        accums: if a.accum.is_empty() { vec![None] } else { a.accum.iter().copied().map(Some).collect() },
        roundings: each("--rounding", &a.rounding)?,
        seeds: a.seed.clone(),
        archs: a.arch.clone(),
        compress: each("--compress", &a.compress)?,
        ranks_per_node: if a.ranks_per_node.is_empty() {
            vec![None]
        } else {
            a.ranks_per_node.iter().copied().map(Some).collect()
        },
        channels: a.channels.clone(),
        op: named("--op", &a.op)?,
        input_seed: a.input_seed,
        all_pairs: a.all_pairs,
        budget: a.budget,
        ..ReproParams::new(a.ranks.clone(), algos, elems, a.dtype.clone())
    })
}

pub(crate) fn repro(a: &ReproArgs) -> Result<(), CliError> {
    if let Some(path) = &a.plot {
        crate::files::check_output_file("--plot", path)?;
    }
    let files = a.input_dir.as_deref().map(|d| rank_files(d, a.dtype.first().copied())).transpose()?;
    let given = files.as_ref().map(|f| GivenShape { ranks: f.len(), elems: f.first().map_or(0, |r| r.at.elems) });
    let p = params(a, given.map(|g| g.elems))?;
    // The whole space, every budget included, before anything is read or runs.
    let plan = p.plan(given)?;
    if a.plot.is_some() {
        cce_api::repro::check_plot(plan.runs())?;
    }
    let held: Vec<Vec<u8>> = match &files {
        Some(f) => f[..plan.ranks_needed()].iter().map(|r| r.read(plan.elems_needed())).collect::<Result<_, _>>()?,
        None => Vec::new(),
    };
    let slices: Vec<&[u8]> = held.iter().map(Vec::as_slice).collect();
    let inputs = if files.is_some() { ReproInputs::Given(&slices) } else { ReproInputs::Generated };
    let pb = indicatif::ProgressBar::with_draw_target(Some(plan.runs() as u64), crate::output::progress_target(a.json));
    let report = plan.run(inputs, &mut || pb.inc(1));
    pb.finish_and_clear();
    let report = report?;
    if let Some(path) = &a.plot {
        write_atomic(path, report.heatmap_svg()?.as_bytes())?;
    }
    if a.json {
        crate::print_json(&report.to_json());
    } else {
        crate::output::out!("{}", report.to_text());
    }
    Ok(())
}

/// One rank's input file: where its elements start and how many it holds.
struct RankFile {
    path: PathBuf,
    at: Layout,
    size: u64,
}

impl RankFile {
    /// Its first `elems` elements.
    fn read(&self, elems: u64) -> Result<Vec<u8>, CliError> {
        crate::files::read_elements(&self.path, self.at, elems, self.size)
    }
}

/// The rank files of `dir` (ranks 0..R, none missing: [`crate::files::rank_files`]), each
/// measured (nothing read but an .npy header); every one must hold as many elements.
fn rank_files(dir: &Path, dtype: Option<SdmaDtype>) -> Result<Vec<RankFile>, CliError> {
    let size = u64::from(dtype.map_or(1, |d| d.bytes().max(1)));
    let kinds = dtype.map_or(&[][..], crate::files::npy_kinds);
    let name = dtype.map_or("the dtype", |d| d.name());
    let mut files: Vec<RankFile> = Vec::new();
    for f in crate::files::rank_files(dir)? {
        let at = crate::files::layout(&f.path, size, kinds, name)?;
        let file = RankFile { path: f.path, at, size };
        if let Some(first) = files.first().filter(|f| f.at.elems != file.at.elems) {
            return Err(input(format!(
                "{}: {} elements, {}: {}: every rank's input must hold as many",
                file.path.display(),
                file.at.elems,
                first.path.display(),
                first.at.elems
            )));
        }
        files.push(file);
    }
    Ok(files)
}
