//! The packet convention: how one reduce (or copy) packet is laid out on a queue's tx and rx
//! rings, as a typed value ([`Packet`]) with a writer ([`Packet::emit`]) and a reader
//! ([`parse_packet`]). The host emits through it; the engine executes what it parses; the
//! disassembler shows what it classifies. Everything here that the study does not pin is MODEL
//! (docs/MODEL.md, "Packets"); every HIGH formula still produces exactly its bits.
//!
//! ## Layout (MODEL unless marked)
//! tx, in order:
//! 1. a seed-init descriptor when stochastic rounding is on (study §2.5, §3.4);
//! 2. MIN/MAX with a clamp: one MIN/MAX descriptor with the constant sub-descriptor (§2.4);
//! 3. per source: FMA only, its FMA descriptor (§2.3); then an M2S data descriptor (GAPS.md §6)
//!    whose `meta_ctrl` is the op's meta-control word, FIRST on the first source, LAST and the
//!    meta-control last bit on the final source (§4.1); the driver's write barrier (meta-control
//!    bit 26) and DMB only on that final one;
//! 4. with several destinations (the EXT combo, §5.1): one replication descriptor per
//!    destination. Every compute descriptor of a combo carries the more-bit except the final
//!    replication descriptor, so a packet ends where the LAST data descriptor has been seen and
//!    no more-bit is pending.
//!
//! GCE (study §5.2, §9.3; every placement MODEL, docs/MODEL.md "GCE"):
//! - **the gradient packet** (op GCE): one gradient descriptor (mode, length, W3 = the
//!   compression header's address, low 32 bits) before the sources, whose data descriptors
//!   carry the gradient meta-control word (`0x2500000`, sub-op 5); compress mode reads 1–32
//!   sources (several: the fused accumulate) and writes the fp8 payload, decompress mode reads
//!   one fp8 payload and writes the expanded values;
//! - **the EXT + GCE combo** (§9.3): `[seed-init | per-source ADD / FMA / MIN / MAX | gradient
//!   (compress) | replication × m]`, every compute descriptor with the more-bit but the last;
//!   the replication descriptors carry the EXT word (`0x2400000`, its mid dtype the dtype the
//!   reduce is rounded to before compression) and the payload goes to each of the m
//!   destinations.
//!
//! The header's full address is the W3 word under the high 32 bits of the compressed buffer
//! (the destination when compressing, the source when decompressing).
//!
//! rx: one S2M data descriptor per destination, as the public driver writes them: length, ring
//! id and INT_EN (on the last one) only — no FIRST, no LAST (GAPS.md §12). The engine takes a
//! packet's rx extent from its tx side: one destination, or as many as the combo's replication
//! descriptors. Its W1 (`buf2_ptr_lo`, 0 on the driver's copies) carries a CCE packet's output
//! dtype in `[15:12]`.
//!
//! A compute descriptor has W0 bit 23 (META) set; a data descriptor has it clear. ADD, MIN and
//! MAX share the meta-control base `0x2000000`, so the sub-op field `[2:0]` carries the
//! `SDMA_CCETYPE` (ADD 0, FMA 1, MAX 2, MIN 3) — the smallest extra convention GAPS.md §7 asks
//! for. The ADD meta-control word has no in-dtype nibble; its `[15:12]` nibble carries the
//! source dtype, as the study's worked example §9.1 calls it (`add_meta_ctrl(in=6, …)`).
//! A plain copy is one M2S descriptor (FIRST and LAST) with the default `meta_ctrl`
//! `0x01080003` — `0x05080003` with the write barrier — and one S2M descriptor.

use alloc::vec::Vec;

use crate::bits::{U2, U3, U8, U16, U24};
use crate::descriptor::{
    self, Descriptor, FmaDescriptor, FmaOperand, GradientDescriptor, LenCtrl, M2sDataDescriptor, MinMaxDescriptor,
    ReplicationDescriptor, S2mDataDescriptor, SeedInitDescriptor,
};
use crate::dtype::SdmaDtype;
use crate::layout::{self, FieldDef, FieldKind};
use crate::meta_ctrl::{
    AddMetaCtrl, CopyMetaCtrl, ExtMetaCtrl, FmaMetaCtrl, GradientMetaCtrl, MetaCtrl, MinMaxMetaCtrl, WRITE_BARRIER,
};
use crate::op::SdmaCceType;
use crate::tag::Tag;

/// `meta_ctrl` of a plain copy: first + last block, copy source data, class CME (HIGH,
/// companion chapter "The 16-Byte UDMA Descriptor"; driver default).
pub const META_CTRL_COPY_DEFAULT: u32 = 0x0108_0003;
/// W0 bit 23: a meta (compute) descriptor rather than a data descriptor.
pub const META_BIT: u32 = 1 << 23;
/// S2M W1 `[15:12]`: the packet's output dtype (MODEL).
pub const RX_OUT_DT: FieldDef = FieldDef {
    name: "out-dt",
    word: 1,
    span: crate::bits::BitSpan::new(12, 4),
    kind: FieldKind::Dtype,
    tag: Tag::Model,
    note: "output dtype of a CCE packet, in the S2M buf2_ptr_lo slot (MODEL)",
};
/// The scale-dtype nibble of a gradient packet's meta-control word: the block scale is one
/// byte, a biased power-of-two exponent (E8M0), named by the u8 dtype (MODEL).
pub const GCE_SCALE_DT: SdmaDtype = SdmaDtype::U8;
/// Most descriptors one packet may use on either ring before the parser gives up (the v2
/// per-packet maximum; v3/v4 allow 65 tx / 60 rx).
pub const MAX_PACKET_DESCRIPTORS: usize = 128;
/// Largest number of sources (see [`crate::limits::MAX_SOURCES`]).
pub use crate::limits::MAX_SOURCES;

/// Per-arch descriptors-per-packet limits (companion chapter "The 16-Byte UDMA Descriptor":
/// 128 / 128 on v2, 65 tx / 60 rx on v3 and v4; MED).
pub const fn max_descs_per_packet(arch: u32) -> (usize, usize) {
    if arch <= 2 { (128, 128) } else { (65, 60) }
}

/// What a packet does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacketOp {
    /// A plain DDMA copy of bytes.
    Copy,
    /// A CCE compute op (ADD, FMA, MIN, MAX).
    Cce(SdmaCceType),
}

/// The FMA operands of one source: selectors and its fp32 scale.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FmaOperands {
    /// Multiply operand A.
    pub a: FmaOperand,
    /// Multiply operand B.
    pub b: FmaOperand,
    /// Add operand C.
    pub c: FmaOperand,
    /// The scale's binary32 bits.
    pub scale_bits: u32,
}

