//! The numeric dtypes ([`NumType`], [`AccumType`]) and the float formats behind them.

use crate::error::NumericsError;
use cce_format::dtype::SdmaDtype;
use core::fmt;

/// A binary floating-point format: sign, `ebits` exponent bits, `mbits` stored mantissa bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FloatFormat {
    /// Exponent bits.
    pub ebits: u32,
    /// Stored mantissa (fraction) bits.
    pub mbits: u32,
    /// Exponent bias.
    pub bias: i32,
    /// IEEE-like: the all-ones exponent holds ±inf (mantissa 0) and NaNs. When false (the `fn`
    /// formats) there is no infinity and only the all-ones pattern is NaN.
    pub has_inf: bool,
}

impl FloatFormat {
    /// IEEE binary32.
    pub const F32: FloatFormat = FloatFormat { ebits: 8, mbits: 23, bias: 127, has_inf: true };
    /// IEEE binary16.
    pub const F16: FloatFormat = FloatFormat { ebits: 5, mbits: 10, bias: 15, has_inf: true };
    /// bfloat16.
    pub const BF16: FloatFormat = FloatFormat { ebits: 8, mbits: 7, bias: 127, has_inf: true };
    /// fp8 e3m4, IEEE-like (ml_dtypes `float8_e3m4`, max 15.5).
    pub const E3M4: FloatFormat = FloatFormat { ebits: 3, mbits: 4, bias: 3, has_inf: true };
    /// fp8 e4m3, IEEE-like (ml_dtypes `float8_e4m3`, max 240).
    pub const E4M3: FloatFormat = FloatFormat { ebits: 4, mbits: 3, bias: 7, has_inf: true };
    /// fp8 e5m2 (ml_dtypes `float8_e5m2`, max 57344).
    pub const E5M2: FloatFormat = FloatFormat { ebits: 5, mbits: 2, bias: 15, has_inf: true };
    /// fp8 e4m3fn (ml_dtypes `float8_e4m3fn`, max 448, no inf, NaN = 0x7f / 0xff).
    pub const E4M3FN: FloatFormat = FloatFormat { ebits: 4, mbits: 3, bias: 7, has_inf: false };

    /// The sign bit.
    pub const fn sign_bit(self) -> u32 {
        1 << (self.ebits + self.mbits)
    }
    /// Mask of the stored mantissa.
    pub const fn mant_mask(self) -> u32 {
        (1 << self.mbits) - 1
    }
    /// The all-ones exponent field, in place.
    pub const fn exp_mask(self) -> u32 {
        ((1 << self.ebits) - 1) << self.mbits
    }
    /// The largest finite magnitude's encoding.
    pub const fn max_finite(self) -> u32 {
        if self.has_inf { self.exp_mask() - 1 } else { (self.exp_mask() | self.mant_mask()) - 1 }
    }
    /// The encoding of +inf, if the format has one.
    pub const fn inf(self) -> Option<u32> {
        if self.has_inf { Some(self.exp_mask()) } else { None }
    }
    /// The canonical quiet NaN (positive): all-ones exponent and the top mantissa bit for
    /// IEEE-like formats, the all-ones pattern for `fn` formats.
    pub const fn nan(self) -> u32 {
        if self.has_inf { self.exp_mask() | (1 << (self.mbits - 1)) } else { self.exp_mask() | self.mant_mask() }
    }
    /// What a finite overflow (or an infinity) becomes without saturation: ±inf, or NaN for `fn`.
    pub const fn overflow(self) -> u32 {
        if self.has_inf { self.exp_mask() } else { self.nan() }
    }
    /// Whether the (sign-free) magnitude bits `mag` encode a NaN.
    pub const fn is_nan_mag(self, mag: u32) -> bool {
        if self.has_inf {
            mag & self.exp_mask() == self.exp_mask() && mag & self.mant_mask() != 0
        } else {
            mag == self.exp_mask() | self.mant_mask()
        }
    }
    /// Precision in bits, the implicit bit included.
    pub const fn precision(self) -> u32 {
        self.mbits + 1
    }
}

/// A numeric element type: every SDMA input/output dtype, plus e4m3fn (no SDMA code; later
/// generations).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[allow(missing_docs)]
pub enum NumType {
    U8,
    I8,
    U16,
    I16,
    U32,
    I32,
    U64,
    I64,
    F16,
    Bf16,
    F32,
    /// fp8 e3m4 (SDMA `fp8e3`).
    F8E3M4,
    /// fp8 e4m3, IEEE-like with inf, max 240 (SDMA `fp8e4`).
    F8E4M3,
    /// fp8 e5m2 (SDMA `fp8e5`).
    F8E5M2,
    /// fp8 e4m3fn: no inf, max 448. No SDMA code.
    F8E4M3Fn,
}

impl NumType {
    /// Every numeric type.
    pub const ALL: [NumType; 15] = [
        NumType::U8,
        NumType::I8,
        NumType::U16,
        NumType::I16,
        NumType::U32,
        NumType::I32,
        NumType::U64,
        NumType::I64,
        NumType::F16,
        NumType::Bf16,
        NumType::F32,
        NumType::F8E3M4,
        NumType::F8E4M3,
        NumType::F8E5M2,
        NumType::F8E4M3Fn,
    ];

    /// The type of an SDMA input or output dtype; `invalid` and `fp32r` are rejected.
    pub fn from_sdma(d: SdmaDtype) -> Result<NumType, NumericsError> {
        Self::from_sdma_role(d, "an input or output")
    }

    /// The type [`NumType::to_sdma`] maps to `d` (its one map), or a refusal naming `role`.
    fn from_sdma_role(d: SdmaDtype, role: &'static str) -> Result<NumType, NumericsError> {
        NumType::ALL.into_iter().find(|t| t.to_sdma() == Some(d)).ok_or(NumericsError::UnsupportedDtype {
            dtype: d,
            value: d.value(),
            role,
        })
    }

