//! The seed-init descriptor, `al_sdma_m2s_build_seed_init_descriptor` @0x451e40 (study §2.5:
//! `W0 |= 0x800000`, `W1 = 0x6000000` with seed-enable); the rest is MODEL.

use crate::bits::{U8, U23};
use crate::layout::FieldDef;
use crate::layout::FieldKind::*;
use crate::tag::Tag::*;

use super::{COMPUTE_W0, D_META_IDX_MODEL, D_MORE, D_WB_MODEL, Rules, word};

/// Seed-init W1 `[26:25]`: 0x6000000 iff seed-en.
pub const SEED_D_SEED_EN: FieldDef =
    FieldDef::new("seed-en", 1, 25, 2, Pattern, High, "W1 = 0x6000000 when the seed is loaded (study §2.5)");
/// Seed-init W2 bit 26: the 0x4000000 combo-member flag.
pub const SEED_D_COMBO: FieldDef = FieldDef::new(
    "combo-member",
    2,
    26,
    1,
    Flag,
    Model,
    "0x4000000 combo-member flag (study §5.1); placed in W2 (MODEL)",
);
/// Seed-init W3: the 32-bit seed.
pub const SEED_D_SEED: FieldDef = FieldDef::new(
    "seed",
    3,
    0,
    32,
    Uint,
    Model,
    "the 32-bit RNG seed (study §3.4 threads a 32-bit seed); placed in W3 (MODEL)",
);

word! {
    /// The seed-init descriptor (study §2.5: `W0 |= 0x800000`, `W1 = 0x6000000` with seed-enable);
    /// the rest is MODEL: W0 carries wb and meta-idx as in the FMA frame, W2 the combo-member flag
    /// (0x4000000) and the more-bit, W3 the 32-bit seed.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct SeedInitDescriptor: descriptor;
    /// The seed-init descriptor.
    pub const SEED_INIT_DESCRIPTOR = {
        name: "seed-init-descriptor",
        fixed: [COMPUTE_W0, 0, 0, 0],
        fixed_tag: High,
        source: "al_sdma_m2s_build_seed_init_descriptor @0x451e40 (study §2.5; W0 rest, W2, W3 MODEL)",
    };
    fields {
        /// MODEL: the write-back argument, as in the FMA frame.
        wb: U23 = D_WB_MODEL,
        /// MODEL: the meta index, as in the FMA frame.
        meta_idx: U8 = D_META_IDX_MODEL,
        /// Load the seed (W1 0x6000000).
        seed_en: bool = SEED_D_SEED_EN,
        /// MODEL: the combo-member flag.
        combo_member: bool = SEED_D_COMBO,
        /// MODEL: more descriptors of this combo follow (W2 bit 30).
        more: bool = D_MORE,
        /// MODEL: the 32-bit RNG seed.
        seed: u32 = SEED_D_SEED,
    }
}

impl Rules for SeedInitDescriptor {}
