//! The engine: queues, doorbells, the round-robin drain and faults.

use std::time::Instant;

use cce_format::packet::{self, PacketError};
use cce_format::ring::{self, DESC_BYTES, RingGeometry, Shift};
use cce_numerics::{Exec, NumericsError};

use crate::exec::{self, Scratch, Work};
use crate::memory::{MemError, Memory};

/// Queues one engine serves (see [`cce_format::limits::MAX_QUEUES`]).
pub use cce_format::limits::MAX_QUEUES;
const LOOKAHEAD: usize = packet::MAX_PACKET_DESCRIPTORS;
/// Descriptors of each ring a packet's parse reads first ([`Engine::read_packet`]); most
/// packets (every GCE packet) end well before.
const PEEK: usize = 16;

/// Why a queue stopped.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum FaultReason {
    /// The packet does not follow the packet convention, or its ring-id is wrong.
    #[error(transparent)]
    Packet(#[from] PacketError),
    /// An address out of bounds or overflowing.
    #[error(transparent)]
    Memory(#[from] MemError),
    /// A dtype the engine cannot use in that role.
    #[error("dtype {dtype} cannot be the {role} dtype")]
    Dtype {
        /// Role.
        role: &'static str,
        /// Name.
        dtype: &'static str,
    },
    /// FMA selector 3 (no known operand).
    #[error("FMA operand selector {0} names no operand")]
    Selector(u8),
    /// The numerics refused the reduce.
    #[error(transparent)]
    Numerics(#[from] NumericsError),
    /// Something the model does not execute.
    #[error("not supported by the engine model: {0}")]
    Unsupported(&'static str),
    /// A GCE packet the codec cannot run (its header's address or contents, its buffers).
    #[error(transparent)]
    Gce(#[from] crate::gce::GceFault),
}

impl FaultReason {
    /// Whether the packet asks for something the model does not execute (a dtype in a role it
    /// cannot take, an unsupported combination) rather than breaking a rule: a well-formed
    /// request the model refuses, not a failure of the model.
    pub fn is_unsupported_request(&self) -> bool {
        matches!(
            self,
            FaultReason::Dtype { .. }
                | FaultReason::Unsupported(_)
                | FaultReason::Numerics(NumericsError::Unsupported(_) | NumericsError::UnsupportedDtype { .. })
        )
    }
}

/// A fault: which queue, where its packet starts, and why.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("queue {queue}: packet at tx descriptor {tx_index} / rx descriptor {rx_index}: {reason}")]
pub struct Fault {
    /// Queue id.
    pub queue: u32,
    /// Program index of the packet's first tx descriptor.
    pub tx_index: u64,
    /// Program index of the packet's first rx descriptor.
    pub rx_index: u64,
    /// Why (descriptor indices inside it count from the packet start).
    pub reason: FaultReason,
}

/// Where a queue's rings live.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueConfig {
    /// Address of the tx ring (`ring_size` descriptors, [`QueueConfig::geometry`]).
    pub tx_ring: u64,
    /// Address of the rx ring.
    pub rx_ring: u64,
    /// Descriptors per ring (a multiple of 16, at least 32).
    pub ring_size: u32,
    /// Ring-id phase of the first lap.
    pub initial_phase: u8,
}

impl QueueConfig {
    /// Both rings' geometry.
    pub const fn geometry(&self) -> RingGeometry {
        RingGeometry { ring_size: self.ring_size, initial_phase: self.initial_phase }
    }
}

/// A queue's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueState {
    /// Every doorbelled descriptor is done.
    Idle,
    /// Descriptors wait.
    Active,
    /// Stopped by a fault; see [`QueueStatus::fault`].
    Faulted,
    /// The next packet continues past the doorbelled descriptors; a doorbell resumes it.
    Stalled,
}

/// What a caller can read about a queue.
#[derive(Clone, Debug, PartialEq)]
pub struct QueueStatus {
    /// State.
    pub state: QueueState,
    /// Completion semaphore: +1 per finished packet, signed 32-bit, wrapping.
    pub semaphore: i32,
    /// Tx descriptors consumed since the queue was added.
    pub tx_done: u64,
    /// Rx descriptors consumed.
    pub rx_done: u64,
    /// Packets finished.
    pub packets: u64,
    /// The fault, if stopped.
    pub fault: Option<Fault>,
}

/// Engine settings. None changes results; they only change speed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EngineConfig {
    /// The NeuronCore arch whose per-packet limits apply ([`packet::check_arch`]: descriptors
    /// per packet, EXT combos from arch 3): a ring dump's own, or what the caller says of a raw
    /// capture; 3 by default, as everywhere else.
    pub arch: u32,
    /// Threads for the numerics kernels.
    pub threads: usize,
    /// Execute runs of identical consecutive packets as one call when one queue is active.
    pub batch: bool,
    /// Most packets in one run.
    pub max_run: u64,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig { arch: 3, threads: 1, batch: true, max_run: 1 << 16 }
    }
}

