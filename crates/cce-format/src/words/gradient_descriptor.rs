//! The gradient (GCE) descriptor, `al_sdma_m2s_build_gradient_descriptor` @0x451de0: W1 =
//! `(mode << 29) | 0x6500001` (companion chapter, MED); W0, W2 and W3 are MODEL. The GCE codec
//! itself is unknown (GAPS.md §9).

use crate::bits::{U3, U8, U23, U24};
use crate::layout::FieldDef;
use crate::layout::FieldKind::*;
use crate::tag::Tag::*;

use super::{COMPUTE_W0, D_META_IDX_MODEL, D_MORE, D_WB_MODEL, Rules, word};

/// Gradient descriptor W1 `[31:29]`.
pub const GRAD_D_MODE: FieldDef =
    FieldDef::new("mode", 1, 29, 3, Uint, Med, "W1 (a6 << 29) | 0x6500001 (companion chapter)");
/// Gradient descriptor W2 `[23:0]` length.
pub const GRAD_D_LENGTH: FieldDef =
    FieldDef::new("length", 2, 0, 24, Uint, Model, "W2 length & 0xFFFFFF, as in MIN/MAX (MODEL)");
/// Gradient descriptor W3: compression header address (low 32 bits).
pub const GRAD_D_HEADER: FieldDef =
    FieldDef::new("header", 3, 0, 32, Uint, Model, "W3 compression-header address, low 32 bits (MODEL; study §5.2)");

word! {
    /// The gradient (GCE) descriptor: W1 = `(mode << 29) | 0x6500001` (companion chapter, MED);
    /// W0, W2 and W3 are MODEL. The GCE codec itself is unknown (GAPS.md §9).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct GradientDescriptor: descriptor;
    /// The gradient (GCE) descriptor.
    pub const GRADIENT_DESCRIPTOR = {
        name: "gradient-descriptor",
        fixed: [COMPUTE_W0, 0x0650_0001, 0, 0],
        fixed_tag: Med,
        source: "al_sdma_m2s_build_gradient_descriptor @0x451de0 (W1 from the companion chapter; rest MODEL)",
    };
    fields {
        /// MODEL: the write-back argument, as in the FMA frame.
        wb: U23 = D_WB_MODEL,
        /// MODEL: the meta index, as in the FMA frame.
        meta_idx: U8 = D_META_IDX_MODEL,
        /// Mode (W1 `[31:29]`).
        mode: U3 = GRAD_D_MODE,
        /// MODEL: the length, as in MIN/MAX.
        length: U24 = GRAD_D_LENGTH,
        /// MODEL: more descriptors of this combo follow (W2 bit 30).
        more: bool = D_MORE,
        /// MODEL: the compression-header address, low 32 bits.
        header: u32 = GRAD_D_HEADER,
    }
}

impl Rules for GradientDescriptor {}
