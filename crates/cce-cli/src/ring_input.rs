//! Where `cce run` and `cce disasm` get their rings: a ring dump (version 2, or version 1
//! converted on read) or raw ring memory (`--tx` / `--rx` / `--ring-size` per queue, and the
//! capture's `--arch`, 3 by default: a dump carries its own). Sizes
//! are checked before any file is read; the rings' own checks are the library's
//! ([`RawQueue::to_rings`], [`RingFile::parse`]).

use std::path::{Path, PathBuf};

use cce_api::ringfile::{self, RawQueue, RingFile, RingFileError};

use crate::args::RawRingArgs;
use crate::error::CliError;
use crate::files;

/// The bytes the rings are read from, held while a [`RingFile`] borrows them.
pub(crate) enum RingInput {
    /// A dump, in the current version.
    Dump { path: PathBuf, bytes: Vec<u8> },
    /// Raw queues: each queue's tx and rx memory, in queue order.
    Raw { args: RawQueues, rings: Vec<(Vec<u8>, Vec<u8>)>, arch: u32 },
}

/// The raw flags grouped per queue.
pub(crate) struct RawQueues {
    tx: Vec<PathBuf>,
    rx: Vec<PathBuf>,
    ring_size: Vec<u64>,
    tx_tail: Vec<Option<u64>>,
    rx_tail: Vec<Option<u64>>,
    phase: Vec<Option<u64>>,
}

fn input(msg: impl Into<String>) -> CliError {
    CliError::Input(msg.into())
}

/// Groups the raw flags per queue: as many `--tx`, `--rx` and `--ring-size` as queues, and each
/// optional flag once per queue or not at all.
fn group(a: &RawRingArgs) -> Result<RawQueues, CliError> {
    let n = a.tx.len();
    if a.rx.len() != n || a.ring_size.len() != n {
        return Err(input(format!(
            "raw rings come as one --tx, --rx and --ring-size per queue: got {} --tx, {} --rx, {} --ring-size",
            n,
            a.rx.len(),
            a.ring_size.len()
        )));
    }
    let per_queue = |flag: &str, v: &[u64]| -> Result<Vec<Option<u64>>, CliError> {
        match v.len() {
            0 => Ok(vec![None; n]),
            k if k == n => Ok(v.iter().copied().map(Some).collect()),
            k => {
                Err(input(format!("{flag} is given {k} times for {n} queue(s): give it once per queue or not at all")))
            }
        }
    };
    Ok(RawQueues {
        tx: a.tx.clone(),
        rx: a.rx.clone(),
        ring_size: a.ring_size.clone(),
        tx_tail: per_queue("--tx-tail", &a.tx_tail)?,
        rx_tail: per_queue("--rx-tail", &a.rx_tail)?,
        phase: per_queue("--phase", &a.phase)?,
    })
}

fn raw_used(a: &RawRingArgs) -> bool {
    !(a.tx.is_empty()
        && a.rx.is_empty()
        && a.ring_size.is_empty()
        && a.tx_tail.is_empty()
        && a.rx_tail.is_empty()
        && a.phase.is_empty())
}

/// Reads the rings named by a dump path or the raw flags (exactly one of them).
pub(crate) fn read(file: Option<&Path>, raw: &RawRingArgs) -> Result<RingInput, CliError> {
    if let (Some(path), Some(arch)) = (file, raw.arch) {
        return Err(input(format!(
            "--arch {arch}: a ring dump says its own arch ({}); --arch is for raw rings",
            path.display()
        )));
    }
    match (file, raw_used(raw)) {
        (Some(_), true) => Err(input("give a ring dump or raw rings (--tx / --rx / --ring-size), not both")),
        (None, false) => Err(input("missing the rings: a ring dump file, or --tx, --rx and --ring-size")),
        (Some(path), false) => {
            let bytes = files::read(path)?;
            let bytes = ringfile::upgrade(&bytes).map_err(|e| CliError::ring_file(path, e))?.into_owned();
            Ok(RingInput::Dump { path: path.to_path_buf(), bytes })
        }
        (None, true) => {
            let args = group(raw)?;
            let arch = cce_api::run::raw_ring_arch(raw.arch)?;
            // Sizes first: a file longer than its ring is refused before it is read.
            for q in 0..args.tx.len() {
                for path in [&args.tx[q], &args.rx[q]] {
                    let len = files::file_len(path)?;
                    if len > args.ring_size[q].saturating_mul(cce_api::DESC_BYTES as u64) {
                        let e = RingFileError::RawTooLong {
                            queue: q as u32,
                            ring: if path == &args.tx[q] { "tx" } else { "rx" },
                            descriptors: len.div_ceil(cce_api::DESC_BYTES as u64),
                            ring_size: args.ring_size[q],
                        };
                        return Err(CliError::ring_file(path, e));
                    }
                }
            }
            let rings = (0..args.tx.len())
                .map(|q| Ok((files::read(&args.tx[q])?, files::read(&args.rx[q])?)))
                .collect::<Result<Vec<_>, CliError>>()?;
            Ok(RingInput::Raw { args, rings, arch })
        }
    }
}

impl RingInput {
    /// The rings, checked.
    pub(crate) fn ring_file(&self) -> Result<RingFile<'_>, CliError> {
        match self {
            RingInput::Dump { path, bytes } => RingFile::parse(bytes).map_err(|e| CliError::ring_file(path, e)),
            RingInput::Raw { args, rings, arch } => {
                let queues: Vec<RawQueue<'_>> = rings
                    .iter()
                    .enumerate()
                    .map(|(q, (tx, rx))| RawQueue {
                        queue: q as u32,
                        tx,
                        rx,
                        ring_size: args.ring_size[q],
                        tx_tail: args.tx_tail[q],
                        rx_tail: args.rx_tail[q],
                        phase: args.phase[q],
                    })
                    .collect();
                let file = RingFile::from_raw(&queues).map_err(|e| {
                    // Name the file the problem is in, where there is one.
                    let path = match &e {
                        RingFileError::RawLength { queue, ring, .. }
                        | RingFileError::RawTooLong { queue, ring, .. }
                        | RingFileError::RawTail { queue, ring, .. } => {
                            let q = *queue as usize;
                            Some(if *ring == "tx" { &args.tx[q] } else { &args.rx[q] })
                        }
                        _ => None,
                    };
                    match path {
                        Some(p) => CliError::ring_file(p, e),
                        None => CliError::Input(e.to_string()),
                    }
                })?;
                Ok(RingFile { arch: *arch, ..file })
            }
        }
    }
}
