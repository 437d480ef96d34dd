//! The model's timeline: what the rings of every rank really contain — each work item planned
//! by `cce-host` into its packets, each packet's descriptors and the bytes it reads and writes
//! at which rank's memory — timed with a [`TimeModel`] (docs/MODEL.md C6).
//!
//! - **Engines.** A step's packets are dealt in turn to the rank's DMA engines; an engine runs
//!   its packets one after another: descriptors × per-descriptor cost + bytes read / (engine
//!   rate × the CCE rate for a reduce packet).
//! - **Links.** Consecutive ranks share a chip (`cores_per_chip`): bytes between them cross no
//!   link. Consecutive ranks form nodes of `ranks_per_node`. A node's chips sit on a ring of
//!   links (the ring embedded in the 2D torus, which the ring algorithms use; two directions,
//!   each its own bandwidth); bytes from one chip's memory to another's in the same node take
//!   the shorter way round (clockwise on a tie) and load every link on it. Bytes between two
//!   nodes go over EFA (docs/MODEL.md H5): a node has `efa_per_node` interfaces, its chips share
//!   them evenly, and the bytes load the sending chip's interface out and the receiving chip's
//!   interface in, each at the interface's rate. The links are shared by every rank's step of
//!   the same index (they run at about the same time).
//! - **Memory.** Every byte read or written at a rank's memory, by any rank's step of that
//!   index, loads that rank's HBM.
//! - **A step** starts when its rank's previous step has finished and the data of every peer's
//!   step it waits for has arrived: a hop (inside a node, or between nodes) after that step
//!   finished — the latency is on the way, as a pipelined transport has it, so a rank's own
//!   steps follow one another without it (docs/MODEL.md C6, H5). A peer's memory it reads
//!   without waiting for that peer (a remote read of an input) arrives a hop after the rank's
//!   previous step, meanwhile. The step then takes the longest of its engines, the busiest link
//!   its bytes cross and its memory. The model's time is the last finish.
//! - Left out: the documented ring detail that splits each chunk in two slices so one slice's
//!   reduce overlaps the other's send. A step's engines, links and memory already overlap (the
//!   longest counts, not the sum), which is what the split buys at large sizes; at small ones it
//!   would add a hop per slice.

use std::borrow::Cow;
use std::collections::BTreeMap;

use cce_format::packet::{GceMode, Packet, PacketOp};

use cce_host::gradient::header_stride;

use super::buffers::Layout;
use super::config::{CollectiveError, Config};
use super::model::TimeModel;
use super::program::plan_work;
use super::schedule::{Step, StepSource};
use super::symmetry::Symmetry;

/// One packet on the model's timeline.
#[derive(Clone, Debug, PartialEq)]
pub struct PacketSpan {
    /// Its rank.
    pub rank: usize,
    /// Its step.
    pub step: usize,
    /// The engine (queue) it ran on, 0..engines.
    pub engine: u32,
    /// Model start, seconds.
    pub start: f64,
    /// Model duration, seconds.
    pub seconds: f64,
    /// A CCE reduce (else a copy).
    pub cce: bool,
    /// Tx + rx descriptors.
    pub descriptors: u64,
    /// Bytes it reads.
    pub bytes_read: u64,
    /// Bytes it writes.
    pub bytes_written: u64,
    /// Its work item: index within the step.
    pub work: usize,
}

/// One work item (a reduce or a copy: one program of packets) on the timeline.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkSpan {
    /// Its rank.
    pub rank: usize,
    /// Its step.
    pub step: usize,
    /// Indices of its first and last packet in [`Timeline::packets`].
    pub packets: (usize, usize),
    /// The buffers it reads (start addresses).
    pub reads: Vec<u64>,
    /// The buffers it writes.
    pub writes: Vec<u64>,
    /// The ranks it moves bytes between, `(from memory, to memory, bytes)`, other ranks only.
    pub moves: Vec<(usize, usize, u64)>,
}

