//! A packet as a value: its op, sources, destinations, clamp, seed, GCE and flags.

use alloc::vec::Vec;

use crate::bits::U3;
use crate::descriptor::FmaOperand;
use crate::dtype::SdmaDtype;
use crate::op::{KbinOp, SdmaCceType};

/// What a packet does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacketOp {
    /// A plain DDMA copy of bytes.
    Copy,
    /// A CCE compute op (ADD, FMA, MIN, MAX).
    Cce(SdmaCceType),
}

impl PacketOp {
    /// `copy` or the CCE op's name (`add`, `fma`, …): the host's names ([`KbinOp::name`]).
    pub const fn name(self) -> &'static str {
        match self {
            PacketOp::Copy => KbinOp::Copy.name(),
            PacketOp::Cce(op) => op.name(),
        }
    }
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
}
