//! The dtype enums and tables (study §1.2; GAPS.md §2, §3).
//!
//! Two numberings meet here: the SDMA dtype (`al_sdma_m2m_meta_ctrl_data_type`, the 4-bit nibble
//! of every meta-control word) and the kbin dtype (the runtime's container enum). The runtime
//! maps kbin → SDMA through the 15-entry table CSWTCH.19 and sizes elements through two tables
//! indexed by SDMA dtype: `sdma_data_type_size` (fp32r = 0, used for reduce packet sizing) and
//! `data_type_sizes.0` (fp32r = 4, used by `kbin_get_dtype_size`). All three are kept here, named.

use crate::error::FormatError;
use crate::tag::Tag;

/// The SDMA dtype: a 4-bit value, so every nibble names exactly one variant and decoding a
/// nibble never fails.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
#[allow(missing_docs)]
pub enum SdmaDtype {
    #[default]
    Invalid = 0,
    U64 = 1,
    I8 = 2,
    U8 = 3,
    I16 = 4,
    U16 = 5,
    Bf16 = 6,
    Fp16 = 7,
    I32 = 8,
    U32 = 9,
    Fp32 = 10,
    /// The "round/replicated" fp32 tag: rides the accumulate nibble, size 0 in
    /// `sdma_data_type_size` (study §1.2 CORRECTION).
    Fp32r = 11,
    I64 = 12,
    /// fp8 e3m4.
    Fp8E3 = 13,
    /// fp8 e4m3, IEEE-like (has inf, max 240) on NeuronCore v2–v4 (GAPS.md §8).
    Fp8E4 = 14,
    /// fp8 e5m2.
    Fp8E5 = 15,
}

/// One row of the SDMA dtype table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DtypeInfo {
    /// The dtype.
    pub dtype: SdmaDtype,
    /// CLI name (`u64 i8 u8 i16 u16 bf16 fp16 i32 u32 fp32 fp32r i64 fp8e3 fp8e4 fp8e5`).
    pub name: &'static str,
    /// `sdma_data_type_size[dtype]` (8-byte entries, study §1.2): reduce packet sizing.
    pub bytes: u8,
    /// `data_type_sizes.0[dtype]` (4-byte entries, companion chapter): `kbin_get_dtype_size`.
    pub kbin_bytes: u8,
    /// How well the value ↔ name pairing is known.
    pub tag: Tag,
    /// How well `bytes` is known.
    pub bytes_tag: Tag,
}

const fn row(dtype: SdmaDtype, name: &'static str, bytes: u8, kbin_bytes: u8, tag: Tag, bytes_tag: Tag) -> DtypeInfo {
    DtypeInfo { dtype, name, bytes, kbin_bytes, tag, bytes_tag }
}

/// The 16-entry SDMA dtype table, indexed by SDMA value (GAPS.md §2 for names and tags; study
/// §1.2 for fp32r = 0, fp32 = 4, int64 = 8).
pub const SDMA_DTYPES: [DtypeInfo; 16] = {
    use SdmaDtype::*;
    use Tag::*;
    [
        row(Invalid, "invalid", 0, 0, Med, Med),
        row(U64, "u64", 8, 8, Med, Med),
        row(I8, "i8", 1, 1, Med, Med),
        row(U8, "u8", 1, 1, Med, Med),
        row(I16, "i16", 2, 2, Med, Med),
        row(U16, "u16", 2, 2, Med, Med),
        row(Bf16, "bf16", 2, 2, High, Med),
        row(Fp16, "fp16", 2, 2, Med, Med),
        row(I32, "i32", 4, 4, Med, Med),
        row(U32, "u32", 4, 4, Med, Med),
        row(Fp32, "fp32", 4, 4, High, High),
        row(Fp32r, "fp32r", 0, 4, High, High),
        row(I64, "i64", 8, 8, High, High),
        row(Fp8E3, "fp8e3", 1, 1, Med, Med),
        row(Fp8E4, "fp8e4", 1, 1, Med, Med),
        row(Fp8E5, "fp8e5", 1, 1, Med, Med),
    ]
};

impl SdmaDtype {
    /// Every dtype, in value order.
    pub const ALL: [SdmaDtype; 16] = {
        let mut all = [SdmaDtype::Invalid; 16];
        let mut i = 0;
        while i < 16 {
            all[i] = SDMA_DTYPES[i].dtype;
            i += 1;
        }
        all
    };

    /// The dtype a nibble names (the low 4 bits of `v`; never fails).
    pub const fn from_nibble(v: u32) -> SdmaDtype {
        SDMA_DTYPES[(v & 0xF) as usize].dtype
    }

    /// The dtype with value `v`, or an error if `v > 15`.
    pub fn from_value(v: u64) -> Result<SdmaDtype, FormatError> {
        if v <= 15 { Ok(Self::from_nibble(v as u32)) } else { Err(FormatError::NotAnSdmaDtype(v)) }
    }

