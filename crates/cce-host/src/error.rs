//! The host's errors. Each dispatcher assert of the study is a variant with its message.

use cce_format::FormatError;

/// Everything the host refuses.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HostError {
    /// A format-layer rule: "Unsupported CCE Op! N", "Unsupported data type!", the arch, the
    /// priority class, a size-0 dtype in packet sizing.
    #[error(transparent)]
    Format(#[from] FormatError),
    /// FMA without cce_info (vring.c:0x3B8).
    #[error("cce_info != NULL (vring.c:0x3B8): an FMA reduce needs cce_info for its scales")]
    MissingCceInfo,
    /// FMA scale dtype other than fp32 (vring.c:0x3BA).
    #[error("sdma_scale_dtype == al_sdma_m2m_meta_ctrl_data_type_fp32 (vring.c:0x3BA): scale dtype is {0}")]
    ScaleNotFp32(&'static str),
    /// More than 32 sources.
    #[error("{0} sources: a CCE packet takes at most 32 (cce_info.num_sources)")]
    TooManySources(usize),
    /// num_dests > 1 on arch ≤ 2.
    #[error("CCE replication not supported for v1/v2 archs")]
    Replication,
    /// The combo would overflow a packet, or arch ≤ 2.
    #[error("CCE concatenation not supported")]
    Concatenation,
    /// A MIN/MAX constant dtype the engine cannot carry.
    #[error("Unsupported data type for min/max op {0}")]
    MinMaxConstDtype(&'static str),
    /// Nothing to read or nowhere to write.
    #[error("a reduce needs at least one {0}")]
    Empty(&'static str),
    /// cce_info's counts disagree with the address lists.
    #[error("cce_info.{field} is {info} but {given} addresses were given")]
    CountMismatch {
        /// `num_sources` or `num_dests`.
        field: &'static str,
        /// The struct's value.
        info: u32,
        /// The number of addresses.
        given: usize,
    },
    /// A dtype that cannot play a role.
    #[error("{role} dtype {dtype} cannot be used here ({why})")]
    Dtype {
        /// in, accum, out.
        role: &'static str,
        /// Its name.
        dtype: &'static str,
        /// Why.
        why: &'static str,
    },
    /// Scales given for an op that takes none, or the wrong number.
    #[error("{0}")]
    Scales(&'static str),
    /// A clamp constant that is not a value of its dtype.
    #[error("constant '{text}' is not a {dtype} value (a number in range, or 0x-bits)")]
    Constant {
        /// The text.
        text: String,
        /// The dtype.
        dtype: &'static str,
    },
    /// A clamp constant for an op that takes none.
    #[error("a clamp constant is for MIN and MAX only")]
    ConstantNotMinMax,
    /// An address range that wraps around 64 bits.
    #[error("address 0x{addr:x} + {bytes} bytes overflows 64 bits")]
    AddressOverflow {
        /// Start address.
        addr: u64,
        /// Bytes.
        bytes: u64,
    },
    /// A ring size the UDMA model does not allow.
    #[error("ring size {0} is not a multiple of 16 of at least 32 descriptors")]
    RingSize(u64),
    /// The per-priority cap rounds a packet down to zero bytes.
    #[error("priority cap {0} bytes is below the 32-byte packet granule")]
    CapTooSmall(u32),
    /// An op name the front end does not take.
    #[error("`op` '{name}': expected {expected}")]
    OpName {
        /// The name given.
        name: String,
        /// The names it takes, in words (`add, fma, min or max`).
        expected: String,
    },
    /// A stochastic-rounding seed given with round-to-nearest-even.
    #[error("`seed` is for `rounding` sr")]
    SeedWithoutSr,
    /// FMA scales given for another op.
    #[error("`scale` is for `op` fma only")]
    ScalesNotFma,
    /// A scale count that is neither one nor one per source.
    #[error("{given} scales for {sources} sources (give one, or one per source)")]
    ScaleCount {
        /// Scales given.
        given: usize,
        /// Sources.
        sources: usize,
    },
    /// A GCE request the gradient packet builder cannot lay out.
    #[error("Failed to build buffer packet for gce op: {0}")]
    GceBuffer(&'static str),
    /// The program would be too large to build in memory.
    #[error("{descriptors} descriptors exceed the {max} a program may hold; split the transfer")]
    TooLarge {
        /// Descriptors needed.
        descriptors: u64,
        /// The limit.
        max: u64,
    },
}
