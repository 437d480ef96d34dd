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

// One file per responsibility: the value, writing it, reading it (and why that fails), the
// kinds of descriptors, and a queue's program walked packet by packet.
mod emit;
mod error;
mod kinds;
mod parse;
mod tx_read;
mod value;
mod walk;

pub use crate::ring::{RingGeometry, phase, with_phase};
pub use emit::DescSink;
pub use error::PacketError;
pub use kinds::{DescKind, tx_kinds};
pub use parse::{Parsed, parse_packet, parse_packet_at};
pub use value::{Clamp, DataFlags, FmaOperands, Gce, GceMode, Packet, PacketOp, Source, aux_mask};
pub use walk::{Fault, Found, check_arch, check_phases, walk};

use crate::dtype::SdmaDtype;
use crate::layout::{self, FieldDef, FieldKind};
use crate::tag::Tag;

/// `meta_ctrl` of a plain copy (HIGH, companion chapter "The 16-Byte UDMA Descriptor"; driver
/// default), derived from the copy word's fields.
pub use crate::words::META_CTRL_COPY_DEFAULT;
/// W0 bit 23: a meta (compute) descriptor rather than a data descriptor.
pub const META_BIT: u32 = layout::LC_META.place(1);
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