/// One step of one rank on the timeline.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepSpan {
    /// Model start (its rank's previous step done, and the data of every step it waits for arrived).
    pub start: f64,
    /// What it still waits after `start` for a peer's memory it reads without waiting for
    /// that peer (a hop after its previous step).
    pub latency: f64,
    /// Engines, links and memory: the longest.
    pub body: f64,
}

impl StepSpan {
    /// Model finish.
    pub fn finish(&self) -> f64 {
        self.start + self.latency + self.body
    }
}

/// What the model counted and timed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Timeline {
    /// Per rank, per step (node 0's ranks only when the model walked a symmetric
    /// configuration's representatives: every node's are the same).
    pub steps: Vec<Vec<StepSpan>>,
    /// Every packet (empty unless asked for).
    pub packets: Vec<PacketSpan>,
    /// Every work item (empty unless asked for).
    pub works: Vec<WorkSpan>,
    /// Bytes from each rank's memory to another's, `(from, to)`.
    pub links: BTreeMap<(usize, usize), u64>,
    /// Packets over all ranks.
    pub packet_count: u64,
    /// Descriptors over all ranks.
    pub descriptors: u64,
    /// The most bytes any one ring link carries over the run.
    pub busiest_link_bytes: u64,
    /// The most bytes any one engine reads over the run.
    pub busiest_engine_bytes: u64,
    /// The model's time: the last step's finish.
    pub seconds: f64,
    /// The walk stopped once it could not win (`--algo auto` had a faster candidate already):
    /// `seconds` is then a lower bound (the latest finish so far), and the counts cover the
    /// steps walked only.
    pub stopped: bool,
}

/// Most packets a detailed timeline (a trace) holds.
pub const MAX_TRACE_PACKETS: u64 = 200_000;

/// A packet's cost on its engine.
#[derive(Clone, Copy)]
struct Cost {
    seconds: f64,
    descriptors: u64,
    read: u64,
    written: u64,
    cce: bool,
}

/// Where a packet's bytes go: (rank whose memory, bytes, is a read).
type Touches = Vec<(usize, u64, bool)>;

/// `header_stride`: the bytes a GCE packet's header region takes (its program's stride).
fn cost(m: &TimeModel, p: &Packet, header_stride: u64) -> (Cost, Touches) {
    let elems = p.elems as u64;
    let per_src = elems * p.in_dt.bytes() as u64;
    let per_dst = elems * p.out_dt.bytes() as u64;
    let cce = p.op != PacketOp::Copy;
    let read = per_src * p.sources.len() as u64;
    let written = per_dst * p.dests.len() as u64;
    let descriptors = (p.tx_count() + p.dests.len()) as u64;
    let rate = m.engine_bytes_per_sec * m.dma_share * if cce { m.cce_rate } else { 1.0 };
    let mut touches: Vec<(usize, u64, bool)> =
        p.sources.iter().map(|s| (Layout::rank_of(s.addr), per_src, true)).collect();
    touches.extend(p.dests.iter().map(|&d| (Layout::rank_of(d), per_dst, false)));
    // A GCE packet also writes (compress) or reads (decompress) its header region, beside its
    // payload (the header's owner is the payload's): counted at its stride, as a transport
    // moves the compressed buffer whole.
    if let Some(g) = &p.gce {
        let header = header_stride;
        match g.mode {
            GceMode::Compress => touches.extend(p.dests.iter().map(|&d| (Layout::rank_of(d), header, false))),
            GceMode::Decompress => touches.extend(p.sources.iter().map(|s| (Layout::rank_of(s.addr), header, true))),
        }
    }
    let c =
        Cost { seconds: descriptors as f64 * m.per_descriptor + read as f64 / rate, descriptors, read, written, cce };
    (c, touches)
}

