//! The MIN/MAX meta-control word, `al_sdma_m2s_build_min_max_meta_ctrl` @0x451ca0 (study §2.6).
//!
//! It shares the base `0x2000000` with ADD and writes its constant dtype on top of the op-type
//! field `[22:20]` (GAPS.md §5), so a word can read as several encoders
//! ([`readings`](crate::meta_ctrl::readings)).

use crate::bits::U3;
use crate::dtype::SdmaDtype;
use crate::error::FormatError;
use crate::layout::FieldDef;
use crate::layout::FieldKind::*;
use crate::tag::Tag::*;

use super::{MC_ACCUM_DT, MC_IN_DT, MC_SUB, MC_WRITE_BARRIER, Rules, flag, mismatch, word};

/// MIN/MAX `last` at bit 4.
pub const MM_MC_LAST: FieldDef =
    FieldDef::new("last", 0, 4, 1, Flag, Low, "last-source flag (named from arg; study §10 LOW)");
/// MIN/MAX `use-const` at bit 5.
pub const MM_MC_USE_CONST: FieldDef =
    FieldDef::new("use-const", 0, 5, 1, Flag, Low, "clamp against the constant; forces out-dt (study §2.6, LOW name)");
/// MIN/MAX `wrbar` at bit 6.
pub const MM_MC_WRBAR: FieldDef =
    FieldDef::new("wrbar", 0, 6, 1, Flag, Low, "write barrier (named from arg; study §10 LOW)");
/// MIN/MAX `notif` at bit 7.
pub const MM_MC_NOTIF: FieldDef =
    FieldDef::new("notif", 0, 7, 1, Flag, Low, "notification (named from arg; study §10 LOW)");
/// MIN/MAX out dtype: written only when use-const is 1.
pub const MM_MC_OUT_DT: FieldDef = FieldDef::new(
    "out-dt",
    0,
    12,
    4,
    Dtype,
    High,
    "output dtype [15:12], written only when use-const = 1, else 0 (study §2.6)",
);
/// MIN/MAX `[22:20]` constant dtype — collides with the op-type field (GAPS.md §5).
pub const MM_MC_CONST_DT: FieldDef = FieldDef::new(
    "const-dt",
    0,
    20,
    3,
    Dtype3,
    High,
    "constant dtype [22:20], on top of the op-type field (study §2.6; GAPS.md §5)",
);

word! {
    /// MIN/MAX meta-control (base `0x2000000`). `out_dt` is written only when `use_const` is set;
    /// with `use_const == false` a non-`Invalid` `out_dt` is dropped by
    /// [`emit`](crate::meta_ctrl::MetaCtrl::emit), exactly as the runtime drops it, so only values
    /// with `out_dt == Invalid` round-trip there.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct MinMaxMetaCtrl: meta_ctrl;
    /// MIN/MAX meta-control: `0x2000000` base, shared with ADD.
    pub const MIN_MAX_META_CTRL = {
        name: "min-max-meta-ctrl",
        fixed: [0x0200_0000, 0, 0, 0],
        fixed_tag: High,
        source: "al_sdma_m2s_build_min_max_meta_ctrl @0x451ca0 (study §2.6)",
    };
    fields {
        /// Sub-op selector.
        sub: U3 = MC_SUB,
        /// Last source (named from the argument, LOW).
        last: bool = MM_MC_LAST,
        /// Clamp against the constant (LOW name).
        use_const: bool = MM_MC_USE_CONST,
        /// Write barrier (named from the argument, LOW).
        wrbar: bool = MM_MC_WRBAR,
        /// Notification (named from the argument, LOW).
        notif: bool = MM_MC_NOTIF,
        /// Input dtype.
        in_dt: SdmaDtype = MC_IN_DT,
        /// Output dtype, written only with `use_const`.
        out_dt: SdmaDtype = MM_MC_OUT_DT,
        /// Accumulate dtype.
        accum_dt: SdmaDtype = MC_ACCUM_DT,
        /// The constant's dtype (an SDMA dtype value below 8).
        const_dt: U3 = MM_MC_CONST_DT,
        /// The driver's write barrier, bit 26 (on top of the runtime's formula).
        write_barrier: bool = MC_WRITE_BARRIER,
    }
}

impl Rules for MinMaxMetaCtrl {
    /// "use_const FORCES out_dt; else out_dt=0" (study §2.6).
    fn emit_rule(&self, mut words: [u32; 4]) -> [u32; 4] {
        if !self.use_const {
            words[0] &= !MM_MC_OUT_DT.span.mask();
        }
        words
    }
    fn parse_rule(words: &[u32; 4]) -> Result<(), FormatError> {
        let out = MM_MC_OUT_DT.get(words);
        if !flag(&MM_MC_USE_CONST, words) && out != 0 {
            return Err(mismatch(&MIN_MAX_META_CTRL, 0, "has an out-dt without use-const", MM_MC_OUT_DT.place(out)));
        }
        Ok(())
    }
}
