//! The crate's one error type. Messages quote the study's assert strings where it has one.

use crate::tag::Tag;

/// Everything `cce-format` can refuse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FormatError {
    /// A value does not fit its field (typed builders; the raw encoders mask instead).
    #[error("{field}: {value} does not fit {bits} bits (0..={max})", max = (1u64 << *bits) - 1)]
    FieldOutOfRange {
        /// Field name as the CLI spells it.
        field: &'static str,
        /// The offending value.
        value: u64,
        /// The field width.
        bits: u8,
    },
    /// `kbin_cce_op_to_sdma_cce_op`: op ∉ {FMA, ADD, MIN, MAX} (tdrv/helper.c:0x1C0, HIGH).
    #[error("Unsupported CCE Op! {0}")]
    UnsupportedCceOp(u32),
    /// `kbin_dtype_to_sdma_dtype`: dtype ∉ [1, 15] (tdrv/helper.c:0x1AF, HIGH).
    #[error("Unsupported data type!: {0}")]
    UnsupportedDataType(u32),
    /// A number that is no SDMA dtype (the enum has 16 values, 0..=15).
    #[error("{0} is not an SDMA dtype (0..=15)")]
    NotAnSdmaDtype(u64),
    /// `aws_hal_get_sdma_max_cce_elements`: arch other than 2, 3, 4 (assert at line 0x2C, HIGH).
    #[error("unsupported arch {0}: max CCE elements is known for arch 2, 3 and 4 only")]
    UnsupportedArch(u32),
    /// `encd_get_cce_reduce_packet_size`: priority class > 4 (assert at line 0x1202, HIGH).
    #[error("priority class {0} out of range (0..=4)")]
    PriorityClass(u32),
    /// `encd_get_cce_reduce_packet_size`: `sdma_data_type_size[dtype] == 0` (line 0x1204, HIGH).
    #[error("dtype {0} has byte size 0 in sdma_data_type_size: a reduce packet cannot be sized with it")]
    ZeroSizeDtype(&'static str),
    /// A byte count or element count whose product overflows 64 bits.
    #[error("size overflow: {elems} elements of {bytes} bytes")]
    SizeOverflow {
        /// Elements asked for.
        elems: u64,
        /// Bytes per element.
        bytes: u64,
    },
    /// A data-descriptor length outside 1..=65536 bytes (UDMA `MAX_DMA_DESC_SIZE`, MED).
    #[error("data descriptor length {0} out of range (1..=65536)")]
    DescriptorLength(u64),
    /// Decoding got the wrong number of bytes.
    #[error("{what} needs {expected} bytes, got {got}")]
    ByteLength {
        /// What was being decoded.
        what: &'static str,
        /// Bytes needed.
        expected: usize,
        /// Bytes given.
        got: usize,
    },
    /// Words that are not an exact encoding of the layout they were parsed as.
    #[error("not a {layout}: word {word} {problem} (bits 0x{bits:08x})")]
    NotThisLayout {
        /// The layout's name.
        layout: &'static str,
        /// Word index.
        word: u8,
        /// What is wrong.
        problem: &'static str,
        /// The offending bits.
        bits: u32,
    },
    /// A rule whose basis is weaker than HIGH names its tag.
    #[error("{message} [{tag}]")]
    Rule {
        /// What was refused.
        message: &'static str,
        /// How far the rule can be trusted.
        tag: Tag,
    },
}
