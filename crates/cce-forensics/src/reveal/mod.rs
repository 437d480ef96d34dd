//! Reveal: recover, for every element of a black-box all-reduce, the tree that summed it,
//! from its outputs on masked inputs — for orders on nobody's list.
//!
//! ## How
//! 1. **Run 1, the tree of adds.** Element `e` holds the pair `pairs[e mod P]` of
//!    [`tree::pairs`] (`P = R(R−1)/2`) as an [absorbed](mask::Regime::Absorbed) mask: `+M` at
//!    `i`, `−M` at `j`, a unit everywhere else. The output counts the units outside the two
//!    subtrees that meet at the lowest node over `i` and `j`. Any `P` consecutive elements of a
//!    class measure every pair: [`segment`] rebuilds each class's binary tree of adds from
//!    them and cuts the elements into the fewest classes one tree explains each.
//! 2. **Run 2, the roundings** (bf16 and fp16 only: fp32 rounds at every add) **and the
//!    boundaries.** For every add below the root, one element of its class holds a
//!    [buffer](mask::Regime::Buffer) mask: `+M` at a leaf `i` under the add, `−M` under its
//!    sibling, units at the add's other leaves. The add's sum is rounded to the buffer dtype
//!    exactly when every one of those units is lost (output 0); otherwise it stays in the
//!    accumulator and the adds between two roundings are one parenthesis of the grammar
//!    (accumulate fp32). Where two classes meet, the elements both trees explain hold a pair
//!    that tells the trees apart.
//! 3. **Run 3, the check.** Random inputs (every rank and element different, exponents
//!    spread over ±6 binades): every element's output must be its class's order evaluated bit
//!    for bit ([`crate::eval::rne_block`]); one that is not makes the reveal fail, with the
//!    element named.
//!
//! When the ranks' outputs differ, each distinct output of run 1 is revealed on its own. Their
//! run-2 questions share one run where they fit (pins never on one element, each output's
//! rounding queries on every G-th free element of its classes, every query kept somewhere), so
//! the runs are 3; where they do not fit each output gets a run 2 of its own (at most `2 + G`
//! runs for G distinct outputs). fp32 with no boundary to settle needs 2.
//!
//! ## Assumptions, and what is done when they fail
//! - The order does not depend on the values, and the roundings are round-to-nearest-even (a
//!   stochastic rounding moves the masks). Either failing shows as an output that is no count,
//!   a class whose rounding queries disagree, or run 3's check: the reveal then says it is not
//!   revealed, with the reason, and gives no tree.
//! - Every add meets at most two partial sums (a binary tree of adds at fp32 precision): a
//!   fused adder or an accumulator wider than fp32 keeps units that fp32 would lose; no binary
//!   tree explains that and the reveal says so.
//! - Every class holds at least `P` consecutive elements (the run-1 window) — or its order is
//!   listed: where run 1 shows a shorter class, every element keeps the listed orders (the
//!   families, and the caller's: cce's algorithms' chunk orders) its outputs allow, and each
//!   further run gives it the mask that splits them best (`hypo.rs`: at most ⌈log₂R⌉ + 3
//!   runs in all). A short class of an unlisted order is not revealed (its element named).
//! - Up to 64 ranks. fp16's absorbed units are subnormal past 18 ranks ([`mask::Scales`]): a
//!   library that flushes subnormals to zero then shows no counts and is not revealed.
//!
//! ## Guarantees
//! - `revealed: true` only when run 3's random inputs give, at every element of every observed
//!   rank, exactly the bits of the class's order: a wrong tree cannot pass a check that every
//!   element takes part in unless it agrees with the black box on those inputs.
//! - The black box is run 3 times (2 for fp32 with nothing to settle; at most `2 + G` when G
//!   distinct outputs cannot share run 2); its outputs are checked for shape before they
//!   are read.

mod hypo;
pub mod mask;
pub mod segment;
pub mod tree;

mod driver;

pub use driver::{BlackBox, Class, Reveal, Revealed, reveal};

use alloc::string::String;

use cce_numerics::NumType;

/// Why a reveal could not run (a reveal that ran but explains nothing is a [`Revealed`] with
/// `revealed: false`, not an error).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RevealError {
    /// A dtype the masks cannot be written in.
    #[error("`dtype` {0}: reveal takes fp32, bf16 or fp16 (the masks count units exactly in them)")]
    Dtype(NumType),
    /// A dtype and rank count with no masks.
    #[error("{dtype} at {ranks} ranks: {why}")]
    Scales {
        /// The dtype.
        dtype: NumType,
        /// The ranks.
        ranks: u32,
        /// Why.
        why: &'static str,
    },
    /// The rank count.
    #[error("{0} ranks: reveal takes 2 to 64 ranks")]
    Ranks(u32),
    /// No elements.
    #[error("{elems} elements: a reveal of {ranks} ranks needs at least {need}")]
    Elems {
        /// Elements given.
        elems: usize,
        /// Ranks.
        ranks: u32,
        /// R(R−1)/2.
        need: usize,
    },
    /// A run's outputs of the wrong shape.
    #[error("run {run}: {what}")]
    Outputs {
        /// The run (1-based).
        run: u32,
        /// What was wrong.
        what: String,
    },
    /// The black box failed (its own message).
    #[error("run {run}: {message}")]
    BlackBox {
        /// The run (1-based).
        run: u32,
        /// Its message.
        message: String,
    },
}
