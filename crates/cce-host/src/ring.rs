//! Programs (the packets of one request) and their layout on a queue's rings.

use cce_format::dtype::SdmaDtype;
use cce_format::packet::{DescSink, Packet, PacketOp};
use cce_format::ring::{self, RingGeometry};
use cce_format::ringfile::{self, QueueRings, RingFile};

use crate::error::HostError;

/// Most descriptors (tx + rx) one program may hold: 2^27, i.e. 2 GiB of ring bytes.
pub const MAX_PROGRAM_DESCRIPTORS: u64 = 1 << 27;

/// The packets of one request: a template for every full packet, repeated with addresses
/// advanced by a stride, and the last packet (which carries the remainder and, for copies,
/// the driver's barrier).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    template: Packet,
    promote: bool,
    arch: u32,
    total: u64,
    per_packet: u64,
    packets: u64,
    /// GCE: how far each packet's compression header lies after the previous one's.
    header_stride: u64,
}

impl Program {
    pub(crate) fn new(template: Packet, total: u64, promote: bool, arch: u32) -> Program {
        let per_packet = template.elems as u64;
        Program { packets: total.div_ceil(per_packet), template, promote, arch, total, per_packet, header_stride: 0 }
    }

    /// With each packet's compression header `stride` bytes after the previous one's (a GCE
    /// template's header is the first packet's).
    pub(crate) fn with_header_stride(mut self, stride: u64) -> Program {
        self.header_stride = stride;
        self
    }

    /// Number of packets.
    pub fn packet_count(&self) -> u64 {
        self.packets
    }

    /// Elements (bytes, for a copy) of every packet but the last, before any lane promotion:
    /// packet `k` starts at element `k ×` this.
    pub fn elems_per_packet(&self) -> u64 {
        self.per_packet
    }

    /// The arch the program was planned for.
    pub fn arch(&self) -> u32 {
        self.arch
    }

    /// Packet `k` (0-based), or `None` past the end.
    pub fn packet(&self, k: u64) -> Option<Packet> {
        if k >= self.packets {
            return None;
        }
        let t = &self.template;
        let first = k * self.per_packet;
        let elems = self.per_packet.min(self.total - first);
        let (src_step, dst_step) = (first * t.in_dt.bytes() as u64, first * t.out_dt.bytes() as u64);
        let mut p = t.clone();
        p.elems = elems as u32;
        for s in &mut p.sources {
            s.addr += src_step;
        }
        for d in &mut p.dests {
            *d += dst_step;
        }
        if let Some(g) = &mut p.gce {
            // The planner checked that every header stays in its payload's 4 GiB window.
            g.header = g.header.wrapping_add((k * self.header_stride) as u32);
        }
        let last = k + 1 == self.packets;
        if p.op == PacketOp::Copy && last {
            // The public driver's barrier on a copy's final chunk (GAPS.md §12): DMB on v1, the
            // meta_ctrl write barrier (0x05080003) on v2 and v3, and on v4 as on v3 (MODEL).
            if self.arch <= 1 {
                p.flags.dmb = true;
            } else {
                p.flags.write_barrier = true;
            }
        }
        if self.promote && elems % 2 == 0 {
            p.in_dt = SdmaDtype::U16;
            p.out_dt = SdmaDtype::U16;
            p.accum_dt = SdmaDtype::U16;
            p.elems = (elems / 2) as u32;
        }
        Some(p)
    }

    /// Every packet, in order.
    pub fn packets(&self) -> impl Iterator<Item = Packet> + '_ {
        (0..self.packets).filter_map(|k| self.packet(k))
    }

    /// Tx descriptors of the whole program.
    pub fn tx_descriptors(&self) -> u64 {
        self.packets * self.template.tx_count() as u64
    }

    /// Rx descriptors of the whole program.
    pub fn rx_descriptors(&self) -> u64 {
        self.packets * self.template.dests.len() as u64
    }

    /// Lays the program out on one queue's rings (see [`Rings::builder`]).
    pub fn to_rings(&self, ring_size: Option<u64>) -> Result<Rings, HostError> {
        let mut b = Rings::builder(ring_size, self.tx_descriptors().max(self.rx_descriptors()))?;
        b.push(self);
        Ok(b.finish())
    }
}

/// One queue's rings: descriptors in program order as ring bytes, with their ring-id phases.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rings {
    /// Tx (M2S) descriptor bytes.
    pub tx: Vec<u8>,
    /// Rx (S2M) descriptor bytes.
    pub rx: Vec<u8>,
    /// Descriptors per lap.
    pub ring_size: u32,
    /// Ring-id phase of the first lap (1: the runtime's alloc callback forces ring id 1).
    pub initial_phase: u8,
    /// Packets written.
    pub packets: u64,
}

/// The ring-id phase the first lap uses.
pub const INITIAL_PHASE: u8 = 1;

