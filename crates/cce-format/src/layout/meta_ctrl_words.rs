//! The meta-control words' fields and layouts (study §2.6; the copy word: the public driver).

use super::FieldKind::*;
use super::{FieldDef, Layout};
use crate::tag::Tag::*;

/// `[2:0]` sub-op, common to all five CCE meta-control encoders.
pub const MC_SUB: FieldDef = FieldDef::new("sub", 0, 0, 3, Uint, High, "sub-op selector [2:0] (study §2.6)");
/// `[11:8]` in dtype (FMA, MIN/MAX, GCE).
pub const MC_IN_DT: FieldDef =
    FieldDef::new("in-dt", 0, 8, 4, Dtype, High, "input dtype nibble [11:8] (study §2.6, §3.3)");
/// `[15:12]` scale dtype (FMA, GCE).
pub const MC_SCALE_DT: FieldDef =
    FieldDef::new("scale-dt", 0, 12, 4, Dtype, High, "scale dtype nibble [15:12] (study §2.6)");
/// `[15:12]` out dtype (MIN/MAX, ADD).
pub const MC_OUT_DT: FieldDef =
    FieldDef::new("out-dt", 0, 12, 4, Dtype, High, "output dtype nibble [15:12] (study §2.6)");
/// `[15:12]` mid dtype (EXT).
pub const MC_MID_DT: FieldDef = FieldDef::new("mid-dt", 0, 12, 4, Dtype, High, "mid dtype nibble [15:12] (study §2.6)");
/// `[19:16]` accumulate dtype.
pub const MC_ACCUM_DT: FieldDef =
    FieldDef::new("accum-dt", 0, 16, 4, Dtype, High, "accumulate dtype nibble [19:16] (study §2.6, §3.3)");

/// Bit 26: the write barrier of the CME meta-control word, which the public driver sets on
/// the last chunk of a copy (`sdma_m2s_set_write_barrier`, GAPS.md §12). Accepted on the
/// meta-control word of a packet's LAST data descriptor, CCE words included (docs/MODEL.md P13).
pub const MC_WRITE_BARRIER: FieldDef = FieldDef::new(
    "write-barrier",
    0,
    26,
    1,
    Flag,
    High,
    "write barrier, CME meta_ctrl bit 26 (public driver udma_m2m.c; GAPS.md §12)",
);

/// FMA `f4` at bit 7.
pub const FMA_MC_F4: FieldDef =
    FieldDef::new("f4", 0, 7, 1, Flag, Low, "FMA flag arg f4 << 7; meaning unknown (study §10 LOW)");
/// FMA `f5` at bit 6.
pub const FMA_MC_F5: FieldDef =
    FieldDef::new("f5", 0, 6, 1, Flag, Low, "FMA flag arg f5 << 6; meaning unknown (study §10 LOW)");
/// FMA `f6` at bit 4.
pub const FMA_MC_F6: FieldDef =
    FieldDef::new("f6", 0, 4, 1, Flag, Low, "FMA flag arg f6 << 4; meaning unknown (study §10 LOW)");
/// FMA meta-control: `0x2100000` base (bit 25 CCE class, `[22:20]` = 1 FMA).
pub const FMA_META_CTRL: Layout = Layout {
    name: "fma-meta-ctrl",
    words: 1,
    fixed: [0x0210_0000, 0, 0, 0],
    fixed_tag: High,
    fields: &[MC_SUB, FMA_MC_F6, FMA_MC_F5, FMA_MC_F4, MC_IN_DT, MC_SCALE_DT, MC_ACCUM_DT, MC_WRITE_BARRIER],
    source: "al_sdma_m2s_build_fma_meta_ctrl @0x451bd0 (study §2.6)",
};

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
/// MIN/MAX meta-control: `0x2000000` base, shared with ADD.
pub const MIN_MAX_META_CTRL: Layout = Layout {
    name: "min-max-meta-ctrl",
    words: 1,
    fixed: [0x0200_0000, 0, 0, 0],
    fixed_tag: High,
    fields: &[
        MC_SUB,
        MM_MC_LAST,
        MM_MC_USE_CONST,
        MM_MC_WRBAR,
        MM_MC_NOTIF,
        MC_IN_DT,
        MM_MC_OUT_DT,
        MC_ACCUM_DT,
        MM_MC_CONST_DT,
        MC_WRITE_BARRIER,
    ],
    source: "al_sdma_m2s_build_min_max_meta_ctrl @0x451ca0 (study §2.6)",
};

