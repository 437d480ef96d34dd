//! The CLI's files: sizes before reading, whole reads, atomic writes; every error names the path.

use std::io::Write;
use std::path::Path;

use crate::error::CliError;

/// Writes `bytes` to `path` through a temporary file and a rename, so a failure never leaves
/// a half-written file.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    write_atomic_with(path, |f| f.write_all(bytes))
}

/// The entries of `dir` (none when it does not exist yet), refused when there are any and
/// `force` is not given: `flag` writes into an empty or new directory.
pub(crate) fn empty_or_forced(flag: &str, dir: &Path, force: bool) -> Result<Vec<std::path::PathBuf>, CliError> {
    let entries: Vec<std::path::PathBuf> = match std::fs::read_dir(dir) {
        Ok(rd) => rd.filter_map(|e| e.ok().map(|e| e.path())).collect(),
        Err(_) => Vec::new(),
    };
    if !entries.is_empty() && !force {
        return Err(CliError::Input(format!(
            "{}: not empty ({} entries): {flag} writes into an empty or new directory (or give --force)",
            dir.display(),
            entries.len()
        )));
    }
    Ok(entries)
}

/// Refuses an output file (`flag`'s) that cannot be written, before any work: a directory, or
/// a file in a directory that is missing or read-only — probed with the temporary file
/// [`write_atomic`] will use, removed at once. A device or FIFO is written directly at the end
/// (opening a FIFO now would wait for its reader), so it is not probed.
pub(crate) fn check_output_file(flag: &str, path: &Path) -> Result<(), CliError> {
    if path.is_dir() {
        return Err(CliError::Input(format!("{flag} {}: a directory, not a file", path.display())));
    }
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
        return Ok(());
    }
    let mut probe = path.as_os_str().to_owned();
    probe.push(format!(".tmp-{}", std::process::id()));
    let probe = std::path::PathBuf::from(probe);
    std::fs::File::create(&probe).map_err(|e| CliError::Input(format!("{flag} {}: {e}", path.display())))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// Refuses an output directory (`flag`'s) that cannot be made or written, before any work: it
/// is made (as the write would make it) and a file is probed in it.
pub(crate) fn check_output_dir(flag: &str, dir: &Path) -> Result<(), CliError> {
    let refuse = |e: std::io::Error| CliError::Input(format!("{flag} {}: {e}", dir.display()));
    if std::fs::metadata(dir).is_ok_and(|m| !m.is_dir()) {
        return Err(CliError::Input(format!("{flag} {}: a file, not a directory", dir.display())));
    }
    std::fs::create_dir_all(dir).map_err(refuse)?;
    let probe = dir.join(format!(".cce-probe-{}", std::process::id()));
    std::fs::File::create(&probe).map_err(refuse)?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
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

/// Where a rank file's elements are: from byte `offset` (a `.npy`'s data; 0 for `.bin`),
/// `elems` of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Layout {
    /// The first element's byte.
    pub(crate) offset: u64,
    /// How many elements.
    pub(crate) elems: u64,
}

/// Measures a rank file of `size`-byte elements without reading its data: a `.bin`'s length
/// must be whole elements; a `.npy`'s header is read and checked (little-endian items of
/// `size` bytes whose kind is one of `kinds`, C order, a shape that covers the data exactly).
pub(crate) fn layout(path: &Path, size: u64, kinds: &[char], dtype: &str) -> Result<Layout, CliError> {
    let bad = |why: String| CliError::Input(format!("{}: {why}", path.display()));
    let len = file_len(path)?;
    if path.extension().is_none_or(|e| e != "npy") {
        if len % size != 0 {
            return Err(bad(format!("{len} bytes, not a multiple of the {dtype} element size {size}")));
        }
        return Ok(Layout { offset: 0, elems: len / size });
    }
    let head = read_prefix(path, 12)?;
    let need = cce_api::npy_header_size(&head).map_err(&bad)?;
    let h = cce_api::npy_header(&read_prefix(path, need)?).map_err(&bad)?;
    if !h.holds(size, kinds) {
        let kinds: Vec<String> = kinds.iter().map(char::to_string).collect();
        return Err(bad(format!(
            ".npy dtype '{}': expected little-endian items of {size} bytes, of kind {} ({dtype})",
            h.descr,
            kinds.join(" or ")
        )));
    }
    if h.fortran_order && h.shape.len() > 1 {
        return Err(bad(".npy in Fortran order: save a C-ordered (or 1-D) array".into()));
    }
    let elems = h.elems().ok_or_else(|| bad("an .npy shape too large".into()))?;
    let data = len.saturating_sub(h.data_offset);
    if data != elems.saturating_mul(size) {
        return Err(bad(format!(
            "its shape {} needs {} data bytes, the file has {data}",
            h.shape_text(),
            elems.saturating_mul(size)
        )));
    }
    Ok(Layout { offset: h.data_offset, elems })
}

/// The first `n` bytes of `path` (fewer when it is shorter).
fn read_prefix(path: &Path, n: usize) -> Result<Vec<u8>, CliError> {
    use std::io::Read;
    let f = std::fs::File::open(path).map_err(CliError::io(path))?;
    let mut buf = Vec::with_capacity(n);
    f.take(n as u64).read_to_end(&mut buf).map_err(CliError::io(path))?;
    Ok(buf)
}

/// The first `elems` elements (of `size` bytes) of a file laid out as `at`.
pub(crate) fn read_elements(path: &Path, at: Layout, elems: u64, size: u64) -> Result<Vec<u8>, CliError> {
    use std::io::{Read, Seek, SeekFrom};
    let io = CliError::io(path);
    let mut f = std::fs::File::open(path).map_err(&io)?;
    f.seek(SeekFrom::Start(at.offset)).map_err(&io)?;
    let mut buf = vec![0u8; (elems.min(at.elems) * size) as usize];
    f.read_exact(&mut buf).map_err(&io)?;
    Ok(buf)
}

/// The kinds of `.npy` element a dtype's files may hold: a float dtype `f`, or `V` as
/// ml_dtypes' types save; a signed integer `i`, an unsigned one `u`.
pub(crate) fn npy_kinds(dtype: cce_api::SdmaDtype) -> &'static [char] {
    if dtype.is_float() {
        &['f', 'V']
    } else if dtype.name().starts_with('u') {
        &['u']
    } else {
        &['i']
    }
}

/// The element bytes a rank file holds: its size checked against `size`-byte elements before
/// it is read (a `.npy`'s header read and checked: little-endian, `size`-byte items, C order).
pub(crate) fn element_bytes(path: &Path, size: usize, dtype: &str) -> Result<Vec<u8>, CliError> {
    // Any kind of the size: a bf16 array saved as its uint16 view is read as bf16.
    let at = layout(path, size as u64, &['f', 'V', 'i', 'u'], dtype)?;
    read_elements(path, at, at.elems, size as u64)
}