/// What [`Engine::run`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RunReport {
    /// Packets executed.
    pub packets: u64,
    /// Descriptors consumed (tx + rx).
    pub descriptors: u64,
    /// Bytes read from sources.
    pub bytes_read: u64,
    /// Bytes written to destinations.
    pub bytes_written: u64,
    /// Seconds spent reading and checking descriptors.
    pub decode_seconds: f64,
    /// Seconds spent in data movement and arithmetic.
    pub execute_seconds: f64,
}

struct Queue {
    id: u32,
    cfg: QueueConfig,
    tx_head: u64,
    tx_tail: u64,
    rx_head: u64,
    rx_tail: u64,
    semaphore: i32,
    packets: u64,
    fault: Option<Fault>,
    /// The next packet is cut off at the doorbelled tail: wait for a doorbell.
    stalled: bool,
    /// No more descriptors will come ([`Engine::close`]): a packet that ends at the tail is
    /// complete, one cut off there is a fault.
    closed: bool,
    /// The last doorbell ended on a packet boundary ([`Engine::doorbell`], not
    /// [`Engine::doorbell_partial`]): a packet that ends at the tail is complete.
    at_boundary: bool,
}

/// The engine over memory `M`.
pub struct Engine<M: Memory> {
    mem: M,
    queues: Vec<Queue>,
    config: EngineConfig,
    scratch: Scratch,
    next: usize,
}

/// Errors of the engine's API (not faults of a queue).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    /// A queue id out of range or already present / absent.
    #[error("queue {0}: no such queue, or already added (ids 0..=15)")]
    Queue(u32),
    /// A bad ring geometry.
    #[error("queue {queue}: ring size {size} is not a multiple of 16 of at least 32, or phase above 3")]
    Ring {
        /// Queue.
        queue: u32,
        /// Size.
        size: u32,
    },
    /// The rings are not in memory.
    #[error("queue {queue}: ring not in memory: {error}")]
    RingMemory {
        /// Queue.
        queue: u32,
        /// Why.
        error: MemError,
    },
    /// A doorbell past what the ring can hold.
    #[error("queue {queue}: doorbell of {count} descriptors overruns the ring ({pending} pending of {size})")]
    Overrun {
        /// Queue.
        queue: u32,
        /// Descriptors rung.
        count: u64,
        /// Already pending.
        pending: u64,
        /// Ring size.
        size: u32,
    },
}

impl<M: Memory> Engine<M> {
    /// An engine over `mem` with no queues.
    pub fn new(mem: M, config: EngineConfig) -> Self {
        Engine { mem, queues: Vec::new(), config, scratch: Scratch::default(), next: 0 }
    }

    /// The memory.
    pub fn memory(&self) -> &M {
        &self.mem
    }

    /// The memory, to load and read buffers and rings.
    pub fn memory_mut(&mut self) -> &mut M {
        &mut self.mem
    }

    /// Gives the memory back.
    pub fn into_memory(self) -> M {
        self.mem
    }

    /// Adds queue `id` with rings at the configured addresses.
    pub fn add_queue(&mut self, id: u32, cfg: QueueConfig) -> Result<(), EngineError> {
        if id as usize >= MAX_QUEUES || self.queues.iter().any(|q| q.id == id) {
            return Err(EngineError::Queue(id));
        }
        if !cce_format::ringfile::valid_ring_size(cfg.ring_size)
            || !cce_format::ring::valid_phase(cfg.initial_phase.into())
        {
            return Err(EngineError::Ring { queue: id, size: cfg.ring_size });
        }
        let bytes = cfg.geometry().bytes();
        for ring in [cfg.tx_ring, cfg.rx_ring] {
            self.mem.check(ring, bytes).map_err(|error| EngineError::RingMemory { queue: id, error })?;
        }
        self.queues.push(Queue {
            id,
            cfg,
            tx_head: 0,
            tx_tail: 0,
            rx_head: 0,
            rx_tail: 0,
            semaphore: 0,
            packets: 0,
            fault: None,
            stalled: false,
            closed: false,
            at_boundary: true,
        });
        self.queues.sort_by_key(|q| q.id);
        Ok(())
    }

