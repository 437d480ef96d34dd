//! A ring dump as a listing model — queues → packets → descriptors — built by walking each
//! queue's packets once, and rendered both ways from the same model: [`Listing::to_json`] (the
//! object `cce disasm --json` prints; one queue's object is `cce build --json`) and
//! [`Listing::to_text`] (the objdump-like listing of `cce disasm`).
//!
//! Each descriptor carries its ring, program index, words, the kind it is read as (its
//! packet's, or for a descriptor after the last packet the kinds its bits fit alone) and the op
//! of its packet; its fields, their tags, its meta-control word and its buffer address are
//! decoded from those on demand by `cce-format` (the layouts and the UDMA data descriptor).
//! The walk stops at a queue's first fault, which the model keeps.
//!
//! ## Guarantees
//! - Any bytes [`cce_format::ringfile::RingFile::parse`] accepts give a listing; nothing
//!   panics, whatever the descriptors hold.
//! - The text and the JSON come from one walk, so they never disagree about where a packet
//!   starts or which descriptor faulted.

use cce_format::descriptor::{self, M2sDataDescriptor};
use cce_format::layout::{self, FieldValue, Layout};
use cce_format::packet::{self, DescKind, Fault, Found, Packet, PacketOp};
use cce_format::ring;
use cce_format::ringfile::{QueueRings, RingFile, words_at};

use crate::error::ApiError;

/// Which ring a descriptor is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RingSide {
    /// The tx (M2S) ring.
    Tx,
    /// The rx (S2M) ring.
    Rx,
}

/// One descriptor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Desc {
    /// Its ring.
    pub ring: RingSide,
    /// Its index in program order.
    pub index: usize,
    /// W0..W3.
    pub words: [u32; 4],
    /// The kind it is read as: in a packet, the packet's; after the last packet, the first of
    /// [`Desc::fits`] (a tx data descriptor that no layout fits stays `m2s-data`, an rx one is
    /// `s2m-data`); `None` when nothing fits.
    pub kind: Option<DescKind>,
    /// After the last packet, on tx: every kind its bits fit alone, in order (empty in a
    /// packet, and on rx).
    pub fits: Vec<DescKind>,
    /// The op of its packet; `None` after the last packet.
    pub op: Option<PacketOp>,
}

/// The meta-control layout of a data descriptor in a packet of `op`.
fn meta_layout(op: PacketOp) -> Option<&'static Layout> {
    use cce_format::SdmaCceType::*;
    match op {
        PacketOp::Copy => None,
        PacketOp::Cce(Fma) => Some(&layout::FMA_META_CTRL),
        PacketOp::Cce(Min | Max) => Some(&layout::MIN_MAX_META_CTRL),
        PacketOp::Cce(Gce) => Some(&layout::GRADIENT_META_CTRL),
        PacketOp::Cce(_) => Some(&layout::ADD_META_CTRL),
    }
}

impl Desc {
    /// Whether it belongs to a packet.
    pub fn in_packet(&self) -> bool {
        self.op.is_some()
    }

    /// The layout its words are decoded with.
    pub fn layout(&self) -> Option<&'static Layout> {
        self.kind.and_then(DescKind::layout)
    }

    /// Every field of its layout with its value (each with its bits, tag and note), in table
    /// order; empty when no layout fits.
    pub fn fields(&self) -> Vec<FieldValue> {
        self.layout().map_or_else(Vec::new, |l| l.describe(&self.words))
    }

    /// The meta-control word of an M2S data descriptor (W1).
    pub fn meta_ctrl(&self) -> Option<u32> {
        (self.kind == Some(DescKind::M2sData)).then_some(self.words[1])
    }

    /// The layout of [`Desc::meta_ctrl`], by its packet's op.
    pub fn meta_layout(&self) -> Option<&'static Layout> {
        self.meta_ctrl().and(self.op.and_then(meta_layout))
    }

    /// The fields of [`Desc::meta_ctrl`] under [`Desc::meta_layout`].
    pub fn meta_fields(&self) -> Option<Vec<FieldValue>> {
        Some(self.meta_layout()?.describe(&[self.meta_ctrl()?]))
    }

    /// A data descriptor's byte count and buffer address (source on tx, destination on rx).
    pub fn data(&self) -> Option<(u32, u64)> {
        matches!(self.kind, Some(DescKind::M2sData | DescKind::S2mData))
            .then(|| (M2sDataDescriptor::parse_len(self.words[0]), descriptor::data_buf_ptr(self.words)))
    }
}

/// One packet and its descriptors.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PacketListing {
    /// The packet, as the packet convention reads it.
    pub packet: Packet,
    /// Its tx descriptors, in order.
    pub tx: Vec<Desc>,
    /// Its rx descriptors, in order.
    pub rx: Vec<Desc>,
}

impl PacketListing {}

