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
