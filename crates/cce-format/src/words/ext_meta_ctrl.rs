//! The EXT (combo) meta-control word, `al_sdma_m2s_build_cce_ext_meta_ctrl` @0x451dc0
//! (study §2.6).

use crate::bits::U3;
use crate::dtype::SdmaDtype;

use super::{MC_ACCUM_DT, MC_MID_DT, MC_SUB, Rules, word};

word! {
    /// EXT (combo) meta-control (base `0x2400000`).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct ExtMetaCtrl: meta_ctrl;
    /// EXT (combo) meta-control: `0x2400000` base.
    pub const EXT_META_CTRL = {
        name: "ext-meta-ctrl",
        fixed: [0x0240_0000, 0, 0, 0],
        fixed_tag: High,
        source: "al_sdma_m2s_build_cce_ext_meta_ctrl @0x451dc0 (study §2.6)",
    };
    fields {
        /// Sub-op selector.
        sub: U3 = MC_SUB,
        /// Mid dtype.
        mid_dt: SdmaDtype = MC_MID_DT,
        /// Accumulate dtype.
        accum_dt: SdmaDtype = MC_ACCUM_DT,
    }
}

impl Rules for ExtMetaCtrl {}
