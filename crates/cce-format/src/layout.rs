//! Every field of every word, as data (one table per encoder).
//!
//! The typed codecs in [`crate::meta_ctrl`] and [`crate::descriptor`] read and write their
//! fields through these definitions, and [`Layout::describe`] decodes any words generically for
//! display: each field's value, where it sits and its tag, plus the bits no field explains.
//! Describing never fails and never panics, whatever the bits.

use alloc::vec::Vec;

use crate::bits::BitSpan;
use crate::tag::Tag;

/// How a field's bits are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldKind {
    /// An unsigned integer.
    Uint,
    /// A one-bit flag.
    Flag,
    /// A 4-bit SDMA dtype nibble.
    Dtype,
    /// A 3-bit constant-dtype field (an SDMA dtype value below 8, LOW).
    Dtype3,
    /// A 2-bit FMA operand selector (stored 0, input 1, scale 2).
    Selector,
    /// The bits of an IEEE-754 binary32.
    F32Bits,
    /// A flag implied by another field (not set on its own; e.g. replication bit 26).
    Implied,
    /// A flag written as all bits of its span set (e.g. the 0x6000000 sub-descriptor word);
    /// any other non-zero value is not a valid encoding.
    Pattern,
}

/// One field of a layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FieldDef {
    /// Name as the CLI spells it (`--in-dt`, JSON key `in-dt`).
    pub name: &'static str,
    /// Word index (0 for a meta-control word, 0..=3 in a descriptor).
    pub word: u8,
    /// Where the bits are.
    pub span: BitSpan,
    /// How to read them.
    pub kind: FieldKind,
    /// How far the field (position and meaning) can be trusted.
    pub tag: Tag,
    /// One line on what it is and where it comes from.
    pub note: &'static str,
}

impl FieldDef {
    /// Whether a user sets this field (false for implied ones).
    pub const fn is_input(&self) -> bool {
        !matches!(self.kind, FieldKind::Implied)
    }

    /// Largest value an encoder accepts for the field: 1 for flags and patterns, else the span.
    pub const fn input_max(&self) -> u64 {
        match self.kind {
            FieldKind::Flag | FieldKind::Pattern | FieldKind::Implied => 1,
            _ => self.span.max() as u64,
        }
    }

    const fn new(
        name: &'static str,
        word: u8,
        lo: u8,
        width: u8,
        kind: FieldKind,
        tag: Tag,
        note: &'static str,
    ) -> Self {
        FieldDef { name, word, span: BitSpan::new(lo, width), kind, tag, note }
    }

    /// Reads the field from `words` (a missing word reads as 0).
    pub fn get(&self, words: &[u32]) -> u32 {
        words.get(self.word as usize).map_or(0, |w| self.span.get(*w))
    }

    /// The field's value placed in its word (masked to width).
    pub const fn place(&self, value: u32) -> u32 {
        self.span.place(value)
    }

    /// `Wn[hi:lo]`, or `[hi:lo]` for a one-word layout.
    pub fn location(&self, words: u8) -> alloc::string::String {
        let bits = if self.span.width == 1 {
            alloc::format!("[{}]", self.span.lo)
        } else {
            alloc::format!("[{}:{}]", self.span.hi(), self.span.lo)
        };
        if words == 1 { bits } else { alloc::format!("W{}{}", self.word, bits) }
    }
}

/// A word layout: bits that are always set, and the fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Encoder name as the CLI spells it.
    pub name: &'static str,
    /// 1 for a meta-control word, 4 for a 16-byte descriptor.
    pub words: u8,
    /// Bits every encoding sets (the op base constants, W0 bit 23, …).
    pub fixed: [u32; 4],
    /// Tag of the fixed bits.
    pub fixed_tag: Tag,
    /// The fields.
    pub fields: &'static [FieldDef],
    /// Where it comes from.
    pub source: &'static str,
}

/// One field's decoded value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldValue {
    /// The definition.
    pub def: FieldDef,
    /// The raw value of its bits.
    pub value: u32,
}

impl Layout {
    /// The mask of bits a field or the fixed constant accounts for, per word.
    pub fn covered(&self) -> [u32; 4] {
        let mut m = self.fixed;
        for f in self.fields {
            m[f.word as usize] |= f.span.mask();
        }
        m
    }

    /// Each field's value, in table order.
    pub fn describe(&self, words: &[u32]) -> Vec<FieldValue> {
        self.fields.iter().map(|def| FieldValue { def: *def, value: def.get(words) }).collect()
    }

    /// Per word: set bits that neither a field nor the fixed constant explains.
    pub fn unexplained(&self, words: &[u32]) -> [u32; 4] {
        let covered = self.covered();
        core::array::from_fn(|i| words.get(i).copied().unwrap_or(0) & !covered[i])
    }