/// ADD `f` at bit 4.
pub const ADD_MC_F: FieldDef =
    FieldDef::new("f", 0, 4, 1, Flag, Low, "ADD flag arg f << 4; meaning unknown (study §10 LOW)");
/// ADD `wrbar` at bit 6.
pub const ADD_MC_WRBAR: FieldDef =
    FieldDef::new("wrbar", 0, 6, 1, Flag, Low, "write barrier (named from arg; study §10 LOW)");
/// ADD `last` at bit 7.
pub const ADD_MC_LAST: FieldDef =
    FieldDef::new("last", 0, 7, 1, Flag, Med, "last source: flushes the accumulator (study §4.1, §9.1: bit 7)");
/// ADD meta-control: `0x2000000` base; no in-dtype nibble.
pub const ADD_META_CTRL: Layout = Layout {
    name: "add-meta-ctrl",
    words: 1,
    fixed: [0x0200_0000, 0, 0, 0],
    fixed_tag: High,
    fields: &[MC_SUB, ADD_MC_F, ADD_MC_WRBAR, ADD_MC_LAST, MC_OUT_DT, MC_ACCUM_DT, MC_WRITE_BARRIER],
    source: "al_sdma_m2s_build_add_meta_ctrl @0x451b80 (study §2.6)",
};

/// GCE `f` at bit 4.
pub const GCE_MC_F: FieldDef =
    FieldDef::new("f", 0, 4, 1, Flag, Low, "gradient flag arg f << 4; meaning unknown (study §10 LOW)");
/// GCE `wrbar` at bit 6.
pub const GCE_MC_WRBAR: FieldDef =
    FieldDef::new("wrbar", 0, 6, 1, Flag, Low, "write barrier (named from arg; study §10 LOW)");
/// GCE `last` at bit 7.
pub const GCE_MC_LAST: FieldDef = FieldDef::new("last", 0, 7, 1, Flag, Low, "last (named from arg; study §10 LOW)");
/// GCE (gradient) meta-control: `0x2500000` base.
pub const GRADIENT_META_CTRL: Layout = Layout {
    name: "gradient-meta-ctrl",
    words: 1,
    fixed: [0x0250_0000, 0, 0, 0],
    fixed_tag: High,
    fields: &[MC_SUB, GCE_MC_F, GCE_MC_WRBAR, GCE_MC_LAST, MC_IN_DT, MC_SCALE_DT, MC_ACCUM_DT, MC_WRITE_BARRIER],
    source: "al_sdma_m2s_build_gradient_meta_ctrl @0x451d70 (study §2.6)",
};

// The plain-copy meta-control word (public driver `udma/udma_m2m.c`: the M2S meta-control
// bitfield and its default 0x01080003, the CME word's write barrier at bit 26; GAPS.md §12).
// Every bit is named; the op field [25:23] = 2 is the fixed part that makes a word a copy.

/// Copy `[0]` block attribute: last block.
pub const CP_MC_LAST_BLOCK: FieldDef =
    FieldDef::new("last-block", 0, 0, 1, Flag, High, "block attribute: last block (driver default 1)");
/// Copy `[1]` block attribute: first block.
pub const CP_MC_FIRST_BLOCK: FieldDef =
    FieldDef::new("first-block", 0, 1, 1, Flag, High, "block attribute: first block (driver default 1)");
/// Copy `[2]` block attribute, reserved.
pub const CP_MC_BLOCK_RSVD: FieldDef =
    FieldDef::new("block-rsvd", 0, 2, 1, Flag, High, "block attribute, reserved (driver default 0)");
/// Copy `[5:3]` cached CRC IV index.
pub const CP_MC_CRC_IV: FieldDef =
    FieldDef::new("crc-iv-index", 0, 3, 3, Uint, High, "cached CRC IV index (driver default 0)");
/// Copy `[13:6]` the eight endianness swap flags.
pub const CP_MC_ENDIAN: FieldDef = FieldDef::new(
    "endianness",
    0,
    6,
    8,
    Uint,
    High,
    "byte / bit swaps of result, intermediate, source, init (driver default 0)",
);
/// Copy bit 14: validate CRC.
pub const CP_MC_VALIDATE_CRC: FieldDef =
    FieldDef::new("validate-crc", 0, 14, 1, Flag, High, "validate CRC (driver default 0)");
