//! What a run executes, whichever algorithm: every rank's steps, the buffers mapped before
//! the run, how the inputs go in and the outputs come out, and which buffers are scratch. A
//! built-in algorithm's come from its [`schedule`] and [`Layout`]; a user's from its plan
//! and [`Geometry`]. Everything downstream (the budget, the lifetimes, the partitioned run,
//! MPI, the time model) reads this, not the algorithm.

use super::buffers::Layout;
use super::config::{Algo, Collective, Config};
use super::schedule::{Step, owners, schedule};
use super::user::{self, Geometry};

/// The buffer map of `cfg`: R scratch slots per kind, 2R for a hierarchy (its inter-node
/// stage's partials take the slots from R, [`super::group`]), R·C for a ring of C channels
/// (each channel's piece of a chunk its own slot).
pub(super) fn layout(cfg: &Config) -> Layout {
    let mut l = Layout::new(cfg.ranks, cfg.elems, cfg.dtype.bytes() as u64);
    if cfg.algo == Algo::Hier {
        l.slots = 2 * cfg.ranks;
    }
    l.slots *= cfg.channels.max(1);
    l
}

/// Whose buffers.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Shape {
    /// A built-in algorithm: the [`Layout`]'s buffers; `owner[q]`, the chunk rank q ends with.
    BuiltIn { owner: Vec<usize> },
    /// A user's schedule.
    User(Geometry),
}

/// A run's steps and buffers.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Lowered {
    pub(super) l: Layout,
    pub(super) steps: Vec<Vec<Step>>,
    pub(super) shape: Shape,
}

impl Lowered {
    /// The steps of `cfg` (without back pressure) and its buffers. `cfg` passed the shape
    /// check (a user's schedule has its [`Config::user`]).
    pub(super) fn new(cfg: &Config) -> Lowered {
        let l = layout(cfg);
        match (cfg.algo, &cfg.user) {
            (Algo::File, Some(u)) => {
                let g = Geometry::new(cfg, &u.schedule);
                let steps = user::steps(&g, &u.schedule, cfg);
                Lowered { l, steps, shape: Shape::User(g) }
            }
            _ => {
                let (steps, owner) = schedule(cfg, &l);
                Lowered { l, steps, shape: Shape::BuiltIn { owner } }
            }
        }
    }

    /// What one element's story reads: a user's schedule whole; a built-in algorithm's buffers
    /// alone, its steps not made (`steps` empty: the story makes its element's,
    /// [`super::slice`]).
    pub(super) fn for_story(cfg: &Config) -> Lowered {
        if cfg.algo == Algo::File && cfg.user.is_some() {
            return Lowered::new(cfg);
        }
        let l = layout(cfg);
        Lowered { l, steps: Vec::new(), shape: Shape::BuiltIn { owner: owners(cfg, &l) } }
    }

    /// Steps per rank.
    pub(super) fn nsteps(&self) -> usize {
        self.steps.first().map_or(0, Vec::len)
    }

    /// Whether `addr` starts a scratch buffer (mapped from its writer's step to its last
    /// reader's, C12).
    pub(super) fn is_scratch(&self, addr: u64) -> bool {
        match &self.shape {
            Shape::BuiltIn { .. } => self.l.is_scratch(addr),
            Shape::User(g) => g.is_scratch(addr),
        }
    }

    /// The scratch buffer `addr` lies in, by its start: a hierarchy's inter-node stage reads
    /// its input `T` piece by piece (a user's schedule reads its buffers from their starts).
    pub(super) fn scratch_of(&self, addr: u64) -> Option<u64> {
        match &self.shape {
            Shape::BuiltIn { .. } => self.l.scratch_of(addr),
            Shape::User(g) => g.is_scratch(addr).then_some(addr),
        }
    }

    /// The regions rank `q` maps before the run besides its input and rings. A built-in
    /// schedule whose output is every chunk (all-reduce, all-gather), none of them empty, maps
    /// its `W` chunks as one region: the output is then that buffer, taken without a copy.
    pub(super) fn buffers(&self, cfg: &Config, q: usize) -> Vec<(u64, u64)> {
        match &self.shape {
            Shape::BuiltIn { .. } if cfg.collective != Collective::ReduceScatter && cfg.elems >= self.l.r as u64 => {
                vec![(self.l.w(q, 0), self.l.w_offset(self.l.r))]
            }
            // A hierarchy's reduce-scatter writes each rank's own chunk only.
            Shape::BuiltIn { owner } if cfg.algo == Algo::Hier => {
                vec![(self.l.w(q, owner[q]), self.l.chunk_bytes(owner[q]))]
            }
            Shape::BuiltIn { .. } => (0..self.l.r).map(|c| (self.l.w(q, c), self.l.chunk_bytes(c))).collect(),
            Shape::User(g) => g.buffers(q),
        }
    }

    /// Where rank `q`'s input goes: `None` to be moved in as it is at its `IN` address, else
    /// a copy, piece by piece (address, offset in the input, bytes), the input kept aside.
    pub(super) fn input_copy(&self, q: usize) -> Option<Vec<(u64, u64, u64)>> {
        match &self.shape {
            Shape::User(g) if g.copy_input => Some(g.input_copy(q)),
            _ => None,
        }
    }

    /// Copies inside rank `q`'s memory before the run: (from, to, bytes).
    pub(super) fn preload(&self, cfg: &Config, q: usize) -> Vec<(u64, u64, u64)> {
        match &self.shape {
            Shape::BuiltIn { owner } if cfg.collective == Collective::AllGather => {
                let c = owner[q];
                vec![(self.l.input(q, c), self.l.w(q, c), self.l.len(c) * self.l.size)]
            }
            Shape::BuiltIn { .. } => Vec::new(),
            Shape::User(g) => g.preload(q),
        }
    }

    /// Rank `q`'s output: the regions to take, in order, each with the bytes it adds (0: a
    /// buffer that is only unmapped).
    pub(super) fn outputs(&self, cfg: &Config, q: usize) -> Vec<(u64, u64)> {
        match &self.shape {
            Shape::BuiltIn { owner } if cfg.algo == Algo::Hier && cfg.collective == Collective::ReduceScatter => {
                vec![(self.l.w(q, owner[q]), self.l.len(owner[q]) * self.l.size)]
            }
            Shape::BuiltIn { owner } => (0..self.l.r)
                .map(|c| {
                    let keep = cfg.collective != Collective::ReduceScatter || c == owner[q];
                    (self.l.w(q, c), if keep { self.l.len(c) * self.l.size } else { 0 })
                })
                .collect(),
            Shape::User(g) => g.outputs(q),
        }
    }
}