    /// Per word: fixed bits that are clear.
    pub fn missing_fixed(&self, words: &[u32]) -> [u32; 4] {
        core::array::from_fn(|i| self.fixed[i] & !words.get(i).copied().unwrap_or(0))
    }

    /// Whether the words carry all fixed bits and nothing unexplained.
    pub fn fits(&self, words: &[u32]) -> bool {
        self.unexplained(words) == [0; 4] && self.missing_fixed(words) == [0; 4]
    }

    /// Looks up a field by name.
    pub fn field(&self, name: &str) -> Option<&'static FieldDef> {
        self.fields.iter().find(|f| f.name == name)
    }
}

use FieldKind::*;
use Tag::*;

// ---- meta-control words (study §2.6) -------------------------------------------------------

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

// ---- 16-byte compute descriptors (study §2.2–§2.5) -----------------------------------------

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

// ---- UDMA data descriptors (GAPS.md §6, public layout) -------------------------------------

/// len_ctrl `[15:0]` length; 0 means 65536.
pub const LC_LENGTH: FieldDef = FieldDef::new("length", 0, 0, 16, Uint, Med, "byte length, 0 = 65536 (UDMA len_ctrl)");
/// len_ctrl bit 23 META.
pub const LC_META: FieldDef =
    FieldDef::new("meta", 0, 23, 1, Flag, Med, "META_DATA: a meta descriptor (UDMA len_ctrl)");
/// W0's fixed bits of every 16-byte compute descriptor: META (the study's `| 0x800000`).
pub const COMPUTE_W0: u32 = LC_META.place(1);
/// len_ctrl `[25:24]` ring id.
pub const LC_RING_ID: FieldDef =
    FieldDef::new("ring-id", 0, 24, 2, Uint, Med, "ring-id / phase, changes on wrap (UDMA len_ctrl)");
/// len_ctrl bit 26 FIRST.
pub const LC_FIRST: FieldDef =
    FieldDef::new("first", 0, 26, 1, Flag, Med, "FIRST descriptor of a packet (UDMA len_ctrl)");
/// len_ctrl bit 27 LAST.
pub const LC_LAST: FieldDef = FieldDef::new("last", 0, 27, 1, Flag, Med, "LAST descriptor of a packet (UDMA len_ctrl)");
/// len_ctrl bit 28 INT_EN.
pub const LC_INT_EN: FieldDef = FieldDef::new("int-en", 0, 28, 1, Flag, Med, "interrupt on completion (UDMA len_ctrl)");
/// S2M len_ctrl bit 29: STRONG_ORDER_WR (v3+) in the companion chapter, NO_SNOOP_H in the
/// Annapurna HAL (docs/MODEL.md P15).
pub const LC_SOW: FieldDef = FieldDef::new(
    "strong-order",
    0,
    29,
    1,
    Flag,
    Model,
    "S2M bit 29: STRONG_ORDER_WR v3+ (companion chapter; the driver's SOW) / NO_SNOOP_H (Annapurna HAL); read as strong-order (MODEL P15)",
);
/// The S2M len_ctrl bits the sources read differently (docs/MODEL.md P15): bit, then the
/// readings, for listings to show beside the field when the bit is set.
pub const S2M_BIT_READINGS: [(u8, &str); 3] = [
    (27, "LAST (companion chapter) | FLUSH (Annapurna HAL)"),
    (29, "STRONG_ORDER_WR v3+ (companion chapter) | NO_SNOOP_H (Annapurna HAL)"),
    (31, "CONCAT (companion chapter) | DUAL_BUF (Annapurna HAL)"),
];
/// S2M len_ctrl bit 26: FIRST on M2S; the driver's S2M never sets it.
pub const S2M_FIRST: FieldDef = FieldDef::new(
    "first",
    0,
    26,
    1,
    Flag,
    Model,
    "S2M bit 26: not set by the driver's S2M (GAPS.md §12; cce ring dumps v1 set FIRST here); refused (MODEL P8)",
);
/// S2M len_ctrl bit 27: LAST in the companion chapter, FLUSH in the Annapurna HAL.
pub const S2M_LAST: FieldDef = FieldDef::new(
    "last",
    0,
    27,
    1,
    Flag,
    Model,
    "S2M bit 27: LAST (companion chapter; cce ring dumps v1) / FLUSH (Annapurna HAL); the driver sets neither; refused (MODEL P15)",
);
/// S2M len_ctrl bit 30: DMB is an M2S flag.
pub const S2M_DMB: FieldDef = FieldDef::new(
    "dmb",
    0,
    30,
    1,
    Flag,
    Model,
    "S2M bit 30: DMB is an M2S flag; the driver never sets it on S2M; refused (MODEL P8)",
);
/// S2M len_ctrl bit 31: CONCAT in the companion chapter, DUAL_BUF in the Annapurna HAL.
pub const S2M_CONCAT: FieldDef = FieldDef::new(
    "concat",
    0,
    31,
    1,
    Flag,
    Model,
    "S2M bit 31: CONCAT (companion chapter) / DUAL_BUF (Annapurna HAL); the driver sets neither; refused (MODEL P15)",
);
/// len_ctrl bit 30 DMB.
pub const LC_DMB: FieldDef = FieldDef::new("dmb", 0, 30, 1, Flag, Med, "data memory barrier (UDMA len_ctrl)");
/// len_ctrl bit 31 CONCAT.
pub const LC_CONCAT: FieldDef =
    FieldDef::new("concat", 0, 31, 1, Flag, Med, "concatenate with the next descriptor (UDMA len_ctrl)");
