//! How big a built-in schedule is before it is made: its steps and work items over all ranks,
//! in closed form from the algorithm and the ranks (tests compare every count with the
//! schedule made), and the host memory they take while a run holds them (MODEL, docs/MODEL.md
//! C26). A 4096-rank flat ring makes 33 million work items; the check refuses it against the
//! budget from these counts, before one is made.

use super::config::{Algo, Collective, Compress, Config, Inter};

/// Host bytes per step a run holds (the step and its dependencies, its marks, lifetimes and
/// times, its span in the model) — measured on this project's machine (MODEL C26).
pub const STEP_BYTES: u64 = 256;
/// Host bytes per work item a run holds (the item and its addresses, its scratch region's
/// bookkeeping, its planned cost in the model) — measured likewise (MODEL C26).
pub const WORK_BYTES: u64 = 240;
/// Host bytes per rank besides its steps (its engine, queue and task) — measured likewise.
pub const RANK_BYTES: u64 = 4096;

/// Steps and work items, over all ranks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScheduleSize {
    /// Steps of every rank.
    pub steps: u64,
    /// Work items (reduces, copies, compressions) of every rank.
    pub works: u64,
}

impl ScheduleSize {
    /// The size of a schedule as made.
    pub(super) fn of(steps: &[Vec<super::schedule::Step>]) -> Self {
        ScheduleSize {
            steps: steps.iter().map(|st| st.len() as u64).sum(),
            works: steps.iter().flatten().map(|s| s.work.len() as u64).sum(),
        }
    }

    /// The host memory a run holds for them: [`STEP_BYTES`] per step, [`WORK_BYTES`] per work
    /// item, [`RANK_BYTES`] per rank.
    pub fn bytes(&self, ranks: usize) -> u64 {
        self.steps
            .saturating_mul(STEP_BYTES)
            .saturating_add(self.works.saturating_mul(WORK_BYTES))
            .saturating_add((ranks as u64).saturating_mul(RANK_BYTES))
    }
}

/// Per member of a group of `n` ranks: (steps, works) of `algo`'s reduce-scatter.
fn rs(algo: Algo, n: u64) -> (u64, u64) {
    match algo {
        Algo::Ring | Algo::Ring2r2w => (n - 1, n - 1),
        Algo::KangaRing => {
            let s = (n - 1) / 2 + u64::from(n % 2 == 0);
            (s, s)
        }
        Algo::Mesh => (1, 1),
        Algo::Rdh => (n.trailing_zeros() as u64, n - 1),
        Algo::File | Algo::Hier => (0, 0),
    }
}

/// Per member of a group of `n` ranks: (steps, works) of `algo`'s all-gather; `skip`: ring-2R2W
/// right after its own reduce-scatter whose result is the output (one chunk delivered).
fn ag(algo: Algo, n: u64, skip: bool, arch: u32) -> (u64, u64) {
    match algo {
        Algo::Ring2r2w if skip => (n - 2 + u64::from(n == 2), n - 2),
        Algo::Ring | Algo::Ring2r2w => (n - 1, n - 1),
        Algo::KangaRing => {
            let k = (n - 1).div_ceil(2);
            let works = if arch > 2 { k } else { 2 * k - u64::from(k > 0 && (n - 1) % 2 == 1) };
            (k + u64::from(k > 0), works)
        }
        Algo::Mesh => (1, n - 1),
        Algo::Rdh => (n.trailing_zeros() as u64, n - 1),
        Algo::File | Algo::Hier => (0, 0),
    }
}

fn add(a: (u64, u64), b: (u64, u64)) -> (u64, u64) {
    (a.0 + b.0, a.1 + b.1)
}

/// The size of `cfg`'s schedule, or `None` for a user's schedule (made from its file, which
/// holds at most 64 ranks). `cfg` passed the shape rules.
pub fn schedule_size(cfg: &Config) -> Option<ScheduleSize> {
    let r = cfg.ranks as u64;
    let (rs_on, ag_on) = (cfg.collective != Collective::AllGather, cfg.collective != Collective::ReduceScatter);
    let per_rank = match cfg.algo {
        Algo::File => return None,
        Algo::Hier => {
            let y = cfg.model.ranks_per_node.max(1) as u64;
            let x = r / y;
            let (a, b) = (cfg.hier.intra, cfg.hier.inter);
            let mut n = (0, 0);
            if rs_on {
                n = add(n, rs(a, y));
            }
            n = match (b, b.staged()) {
                // The GCE ring over the nodes (every member before a boundary, see gce_size).
                (Inter::Ring, _) if cfg.compress == Compress::Gce => add(n, (2 * x - 1, 4 * x - 2)),
                (Inter::SingleStepMesh, _) | (_, None) => add(n, (1, 1)),
                (_, Some(b)) => {
                    let n = if rs_on { add(n, rs(b, x)) } else { n };
                    if ag_on { add(n, ag(b, x, false, cfg.arch)) } else { n }
                }
            };
            if ag_on { add(n, ag(a, y, false, cfg.arch)) } else { n }
        }
        _ if cfg.compress == Compress::Gce => return Some(gce_size(cfg)),
        algo => {
            let mut n = (0, 0);
            if rs_on {
                n = add(n, rs(algo, r));
            }
            if ag_on {
                n = add(n, ag(algo, r, cfg.collective == Collective::AllReduce, cfg.arch));
            }
            n
        }
    };
    // A ring's channels run side by side: as many steps, a work of each in every one.
    let channels = cfg.channels.max(1) as u64;
    Some(ScheduleSize { steps: per_rank.0 * r, works: per_rank.1 * r * channels })
}

/// The GCE ring's: a first step, R − 1 reduce steps and R − 1 gather steps per rank; a rank
/// before a node boundary compresses at its first step, one after it expands before every
/// reduce, every owner compresses and expands its final chunk, every gather step copies and
/// expands.
fn gce_size(cfg: &Config) -> ScheduleSize {
    let r = cfg.ranks as u64;
    let boundaries = (0..cfg.ranks).filter(|&q| cfg.node(q) != cfg.node((q + 1) % cfg.ranks)).count() as u64;
    ScheduleSize {
        steps: r * (1 + 2 * (r - 1)),
        works: boundaries + boundaries * (r - 1) + r * (r - 2) + 2 * r + 2 * r * (r - 1),
    }
}
