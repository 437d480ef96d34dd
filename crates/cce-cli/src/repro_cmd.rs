//! `cce repro`: the lists parsed into [`cce_api::repro::ReproParams`], the inputs read from
//! `--input-dir` (rank{r}.bin or rank{r}.npy) when given, progress, printing and the heatmap.

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use cce_api::repro::{GivenShape, ReproInputs, ReproParams};
use cce_api::{AlgoChoice, SdmaDtype};

use crate::args::{ReproArgs, named};
use crate::error::CliError;
use crate::files::write_atomic;

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
        op: named("--op", &a.op)?,
        input_seed: a.input_seed,
        all_pairs: a.all_pairs,
        budget: a.budget,
        ..ReproParams::new(a.ranks.clone(), algos, elems, a.dtype.clone())
    })
}

pub(crate) fn repro(a: &ReproArgs) -> Result<(), CliError> {
    let files = a.input_dir.as_deref().map(|d| rank_files(d, a.dtype.first().copied())).transpose()?;
    let given = files.as_ref().map(|f| GivenShape { ranks: f.len(), elems: f.first().map_or(0, |r| r.elems) });
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
    let pb =
        indicatif::ProgressBar::with_draw_target(Some(plan.runs() as u64), indicatif::ProgressDrawTarget::stderr());
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
    offset: u64,
    elems: u64,
    size: u64,
}

impl RankFile {
    /// Its first `elems` elements.
    fn read(&self, elems: u64) -> Result<Vec<u8>, CliError> {
        let io = CliError::io(&self.path);
        let mut f = std::fs::File::open(&self.path).map_err(&io)?;
        f.seek(SeekFrom::Start(self.offset)).map_err(&io)?;
        let mut buf = vec![0u8; (elems * self.size) as usize];
        f.read_exact(&mut buf).map_err(&io)?;
        Ok(buf)
    }
}

/// The rank files of `dir`: rank0, rank1, … as long as one exists (`.npy` before `.bin`), each
/// measured (nothing read but an .npy header); every one must hold as many elements.
fn rank_files(dir: &Path, dtype: Option<SdmaDtype>) -> Result<Vec<RankFile>, CliError> {
    let size = u64::from(dtype.map_or(1, |d| d.bytes().max(1)));
    let mut files: Vec<RankFile> = Vec::new();
    for r in 0.. {
        let npy = dir.join(format!("rank{r}.npy"));
        let bin = dir.join(format!("rank{r}.bin"));
        let file = if npy.is_file() {
            npy_file(&npy, dtype, size)?
        } else if bin.is_file() {
            let len = crate::files::file_len(&bin)?;
            if len % size != 0 {
                return Err(input(format!("{}: {len} bytes is not whole elements of {size} bytes", bin.display())));
            }
            RankFile { path: bin, offset: 0, elems: len / size, size }
        } else {
            break;
        };
        if let Some(first) = files.first().filter(|f| f.elems != file.elems) {
            return Err(input(format!(
                "{}: {} elements, {}: {}: every rank's input must hold as many",
                file.path.display(),
                file.elems,
                first.path.display(),
                first.elems
            )));
        }
        files.push(file);
    }
    if files.is_empty() {
        return Err(input(format!("{}: no rank0.bin or rank0.npy", dir.display())));
    }
    Ok(files)
}

