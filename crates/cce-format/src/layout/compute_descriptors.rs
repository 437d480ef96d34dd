//! The 16-byte compute descriptors' fields and layouts (study §2.2–§2.5).

use super::FieldKind::*;
use super::{FieldDef, LC_META, Layout};
use crate::tag::Tag::*;

/// W0's fixed bits of every 16-byte compute descriptor: META (the study's `| 0x800000`), the
/// UDMA len_ctrl bit that marks a meta descriptor.
pub const COMPUTE_W0: u32 = LC_META.place(1);

/// W0 `[22:0]` write-back argument.
pub const D_WB: FieldDef = FieldDef::new("wb", 0, 0, 23, Uint, High, "W0 low bits: the wb argument (study §2.3)");
/// W0 `[31:24]` meta index.
pub const D_META_IDX: FieldDef = FieldDef::new("meta-idx", 0, 24, 8, Uint, High, "W0 meta_idx << 24 (study §2.3)");
/// W2 bit 30: more descriptors of this combo follow (MODEL placement of the study's 0x40000000).
pub const D_MORE: FieldDef = FieldDef::new(
    "more",
    2,
    30,
    1,
    Flag,
    Model,
    "0x40000000 more-descriptors-follow; placed in W2 (MODEL, study §5.1)",
);

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
/// The FMA compute descriptor.
pub const FMA_DESCRIPTOR: Layout = Layout {
    name: "fma-descriptor",
    words: 4,
    fixed: [COMPUTE_W0, 0x0210_0000, 0, 0],
    fixed_tag: High,
    fields: &[
        D_WB,
        D_META_IDX,
        FMA_D_SUB,
        FMA_D_A10,
        FMA_D_A8,
        FMA_D_SEMA,
        FMA_D_A_SEL,
        FMA_D_B_SEL,
        FMA_D_C_SEL,
        D_MORE,
        FMA_D_SCALE,
    ],
    source: "al_sdma_m2s_build_fma_descriptor @0x451c20 (study §2.3)",
};

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
/// The MIN/MAX compute descriptor.
pub const MIN_MAX_DESCRIPTOR: Layout = Layout {
    name: "min-max-descriptor",
    words: 4,
    fixed: [COMPUTE_W0, 0, 0x0200_0000, 0],
    fixed_tag: High,
    fields: &[D_WB, D_META_IDX, MM_D_CONST_DT, MM_D_USE_CONST, MM_D_LENGTH, D_MORE, MM_D_CONSTANT],
    source: "al_sdma_m2s_build_min_max_descriptor @0x451d10 (study §2.4)",
};

/// W0 write-back of a descriptor whose W0 the study gives only as `|= 0x800000`.
pub const D_WB_MODEL: FieldDef = FieldDef::new("wb", 0, 0, 23, Uint, Model, "W0 low bits, as in the FMA frame (MODEL)");
/// W0 meta index of such a descriptor.
pub const D_META_IDX_MODEL: FieldDef =
    FieldDef::new("meta-idx", 0, 24, 8, Uint, Model, "W0 meta_idx << 24, as in the FMA frame (MODEL)");
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
/// The seed-init descriptor.
pub const SEED_INIT_DESCRIPTOR: Layout = Layout {
    name: "seed-init-descriptor",
    words: 4,
    fixed: [COMPUTE_W0, 0, 0, 0],
    fixed_tag: High,
    fields: &[D_WB_MODEL, D_META_IDX_MODEL, SEED_D_SEED_EN, SEED_D_COMBO, D_MORE, SEED_D_SEED],
    source: "al_sdma_m2s_build_seed_init_descriptor @0x451e40 (study §2.5; W0 rest, W2, W3 MODEL)",
};

/// Replication descriptor W1: the replication meta-control word's count.
pub const REP_D_COUNT: FieldDef =
    FieldDef::new("count", 1, 0, 16, Uint, Med, "W1 [15:0] replication count (companion chapter)");
/// Replication descriptor W1 bit 26.
pub const REP_D_EXT: FieldDef =
    FieldDef::new("ext", 1, 26, 1, Implied, High, "W1 0x4000000 of 0x4A00000, set iff mode != 0 (study §2.5)");
/// Replication descriptor W1 `[31:29]`.
pub const REP_D_MODE: FieldDef = FieldDef::new("mode", 1, 29, 3, Uint, High, "W1 mode << 29 (study §2.5)");
/// Replication descriptor W3: the EXT meta-control word that tags a combo packet.
pub const REP_D_EXT_META: FieldDef = FieldDef::new(
    "ext-meta",
    3,
    0,
    32,
    Uint,
    Model,
    "W3: the EXT (0x2400000) meta-control word tagging the combo packet (MODEL; study §5.1)",
);
/// The replication descriptor.
pub const REPLICATION_DESCRIPTOR: Layout = Layout {
    name: "replication-descriptor",
    words: 4,
    fixed: [COMPUTE_W0, 0x00A0_0000, 0, 0],
    fixed_tag: Model,
    fields: &[D_WB_MODEL, D_META_IDX_MODEL, REP_D_COUNT, REP_D_EXT, REP_D_MODE, D_MORE, REP_D_EXT_META],
    source: "al_sdma_m2s_build_replication_descriptor @0x451b10 (study §2.5; W1 = replication meta-control, W0/W2/W3 MODEL)",
};

/// Gradient descriptor W1 `[31:29]`.
pub const GRAD_D_MODE: FieldDef =
    FieldDef::new("mode", 1, 29, 3, Uint, Med, "W1 (a6 << 29) | 0x6500001 (companion chapter)");
/// Gradient descriptor W2 `[23:0]` length.
pub const GRAD_D_LENGTH: FieldDef =
    FieldDef::new("length", 2, 0, 24, Uint, Model, "W2 length & 0xFFFFFF, as in MIN/MAX (MODEL)");
/// Gradient descriptor W3: compression header address (low 32 bits).
pub const GRAD_D_HEADER: FieldDef =
    FieldDef::new("header", 3, 0, 32, Uint, Model, "W3 compression-header address, low 32 bits (MODEL; study §5.2)");
/// The gradient (GCE) descriptor.
pub const GRADIENT_DESCRIPTOR: Layout = Layout {
    name: "gradient-descriptor",
    words: 4,
    fixed: [COMPUTE_W0, 0x0650_0001, 0, 0],
    fixed_tag: Med,
    fields: &[D_WB_MODEL, D_META_IDX_MODEL, GRAD_D_MODE, GRAD_D_LENGTH, D_MORE, GRAD_D_HEADER],
    source: "al_sdma_m2s_build_gradient_descriptor @0x451de0 (W1 from the companion chapter; rest MODEL)",
};
