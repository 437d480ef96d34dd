//! Ranks split over several memories, the way processes hold them (MODEL, docs/MODEL.md C14):
//! the ranks are cut into `groups` blocks, each block's buffers live only in its own memory, and
//! whatever a step reads from another block's memory reaches it as a message — the bytes, sent
//! by the group of the step that wrote them (or, for inputs, of their owner) right after that
//! step, and mapped at their own addresses before the reading step runs. An output written into
//! another block's rank (ring-2R2W's and KangaRing's forwarding) goes to its owner the same way.
//! The engine still executes only ring bytes; the messages only move memory. Within a block the
//! ranks wait for each other's semaphores as in one memory; across blocks a step waits for its
//! messages instead, which the schedule's dependencies imply (every read waits for its writer:
//! `schedule` tests). Here the blocks share one process and the messages travel over mailboxes;
//! a transport between processes replaces the mailboxes, not the plan.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::Instant;

use cce_engine::memory::{MemError, SharedMemory};
use cce_engine::{Memory, RunReport};
use cce_format::ring::ring_bytes;

use super::budget::Checked;
use super::buffers::Layout;
use super::config::{CollectiveError, Config, Outcome, RankCounts};
use super::lifetimes::{Lifetimes, lifetimes};
use super::lowered::Lowered;
use super::prepared::{Prepared, prepare};
use super::rank::{RankEnd, RankShared};
use super::schedule::{Step, Work};
use super::transport::{InProcess, Stop, Transport, wait_until};
use super::{tasks, threads};

/// What a partitioned run adds to its outcome.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Partitioned {
    /// Blocks of ranks (processes).
    pub groups: usize,
    /// Bytes sent from one block's memory to another's.
    pub bytes_between: u64,
    /// The most bytes each block's memory held at once.
    pub peak_bytes: Vec<u64>,
}

/// Address ranges `(address, bytes)`.
type Ranges = Vec<(u64, u64)>;
/// A message as it arrives: each range's address and bytes.
pub(super) type Payload = Vec<(u64, Vec<u8>)>;

/// Who a message is for: the step that reads it, or the owner's block once every step is done.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Key {
    Step(usize, usize),
    Final,
}

/// One message: the block it goes to, what for, and the ranges `(address, bytes)` it carries.
#[derive(Clone, Debug, PartialEq)]
struct Message {
    to: usize,
    key: Key,
    ranges: Vec<(u64, u64)>,
}

/// Every message of a run, from the schedule alone.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Plan {
    /// Messages sent after `(rank, Some(step))`, or before anything runs by `(owner, None)`.
    sends: BTreeMap<(usize, Option<usize>), Vec<Message>>,
    /// How many messages each block waits for, per key.
    expect: BTreeMap<(usize, Key), usize>,
    /// The ranks whose messages each block waits for, per key (in rank order, once each).
    senders: BTreeMap<(usize, Key), Vec<usize>>,
    /// Per rank: regions of another block's ranks that it writes, mapped in its own memory.
    remote_writes: Vec<Vec<(u64, u64)>>,
    /// Per (rank, step): the addresses of the messages it reads.
    reads_of: BTreeMap<(usize, usize), Vec<u64>>,
}

/// The ranges a work item reads and writes, `(address, bytes)`; empty ones left out.
fn ranges(w: &Work, size: u64) -> (Ranges, Ranges) {
    let keep =
        |v: Vec<u64>, bytes: u64| if bytes == 0 { Vec::new() } else { v.into_iter().map(|a| (a, bytes)).collect() };
    (keep(w.reads(), w.read_len(size)), keep(w.writes(), w.write_len(size)))
}