/// One source stream of a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Source {
    /// Start address.
    pub addr: u64,
    /// FMA operands (FMA packets only).
    pub fma: Option<FmaOperands>,
    /// The meta-control flag bits whose meaning is unknown (LOW: FMA f5/f6, MIN/MAX
    /// wrbar/notif, ADD wrbar/f), kept so a packet re-emits exactly; see [`aux_mask`].
    pub meta_aux: u32,
    /// INT_EN (len_ctrl bit 28, "interrupt on completion") on this source's M2S data
    /// descriptor: the public driver's `udma.h` defines it for M2S descriptors too (GAPS.md
    /// §12). The engine executes in order, so it changes no result.
    pub int_en: bool,
}

/// The meta-control bits of `op` that [`Source::meta_aux`] carries: flags the study names
/// from argument order only. An in-order engine executes the same with or without them.
pub const fn aux_mask(op: PacketOp) -> u32 {
    match op {
        PacketOp::Copy => 0,
        PacketOp::Cce(SdmaCceType::Min | SdmaCceType::Max) => (1 << 6) | (1 << 7),
        PacketOp::Cce(_) => (1 << 6) | (1 << 4),
    }
}

/// The MIN/MAX clamp constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Clamp {
    /// The 3-bit constant dtype (an SDMA value below 8; LOW).
    pub const_dt: U3,
    /// The constant's bits, in the constant dtype, low bits first.
    pub bits: u32,
}

/// One packet, as the engine sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packet {
    /// What it does.
    pub op: PacketOp,
    /// Source dtype (`U8` for a copy: a copy moves bytes).
    pub in_dt: SdmaDtype,
    /// Accumulate dtype (`U8` for a copy).
    pub accum_dt: SdmaDtype,
    /// Output dtype (`U8` for a copy).
    pub out_dt: SdmaDtype,
    /// Elements per source (bytes for a copy).
    pub elems: u32,
    /// Source streams, in order.
    pub sources: Vec<Source>,
    /// Destinations; more than one is the EXT combo with replication.
    pub dests: Vec<u64>,
    /// MIN/MAX clamp.
    pub clamp: Option<Clamp>,
    /// Stochastic rounding seed (from the seed-init descriptor).
    pub seed: Option<u32>,
    /// UDMA ordering and completion flags.
    pub flags: DataFlags,
    /// Gradient compression: the gradient packet (op GCE) or the EXT + GCE combo.
    pub gce: Option<Gce>,
}

/// The GCE direction (the gradient descriptor's 3-bit mode; values MODEL).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GceMode {
    /// Compress: the (reduced) values become a header and an fp8 payload.
    Compress,
    /// Decompress: a header and an fp8 payload become values.
    Decompress,
}

impl GceMode {
    /// The mode field's value (MODEL: 1 compress, 2 decompress).
    pub const fn value(self) -> u32 {
        match self {
            GceMode::Compress => 1,
            GceMode::Decompress => 2,
        }
    }
    /// By field value.
    pub const fn from_value(v: u32) -> Option<GceMode> {
        match v {
            1 => Some(GceMode::Compress),
            2 => Some(GceMode::Decompress),
            _ => None,
        }
    }
    /// `compress` or `decompress`.
    pub const fn name(self) -> &'static str {
        match self {
            GceMode::Compress => "compress",
            GceMode::Decompress => "decompress",
        }
    }
}

/// What a packet's gradient descriptor says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gce {
    /// Compress or decompress.
    pub mode: GceMode,
    /// W3: the compression header's address, low 32 bits.
    pub header: u32,
    /// Compressing: the dtype the values are rounded to before compression (the combo's EXT
    /// mid dtype; the source dtype in a gradient packet). Decompressing: the payload's dtype.
    pub mid_dt: SdmaDtype,
}

impl Gce {
    /// The header's full address: `header` under the high 32 bits of `buffer` (the compressed
    /// buffer: the destination when compressing, the source when decompressing; MODEL).
    pub const fn header_addr(&self, buffer: u64) -> u64 {
        (buffer & !0xFFFF_FFFF) | self.header as u64
    }
}

/// The UDMA ordering and completion flags a packet may carry, each in one place: DMB and the
/// write barrier (meta-control bit 26) on the LAST tx data descriptor (the driver sets one of
/// them on a copy's final chunk), INT_EN on the packet's last rx descriptor, strong-ordered
/// writes on every rx descriptor (v3+). Anywhere else they are refused, except INT_EN on a tx
/// data descriptor, which each [`Source`] carries. The engine executes in order, so none of
/// them changes a result.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DataFlags {
    /// Data memory barrier after the packet's reads.
    pub dmb: bool,
    /// The driver's write barrier (meta-control bit 26 of the LAST data descriptor).
    pub write_barrier: bool,
    /// Interrupt on completion.
    pub int_en: bool,
    /// Strong-ordered writes.
    pub strong_order: bool,
}

/// What kind a descriptor is, in the context of its packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DescKind {
    /// Seed-init compute descriptor.
    SeedInit,
    /// MIN/MAX compute descriptor (the constant).
    MinMax,
    /// FMA compute descriptor.
    Fma,
    /// Replication compute descriptor.
    Replication,
    /// Gradient (GCE) compute descriptor.
    Gradient,
    /// M2S data descriptor.
    M2sData,
    /// S2M data descriptor.
    S2mData,
    /// A meta descriptor no known layout fits.
    Unknown,
}

impl DescKind {
    /// Short name (`seed-init`, `fma`, `min-max`, `replication`, `gradient`, `m2s-data`,
    /// `s2m-data`, `unknown`).
    pub const fn name(self) -> &'static str {
        match self {
            DescKind::SeedInit => "seed-init",
            DescKind::MinMax => "min-max",
            DescKind::Fma => "fma",
            DescKind::Replication => "replication",
            DescKind::Gradient => "gradient",
            DescKind::M2sData => "m2s-data",
            DescKind::S2mData => "s2m-data",
            DescKind::Unknown => "unknown",
        }
    }

    /// The layout that decodes it.
    pub fn layout(self) -> Option<&'static layout::Layout> {
        Some(match self {
            DescKind::SeedInit => &layout::SEED_INIT_DESCRIPTOR,
            DescKind::MinMax => &layout::MIN_MAX_DESCRIPTOR,
            DescKind::Fma => &layout::FMA_DESCRIPTOR,
            DescKind::Replication => &layout::REPLICATION_DESCRIPTOR,
            DescKind::Gradient => &layout::GRADIENT_DESCRIPTOR,
            DescKind::M2sData => &layout::M2S_DATA,
            DescKind::S2mData => &layout::S2M_DATA,
            DescKind::Unknown => return None,
        })
    }
}

