//! The ADD meta-control word, `al_sdma_m2s_build_add_meta_ctrl` @0x451b80 (study §2.6).

use crate::bits::U3;
use crate::dtype::SdmaDtype;
use crate::layout::FieldDef;
use crate::layout::FieldKind::*;
use crate::tag::Tag::*;

use super::{MC_ACCUM_DT, MC_OUT_DT, MC_SUB, MC_WRITE_BARRIER, Rules, word};

/// ADD `f` at bit 4.
pub const ADD_MC_F: FieldDef =
    FieldDef::new("f", 0, 4, 1, Flag, Low, "ADD flag arg f << 4; meaning unknown (study §10 LOW)");
/// ADD `wrbar` at bit 6.
pub const ADD_MC_WRBAR: FieldDef =
    FieldDef::new("wrbar", 0, 6, 1, Flag, Low, "write barrier (named from arg; study §10 LOW)");
/// ADD `last` at bit 7.
pub const ADD_MC_LAST: FieldDef =
    FieldDef::new("last", 0, 7, 1, Flag, Med, "last source: flushes the accumulator (study §4.1, §9.1: bit 7)");

word! {
    /// ADD meta-control (base `0x2000000`; carries no in dtype).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct AddMetaCtrl: meta_ctrl;
    /// ADD meta-control: `0x2000000` base; no in-dtype nibble.
    pub const ADD_META_CTRL = {
        name: "add-meta-ctrl",
        fixed: [0x0200_0000, 0, 0, 0],
        fixed_tag: High,
        source: "al_sdma_m2s_build_add_meta_ctrl @0x451b80 (study §2.6)",
    };
    fields {
        /// Sub-op selector.
        sub: U3 = MC_SUB,
        /// Flag argument `f` (meaning unknown, LOW).
        f: bool = ADD_MC_F,
        /// Write barrier (named from the argument, LOW).
        wrbar: bool = ADD_MC_WRBAR,
        /// Last source: flushes the accumulator (MED).
        last: bool = ADD_MC_LAST,
        /// Output dtype.
        out_dt: SdmaDtype = MC_OUT_DT,
        /// Accumulate dtype.
        accum_dt: SdmaDtype = MC_ACCUM_DT,
        /// The driver's write barrier, bit 26 (on top of the runtime's formula).
        write_barrier: bool = MC_WRITE_BARRIER,
    }
}

impl Rules for AddMetaCtrl {}