    /// Looks up a CLI name (`bf16`, `fp8e4`, …; `invalid` for 0). Case-sensitive.
    pub fn from_name(name: &str) -> Option<SdmaDtype> {
        SDMA_DTYPES.iter().find(|r| r.name == name).map(|r| r.dtype)
    }

    /// The numeric value (the nibble).
    pub const fn value(self) -> u32 {
        self as u32
    }

    /// The table row.
    pub const fn info(self) -> &'static DtypeInfo {
        &SDMA_DTYPES[self as usize]
    }

    /// CLI name.
    pub const fn name(self) -> &'static str {
        self.info().name
    }

    /// `sdma_data_type_size[self]`: 0 for `invalid` and `fp32r`.
    pub const fn bytes(self) -> u8 {
        self.info().bytes
    }

    /// `data_type_sizes.0[self]`: 4 for `fp32r`.
    pub const fn kbin_bytes(self) -> u8 {
        self.info().kbin_bytes
    }

    /// The SDMA value's tag.
    pub const fn tag(self) -> Tag {
        self.info().tag
    }

    /// Whether this is a floating-point format.
    pub const fn is_float(self) -> bool {
        matches!(
            self,
            SdmaDtype::Bf16
                | SdmaDtype::Fp16
                | SdmaDtype::Fp32
                | SdmaDtype::Fp32r
                | SdmaDtype::Fp8E3
                | SdmaDtype::Fp8E4
                | SdmaDtype::Fp8E5
        )
    }
}

/// The kbin dtype (`kbin_dtype`, the runtime's container enum; GAPS.md §3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
#[allow(missing_docs)]
pub enum KbinDtype {
    Invalid = 0,
    Fp8E3 = 1,
    Fp8E4 = 2,
    Fp8E5 = 3,
    Fp16 = 4,
    Fp32 = 5,
    Fp32r = 6,
    Bf16 = 7,
    U8 = 8,
    U16 = 9,
    U32 = 10,
    U64 = 11,
    I8 = 12,
    I16 = 13,
    I32 = 14,
    I64 = 15,
}

impl KbinDtype {
    /// Every kbin dtype, in value order.
    pub const ALL: [KbinDtype; 16] = {
        use KbinDtype::*;
        [Invalid, Fp8E3, Fp8E4, Fp8E5, Fp16, Fp32, Fp32r, Bf16, U8, U16, U32, U64, I8, I16, I32, I64]
    };

    /// The numeric value.
    pub const fn value(self) -> u32 {
        self as u32
    }

    /// The kbin dtype with value `v`, if any.
    pub fn from_value(v: u64) -> Option<KbinDtype> {
        Self::ALL.get(usize::try_from(v).ok()?).copied()
    }
}

/// One entry of CSWTCH.19: a kbin dtype and the SDMA dtype it maps to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KbinDtypeRemap {
    /// The kbin dtype (1..=15).
    pub kbin: KbinDtype,
    /// Its SDMA dtype.
    pub sdma: SdmaDtype,
    /// HIGH: the companion chapter "The dtype System" dumps CSWTCH.19 byte-exact (GAPS.md §3).
    pub tag: Tag,
}

/// CSWTCH.19 @0x9d6e20 as the runtime holds it: 15 DWORDs indexed by `kbin − 1`.
pub const CSWTCH_19: [u32; 15] = [13, 14, 15, 7, 10, 11, 6, 3, 5, 9, 1, 2, 4, 8, 12];

/// CSWTCH.19 as typed rows.
pub const KBIN_DTYPE_REMAP: [KbinDtypeRemap; 15] = {
    let mut rows = [KbinDtypeRemap { kbin: KbinDtype::Invalid, sdma: SdmaDtype::Invalid, tag: Tag::High }; 15];
    let mut i = 0;
    while i < 15 {
        rows[i] =
            KbinDtypeRemap { kbin: KbinDtype::ALL[i + 1], sdma: SdmaDtype::from_nibble(CSWTCH_19[i]), tag: Tag::High };
        i += 1;
    }
    rows
};

/// `kbin_dtype_to_sdma_dtype` @0x266460: `d ∉ [1, 15]` → "Unsupported data type!"; else
/// CSWTCH.19[d − 1]. Takes the raw `u32` the runtime takes, with its wrapping range test.
pub fn kbin_dtype_to_sdma_dtype(d: u32) -> Result<SdmaDtype, FormatError> {
    if d.wrapping_sub(1) > 0xE {
        return Err(FormatError::UnsupportedDataType(d));
    }
    Ok(SdmaDtype::from_nibble(CSWTCH_19[(d - 1) as usize]))
}

/// `kbin_get_dtype_size` @0x266520: `data_type_sizes.0[kbin_dtype_to_sdma_dtype(d)]`, 0 for a
/// dtype outside [1, 15] (the runtime logs and returns 0).
pub fn kbin_get_dtype_size(d: u32) -> u8 {
    kbin_dtype_to_sdma_dtype(d).map_or(0, SdmaDtype::kbin_bytes)
}