/// Every kind a tx descriptor could be on its own, without its packet. An FMA descriptor and a
/// MIN/MAX descriptor with an odd constant dtype can share bits; the packet decides.
pub fn tx_kinds(w: [u32; 4]) -> Vec<DescKind> {
    let mut out = Vec::new();
    if w[0] & META_BIT == 0 {
        if M2sDataDescriptor::parse(w).is_ok() {
            out.push(DescKind::M2sData);
        }
        return out;
    }
    if SeedInitDescriptor::parse(w).is_ok() {
        out.push(DescKind::SeedInit);
    }
    if MinMaxDescriptor::parse(w).is_ok() {
        out.push(DescKind::MinMax);
    }
    if FmaDescriptor::parse(w).is_ok() {
        out.push(DescKind::Fma);
    }
    if ReplicationDescriptor::parse(w).is_ok() {
        out.push(DescKind::Replication);
    }
    if descriptor::GradientDescriptor::parse(w).is_ok() {
        out.push(DescKind::Gradient);
    }
    out
}

/// Why a packet cannot be read. Indices count descriptors from the start of the packet.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PacketError {
    /// The tx ring ran out before a packet ended.
    #[error("tx descriptor {0}: the ring ends before the packet's LAST data descriptor")]
    NoLast(usize),
    /// More descriptors than a packet may hold.
    #[error("tx descriptor {0}: packet exceeds {MAX_PACKET_DESCRIPTORS} descriptors")]
    TooLong(usize),
    /// More descriptors in one packet than its arch allows ([`max_descs_per_packet`]).
    #[error("packet uses {tx} tx / {rx} rx descriptors: arch {arch} allows at most {max_tx} / {max_rx}")]
    ArchDescriptors {
        /// The arch.
        arch: u32,
        /// Tx descriptors the packet uses.
        tx: usize,
        /// Rx descriptors it uses.
        rx: usize,
        /// The arch's tx limit.
        max_tx: usize,
        /// The arch's rx limit.
        max_rx: usize,
    },
    /// An EXT combo (replication descriptors) on an arch without them (study §5.1: arch > 2).
    #[error("CCE concatenation not supported: a combo packet on arch {0} (replication needs arch 3 or later)")]
    ArchConcatenation(u32),
    /// The rx ring has no (complete) descriptor set for the packet.
    #[error("rx descriptor {0}: missing or incomplete S2M descriptors for the packet")]
    NoRx(usize),
    /// A descriptor that is neither a data descriptor nor a compute descriptor of the packet.
    #[error("{ring} descriptor {index}: {why}")]
    Malformed {
        /// `tx` or `rx`.
        ring: &'static str,
        /// Index from the packet start.
        index: usize,
        /// What is wrong.
        why: &'static str,
    },
    /// More than 32 sources.
    #[error("packet has {0} sources (at most 32)")]
    TooManySources(usize),
    /// A copy meta-control word with fields the model does not execute.
    #[error(
        "tx descriptor {index}: copy meta_ctrl 0x{meta:08x} sets CRC, byte-swap or block fields; the model executes only the driver's copy word 0x01080003 (0x05080003 with the write barrier)"
    )]
    CopyFields {
        /// Index from the packet start.
        index: usize,
        /// The word.
        meta: u32,
    },
    /// A meta-control word that names no op the engine knows.
    #[error("tx descriptor {index}: unknown op in meta_ctrl 0x{meta:08x}")]
    UnknownOp {
        /// Index from the packet start.
        index: usize,
        /// The word.
        meta: u32,
    },
    /// A dtype the op cannot use.
    #[error("tx descriptor {index}: dtype {dtype} not valid as {role}")]
    BadDtype {
        /// Index from the packet start.
        index: usize,
        /// The dtype's name.
        dtype: &'static str,
        /// in, accum, out, scale.
        role: &'static str,
    },
    /// Bits the packet convention fixes (MODEL) that differ from it.
    #[error("{ring} descriptor {index} word {word}: bits 0x{bits:08x} differ from the packet convention")]
    Convention {
        /// `tx` or `rx`.
        ring: &'static str,
        /// Index from the packet start.
        index: usize,
        /// Word 0..=3.
        word: usize,
        /// The differing bits.
        bits: u32,
    },
    /// A data descriptor whose ring-id phase is not its slot's.
    #[error("{ring} descriptor {index}: ring-id {got}, expected phase {expected} (corrupt ring index)")]
    Phase {
        /// `tx` or `rx`.
        ring: &'static str,
        /// Index from the packet start.
        index: usize,
        /// Phase found.
        got: u8,
        /// Phase expected for the slot.
        expected: u8,
    },
    /// Lengths that do not agree.
    #[error("{ring} descriptor {index}: length {got} bytes disagrees with {expected}")]
    Length {
        /// `tx` or `rx`.
        ring: &'static str,
        /// Index from the packet start.
        index: usize,
        /// Bytes found.
        got: u32,
        /// Bytes expected.
        expected: u32,
    },
}

fn malformed(ring: &'static str, index: usize, why: &'static str) -> PacketError {
    PacketError::Malformed { ring, index, why }
}

/// Where emitted descriptors go: a ring writer that knows each slot's ring-id phase.
pub trait DescSink {
    /// Appends one descriptor; `data` says whether it is a data descriptor (which carries the
    /// ring-id phase in len_ctrl `[25:24]`).
    fn push(&mut self, words: [u32; 4], data: bool);
}

/// A plain `Vec` sink with every data descriptor in phase 1 (the runtime's alloc callback
/// forces ring id 1).
impl DescSink for Vec<[u32; 4]> {
    fn push(&mut self, words: [u32; 4], _data: bool) {
        self.push(words);
    }
}

impl Packet {
    /// A copy packet of `bytes` (1..=65536) from `src` to `dst`.
    pub fn copy(src: u64, dst: u64, bytes: u32) -> Packet {
        Packet {
            op: PacketOp::Copy,
            in_dt: SdmaDtype::U8,
            accum_dt: SdmaDtype::U8,
            out_dt: SdmaDtype::U8,
            elems: bytes,
            sources: alloc::vec![Source { addr: src, fma: None, meta_aux: 0, int_en: false }],
            dests: alloc::vec![dst],
            clamp: None,
            seed: None,
            flags: DataFlags::default(),
            gce: None,
        }
    }

    /// Bytes read from each source.
    pub fn src_bytes(&self) -> u64 {
        self.elems as u64 * self.in_dt.bytes() as u64
    }