/// An .npy file of one-dimensional data of `dtype` (`size` bytes an element): its header read
/// and checked (little-endian, C order, an element type of that size and kind).
fn npy_file(path: &Path, dtype: Option<SdmaDtype>, size: u64) -> Result<RankFile, CliError> {
    let bad = |why: &str| input(format!("{}: {why}", path.display()));
    let mut f = std::fs::File::open(path).map_err(CliError::io(path))?;
    let mut head = [0u8; 12];
    f.read_exact(&mut head).map_err(|_| bad("not an .npy file (too short)"))?;
    if &head[..6] != b"\x93NUMPY" {
        return Err(bad("not an .npy file (no \\x93NUMPY magic)"));
    }
    let (len, start) = match head[6] {
        1 => (u64::from(u16::from_le_bytes([head[8], head[9]])), 10),
        2 | 3 => (u64::from(u32::from_le_bytes([head[8], head[9], head[10], head[11]])), 12),
        v => return Err(bad(&format!("an .npy version {v} file (1, 2 or 3 are read)"))),
    };
    if len > 1 << 20 {
        return Err(bad("an .npy header over 1 MiB"));
    }
    let mut text = vec![0u8; len as usize];
    f.seek(SeekFrom::Start(start)).map_err(CliError::io(path))?;
    f.read_exact(&mut text).map_err(|_| bad("the .npy header is cut short"))?;
    let text = String::from_utf8_lossy(&text);
    let field = |key: &str| -> Option<String> {
        let at = text.find(&format!("'{key}'"))? + key.len() + 2;
        let rest = text[at..].trim_start().strip_prefix(':')?.trim_start();
        let end = if rest.starts_with('(') { rest.find(')')? + 1 } else { rest.find([',', '}'])? };
        Some(rest[..end].trim().trim_matches('\'').to_string())
    };
    let descr = field("descr").ok_or_else(|| bad("the .npy header has no descr"))?;
    if !descr_fits(&descr, dtype, size) {
        let name = dtype.map_or("the dtype", |d| d.name());
        return Err(bad(&format!("holds '{descr}' elements, not {name} ({size} bytes, little-endian)")));
    }
    let shape = field("shape").ok_or_else(|| bad("the .npy header has no shape"))?;
    let dims: Vec<u64> = shape
        .trim_matches(['(', ')'])
        .split(',')
        .filter(|d| !d.trim().is_empty())
        .filter_map(|d| d.trim().parse().ok())
        .collect();
    let elems = dims.iter().try_fold(1u64, |a, &d| a.checked_mul(d)).ok_or_else(|| bad("an .npy shape too large"))?;
    let data = start + len;
    let file_len = crate::files::file_len(path)?;
    if file_len.saturating_sub(data) != elems.saturating_mul(size) {
        return Err(bad(&format!(
            "its shape {shape} needs {} data bytes, the file has {}",
            elems.saturating_mul(size),
            file_len.saturating_sub(data)
        )));
    }
    Ok(RankFile { path: path.to_path_buf(), offset: data, elems, size })
}

/// Whether an .npy `descr` holds elements of `dtype`: little-endian (or byte-order free), of
/// its size, and of its kind (a float dtype: `f`, or `V` as ml_dtypes' types save; a signed
/// integer `i`, an unsigned one `u`).
fn descr_fits(descr: &str, dtype: Option<SdmaDtype>, size: u64) -> bool {
    let Some(d) = dtype else { return false };
    let mut chars = descr.chars();
    let (Some(order), Some(kind)) = (chars.next(), chars.next()) else { return false };
    let bytes: Option<u64> = chars.as_str().parse().ok();
    let kind_ok = match kind {
        'f' | 'V' => d.is_float(),
        'i' | 'u' => !d.is_float() && d.name().starts_with(if kind == 'i' { 'i' } else { 'u' }),
        _ => false,
    };
    matches!(order, '<' | '|' | '=') && bytes == Some(size) && kind_ok
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descrs_of_numpy_and_ml_dtypes() {
        assert!(descr_fits("<V2", Some(SdmaDtype::Bf16), 2));
        assert!(descr_fits("<f4", Some(SdmaDtype::Fp32), 4));
        assert!(descr_fits("|i1", Some(SdmaDtype::I8), 1));
        assert!(!descr_fits(">f4", Some(SdmaDtype::Fp32), 4));
        assert!(!descr_fits("<f4", Some(SdmaDtype::Bf16), 2));
        assert!(!descr_fits("<i2", Some(SdmaDtype::Bf16), 2));
    }
}
