//! `cce identify`: the files read (rank{r}.bin / .npy, sizes checked before reading), the
//! identification and the probe are cce-api's ([`cce_api::identify`]); printing here.

use std::path::Path;

use cce_api::identify::{self as api, IdentifyParams};

use crate::args::{IdentifyArgs, named};
use crate::error::CliError;
use crate::files::{RankFile, element_bytes, rank_files, write_atomic};

pub(crate) fn identify(a: &IdentifyArgs) -> Result<(), CliError> {
    if let Some(dir) = &a.make_probe {
        return make_probe(a, dir);
    }
    let (Some(input_dir), Some(observed)) = (&a.input_dir, &a.observed) else {
        return Err(CliError::Input("missing --input-dir, --observed".into()));
    };
    let algo_files = a.algo_file.iter().map(|p| crate::algo_cmd::load(p)).collect::<Result<Vec<_>, _>>()?;
    let params = IdentifyParams {
        accum: a.accum,
        rounding: named("--rounding", &a.rounding)?,
        algo_files,
        arch: a.arch,
        threads: a.threads.map(|t| t.max(1) as usize),
        ranks_per_node: a.ranks_per_node,
        ranks: a.ranks,
        channels: a.channels,
        ..IdentifyParams::new(a.dtype)
    };
    let ranks = input_files(input_dir, a.ranks)?;
    let observed_files = observed_files(a, observed, ranks.len())?;
    stale_hint(a, input_dir, observed, ranks.len(), observed_files.len());
    // Sizes checked before anything is read.
    let first = crate::files::file_len(&ranks[0].path)?;
    api::check_size(first, ranks.len() as u64, observed_files.len() as u64)?;
    let size = a.dtype.bytes().max(1) as usize;
    let name = a.dtype.name();
    let inputs: Vec<Vec<u8>> = ranks.iter().map(|f| element_bytes(&f.path, size, name)).collect::<Result<_, _>>()?;
    same_lengths(&ranks, &inputs)?;
    let outputs: Vec<(usize, Vec<u8>)> = observed_files
        .iter()
        .map(|f| Ok((f.rank, element_bytes(&f.path, size, name)?)))
        .collect::<Result<_, CliError>>()?;
    for (f, (_, o)) in observed_files.iter().zip(&outputs) {
        if o.len() != inputs[0].len() {
            return Err(CliError::Input(format!(
                "{}: {} bytes of elements, the inputs hold {} ({} elements of {name})",
                f.path.display(),
                o.len(),
                inputs[0].len(),
                inputs[0].len() / size
            )));
        }
    }
    let slices: Vec<&[u8]> = inputs.iter().map(Vec::as_slice).collect();
    let seen: Vec<(usize, &[u8])> = outputs.iter().map(|(r, o)| (*r, o.as_slice())).collect();
    let id = api::identify(&params, &slices, &seen)?;
    if a.json {
        crate::print_json(&id.to_json());
    } else {
        crate::output::outln!("{}", id.to_text());
    }
    Ok(())
}

/// The input rank files of `dir`; with `--ranks R`, exactly ranks 0..R (a rank file beyond R
/// is refused: a stale one must not make the run a larger one).
fn input_files(dir: &Path, want: Option<u64>) -> Result<Vec<RankFile>, CliError> {
    if let Some(w) = want.filter(|w| !(2..=64).contains(w)) {
        return Err(CliError::Input(format!("--ranks {w}: identify takes 2 to 64 ranks")));
    }
    let files = rank_files(dir)?;
    let Some(want) = want else { return Ok(files) };
    let have = files.len() as u64;
    if have > want {
        let extra: Vec<String> = files[want as usize..]
            .iter()
            .take(3)
            .map(|f| f.path.file_name().map_or(String::new(), |n| n.to_string_lossy().into_owned()))
            .collect();
        let more = if have - want > 3 { ", …" } else { "" };
        return Err(CliError::Input(format!(
            "{}: {have} rank files, --ranks {want}: rank files beyond rank {} ({}{more}) are not inputs of this run; remove them or give --ranks {have}",
            dir.display(),
            want.saturating_sub(1),
            extra.join(", ")
        )));
    }
    if have < want {
        return Err(CliError::Input(format!(
            "{}: rank{have}.bin (or .npy) is missing: --ranks {want} needs ranks 0..={}",
            dir.display(),
            want - 1
        )));
    }
    Ok(files)
}