/// The links of a ring of `r` chips (index: clockwise link i → i+1 is i, counter-clockwise
/// i → i−1 is r + i) from chip `a` to chip `b`, the shorter way round.
fn path(r: usize, a: usize, b: usize) -> impl Iterator<Item = usize> {
    let cw = (b + r - a) % r;
    let ccw = (a + r - b) % r;
    let (n, clockwise) = if cw <= ccw { (cw, true) } else { (ccw, false) };
    (0..n).map(move |k| if clockwise { (a + k) % r } else { r + (a + r - k) % r })
}

/// A work item's packets: (count, the first one's cost, the last one's cost).
struct Planned {
    count: u64,
    full: Cost,
    last: Cost,
    /// GCE: the header stride.
    stride: u64,
    /// The packets, kept only for a detailed timeline (a trace lists each one's moves).
    program: Option<Box<cce_host::Program>>,
}

/// The work items of one step index planned, as the rings hold them (`None` for one without
/// packets), per rank walked and work item.
type PlannedStep = Vec<Vec<Option<Planned>>>;

/// Plans every work item of `steps` (step `s` of each rank walked, a schedule of `cfg`) and
/// costs its full and last packets, adding the bytes they move to `loads` (and
/// between each pair of ranks to `links`) as it goes, so only each packet's totals are kept;
/// returns them and the step's packets in all.
fn plan_step(
    cfg: &Config,
    (steps, s): (&[Cow<'_, Step>], usize),
    detail: bool,
    (places, loads): (&Places<'_>, &mut Loads),
    links: &mut BTreeMap<(usize, usize), u64>,
) -> Result<(PlannedStep, u64), CollectiveError> {
    let m = &cfg.model;
    let mut planned: PlannedStep = Vec::with_capacity(steps.len());
    let mut packet_count = 0u64;
    loads.next_step();
    for (q, step) in steps.iter().enumerate() {
        let mut works = Vec::with_capacity(step.work.len());
        for w in &step.work {
            works.push(match plan_work(cfg, q, s, w)? {
                None => None,
                Some(program) => {
                    let count = program.packet_count();
                    let first = program.packet(0);
                    let last = program.packet(count.saturating_sub(1));
                    packet_count += count;
                    match (first, last) {
                        (Some(f), Some(t)) => {
                            let stride = header_stride(f.elems as u64);
                            let ((full, at_full), (last, at_last)) = (cost(m, &f, stride), cost(m, &t, stride));
                            loads.add(q, [(&at_full, count - 1), (&at_last, 1)], places, links);
                            let program = detail.then(|| Box::new(program));
                            Some(Planned { count, full, last, stride, program })
                        }
                        _ => None,
                    }
                }
            });
        }
        planned.push(works);
    }
    Ok((planned, packet_count))
}

/// Where the ranks sit: nodes of `ranks_per_node` ranks, chips of `cores_per_chip` ranks (at
/// most a node), each node's chips on a ring of links, each node's EFA interfaces. Links are
/// numbered node by node (node n's ring: clockwise link i → i+1 is 2nC + i, counter-clockwise
/// i → i−1 is 2nC + C + i, C chips per node), then every node's interfaces out, then in.
struct Places<'a> {
    m: &'a TimeModel,
    /// A symmetric walk's: links and memories are counted at node 0's (the loads of every
    /// node's are the same).
    sym: Option<Symmetry>,
    per_node: usize,
    per_chip: usize,
    chips: usize,
    chips_per_node: usize,
    nodes: usize,
    efa: usize,
}

impl<'a> Places<'a> {
    /// The places of `r` ranks under the model `m`.
    fn new(m: &'a TimeModel, r: usize, sym: Option<Symmetry>) -> Self {
        let per_node = m.ranks_per_node.max(1);
        let per_chip = m.cores_per_chip.clamp(1, per_node);
        Places {
            m,
            sym,
            per_node,
            per_chip,
            chips: r.div_ceil(per_chip),
            chips_per_node: per_node.div_ceil(per_chip),
            nodes: r.div_ceil(per_node),
            efa: m.efa_per_node.max(1),
        }
    }

    /// Rank `q`'s node.
    fn node(&self, q: usize) -> usize {
        q / self.per_node
    }

    /// Links in all: every node's ring, then the interfaces out and in.
    fn links(&self) -> usize {
        2 * self.nodes * self.chips_per_node + 2 * self.nodes * self.efa
    }

    /// Link `i`'s bytes per second: a ring link's, or an EFA interface's.
    fn link_rate(&self, i: usize) -> f64 {
        if i < 2 * self.nodes * self.chips_per_node {
            self.m.link_bytes_per_sec
        } else {
            self.m.inter_link_bytes_per_sec
        }
    }

    /// Load counters: one per link, or node 0's links alone when symmetric.
    fn slots(&self) -> usize {
        match self.sym {
            None => self.links(),
            Some(_) => 2 * self.chips_per_node + 2 * self.efa,
        }
    }

    /// The counter of link `i`: itself, or when symmetric node 0's link of the same place
    /// (its ring link of the same index, its interface out or in of the same index).
    fn slot(&self, i: usize) -> usize {
        if self.sym.is_none() {
            return i;
        }
        let (c, ring) = (self.chips_per_node, 2 * self.nodes * self.chips_per_node);
        match i.checked_sub(ring) {
            None => i % (2 * c),
            Some(e) if e < self.nodes * self.efa => 2 * c + e % self.efa,
            Some(e) => 2 * c + self.efa + e % self.efa,
        }
    }

    /// Counter `slot`'s bytes per second.
    fn slot_rate(&self, slot: usize) -> f64 {
        match self.sym {
            None => self.link_rate(slot),
            Some(_) if slot < 2 * self.chips_per_node => self.m.link_bytes_per_sec,
            Some(_) => self.m.inter_link_bytes_per_sec,
        }
    }

    /// The memory counter of rank `q`: itself, or when symmetric its representative.
    fn memory(&self, q: usize) -> usize {
        self.sym.map_or(q, |s| s.rep(q))
    }

    /// Rank `q`'s EFA interface: (node, interface of the node).
    fn interface(&self, q: usize) -> usize {
        let local_chip = (q % self.per_node) / self.per_chip;
        self.node(q) * self.efa + local_chip * self.efa / self.chips_per_node
    }

    /// The links bytes from rank `from`'s memory to rank `to`'s cross.
    fn links_of(&self, from: usize, to: usize) -> Vec<usize> {
        let (n, c) = (self.node(from), self.chips_per_node);
        if n != self.node(to) {
            let out = 2 * self.nodes * c;
            return vec![out + self.interface(from), out + self.nodes * self.efa + self.interface(to)];
        }
        // The node's ring: its chips (fewer in a last, partial node).
        let ring = c.min(self.chips - n * c);
        let local = |q: usize| (q % self.per_node) / self.per_chip;
        path(ring, local(from), local(to)).map(|i| 2 * n * c + if i < ring { i } else { c + i - ring }).collect()
    }
}

/// The bytes every rank's step of one index moves over each link and at each memory, and each
/// link's bytes over the steps so far.
struct Loads {
    /// Per link (counter, [`Places::slot`]), this step index.
    link: Vec<u64>,
    /// Per rank's memory (counter, [`Places::memory`]), this step index.
    hbm: Vec<u64>,
    /// Per link, every step so far.
    link_total: Vec<u64>,
}

impl Loads {
    /// No bytes yet, for `nsteps` step indices of `r` ranks.
    /// (`r`: the memory counters, [`Places::memory`].)
    fn new(places: &Places<'_>, r: usize) -> Self {
        Loads { link: vec![0u64; places.slots()], hbm: vec![0u64; r], link_total: vec![0u64; places.slots()] }
    }

    /// Starts the next step index: nothing on its links and memories yet.
    fn next_step(&mut self) {
        self.link.fill(0);
        self.hbm.fill(0);
    }

    /// Adds rank `q`'s packets of this step index, `n` of each, to the loads and the bytes
    /// between each pair of ranks to `links`.
    fn add(
        &mut self,
        q: usize,
        costs: [(&Touches, u64); 2],
        places: &Places<'_>,
        links: &mut BTreeMap<(usize, usize), u64>,
    ) {
        for (touches, n) in costs {
            for &(owner, b, is_read) in touches {
                self.hbm[places.memory(owner)] += b * n;
                if owner != q {
                    let (from, to) = if is_read { (owner, q) } else { (q, owner) };
                    *links.entry((from, to)).or_insert(0) += b * n;
                    for i in places.links_of(from, to) {
                        let i = places.slot(i);
                        self.link[i] += b * n;
                        self.link_total[i] += b * n;
                    }
                }
            }
        }
    }
}

/// What timing a step reads: the model, the ranks' places, the step index's planned work and
/// loads, and the engines per rank.
struct StepTiming<'a> {
    m: &'a TimeModel,
    places: Places<'a>,
    planned: PlannedStep,
    loads: Loads,
    engines: u64,
}

impl StepTiming<'_> {
    /// Times rank `q`'s step `s`, once every step it waits for has its span in `spans`: returns
    /// its span and its engines' time; adds its engines' bytes read to `engine_total` (that
    /// rank's, per engine) and its descriptors to `descriptors`.
    fn span(
        &self,
        (q, s): (usize, usize),
        step: &Step,
        spans: &[Vec<StepSpan>],
        engine_total: &mut [u64],
        descriptors: &mut u64,
    ) -> (StepSpan, f64) {
        let (m, engines) = (self.m, self.engines);
        let mut load = vec![0.0f64; engines as usize];
        let mut cursor = 0u64;
        let mut links_used: Vec<usize> = Vec::new();
        // The peers whose memory it reads.
        let mut peers: Vec<usize> = Vec::new();
        for (wi, pw) in self.planned[q].iter().enumerate() {
            let Some(pw) = pw else { continue };
            let full = pw.count - 1;
            for e in 0..engines {
                let k = full / engines + u64::from((e + engines - cursor % engines) % engines < full % engines);
                load[e as usize] += k as f64 * pw.full.seconds;
                engine_total[e as usize] += k * pw.full.read;
            }
            let e_last = ((cursor + full) % engines) as usize;
            load[e_last] += pw.last.seconds;
            engine_total[e_last] += pw.last.read;
            cursor += pw.count;
            *descriptors += full * pw.full.descriptors + pw.last.descriptors;
            // Its packets touch the memories of the ranks whose buffers it reads and writes.
            let w = &step.work[wi];
            let touched = w.reads().into_iter().map(|a| (a, true)).chain(w.writes().into_iter().map(|a| (a, false)));
            for (a, is_read) in touched {
                let owner = Layout::rank_of(a);
                if owner != q {
                    if is_read {
                        peers.push(owner);
                    }
                    let (from, to) = if is_read { (owner, q) } else { (q, owner) };
                    links_used.extend(self.places.links_of(from, to));
                }
            }
        }
        let engine_time = load.iter().copied().fold(0.0, f64::max);
        let link_time = links_used
            .iter()
            .map(|&i| self.places.slot(i))
            .map(|i| self.loads.link[i] as f64 / self.places.slot_rate(i))
            .fold(0.0, f64::max);
        let hbm_time = self.loads.hbm[q] as f64 / m.hbm_bytes_per_sec;
        let node = |q: usize| self.places.node(q);
        let hop = |p: usize| if node(p) != node(q) { m.inter_latency } else { m.step_latency };
        // A peer's step this one waits for: its data arrives a hop after that step ends (the
        // latency is on the way, so a rank's own steps follow one another without it). A
        // peer's memory read without waiting for that peer is read a hop after the rank's
        // previous step, while it waits for the rest.
        let waited: Vec<usize> = step.deps.iter().map(|&(p, _)| p).collect();
        let read_hop = peers.iter().filter(|p| !waited.contains(p)).map(|&p| hop(p)).fold(0.0, f64::max);
        let previous = if s > 0 { spans[q][s - 1].finish() } else { m.launch };
        let ready = step
            .deps
            .iter()
            .filter(|&&(p, u)| u < s && p != q)
            .map(|&(p, u)| spans[self.places.memory(p)][u].finish() + hop(p))
            .fold(previous, f64::max);
        let latency = (previous + read_hop - ready).max(0.0);
        let worked = self.planned[q].iter().any(Option::is_some);
        let body = engine_time.max(link_time).max(hbm_time) + if worked { m.step_cost } else { 0.0 };
        (StepSpan { start: ready, latency, body }, engine_time)
    }

    /// Lists rank `q`'s step `s` (its span `span`, its engines' time `engine_time`) in `out`:
    /// the packets on their engines, stretched to the step's body when a link or the memory is
    /// slower than the engines, and its work items with the bytes they move between ranks.
    fn trace(&self, (q, s): (usize, usize), step: &Step, span: StepSpan, engine_time: f64, out: &mut Timeline) {
        let (m, engines) = (self.m, self.engines);
        let (ready, latency, body) = (span.start, span.latency, span.body);
        let stretch = if engine_time > 0.0 { body / engine_time } else { 1.0 };
        let mut at = vec![ready + latency; engines as usize];
        let mut e = 0usize;
        for (wi, pw) in self.planned[q].iter().enumerate() {
            let Some(pw) = pw else { continue };
            let first = out.packets.len();
            for k in 0..pw.count {
                let c = if k + 1 == pw.count { &pw.last } else { &pw.full };
                let d = c.seconds * stretch;
                out.packets.push(PacketSpan {
                    rank: q,
                    step: s,
                    engine: e as u32,
                    start: at[e],
                    seconds: d,
                    cce: c.cce,
                    descriptors: c.descriptors,
                    bytes_read: c.read,
                    bytes_written: c.written,
                    work: wi,
                });
                at[e] += d;
                e = (e + 1) % engines as usize;
            }
            let w = &step.work[wi];
            let mut moves: BTreeMap<(usize, usize), u64> = BTreeMap::new();
            for p in pw.program.iter().flat_map(|p| p.packets()) {
                for (owner, b, is_read) in cost(m, &p, pw.stride).1 {
                    if owner != q {
                        *moves.entry(if is_read { (owner, q) } else { (q, owner) }).or_insert(0) += b;
                    }
                }
            }
            out.works.push(WorkSpan {
                rank: q,
                step: s,
                packets: (first, out.packets.len() - 1),
                reads: w.reads(),
                writes: w.writes(),
                moves: moves.into_iter().map(|((a, b), n)| (a, b, n)).collect(),
            });
        }
    }
}

