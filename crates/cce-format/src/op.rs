//! The op enums and the kbin → SDMA op remap (study §1.1; GAPS.md §1).
//!
//! The runtime's two bit-level op codes live here: [`KbinOp`] (what the host asks for) and
//! [`SdmaCceType`] (what the device executes). An op's name is written once, in
//! [`KbinOp::name`]; an SDMA type with a kbin op is named by it (through the runtime's remap,
//! [`SdmaCceType::kbin_op`]), so only the device-only `ext` and `gce` are named in
//! [`SdmaCceType::name`]. Every op above (a packet's, a reduce's, an all-reduce's) names
//! itself through these.

use alloc::string::String;

use crate::error::FormatError;

/// Names as a message lists what it expects: `add, fma, min or max` (one name alone; none
/// gives the empty text).
pub fn alternatives<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    let names: alloc::vec::Vec<&str> = names.into_iter().collect();
    match names.split_last() {
        None => String::new(),
        Some((last, [])) => String::from(*last),
        Some((last, rest)) => alloc::format!("{} or {last}", rest.join(", ")),
    }
}

/// `kbin_dma_desc_op`: the host's op enum (64-bit; INVALID is `u64::MAX`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum KbinOp {
    Invalid,
    Copy,
    Fma,
    Add,
    Min,
    Max,
    Transpose,
    Num,
}

impl KbinOp {
    /// Every kbin op.
    pub const ALL: [KbinOp; 8] = [
        KbinOp::Invalid,
        KbinOp::Copy,
        KbinOp::Fma,
        KbinOp::Add,
        KbinOp::Min,
        KbinOp::Max,
        KbinOp::Transpose,
        KbinOp::Num,
    ];

    /// The enum value (HIGH, enums.json).
    pub const fn value(self) -> u64 {
        match self {
            KbinOp::Invalid => u64::MAX,
            KbinOp::Copy => 0,
            KbinOp::Fma => 1,
            KbinOp::Add => 2,
            KbinOp::Min => 3,
            KbinOp::Max => 4,
            KbinOp::Transpose => 5,
            KbinOp::Num => 6,
        }
    }

    /// The op with that value, if any.
    pub fn from_value(v: u64) -> Option<KbinOp> {
        Self::ALL.into_iter().find(|op| op.value() == v)
    }

    /// Name as the CLI spells it (`copy`, `fma`, `add`, `min`, `max`, `transpose`, …).
    pub const fn name(self) -> &'static str {
        match self {
            KbinOp::Invalid => "invalid",
            KbinOp::Copy => "copy",
            KbinOp::Fma => "fma",
            KbinOp::Add => "add",
            KbinOp::Min => "min",
            KbinOp::Max => "max",
            KbinOp::Transpose => "transpose",
            KbinOp::Num => "num",
        }
    }

    /// Looks up a CLI name.
    pub fn from_name(name: &str) -> Option<KbinOp> {
        Self::ALL.into_iter().find(|op| op.name() == name)
    }
}

/// `SDMA_CCETYPE`: the device's CCE op enum. EXT and GCE are device-only (study §5.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
#[allow(missing_docs)]
pub enum SdmaCceType {
    Add = 0,
    Fma = 1,
    Max = 2,
    Min = 3,
    Ext = 4,
    Gce = 5,
}

impl SdmaCceType {
    /// Every SDMA CCE type, in value order.
    pub const ALL: [SdmaCceType; 6] =
        [SdmaCceType::Add, SdmaCceType::Fma, SdmaCceType::Max, SdmaCceType::Min, SdmaCceType::Ext, SdmaCceType::Gce];

    /// The enum value.
    pub const fn value(self) -> u32 {
        self as u32
    }

    /// The type with that value, if any.
    pub fn from_value(v: u64) -> Option<SdmaCceType> {
        Self::ALL.get(usize::try_from(v).ok()?).copied()
    }

    /// Name (`add`, `fma`, `max`, `min`, `ext`, `gce`): its kbin op's ([`KbinOp::name`]), the
    /// device-only EXT and GCE named here.
    pub const fn name(self) -> &'static str {
        match self.kbin_op() {
            Some(op) => op.name(),
            None if matches!(self, SdmaCceType::Ext) => "ext",
            None => "gce",
        }
    }

    /// The kbin op the runtime's remap ([`CSWTCH_21`]) turns into this type; `None` for the
    /// device-only EXT and GCE.
    pub const fn kbin_op(self) -> Option<KbinOp> {
        let mut i = 0;
        while i < CSWTCH_21.len() {
            if CSWTCH_21[i] == self.value() {
                let mut k = 0;
                while k < KbinOp::ALL.len() {
                    if KbinOp::ALL[k].value() == i as u64 + 1 {
                        return Some(KbinOp::ALL[k]);
                    }
                    k += 1;
                }
            }
            i += 1;
        }
        None
    }

    /// Whether a kbin op can produce it (false for EXT and GCE).
    pub const fn has_kbin_op(self) -> bool {
        self.kbin_op().is_some()
    }
}

/// CSWTCH.21 @0x9d6e00: the 4-entry remap indexed by `kbin op − 1`, read byte-exact (HIGH).
pub const CSWTCH_21: [u32; 4] = [1, 0, 3, 2];

/// `kbin_cce_op_to_sdma_cce_op` @0x2664c0: `(u32)(op − 1) > 3` → "Unsupported CCE Op! %u";
/// else CSWTCH.21[op − 1]. The runtime truncates the 64-bit op to 32 bits first, so INVALID
/// (`u64::MAX`) reports 4294967295.
pub fn kbin_cce_op_to_sdma_cce_op(op: u64) -> Result<SdmaCceType, FormatError> {
    let op32 = op as u32;
    if op32.wrapping_sub(1) > 3 {
        return Err(FormatError::UnsupportedCceOp(op32));
    }
    let sdma = CSWTCH_21[(op32 - 1) as usize];
    Ok(SdmaCceType::ALL[sdma as usize])
}
