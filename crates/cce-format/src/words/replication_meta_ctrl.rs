//! The replication meta-control word, `al_sdma_m2s_build_replication_meta_ctrl` @0x451b00: the
//! study gives "when its mode arg is set, ORs 0x4a00000 | (mode << 29)" (HIGH); the companion
//! chapter gives the base `0xA00000` with the count in `[15:0]` (MED). Their composition is
//! MODEL: base | count, plus the ext bit and `mode << 29` when mode is non-zero.
//!
//! Its bit 26 is implied by the mode rather than set on its own, so the struct and its code are
//! written out here instead of by `word!`, through the same declarations.

use crate::bits::{U3, U16, UInt};
use crate::error::FormatError;
use crate::layout::FieldKind::*;
use crate::layout::{FieldDef, Layout};
use crate::meta_ctrl::MetaCtrl;
use crate::tag::Tag::*;

use super::{FieldSource, FieldType, FromInput, check_fit, flag, mismatch};

/// Replication `[15:0]` count.
pub const REP_MC_COUNT: FieldDef =
    FieldDef::new("count", 0, 0, 16, Uint, Med, "replication count [15:0] (companion chapter 'Meta-Control Overlays')");
/// Replication bit 26: set together with a non-zero mode.
pub const REP_MC_EXT: FieldDef =
    FieldDef::new("ext", 0, 26, 1, Implied, High, "the 0x4000000 of 0x4A00000, set iff mode != 0 (study §2.5)");
/// Replication `[31:29]` mode.
pub const REP_MC_MODE: FieldDef =
    FieldDef::new("mode", 0, 29, 3, Uint, High, "mode << 29, ORed with 0x4A00000 when mode != 0 (study §2.5)");
/// Replication meta-control: base `0xA00000` (companion), mode formula (study §2.5).
pub const REPLICATION_META_CTRL: Layout = Layout {
    name: "replication-meta-ctrl",
    words: 1,
    fixed: [0x00A0_0000, 0, 0, 0],
    fixed_tag: Med,
    fields: &[REP_MC_COUNT, REP_MC_EXT, REP_MC_MODE],
    source: "al_sdma_m2s_build_replication_meta_ctrl @0x451b00 (study §2.5; base and count: companion chapter; composition MODEL)",
};

/// Replication meta-control (base `0xA00000`; see [`raw::replication_meta_ctrl`](crate::meta_ctrl::raw::replication_meta_ctrl)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReplicationMetaCtrl {
    /// Mode `[31:29]`; non-zero sets the ext bit too.
    pub mode: U3,
    /// Replication count `[15:0]`.
    pub count: U16,
}

/// A word's (or a replication descriptor's W1's) count, ext and mode fields.
pub(crate) struct ReplicationFields {
    pub(crate) count: &'static FieldDef,
    pub(crate) ext: &'static FieldDef,
    pub(crate) mode: &'static FieldDef,
}

impl ReplicationMetaCtrl {
    /// Reads the fields, refusing an ext bit that disagrees with the mode.
    pub(crate) fn from_fields(
        defs: &ReplicationFields,
        layout: &'static Layout,
        words: &[u32],
    ) -> Result<Self, FormatError> {
        let m = defs.mode.get(words);
        if (m != 0) != flag(defs.ext, words) {
            return Err(mismatch(
                layout,
                defs.ext.word,
                "has the 0x4000000 bit disagreeing with the mode",
                defs.ext.place(1),
            ));
        }
        Ok(ReplicationMetaCtrl { mode: U3::masked(m), count: U16::masked(defs.count.get(words)) })
    }

    /// Mode and count from named values.
    pub(crate) fn from_named(defs: &ReplicationFields, values: &dyn FieldSource) -> Result<Self, FormatError> {
        Ok(ReplicationMetaCtrl {
            mode: UInt::from_input(defs.mode, values.value(defs.mode.name))?,
            count: UInt::from_input(defs.count, values.value(defs.count.name))?,
        })
    }
}

const FIELDS: ReplicationFields = ReplicationFields { count: &REP_MC_COUNT, ext: &REP_MC_EXT, mode: &REP_MC_MODE };

impl MetaCtrl for ReplicationMetaCtrl {
    const LAYOUT: &'static Layout = &REPLICATION_META_CTRL;
    fn emit(&self) -> u32 {
        crate::meta_ctrl::raw::replication_meta_ctrl(self.mode.get(), self.count.get())
    }
    fn parse(word: u32) -> Result<Self, FormatError> {
        let w = [word];
        check_fit(Self::LAYOUT, &w)?;
        Self::from_fields(&FIELDS, Self::LAYOUT, &w)
    }
}

impl FromInput for ReplicationMetaCtrl {
    fn from_input(values: &dyn FieldSource) -> Result<Self, FormatError> {
        Self::from_named(&FIELDS, values)
    }
}