/// Every message of a run of `low`'s steps `steps` over the blocks `group`.
pub(super) fn plan(low: &Lowered, steps: &[Vec<Step>], group: &[usize]) -> Plan {
    // Every write of each range, in step order: a range may be written more than once (a
    // user's schedule rewrites its buffers, X13); a read gets the last write of a lower step,
    // which is the one it reads in one memory (every read waits for its writer, and steps
    // only wait for lower ones).
    let mut writes: BTreeMap<u64, Vec<(usize, usize)>> = BTreeMap::new();
    for (q, st) in steps.iter().enumerate() {
        for (s, step) in st.iter().enumerate() {
            for w in &step.work {
                for (a, _) in ranges(w, low.l.size).1 {
                    writes.entry(a).or_default().push((s, q));
                }
            }
        }
    }
    for v in writes.values_mut() {
        v.sort_unstable();
    }
    let writer = |a: u64, s: usize| -> Option<(usize, usize)> {
        let v = writes.get(&a)?;
        let i = v.partition_point(|&(t, _)| t < s);
        i.checked_sub(1).map(|i| (v[i].1, v[i].0))
    };
    let mut by: BTreeMap<(usize, Option<usize>, usize, Key), Ranges> = BTreeMap::new();
    let mut remote_writes = vec![Vec::new(); steps.len()];
    for (q, st) in steps.iter().enumerate() {
        for (s, step) in st.iter().enumerate() {
            for w in &step.work {
                let (reads, writes) = ranges(w, low.l.size);
                for (a, b) in reads {
                    // A piece of a scratch buffer (a hierarchy's `T`) was written by the buffer's writer.
                    let whole = low.scratch_of(a).unwrap_or(a);
                    let (from, after) = writer(whole, s).map_or((Layout::rank_of(a), None), |(w, ws)| (w, Some(ws)));
                    if group[from] != group[q] {
                        by.entry((from, after, group[q], Key::Step(q, s))).or_default().push((a, b));
                    }
                }
                for (a, b) in writes {
                    let owner = Layout::rank_of(a);
                    // An output of another block's rank: mapped here for the step to write, and
                    // sent to its owner, who must hold the bytes at the end. (Scratch buffers
                    // are mapped by their writer's step, `block_lifetimes`.)
                    if group[owner] != group[q] && !low.is_scratch(a) {
                        remote_writes[q].push((a, b));
                        by.entry((q, Some(s), group[owner], Key::Final)).or_default().push((a, b));
                    }
                }
            }
        }
    }
    let mut p = Plan { remote_writes, ..Plan::default() };
    for ((from, after, to, key), ranges) in by {
        *p.expect.entry((to, key)).or_default() += 1;
        let from_ranks = p.senders.entry((to, key)).or_default();
        if !from_ranks.contains(&from) {
            from_ranks.push(from);
            from_ranks.sort_unstable();
        }
        if let Key::Step(q, s) = key {
            p.reads_of.entry((q, s)).or_default().extend(ranges.iter().map(|r| r.0));
        }
        p.sends.entry((from, after)).or_default().push(Message { to, key, ranges });
    }
    p
}

/// A block's incoming messages.
#[derive(Default)]
pub(super) struct Mailbox {
    got: Mutex<BTreeMap<Key, Vec<Payload>>>,
    bell: Condvar,
}

impl Mailbox {
    /// Files a message and wakes the block's waiters.
    pub(super) fn put(&self, key: Key, payload: Payload) {
        self.got.lock().unwrap_or_else(PoisonError::into_inner).entry(key).or_default().push(payload);
        self.bell.notify_all();
    }
}

/// How a message reaches another block: a mailbox of this process, or another process.
pub(super) trait Wire: Sync {
    /// Delivers `payload` for `key` to block `to`.
    fn deliver(&self, boxes: &[Mailbox], to: usize, key: Key, payload: Payload) -> Result<(), String>;
    /// Tells the blocks of other processes that `rank` failed at `step`.
    fn failed(&self, _rank: usize, _step: usize, _reason: &str) {}
    /// `rank` waits before `step` for messages from the ranks `from` (empty: it runs the step).
    fn waiting(&self, _rank: usize, _step: usize, _from: &[usize]) {}
}

/// Every block in this process: a message is filed in its mailbox.
pub(super) struct Local;

impl Wire for Local {
    fn deliver(&self, boxes: &[Mailbox], to: usize, key: Key, payload: Payload) -> Result<(), String> {
        boxes[to].put(key, payload);
        Ok(())
    }
}

