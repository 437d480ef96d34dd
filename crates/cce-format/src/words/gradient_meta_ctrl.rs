//! The GCE (gradient) meta-control word, `al_sdma_m2s_build_gradient_meta_ctrl` @0x451d70
//! (study §2.6).

use crate::bits::U3;
use crate::dtype::SdmaDtype;
use crate::layout::FieldDef;
use crate::layout::FieldKind::*;
use crate::tag::Tag::*;

use super::{MC_ACCUM_DT, MC_IN_DT, MC_SCALE_DT, MC_SUB, MC_WRITE_BARRIER, Rules, word};

/// GCE `f` at bit 4.
pub const GCE_MC_F: FieldDef =
    FieldDef::new("f", 0, 4, 1, Flag, Low, "gradient flag arg f << 4; meaning unknown (study §10 LOW)");
/// GCE `wrbar` at bit 6.
pub const GCE_MC_WRBAR: FieldDef =
    FieldDef::new("wrbar", 0, 6, 1, Flag, Low, "write barrier (named from arg; study §10 LOW)");
/// GCE `last` at bit 7.
pub const GCE_MC_LAST: FieldDef = FieldDef::new("last", 0, 7, 1, Flag, Low, "last (named from arg; study §10 LOW)");

word! {
    /// GCE / gradient meta-control (base `0x2500000`).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct GradientMetaCtrl: meta_ctrl;
    /// GCE (gradient) meta-control: `0x2500000` base.
    pub const GRADIENT_META_CTRL = {
        name: "gradient-meta-ctrl",
        fixed: [0x0250_0000, 0, 0, 0],
        fixed_tag: High,
        source: "al_sdma_m2s_build_gradient_meta_ctrl @0x451d70 (study §2.6)",
    };
    fields {
        /// Sub-op selector.
        sub: U3 = MC_SUB,
        /// Flag argument `f` (meaning unknown, LOW).
        f: bool = GCE_MC_F,
        /// Write barrier (named from the argument, LOW).
        wrbar: bool = GCE_MC_WRBAR,
        /// Last (named from the argument, LOW).
        last: bool = GCE_MC_LAST,
        /// Input dtype.
        in_dt: SdmaDtype = MC_IN_DT,
        /// Scale dtype.
        scale_dt: SdmaDtype = MC_SCALE_DT,
        /// Accumulate dtype.
        accum_dt: SdmaDtype = MC_ACCUM_DT,
        /// The driver's write barrier, bit 26 (on top of the runtime's formula).
        write_barrier: bool = MC_WRITE_BARRIER,
    }
}

impl Rules for GradientMetaCtrl {}
