//! Why a packet cannot be read.

use super::MAX_PACKET_DESCRIPTORS;

/// Why a packet cannot be read. Indices count descriptors from the start of the packet.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PacketError {
    /// The tx ring ran out before a packet ended.
    #[error("tx descriptor {0}: the ring ends before the packet's LAST data descriptor")]
    NoLast(usize),
    /// More descriptors than a packet may hold.
    #[error("tx descriptor {0}: packet exceeds {MAX_PACKET_DESCRIPTORS} descriptors")]
    TooLong(usize),
    /// More descriptors in one packet than its arch allows ([`max_descs_per_packet`](super::max_descs_per_packet)).
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

pub(super) fn malformed(ring: &'static str, index: usize, why: &'static str) -> PacketError {
    PacketError::Malformed { ring, index, why }
}