/// The partitioned transport: one [`InProcess`] for the semaphores within a block and the
/// first failure, the blocks' memories (empty for blocks of other processes), their
/// mailboxes, the plan and the wire to other processes.
struct Blocks<'a, 'm> {
    net: &'a InProcess,
    group: &'a [usize],
    mems: &'a [SharedMemory<'m>],
    boxes: &'a [Mailbox],
    wire: &'a dyn Wire,
    plan: &'a Plan,
    /// Per block: mapped message regions and how many steps still read each.
    shadows: Vec<Mutex<BTreeMap<u64, usize>>>,
    sent: std::sync::atomic::AtomicU64,
}

impl Blocks<'_, '_> {
    /// Sends the messages of `(rank, after)`, reading their ranges from the sender's memory.
    fn send(&self, rank: usize, after: Option<usize>) -> Result<(), String> {
        let Some(msgs) = self.plan.sends.get(&(rank, after)) else { return Ok(()) };
        let mem = &self.mems[self.group[rank]];
        for m in msgs {
            let mut data = Vec::with_capacity(m.ranges.len());
            for &(a, b) in &m.ranges {
                let mut buf = vec![0u8; b as usize];
                mem.read(a, &mut buf).map_err(|e| e.to_string())?;
                self.sent.fetch_add(b, std::sync::atomic::Ordering::Relaxed);
                data.push((a, buf));
            }
            self.wire.deliver(self.boxes, m.to, m.key, data)?;
        }
        Ok(())
    }

    /// Waits for every message of `key` to block `g` and takes them.
    fn take(&self, g: usize, key: Key, deadline: Instant) -> Result<Vec<Payload>, Stop> {
        let want = self.plan.expect.get(&(g, key)).copied().unwrap_or(0);
        let mb = &self.boxes[g];
        wait_until(&mb.got, &mb.bell, deadline, &|| self.net.aborted(), |got| {
            (got.get(&key).map_or(0, Vec::len) >= want).then(|| got.remove(&key).unwrap_or_default())
        })
    }

    fn wake_all(&self) {
        for mb in self.boxes {
            mb.bell.notify_all();
        }
    }
}

impl Transport for Blocks<'_, '_> {
    fn reached(&self, peer: usize, packets: i64) -> bool {
        self.net.reached(peer, packets)
    }
    fn post(&self, rank: usize, semaphore: i64) {
        self.net.post(rank, semaphore);
    }
    fn fail(&self, rank: usize, step: usize, reason: String) {
        self.wire.failed(rank, step, &reason);
        self.net.fail(rank, step, reason);
        self.wake_all();
    }
    fn aborted(&self) -> bool {
        self.net.aborted()
    }
    fn failure(&self) -> Option<(usize, usize, String)> {
        self.net.failure()
    }
    fn waits_for(&self, rank: usize, peer: usize) -> bool {
        self.group[rank] == self.group[peer]
    }
    fn arrived(&self, rank: usize, step: usize) -> bool {
        let g = self.group[rank];
        let key = Key::Step(rank, step);
        let want = self.plan.expect.get(&(g, key)).copied().unwrap_or(0);
        want == 0
            || self.boxes[g].got.lock().unwrap_or_else(PoisonError::into_inner).get(&key).map_or(0, Vec::len) >= want
    }
    fn waiting(&self, rank: usize, step: usize, blocked: bool) {
        let from = match blocked {
            true => self.plan.senders.get(&(self.group[rank], Key::Step(rank, step))).map_or(&[][..], Vec::as_slice),
            false => &[],
        };
        self.wire.waiting(rank, step, from);
    }
    fn bring_in(&self, rank: usize, step: usize) -> Result<(), String> {
        let g = self.group[rank];
        let msgs = self.boxes[g]
            .got
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&Key::Step(rank, step))
            .unwrap_or_default();
        let mut mem = self.mems[g].clone();
        let mut shadows = self.shadows[g].lock().unwrap_or_else(PoisonError::into_inner);
        for (a, bytes) in msgs.into_iter().flatten() {
            if let Some(n) = shadows.get_mut(&a) {
                // The same range for another step of this block: the bytes are the same.
                *n += 1;
            } else if mem.check(a, bytes.len() as u64).is_ok() {
                // A buffer of this block that another block wrote (a receive buffer).
                mem.write(a, &bytes).map_err(|e| e.to_string())?;
            } else if mem.add_region_from(a, bytes).is_ok() {
                shadows.insert(a, 1);
            }
            // A refused region (over budget) is left out: the step's bounds check faults.
        }
        Ok(())
    }
    fn after_step(&self, rank: usize, step: usize) -> Result<(), String> {
        // Unmap the messages this step read once no other step of the block needs them —
        // before anything is sent, so whatever the sends set off (a later version of a range
        // this block read, X13) finds the range unmapped.
        let g = self.group[rank];
        if let Some(read) = self.plan.reads_of.get(&(rank, step)) {
            let mut shadows = self.shadows[g].lock().unwrap_or_else(PoisonError::into_inner);
            for &a in read {
                if let Some(n) = shadows.get_mut(&a) {
                    *n -= 1;
                    if *n == 0 {
                        shadows.remove(&a);
                        self.mems[g].release_region(a);
                    }
                }
            }
        }
        self.send(rank, Some(step))
    }
}

