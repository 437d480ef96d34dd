//! The crate's one error enum.

use crate::types::NumType;
use cce_format::dtype::SdmaDtype;

/// Everything that can go wrong in a conversion or reduce. Messages are lowercase and name the
/// offending values.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NumericsError {
    /// The SDMA dtype cannot play this role (`invalid` anywhere; `fp32r` as input or output).
    #[error("sdma dtype {} (value {value}) is not valid as {role} dtype", dtype.name())]
    UnsupportedDtype {
        /// The dtype.
        dtype: SdmaDtype,
        /// Its nibble value.
        value: u32,
        /// `"an input or output"` or `"an accumulate"`.
        role: &'static str,
    },
    /// An unknown dtype name.
    #[error("unknown numeric dtype name {0:?}")]
    UnknownDtypeName(alloc::string::String),
    /// A reduce needs 1..=32 sources.
    #[error("source count {0} is outside 1..=32")]
    SourceCount(usize),
    /// A reduce needs at least one output.
    #[error("output count is 0, at least 1 output is needed")]
    NoOutputs,
    /// A buffer length is not a multiple of its element size.
    #[error("{role} {index} has {len} bytes, not a multiple of the {dtype} element size {size}")]
    NotElementMultiple {
        /// `"source"`, `"output"`, `"input"`.
        role: &'static str,
        /// Which buffer.
        index: usize,
        /// Its length in bytes.
        len: usize,
        /// The dtype.
        dtype: NumType,
        /// The dtype's size in bytes.
        size: usize,
    },
    /// The sources do not all have the same number of elements.
    #[error("source {index} has {len} bytes but source 0 has {expected}")]
    SourceLengthMismatch {
        /// Which source.
        index: usize,
        /// Its length in bytes.
        len: usize,
        /// Source 0's length in bytes.
        expected: usize,
    },
    /// An output does not hold exactly one out-dtype element per source element.
    #[error("output {index} has {len} bytes, expected {expected}")]
    OutputLength {
        /// Which output.
        index: usize,
        /// Its length in bytes.
        len: usize,
        /// `elements × out size`.
        expected: usize,
    },
    /// FMA needs exactly one operand set (scale + selectors) per source.
    #[error("fma has {operand_sets} per-source operand sets for {sources} sources")]
    FmaSourceMismatch {
        /// Operand sets given.
        operand_sets: usize,
        /// Sources given.
        sources: usize,
    },
    /// An FMA operand selector outside {0 stored, 1 input, 2 scale}.
    #[error("fma operand selector {0} is not one of 0 (stored), 1 (input), 2 (scale)")]
    BadOperandSelector(u8),
    /// A combination the model does not define.
    #[error("unsupported combination: {0}")]
    Unsupported(&'static str),
    /// `first_element_index + elements` does not fit in a u64.
    #[error("element index {first} + {count} elements overflows u64")]
    IndexOverflow {
        /// The first element index.
        first: u64,
        /// The element count.
        count: u64,
    },
    /// A thread count of 0.
    #[error("thread count {0} is invalid, at least 1 is needed")]
    ZeroThreads(usize),
}
