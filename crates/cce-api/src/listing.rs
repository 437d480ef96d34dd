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

use cce_format::SdmaDtype;
use cce_format::descriptor::{self, M2sDataDescriptor};
use cce_format::layout::{self, FieldValue, Layout};
use cce_format::packet::{self, DescKind, Fault, Found, Packet, PacketOp};
use cce_format::ring;
use cce_format::ringfile::{QueueRings, RingFile, words_at};
use serde_json::{Value, json};

use crate::error::ApiError;
use crate::render;

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

    fn to_json(&self) -> Value {
        let layout = self.layout();
        json!({
            "index": self.index,
            "kind": self.kind.map_or("unknown", DescKind::name),
            "other_kinds": self.fits.iter().skip(1).map(|k| k.name()).collect::<Vec<_>>(),
            "words": self.words,
            "meta_ctrl": self.meta_ctrl(),
            "fields": layout.map_or(Value::Null, |l| render::fields_map(&self.fields(), l.words)),
            "meta_fields": self.meta_layout().zip(self.meta_fields()).map_or(Value::Null, |(l, f)| render::fields_map(&f, l.words)),
        })
    }

    /// The kind column of the listing.
    fn kind_text(&self) -> String {
        match (self.ring, self.in_packet()) {
            (RingSide::Tx, true) => self.kind.map_or("unknown", DescKind::name).to_string(),
            (RingSide::Rx, true) => DescKind::S2mData.name().to_string(),
            (RingSide::Tx, false) if self.fits.is_empty() => "(bad)".to_string(),
            (RingSide::Tx, false) => self.fits.iter().map(|k| k.name()).collect::<Vec<_>>().join("|"),
            (RingSide::Rx, false) => format!("{}?", DescKind::S2mData.name()),
        }
    }

    /// The fields column of the listing: the non-zero fields, then a data descriptor's length,
    /// address and meta-control word (or output dtype).
    fn fields_text(&self) -> String {
        if self.ring == RingSide::Tx && !self.in_packet() && self.fits.is_empty() {
            return String::new();
        }
        if self.layout().is_none() {
            return "(bad)".into();
        }
        let data = self.data();
        let skip: &[&str] = if data.is_some() {
            &["meta-ctrl", "buf-ptr-lo", "buf-ptr-hi", "buf1-ptr-lo", "buf1-ptr-hi", "buf2-ptr-lo", "length"]
        } else {
            &[]
        };
        let mut s = render::fields_text(&self.fields(), skip);
        if let Some((len, addr)) = data {
            if self.ring == RingSide::Tx {
                s = format!("{s} len={len} src=0x{addr:x}");
                let meta = self.words[1];
                match self.meta_fields() {
                    Some(f) => s.push_str(&format!(" meta=0x{meta:08x}({})", render::fields_text(&f, &[]))),
                    None => s.push_str(&format!(" meta=0x{meta:08x}")),
                }
            } else {
                s = format!("{s} len={len} dst=0x{addr:x}");
                let out = packet::RX_OUT_DT.get(&self.words);
                if out != 0 {
                    s.push_str(&format!(" out-dt={}[MODEL]", SdmaDtype::from_nibble(out).name()));
                }
                // Both readings of a set S2M bit the sources disagree on.
                for (bit, readings) in cce_format::layout::S2M_BIT_READINGS {
                    if self.words[0] >> bit & 1 != 0 {
                        s.push_str(&format!(" bit{bit}={{{readings}}}[MODEL]"));
                    }
                }
            }
        }
        s.trim().to_string()
    }

    fn to_text(&self) -> String {
        let ring = match self.ring {
            RingSide::Tx => "tx",
            RingSide::Rx => "rx",
        };
        let w = self.words;
        format!(
            "  {ring} {:>6}  {:08x} {:08x} {:08x} {:08x}  {:<12} {}\n",
            self.index,
            w[0],
            w[1],
            w[2],
            w[3],
            self.kind_text(),
            self.fields_text()
        )
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

/// A packet op's name (`copy`, `add`, `fma`, …).
fn op_name(op: PacketOp) -> &'static str {
    match op {
        PacketOp::Copy => "copy",
        PacketOp::Cce(o) => o.name(),
    }
}

