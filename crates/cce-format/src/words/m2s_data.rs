//! The UDMA M2S (tx) data descriptor `{len_ctrl, meta_ctrl, buf_ptr}` (GAPS.md §6, MED).
//!
//! Its W0 is the shared [`LenCtrl`] and its address spans two words, so its code is written out
//! here rather than by `word!`, through the declarations.

use crate::layout::FieldKind::*;
use crate::layout::{FieldDef, Layout};
use crate::tag::Tag::*;

use super::data_frame::{DataDescriptor, DataFrame, DataParts};
use super::len_ctrl::*;

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

impl DataDescriptor for M2sDataDescriptor {
    const DATA_LAYOUT: &'static Layout = &M2S_DATA;
    const FRAME: DataFrame =
        DataFrame { word1: &M2S_META_CTRL, address_lo: &M2S_BUF_LO, address_hi: &M2S_BUF_HI, s2m: false };
    /// Strong-order is an S2M flag: it is not written on M2S (documented on `LenCtrl`), and
    /// parsing leaves it unexplained (the M2S layout has no bit 29).
    fn words(&self) -> (u32, u32, u64) {
        (self.len_ctrl.emit() & !LC_SOW.span.mask(), self.meta_ctrl, self.buf_ptr)
    }
    fn from_parts(p: DataParts) -> Self {
        M2sDataDescriptor { len_ctrl: p.len_ctrl, meta_ctrl: p.word1, buf_ptr: p.address }
    }
}