    fn queue_mut(&mut self, id: u32) -> Result<&mut Queue, EngineError> {
        self.queues.iter_mut().find(|q| q.id == id).ok_or(EngineError::Queue(id))
    }

    /// Makes `tx` more tx descriptors and `rx` more rx descriptors of queue `id` visible
    /// (the host rings rx before tx; the model takes both at once), the new tails on a packet
    /// boundary, as the runtime rings them: a packet that ends at the tail is complete (MODEL:
    /// docs/MODEL.md P8).
    pub fn doorbell(&mut self, id: u32, tx: u64, rx: u64) -> Result<(), EngineError> {
        self.ring(id, tx, rx, true)
    }

    /// [`doorbell`](Engine::doorbell) for tails that may fall inside a packet (a ring written
    /// as space frees, e.g. by [`crate::feed`]): a CCE packet whose LAST data descriptor is at
    /// the tail waits, since a combo's replication descriptors may follow, until a doorbell on
    /// a boundary or [`close`](Engine::close).
    pub fn doorbell_partial(&mut self, id: u32, tx: u64, rx: u64) -> Result<(), EngineError> {
        self.ring(id, tx, rx, false)
    }

    fn ring(&mut self, id: u32, tx: u64, rx: u64, at_boundary: bool) -> Result<(), EngineError> {
        let q = self.queue_mut(id)?;
        let size = q.cfg.ring_size;
        for (tail, head, count) in [(q.tx_tail, q.tx_head, tx), (q.rx_tail, q.rx_head, rx)] {
            let pending = tail - head;
            if pending + count > size as u64 {
                return Err(EngineError::Overrun { queue: id, count, pending, size });
            }
        }
        q.tx_tail += tx;
        q.rx_tail += rx;
        q.stalled = false;
        q.at_boundary = at_boundary;
        Ok(())
    }

    /// Declares that no more descriptors will come for queue `id`, and wakes it if it was
    /// waiting: on the next [`run`](Engine::run) a CCE packet that ends at the tail runs (it
    /// cannot be waiting for a combo's replication descriptors any more), and a packet still
    /// cut off there becomes a fault ("the ring ends before the packet's LAST data
    /// descriptor").
    pub fn close(&mut self, id: u32) -> Result<(), EngineError> {
        let q = self.queue_mut(id)?;
        q.closed = true;
        q.stalled = false;
        Ok(())
    }

    /// The status of queue `id`.
    pub fn status(&self, id: u32) -> Option<QueueStatus> {
        self.queues.iter().find(|q| q.id == id).map(|q| QueueStatus {
            state: if q.fault.is_some() {
                QueueState::Faulted
            } else if q.stalled {
                QueueState::Stalled
            } else if q.tx_head < q.tx_tail || q.rx_head < q.rx_tail {
                QueueState::Active
            } else {
                QueueState::Idle
            },
            semaphore: q.semaphore,
            tx_done: q.tx_head,
            rx_done: q.rx_head,
            packets: q.packets,
            fault: q.fault.clone(),
        })
    }

    /// Queue ids.
    pub fn queue_ids(&self) -> Vec<u32> {
        self.queues.iter().map(|q| q.id).collect()
    }

    fn active(q: &Queue) -> bool {
        q.fault.is_none() && !q.stalled && (q.tx_head < q.tx_tail || q.rx_head < q.rx_tail)
    }

    /// Drains every queue, round robin, until each is idle or faulted.
    pub fn run(&mut self) -> RunReport {
        let mut report = RunReport::default();
        while self.step(&mut report) {}
        report
    }

    /// Executes the next packet (or run of packets) of the next active queue, round robin.
    /// Returns false when no queue is active.
    pub fn step(&mut self, report: &mut RunReport) -> bool {
        let n = self.queues.len();
        let Some(k) = (0..n).map(|i| (self.next + i) % n).find(|&i| Self::active(&self.queues[i])) else {
            return false;
        };
        self.next = (k + 1) % n.max(1);
        let alone = self.queues.iter().filter(|q| Self::active(q)).count() == 1;
        let max_run = if self.config.batch && alone { self.config.max_run } else { 1 };
        match self.serve(k, max_run, report) {
            Ok(()) => {}
            Err(f) if self.cut_off(k, &f) => self.queues[k].stalled = true,
            Err(f) => self.queues[k].fault = Some(f),
        }
        true
    }

