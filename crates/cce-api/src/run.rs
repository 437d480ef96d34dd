//! Executing a ring dump, as `cce run` does: map the loads into memory, run every queue of the
//! dump on one engine, read the dumps back.
//!
//! ## Guarantees
//! - Loads are checked against the memory budget as a whole ([`check_loads`]) before any is
//!   mapped; a refused load or dump is named by its index ([`ApiError::Load`],
//!   [`ApiError::Dump`]), so a front end can name it its own way.
//! - A queue that faults is not an error of [`run_ring`]: the result reports every queue,
//!   faulted or not, and [`RunResult::check`] turns faults into [`ApiError::Faulted`].

use std::time::Instant;

use cce_engine::feed::run_programs;
use cce_engine::{Engine, EngineConfig, Fault, MemError, Memory, PagedMemory, QueueState, RunReport};
use cce_format::ringfile::RingFile;

use crate::error::{ApiError, LoadProblem};

/// One queue after the run.
#[derive(Clone, Debug, PartialEq)]
pub struct QueueReport {
    /// Queue id.
    pub queue: u32,
    /// Its state.
    pub state: QueueState,
    /// Completion semaphore.
    pub semaphore: i32,
    /// Packets finished.
    pub packets: u64,
    /// Tx descriptors consumed.
    pub tx_done: u64,
    /// Rx descriptors consumed.
    pub rx_done: u64,
    /// The fault it stopped on.
    pub fault: Option<Fault>,
}

impl QueueReport {
    /// The state's name: `idle`, `active`, `faulted` or `stalled`.
    pub fn state_name(&self) -> &'static str {
        match self.state {
            QueueState::Idle => "idle",
            QueueState::Active => "active",
            QueueState::Faulted => "faulted",
            QueueState::Stalled => "stalled",
        }
    }
}

/// What a run did.
#[derive(Clone, Debug, PartialEq)]
pub struct RunResult {
    /// Every queue, by id.
    pub queues: Vec<QueueReport>,
    /// The engine's counts.
    pub report: RunReport,
    /// Wall-clock seconds of the engine run.
    pub seconds: f64,
    /// Each dump's bytes, in the order the dumps were given.
    pub dumps: Vec<Vec<u8>>,
}

impl RunResult {
    /// The faults the queues stopped on.
    pub fn faults(&self) -> Vec<&Fault> {
        self.queues.iter().filter_map(|q| q.fault.as_ref()).collect()
    }

    /// `Err(ApiError::Faulted)` if any queue faulted.
    pub fn check(&self) -> Result<(), ApiError> {
        let faults: Vec<Fault> = self.faults().into_iter().cloned().collect();
        if faults.is_empty() { Ok(()) } else { Err(ApiError::Faulted(faults)) }
    }
}

/// Checks that loads of `lens` bytes fit the memory budget together.
pub fn check_loads(lens: &[u64]) -> Result<(), ApiError> {
    let total = lens.iter().fold(0u64, |t, l| t.saturating_add(*l));
    Ok(PagedMemory::default().fits(total)?)
}

/// The arch of raw rings (a capture does not say): `--arch` when given (1..=4, the arches the
/// public driver builds rings for), else 3, as everywhere else (docs/MODEL.md E12).
pub fn raw_ring_arch(arch: Option<u64>) -> Result<u32, ApiError> {
    match arch {
        None => Ok(3),
        Some(v @ 1..=4) => Ok(v as u32),
        Some(v) => Err(ApiError::Input(format!("`arch` {v}: raw rings are from arch 1, 2, 3 or 4"))),
    }
}

/// A thread count, which must be at least 1.
pub fn check_threads(n: u64) -> Result<usize, ApiError> {
    if n == 0 {
        return Err(ApiError::Input("`threads` must be at least 1".into()));
    }
    Ok(usize::try_from(n).unwrap_or(usize::MAX))
}

/// Parses ring dump bytes (version 2, or version 1 converted) and runs them (see
/// [`run_file`]).
pub fn run_ring(
    file_bytes: &[u8],
    loads: &[(u64, &[u8])],
    dumps: &[(u64, u64)],
    threads: u64,
) -> Result<RunResult, ApiError> {
    // A version-1 dump is read as version 2 (its S2M descriptors without FIRST / LAST).
    let bytes = cce_format::ringfile::upgrade(file_bytes)?;
    run_file(&RingFile::parse(&bytes)?, loads, dumps, threads)
}

/// Maps each `(address, bytes)` load, runs every queue of `file` on one engine of `threads`
/// threads, then reads each `(address, length)` dump (a range no load covers is mapped as zeros
/// first).
pub fn run_file(
    file: &RingFile<'_>,
    loads: &[(u64, &[u8])],
    dumps: &[(u64, u64)],
    threads: u64,
) -> Result<RunResult, ApiError> {
    let threads = check_threads(threads)?;
    check_loads(&loads.iter().map(|(_, d)| d.len() as u64).collect::<Vec<_>>())?;
    let mut mem = PagedMemory::default();
    for (index, &(addr, data)) in loads.iter().enumerate() {
        let refused = |problem| ApiError::Load { index, addr, problem };
        if data.is_empty() {
            return Err(refused(LoadProblem::Empty));
        }
        mem.add_resident_region(addr, data.len() as u64).map_err(|error| {
            let overlaps = match error {
                MemError::Overlap { other_base, .. } => loads[..index].iter().position(|(a, _)| *a == other_base),
                _ => None,
            };
            refused(LoadProblem::Region { error, overlaps })
        })?;
        mem.write(addr, data)?;
    }
    for (index, &(addr, len)) in dumps.iter().enumerate() {
        if mem.check(addr, len).is_err() {
            mem.add_resident_region(addr, len).map_err(|error| ApiError::Dump { index, addr, error })?;
        }
    }
    // A dump's arch 0 (it does not say) is arch 3 to the per-arch check.
    let mut engine = Engine::new(mem, EngineConfig { arch: file.arch, threads, ..EngineConfig::default() });
    let t = Instant::now();
    let report = run_programs(&mut engine, &file.queues, &mut |m: &mut PagedMemory, x, l| m.add_region(x, l))?;
    let seconds = t.elapsed().as_secs_f64();
    let queues = engine
        .queue_ids()
        .into_iter()
        .filter_map(|id| {
            let st = engine.status(id)?;
            Some(QueueReport {
                queue: id,
                state: st.state,
                semaphore: st.semaphore,
                packets: st.packets,
                tx_done: st.tx_done,
                rx_done: st.rx_done,
                fault: st.fault,
            })
        })
        .collect();
    let mem = engine.memory();
    let dumps = dumps
        .iter()
        .enumerate()
        .map(|(index, &(addr, len))| {
            let mut buf = vec![0u8; len as usize];
            mem.read(addr, &mut buf).map_err(|error| ApiError::Dump { index, addr, error })?;
            Ok(buf)
        })
        .collect::<Result<Vec<_>, ApiError>>()?;
    Ok(RunResult { queues, report, seconds, dumps })
}
