//! The MIN/MAX compute descriptor, `al_sdma_m2s_build_min_max_descriptor` @0x451d10
//! (study §2.4), plus the MODEL more-bit.

use crate::bits::{U3, U8, U23, U24};
use crate::error::FormatError;
use crate::layout::FieldDef;
use crate::layout::FieldKind::*;
use crate::tag::Tag::*;

use super::{COMPUTE_W0, D_META_IDX, D_MORE, D_WB, Rules, flag, mismatch, word};

/// MIN/MAX W1 `[26:25]`: the 0x6000000 constant sub-descriptor, present iff use-const.
pub const MM_D_USE_CONST: FieldDef = FieldDef::new(
    "use-const",
    1,
    25,
    2,
    Pattern,
    High,
    "W1 0x6000000 constant sub-descriptor, present iff use_const (study §2.4)",
);
/// MIN/MAX W1 `[22:20]` constant dtype.
pub const MM_D_CONST_DT: FieldDef =
    FieldDef::new("const-dt", 1, 20, 3, Dtype3, High, "W1 (const_dt & 7) << 20, only with use-const (study §2.4)");
/// MIN/MAX W2 `[23:0]` length.
pub const MM_D_LENGTH: FieldDef = FieldDef::new("length", 2, 0, 24, Uint, High, "W2 length & 0xFFFFFF (study §2.4)");
/// MIN/MAX W3 constant.
pub const MM_D_CONSTANT: FieldDef =
    FieldDef::new("constant", 3, 0, 32, Uint, High, "W3: min_max_info.constant (study §2.4)");

word! {
    /// The MIN/MAX compute descriptor (study §2.4) plus the MODEL more-bit. `const_dt` is written
    /// only with `use_const`, so only values with `const_dt == 0` round-trip without it.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct MinMaxDescriptor: descriptor;
    /// The MIN/MAX compute descriptor.
    pub const MIN_MAX_DESCRIPTOR = {
        name: "min-max-descriptor",
        fixed: [COMPUTE_W0, 0, 0x0200_0000, 0],
        fixed_tag: High,
        source: "al_sdma_m2s_build_min_max_descriptor @0x451d10 (study §2.4)",
    };
    fields {
        /// The write-back argument (W0 low bits).
        wb: U23 = D_WB,
        /// Meta index (W0 `[31:24]`).
        meta_idx: U8 = D_META_IDX,
        /// The constant's dtype (written only with `use_const`).
        const_dt: U3 = MM_D_CONST_DT,
        /// The constant sub-descriptor (W1 0x6000000).
        use_const: bool = MM_D_USE_CONST,
        /// Length.
        length: U24 = MM_D_LENGTH,
        /// MODEL: more descriptors of this combo follow (W2 bit 30).
        more: bool = D_MORE,
        /// The clamp constant's bits.
        constant: u32 = MM_D_CONSTANT,
    }
}

impl Rules for MinMaxDescriptor {
    /// W1 is written only with the constant: `use_const ? (const_dt & 7) << 20 | 0x6000000 : 0`.
    fn emit_rule(&self, mut words: [u32; 4]) -> [u32; 4] {
        if !self.use_const {
            words[MM_D_CONST_DT.word as usize] &= !MM_D_CONST_DT.span.mask();
        }
        words
    }
    fn parse_rule(words: &[u32; 4]) -> Result<(), FormatError> {
        let const_dt = MM_D_CONST_DT.get(words);
        if !flag(&MM_D_USE_CONST, words) && const_dt != 0 {
            return Err(mismatch(
                &MIN_MAX_DESCRIPTOR,
                MM_D_CONST_DT.word,
                "has a const-dt without the constant sub-descriptor",
                MM_D_CONST_DT.place(const_dt),
            ));
        }
        Ok(())
    }
}
