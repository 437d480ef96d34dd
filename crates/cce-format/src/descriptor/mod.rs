//! The 16-byte descriptors: the CCE compute descriptors (study §2.2–§2.5) and the public UDMA
//! data descriptors (GAPS.md §6).
//!
//! On the ring a descriptor is W0, W1, W2, W3, each little-endian. [`raw`] holds the runtime's
//! formulas as disassembled; the typed descriptors range-check their fields, add the MODEL
//! fields the study leaves open (docs/MODEL.md), and round-trip: `parse(emit(x)) == x`.

use crate::error::FormatError;
use crate::layout::Layout;

pub use crate::words::{
    FmaDescriptor, GradientDescriptor, LenCtrl, M2sDataDescriptor, MAX_DATA_DESC_BYTES, MinMaxDescriptor,
    ReplicationDescriptor, S2mDataDescriptor, SeedInitDescriptor,
};

/// Bytes in one descriptor.
pub const DESC_BYTES: usize = 16;

pub mod raw;

/// A typed 16-byte descriptor.
pub trait Descriptor: Sized {
    /// The layout.
    const LAYOUT: &'static Layout;
    /// The four words.
    fn emit(&self) -> [u32; 4];
    /// Reads words that are an exact encoding; anything else is an error naming the problem.
    fn parse(words: [u32; 4]) -> Result<Self, FormatError>;

    /// The 16 ring bytes (W0..W3, little-endian).
    fn to_bytes(&self) -> [u8; DESC_BYTES] {
        words_to_bytes(self.emit())
    }

    /// Parses 16 ring bytes.
    fn from_bytes(bytes: &[u8]) -> Result<Self, FormatError> {
        Self::parse(bytes_to_words(bytes)?)
    }
}

/// W0..W3 as 16 little-endian bytes.
pub fn words_to_bytes(words: [u32; 4]) -> [u8; DESC_BYTES] {
    let mut b = [0u8; DESC_BYTES];
    for (chunk, w) in b.chunks_exact_mut(4).zip(words) {
        chunk.copy_from_slice(&w.to_le_bytes());
    }
    b
}

/// The 64-bit buffer address a data descriptor carries in W2 (low half) and W3 (high half):
/// the M2S `buf_ptr`, the S2M `buf1_ptr` (public UDMA layout). Reads any words.
#[inline]
pub const fn data_buf_ptr(words: [u32; 4]) -> u64 {
    crate::words::join_address(&crate::words::M2S_BUF_LO, &crate::words::M2S_BUF_HI, &words)
}

/// 16 little-endian bytes as W0..W3; any other length is an error.
pub fn bytes_to_words(bytes: &[u8]) -> Result<[u32; 4], FormatError> {
    let b: &[u8; DESC_BYTES] = bytes.try_into().map_err(|_| FormatError::ByteLength {
        what: "a descriptor",
        expected: DESC_BYTES,
        got: bytes.len(),
    })?;
    Ok(core::array::from_fn(|i| u32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]])))
}

/// The FMA operand selector (`al_sdma_m2s_fma_operand`, study §3.1). The field is 2 bits wide;
/// value 3 has no known meaning and is kept as [`FmaOperand::Reserved3`] so decoding loses
/// nothing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum FmaOperand {
    /// The running accumulator (in-engine partial).
    #[default]
    Stored = 0,
    /// The source stream read on the M2S leg.
    Input = 1,
    /// The descriptor's fp32 scale (W3).
    Scale = 2,
    /// Not a known operand.
    Reserved3 = 3,
}

impl FmaOperand {
    /// The selector for a 2-bit value.
    pub const fn from_bits(v: u32) -> FmaOperand {
        match v & 3 {
            0 => FmaOperand::Stored,
            1 => FmaOperand::Input,
            2 => FmaOperand::Scale,
            _ => FmaOperand::Reserved3,
        }
    }

    /// The 2-bit value.
    pub const fn bits(self) -> u32 {
        self as u32
    }

    /// Name (`stored`, `input`, `scale`, `reserved3`).
    pub const fn name(self) -> &'static str {
        match self {
            FmaOperand::Stored => "stored",
            FmaOperand::Input => "input",
            FmaOperand::Scale => "scale",
            FmaOperand::Reserved3 => "reserved3",
        }
    }
}

/// The default FMA selectors of `vring_add_dma_packet_cce_int` (study §3.1, HIGH):
/// a = input, b = scale, c = stored, i.e. `acc' = input · scale + acc`.
pub const DEFAULT_FMA_SELECTORS: [FmaOperand; 3] = [FmaOperand::Input, FmaOperand::Scale, FmaOperand::Stored];