    /// Whether a parse fault only means the packet continues past the doorbelled tail.
    fn cut_off(&self, k: usize, f: &Fault) -> bool {
        let q = &self.queues[k];
        if q.closed {
            return false;
        }
        let short_tx = q.tx_tail - q.tx_head <= LOOKAHEAD as u64;
        let short_rx = q.rx_tail - q.rx_head < LOOKAHEAD as u64;
        match f.reason {
            FaultReason::Packet(PacketError::NoLast(_)) => short_tx,
            FaultReason::Packet(PacketError::NoRx(_)) => short_rx,
            _ => false,
        }
    }

    /// Reads and parses the packet at the heads: `tx` and `rx` are (head, descriptors
    /// available, at most the look-ahead). The first [`PEEK`] descriptors of each ring are read
    /// and parsed first, as a queue that may still grow (`parse_packet_at`'s `more_tx`); when
    /// that parse succeeds with the packet's tx words ending before the last word read, the
    /// parser has read only words that every longer read holds too, and already looked one
    /// past the packet, so parsing everything available gives the same packet. Otherwise (or
    /// when nothing more is available) everything available is read and parsed, with the
    /// queue's own `tx_may_grow`. Returns the words read and the parse.
    fn read_packet(
        &self,
        cfg: QueueConfig,
        (tx_head, avail_tx): (u64, usize),
        (rx_head, avail_rx): (u64, usize),
        tx_may_grow: bool,
    ) -> Result<ReadPacket, FaultReason> {
        let (peek_tx, peek_rx) = (avail_tx.min(PEEK), avail_rx.min(PEEK));
        if peek_tx < avail_tx || peek_rx < avail_rx {
            let tx = self.read_ring(cfg.tx_ring, cfg.ring_size, tx_head, peek_tx);
            let rx = self.read_ring(cfg.rx_ring, cfg.ring_size, rx_head, peek_rx);
            if let (Ok(tx), Ok(rx)) = (tx, rx) {
                match packet::parse_packet_at(&tx, &rx, true) {
                    Ok(parsed) if parsed.tx_kinds.len() < tx.len() => return Ok((tx, rx, parsed)),
                    _ => {}
                }
            }
        }
        let tx = self.read_ring(cfg.tx_ring, cfg.ring_size, tx_head, avail_tx)?;
        let rx = self.read_ring(cfg.rx_ring, cfg.ring_size, rx_head, avail_rx)?;
        let parsed = packet::parse_packet_at(&tx, &rx, tx_may_grow)?;
        Ok((tx, rx, parsed))
    }

    /// Reads up to `count` descriptors of a ring from program index `start`: one memory read
    /// per stretch of slots that does not wrap (a packet is served one at a time and looks
    /// up to [`LOOKAHEAD`] descriptors ahead, so a read per slot cost more than a GCE packet's
    /// codec). A stretch that cannot be read whole is read slot by slot, so the error names the
    /// first slot that fails, as before.
    fn read_ring(&self, ring: u64, size: u32, start: u64, count: usize) -> Result<Vec<[u32; 4]>, MemError> {
        let size = u64::from(size);
        let mut out = Vec::with_capacity(count);
        let mut bytes = vec![0u8; ring::ring_bytes(count.min(size as usize) as u64) as usize];
        let mut i = 0u64;
        while i < count as u64 {
            let slot = (start + i) % size;
            let run = (count as u64 - i).min(size - slot);
            let buf = &mut bytes[..ring::ring_bytes(run) as usize];
            if self.mem.read(ring + ring::slot_offset(slot), buf).is_err() {
                for (k, b) in buf.chunks_exact_mut(DESC_BYTES).enumerate() {
                    self.mem.read(ring + ring::slot_offset(slot + k as u64), b)?;
                }
            }
            out.extend(
                buf.chunks_exact(DESC_BYTES).map(|b| cce_format::descriptor::bytes_to_words(b).unwrap_or_default()),
            );
            i += run;
        }
        Ok(out)
    }