    /// The SDMA dtype, `None` for e4m3fn: the one map between the two enums
    /// ([`NumType::from_sdma`] is its inverse).
    pub const fn to_sdma(self) -> Option<SdmaDtype> {
        Some(match self {
            NumType::U8 => SdmaDtype::U8,
            NumType::I8 => SdmaDtype::I8,
            NumType::U16 => SdmaDtype::U16,
            NumType::I16 => SdmaDtype::I16,
            NumType::U32 => SdmaDtype::U32,
            NumType::I32 => SdmaDtype::I32,
            NumType::U64 => SdmaDtype::U64,
            NumType::I64 => SdmaDtype::I64,
            NumType::F16 => SdmaDtype::Fp16,
            NumType::Bf16 => SdmaDtype::Bf16,
            NumType::F32 => SdmaDtype::Fp32,
            NumType::F8E3M4 => SdmaDtype::Fp8E3,
            NumType::F8E4M3 => SdmaDtype::Fp8E4,
            NumType::F8E5M2 => SdmaDtype::Fp8E5,
            NumType::F8E4M3Fn => return None,
        })
    }

    /// Element size in bytes: its SDMA dtype's ([`SdmaDtype::bytes`], the one table of sizes);
    /// e4m3fn, which has no SDMA code, is e4m3's byte.
    pub const fn size(self) -> usize {
        match self.to_sdma() {
            Some(d) => d.bytes() as usize,
            None => SdmaDtype::Fp8E4.bytes() as usize,
        }
    }

    /// The float format, `None` for integers.
    pub const fn float_format(self) -> Option<FloatFormat> {
        match self {
            NumType::F16 => Some(FloatFormat::F16),
            NumType::Bf16 => Some(FloatFormat::BF16),
            NumType::F32 => Some(FloatFormat::F32),
            NumType::F8E3M4 => Some(FloatFormat::E3M4),
            NumType::F8E4M3 => Some(FloatFormat::E4M3),
            NumType::F8E5M2 => Some(FloatFormat::E5M2),
            NumType::F8E4M3Fn => Some(FloatFormat::E4M3FN),
            _ => None,
        }
    }

    /// Whether this is a float type.
    pub const fn is_float(self) -> bool {
        self.float_format().is_some()
    }

    /// For an integer type: (bits, signed); the bits are its [`NumType::size`]'s.
    pub const fn int_info(self) -> Option<(u32, bool)> {
        let signed = match self {
            NumType::U8 | NumType::U16 | NumType::U32 | NumType::U64 => false,
            NumType::I8 | NumType::I16 | NumType::I32 | NumType::I64 => true,
            _ => return None,
        };
        Some((self.size() as u32 * 8, signed))
    }

    /// The name used by the CLI: the SDMA name (`bf16`, `fp8e4`, …) or `fp8e4fn`.
    pub const fn name(self) -> &'static str {
        match self.to_sdma() {
            Some(d) => d.name(),
            None => "fp8e4fn",
        }
    }

    /// Looks a type up by [`NumType::name`]; also accepts `f16`, `f32`, `e3m4`, `e4m3`, `e5m2`,
    /// `e4m3fn`.
    pub fn from_name(name: &str) -> Result<NumType, NumericsError> {
        let alias = match name {
            "f16" => Some(NumType::F16),
            "f32" => Some(NumType::F32),
            "e3m4" | "fp8e3m4" => Some(NumType::F8E3M4),
            "e4m3" | "fp8e4m3" => Some(NumType::F8E4M3),
            "e5m2" | "fp8e5m2" => Some(NumType::F8E5M2),
            "e4m3fn" | "fp8e4m3fn" => Some(NumType::F8E4M3Fn),
            _ => None,
        };
        alias
            .or_else(|| NumType::ALL.iter().copied().find(|t| t.name() == name))
            .ok_or_else(|| NumericsError::UnknownDtypeName(name.into()))
    }
}

impl fmt::Display for NumType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl core::str::FromStr for NumType {
    type Err = NumericsError;
    /// A dtype by its SDMA name (so `fp32r` and `invalid` get [`NumType::from_sdma`]'s refusal,
    /// which says why) or by [`NumType::from_name`] (`f32`, `e4m3fn`, …).
    fn from_str(s: &str) -> Result<NumType, NumericsError> {
        match SdmaDtype::from_name(s) {
            Some(d) => NumType::from_sdma(d),
            None => NumType::from_name(s),
        }
    }
}

/// The accumulate dtype: any [`NumType`], or the `fp32r` tag.
///
/// `fp32r` (SDMA 11, byte size 0) has unknown numerics (GAPS.md §8, LOW); the model treats it
/// exactly as fp32.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AccumType {
    /// A numeric type.
    Num(NumType),
    /// The `fp32r` tag, computed as fp32 (tag LOW).
    Fp32r,
}

impl AccumType {
    /// Accepts every numeric SDMA dtype plus `fp32r`; rejects `invalid`.
    pub fn from_sdma(d: SdmaDtype) -> Result<AccumType, NumericsError> {
        if d == SdmaDtype::Fp32r {
            return Ok(AccumType::Fp32r);
        }
        NumType::from_sdma_role(d, "an accumulate").map(AccumType::Num)
    }

    /// The type the arithmetic is done in (`fp32r` → fp32).
    pub const fn num_type(self) -> NumType {
        match self {
            AccumType::Num(t) => t,
            AccumType::Fp32r => NumType::F32,
        }
    }
}

impl From<NumType> for AccumType {
    fn from(t: NumType) -> Self {
        AccumType::Num(t)
    }
}
