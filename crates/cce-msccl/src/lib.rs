//! # cce-msccl — MSCCL XML schedules, read and checked as the executor would run them
//!
//! A collective designer's algorithm, as msccl-tools writes it and the MSCCL executor of the
//! NCCL / RCCL forks reads it, turned into what cce's engines run (docs/MODEL.md X1–X13):
//!
//! 1. [`parse`]: the XML (a real parser, no DTDs) into an [`AlgoFile`], numbers as written;
//! 2. [`Schedule::new`] checks everything an executor hangs or crashes on, and more — the
//!    shapes and bounds, the executor's grouping of steps (fused `re`), every wait met, every
//!    send paired with a receive on its link in order, no cycle of waits and receives (named
//!    step by step), no data race, no read of undefined data, and the collective computed on
//!    chunk symbols — and plans the lowering: per rank, one step per level of happens-before,
//!    each a list of one-chunk copies and reduces between ranks' areas;
//! 3. [`Schedule::check_size`] checks an element count against the file (chunks, `minBytes`,
//!    `maxBytes`); [`Schedule::summary`] is what `cce algo` prints.
//!
//! Nothing here knows addresses, dtypes or packets: `cce-collectives` maps areas to its
//! memory layout and work items to cce-host's packets.
//!
//! ## Guarantees
//! - Never panics, on any text: every refusal is an [`MscclError`] naming rank, thread block,
//!   step and line where it can, and the rule, in one line.
//! - Bounded: at most [`MAX_STEPS`] steps and [`MAX_TXS`] transmissions, checked before the
//!   tables that grow with them are built.
//! - A [`Schedule`] is deadlock-free and race-free on the executor's semantics, so its result
//!   does not depend on the order of execution happens-before allows.
#![forbid(unsafe_code)]

mod check;
mod error;
mod model;
mod order;
mod parse;
mod plan;
mod program;
mod summary;
mod symbols;

pub use check::{EXECUTOR_FUSION, MAX_CHANNELS, MAX_CNT, MAX_PACKET_SOURCES, MAX_RANKS, MAX_TBS, MAX_TXS, MIN_RANKS};
pub use error::{MscclError, Where};
pub use model::{AlgoFile, Buf, Coll, Gpu, Kind, Operand, Proto, Step as FileStep, Tb};
pub use parse::{MAX_STEPS, parse};
pub use plan::{Loc, Op, Placement, Plan, Step, Work};
pub use program::{Area, Block, Chunks, Message, Program, Tx, Wait};
pub use summary::{LinkUse, Summary};

/// A checked schedule and its lowering plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schedule {
    /// The program as the executor would run it.
    pub program: Program,
    /// The plan.
    pub plan: Plan,
}

impl Schedule {
    /// Reads and checks `text`.
    pub fn from_xml(text: &str) -> Result<Schedule, MscclError> {
        Schedule::new(&parse(text)?)
    }

    /// Checks `file` and plans it.
    pub fn new(file: &AlgoFile) -> Result<Schedule, MscclError> {
        let program = check::check(file)?;
        let order = order::order(&program)?;
        let accesses = symbols::check(&program, &order)?;
        let plan = plan::plan(&program, &order, &accesses);
        Ok(Schedule { program, plan })
    }

    /// Checks an element count per rank buffer of `size`-byte elements (X3): a multiple of
    /// `nchunksperloop`, at least one element per chunk, and within `minBytes` / `maxBytes`.
    pub fn check_size(&self, elems: u64, size: u64) -> Result<(), MscclError> {
        let p = &self.program;
        let at = Where::default();
        if elems == 0 || elems % p.nchunks != 0 {
            return Err(MscclError::new(
                at,
                format!(
                    "{elems} elements per rank: the file's algorithm needs a positive multiple of nchunksperloop = {} (a chunk is elems / nchunksperloop elements)",
                    p.nchunks
                ),
            ));
        }
        let bytes = elems.saturating_mul(size);
        if !self.selects(bytes) {
            let max = if p.max_bytes == 0 { "no limit".to_string() } else { p.max_bytes.to_string() };
            return Err(MscclError::new(
                at,
                format!(
                    "{bytes} bytes per rank: the file's algorithm is for minBytes {} to maxBytes {max} (the executor would not select it)",
                    p.min_bytes
                ),
            ));
        }
        Ok(())
    }

    /// Whether `bytes` per rank buffer lie within the file's `minBytes` / `maxBytes` (`maxBytes`
    /// 0: no limit): MSCCL's runtime selects the file's algorithm only for such sizes (X3).
    pub fn selects(&self, bytes: u64) -> bool {
        let p = &self.program;
        bytes >= p.min_bytes && (p.max_bytes == 0 || bytes <= p.max_bytes)
    }

    /// The element counts per rank buffer of `size`-byte elements that [`Schedule::check_size`]
    /// accepts, as the smallest and the largest: they and every multiple of `nchunksperloop`
    /// between them. `None` when none is: `maxBytes` holds fewer than `nchunksperloop`
    /// elements, or no multiple of it between `minBytes` and `maxBytes`.
    pub fn accepted_elems(&self, size: u64) -> Option<(u64, u64)> {
        let p = &self.program;
        let n = p.nchunks;
        if size == 0 {
            // Every count is 0 bytes (fp32r's size).
            return self.selects(0).then_some((n, u64::MAX / n * n));
        }
        let smallest = p.min_bytes.div_ceil(size).div_ceil(n).max(1).checked_mul(n)?;
        let largest_bytes = if p.max_bytes == 0 { u64::MAX } else { p.max_bytes };
        let largest = largest_bytes / size / n * n;
        (smallest <= largest).then_some((smallest, largest))
    }

    /// The summary `cce algo` prints.
    pub fn summary(&self) -> Summary {
        summary::summary(&self.program, &self.plan)
    }
}