/// Copy bit 15: use the stored CRC IV.
pub const CP_MC_USE_STORED_IV: FieldDef =
    FieldDef::new("use-stored-crc-iv", 0, 15, 1, Flag, High, "use stored CRC IV (driver default 0)");
/// Copy bit 16: send the CRC result.
pub const CP_MC_SEND_CRC: FieldDef =
    FieldDef::new("send-crc", 0, 16, 1, Flag, High, "send CRC result (driver default 0)");
/// Copy bit 17: store the CRC result.
pub const CP_MC_STORE_CRC: FieldDef =
    FieldDef::new("store-crc", 0, 17, 1, Flag, High, "store CRC result (driver default 0)");
/// Copy bit 18: store the source CRC.
pub const CP_MC_STORE_SRC_CRC: FieldDef =
    FieldDef::new("store-source-crc", 0, 18, 1, Flag, High, "store source CRC (driver default 0)");
/// Copy bit 19: copy the source data.
pub const CP_MC_COPY_SRC: FieldDef =
    FieldDef::new("copy-source-data", 0, 19, 1, Flag, High, "copy source data (driver default 1)");
/// Copy `[22:20]` op type.
pub const CP_MC_OP_TYPE: FieldDef = FieldDef::new("op-type", 0, 20, 3, Uint, High, "op type (driver default 0)");
/// Copy `[31:27]`, reserved in the driver's bitfields.
pub const CP_MC_RSVD: FieldDef = FieldDef::new("rsvd", 0, 27, 5, Uint, High, "reserved (driver default 0)");
/// The plain-copy meta-control word: op `[25:23]` = 2 (the driver's `ssmae_op` 0b010).
pub const COPY_META_CTRL: Layout = Layout {
    name: "copy-meta-ctrl",
    words: 1,
    fixed: [0x0100_0000, 0, 0, 0],
    fixed_tag: High,
    fields: &[
        CP_MC_LAST_BLOCK,
        CP_MC_FIRST_BLOCK,
        CP_MC_BLOCK_RSVD,
        CP_MC_CRC_IV,
        CP_MC_ENDIAN,
        CP_MC_VALIDATE_CRC,
        CP_MC_USE_STORED_IV,
        CP_MC_SEND_CRC,
        CP_MC_STORE_CRC,
        CP_MC_STORE_SRC_CRC,
        CP_MC_COPY_SRC,
        CP_MC_OP_TYPE,
        MC_WRITE_BARRIER,
        CP_MC_RSVD,
    ],
    source: "public driver udma/udma_m2m.c: M2S meta_ctrl bitfield, default 0x01080003, write barrier bit 26 (GAPS.md §12)",
};

/// EXT (combo) meta-control: `0x2400000` base.
pub const EXT_META_CTRL: Layout = Layout {
    name: "ext-meta-ctrl",
    words: 1,
    fixed: [0x0240_0000, 0, 0, 0],
    fixed_tag: High,
    fields: &[MC_SUB, MC_MID_DT, MC_ACCUM_DT],
    source: "al_sdma_m2s_build_cce_ext_meta_ctrl @0x451dc0 (study §2.6)",
};

/// Replication `[15:0]` count.
pub const REP_MC_COUNT: FieldDef =
    FieldDef::new("count", 0, 0, 16, Uint, Med, "replication count [15:0] (companion chapter 'Meta-Control Overlays')");
/// Replication bit 26: set together with a non-zero mode.
pub const REP_MC_EXT: FieldDef =
    FieldDef::new("ext", 0, 26, 1, Implied, High, "the 0x4000000 of 0x4A00000, set iff mode != 0 (study §2.5)");
/// Replication `[31:29]` mode.
pub const REP_MC_MODE: FieldDef =
    FieldDef::new("mode", 0, 29, 3, Uint, High, "mode << 29, ORed with 0x4A00000 when mode != 0 (study §2.5)");
/// Replication meta-control: base `0xA00000` (companion), mode formula (study §2.5).
pub const REPLICATION_META_CTRL: Layout = Layout {
    name: "replication-meta-ctrl",
    words: 1,
    fixed: [0x00A0_0000, 0, 0, 0],
    fixed_tag: Med,
    fields: &[REP_MC_COUNT, REP_MC_EXT, REP_MC_MODE],
    source: "al_sdma_m2s_build_replication_meta_ctrl @0x451b00 (study §2.5; base and count: companion chapter; composition MODEL)",
};