/// Without `--ranks`, the one sign of stale input rank files the files give: an observed
/// directory with fewer ranks than the inputs. A note on stderr, not a refusal (a user may save
/// only some ranks' outputs).
fn stale_hint(a: &IdentifyArgs, input_dir: &Path, observed: &Path, inputs: usize, outputs: usize) {
    if a.ranks.is_none() && observed.is_dir() && outputs < inputs {
        eprintln!(
            "cce: note: {} holds {inputs} ranks' inputs, {} only {outputs} ranks' outputs; if the run had {outputs} ranks, the other rank files are stale: give --ranks {outputs} to refuse them",
            input_dir.display(),
            observed.display()
        );
    }
}

/// The observed files: `path`'s rank files when it is a directory, else the one file as rank
/// `--observed-rank` (0).
fn observed_files(a: &IdentifyArgs, path: &Path, ranks: usize) -> Result<Vec<RankFile>, CliError> {
    if path.is_dir() {
        if a.observed_rank.is_some() {
            return Err(CliError::Input(format!(
                "--observed-rank is for one file; {} is a directory of rank files",
                path.display()
            )));
        }
        let files = rank_files(path)?;
        if files.len() > ranks {
            return Err(CliError::Input(format!(
                "{}: {} ranks' outputs, the inputs are of {ranks} ranks",
                path.display(),
                files.len()
            )));
        }
        return Ok(files);
    }
    let rank = a.observed_rank.unwrap_or(0) as usize;
    Ok(vec![RankFile { rank, path: path.to_path_buf() }])
}

/// Refuses inputs of different lengths, naming both files.
fn same_lengths(files: &[RankFile], inputs: &[Vec<u8>]) -> Result<(), CliError> {
    for (f, i) in files.iter().zip(inputs).skip(1) {
        if i.len() != inputs[0].len() {
            return Err(CliError::Input(format!(
                "{}: {} bytes of elements, {} has {}: every rank holds the same element count",
                f.path.display(),
                i.len(),
                files[0].path.display(),
                inputs[0].len()
            )));
        }
    }
    Ok(())
}

/// With --force: the rank files the probe will not write over (ranks beyond it, and `.npy`
/// files beside its `.bin`), removed so that no stale input stays.
fn remove_stale(entries: &[std::path::PathBuf], ranks: u64) -> Result<(), CliError> {
    for p in entries {
        let Some(name) = p.file_name().and_then(|n| n.to_str()) else { continue };
        let Some((stem, ext)) = name.rsplit_once('.') else { continue };
        let Some(Ok(r)) = stem.strip_prefix("rank").map(str::parse::<u64>) else { continue };
        if (ext == "bin" && r >= ranks) || ext == "npy" {
            std::fs::remove_file(p).map_err(CliError::io(p))?;
        }
    }
    Ok(())
}

fn make_probe(a: &IdentifyArgs, dir: &Path) -> Result<(), CliError> {
    let (Some(ranks), Some(elems)) = (a.ranks, a.elems) else {
        return Err(CliError::Input("missing --ranks, --elems".into()));
    };
    let probe = api::make_probe(ranks, elems, a.dtype)?;
    let entries = crate::files::empty_or_forced("--make-probe", dir, a.force)?;
    remove_stale(&entries, ranks)?;
    std::fs::create_dir_all(dir).map_err(CliError::io(dir))?;
    for (r, bytes) in probe.inputs.iter().enumerate() {
        write_atomic(&dir.join(format!("rank{r}.bin")), bytes)?;
    }
    write_atomic(&dir.join("README.md"), probe.readme().as_bytes())?;
    let shown = dir.display().to_string();
    if a.json {
        crate::print_json(&probe.to_json(&shown));
    } else {
        crate::output::outln!("{}", probe.to_text(&shown));
    }
    Ok(())
}