/// The timeline of `steps` (a schedule of `cfg`), its packets and work items listed when
/// `detail` (refused above [`MAX_TRACE_PACKETS`] packets). With `sym` (never with `detail`),
/// only node 0's ranks' steps are read from `steps`, and they stand for
/// every node's: the counts are theirs times the nodes, the bytes between ranks are carried to
/// every node by the symmetry, and [`Timeline::steps`] holds node 0's ranks.
pub(super) fn timeline(
    cfg: &Config,
    l: &Layout,
    steps: &dyn StepSource,
    detail: bool,
    (sym, bound): (Option<Symmetry>, Option<f64>),
) -> Result<Timeline, CollectiveError> {
    let sym = sym.filter(|_| !detail);
    let m = &cfg.model;
    let r = l.r;
    let walked = sym.map_or(r, |s| s.period);
    let nsteps = steps.nsteps();
    let places = Places::new(m, r, sym);
    let mut out = Timeline::default();
    let loads = Loads::new(&places, walked);
    let mut engine_total = vec![vec![0u64; m.engines.max(1) as usize]; walked];
    let mut timing = StepTiming { m, places, planned: Vec::new(), loads, engines: m.engines.max(1) as u64 };
    let mut spans = vec![vec![StepSpan::default(); nsteps]; walked];
    // Steps in index order: a step waits only for steps of lower index (every schedule here),
    // each index planned, loaded and timed before the next (only one index's plans are held).
    for s in 0..nsteps {
        let made: Vec<Cow<'_, Step>> = (0..walked).map(|q| steps.step(q, s)).collect();
        let (planned, packets) =
            plan_step(cfg, (&made, s), detail, (&timing.places, &mut timing.loads), &mut out.links)?;
        timing.planned = planned;
        out.packet_count += packets;
        // A trace past its limit lists no more packets; the count goes on, for the refusal.
        let listed = detail && out.packet_count <= MAX_TRACE_PACKETS;
        let mut latest = 0.0f64;
        for (q, step) in made.iter().enumerate() {
            let (span, engine_time) = timing.span((q, s), step, &spans, &mut engine_total[q], &mut out.descriptors);
            spans[q][s] = span;
            latest = latest.max(span.finish());
            if listed {
                timing.trace((q, s), step, span, engine_time, &mut out);
            }
        }
        // A rank's steps finish in order, so the model's time is at least the latest finish.
        if bound.is_some_and(|b| latest > b) && s + 1 < nsteps {
            out.stopped = true;
            spans.iter_mut().for_each(|st| st.truncate(s + 1));
            break;
        }
    }
    if detail && out.packet_count > MAX_TRACE_PACKETS {
        return Err(CollectiveError::Config(format!(
            "the trace would hold {} packets: at most {MAX_TRACE_PACKETS} (use fewer elements or ranks)",
            out.packet_count
        )));
    }
    if let Some(sym) = sym {
        let copies = sym.nodes as u64;
        out.packet_count *= copies;
        out.descriptors *= copies;
        let node0 = std::mem::take(&mut out.links);
        for k in 0..sym.nodes {
            for (&(a, b), &n) in &node0 {
                *out.links.entry((sym.image(k, a), sym.image(k, b))).or_insert(0) += n;
            }
        }
    }
    out.seconds = spans.iter().filter_map(|st| st.last().map(StepSpan::finish)).fold(0.0, f64::max);
    out.busiest_link_bytes = timing.loads.link_total.into_iter().max().unwrap_or(0);
    out.busiest_engine_bytes = engine_total.into_iter().flatten().max().unwrap_or(0);
    out.steps = spans;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_take_the_shorter_way_round() {
        let r = 8;
        assert_eq!(path(r, 1, 3).collect::<Vec<_>>(), vec![1, 2]);
        assert_eq!(path(r, 3, 1).collect::<Vec<_>>(), vec![r + 3, r + 2]);
        assert_eq!(path(r, 0, 7).collect::<Vec<_>>(), vec![r]);
        // A tie goes clockwise.
        assert_eq!(path(r, 6, 2).collect::<Vec<_>>(), vec![6, 7, 0, 1]);
        assert_eq!(path(r, 5, 5).count(), 0);
    }

    /// Two nodes of four one-core chips, two EFA interfaces each: inside a node the ring's
    /// shorter way; between nodes the sender's interface out and the receiver's in.
    #[test]
    fn bytes_between_nodes_go_over_the_chips_efa_interfaces() {
        let m = TimeModel { ranks_per_node: 4, cores_per_chip: 1, efa_per_node: 2, ..TimeModel::defaults(3) };
        let p = Places::new(&m, 8, None);
        assert_eq!(p.links(), 2 * 2 * 4 + 2 * 2 * 2);
        assert_eq!(p.links_of(0, 1), vec![0]);
        assert_eq!(p.links_of(4, 7), vec![8 + 4]);
        assert_eq!(p.links_of(1, 3), vec![1, 2]);
        // Rank 3 (node 0, chip 3: interface 1) to rank 4 (node 1, chip 0: interface 0).
        assert_eq!(p.links_of(3, 4), vec![16 + 1, 16 + 4 + 2]);
        assert_eq!(p.link_rate(12), m.link_bytes_per_sec);
        assert_eq!(p.link_rate(17), m.inter_link_bytes_per_sec);
    }
}
