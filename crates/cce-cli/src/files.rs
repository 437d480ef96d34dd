//! The CLI's files: sizes before reading, whole reads, atomic writes; every error names the path.

use std::io::Write;
use std::path::Path;

use crate::error::CliError;

/// Writes `bytes` to `path` through a temporary file and a rename, so a failure never leaves
/// a half-written file.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    write_atomic_with(path, |f| f.write_all(bytes))
}

/// Writes what `fill` writes to `path` through a temporary file and a rename: a failure of
/// `fill` or of the file system never leaves a half-written `path`. A `path` that exists and is
/// not a regular file (`/dev/null`, `/dev/stdout`, a FIFO) is written directly: renaming over
/// it would replace the device with a file.
///
/// There is no fsync: the rename makes the file whole or absent for every reader, and what cce
/// writes can be made again (an fsync of 256 MiB took 0.10–0.14 s on the project's machine,
/// longer than making the bytes; docs/MODEL.md C10). A power loss may lose the new file.
pub(crate) fn write_atomic_with(
    path: &Path,
    fill: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>,
) -> Result<(), CliError> {
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        let result = std::fs::OpenOptions::new().write(true).open(path).and_then(|mut f| fill(&mut f));
        return result.map_err(CliError::io(path));
    }
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp-{}", std::process::id()));
    let tmp = std::path::PathBuf::from(tmp);
    let result = std::fs::File::create(&tmp).and_then(|mut f| fill(&mut f));
    if let Err(e) = result.and_then(|()| std::fs::rename(&tmp, path)) {
        let _ = std::fs::remove_file(&tmp);
        return Err(CliError::io(path)(e));
    }
    Ok(())
}

/// The whole file.
pub(crate) fn read(path: &Path) -> Result<Vec<u8>, CliError> {
    std::fs::read(path).map_err(CliError::io(path))
}

/// The length of a regular file, without reading it.
pub(crate) fn file_len(path: &Path) -> Result<u64, CliError> {
    let md = std::fs::metadata(path).map_err(CliError::io(path))?;
    if !md.is_file() {
        return Err(CliError::Input(format!("{}: not a regular file", path.display())));
    }
    Ok(md.len())
}

/// A rank's file in a directory: `rank{r}.bin` (raw little-endian) or `rank{r}.npy`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RankFile {
    /// The rank.
    pub(crate) rank: usize,
    /// Its path.
    pub(crate) path: std::path::PathBuf,
}

/// The rank files of `dir`, ranks 0..R with none missing and none given twice.
pub(crate) fn rank_files(dir: &Path) -> Result<Vec<RankFile>, CliError> {
    let rd = std::fs::read_dir(dir).map_err(CliError::io(dir))?;
    let mut found: Vec<RankFile> = Vec::new();
    for e in rd {
        let path = e.map_err(CliError::io(dir))?.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else { continue };
        let Some((stem, ext)) = name.rsplit_once('.') else { continue };
        let Some(digits) = stem.strip_prefix("rank") else { continue };
        if !(ext == "bin" || ext == "npy") || digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(rank) = digits.parse::<usize>() else { continue };
        if let Some(other) = found.iter().find(|f| f.rank == rank) {
            return Err(CliError::Input(format!(
                "{} and {}: rank {rank} given twice",
                other.path.display(),
                path.display()
            )));
        }
        found.push(RankFile { rank, path });
    }
    found.sort_by_key(|f| f.rank);
    if found.is_empty() {
        return Err(CliError::Input(format!("{}: no rank0.bin or rank0.npy", dir.display())));
    }
    for (r, f) in found.iter().enumerate() {
        if f.rank != r {
            return Err(CliError::Input(format!(
                "{}: rank{r}.bin (or .npy) is missing, and {} is there",
                dir.display(),
                f.path.display()
            )));
        }
    }
    Ok(found)
}

/// The element bytes a rank file holds: its size checked against `size`-byte elements before
/// it is read (a `.npy`'s header read and checked: little-endian, `size`-byte items, C order).
pub(crate) fn element_bytes(path: &Path, size: usize, dtype: &str) -> Result<Vec<u8>, CliError> {
    let bytes = read(path)?;
    let data = if path.extension().is_some_and(|e| e == "npy") { npy_payload(path, &bytes, size)? } else { bytes };
    if data.len() % size != 0 {
        return Err(CliError::Input(format!(
            "{}: {} bytes, not a multiple of the {dtype} element size {size}",
            path.display(),
            data.len()
        )));
    }
    Ok(data)
}

/// The data of a `.npy` file (format versions 1–3), its header checked.
fn npy_payload(path: &Path, bytes: &[u8], size: usize) -> Result<Vec<u8>, CliError> {
    let bad = |why: String| CliError::Input(format!("{}: {why}", path.display()));
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err(bad("not a .npy file (no \\x93NUMPY magic)".into()));
    }
    let (len, start) = match bytes[6] {
        1 => (usize::from(u16::from_le_bytes([bytes[8], bytes[9]])), 10),
        2 | 3 if bytes.len() >= 12 => (u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize, 12),
        v => return Err(bad(format!(".npy format version {v} (1 to 3 are read)"))),
    };
    let header = bytes.get(start..start + len).ok_or_else(|| bad("truncated .npy header".into()))?;
    let header = String::from_utf8_lossy(header);
    let descr = header
        .split("'descr':")
        .nth(1)
        .and_then(|r| r.split('\'').nth(1))
        .ok_or_else(|| bad("a .npy header without a descr".into()))?;
    let item: usize = descr.trim_start_matches(['<', '|', '=']).get(1..).and_then(|d| d.parse().ok()).unwrap_or(0);
    if descr.starts_with('>') || item != size {
        return Err(bad(format!(".npy dtype '{descr}': expected little-endian items of {size} bytes (the dtype's)")));
    }
    if header.contains("'fortran_order': True") {
        return Err(bad(".npy in Fortran order: save a C-ordered (or 1-D) array".into()));
    }
    Ok(bytes[start + len..].to_vec())
}