    fn serve(&mut self, k: usize, max_run: u64, report: &mut RunReport) -> Result<(), Fault> {
        let t0 = Instant::now();
        let q = &self.queues[k];
        let (id, cfg) = (q.id, q.cfg);
        let (tx_head, rx_head) = (q.tx_head, q.rx_head);
        let fault = |reason: FaultReason| Fault { queue: id, tx_index: tx_head, rx_index: rx_head, reason };
        // One descriptor past the longest packet, so a packet that fills the bound is seen to
        // end before the next one.
        let avail_tx = (q.tx_tail - tx_head).min(LOOKAHEAD as u64 + 1) as usize;
        let avail_rx = (q.rx_tail - rx_head).min(LOOKAHEAD as u64) as usize;
        let tx_may_grow = !q.closed && !q.at_boundary && avail_tx as u64 == q.tx_tail - tx_head;
        let (tx, rx, parsed) =
            self.read_packet(cfg, (tx_head, avail_tx), (rx_head, avail_rx), tx_may_grow).map_err(&fault)?;
        let (ntx, nrx) = (parsed.tx_kinds.len(), parsed.rx_used);
        packet::check_arch(&parsed, self.config.arch).map_err(|e| fault(e.into()))?;
        let geo = cfg.geometry();
        packet::check_phases(&tx[..ntx], tx_head as usize, "tx", geo)
            .and_then(|()| packet::check_phases(&rx[..nrx], rx_head as usize, "rx", geo))
            .map_err(|e| fault(e.into()))?;
        let work = exec::resolve(&parsed.packet, id).map_err(&fault)?;
        exec::check_bounds(&self.mem, &work, 1).map_err(|e| fault(e.into()))?;
        self.dry_run(&work).map_err(&fault)?;
        // A run: the following packets that are this one shifted by one packet each.
        let q = &self.queues[k];
        let mut more_tx = (q.tx_tail - tx_head) / ntx as u64;
        // A CCE packet ending at the tail of a queue that may still grow could be a combo
        // whose replication descriptors are not here yet: the run stops before it.
        if !q.closed
            && !q.at_boundary
            && (q.tx_tail - tx_head) % ntx as u64 == 0
            && parsed.packet.op != packet::PacketOp::Copy
        {
            more_tx -= 1;
        }
        let more_rx = (q.rx_tail - rx_head) / nrx as u64;
        let limit = max_run.min(more_tx).min(more_rx).max(1);
        let limit = exec::packets_in_bounds(&self.mem, &work, limit).max(1);
        let gradient =
            work.gce.as_ref().and_then(|_| parsed.tx_kinds.iter().position(|k| *k == packet::DescKind::Gradient));
        let (count, header_step) = self.shifted_run(
            FirstPacket { tx: &tx[..ntx], rx: &rx[..nrx], heads: (tx_head, rx_head) },
            &work,
            limit,
            cfg,
            gradient,
        );
        report.decode_seconds += t0.elapsed().as_secs_f64();
        let t1 = Instant::now();
        let exec = Exec { threads: self.config.threads.max(1), ..Exec::default() };
        // (packets done, bytes read and written, the fault of the packet after them).
        let (done, (read, written), failed) = match &work.gce {
            // A GCE packet has its own header: the run executes in batches of whole packets, or
            // one at a time, and one that faults stops the run there.
            Some(_) => crate::gce_run::execute_run(&mut self.mem, &work, count, header_step, &exec, &mut self.scratch),
            None => match exec::execute(&mut self.mem, &work, count, &exec, &mut self.scratch) {
                Ok(io) => (count, io, None),
                Err(e) => (0, (0, 0), Some(e)),
            },
        };
        report.execute_seconds += t1.elapsed().as_secs_f64();
        report.packets += done;
        report.descriptors += done * (ntx + nrx) as u64;
        report.bytes_read += read;
        report.bytes_written += written;
        let q = &mut self.queues[k];
        q.tx_head += done * ntx as u64;
        q.rx_head += done * nrx as u64;
        q.packets += done;
        q.semaphore = q.semaphore.wrapping_add(done as i32);
        match failed {
            None => Ok(()),
            Some(reason) => Err(Fault { queue: id, tx_index: q.tx_head, rx_index: q.rx_head, reason }),
        }
    }