    /// Bytes written to each destination.
    pub fn dst_bytes(&self) -> u64 {
        self.elems as u64 * self.out_dt.bytes() as u64
    }

    /// Whether this is the EXT combo (several destinations, or a reduce fused with GCE
    /// compression).
    pub fn is_combo(&self) -> bool {
        self.dests.len() > 1 || self.is_gce_combo()
    }

    /// Whether this is the EXT + GCE combo (§9.3): a reduce op whose result is compressed.
    pub fn is_gce_combo(&self) -> bool {
        self.gce.is_some() && self.op != PacketOp::Cce(SdmaCceType::Gce)
    }

    /// The tx descriptors this packet needs.
    pub fn tx_count(&self) -> usize {
        let per_source = if self.op == PacketOp::Cce(SdmaCceType::Fma) { 2 } else { 1 };
        self.seed.is_some() as usize
            + self.clamp.is_some() as usize
            + self.gce.is_some() as usize
            + per_source * self.sources.len()
            + if self.is_combo() { self.dests.len() } else { 0 }
    }

    /// The meta-control word of source `i` of `n`.
    fn meta_ctrl(&self, i: usize, n: usize) -> u32 {
        let last = i + 1 == n;
        let write_barrier = last && self.flags.write_barrier;
        let sub = |op: SdmaCceType| U3::masked(op.value());
        match self.op {
            PacketOp::Copy => CopyMetaCtrl { write_barrier, ..CopyMetaCtrl::DRIVER_DEFAULT }.emit(),
            PacketOp::Cce(op @ SdmaCceType::Fma) => FmaMetaCtrl {
                sub: sub(op),
                in_dt: self.in_dt,
                scale_dt: SdmaDtype::Fp32,
                accum_dt: self.accum_dt,
                f4: last,
                f5: false,
                f6: false,
                write_barrier,
            }
            .emit(),
            PacketOp::Cce(op @ (SdmaCceType::Min | SdmaCceType::Max)) => MinMaxMetaCtrl {
                sub: sub(op),
                const_dt: self.clamp.map_or(U3::ZERO, |c| c.const_dt),
                in_dt: self.in_dt,
                out_dt: if self.clamp.is_some() { self.out_dt } else { SdmaDtype::Invalid },
                accum_dt: self.accum_dt,
                notif: false,
                wrbar: false,
                use_const: self.clamp.is_some(),
                last,
                write_barrier,
            }
            .emit(),
            PacketOp::Cce(op @ SdmaCceType::Gce) => GradientMetaCtrl {
                sub: sub(op),
                in_dt: self.in_dt,
                scale_dt: GCE_SCALE_DT,
                accum_dt: self.accum_dt,
                wrbar: false,
                f: false,
                last,
                write_barrier,
            }
            .emit(),
            // ADD (and, never emitted by the host, EXT): the ADD word with the source dtype in
            // [15:12].
            PacketOp::Cce(op) => AddMetaCtrl {
                sub: sub(op),
                out_dt: self.in_dt,
                accum_dt: self.accum_dt,
                last,
                wrbar: false,
                f: false,
                write_barrier,
            }
            .emit(),
        }
    }

    /// Writes the packet's tx and rx descriptors. Lengths must already be valid (each data
    /// descriptor at most 65536 bytes); the host checks before emitting.
    pub fn emit(&self, tx: &mut impl DescSink, rx: &mut impl DescSink) {
        let combo = self.is_combo();
        let n = self.sources.len();
        if let Some(seed) = self.seed {
            let d = SeedInitDescriptor { seed_en: true, seed, combo_member: combo, more: combo, ..Default::default() };
            tx.push(d.emit(), false);
        }
        let gradient = |g: &Gce, more: bool| GradientDescriptor {
            mode: U3::masked(g.mode.value()),
            length: U24::masked(self.elems),
            more,
            header: g.header,
            ..Default::default()
        };
        if let (Some(g), false) = (&self.gce, self.is_gce_combo()) {
            tx.push(gradient(g, false).emit(), false);
        }
        if let Some(c) = self.clamp {
            let d = MinMaxDescriptor {
                use_const: true,
                const_dt: c.const_dt,
                length: U24::masked(self.elems),
                constant: c.bits,
                more: combo,
                ..Default::default()
            };
            tx.push(d.emit(), false);
        }
        let src_len = LenCtrl::default().with_byte_len(self.src_bytes()).unwrap_or_default();
        for (i, s) in self.sources.iter().enumerate() {
            if let Some(f) = s.fma {
                let d = FmaDescriptor {
                    meta_idx: U8::masked(i as u32),
                    sub: U3::masked(SdmaCceType::Fma.value()),
                    a_sel: f.a,
                    b_sel: f.b,
                    c_sel: f.c,
                    scale_bits: f.scale_bits,
                    more: combo,
                    ..Default::default()
                };
                tx.push(d.emit(), false);
            }
            let last = i + 1 == n;
            let len_ctrl = LenCtrl { first: i == 0, last, dmb: last && self.flags.dmb, int_en: s.int_en, ..src_len };
            let meta_ctrl = self.meta_ctrl(i, n) | (s.meta_aux & aux_mask(self.op));
            let d = M2sDataDescriptor { len_ctrl, meta_ctrl, buf_ptr: s.addr };
            tx.push(d.emit(), true);
        }
        let m = self.dests.len();
        if combo {
            let op = match self.op {
                PacketOp::Cce(op) => op.value(),
                PacketOp::Copy => 0,
            };
            let mid_dt = self.gce.map_or(self.out_dt, |g| g.mid_dt);
            let ext = ExtMetaCtrl { sub: U3::masked(op), mid_dt, accum_dt: self.accum_dt }.emit();
            if let (Some(g), true) = (&self.gce, self.is_gce_combo()) {
                tx.push(gradient(g, true).emit(), false);
            }
            for j in 0..m {
                let d = ReplicationDescriptor {
                    meta_idx: U8::masked(j as u32),
                    mode: U3::masked(1),
                    count: U16::masked(m as u32),
                    more: j + 1 < m,
                    ext_meta: ext,
                    ..Default::default()
                };
                tx.push(d.emit(), false);
            }
        }
        let dst_len = LenCtrl::default().with_byte_len(self.dst_bytes()).unwrap_or_default();
        let out_word = if self.op == PacketOp::Copy { 0 } else { RX_OUT_DT.place(self.out_dt.value()) };
        for (j, &dst) in self.dests.iter().enumerate() {
            let last = j + 1 == m;
            let len_ctrl =
                LenCtrl { int_en: last && self.flags.int_en, strong_order: self.flags.strong_order, ..dst_len };
            rx.push(S2mDataDescriptor { len_ctrl, buf2_ptr_lo: out_word, buf1_ptr: dst }.emit(), true);
        }
    }
}

