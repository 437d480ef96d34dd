//! The UDMA S2M (rx) data descriptor `{len_ctrl, buf2_ptr_lo, buf1_ptr}` (GAPS.md §6, MED),
//! with the `len_ctrl` bits the sources read differently on S2M (docs/MODEL.md P8, P15).

use crate::layout::FieldKind::*;
use crate::layout::{FieldDef, Layout};
use crate::tag::Tag::*;

use super::data_frame::{DataDescriptor, DataFrame, DataParts};
use super::len_ctrl::*;

/// The S2M len_ctrl bits the sources read differently (docs/MODEL.md P15): bit, then the
/// readings, for listings to show beside the field when the bit is set.
pub const S2M_BIT_READINGS: [(u8, &str); 3] = [
    (27, "LAST (companion chapter) | FLUSH (Annapurna HAL)"),
    (29, "STRONG_ORDER_WR v3+ (companion chapter) | NO_SNOOP_H (Annapurna HAL)"),
    (31, "CONCAT (companion chapter) | DUAL_BUF (Annapurna HAL)"),
];
/// S2M len_ctrl bit 26: FIRST on M2S; the driver's S2M never sets it.
pub const S2M_FIRST: FieldDef = FieldDef::new(
    "first",
    0,
    26,
    1,
    Flag,
    Model,
    "S2M bit 26: not set by the driver's S2M (GAPS.md §12; cce ring dumps v1 set FIRST here); refused (MODEL P8)",
);
/// S2M len_ctrl bit 27: LAST in the companion chapter, FLUSH in the Annapurna HAL.
pub const S2M_LAST: FieldDef = FieldDef::new(
    "last",
    0,
    27,
    1,
    Flag,
    Model,
    "S2M bit 27: LAST (companion chapter; cce ring dumps v1) / FLUSH (Annapurna HAL); the driver sets neither; refused (MODEL P15)",
);
/// S2M len_ctrl bit 30: DMB is an M2S flag.
pub const S2M_DMB: FieldDef = FieldDef::new(
    "dmb",
    0,
    30,
    1,
    Flag,
    Model,
    "S2M bit 30: DMB is an M2S flag; the driver never sets it on S2M; refused (MODEL P8)",
);
/// S2M len_ctrl bit 31: CONCAT in the companion chapter, DUAL_BUF in the Annapurna HAL.
pub const S2M_CONCAT: FieldDef = FieldDef::new(
    "concat",
    0,
    31,
    1,
    Flag,
    Model,
    "S2M bit 31: CONCAT (companion chapter) / DUAL_BUF (Annapurna HAL); the driver sets neither; refused (MODEL P15)",
);
/// S2M W1 buf2_ptr_lo.
pub const S2M_BUF2_LO: FieldDef =
    FieldDef::new("buf2-ptr-lo", 1, 0, 32, Uint, Med, "second buffer, low 32 bits; 0 on M2M");
/// S2M W2 buf1_ptr low.
pub const S2M_BUF1_LO: FieldDef = FieldDef::new("buf1-ptr-lo", 2, 0, 32, Uint, Med, "destination address, low 32 bits");
/// S2M W3 buf1_ptr high.
pub const S2M_BUF1_HI: FieldDef =
    FieldDef::new("buf1-ptr-hi", 3, 0, 32, Uint, Med, "destination address, high 32 bits");
/// The S2M (rx) data descriptor.
pub const S2M_DATA: Layout = Layout {
    name: "s2m-data",
    words: 4,
    fixed: [0; 4],
    fixed_tag: Med,
    fields: &[
        LC_LENGTH,
        LC_META,
        LC_RING_ID,
        S2M_FIRST,
        S2M_LAST,
        LC_INT_EN,
        LC_SOW,
        S2M_DMB,
        S2M_CONCAT,
        S2M_BUF2_LO,
        S2M_BUF1_LO,
        S2M_BUF1_HI,
    ],
    source: "UDMA S2M descriptor {len_ctrl, buf2_ptr_lo, buf1_ptr} (GAPS.md §6); the public driver sets only length, ring id and INT_EN (GAPS.md §12)",
};

/// The UDMA S2M (rx) data descriptor: `{len_ctrl, buf2_ptr_lo, buf1_ptr}`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct S2mDataDescriptor {
    /// W0.
    pub len_ctrl: LenCtrl,
    /// Second buffer pointer, low half; zero on memory-to-memory transfers.
    pub buf2_ptr_lo: u32,
    /// Destination address.
    pub buf1_ptr: u64,
}

impl DataDescriptor for S2mDataDescriptor {
    const DATA_LAYOUT: &'static Layout = &S2M_DATA;
    const FRAME: DataFrame =
        DataFrame { word1: &S2M_BUF2_LO, address_lo: &S2M_BUF1_LO, address_hi: &S2M_BUF1_HI, s2m: true };
    fn words(&self) -> (u32, u32, u64) {
        (self.len_ctrl.emit(), self.buf2_ptr_lo, self.buf1_ptr)
    }
    fn from_parts(p: DataParts) -> Self {
        S2mDataDescriptor { len_ctrl: p.len_ctrl, buf2_ptr_lo: p.word1, buf1_ptr: p.address }
    }
}