/// The scratch lifetimes within blocks: a scratch buffer is mapped in its writer's block just
/// before the writing step and unmapped when the readers in that block are done — at once,
/// after its messages are sent, when every reader is in another block (those get their own
/// copy, unmapped after they read it).
pub(super) fn block_lifetimes(low: &Lowered, steps: &[Vec<Step>], group: &[usize]) -> Lifetimes {
    let mut life = lifetimes(low, steps);
    let mut writer = BTreeMap::new();
    for (q, st) in life.allocs.iter().enumerate() {
        for (s, allocs) in st.iter().enumerate() {
            for &(a, _) in allocs {
                writer.insert(a, (q, s));
            }
        }
    }
    let mut releases: Vec<Vec<Vec<u64>>> = steps.iter().map(|st| vec![Vec::new(); st.len()]).collect();
    let mut users = BTreeMap::new();
    for (q, st) in life.releases.iter().enumerate() {
        for (s, bases) in st.iter().enumerate() {
            for &a in bases {
                let Some(&(w, _)) = writer.get(&a) else { continue };
                if group[q] == group[w] {
                    releases[q][s].push(a);
                    *users.entry(a).or_insert(0) += 1;
                }
            }
        }
    }
    for (&a, &(w, ws)) in &writer {
        if let std::collections::btree_map::Entry::Vacant(e) = users.entry(a) {
            releases[w][ws].push(a);
            e.insert(1);
        }
    }
    life.releases = releases;
    life.users = users;
    life
}

/// What [`run_blocks`] returns for the blocks it ran: every rank's output and input (empty for
/// ranks of other processes), the counts, and what crossed between blocks.
pub(super) struct BlocksRun<'m> {
    pub(super) outcome: Outcome,
    pub(super) inputs: Vec<Cow<'m, [u8]>>,
    pub(super) report: Partitioned,
}

/// [`run`](super::run) with the ranks split into `groups` blocks of memory (1..=ranks; rank q
/// in block q · groups / ranks) over owned inputs: the same outputs bit for bit, the inputs
/// handed back, and what crossed between blocks.
pub fn run_partitioned(
    checked: &Checked,
    inputs: Vec<Vec<u8>>,
    groups: usize,
) -> Result<(Outcome, Vec<Vec<u8>>, Partitioned), CollectiveError> {
    let cfg = checked.config();
    if groups == 0 || groups > cfg.ranks {
        return Err(CollectiveError::Config(format!("{groups} blocks for {} ranks: 1..={}", cfg.ranks, cfg.ranks)));
    }
    let bytes = cfg.elems * cfg.dtype.bytes() as u64;
    if inputs.len() != cfg.ranks || inputs.iter().any(|i| i.len() as u64 != bytes) {
        return Err(CollectiveError::Config(format!("need {} inputs of {bytes} bytes each", cfg.ranks)));
    }
    let boxes: Vec<Mailbox> = (0..groups).map(|_| Mailbox::default()).collect();
    let net = InProcess::new(cfg.ranks);
    let inputs = inputs.into_iter().map(|i| Some(Cow::Owned(i))).collect();
    let job = BlocksJob {
        checked,
        groups,
        local: &|_| true,
        inputs,
        hand_back: true,
        wire: &Local,
        boxes: &boxes,
        net: &net,
    };
    let r = run_blocks(job)?;
    Ok((r.outcome, r.inputs.into_iter().map(Cow::into_owned).collect(), r.report))
}

