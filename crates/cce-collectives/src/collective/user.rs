//! A user's MSCCL XML schedule on the model's memory (docs/MODEL.md X8–X12): the areas of
//! every rank at their addresses, one region per chunk, and the plan's work items as the
//! schedule's [`Work`] — one-chunk copies and reduces, read where the plan says, written by
//! the running rank.

use cce_msccl::{Area, Coll, Loc, Op, Schedule};

use super::buffers::{Layout, P_OFF, RECV_OFF, W_OFF};
use super::config::{Config, RedOp};
use super::schedule::{Step, Work};

/// Where a user's schedule keeps every rank's areas.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Geometry {
    /// Ranks.
    pub(super) r: usize,
    /// Bytes per chunk.
    pub(super) chunk: u64,
    /// The collective.
    pub(super) coll: Coll,
    /// In place (X4).
    pub(super) in_place: bool,
    /// `nchunksperloop`.
    pub(super) nchunks: u64,
    /// One rank's share in chunks.
    pub(super) share: u64,
    /// Per rank: `s_chunks`.
    pub(super) scratch: Vec<u64>,
    /// Per rank: the staging chunks its slots span.
    pub(super) staging: Vec<u64>,
    /// Whether the run works on a copy of the inputs (the schedule writes `I`, or its output
    /// is there).
    pub(super) copy_input: bool,
}

impl Geometry {
    pub(super) fn new(cfg: &Config, s: &Schedule) -> Geometry {
        let p = &s.program;
        let chunk = cfg.elems / p.nchunks.max(1) * cfg.dtype.bytes() as u64;
        let output_in_input = p.in_place && p.coll != Coll::AllGather;
        Geometry {
            r: p.ranks,
            chunk,
            coll: p.coll,
            in_place: p.in_place,
            nchunks: p.nchunks,
            share: p.share(),
            scratch: p.scratch_chunks.clone(),
            staging: s.plan.staging_chunks.clone(),
            copy_input: s.plan.writes_input || output_in_input,
        }
    }

    /// Chunks of `area` (the aliased ones are the other's).
    pub(super) fn chunks(&self, q: usize, area: Area) -> u64 {
        match (area, self.coll) {
            (Area::Input, Coll::AllGather) => self.share,
            (Area::Input, _) => self.nchunks,
            (Area::Output, Coll::ReduceScatter) => self.share,
            (Area::Output, _) => self.nchunks,
            (Area::Scratch, _) => self.scratch.get(q).copied().unwrap_or(0),
            (Area::Staging, _) => self.staging.get(q).copied().unwrap_or(0),
        }
    }

    /// The address of chunk 0 of rank `q`'s `area` (X10).
    pub(super) fn base(&self, q: usize, area: Area) -> u64 {
        let b = Layout::base(q);
        let own = q as u64 * self.share * self.chunk;
        match (area, self.coll, self.in_place) {
            (Area::Input, Coll::AllGather, false) => b + own,
            (Area::Input, Coll::AllGather, true) => b + W_OFF + own,
            (Area::Input, _, _) => b,
            (Area::Output, Coll::AllReduce, true) => b,
            (Area::Output, Coll::ReduceScatter, true) => b + own,
            (Area::Output, _, _) => b + W_OFF,
            (Area::Scratch, _, _) => b + P_OFF,
            (Area::Staging, _, _) => b + RECV_OFF,
        }
    }

    /// A chunk's address.
    pub(super) fn addr(&self, l: Loc) -> u64 {
        self.base(l.rank, l.area) + l.chunk * self.chunk
    }

    /// Whether every area fits its slot of the layout (so every address is representable).
    pub(super) fn fits(&self, elems_bytes: u64) -> bool {
        let room = 1u64 << 42;
        (0..self.r).all(|q| {
            [Area::Output, Area::Scratch, Area::Staging]
                .iter()
                .all(|&a| self.chunks(q, a).saturating_mul(self.chunk) <= room)
        }) && elems_bytes <= room
    }

    /// Whether `addr` starts a staging chunk: written once, by one step, read by the steps
    /// that receive it (a scratch buffer, C12).
    pub(super) fn is_scratch(&self, addr: u64) -> bool {
        let q = Layout::rank_of(addr);
        let base = self.base(q, Area::Staging);
        addr.checked_sub(base).is_some_and(|off| {
            self.chunk > 0 && off % self.chunk == 0 && off / self.chunk < self.chunks(q, Area::Staging)
        })
    }