    /// How many packets from the heads (1..=`limit`) are the first one shifted by one packet
    /// each, as each ring's [`Shift`] of it recognises them: the same words except
    /// data-descriptor addresses (advanced by one packet per step), ring-id phases (which must
    /// be those of their slots) and, in a GCE packet, the header word (W3) of its gradient
    /// descriptor (tx index `gradient`), which may advance by a step of its own — each GCE
    /// packet has its own header —, the same from packet to packet (the second packet's sets
    /// it). Returns the count and the header step (0 when there is none). Reads the rings
    /// through one view each where memory allows, else a stretch of slots per read.
    fn shifted_run(
        &self,
        first: FirstPacket<'_>,
        w: &Work,
        limit: u64,
        cfg: QueueConfig,
        gradient: Option<usize>,
    ) -> (u64, u32) {
        let FirstPacket { tx, rx, heads: (tx_head, rx_head) } = first;
        if limit <= 1 {
            return (1, 0);
        }
        let geo = cfg.geometry();
        let bytes = geo.bytes() as usize;
        let size = cfg.ring_size as u64;
        let reader = |ring: u64| RingReader {
            mem: &self.mem,
            ring,
            size,
            view: self.mem.view(ring, bytes),
            buf: Vec::new(),
            first: 0,
        };
        // The header step is learnt from the second packet (copy 1 of the first).
        let mut rings = [
            (reader(cfg.tx_ring), Shift::new(tx, w.elems * w.in_size).learning_header(gradient), tx_head),
            (reader(cfg.rx_ring), Shift::new(rx, w.elems * w.out_size), rx_head),
        ];
        let count = 'run: {
            for n in 1..limit {
                for (reader, shift, head) in &mut rings {
                    let k = *head + n * shift.len() as u64;
                    if !shift.recognise_copy(n, &mut geo.slots_from(k), |slot| reader.get(slot)) {
                        break 'run n;
                    }
                }
            }
            limit
        };
        (count, rings[0].1.header_step().unwrap_or(0))
    }

    /// Runs the numerics on one zero element, so a spec the kernels refuse faults before any
    /// write.
    fn dry_run(&self, w: &Work) -> Result<(), FaultReason> {
        let Some(spec) = &w.spec else { return Ok(()) };
        let zeros = vec![0u8; w.in_size as usize];
        let srcs: Vec<&[u8]> = w.srcs.iter().map(|_| zeros.as_slice()).collect();
        // Compressing, the reduce's output is the mid dtype the codec reads.
        let out_size = w.gce.as_ref().map_or(w.out_size, |g| g.mid.size() as u64);
        let mut out = vec![0u8; out_size as usize];
        cce_numerics::reduce(spec, &srcs, &mut [out.as_mut_slice()], 0)?;
        Ok(())
    }
}

/// A packet read from the rings: its tx and rx descriptor words and its parse.
type ReadPacket = (Vec<[u32; 4]>, Vec<[u32; 4]>, packet::Parsed);

/// Slots one memory read of [`RingReader`] takes.
const RING_READ_SLOTS: u64 = 256;

/// The packet a run of shifted copies starts from ([`Engine::shifted_run`]): its tx and rx
/// descriptors' words and the queue's heads (tx, rx) where they are.
struct FirstPacket<'a> {
    tx: &'a [[u32; 4]],
    rx: &'a [[u32; 4]],
    heads: (u64, u64),
}

/// Descriptors of one ring for [`Engine::shifted_run`], slot by slot: through the ring's view
/// where memory gives one, else from a stretch of up to [`RING_READ_SLOTS`] slots read at once
/// (one slot at a time where the stretch cannot be read).
struct RingReader<'m, M: Memory> {
    mem: &'m M,
    ring: u64,
    size: u64,
    view: Option<&'m [u8]>,
    /// The slots read, from `first`.
    buf: Vec<u8>,
    first: u64,
}

impl<M: Memory> RingReader<'_, M> {
    /// Slot `slot`'s bytes; `None` where memory cannot give them.
    fn get(&mut self, slot: u64) -> Option<[u8; DESC_BYTES]> {
        let at = ring::slot_offset(slot) as usize;
        if let Some(v) = self.view {
            return v.get(at..at + DESC_BYTES)?.try_into().ok();
        }
        let held = ring::descriptors_in(self.buf.len()) as u64;
        if slot < self.first || slot >= self.first + held {
            let n = RING_READ_SLOTS.min(self.size.saturating_sub(slot)).max(1);
            self.buf.resize(ring::ring_bytes(n) as usize, 0);
            let at = self.ring + ring::slot_offset(slot);
            if self.mem.read(at, &mut self.buf).is_err() {
                self.buf.resize(DESC_BYTES, 0);
                if self.mem.read(at, &mut self.buf).is_err() {
                    self.buf.clear();
                    return None;
                }
            }
            self.first = slot;
        }
        let at = ring::slot_offset(slot - self.first) as usize;
        self.buf.get(at..at + DESC_BYTES)?.try_into().ok()
    }
}