/// Maps a rank's input at `base` as its `IN` region: an owned one moved in, a borrowed one
/// read in place (the engines only read `IN`).
fn map_input<'m>(mem: &SharedMemory<'m>, base: u64, input: Cow<'m, [u8]>) -> Result<(), MemError> {
    match input {
        Cow::Owned(v) => mem.add_region_from(base, v),
        Cow::Borrowed(b) => mem.add_borrowed(base, b),
    }
}

/// The block of rank `q` among `groups` blocks of `ranks` ranks.
pub(super) fn block_of(q: usize, ranks: usize, groups: usize) -> usize {
    q * groups / ranks
}

/// The messages block `g` receives from other blocks in a run of `cfg` over `groups` blocks.
#[cfg(feature = "mpi")]
pub(super) fn incoming(cfg: &super::Config, groups: usize, g: usize) -> usize {
    let low = Lowered::new(cfg);
    let group: Vec<usize> = (0..cfg.ranks).map(|q| block_of(q, cfg.ranks, groups)).collect();
    plan(&low, &low.steps, &group).expect.iter().filter(|((to, _), _)| *to == g).map(|(_, n)| n).sum()
}

/// What [`run_blocks`] runs: the blocks `local` says are this process's (their ranks' inputs
/// given, the others `None`), messages to other processes going over `wire` and coming in
/// through `boxes`; `net` holds the semaphores and the first failure (a receiver of other
/// processes' failures records them there).
pub(super) struct BlocksJob<'a, 'm> {
    /// The run, checked.
    pub(super) checked: &'a Checked,
    /// Blocks of ranks (processes).
    pub(super) groups: usize,
    /// Whether block `g` is this process's.
    pub(super) local: &'a dyn Fn(usize) -> bool,
    /// Each rank's input: `Some` for the ranks of this process's blocks.
    pub(super) inputs: Vec<Option<Cow<'m, [u8]>>>,
    /// With it, the run's `inputs` are the inputs as given; without, an input the run copied is
    /// freed once copied (its entry comes back empty).
    pub(super) hand_back: bool,
    /// How messages reach blocks of other processes.
    pub(super) wire: &'a dyn Wire,
    /// Every block's mailbox.
    pub(super) boxes: &'a [Mailbox],
    /// The semaphores within a block and the first failure.
    pub(super) net: &'a InProcess,
}

