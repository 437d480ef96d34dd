//! The lowering plan (docs/MODEL.md X8, X10, X11): where every message is read from, which
//! sends take a snapshot, each rank's staging slots, and every rank's steps (one per level)
//! with their work items — one chunk each, in terms of ranks, areas and chunk indices. The
//! collectives turn areas into addresses and work items into packets.

use crate::model::Kind;
use crate::order::Order;
use crate::program::{Area, Program};
use crate::symbols::Accesses;

/// One chunk of one rank's area.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Loc {
    /// The rank whose memory holds it.
    pub rank: usize,
    /// The area.
    pub area: Area,
    /// The chunk.
    pub chunk: u64,
}

/// What a work item does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Copy its one source.
    Copy,
    /// Reduce its sources, in order, with the collective's operator.
    Reduce,
}

/// One chunk's work, run by the rank of the step that holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Work {
    /// Copy or reduce.
    pub op: Op,
    /// Sources in order (another rank's chunk is read over the link).
    pub srcs: Vec<Loc>,
    /// Destination (always the running rank's).
    pub dst: Loc,
    /// The transmission it comes from.
    pub origin: usize,
}

/// One step of a rank: the work of its transmissions of one level.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Step {
    /// Work items in order (thread blocks by id, then steps).
    pub works: Vec<Work>,
    /// The (rank, step) pairs whose data it reads.
    pub deps: Vec<(usize, usize)>,
}

/// How a message is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// Where the sender keeps it (its `src`, or the `dst` of a forwarding receive).
    InPlace,
    /// From the sender's staging slot: an `rrs` result, kept nowhere else.
    Staged,
    /// From a copy into the sender's staging slot made at the send (its chunks are rewritten
    /// before the receiver reads them, unordered).
    Snapshot,
}

/// The plan of a checked program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// Per rank, one step per level (every rank has as many).
    pub steps: Vec<Vec<Step>>,
    /// Per message, how it is read.
    pub placement: Vec<Placement>,
    /// Per transmission, its level.
    pub levels: Vec<usize>,
    /// Per rank, the staging chunks its slots span.
    pub staging_chunks: Vec<u64>,
    /// Whether some transmission writes an input buffer `I` (then the run works on a copy).
    pub writes_input: bool,
}

/// The staging slot of each sending transmission: the chunks of the rank's earlier sending
/// transmissions (thread blocks by id, then steps), X10.
fn slots(p: &Program) -> (Vec<u64>, Vec<u64>) {
    let mut slot = vec![0u64; p.txs.len()];
    let mut used = vec![0u64; p.ranks];
    for (i, t) in p.txs.iter().enumerate() {
        if t.kind.sends() {
            slot[i] = used[t.rank];
            used[t.rank] += t.cnt;
        }
    }
    (slot, used)
}

/// Where a sending transmission keeps what it sends: its `src` (`s`), the `dst` it wrote
/// (`rcs`, `rrcs`), or nowhere (`rrs`: the result is staged).
fn kept(t: &crate::program::Tx) -> Option<crate::program::Chunks> {
    match t.kind {
        Kind::Send => t.srcs.first().copied(),
        Kind::RecvReduceSend => None,
        _ => t.dst,
    }
}

pub(crate) fn plan(p: &Program, o: &Order, acc: &Accesses) -> Plan {
    let (slot, staging_chunks) = slots(p);
    // Where each message's value lies at the sender, and whether it must be snapshotted.
    let mut placement = Vec::with_capacity(p.messages.len());
    for m in &p.messages {
        let s = &p.txs[m.sender];
        placement.push(match kept(s) {
            None => Placement::Staged,
            Some(c) => {
                let rewritten_too_early = (0..s.cnt).any(|j| {
                    acc.writers(s.rank, c.area, c.off + j)
                        .any(|w| w != m.sender && o.before(m.sender, w) && !o.before(m.receiver, w))
                });
                if rewritten_too_early { Placement::Snapshot } else { Placement::InPlace }
            }
        });
    }
    let levels = o.level.clone();
    let depth = levels.iter().copied().max().map_or(0, |l| l + 1);
    let mut steps: Vec<Vec<Step>> = vec![vec![Step::default(); depth]; p.ranks];
    let staging = |rank: usize, tx: usize, j: u64| Loc { rank, area: Area::Staging, chunk: slot[tx] + j };
    let at = |rank: usize, c: crate::program::Chunks, j: u64| Loc { rank, area: c.area, chunk: c.off + j };
    for (i, t) in p.txs.iter().enumerate() {
        let q = t.rank;
        let step = &mut steps[q][levels[i]];
        // The message it receives, chunk j: where to read it.
        let message = |j: u64| -> Option<Loc> {
            let m = t.recv?;
            let msg = &p.messages[m];
            Some(match (placement[m], kept(&p.txs[msg.sender])) {
                (Placement::InPlace, Some(c)) => at(msg.from, c, j),
                _ => staging(msg.from, msg.sender, j),
            })
        };
        if let Some(m) = t.recv {
            let msg = &p.messages[m];
            let dep = (msg.from, levels[msg.sender]);
            if !step.deps.contains(&dep) {
                step.deps.push(dep);
            }
        }
        for j in 0..t.cnt {
            let work = |op: Op, srcs: Vec<Loc>, dst: Loc| Work { op, srcs, dst, origin: i };
            // Every source a kind reads is there (the transmission was built so).
            let src = |k: usize| t.srcs.get(k).map(|&c| at(q, c, j));
            let dst = t.dst.map(|d| at(q, d, j));
            match (t.kind, message(j), dst) {
                (Kind::Recv | Kind::RecvCopySend, Some(msg), Some(d)) => step.works.push(work(Op::Copy, vec![msg], d)),
                (Kind::RecvReduceCopy | Kind::RecvReduceCopySend, Some(msg), Some(d)) => {
                    step.works.push(work(Op::Reduce, [Some(msg), src(0)].into_iter().flatten().collect(), d));
                }
                (Kind::RecvReduceSend, Some(msg), _) => {
                    let srcs = [Some(msg), src(0)].into_iter().flatten().collect();
                    step.works.push(work(Op::Reduce, srcs, staging(q, i, j)));
                }
                (Kind::Copy, _, Some(d)) => step.works.push(work(Op::Copy, src(0).into_iter().collect(), d)),
                (Kind::Reduce, _, Some(d)) => {
                    let mut srcs = vec![d];
                    srcs.extend((0..t.srcs.len()).filter_map(src));
                    step.works.push(work(Op::Reduce, srcs, d));
                }
                _ => {}
            }
            // A snapshot of what it sends, after it wrote it.
            if let Some(m) = t.send
                && placement[m] == Placement::Snapshot
            {
                if let Some(c) = kept(t) {
                    step.works.push(work(Op::Copy, vec![at(q, c, j)], staging(q, i, j)));
                }
            }
        }
    }
    for st in steps.iter_mut().flatten() {
        st.deps.sort_unstable();
    }
    Plan { steps, placement, levels, staging_chunks, writes_input: acc.writes_area(Area::Input) }
}
