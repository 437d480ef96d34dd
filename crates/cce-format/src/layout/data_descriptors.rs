//! The UDMA data descriptors' fields and layouts (GAPS.md §6, the public layout).

use super::FieldKind::*;
use super::{FieldDef, Layout};
use crate::tag::Tag::*;

/// len_ctrl `[15:0]` length; 0 means 65536.
pub const LC_LENGTH: FieldDef = FieldDef::new("length", 0, 0, 16, Uint, Med, "byte length, 0 = 65536 (UDMA len_ctrl)");
/// len_ctrl bit 23 META.
pub const LC_META: FieldDef =
    FieldDef::new("meta", 0, 23, 1, Flag, Med, "META_DATA: a meta descriptor (UDMA len_ctrl)");
/// len_ctrl `[25:24]` ring id.
pub const LC_RING_ID: FieldDef =
    FieldDef::new("ring-id", 0, 24, 2, Uint, Med, "ring-id / phase, changes on wrap (UDMA len_ctrl)");
/// len_ctrl bit 26 FIRST.
pub const LC_FIRST: FieldDef =
    FieldDef::new("first", 0, 26, 1, Flag, Med, "FIRST descriptor of a packet (UDMA len_ctrl)");
/// len_ctrl bit 27 LAST.
pub const LC_LAST: FieldDef = FieldDef::new("last", 0, 27, 1, Flag, Med, "LAST descriptor of a packet (UDMA len_ctrl)");
/// len_ctrl bit 28 INT_EN.
pub const LC_INT_EN: FieldDef = FieldDef::new("int-en", 0, 28, 1, Flag, Med, "interrupt on completion (UDMA len_ctrl)");
/// S2M len_ctrl bit 29: STRONG_ORDER_WR (v3+) in the companion chapter, NO_SNOOP_H in the
/// Annapurna HAL (docs/MODEL.md P15).
pub const LC_SOW: FieldDef = FieldDef::new(
    "strong-order",
    0,
    29,
    1,
    Flag,
    Model,
    "S2M bit 29: STRONG_ORDER_WR v3+ (companion chapter; the driver's SOW) / NO_SNOOP_H (Annapurna HAL); read as strong-order (MODEL P15)",
);
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
/// len_ctrl bit 30 DMB.
pub const LC_DMB: FieldDef = FieldDef::new("dmb", 0, 30, 1, Flag, Med, "data memory barrier (UDMA len_ctrl)");
/// len_ctrl bit 31 CONCAT.
pub const LC_CONCAT: FieldDef =
    FieldDef::new("concat", 0, 31, 1, Flag, Med, "concatenate with the next descriptor (UDMA len_ctrl)");
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