/// A packet read from ring words, with the kind of every descriptor it used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parsed {
    /// The packet.
    pub packet: Packet,
    /// Kind of each tx descriptor used, in order.
    pub tx_kinds: Vec<DescKind>,
    /// Number of rx descriptors used.
    pub rx_used: usize,
}

/// The op named by a data descriptor's meta-control word (the write barrier, bit 26, aside).
fn op_of(meta: u32) -> Option<PacketOp> {
    let meta = meta & !WRITE_BARRIER;
    if meta == META_CTRL_COPY_DEFAULT {
        return Some(PacketOp::Copy);
    }
    let sub = layout::MC_SUB.get(&[meta]);
    let op = SdmaCceType::from_value(sub as u64)?;
    let ok = match op {
        SdmaCceType::Fma => FmaMetaCtrl::parse(meta).is_ok(),
        SdmaCceType::Min | SdmaCceType::Max => MinMaxMetaCtrl::parse(meta).is_ok(),
        SdmaCceType::Add => AddMetaCtrl::parse(meta).is_ok(),
        SdmaCceType::Gce => GradientMetaCtrl::parse(meta).is_ok(),
        SdmaCceType::Ext => false,
    };
    ok.then_some(PacketOp::Cce(op))
}

/// Dtypes, last bit and clamp dtype a source's meta-control word carries.
struct MetaInfo {
    in_dt: SdmaDtype,
    accum_dt: SdmaDtype,
    last: bool,
    use_const: bool,
    const_dt: u32,
    forced_out: SdmaDtype,
}

fn meta_info(op: PacketOp, meta: u32) -> Option<MetaInfo> {
    Some(match op {
        PacketOp::Copy => MetaInfo {
            in_dt: SdmaDtype::U8,
            accum_dt: SdmaDtype::U8,
            last: true,
            use_const: false,
            const_dt: 0,
            forced_out: SdmaDtype::Invalid,
        },
        PacketOp::Cce(SdmaCceType::Fma) => {
            let m = FmaMetaCtrl::parse(meta).ok()?;
            if m.scale_dt != SdmaDtype::Fp32 {
                return None;
            }
            MetaInfo {
                in_dt: m.in_dt,
                accum_dt: m.accum_dt,
                last: m.f4,
                use_const: false,
                const_dt: 0,
                forced_out: SdmaDtype::Invalid,
            }
        }
        PacketOp::Cce(SdmaCceType::Min | SdmaCceType::Max) => {
            let m = MinMaxMetaCtrl::parse(meta).ok()?;
            MetaInfo {
                in_dt: m.in_dt,
                accum_dt: m.accum_dt,
                last: m.last,
                use_const: m.use_const,
                const_dt: m.const_dt.get(),
                forced_out: m.out_dt,
            }
        }
        PacketOp::Cce(SdmaCceType::Gce) => {
            let m = GradientMetaCtrl::parse(meta).ok()?;
            MetaInfo {
                in_dt: m.in_dt,
                accum_dt: m.accum_dt,
                last: m.last,
                use_const: false,
                const_dt: 0,
                forced_out: SdmaDtype::Invalid,
            }
        }
        PacketOp::Cce(_) => {
            let m = AddMetaCtrl::parse(meta).ok()?;
            MetaInfo {
                in_dt: m.out_dt,
                accum_dt: m.accum_dt,
                last: m.last,
                use_const: false,
                const_dt: 0,
                forced_out: SdmaDtype::Invalid,
            }
        }
    })
}

/// Reads one packet from the start of `tx` and `rx` (ring words, in ring order, already
/// unwrapped), taking the words given as everything there is. Walks at most
/// [`MAX_PACKET_DESCRIPTORS`] descriptors of either ring; never panics on any words.
pub fn parse_packet(tx: &[[u32; 4]], rx: &[[u32; 4]]) -> Result<Parsed, PacketError> {
    parse_packet_at(tx, rx, false)
}

