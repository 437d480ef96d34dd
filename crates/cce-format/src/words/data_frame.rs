//! The frame both UDMA data descriptors share (GAPS.md §6): W0 the [`LenCtrl`], W1 one 32-bit
//! word (M2S `meta_ctrl`, S2M `buf2_ptr_lo`), W2–W3 a 64-bit address. Written, read and taken
//! from named values here, once for both: a [`DataDescriptor`] gets its [`Descriptor`] and
//! [`FromInput`] from its frame.

use crate::descriptor::Descriptor;
use crate::error::FormatError;
use crate::layout::{FieldDef, Layout};

use super::len_ctrl::LenCtrl;
use super::{FieldSource, FieldType, FromInput, check_fit};

/// A 64-bit address from its low and high words' fields.
#[inline]
pub(crate) const fn join_address(lo: &FieldDef, hi: &FieldDef, words: &[u32; 4]) -> u64 {
    (hi.span.get(words[hi.word as usize]) as u64) << 32 | lo.span.get(words[lo.word as usize]) as u64
}

/// A 64-bit address placed in its low and high words' fields.
#[inline]
const fn split_address(lo: &FieldDef, hi: &FieldDef, address: u64, words: &mut [u32; 4]) {
    words[lo.word as usize] |= lo.place(address as u32);
    words[hi.word as usize] |= hi.place((address >> 32) as u32);
}

/// A 64-bit address from named low and high values.
fn address_input(lo: &FieldDef, hi: &FieldDef, values: &dyn FieldSource) -> Result<u64, FormatError> {
    let half = |def: &FieldDef| u32::from_input(def, values.value(def.name));
    Ok((half(hi)? as u64) << 32 | half(lo)? as u64)
}

/// One data descriptor's frame: the fields of its W1 and of its address's halves.
pub(crate) struct DataFrame {
    /// W1's field.
    pub(crate) word1: &'static FieldDef,
    /// The address's low half (W2).
    pub(crate) address_lo: &'static FieldDef,
    /// The address's high half (W3).
    pub(crate) address_hi: &'static FieldDef,
    /// Whether it is the S2M (rx) descriptor, whose `len_ctrl` takes other flags.
    pub(crate) s2m: bool,
}

/// A data descriptor's parts, as its frame holds them.
pub(crate) struct DataParts {
    /// W0.
    pub(crate) len_ctrl: LenCtrl,
    /// W1.
    pub(crate) word1: u32,
    /// W2–W3.
    pub(crate) address: u64,
}

impl DataFrame {
    /// The four words: `len_ctrl` as given (already emitted), then W1 and the address.
    pub(crate) const fn emit(&self, len_ctrl: u32, word1: u32, address: u64) -> [u32; 4] {
        let mut words = [len_ctrl, self.word1.place(word1), 0, 0];
        split_address(self.address_lo, self.address_hi, address, &mut words);
        words
    }

    /// The parts of `words`, refused when a bit lies outside `layout`.
    pub(crate) fn parse(&self, layout: &Layout, words: &[u32; 4]) -> Result<DataParts, FormatError> {
        check_fit(layout, words)?;
        Ok(DataParts {
            len_ctrl: LenCtrl::parse(words),
            word1: self.word1.get(words),
            address: join_address(self.address_lo, self.address_hi, words),
        })
    }

    /// The parts from named values.
    pub(crate) fn parts_of(&self, values: &dyn FieldSource) -> Result<DataParts, FormatError> {
        Ok(DataParts {
            len_ctrl: LenCtrl::from_input(values, self.s2m)?,
            word1: u32::from_input(self.word1, values.value(self.word1.name))?,
            address: address_input(self.address_lo, self.address_hi, values)?,
        })
    }
}

/// A UDMA data descriptor, told by its frame.
pub(crate) trait DataDescriptor: Sized {
    /// Its layout.
    const DATA_LAYOUT: &'static Layout;
    /// Its frame.
    const FRAME: DataFrame;
    /// W0 as it is written, W1, and the address.
    fn words(&self) -> (u32, u32, u64);
    /// The descriptor its frame's parts make.
    fn from_parts(parts: DataParts) -> Self;
}

impl<T: DataDescriptor> Descriptor for T {
    const LAYOUT: &'static Layout = T::DATA_LAYOUT;
    fn emit(&self) -> [u32; 4] {
        let (len_ctrl, word1, address) = self.words();
        T::FRAME.emit(len_ctrl, word1, address)
    }
    fn parse(words: [u32; 4]) -> Result<Self, FormatError> {
        T::FRAME.parse(T::DATA_LAYOUT, &words).map(T::from_parts)
    }
}

impl<T: DataDescriptor> FromInput for T {
    fn from_input(values: &dyn FieldSource) -> Result<Self, FormatError> {
        T::FRAME.parts_of(values).map(T::from_parts)
    }
}