/// Runs the blocks of `job` (see [`BlocksJob`]): maps their ranks' memories, sends the inputs
/// other blocks read, runs each rank on a thread, writes the outputs other blocks wrote for
/// them, then gathers each rank's output and hands its input back.
pub(super) fn run_blocks<'m>(job: BlocksJob<'_, 'm>) -> Result<BlocksRun<'m>, CollectiveError> {
    let BlocksJob { checked, groups, local, inputs, hand_back, wire, boxes, net } = job;
    let cfg = checked.config();
    let local_blocks: Vec<bool> = (0..groups).map(local).collect();
    let prepared = prepare(checked, &local_blocks)?;
    let Prepared { low, group, plan, life, .. } = &*prepared;
    let nsteps = low.nsteps();
    let is_here: Vec<bool> = (0..cfg.ranks).map(|q| local(group[q])).collect();
    let mems: Vec<SharedMemory<'m>> =
        (0..groups).map(|_| SharedMemory::new(cfg.budget.saturating_add(1 << 30))).collect();
    let mut kept = map_local_ranks(cfg, &prepared, &mems, &is_here, inputs, hand_back)?;
    let blocks = Blocks {
        net,
        group,
        mems: &mems,
        boxes,
        wire,
        plan,
        shadows: (0..groups).map(|_| Mutex::new(BTreeMap::new())).collect(),
        sent: std::sync::atomic::AtomicU64::new(0),
    };
    // Inputs other blocks read, sent before anything runs.
    for q in (0..cfg.ranks).filter(|&q| is_here[q]) {
        blocks.send(q, None).map_err(|reason| CollectiveError::RankFailed { rank: q, step: 0, reason })?;
    }
    let users_left: BTreeMap<u64, std::sync::atomic::AtomicUsize> =
        life.users.iter().map(|(&a, &n)| (a, std::sync::atomic::AtomicUsize::new(n))).collect();
    let (results, seconds) = run_local_ranks(cfg, &prepared, &blocks, &is_here, &users_left)?;
    if let Some((rank, step, reason)) = blocks.failure() {
        return Err(CollectiveError::RankFailed { rank, step, reason });
    }
    write_finals(&blocks, groups, local, nsteps, cfg.timeout)?;
    let mut results = results.into_iter();
    let (reports, step_walls): (Vec<RunReport>, Vec<Vec<(f64, f64)>>) = (0..cfg.ranks)
        .map(|q| if is_here[q] { results.next().and_then(Result::ok).unwrap_or_default() } else { Default::default() })
        .unzip();
    let outputs = gather_outputs(cfg, low, group, &mems, &is_here)?;
    let inputs = hand_back_inputs(group, &mems, &is_here, &mut kept);
    let (links, model_seconds) = (prepared.links.clone(), prepared.model_seconds);
    let peak_bytes: Vec<u64> = mems.iter().map(SharedMemory::peak).collect();
    let outcome = Outcome {
        outputs,
        ranks: reports
            .iter()
            .map(|r| RankCounts {
                packets: r.packets,
                descriptors: r.descriptors,
                bytes_read: r.bytes_read,
                bytes_written: r.bytes_written,
            })
            .collect(),
        links,
        steps: nsteps,
        seconds,
        model_seconds,
        model_peak_bytes: peak_bytes.iter().copied().max().unwrap_or(0),
        step_walls,
    };
    let report =
        Partitioned { groups, bytes_between: blocks.sent.load(std::sync::atomic::Ordering::Relaxed), peak_bytes };
    Ok(BlocksRun { outcome, inputs, report })
}

/// Maps what this process's ranks (`is_here`) hold into their blocks' memories: each input,
/// buffer and ring, the preloads, the regions of other blocks' ranks they write, and the first
/// step's scratch made resident. Returns, per rank, the input kept to be handed back.
fn map_local_ranks<'m>(
    cfg: &Config,
    prepared: &Prepared,
    mems: &[SharedMemory<'m>],
    is_here: &[bool],
    inputs: Vec<Option<Cow<'m, [u8]>>>,
    hand_back: bool,
) -> Result<Vec<Option<Cow<'m, [u8]>>>, CollectiveError> {
    let Prepared { low, group, plan, programs, life, .. } = prepared;
    // The inputs a run works on a copy of, kept as they are to be handed back (when the caller
    // wants them: an MPI process measures against inputs it reads again, so it frees each one
    // as soon as its pieces are mapped).
    let mut kept: Vec<Option<Cow<'m, [u8]>>> = vec![None; cfg.ranks];
    for (q, input) in inputs.into_iter().enumerate() {
        let Some(input) = input.filter(|_| is_here[q]) else { continue };
        let mem = &mems[group[q]];
        kept[q] = map_rank_input(cfg, low, mem, q, input, hand_back)?;
        map_rank_buffers(cfg, low, mem, q, programs[q].rings.ring_size)?;
    }
    for (q, writes) in plan.remote_writes.iter().enumerate().filter(|(q, _)| is_here[*q]) {
        for &(a, b) in writes {
            mems[group[q]].add_region(a, b)?;
        }
    }
    // The first step's scratch (which every rank maps at once as it starts) made resident now,
    // so the ranks reuse warm buffers instead of page-faulting inside the run; later steps
    // reuse what earlier ones release.
    for q in (0..cfg.ranks).filter(|&q| is_here[q]) {
        for &(_, b) in life.allocs[q].iter().take(1).flatten() {
            mems[group[q]].keep_spare(b);
        }
    }
    Ok(kept)
}