/// [`parse_packet`] for a reader that may see more tx descriptors later (`more_tx`, e.g. an
/// engine whose doorbell has not covered the packet yet): a CCE packet whose LAST data
/// descriptor is the last word given could still be followed by the replication descriptors
/// of a combo, so it reads as cut off ([`PacketError::NoLast`]) until more words come or the
/// caller knows none will. A copy is never a combo and needs no look-ahead.
pub fn parse_packet_at(tx: &[[u32; 4]], rx: &[[u32; 4]], more_tx: bool) -> Result<Parsed, PacketError> {
    // 1. Find the packet's extent: up to the LAST data descriptor, then the combo's trailing
    //    gradient descriptor (an EXT + GCE combo) and replication descriptors (the only meta
    //    descriptors whose W1 carries 0xA00000), up to the one without the more-bit.
    let mut end = None;
    for (i, w) in tx.iter().enumerate() {
        if i >= MAX_PACKET_DESCRIPTORS {
            return Err(PacketError::TooLong(i));
        }
        if w[0] & META_BIT == 0 && layout::LC_LAST.get(w) != 0 {
            end = Some(i + 1);
            break;
        }
    }
    // Without a LAST among the descriptors given: a packet cut off by the end of the words, or,
    // when they already fill the packet bound, one that exceeds it.
    let cut = |n: usize| if n >= MAX_PACKET_DESCRIPTORS { PacketError::TooLong(n) } else { PacketError::NoLast(n) };
    let Some(mut end) = end else {
        return Err(cut(tx.len()));
    };
    let last_end = end;
    // A combo's gradient descriptor comes first after LAST and carries the more-bit (its
    // replication descriptors follow); one without it opens the next gradient packet.
    let trailing = |w: &[u32; 4], first: bool| {
        w[0] & META_BIT != 0
            && (ReplicationDescriptor::parse(*w).is_ok()
                || (first && layout::D_MORE.get(w) != 0 && GradientDescriptor::parse(*w).is_ok()))
    };
    while let Some(w) = tx.get(end).filter(|w| trailing(w, end == last_end)) {
        end += 1;
        if end > MAX_PACKET_DESCRIPTORS {
            return Err(PacketError::TooLong(end));
        }
        if layout::D_MORE.get(w) == 0 {
            break;
        }
        if end == tx.len() {
            return Err(cut(end));
        }
    }
    if end > 0 && tx[end - 1][0] & META_BIT != 0 && layout::D_MORE.get(&tx[end - 1]) != 0 {
        return Err(malformed("tx", end, "replication chain broken: more-bit set on its last descriptor"));
    }
    let words = &tx[..end];
    // A compute descriptor before the LAST data descriptor with the more-bit set says the
    // packet is a combo: its replication descriptors must follow.
    let combo_pending = words[..last_end].iter().any(|w| w[0] & META_BIT != 0 && layout::D_MORE.get(w) != 0);
    if end == last_end {
        if combo_pending && end == tx.len() {
            return Err(PacketError::NoLast(end));
        }
        if combo_pending {
            return Err(malformed(
                "tx",
                end,
                "more-bit set in the packet but no replication descriptor follows its LAST",
            ));
        }
        let copy = op_of(words[last_end - 1][1]) == Some(PacketOp::Copy);
        if more_tx && end == tx.len() && !copy {
            return Err(PacketError::NoLast(end));
        }
    }

    // 2. The op, from the first data descriptor's meta-control word.
    let first_data = words.iter().position(|w| w[0] & META_BIT == 0).ok_or(PacketError::NoLast(end))?;
    let meta0 = words[first_data][1];
    let op = op_of(meta0).ok_or(if CopyMetaCtrl::parse(meta0).is_ok() {
        PacketError::CopyFields { index: first_data, meta: meta0 }
    } else {
        PacketError::UnknownOp { index: first_data, meta: meta0 }
    })?;

    // 3. Walk the descriptors in order.
    let mut kinds = Vec::with_capacity(end);
    let mut sources: Vec<Source> = Vec::new();
    let mut pending_fma: Option<FmaOperands> = None;
    let mut seed = None;
    let mut clamp = None;
    let mut replication = 0usize;
    let mut rep_count = None;
    let mut ext_mid = None;
    let mut gradient: Option<(usize, GradientDescriptor)> = None;
    let mut info: Option<(SdmaDtype, SdmaDtype, u32)> = None; // in, accum, src bytes
    let mut meta_flags = None; // (use_const, const_dt, forced_out)
    let mut seen_last = false;
    let mut flags = DataFlags::default();
    let is_op = |o: SdmaCceType| op == PacketOp::Cce(o);
    for (i, &w) in words.iter().enumerate() {
        if w[0] & META_BIT == 0 {
            let d = M2sDataDescriptor::parse(w).map_err(|_| malformed("tx", i, "not a valid M2S data descriptor"))?;
            if seen_last {
                return Err(malformed("tx", i, "data descriptor after the LAST one"));
            }
            if d.len_ctrl.first != sources.is_empty() {
                return Err(malformed("tx", i, "FIRST must be set on the first data descriptor only"));
            }
            if d.len_ctrl.concat || d.len_ctrl.meta {
                return Err(malformed("tx", i, "CONCAT / META set on a tx data descriptor"));
            }
            if d.len_ctrl.dmb && !d.len_ctrl.last {
                return Err(malformed("tx", i, "DMB on a data descriptor that is not the packet's LAST"));
            }
            let write_barrier = d.meta_ctrl & WRITE_BARRIER != 0;
            if write_barrier && !d.len_ctrl.last {
                return Err(malformed(
                    "tx",
                    i,
                    "write barrier (meta_ctrl bit 26) on a data descriptor that is not the packet's LAST",
                ));
            }
            flags.dmb = d.len_ctrl.dmb;
            flags.write_barrier = write_barrier;
            if op_of(d.meta_ctrl) != Some(op) {
                return Err(PacketError::UnknownOp { index: i, meta: d.meta_ctrl });
            }
            let mi = meta_info(op, d.meta_ctrl).ok_or(PacketError::BadDtype {
                index: i,
                dtype: "non-fp32",
                role: "scale",
            })?;
            seen_last = d.len_ctrl.last;
            if mi.last != d.len_ctrl.last {
                return Err(malformed("tx", i, "meta-control last bit disagrees with LAST"));
            }
            let bytes = d.len_ctrl.byte_len();
            match info {
                None => info = Some((mi.in_dt, mi.accum_dt, bytes)),
                Some((a, b, len)) => {
                    if (a, b) != (mi.in_dt, mi.accum_dt) {
                        return Err(malformed("tx", i, "sources disagree on in / accum dtype"));
                    }
                    if len != bytes {
                        return Err(PacketError::Length { ring: "tx", index: i, got: bytes, expected: len });
                    }
                }
            }
            let flags = (mi.use_const, mi.const_dt, mi.forced_out);
            if *meta_flags.get_or_insert(flags) != flags {
                return Err(malformed("tx", i, "sources disagree on the clamp fields"));
            }
            let fma = pending_fma.take();
            if is_op(SdmaCceType::Fma) && fma.is_none() {
                return Err(malformed("tx", i, "FMA source without its FMA descriptor"));
            }
            if sources.len() == MAX_SOURCES {
                return Err(PacketError::TooManySources(sources.len() + 1));
            }
            sources.push(Source {
                addr: d.buf_ptr,
                fma,
                meta_aux: d.meta_ctrl & aux_mask(op),
                int_en: d.len_ctrl.int_en,
            });
            kinds.push(DescKind::M2sData);
            continue;
        }
        // A compute descriptor: which kinds fit, decided by its place and the op.
        let fits = tx_kinds(w);
        let kind = if seen_last {
            if fits.contains(&DescKind::Gradient) && !fits.contains(&DescKind::Replication) {
                DescKind::Gradient
            } else {
                DescKind::Replication
            }
        } else if i == 0 && fits.contains(&DescKind::SeedInit) {
            DescKind::SeedInit
        } else if is_op(SdmaCceType::Gce) && sources.is_empty() && gradient.is_none() {
            DescKind::Gradient
        } else if is_op(SdmaCceType::Fma) {
            DescKind::Fma
        } else if (is_op(SdmaCceType::Min) || is_op(SdmaCceType::Max)) && sources.is_empty() && clamp.is_none() {
            DescKind::MinMax
        } else {
            return Err(malformed("tx", i, "compute descriptor where the packet has none"));
        };
        if !fits.contains(&kind) {
            return Err(malformed("tx", i, "compute descriptor does not fit its place in the packet"));
        }
        match kind {
            DescKind::SeedInit => {
                let d = SeedInitDescriptor::parse(w).map_err(|_| malformed("tx", i, "bad seed-init"))?;
                if !d.seed_en {
                    return Err(malformed("tx", i, "seed-init without seed-enable"));
                }
                seed = Some(d.seed);
            }
            DescKind::MinMax => {
                let d = MinMaxDescriptor::parse(w).map_err(|_| malformed("tx", i, "bad min-max descriptor"))?;
                if !d.use_const {
                    return Err(malformed("tx", i, "min-max descriptor without the constant sub-descriptor"));
                }
                clamp = Some((Clamp { const_dt: d.const_dt, bits: d.constant }, d.length.get()));
            }
            DescKind::Gradient => {
                let d = GradientDescriptor::parse(w).map_err(|_| malformed("tx", i, "bad gradient descriptor"))?;
                if gradient.is_some() || replication > 0 {
                    return Err(malformed("tx", i, "a second gradient descriptor, or one after the replication"));
                }
                gradient = Some((i, d));
            }
            DescKind::Fma => {
                let d = FmaDescriptor::parse(w).map_err(|_| malformed("tx", i, "bad FMA descriptor"))?;
                if pending_fma.is_some() {
                    return Err(malformed("tx", i, "two FMA descriptors for one source"));
                }
                pending_fma = Some(FmaOperands { a: d.a_sel, b: d.b_sel, c: d.c_sel, scale_bits: d.scale_bits });
            }
            _ => {
                let d =
                    ReplicationDescriptor::parse(w).map_err(|_| malformed("tx", i, "bad replication descriptor"))?;
                if *rep_count.get_or_insert(d.count.get()) != d.count.get() {
                    return Err(malformed("tx", i, "replication descriptors disagree on the count"));
                }
                if ext_mid.is_none() {
                    ext_mid = ExtMetaCtrl::parse(d.ext_meta).ok().map(|e| e.mid_dt);
                }
                replication += 1;
            }
        }
        kinds.push(kind);
    }
    let (in_dt, accum_dt, src_bytes) = info.ok_or(PacketError::NoLast(end))?;
    let (use_const, const_dt, forced_out) = meta_flags.unwrap_or((false, 0, SdmaDtype::Invalid));
    if use_const != clamp.is_some() {
        return Err(malformed("tx", 0, "use-const in meta-control without the constant descriptor (or the reverse)"));
    }
    if let Some((c, _)) = clamp {
        if c.const_dt.get() != const_dt {
            return Err(malformed("tx", 0, "constant dtype disagrees between descriptor and meta-control"));
        }
    }
    if op == PacketOp::Copy && sources.len() != 1 {
        return Err(malformed("tx", 0, "a copy packet has exactly one data descriptor"));
    }
    let gce = match gradient {
        None if is_op(SdmaCceType::Gce) => {
            return Err(malformed("tx", 0, "a gradient packet without its gradient descriptor"));
        }
        None => None,
        Some((i, d)) => {
            let mode = GceMode::from_value(d.mode.get()).ok_or(malformed(
                "tx",
                i,
                "gradient descriptor mode: the model knows compress (1) and decompress (2)",
            ))?;
            if d.length.get() != src_bytes / (in_dt.bytes().max(1) as u32) {
                let elems = src_bytes / (in_dt.bytes().max(1) as u32);
                return Err(PacketError::Length { ring: "tx", index: i, got: d.length.get(), expected: elems });
            }
            if is_op(SdmaCceType::Gce) {
                if seed.is_some() || replication > 0 {
                    return Err(malformed(
                        "tx",
                        i,
                        "a gradient packet takes no seed-init and no replication (an EXT combo does)",
                    ));
                }
                Some(Gce { mode, header: d.header, mid_dt: in_dt })
            } else {
                if mode != GceMode::Compress || replication == 0 {
                    return Err(malformed(
                        "tx",
                        i,
                        "a gradient descriptor in an EXT combo compresses, and replication descriptors follow it",
                    ));
                }
                Some(Gce { mode, header: d.header, mid_dt: ext_mid.unwrap_or(SdmaDtype::Invalid) })
            }
        }
    };
    let in_size = in_dt.bytes() as u32;
    if in_size == 0 {
        return Err(PacketError::BadDtype { index: first_data, dtype: in_dt.name(), role: "in" });
    }
    if accum_dt == SdmaDtype::Invalid {
        return Err(PacketError::BadDtype { index: first_data, dtype: accum_dt.name(), role: "accum" });
    }
    if src_bytes % in_size != 0 {
        return Err(PacketError::Length {
            ring: "tx",
            index: first_data,
            got: src_bytes,
            expected: src_bytes / in_size * in_size,
        });
    }
    let elems = src_bytes / in_size;
    if let Some((_, len)) = clamp {
        if len != elems {
            return Err(PacketError::Length { ring: "tx", index: 0, got: len, expected: elems });
        }
    }

    // 4. The rx side, as many S2M descriptors as the tx side has destinations: the combo's
    //    replication count, else one. The driver's S2M carries no FIRST / LAST to say so.
    if replication > 0 && rep_count != Some(replication as u32) {
        return Err(malformed("tx", end - 1, "replication descriptors do not match their count"));
    }
    let rx_used = replication.max(1);
    if rx.len() < rx_used {
        return Err(PacketError::NoRx(rx.len()));
    }
    let mut dests = Vec::with_capacity(rx_used);
    let mut out_dt = None;
    for (j, &w) in rx[..rx_used].iter().enumerate() {
        let d = S2mDataDescriptor::parse(w).map_err(|_| malformed("rx", j, "not a valid S2M data descriptor"))?;
        let lc = d.len_ctrl;
        if lc.first || lc.last || lc.concat || lc.meta || lc.dmb {
            return Err(malformed(
                "rx",
                j,
                "FIRST / LAST / CONCAT / META / DMB on an S2M descriptor: the driver's S2M carries only length, ring id and INT_EN (bits 27 / 31 read as FLUSH / DUAL_BUF in the Annapurna HAL)",
            ));
        }
        if lc.int_en && j + 1 != rx_used {
            return Err(malformed("rx", j, "INT_EN on an S2M that is not the packet's last"));
        }
        if j == 0 {
            flags.strong_order = lc.strong_order;
        } else if flags.strong_order != lc.strong_order {
            return Err(malformed("rx", j, "strong-order set on some destinations only"));
        }
        flags.int_en = lc.int_en;
        let word_out = RX_OUT_DT.get(&w);
        if d.buf2_ptr_lo & !RX_OUT_DT.span.mask() != 0 {
            return Err(malformed("rx", j, "unexpected bits in the S2M W1 slot"));
        }
        let dt = if op == PacketOp::Copy {
            if word_out != 0 {
                return Err(malformed("rx", j, "a copy S2M carries no output dtype"));
            }
            SdmaDtype::U8
        } else {
            SdmaDtype::from_nibble(word_out)
        };
        if *out_dt.get_or_insert(dt) != dt {
            return Err(malformed("rx", j, "destinations disagree on the output dtype"));
        }
        let expected = elems as u64 * dt.bytes() as u64;
        if lc.byte_len() as u64 != expected {
            return Err(PacketError::Length { ring: "rx", index: j, got: lc.byte_len(), expected: expected as u32 });
        }
        dests.push(d.buf1_ptr);
    }
    let out_dt = out_dt.unwrap_or(SdmaDtype::Invalid);
    if out_dt.bytes() == 0 {
        return Err(PacketError::BadDtype { index: 0, dtype: out_dt.name(), role: "out" });
    }
    if use_const && forced_out != out_dt {
        return Err(malformed("tx", first_data, "MIN/MAX meta-control out dtype disagrees with the S2M"));
    }
    let packet =
        Packet { op, in_dt, accum_dt, out_dt, elems, sources, dests, clamp: clamp.map(|(c, _)| c), seed, flags, gce };
    check_convention(&packet, &tx[..end], &rx[..rx_used])?;
    Ok(Parsed { packet, tx_kinds: kinds, rx_used })
}

