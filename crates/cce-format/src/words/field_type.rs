//! How a typed field's value turns into its bits and back, and how a named input value is
//! range-checked into it. One impl per Rust type a word's field can have.

use crate::bits::UInt;
use crate::descriptor::FmaOperand;
use crate::dtype::SdmaDtype;
use crate::error::FormatError;
use crate::layout::{FieldDef, FieldKind};

/// A Rust type a declared field holds.
pub trait FieldType: Sized + Copy {
    /// The field's raw value (unplaced) for `def`.
    fn to_bits(self, def: &FieldDef) -> u32;
    /// The typed value of a field's raw bits (already masked to its span).
    fn from_bits(bits: u32) -> Self;
    /// A user's value for the field, refused with the field's name when it does not fit.
    fn from_input(def: &FieldDef, value: u64) -> Result<Self, FormatError>;
}

impl FieldType for bool {
    /// A [`Pattern`](FieldKind::Pattern) flag sets every bit of its span; any other flag one.
    #[inline]
    fn to_bits(self, def: &FieldDef) -> u32 {
        match (self, def.kind) {
            (false, _) => 0,
            (true, FieldKind::Pattern) => def.span.max(),
            (true, _) => 1,
        }
    }
    #[inline]
    fn from_bits(bits: u32) -> Self {
        bits != 0
    }
    fn from_input(def: &FieldDef, value: u64) -> Result<Self, FormatError> {
        Ok(UInt::<1>::new(def.name, value)?.get() == 1)
    }
}

impl<const B: u8> FieldType for UInt<B> {
    #[inline]
    fn to_bits(self, _: &FieldDef) -> u32 {
        self.get()
    }
    #[inline]
    fn from_bits(bits: u32) -> Self {
        UInt::masked(bits)
    }
    fn from_input(def: &FieldDef, value: u64) -> Result<Self, FormatError> {
        UInt::new(def.name, value)
    }
}

impl FieldType for u32 {
    #[inline]
    fn to_bits(self, _: &FieldDef) -> u32 {
        self
    }
    #[inline]
    fn from_bits(bits: u32) -> Self {
        bits
    }
    fn from_input(def: &FieldDef, value: u64) -> Result<Self, FormatError> {
        Ok(UInt::<32>::new(def.name, value)?.get())
    }
}

impl FieldType for SdmaDtype {
    #[inline]
    fn to_bits(self, _: &FieldDef) -> u32 {
        self.value()
    }
    #[inline]
    fn from_bits(bits: u32) -> Self {
        SdmaDtype::from_nibble(bits)
    }
    fn from_input(def: &FieldDef, value: u64) -> Result<Self, FormatError> {
        Ok(SdmaDtype::from_nibble(UInt::<4>::new(def.name, value)?.get()))
    }
}

impl FieldType for FmaOperand {
    #[inline]
    fn to_bits(self, _: &FieldDef) -> u32 {
        self.bits()
    }
    #[inline]
    fn from_bits(bits: u32) -> Self {
        FmaOperand::from_bits(bits)
    }
    fn from_input(def: &FieldDef, value: u64) -> Result<Self, FormatError> {
        Ok(FmaOperand::from_bits(UInt::<2>::new(def.name, value)?.get()))
    }
}
