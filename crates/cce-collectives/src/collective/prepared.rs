//! What a run computes from its configuration alone, kept from one run to the next.
//!
//! Before anything runs, a run lowers its schedule, plans the messages between blocks, builds
//! every rank's rings and works out its scratch lifetimes and the model's timeline: a few
//! hundred microseconds for 8 ranks, a sixth of a small all-reduce's time here. None of it
//! depends on the data, so the last [`KEPT`] configurations' are kept (only those whose rings
//! fit [`KEPT_RING_BYTES`]); a run of an equal configuration and block count reuses them. A
//! stochastic-rounding seed is part of the configuration (it is in the packets), so runs with
//! new seeds prepare anew.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use super::budget::Checked;
use super::config::{CollectiveError, Config};
use super::lifetimes::Lifetimes;
use super::lowered::Lowered;
use super::partition::{Plan, block_lifetimes, block_of, plan};
use super::program::{RankProgram, build};

/// Most configurations kept.
pub(super) const KEPT: usize = 4;

/// Most ring bytes (this process's ranks') of a configuration that is kept.
pub(super) const KEPT_RING_BYTES: u64 = 16 << 20;

/// A run's work from its configuration alone, for `groups` blocks of memory.
pub(super) struct Prepared {
    /// The schedule lowered (with back pressure in one memory: the check's own).
    pub(super) low: Arc<Lowered>,
    /// Each rank's block.
    pub(super) group: Vec<usize>,
    /// The messages between blocks.
    pub(super) plan: Plan,
    /// Every rank's rings.
    pub(super) programs: Vec<RankProgram>,
    /// The scratch regions' lifetimes, per block.
    pub(super) life: Arc<Lifetimes>,
    /// The model's bytes per link and seconds (the schedule without back pressure).
    pub(super) links: BTreeMap<(usize, usize), u64>,
    /// The model's seconds.
    pub(super) model_seconds: f64,
}

/// (configuration, which blocks are this process's, the prepared work).
type Kept = Vec<(Config, Vec<bool>, Arc<Prepared>)>;

static KEPT_RUNS: Mutex<Kept> = Mutex::new(Vec::new());

/// The prepared work of a checked run over blocks of memory (`local[g]`: block g is this
/// process's; its length is the block count): kept from an earlier run of an equal
/// configuration and blocks, or made now (and kept, the oldest giving way). Only this process's
/// ranks get their rings.
pub(super) fn prepare(checked: &Checked, local: &[bool]) -> Result<Arc<Prepared>, CollectiveError> {
    let cfg = checked.config();
    let found = {
        let kept = KEPT_RUNS.lock().unwrap_or_else(PoisonError::into_inner);
        kept.iter().find(|(c, l, _)| l == local && c == cfg).map(|(_, _, p)| p.clone())
    };
    if let Some(p) = found {
        return Ok(p);
    }
    let p = Arc::new(make(checked, local)?);
    let ring_bytes: u64 = p.programs.iter().map(|r| 2 * cce_format::ring::ring_bytes(r.rings.ring_size as u64)).sum();
    if ring_bytes <= KEPT_RING_BYTES {
        let mut kept = KEPT_RUNS.lock().unwrap_or_else(PoisonError::into_inner);
        if kept.len() >= KEPT {
            kept.remove(0);
        }
        kept.push((cfg.clone(), local.to_vec(), p.clone()));
    }
    Ok(p)
}

fn make(checked: &Checked, local: &[bool]) -> Result<Prepared, CollectiveError> {
    let cfg = checked.config();
    let groups = local.len();
    // One memory: the check's schedule, whose back pressure keeps two steps of scratch per rank
    // (what memory_need counts), its lifetimes, and no messages; several: the blocks' own
    // memories bound it.
    let low = if groups == 1 { checked.lowered().clone() } else { Arc::new(Lowered::new(cfg)) };
    let group: Vec<usize> = (0..cfg.ranks).map(|q| block_of(q, cfg.ranks, groups)).collect();
    let plan = if groups == 1 { Plan::default() } else { plan(&low, &low.steps, &group) };
    // This process's ranks' programs: a step's dependencies count a peer's packets (within a
    // block, so in this process); another process's rank gets an empty one.
    let programs = low
        .steps
        .iter()
        .enumerate()
        .map(|(q, st)| build(cfg, q, if local[group[q]] { st } else { &[] }))
        .collect::<Result<Vec<_>, _>>()?;
    let life = match groups {
        1 => checked.lifetimes().clone(),
        _ => Arc::new(block_lifetimes(&low, &low.steps, &group)),
    };
    // The model timed the algorithm's own schedule (without the run's back pressure) in the
    // check, or the chosen candidate brought it.
    let (links, model_seconds) = match checked.model() {
        Some(m) => (m.links.clone(), m.seconds),
        None => {
            let model = super::time_model(cfg, &low.l, &Lowered::new(cfg).steps, false, None)?;
            (model.links, model.seconds)
        }
    };
    Ok(Prepared { low, group, plan, programs, life, links, model_seconds })
}