/// One queue: its geometry, its packets, where the walk stopped, and the descriptors after the
/// last packet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueueListing {
    /// Queue id.
    pub queue: u32,
    /// Ring size in descriptors.
    pub ring_size: u32,
    /// Ring-id phase of the first lap.
    pub initial_phase: u8,
    /// Descriptors to doorbell on tx.
    pub tx_doorbell: u32,
    /// Descriptors to doorbell on rx.
    pub rx_doorbell: u32,
    /// Tx descriptors in the dump.
    pub tx_descriptors: usize,
    /// Rx descriptors in the dump.
    pub rx_descriptors: usize,
    /// The packets, in order, up to the first fault.
    pub packets: Vec<PacketListing>,
    /// The packet that could not be read, if any: where it starts and why.
    pub fault: Option<Fault>,
    /// Tx descriptors after the last packet (from the fault on, or any the packets left).
    pub tx_rest: Vec<Desc>,
    /// Rx descriptors after the last packet.
    pub rx_rest: Vec<Desc>,
}

fn ring_words(bytes: &[u8]) -> Vec<[u32; 4]> {
    (0..ring::descriptors_in(bytes.len())).filter_map(|i| words_at(bytes, i)).collect()
}

impl QueueListing {
    /// Walks one queue's packets (once), each held to `arch`'s limits ([`packet::check_arch`]).
    pub fn of(q: &QueueRings<'_>, arch: u32) -> QueueListing {
        let (tx, rx) = (ring_words(q.tx), ring_words(q.rx));
        let geo = q.geometry();
        let desc = |ring, index, words, kind, op| Desc { ring, index, words, kind, fits: Vec::new(), op };
        let mut packets = Vec::new();
        let mut fault = None;
        let (mut t, mut r) = (0, 0);
        for step in packet::walk(&tx, &rx, geo, arch) {
            match step {
                Ok(Found { parsed, tx_start, rx_start }) => {
                    let op = Some(parsed.packet.op);
                    let tx_descs = (parsed.tx_kinds.iter().enumerate())
                        .map(|(i, k)| desc(RingSide::Tx, tx_start + i, tx[tx_start + i], Some(*k), op))
                        .collect();
                    let rx_descs = (rx_start..rx_start + parsed.rx_used)
                        .map(|j| desc(RingSide::Rx, j, rx[j], Some(DescKind::S2mData), op))
                        .collect();
                    t = tx_start + parsed.tx_kinds.len();
                    r = rx_start + parsed.rx_used;
                    packets.push(PacketListing { packet: parsed.packet, tx: tx_descs, rx: rx_descs });
                }
                Err(f) => {
                    fault = Some(f);
                    break;
                }
            }
        }
        let tx_rest = (t..tx.len())
            .map(|i| {
                let w = tx[i];
                let fits = packet::tx_kinds(w);
                let data = w[0] & packet::META_BIT == 0;
                let kind = fits.first().copied().or(data.then_some(DescKind::M2sData));
                Desc { ring: RingSide::Tx, index: i, words: w, kind, fits, op: None }
            })
            .collect();
        let rx_rest = (r..rx.len()).map(|j| desc(RingSide::Rx, j, rx[j], Some(DescKind::S2mData), None)).collect();
        QueueListing {
            queue: q.queue,
            ring_size: q.ring_size,
            initial_phase: q.initial_phase,
            tx_doorbell: q.tx_doorbell,
            rx_doorbell: q.rx_doorbell,
            tx_descriptors: tx.len(),
            rx_descriptors: rx.len(),
            packets,
            fault,
            tx_rest,
            rx_rest,
        }
    }

    /// Every tx descriptor, in program order.
    pub fn tx(&self) -> impl Iterator<Item = &Desc> {
        self.packets.iter().flat_map(|p| &p.tx).chain(&self.tx_rest)
    }

    /// Every rx descriptor, in program order.
    pub fn rx(&self) -> impl Iterator<Item = &Desc> {
        self.packets.iter().flat_map(|p| &p.rx).chain(&self.rx_rest)
    }
}

/// A ring dump's listing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listing {
    /// The arch the rings were built for (0 = unknown).
    pub arch: u32,
    /// Each queue, in file order.
    pub queues: Vec<QueueListing>,
}

impl Listing {
    /// The listing of a parsed dump.
    pub fn of(file: &RingFile<'_>) -> Listing {
        Listing { arch: file.arch, queues: file.queues.iter().map(|q| QueueListing::of(q, file.arch)).collect() }
    }
}

/// Disassembles ring dump bytes (see [`Listing`]; version 2, or version 1 converted); bytes
/// that are not a valid dump are refused with the ring file's own message.
pub fn disasm(file_bytes: &[u8]) -> Result<Listing, ApiError> {
    let bytes = cce_format::ringfile::upgrade(file_bytes)?;
    Ok(Listing::of(&RingFile::parse(&bytes)?))
}
