//! The replication descriptor, `al_sdma_m2s_build_replication_descriptor` @0x451b10: W1 is
//! the replication meta-control word (study §2.5 and the companion chapter); W0 (FMA frame), W2
//! (more-bit) and W3 (the EXT meta-control word that tags the combo packet) are MODEL.
//!
//! Like the replication word, its W1 bit 26 is implied by the mode, so its code is written out
//! here, through the declarations.

use crate::bits::{U3, U8, U16, U23, UInt};
use crate::descriptor::Descriptor;
use crate::error::FormatError;
use crate::layout::FieldKind::*;
use crate::layout::{FieldDef, Layout};
use crate::meta_ctrl::{MetaCtrl, ReplicationMetaCtrl};
use crate::tag::Tag::*;

use super::replication_meta_ctrl::ReplicationFields;
use super::{
    COMPUTE_W0, D_META_IDX_MODEL, D_MORE, D_WB_MODEL, FieldSource, FieldType, FromInput, REPLICATION_META_CTRL,
    check_fit, flag,
};

/// Replication descriptor W1: the replication meta-control word's count.
pub const REP_D_COUNT: FieldDef =
    FieldDef::new("count", 1, 0, 16, Uint, Med, "W1 [15:0] replication count (companion chapter)");
/// Replication descriptor W1 bit 26.
pub const REP_D_EXT: FieldDef =
    FieldDef::new("ext", 1, 26, 1, Implied, High, "W1 0x4000000 of 0x4A00000, set iff mode != 0 (study §2.5)");
/// Replication descriptor W1 `[31:29]`.
pub const REP_D_MODE: FieldDef = FieldDef::new("mode", 1, 29, 3, Uint, High, "W1 mode << 29 (study §2.5)");
/// Replication descriptor W3: the EXT meta-control word that tags a combo packet.
pub const REP_D_EXT_META: FieldDef = FieldDef::new(
    "ext-meta",
    3,
    0,
    32,
    Uint,
    Model,
    "W3: the EXT (0x2400000) meta-control word tagging the combo packet (MODEL; study §5.1)",
);
/// The replication descriptor.
pub const REPLICATION_DESCRIPTOR: Layout = Layout {
    name: "replication-descriptor",
    words: 4,
    fixed: [COMPUTE_W0, REPLICATION_META_CTRL.fixed[0], 0, 0],
    fixed_tag: Model,
    fields: &[D_WB_MODEL, D_META_IDX_MODEL, REP_D_COUNT, REP_D_EXT, REP_D_MODE, D_MORE, REP_D_EXT_META],
    source: "al_sdma_m2s_build_replication_descriptor @0x451b10 (study §2.5; W1 = replication meta-control, W0/W2/W3 MODEL)",
};

const W1: ReplicationFields = ReplicationFields { count: &REP_D_COUNT, ext: &REP_D_EXT, mode: &REP_D_MODE };

/// The replication descriptor: W1 is the replication meta-control word (study §2.5 and the
/// companion chapter); W0 (FMA frame), W2 (more-bit) and W3 (the EXT meta-control word that
/// tags the combo packet) are MODEL.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReplicationDescriptor {
    /// MODEL: the meta index, as in the FMA frame.
    pub meta_idx: U8,
    /// MODEL: the write-back argument, as in the FMA frame.
    pub wb: U23,
    /// Replication mode.
    pub mode: U3,
    /// Replication count.
    pub count: U16,
    /// MODEL: more descriptors of this combo follow (W2 bit 30).
    pub more: bool,
    /// MODEL: the EXT meta-control word tagging the combo (W3).
    pub ext_meta: u32,
}

impl Descriptor for ReplicationDescriptor {
    const LAYOUT: &'static Layout = &REPLICATION_DESCRIPTOR;
    fn emit(&self) -> [u32; 4] {
        [
            COMPUTE_W0 | D_WB_MODEL.place(self.wb.get()) | D_META_IDX_MODEL.place(self.meta_idx.get()),
            ReplicationMetaCtrl { mode: self.mode, count: self.count }.emit(),
            D_MORE.place(self.more as u32),
            REP_D_EXT_META.place(self.ext_meta),
        ]
    }
    fn parse(words: [u32; 4]) -> Result<Self, FormatError> {
        check_fit(Self::LAYOUT, &words)?;
        let rep = ReplicationMetaCtrl::from_fields(&W1, Self::LAYOUT, &words)?;
        Ok(ReplicationDescriptor {
            meta_idx: U8::masked(D_META_IDX_MODEL.get(&words)),
            wb: U23::masked(D_WB_MODEL.get(&words)),
            mode: rep.mode,
            count: rep.count,
            more: flag(&D_MORE, &words),
            ext_meta: REP_D_EXT_META.get(&words),
        })
    }
}

impl FromInput for ReplicationDescriptor {
    fn from_input(values: &dyn FieldSource) -> Result<Self, FormatError> {
        let get = |def: &FieldDef| values.value(def.name);
        let rep = ReplicationMetaCtrl::from_named(&W1, values)?;
        Ok(ReplicationDescriptor {
            meta_idx: UInt::from_input(&D_META_IDX_MODEL, get(&D_META_IDX_MODEL))?,
            wb: UInt::from_input(&D_WB_MODEL, get(&D_WB_MODEL))?,
            mode: rep.mode,
            count: rep.count,
            more: bool::from_input(&D_MORE, get(&D_MORE))?,
            ext_meta: u32::from_input(&REP_D_EXT_META, get(&REP_D_EXT_META))?,
        })
    }
}
