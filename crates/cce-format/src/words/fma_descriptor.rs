//! The FMA compute descriptor, `al_sdma_m2s_build_fma_descriptor` @0x451c20 (study §2.3), plus
//! the MODEL more-bit.

use crate::bits::{U3, U8, U23, U24};
use crate::descriptor::FmaOperand;
use crate::layout::FieldDef;
use crate::layout::FieldKind::*;
use crate::tag::Tag::*;

use super::{COMPUTE_W0, D_META_IDX, D_MORE, D_WB, Rules, word};

/// FMA W1 sub-op.
pub const FMA_D_SUB: FieldDef = FieldDef::new("sub", 1, 0, 3, Uint, High, "W1 a9 & 7: sub-op (study §2.3)");
/// FMA W1 bit 26.
pub const FMA_D_A10: FieldDef = FieldDef::new("a10", 1, 26, 1, Flag, Low, "W1 (a10 & 1) << 26; meaning unknown");
/// FMA W1 `[31:29]`.
pub const FMA_D_A8: FieldDef = FieldDef::new("a8", 1, 29, 3, Uint, Low, "W1 a8 << 29; meaning unknown");
/// FMA W2 `[23:0]` semaphore.
pub const FMA_D_SEMA: FieldDef = FieldDef::new("sema", 2, 0, 24, Uint, High, "W2 sema & 0xFFFFFF (study §2.3)");
/// FMA W2 `[25:24]` operand A.
pub const FMA_D_A_SEL: FieldDef =
    FieldDef::new("a-sel", 2, 24, 2, Selector, High, "multiply operand A selector (study §2.3, §3.1)");
/// FMA W2 `[27:26]` operand B.
pub const FMA_D_B_SEL: FieldDef =
    FieldDef::new("b-sel", 2, 26, 2, Selector, High, "multiply operand B selector (study §2.3, §3.1)");
/// FMA W2 `[29:28]` operand C.
pub const FMA_D_C_SEL: FieldDef =
    FieldDef::new("c-sel", 2, 28, 2, Selector, High, "add operand C selector (study §2.3, §3.1)");
/// FMA W3 scale.
pub const FMA_D_SCALE: FieldDef =
    FieldDef::new("scale", 3, 0, 32, F32Bits, High, "W3: the per-source fp32 scale (study §2.3, §3.2)");

word! {
    /// The FMA compute descriptor (study §2.3) plus the MODEL more-bit.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct FmaDescriptor: descriptor;
    /// The FMA compute descriptor.
    pub const FMA_DESCRIPTOR = {
        name: "fma-descriptor",
        fixed: [COMPUTE_W0, 0x0210_0000, 0, 0],
        fixed_tag: High,
        source: "al_sdma_m2s_build_fma_descriptor @0x451c20 (study §2.3)",
    };
    fields {
        /// The write-back argument (W0 low bits).
        wb: U23 = D_WB,
        /// Meta index (W0 `[31:24]`).
        meta_idx: U8 = D_META_IDX,
        /// Sub-op selector.
        sub: U3 = FMA_D_SUB,
        /// W1 bit 26 (meaning unknown, LOW).
        a10: bool = FMA_D_A10,
        /// W1 `[31:29]` (meaning unknown, LOW).
        a8: U3 = FMA_D_A8,
        /// Semaphore.
        sema: U24 = FMA_D_SEMA,
        /// Multiply operand A.
        a_sel: FmaOperand = FMA_D_A_SEL,
        /// Multiply operand B.
        b_sel: FmaOperand = FMA_D_B_SEL,
        /// Add operand C.
        c_sel: FmaOperand = FMA_D_C_SEL,
        /// MODEL: more descriptors of this combo follow (W2 bit 30).
        more: bool = D_MORE,
        /// The fp32 scale as bits (so every pattern, NaNs included, round-trips).
        scale_bits: u32 = FMA_D_SCALE,
    }
}

impl Rules for FmaDescriptor {}

impl FmaDescriptor {
    /// The scale as a float.
    pub fn scale(&self) -> f32 {
        f32::from_bits(self.scale_bits)
    }
}
