//! The crate's one error enum: messages name values and rules, never a front's flag.

use cce_numerics::{NumType, NumericsError};

/// Why an identification or a probe was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ForensicsError {
    /// Only float sums depend on their order.
    #[error("`dtype` {0}: integer sums do not depend on the order (nothing to identify); give a float dtype")]
    NotFloat(NumType),
    /// An accumulate dtype the evaluation has no rule for.
    #[error("`accum` {0}: the orders are evaluated with a float accumulate dtype at least as wide as the buffer's")]
    Accum(NumType),
    /// The rank count.
    #[error("{ranks} ranks: identify takes 2 to {max} ranks")]
    Ranks {
        /// Ranks given.
        ranks: usize,
        /// The most.
        max: usize,
    },
    /// A rank's bytes that are not whole elements.
    #[error("rank {rank}'s input has {len} bytes, not a multiple of the {dtype} element size {size}")]
    Ragged {
        /// The rank.
        rank: usize,
        /// Its length in bytes.
        len: usize,
        /// The dtype.
        dtype: NumType,
        /// Its element size.
        size: usize,
    },
    /// Ranks whose inputs differ in length.
    #[error("rank {rank}'s input has {len} bytes, rank 0's {expected}: every rank holds the same element count")]
    InputLengths {
        /// The rank.
        rank: usize,
        /// Its length.
        len: usize,
        /// Rank 0's.
        expected: usize,
    },
    /// No elements.
    #[error("the inputs hold no elements")]
    Empty,
    /// An observed output of the wrong length.
    #[error("the observed output of rank {rank} has {len} bytes, expected {expected} ({elems} elements of {dtype})")]
    ObservedLength {
        /// The rank it stands for.
        rank: usize,
        /// Its length.
        len: usize,
        /// The inputs' length.
        expected: usize,
        /// Elements per rank.
        elems: usize,
        /// The dtype.
        dtype: NumType,
    },
    /// An observed rank that is not one of the ranks.
    #[error("observed rank {rank}: the inputs are of {ranks} ranks (0..={})", ranks - 1)]
    ObservedRank {
        /// The rank given.
        rank: usize,
        /// The rank count.
        ranks: usize,
    },
    /// No observed output at all.
    #[error("no observed output: give at least one rank's")]
    NoObserved,
    /// One rank observed twice.
    #[error("observed rank {0} is given twice")]
    ObservedTwice(usize),
    /// A candidate's outputs that do not cover the ranks.
    #[error("candidate {name}: {got} outputs of {len} bytes for {ranks} ranks of {expected} bytes")]
    CandidateOutputs {
        /// The candidate.
        name: String,
        /// Outputs given.
        got: usize,
        /// The first one's length.
        len: usize,
        /// The rank count.
        ranks: usize,
        /// Bytes each must hold.
        expected: usize,
    },
    /// A segmented candidate whose segments do not start at element 0 and ascend.
    #[error("candidate {0}: its segments must start at element 0 and ascend")]
    Segments(String),
    /// An order the evaluation cannot run.
    #[error("order {order}: {why}")]
    Order {
        /// The order, as the grammar writes it.
        order: String,
        /// Why.
        why: &'static str,
    },
    /// The probe could not be made.
    #[error("probe: {0}")]
    Probe(String),
    /// A size that would exhaust memory.
    #[error("{what} needs {bytes} bytes, over the budget of {budget} bytes")]
    Budget {
        /// What needs it.
        what: &'static str,
        /// Bytes needed.
        bytes: u64,
        /// The budget.
        budget: u64,
    },
    /// The numerics refused a reduce (a model bug when it happens: the shapes are checked first).
    #[error(transparent)]
    Numerics(#[from] NumericsError),
}