impl PacketListing {
    fn to_json(&self) -> Value {
        let p = &self.packet;
        json!({
            "op": op_name(p.op),
            "in": p.in_dt.name(), "accum": p.accum_dt.name(), "out": p.out_dt.name(),
            "elems": p.elems,
            "sources": p.sources.iter().map(|s| json!({
                "addr": s.addr,
                "fma": s.fma.map(|f| json!({"a": f.a.name(), "b": f.b.name(), "c": f.c.name(), "scale": f32::from_bits(f.scale_bits).to_string()})),
            })).collect::<Vec<_>>(),
            "dests": p.dests,
            "clamp": p.clamp.map(|c| json!({"const_dt": c.const_dt.get(), "bits": c.bits})),
            "seed": p.seed,
            "gce": p.gce.map(|g| json!({"mode": g.mode.name(), "header": g.header, "mid": g.mid_dt.name(), "tag": "MODEL"})),
        })
    }

    fn header_text(&self, k: usize) -> String {
        let p = &self.packet;
        format!(
            " packet {k}: {} in={} accum={} out={} elems={} sources={} dests={}{}{}{}\n",
            op_name(p.op),
            p.in_dt.name(),
            p.accum_dt.name(),
            p.out_dt.name(),
            p.elems,
            p.sources.len(),
            p.dests.len(),
            p.seed.map(|s| format!(" sr-seed={s}")).unwrap_or_default(),
            p.clamp.map(|c| format!(" clamp=0x{:x}", c.bits)).unwrap_or_default(),
            p.gce
                .map(|g| format!(" gce={} header=0x{:x} mid={} [MODEL]", g.mode.name(), g.header, g.mid_dt.name()))
                .unwrap_or_default(),
        )
    }
}

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

    /// The queue as JSON: geometry, doorbells, packets, every descriptor and the fault (the
    /// object `cce build --json` prints, without its `file`).
    pub fn to_json(&self) -> Value {
        json!({
            "queue": self.queue, "ring_size": self.ring_size, "initial_phase": self.initial_phase,
            "doorbell": {"rx": self.rx_doorbell, "tx": self.tx_doorbell},
            "packets": self.packets.len(),
            "packet_list": self.packets.iter().map(PacketListing::to_json).collect::<Vec<_>>(),
            "tx": self.tx().map(Desc::to_json).collect::<Vec<_>>(),
            "rx": self.rx().map(Desc::to_json).collect::<Vec<_>>(),
            "fault": self.fault.as_ref().map_or(Value::Null, |f| json!({"tx": f.tx_start, "rx": f.rx_start, "error": f.error.to_string()})),
        })
    }

    /// The queue's part of the listing.
    pub fn to_text(&self) -> String {
        let mut out = format!(
            "queue {}: ring {} descriptors, phase {}, tx {} (doorbell {}), rx {} (doorbell {})\n",
            self.queue,
            self.ring_size,
            self.initial_phase,
            self.tx_descriptors,
            self.tx_doorbell,
            self.rx_descriptors,
            self.rx_doorbell
        );
        for (k, p) in self.packets.iter().enumerate() {
            out.push_str(&p.header_text(k));
            for d in p.tx.iter().chain(&p.rx) {
                out.push_str(&d.to_text());
            }
        }
        if let Some(f) = &self.fault {
            out.push_str(&format!(" ; fault at tx {} / rx {}: {}\n", f.tx_start, f.rx_start, f.error));
        }
        for d in self.tx_rest.iter().chain(&self.rx_rest) {
            out.push_str(&d.to_text());
        }
        out
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

    /// `{"arch", "queues": [...]}`: the object `cce disasm --json` prints.
    pub fn to_json(&self) -> Value {
        json!({
            "arch": self.arch,
            "queues": self.queues.iter().map(QueueListing::to_json).collect::<Vec<_>>(),
        })
    }

    /// The objdump-like listing `cce disasm` prints.
    pub fn to_text(&self) -> String {
        let mut out = format!(
            "; cce ring dump v{}, arch {}, {} queue(s)\n",
            cce_format::ringfile::VERSION,
            self.arch,
            self.queues.len()
        );
        for q in &self.queues {
            out.push_str(&q.to_text());
        }
        out
    }
}

/// Disassembles ring dump bytes (see [`Listing`]; version 2, or version 1 converted); bytes
/// that are not a valid dump are refused with the ring file's own message.
pub fn disasm(file_bytes: &[u8]) -> Result<Listing, ApiError> {
    let bytes = cce_format::ringfile::upgrade(file_bytes)?;
    Ok(Listing::of(&RingFile::parse(&bytes)?))
}
