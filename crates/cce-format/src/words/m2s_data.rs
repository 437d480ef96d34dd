//! The UDMA M2S (tx) data descriptor `{len_ctrl, meta_ctrl, buf_ptr}` (GAPS.md §6, MED).
//!
//! Its W0 is the shared [`LenCtrl`] and its address spans two words, so its code is written out
//! here rather than by `word!`, through the declarations.

use crate::descriptor::Descriptor;
use crate::error::FormatError;
use crate::layout::FieldKind::*;
use crate::layout::{FieldDef, Layout};
use crate::tag::Tag::*;

use super::len_ctrl::*;
use super::{FieldSource, FieldType, FromInput, check_fit};

/// M2S W1 meta_ctrl.
pub const M2S_META_CTRL: FieldDef =
    FieldDef::new("meta-ctrl", 1, 0, 32, Uint, Med, "meta_ctrl: the CCE meta-control word rides here (GAPS.md §6)");
/// M2S W2 buf_ptr low.
pub const M2S_BUF_LO: FieldDef = FieldDef::new("buf-ptr-lo", 2, 0, 32, Uint, Med, "source address, low 32 bits");
/// M2S W3 buf_ptr high.
pub const M2S_BUF_HI: FieldDef = FieldDef::new("buf-ptr-hi", 3, 0, 32, Uint, Med, "source address, high 32 bits");
/// The M2S (tx) data descriptor.
pub const M2S_DATA: Layout = Layout {
    name: "m2s-data",
    words: 4,
    fixed: [0; 4],
    fixed_tag: Med,
    fields: &[
        LC_LENGTH,
        LC_META,
        LC_RING_ID,
        LC_FIRST,
        LC_LAST,
        LC_INT_EN,
        LC_DMB,
        LC_CONCAT,
        M2S_META_CTRL,
        M2S_BUF_LO,
        M2S_BUF_HI,
    ],
    source: "UDMA M2S descriptor {len_ctrl, meta_ctrl, buf_ptr} (GAPS.md §6)",
};

/// The UDMA M2S (tx) data descriptor: `{len_ctrl, meta_ctrl, buf_ptr}`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct M2sDataDescriptor {
    /// W0.
    pub len_ctrl: LenCtrl,
    /// The meta-control word (a CCE meta-control word on a compute packet).
    pub meta_ctrl: u32,
    /// Source address.
    pub buf_ptr: u64,
}

impl M2sDataDescriptor {
    /// The byte count a len_ctrl word stands for (its `[15:0]`, 0 = 65536).
    pub const fn parse_len(len_ctrl: u32) -> u32 {
        match LC_LENGTH.span.get(len_ctrl) {
            0 => MAX_DATA_DESC_BYTES,
            n => n,
        }
    }
}

/// A 64-bit address from its low and high words' fields.
#[inline]
pub(crate) const fn join_address(lo: &FieldDef, hi: &FieldDef, words: &[u32; 4]) -> u64 {
    (hi.span.get(words[hi.word as usize]) as u64) << 32 | lo.span.get(words[lo.word as usize]) as u64
}

/// A 64-bit address placed in its low and high words' fields.
#[inline]
pub(crate) const fn split_address(lo: &FieldDef, hi: &FieldDef, address: u64, words: &mut [u32; 4]) {
    words[lo.word as usize] |= lo.place(address as u32);
    words[hi.word as usize] |= hi.place((address >> 32) as u32);
}

/// A 64-bit address from named low and high values.
pub(crate) fn address_input(lo: &FieldDef, hi: &FieldDef, values: &dyn FieldSource) -> Result<u64, FormatError> {
    let half = |def: &FieldDef| u32::from_input(def, values.value(def.name));
    Ok((half(hi)? as u64) << 32 | half(lo)? as u64)
}

impl Descriptor for M2sDataDescriptor {
    const LAYOUT: &'static Layout = &M2S_DATA;
    fn emit(&self) -> [u32; 4] {
        // Strong-order is an S2M flag: it is not written on M2S (documented on `LenCtrl`).
        let mut w = [self.len_ctrl.emit() & !LC_SOW.span.mask(), M2S_META_CTRL.place(self.meta_ctrl), 0, 0];
        split_address(&M2S_BUF_LO, &M2S_BUF_HI, self.buf_ptr, &mut w);
        w
    }
    fn parse(words: [u32; 4]) -> Result<Self, FormatError> {
        // Bit 29 (strong-order) is an S2M flag; the M2S layout leaves it unexplained.
        check_fit(Self::LAYOUT, &words)?;
        Ok(M2sDataDescriptor {
            len_ctrl: LenCtrl::parse(&words),
            meta_ctrl: M2S_META_CTRL.get(&words),
            buf_ptr: join_address(&M2S_BUF_LO, &M2S_BUF_HI, &words),
        })
    }
}

impl FromInput for M2sDataDescriptor {
    fn from_input(values: &dyn FieldSource) -> Result<Self, FormatError> {
        Ok(M2sDataDescriptor {
            len_ctrl: LenCtrl::from_input(values, false)?,
            meta_ctrl: u32::from_input(&M2S_META_CTRL, values.value(M2S_META_CTRL.name))?,
            buf_ptr: address_input(&M2S_BUF_LO, &M2S_BUF_HI, values)?,
        })
    }
}
