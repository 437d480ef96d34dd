//! `kbin_dma_desc_cce_info_t`, the 140-byte request struct (study §2.1, HIGH / structures.json).
//!
//! ```text
//! +0    u32   num_sources
//! +4    union (132 bytes)
//!         fma_info     { u32 scale_dtype @+4; f32 scale[32] @+8..+136 }
//!         min_max_info { bool use_constant @+4; u32 constant_dtype @+8; u32 constant @+12 }
//! +136  u32   num_dests
//! ```
//! The union arms alias: `min_max_info.constant_dtype` and `fma_info.scale[0]` are the same
//! four bytes (+8). [`CceInfo`] holds the little-endian bytes and reads every field through the
//! offsets below, so both views see one payload, as in C. No unsafe.

use core::ops::Range;

use crate::error::FormatError;

/// Size of the struct.
pub const CCE_INFO_BYTES: usize = 140;
/// Number of per-source scales in `fma_info`.
pub const MAX_SCALES: usize = 32;

/// Byte ranges of every field, written down once.
pub mod field {
    use core::ops::Range;
    /// `num_sources` (u32).
    pub const NUM_SOURCES: Range<usize> = 0..4;
    /// The 132-byte union.
    pub const UNION: Range<usize> = 4..136;
    /// `fma_info.scale_dtype` (kbin dtype, u32).
    pub const FMA_SCALE_DTYPE: Range<usize> = 4..8;
    /// `fma_info.scale[32]` (f32 each).
    pub const FMA_SCALES: Range<usize> = 8..136;
    /// `min_max_info.use_constant` (bool, one byte).
    pub const MM_USE_CONSTANT: Range<usize> = 4..5;
    /// `min_max_info.constant_dtype` (kbin dtype, u32) — aliases `fma_info.scale[0]`.
    pub const MM_CONSTANT_DTYPE: Range<usize> = 8..12;
    /// `min_max_info.constant` (u32).
    pub const MM_CONSTANT: Range<usize> = 12..16;
    /// `num_dests` (u32).
    pub const NUM_DESTS: Range<usize> = 136..140;
}

/// The struct as its 140 little-endian bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CceInfo {
    bytes: [u8; CCE_INFO_BYTES],
}

impl Default for CceInfo {
    fn default() -> Self {
        CceInfo { bytes: [0; CCE_INFO_BYTES] }
    }
}

impl CceInfo {
    /// A zeroed struct.
    pub fn new() -> Self {
        Self::default()
    }

    /// From exactly 140 bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, FormatError> {
        let bytes = bytes.try_into().map_err(|_| FormatError::ByteLength {
            what: "kbin_dma_desc_cce_info_t",
            expected: CCE_INFO_BYTES,
            got: bytes.len(),
        })?;
        Ok(CceInfo { bytes })
    }

    /// The bytes.
    pub fn as_bytes(&self) -> &[u8; CCE_INFO_BYTES] {
        &self.bytes
    }

    fn u32_at(&self, r: Range<usize>) -> u32 {
        let mut b = [0u8; 4];
        b.copy_from_slice(&self.bytes[r]);
        u32::from_le_bytes(b)
    }

    fn set_u32_at(&mut self, r: Range<usize>, v: u32) {
        self.bytes[r].copy_from_slice(&v.to_le_bytes());
    }

    fn scale_range(i: usize) -> Option<Range<usize>> {
        (i < MAX_SCALES).then(|| field::FMA_SCALES.start + 4 * i..field::FMA_SCALES.start + 4 * i + 4)
    }

    /// `num_sources`.
    pub fn num_sources(&self) -> u32 {
        self.u32_at(field::NUM_SOURCES)
    }
    /// Sets `num_sources`.
    pub fn set_num_sources(&mut self, v: u32) {
        self.set_u32_at(field::NUM_SOURCES, v)
    }
    /// `num_dests`.
    pub fn num_dests(&self) -> u32 {
        self.u32_at(field::NUM_DESTS)
    }
    /// Sets `num_dests`.
    pub fn set_num_dests(&mut self, v: u32) {
        self.set_u32_at(field::NUM_DESTS, v)
    }
    /// `fma_info.scale_dtype` (a kbin dtype value).
    pub fn scale_dtype(&self) -> u32 {
        self.u32_at(field::FMA_SCALE_DTYPE)
    }
    /// Sets `fma_info.scale_dtype`.
    pub fn set_scale_dtype(&mut self, v: u32) {
        self.set_u32_at(field::FMA_SCALE_DTYPE, v)
    }
    /// `fma_info.scale[i]` as bits, `None` past 32.
    pub fn scale_bits(&self, i: usize) -> Option<u32> {
        Self::scale_range(i).map(|r| self.u32_at(r))
    }
    /// `fma_info.scale[i]`, `None` past 32.
    pub fn scale(&self, i: usize) -> Option<f32> {
        self.scale_bits(i).map(f32::from_bits)
    }
    /// Sets `fma_info.scale[i]`; an index past 32 is an error.
    pub fn set_scale(&mut self, i: usize, v: f32) -> Result<(), FormatError> {
        let r = Self::scale_range(i).ok_or(FormatError::FieldOutOfRange {
            field: "scale index",
            value: i as u64,
            bits: 5,
        })?;
        self.set_u32_at(r, v.to_bits());
        Ok(())
    }
    /// `min_max_info.use_constant` (C `bool`: any non-zero byte is true).
    pub fn use_constant(&self) -> bool {
        self.bytes[field::MM_USE_CONSTANT.start] != 0
    }
    /// Sets `min_max_info.use_constant`.
    pub fn set_use_constant(&mut self, v: bool) {
        self.bytes[field::MM_USE_CONSTANT.start] = v as u8;
    }
    /// `min_max_info.constant_dtype` (a kbin dtype value; the same bytes as `scale[0]`).
    pub fn constant_dtype(&self) -> u32 {
        self.u32_at(field::MM_CONSTANT_DTYPE)
    }
    /// Sets `min_max_info.constant_dtype`.
    pub fn set_constant_dtype(&mut self, v: u32) {
        self.set_u32_at(field::MM_CONSTANT_DTYPE, v)
    }
    /// `min_max_info.constant`.
    pub fn constant(&self) -> u32 {
        self.u32_at(field::MM_CONSTANT)
    }
    /// Sets `min_max_info.constant`.
    pub fn set_constant(&mut self, v: u32) {
        self.set_u32_at(field::MM_CONSTANT, v)
    }
}
