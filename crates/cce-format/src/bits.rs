//! Bit spans inside 32-bit words, and integers that are known to fit a field.
//!
//! A [`BitSpan`] is a layout written down once, as data; encoders place values through it and
//! decoders read them back through the same definition. A [`UInt<BITS>`] is a value checked
//! against its width when it is made, so an out-of-range field cannot be represented.

use crate::error::FormatError;

/// A contiguous run of `width` bits starting at bit `lo` of a 32-bit word.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BitSpan {
    /// Lowest bit.
    pub lo: u8,
    /// Number of bits (1..=32).
    pub width: u8,
}

impl BitSpan {
    /// A span of `width` bits at `lo`. Panics at compile time (const contexts) if it leaves the
    /// word; every span in this crate is a `const`.
    pub const fn new(lo: u8, width: u8) -> Self {
        assert!(width >= 1 && lo as u32 + width as u32 <= 32);
        BitSpan { lo, width }
    }

    /// Highest bit.
    pub const fn hi(self) -> u8 {
        self.lo + self.width - 1
    }

    /// Largest value the span holds.
    pub const fn max(self) -> u32 {
        ((1u64 << self.width) - 1) as u32
    }

    /// The span's bits in place.
    pub const fn mask(self) -> u32 {
        self.max() << self.lo
    }

    /// Reads the field from a word.
    pub const fn get(self, word: u32) -> u32 {
        (word >> self.lo) & self.max()
    }

    /// `value` masked to the width and moved into place, as the runtime's encoders do.
    pub const fn place(self, value: u32) -> u32 {
        (value & self.max()) << self.lo
    }

    /// `value` moved into place without masking, as the runtime's encoders do for the
    /// arguments they do not mask (bits beyond the span spill into the word's higher bits).
    pub const fn shift(self, value: u32) -> u32 {
        value << self.lo
    }

    /// Whether `value` fits the span without masking.
    pub const fn fits(self, value: u64) -> bool {
        value <= self.max() as u64
    }
}

/// An unsigned integer known to fit `BITS` bits (1..=32).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct UInt<const BITS: u8>(u32);

impl<const BITS: u8> UInt<BITS> {
    /// Largest representable value.
    pub const MAX: u32 = ((1u64 << BITS) - 1) as u32;
    /// Zero.
    pub const ZERO: Self = UInt(0);

    /// Checks `value` against the width; the error names `field` and its range.
    pub fn new(field: &'static str, value: u64) -> Result<Self, FormatError> {
        if value <= Self::MAX as u64 {
            Ok(UInt(value as u32))
        } else {
            Err(FormatError::FieldOutOfRange { field, value, bits: BITS })
        }
    }

    /// Keeps the low `BITS` bits of `value` (for decoders, which read exactly that many bits).
    pub const fn masked(value: u32) -> Self {
        UInt(value & Self::MAX)
    }

    /// The value.
    pub const fn get(self) -> u32 {
        self.0
    }
}

impl<const BITS: u8> From<UInt<BITS>> for u32 {
    fn from(v: UInt<BITS>) -> u32 {
        v.0
    }
}

/// A 3-bit sub-op selector.
pub type U3 = UInt<3>;
/// A 2-bit field.
pub type U2 = UInt<2>;
/// A 5-bit field.
pub type U5 = UInt<5>;
/// An 8-bit field.
pub type U8 = UInt<8>;
/// A 16-bit field.
pub type U16 = UInt<16>;
/// The 23-bit write-back field of W0.
pub type U23 = UInt<23>;
/// A 24-bit length or semaphore field.
pub type U24 = UInt<24>;
