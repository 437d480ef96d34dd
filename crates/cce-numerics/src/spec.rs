//! What a reduce computes: [`ReduceSpec`] and its parts.

use crate::error::NumericsError;
use crate::types::{AccumType, NumType};
use alloc::vec::Vec;

/// The largest number of sources one reduce takes (`cce_info`, GAPS.md §8); see
/// [`cce_format::limits::MAX_SOURCES`].
pub use cce_format::limits::MAX_SOURCES;

/// One FMA operand selector (spec §3.1, `al_sdma_m2s_fma_operand`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Operand {
    /// 0: the running accumulator (the stored buffer).
    Stored = 0,
    /// 1: this source's element, converted to the accumulate dtype.
    Input = 1,
    /// 2: this source's fp32 scale.
    Scale = 2,
}

impl Operand {
    /// From the 2-bit selector value; 3 is rejected.
    pub fn from_bits(v: u8) -> Result<Operand, NumericsError> {
        match v {
            0 => Ok(Operand::Stored),
            1 => Ok(Operand::Input),
            2 => Ok(Operand::Scale),
            _ => Err(NumericsError::BadOperandSelector(v)),
        }
    }
}

/// One source's FMA parameters: `acc' = a · b + c`, rounded once into the accumulate dtype.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FmaSource {
    /// The fp32 scale.
    pub scale: f32,
    /// Multiply operand A.
    pub a: Operand,
    /// Multiply operand B.
    pub b: Operand,
    /// Add operand C.
    pub c: Operand,
}

impl FmaSource {
    /// The runtime's default selectors (a = input, b = scale, c = stored): `acc' = src·scale + acc`.
    pub const fn scaled(scale: f32) -> FmaSource {
        FmaSource { scale, a: Operand::Input, b: Operand::Scale, c: Operand::Stored }
    }
}

/// A clamp constant for MIN / MAX. It is converted to the accumulate dtype once, with RNE and
/// saturation (a float constant into an int accumulator: RNE, saturate, NaN → 0).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    /// A float constant.
    F64(f64),
    /// A signed integer constant.
    I64(i64),
    /// An unsigned integer constant.
    U64(u64),
}

/// The element operation.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// `acc = src0; acc = acc + src_i` for i = 1.., in source order.
    Add,
    /// `acc = 0; acc = a_i · b_i + c_i` for i = 0.., one operand set per source.
    Fma(Vec<FmaSource>),
    /// Running minimum in source order, then `min(result, clamp)` if a clamp is given.
    Min {
        /// Optional clamp constant.
        clamp: Option<Scalar>,
    },
    /// Running maximum in source order, then `max(result, clamp)` if a clamp is given.
    Max {
        /// Optional clamp constant.
        clamp: Option<Scalar>,
    },
}

/// How a value is rounded into a narrower float type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Rounding {
    /// Round to nearest, ties to even.
    #[default]
    Rne,
    /// Stochastic rounding keyed by (seed, stream, element index); see [`crate::rng`].
    Stochastic {
        /// The seed (the runtime's default is 0).
        seed: u64,
        /// The stream, e.g. the DMA queue.
        stream: u64,
    },
}

/// A complete description of one element-wise reduce.
#[derive(Clone, Debug, PartialEq)]
pub struct ReduceSpec {
    /// The operation.
    pub op: Op,
    /// The dtype of every source.
    pub in_type: NumType,
    /// The accumulate dtype.
    pub accum_type: AccumType,
    /// The dtype of every output.
    pub out_type: NumType,
    /// Rounding of every conversion into a float type narrower than fp32.
    pub rounding: Rounding,
    /// Saturate the final accumulate → output conversion.
    pub saturate: bool,
}

impl ReduceSpec {
    /// An ADD with RNE and no saturation.
    pub fn add(in_type: NumType, accum_type: NumType, out_type: NumType) -> ReduceSpec {
        ReduceSpec {
            op: Op::Add,
            in_type,
            accum_type: AccumType::Num(accum_type),
            out_type,
            rounding: Rounding::Rne,
            saturate: false,
        }
    }

    /// The same spec with another rounding.
    pub fn with_rounding(mut self, rounding: Rounding) -> ReduceSpec {
        self.rounding = rounding;
        self
    }

    /// The same spec with another op.
    pub fn with_op(mut self, op: Op) -> ReduceSpec {
        self.op = op;
        self
    }
}
