//! The UDMA data descriptors' `len_ctrl` word (W0), which the M2S and S2M descriptors share
//! (GAPS.md §6, the public layout; MED): its fields, declared once, and [`LenCtrl`].

use crate::bits::{U2, U16, UInt};
use crate::error::FormatError;
use crate::layout::FieldDef;
use crate::layout::FieldKind::*;
use crate::tag::Tag::*;

use super::{FieldSource, FieldType, flag};

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
/// len_ctrl bit 30 DMB.
pub const LC_DMB: FieldDef = FieldDef::new("dmb", 0, 30, 1, Flag, Med, "data memory barrier (UDMA len_ctrl)");
/// len_ctrl bit 31 CONCAT.
pub const LC_CONCAT: FieldDef =
    FieldDef::new("concat", 0, 31, 1, Flag, Med, "concatenate with the next descriptor (UDMA len_ctrl)");

/// Largest byte count one data descriptor carries (UDMA `MAX_DMA_DESC_SIZE`).
pub const MAX_DATA_DESC_BYTES: u32 = 65_536;

/// The `len_ctrl` word of a UDMA data descriptor (GAPS.md §6, MED).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[allow(missing_docs)]
pub struct LenCtrl {
    /// The 16-bit length field; 0 means 65536 bytes.
    pub length_field: U16,
    pub meta: bool,
    pub ring_id: U2,
    pub first: bool,
    pub last: bool,
    pub int_en: bool,
    /// STRONG_ORDER_WR: S2M only (v3+). M2S emit leaves bit 29 clear; M2S parse refuses it.
    pub strong_order: bool,
    pub dmb: bool,
    pub concat: bool,
}

impl LenCtrl {
    /// The byte count the length field stands for (1..=65536).
    pub const fn byte_len(&self) -> u32 {
        match self.length_field.get() {
            0 => MAX_DATA_DESC_BYTES,
            n => n,
        }
    }

    /// Sets the length from a byte count in 1..=65536 (65536 is written as 0).
    pub fn with_byte_len(mut self, bytes: u64) -> Result<Self, FormatError> {
        if bytes == 0 || bytes > MAX_DATA_DESC_BYTES as u64 {
            return Err(FormatError::DescriptorLength(bytes));
        }
        self.length_field = U16::masked(bytes as u32);
        Ok(self)
    }

    pub(crate) fn emit(&self) -> u32 {
        LC_LENGTH.place(self.length_field.get())
            | LC_META.place(self.meta as u32)
            | LC_RING_ID.place(self.ring_id.get())
            | LC_FIRST.place(self.first as u32)
            | LC_LAST.place(self.last as u32)
            | LC_INT_EN.place(self.int_en as u32)
            | LC_SOW.place(self.strong_order as u32)
            | LC_DMB.place(self.dmb as u32)
            | LC_CONCAT.place(self.concat as u32)
    }

    pub(crate) fn parse(words: &[u32]) -> LenCtrl {
        LenCtrl {
            length_field: U16::masked(LC_LENGTH.get(words)),
            meta: flag(&LC_META, words),
            ring_id: U2::masked(LC_RING_ID.get(words)),
            first: flag(&LC_FIRST, words),
            last: flag(&LC_LAST, words),
            int_en: flag(&LC_INT_EN, words),
            strong_order: flag(&LC_SOW, words),
            dmb: flag(&LC_DMB, words),
            concat: flag(&LC_CONCAT, words),
        }
    }
}

impl LenCtrl {
    /// A `len_ctrl` from named values, each checked against its field; `strong_order` is read
    /// only where the word declares it (S2M), else left clear.
    pub(crate) fn from_input(values: &dyn FieldSource, with_strong_order: bool) -> Result<Self, FormatError> {
        let get = |def: &FieldDef| values.value(def.name);
        let flag = |def: &FieldDef| bool::from_input(def, get(def));
        Ok(LenCtrl {
            length_field: UInt::from_input(&LC_LENGTH, get(&LC_LENGTH))?,
            meta: flag(&LC_META)?,
            ring_id: UInt::from_input(&LC_RING_ID, get(&LC_RING_ID))?,
            first: flag(&LC_FIRST)?,
            last: flag(&LC_LAST)?,
            int_en: flag(&LC_INT_EN)?,
            strong_order: with_strong_order && flag(&LC_SOW)?,
            dmb: flag(&LC_DMB)?,
            concat: flag(&LC_CONCAT)?,
        })
    }
}