/// Maps rank `q`'s input into `mem`: whole as its `IN` region, or (when the run works on a copy)
/// as the pieces the copy is made of, and whole again where a preload reads it. Returns the
/// input to hand back, if it is kept.
fn map_rank_input<'m>(
    cfg: &Config,
    low: &Lowered,
    mem: &SharedMemory<'m>,
    q: usize,
    input: Cow<'m, [u8]>,
    hand_back: bool,
) -> Result<Option<Cow<'m, [u8]>>, CollectiveError> {
    let mut kept = None;
    match low.input_copy(q) {
        None => {
            if let Cow::Borrowed(b) = input {
                kept = Some(Cow::Borrowed(b));
            }
            map_input(mem, Layout::base(q), input)?;
        }
        Some(pieces) => {
            for (a, from, len) in pieces {
                let piece = input.get(from as usize..(from + len) as usize).unwrap_or_default();
                mem.add_region_from(a, piece.to_vec())?;
            }
            // The preload reads the input where a moved one would be.
            let preload = !low.preload(cfg, q).is_empty();
            if hand_back {
                if preload {
                    map_input(mem, Layout::base(q), Cow::Owned(input.to_vec()))?;
                }
                kept = Some(input);
            } else if preload {
                map_input(mem, Layout::base(q), input)?;
            }
        }
    }
    Ok(kept)
}

/// Maps rank `q`'s buffers and its two rings (of `ring_size` slots) into `mem`, then copies its
/// preloads.
fn map_rank_buffers(
    cfg: &Config,
    low: &Lowered,
    mem: &SharedMemory<'_>,
    q: usize,
    ring_size: u32,
) -> Result<(), CollectiveError> {
    for (a, len) in low.buffers(cfg, q) {
        mem.add_region(a, len)?;
    }
    let (tx_ring, rx_ring) = Layout::rings(q, ring_size);
    for ring in [tx_ring, rx_ring] {
        mem.add_region(ring, ring_bytes(ring_size as u64))?;
    }
    for (from, to, len) in low.preload(cfg, q) {
        let mut own = vec![0u8; len as usize];
        mem.read(from, &mut own)?;
        let mut m = mem.clone();
        m.write(to, &own)?;
    }
    Ok(())
}

/// Runs this process's ranks (`is_here`) as tasks on a pool of workers ([`tasks`]). Returns
/// their ends in rank order and the run's seconds.
fn run_local_ranks(
    cfg: &Config,
    prepared: &Prepared,
    blocks: &Blocks<'_, '_>,
    is_here: &[bool],
    users_left: &BTreeMap<u64, std::sync::atomic::AtomicUsize>,
) -> Result<(Vec<RankEnd>, f64), CollectiveError> {
    let Prepared { low, group, programs, life, .. } = prepared;
    let mine: Vec<usize> = (0..cfg.ranks).filter(|&q| is_here[q]).collect();
    let shared = RankShared { cfg, programs, steps: &low.steps, life, users_left, net: blocks, t0: Instant::now() };
    let results = tasks::run_ranks(&shared, &mine, |q| blocks.mems[group[q]].clone())
        .map_err(|reason| CollectiveError::RankFailed { rank: 0, step: 0, reason })?;
    Ok((results, shared.t0.elapsed().as_secs_f64()))
}