impl Rings {
    /// A builder for a queue whose programs need about `descs` descriptors per ring. The ring
    /// size defaults to the smallest valid size holding them, at most 65,536 descriptors
    /// (MODEL); a given size must be a multiple of 16 of at least 32.
    pub fn builder(ring_size: Option<u64>, descs: u64) -> Result<RingBuilder, HostError> {
        let size = match ring_size {
            Some(s) if s <= u32::MAX as u64 && ringfile::valid_ring_size(s as u32) => s as u32,
            Some(s) => return Err(HostError::RingSize(s)),
            None => ringfile::ring_size_for(descs).min(65_536) as u32,
        };
        Ok(RingBuilder {
            tx: Sink { bytes: Vec::new(), count: 0, size, phase: INITIAL_PHASE },
            rx: Sink { bytes: Vec::new(), count: 0, size, phase: INITIAL_PHASE },
            packets: 0,
        })
    }

    /// Tx descriptor count (the tx doorbell).
    pub fn tx_doorbell(&self) -> u32 {
        ring::descriptors_in(self.tx.len()) as u32
    }

    /// Rx descriptor count (the rx doorbell; rung before tx).
    pub fn rx_doorbell(&self) -> u32 {
        ring::descriptors_in(self.rx.len()) as u32
    }

    /// This queue as a ring-file entry.
    pub fn queue(&self, queue: u32) -> QueueRings<'_> {
        QueueRings {
            queue,
            ring_size: self.ring_size,
            initial_phase: self.initial_phase,
            tx_doorbell: self.tx_doorbell(),
            rx_doorbell: self.rx_doorbell(),
            tx: &self.tx,
            rx: &self.rx,
        }
    }

    /// A one-queue ring dump file.
    pub fn to_file_bytes(&self, queue: u32, arch: u32) -> Vec<u8> {
        RingFile { arch, queues: vec![self.queue(queue)] }.to_bytes()
    }
}

struct Sink {
    bytes: Vec<u8>,
    count: u64,
    size: u32,
    phase: u8,
}

impl Sink {
    /// Appends `times` copies of `packet`, copy `k` shifted by `k · stride` (see
    /// [`ring::Shift`]: data descriptors' addresses advanced and ring ids set to their slots'
    /// phases, compute descriptors as they are).
    fn repeat(&mut self, packet: &[[u32; 4]], times: u64, stride: u64) {
        let shift = ring::Shift::new(packet, stride);
        if shift.is_empty() {
            return;
        }
        let descriptors = shift.len() as u64 * times;
        let start = self.bytes.len();
        self.bytes.resize(start + ring::ring_bytes(descriptors) as usize, 0);
        let mut slots = self.geometry().slots_from(self.count);
        for (k, out) in (0..times).zip(self.bytes[start..].chunks_exact_mut(shift.bytes())) {
            shift.apply(k, &mut slots, out);
        }
        self.count += descriptors;
    }

    fn geometry(&self) -> RingGeometry {
        RingGeometry { ring_size: self.size, initial_phase: self.phase }
    }
}

impl DescSink for Sink {
    fn push(&mut self, words: [u32; 4], data: bool) {
        let words = if data { ring::with_phase(words, self.geometry().phase(self.count)) } else { words };
        for w in words {
            self.bytes.extend_from_slice(&w.to_le_bytes());
        }
        self.count += 1;
    }
}

/// Appends programs to one queue's rings.
pub struct RingBuilder {
    tx: Sink,
    rx: Sink,
    packets: u64,
}

impl RingBuilder {
    /// Appends every packet of `program`. Full packets are emitted once and then copied with
    /// their addresses and phases patched, so building costs a copy per descriptor.
    pub fn push(&mut self, program: &Program) {
        let n = program.packet_count();
        self.tx.bytes.reserve(ring::ring_bytes(program.tx_descriptors()) as usize);
        self.rx.bytes.reserve(ring::ring_bytes(program.rx_descriptors()) as usize);
        // A GCE program's packets differ in their header words: each is emitted.
        if n > 2 && program.template.gce.is_none() {
            // Packet 0 as the template for packets 0 .. n-1, written as bytes with only the
            // addresses and ring-id phases patched.
            let p0 = program.packet(0).unwrap_or_else(|| program.template.clone());
            let (mut t0, mut r0) = (Vec::new(), Vec::new());
            p0.emit(&mut t0, &mut r0);
            let src_stride = program.per_packet * program.template.in_dt.bytes() as u64;
            let dst_stride = program.per_packet * program.template.out_dt.bytes() as u64;
            self.tx.repeat(&t0, n - 1, src_stride);
            self.rx.repeat(&r0, n - 1, dst_stride);
            if let Some(last) = program.packet(n - 1) {
                last.emit(&mut self.tx, &mut self.rx);
            }
        } else {
            for p in program.packets() {
                p.emit(&mut self.tx, &mut self.rx);
            }
        }
        self.packets += n;
    }

    /// The rings.
    pub fn finish(self) -> Rings {
        Rings {
            ring_size: self.tx.size,
            initial_phase: self.tx.phase,
            tx: self.tx.bytes,
            rx: self.rx.bytes,
            packets: self.packets,
        }
    }
}