/// Re-emits `packet` and compares with the words it was read from (ring-id phases aside, which
/// the engine checks against the slot): whatever the IR does not hold must be exactly what the
/// convention writes, so parsing is lossless.
fn check_convention(packet: &Packet, tx: &[[u32; 4]], rx: &[[u32; 4]]) -> Result<(), PacketError> {
    let (mut t2, mut r2) = (Vec::with_capacity(tx.len()), Vec::with_capacity(rx.len()));
    packet.emit(&mut t2, &mut r2);
    for (ring, got, want) in [("tx", tx, &t2[..]), ("rx", rx, &r2[..])] {
        if got.len() != want.len() {
            return Err(malformed(
                ring,
                got.len().min(want.len()),
                "descriptor count differs from the packet convention",
            ));
        }
        for (index, (g, w)) in got.iter().zip(want).enumerate() {
            let phase = if g[0] & META_BIT == 0 { layout::LC_RING_ID.span.mask() } else { 0 };
            for word in 0..4 {
                let mask = if word == 0 { !phase } else { u32::MAX };
                let bits = (g[word] ^ w[word]) & mask;
                if bits != 0 {
                    return Err(PacketError::Convention { ring, index, word, bits });
                }
            }
        }
    }
    Ok(())
}

/// The ring-id phase of slot `index` on a ring of `ring_size` descriptors whose first lap has
/// phase `initial`: it advances by one (mod 4) on every wrap (public UDMA model).
pub const fn phase(index: u64, ring_size: u32, initial: u8) -> u8 {
    ((initial as u64 + index / ring_size as u64) & 3) as u8
}