/// Writes into each of this process's blocks (`local`) the outputs other blocks wrote for its
/// ranks, waiting for them until `timeout` from now; `nsteps` is the step a missing one is
/// reported at.
fn write_finals(
    blocks: &Blocks<'_, '_>,
    groups: usize,
    local: &dyn Fn(usize) -> bool,
    nsteps: usize,
    timeout: std::time::Duration,
) -> Result<(), CollectiveError> {
    let deadline = Instant::now() + timeout;
    for g in (0..groups).filter(|&g| local(g)) {
        let finals = blocks.take(g, Key::Final, deadline).map_err(|_| CollectiveError::RankFailed {
            rank: blocks.group.iter().position(|&x| x == g).unwrap_or(0),
            step: nsteps,
            reason: "an output written in another block never arrived".into(),
        })?;
        let mut mem = blocks.mems[g].clone();
        for (a, data) in finals.into_iter().flatten() {
            mem.write(a, &data)?;
        }
    }
    Ok(())
}

/// Each of this process's ranks' output gathered from its buffers, each buffer unmapped once
/// copied out (the outputs take the buffers' place), on this host's threads: the copy and the
/// new pages' faults cost more than the run. An output is allocated as a huge-page buffer.
/// Other processes' ranks get an empty one.
fn gather_outputs(
    cfg: &Config,
    low: &Lowered,
    group: &[usize],
    mems: &[SharedMemory<'_>],
    is_here: &[bool],
) -> Result<Vec<Vec<u8>>, CollectiveError> {
    let bytes = cfg.elems * cfg.dtype.bytes() as u64;
    let gather = |q: usize| -> Vec<u8> {
        if !is_here[q] {
            return Vec::new();
        }
        let mem = &mems[group[q]];
        let outputs = low.outputs(cfg, q);
        // Outputs that fill one region back to back, kept whole: that buffer is the output.
        let tiled = outputs.windows(2).all(|p| p[0].0 + p[0].1 == p[1].0)
            && outputs.iter().all(|o| o.1 > 0)
            && outputs.iter().map(|o| o.1).sum::<u64>() == bytes;
        if let Some(&(first, _)) = outputs.first().filter(|_| tiled) {
            if mem.region_len(first) == Some(bytes) {
                return mem.take_region(first).unwrap_or_default();
            }
        }
        // Room, not zeros: its pages are mapped as the copies fill them, and nothing is
        // written twice (a reused heap block would be zeroed first).
        let mut out = cce_numerics::buffer::with_capacity(bytes as usize);
        for (a, keep) in outputs {
            let chunk = mem.take_region(a).unwrap_or_default();
            out.extend_from_slice(&chunk[..(keep as usize).min(chunk.len())]);
        }
        out
    };
    let mut outputs: Vec<Vec<u8>> = vec![Vec::new(); cfg.ranks];
    let per = cfg.ranks.div_ceil(std::thread::available_parallelism().map_or(1, usize::from)).max(1);
    let parts = outputs.len().div_ceil(per);
    threads::with_pool(parts, |pool| {
        pool.scope(|s| {
            for (i, part) in outputs.chunks_mut(per).enumerate() {
                let gather = &gather;
                s.spawn(move |_| {
                    for (j, out) in part.iter_mut().enumerate() {
                        *out = gather(i * per + j);
                    }
                });
            }
        });
    })
    .map_err(|e| CollectiveError::RankFailed {
        rank: 0,
        step: low.nsteps(),
        reason: format!("no threads to gather: {e}"),
    })?;
    Ok(outputs)
}

/// Each rank's input handed back: the one `kept` as given (its mapping released), else the
/// `IN` region taken out of the memory; empty for other processes' ranks.
fn hand_back_inputs<'m>(
    group: &[usize],
    mems: &[SharedMemory<'m>],
    is_here: &[bool],
    kept: &mut [Option<Cow<'m, [u8]>>],
) -> Vec<Cow<'m, [u8]>> {
    (0..kept.len())
        .map(|q| match kept[q].take() {
            _ if !is_here[q] => Cow::Owned(Vec::new()),
            Some(input) => {
                mems[group[q]].release_region(Layout::base(q));
                input
            }
            None => Cow::Owned(mems[group[q]].take_region(Layout::base(q)).unwrap_or_default()),
        })
        .collect()
}
