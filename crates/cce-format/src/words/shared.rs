//! Fields several words share, declared once: the meta-control words' sub-op, dtype nibbles
//! and write barrier (study §2.6; the driver), and the 16-byte compute descriptors' W0 and
//! their "more" flag (study §2.3–§2.5).

use crate::layout::FieldDef;
use crate::layout::FieldKind::*;
use crate::tag::Tag::*;

use super::len_ctrl::LC_META;

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

/// W0's fixed bits of every 16-byte compute descriptor: META (the study's `| 0x800000`), the
/// UDMA len_ctrl bit that marks a meta descriptor.
pub const COMPUTE_W0: u32 = LC_META.place(1);

/// W0 `[22:0]` write-back argument.
pub const D_WB: FieldDef = FieldDef::new("wb", 0, 0, 23, Uint, High, "W0 low bits: the wb argument (study §2.3)");
/// W0 `[31:24]` meta index.
pub const D_META_IDX: FieldDef = FieldDef::new("meta-idx", 0, 24, 8, Uint, High, "W0 meta_idx << 24 (study §2.3)");
/// W0 write-back of a descriptor whose W0 the study gives only as `|= 0x800000`.
pub const D_WB_MODEL: FieldDef = FieldDef::new("wb", 0, 0, 23, Uint, Model, "W0 low bits, as in the FMA frame (MODEL)");
/// W0 meta index of such a descriptor.
pub const D_META_IDX_MODEL: FieldDef =
    FieldDef::new("meta-idx", 0, 24, 8, Uint, Model, "W0 meta_idx << 24, as in the FMA frame (MODEL)");
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
