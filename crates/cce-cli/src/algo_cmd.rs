//! `cce algo FILE.xml`: a user's MSCCL XML schedule read, checked and summarised by
//! [`cce_api::algo`]; the file read and the ring dumps written here.

use std::path::Path;
use std::sync::Arc;

use cce_api::params::UserAlgo;

use crate::args::AlgoArgs;
use crate::error::CliError;
use crate::files::{file_len, write_atomic};

/// The largest XML file read (the checks' tables grow with the steps; see `cce_msccl`).
const MAX_FILE: u64 = 64 << 20;

/// Reads and checks an MSCCL XML file.
pub(crate) fn load(path: &Path) -> Result<Arc<UserAlgo>, CliError> {
    let len = file_len(path)?;
    if len > MAX_FILE {
        return Err(CliError::Input(format!(
            "{}: {len} bytes, more than the {MAX_FILE} an algorithm file may have",
            path.display()
        )));
    }
    let text = std::fs::read_to_string(path).map_err(CliError::io(path))?;
    Ok(cce_api::collective::load_algorithm(&path.display().to_string(), &text)?)
}

pub(crate) fn algo(a: &AlgoArgs) -> Result<(), CliError> {
    let user = load(&a.file)?;
    let job = cce_api::algo::job(&user, a.elems, a.any_size, a.dtype, a.arch)?;
    let report = cce_api::algo::report(&job)?;
    if let Some(dir) = &a.lower {
        let dumps = cce_api::algo::lower(&job)?;
        std::fs::create_dir_all(dir).map_err(CliError::io(dir))?;
        for (q, bytes) in dumps.iter().enumerate() {
            write_atomic(&dir.join(format!("rank{q}.ring")), bytes)?;
        }
    }
    if a.json {
        crate::print_json(&report.to_json());
    } else {
        crate::output::out!("{}", report.to_text());
    }
    Ok(())
}
