//! The CLI's files: sizes before reading, whole reads, atomic writes; every error names the path.

use std::io::Write;
use std::path::Path;

use crate::error::CliError;

/// Writes `bytes` to `path` through a temporary file and a rename, so a failure never leaves
/// a half-written file.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp-{}", std::process::id()));
    let tmp = std::path::PathBuf::from(tmp);
    let result = std::fs::File::create(&tmp).and_then(|mut f| f.write_all(bytes).and_then(|()| f.sync_all()));
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