/// Sets the ring-id phase of a data descriptor (len_ctrl `[25:24]`); compute descriptors keep
/// their bits (there `[31:24]` is the meta index).
pub fn with_phase(mut words: [u32; 4], phase: u8) -> [u32; 4] {
    words[0] = (words[0] & !layout::LC_RING_ID.span.mask()) | layout::LC_RING_ID.place(U2::masked(phase as u32).get());
    words
}

/// A ring's geometry, for phase checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RingGeometry {
    /// Descriptors per lap.
    pub ring_size: u32,
    /// Phase of the first lap.
    pub initial_phase: u8,
}

/// One packet found by [`walk`], with where it starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// The packet and its descriptor kinds.
    pub parsed: Parsed,
    /// Index of its first tx descriptor in program order.
    pub tx_start: usize,
    /// Index of its first rx descriptor.
    pub rx_start: usize,
}

/// A fault found by [`walk`], with where the packet started.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    /// What is wrong; its indices count from the packet start.
    pub error: PacketError,
    /// Index of the packet's first tx descriptor.
    pub tx_start: usize,
    /// Index of the packet's first rx descriptor.
    pub rx_start: usize,
}

/// Walks a queue's program (tx and rx descriptors in program order) packet by packet, checking
/// every packet against `arch`'s limits ([`check_arch`]) and every data descriptor's ring-id
/// against its slot. Stops at the first fault. Bounded: each step consumes at least one
/// descriptor and looks at most [`MAX_PACKET_DESCRIPTORS`] ahead.
pub fn walk<'a>(
    tx: &'a [[u32; 4]],
    rx: &'a [[u32; 4]],
    geo: RingGeometry,
    arch: u32,
) -> impl Iterator<Item = Result<Found, Fault>> + 'a {
    let (mut t, mut r, mut done) = (0usize, 0usize, false);
    core::iter::from_fn(move || {
        if done || (t == tx.len() && r == rx.len()) {
            return None;
        }
        let fault = |error| Fault { error, tx_start: t, rx_start: r };
        let res = parse_packet(&tx[t..], &rx[r..]).map_err(fault).and_then(|parsed| {
            check_arch(&parsed, arch).map_err(fault)?;
            check_phases(&tx[t..t + parsed.tx_kinds.len()], t, "tx", geo)
                .and_then(|()| check_phases(&rx[r..r + parsed.rx_used], r, "rx", geo))
                .map_err(fault)?;
            Ok(Found { parsed, tx_start: t, rx_start: r })
        });
        match &res {
            Ok(f) => {
                t += f.parsed.tx_kinds.len();
                r += f.parsed.rx_used;
            }
            Err(_) => done = true,
        }
        Some(res)
    })
}

/// Checks a parsed packet against `arch`'s limits, what the host's builder refuses to make
/// ("CCE concatenation not supported"): replication descriptors (an EXT combo) only from arch
/// 3, and at most [`max_descs_per_packet`] descriptors on either ring. Arch 0 (a dump that
/// does not say) is taken as 3.
pub fn check_arch(parsed: &Parsed, arch: u32) -> Result<(), PacketError> {
    let arch = if arch == 0 { 3 } else { arch };
    let (max_tx, max_rx) = max_descs_per_packet(arch);
    let (tx, rx) = (parsed.tx_kinds.len(), parsed.rx_used);
    if parsed.tx_kinds.contains(&DescKind::Replication) && !crate::limits::replication_allowed(arch) {
        return Err(PacketError::ArchConcatenation(arch));
    }
    if tx > max_tx || rx > max_rx {
        return Err(PacketError::ArchDescriptors { arch, tx, rx, max_tx, max_rx });
    }
    Ok(())
}

/// Checks that every data descriptor of `words`, which start at program index `start`, carries
/// its slot's ring-id phase.
pub fn check_phases(
    words: &[[u32; 4]],
    start: usize,
    ring: &'static str,
    geo: RingGeometry,
) -> Result<(), PacketError> {
    for (i, w) in words.iter().enumerate() {
        if w[0] & META_BIT == 0 {
            let expected = phase((start + i) as u64, geo.ring_size.max(1), geo.initial_phase);
            let got = layout::LC_RING_ID.get(w) as u8;
            if got != expected {
                return Err(PacketError::Phase { ring, index: i, got, expected });
            }
        }
    }
    Ok(())
}