/// M2S W1 meta_ctrl.
pub const M2S_META_CTRL: FieldDef =
    FieldDef::new("meta-ctrl", 1, 0, 32, Uint, Med, "meta_ctrl: the CCE meta-control word rides here (GAPS.md §6)");
/// M2S W2 buf_ptr low.
pub const M2S_BUF_LO: FieldDef = FieldDef::new("buf-ptr-lo", 2, 0, 32, Uint, Med, "source address, low 32 bits");
/// M2S W3 buf_ptr high.
pub const M2S_BUF_HI: FieldDef = FieldDef::new("buf-ptr-hi", 3, 0, 32, Uint, Med, "source address, high 32 bits");
/// The M2S (tx) data descriptor.
pub const M2S_DATA: Layout = Layout {
    name: "m2s-data",
    words: 4,
    fixed: [0; 4],
    fixed_tag: Med,
    fields: &[
        LC_LENGTH,
        LC_META,
        LC_RING_ID,
        LC_FIRST,
        LC_LAST,
        LC_INT_EN,
        LC_DMB,
        LC_CONCAT,
        M2S_META_CTRL,
        M2S_BUF_LO,
        M2S_BUF_HI,
    ],
    source: "UDMA M2S descriptor {len_ctrl, meta_ctrl, buf_ptr} (GAPS.md §6)",
};
/// S2M W1 buf2_ptr_lo.
pub const S2M_BUF2_LO: FieldDef =
    FieldDef::new("buf2-ptr-lo", 1, 0, 32, Uint, Med, "second buffer, low 32 bits; 0 on M2M");
/// S2M W2 buf1_ptr low.
pub const S2M_BUF1_LO: FieldDef = FieldDef::new("buf1-ptr-lo", 2, 0, 32, Uint, Med, "destination address, low 32 bits");
/// S2M W3 buf1_ptr high.
pub const S2M_BUF1_HI: FieldDef =
    FieldDef::new("buf1-ptr-hi", 3, 0, 32, Uint, Med, "destination address, high 32 bits");
/// The S2M (rx) data descriptor.
pub const S2M_DATA: Layout = Layout {
    name: "s2m-data",
    words: 4,
    fixed: [0; 4],
    fixed_tag: Med,
    fields: &[
        LC_LENGTH,
        LC_META,
        LC_RING_ID,
        S2M_FIRST,
        S2M_LAST,
        LC_INT_EN,
        LC_SOW,
        S2M_DMB,
        S2M_CONCAT,
        S2M_BUF2_LO,
        S2M_BUF1_LO,
        S2M_BUF1_HI,
    ],
    source: "UDMA S2M descriptor {len_ctrl, buf2_ptr_lo, buf1_ptr} (GAPS.md §6); the public driver sets only length, ring id and INT_EN (GAPS.md §12)",
};

/// Every meta-control layout.
pub const META_CTRL_LAYOUTS: [&Layout; 7] = [
    &FMA_META_CTRL,
    &MIN_MAX_META_CTRL,
    &ADD_META_CTRL,
    &GRADIENT_META_CTRL,
    &EXT_META_CTRL,
    &REPLICATION_META_CTRL,
    &COPY_META_CTRL,
];

/// Every 16-byte layout.
pub const DESCRIPTOR_LAYOUTS: [&Layout; 7] = [
    &FMA_DESCRIPTOR,
    &MIN_MAX_DESCRIPTOR,
    &SEED_INIT_DESCRIPTOR,
    &REPLICATION_DESCRIPTOR,
    &GRADIENT_DESCRIPTOR,
    &M2S_DATA,
    &S2M_DATA,
];

/// Finds a layout by CLI name.
pub fn by_name(name: &str) -> Option<&'static Layout> {
    META_CTRL_LAYOUTS.iter().chain(DESCRIPTOR_LAYOUTS.iter()).copied().find(|l| l.name == name)
}
