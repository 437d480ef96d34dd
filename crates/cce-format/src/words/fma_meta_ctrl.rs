//! The FMA meta-control word, `al_sdma_m2s_build_fma_meta_ctrl` @0x451bd0 (study §2.6).

use crate::bits::U3;
use crate::dtype::SdmaDtype;
use crate::layout::FieldDef;
use crate::layout::FieldKind::*;
use crate::tag::Tag::*;

use super::{MC_ACCUM_DT, MC_IN_DT, MC_SCALE_DT, MC_SUB, MC_WRITE_BARRIER, Rules, word};

/// FMA `f4` at bit 7.
pub const FMA_MC_F4: FieldDef =
    FieldDef::new("f4", 0, 7, 1, Flag, Low, "FMA flag arg f4 << 7; meaning unknown (study §10 LOW)");
/// FMA `f5` at bit 6.
pub const FMA_MC_F5: FieldDef =
    FieldDef::new("f5", 0, 6, 1, Flag, Low, "FMA flag arg f5 << 6; meaning unknown (study §10 LOW)");
/// FMA `f6` at bit 4.
pub const FMA_MC_F6: FieldDef =
    FieldDef::new("f6", 0, 4, 1, Flag, Low, "FMA flag arg f6 << 4; meaning unknown (study §10 LOW)");

word! {
    /// FMA meta-control (base `0x2100000`).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct FmaMetaCtrl: meta_ctrl;
    /// FMA meta-control: `0x2100000` base (bit 25 CCE class, `[22:20]` = 1 FMA).
    pub const FMA_META_CTRL = {
        name: "fma-meta-ctrl",
        fixed: [0x0210_0000, 0, 0, 0],
        fixed_tag: High,
        source: "al_sdma_m2s_build_fma_meta_ctrl @0x451bd0 (study §2.6)",
    };
    fields {
        /// Sub-op selector.
        sub: U3 = MC_SUB,
        /// Flag argument `f6` (meaning unknown, LOW).
        f6: bool = FMA_MC_F6,
        /// Flag argument `f5` (meaning unknown, LOW).
        f5: bool = FMA_MC_F5,
        /// Flag argument `f4` (meaning unknown, LOW).
        f4: bool = FMA_MC_F4,
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

impl Rules for FmaMetaCtrl {}
