//! Ring dump files as the fronts read them: the file ([`RingFile`]), a queue of raw ring bytes
//! ([`RawQueue`]), why a file is refused ([`RingFileError`]), and a version-1 file upgraded
//! ([`upgrade`]). The format itself is `cce-format`'s (docs/MODEL.md, the dump layout).

use std::borrow::Cow;

/// The ring dump file and a queue of raw ring bytes: what `cce run` and `cce disasm` read
/// before handing the rings to [`run_ring`](crate::run_ring) and [`disasm`](crate::disasm).
pub use cce_format::ringfile::{RawQueue, RingFile};

pub use crate::error::RingFileError;

/// The bytes of a dump as the current version: a version-2 file as it is (borrowed), a
/// version-1 file converted (every rx descriptor's FIRST and LAST cleared; the file rewritten
/// with the version-2 header and a checksum). Anything else is the error
/// [`RingFile::parse`] gives.
pub fn upgrade(bytes: &[u8]) -> Result<Cow<'_, [u8]>, RingFileError> {
    cce_format::ringfile::upgrade(bytes)
}