    /// The regions rank `q` maps before the run besides its input (moved there as it is) and
    /// rings: one per chunk of `O` (unless in place aliases it to `I`), of `S`, and of the
    /// input's copy when the run works on one.
    pub(super) fn buffers(&self, q: usize) -> Vec<(u64, u64)> {
        let mut v = Vec::new();
        let mut area = |a: Area| {
            let base = self.base(q, a);
            v.extend((0..self.chunks(q, a)).map(|k| (base + k * self.chunk, self.chunk)));
        };
        if !(self.in_place && self.coll != Coll::AllGather) {
            area(Area::Output);
        }
        area(Area::Scratch);
        v
    }

    /// Where the input's copy goes when the run works on one: (address, offset in the input,
    /// bytes) per chunk of `I`.
    pub(super) fn input_copy(&self, q: usize) -> Vec<(u64, u64, u64)> {
        if !self.copy_input {
            return Vec::new();
        }
        let base = self.base(q, Area::Input);
        let from = base - Layout::base(q);
        (0..self.chunks(q, Area::Input)).map(|k| (base + k * self.chunk, from + k * self.chunk, self.chunk)).collect()
    }

    /// Copies inside rank `q`'s memory before the run, (from, to, bytes): the in-place
    /// all-gather's own share into its output (X4).
    pub(super) fn preload(&self, q: usize) -> Vec<(u64, u64, u64)> {
        if !(self.in_place && self.coll == Coll::AllGather) {
            return Vec::new();
        }
        let own = q as u64 * self.share * self.chunk;
        (0..self.share)
            .map(|k| {
                (Layout::base(q) + own + k * self.chunk, self.base(q, Area::Output) + own + k * self.chunk, self.chunk)
            })
            .collect()
    }

    /// The output of rank `q`: the regions to take in order, each with the bytes it adds.
    pub(super) fn outputs(&self, q: usize) -> Vec<(u64, u64)> {
        match (self.coll, self.in_place) {
            (Coll::ReduceScatter, true) => {
                let mine = q as u64 * self.share..(q as u64 + 1) * self.share;
                let base = self.base(q, Area::Input);
                (0..self.nchunks)
                    .map(|k| (base + k * self.chunk, if mine.contains(&k) { self.chunk } else { 0 }))
                    .collect()
            }
            (Coll::AllReduce, true) => {
                let base = self.base(q, Area::Input);
                (0..self.nchunks).map(|k| (base + k * self.chunk, self.chunk)).collect()
            }
            _ => {
                let base = self.base(q, Area::Output);
                (0..self.chunks(q, Area::Output)).map(|k| (base + k * self.chunk, self.chunk)).collect()
            }
        }
    }

    /// The model bytes of every rank's buffers besides the inputs and the staging chunks.
    pub(super) fn buffer_bytes(&self) -> u64 {
        (0..self.r)
            .map(|q| {
                let bufs: u64 = self.buffers(q).iter().map(|b| b.1).sum();
                bufs + self.input_copy(q).iter().map(|c| c.2).sum::<u64>()
            })
            .sum()
    }
}

/// The plan's steps as the schedule's steps: every work item a one-chunk [`Work`] between
/// addresses (the operator is the run's: add, min or max).
pub(super) fn steps(g: &Geometry, s: &Schedule, cfg: &Config) -> Vec<Vec<Step>> {
    let elems = g.chunk / cfg.dtype.bytes().max(1) as u64;
    debug_assert_ne!(cfg.op, RedOp::Avg, "refused by the shape check");
    s.plan
        .steps
        .iter()
        .map(|rank| {
            rank.iter()
                .map(|st| Step {
                    work: st
                        .works
                        .iter()
                        .filter_map(|w| match w.op {
                            // The plan gives a copy exactly one source.
                            Op::Copy => w.srcs.first().map(|&src| Work::Copy {
                                src: g.addr(src),
                                dst: g.addr(w.dst),
                                bytes: g.chunk,
                            }),
                            Op::Reduce => Some(Work::Reduce {
                                srcs: w.srcs.iter().map(|&l| g.addr(l)).collect(),
                                dsts: vec![g.addr(w.dst)],
                                elems,
                                scales: Vec::new(),
                            }),
                        })
                        .collect(),
                    deps: st.deps.clone(),
                })
                .collect()
        })
        .collect()
}
