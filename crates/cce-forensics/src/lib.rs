//! # cce-forensics — which reduction order made an output?
//!
//! Given every rank's input of an all-reduce and an observed output (one rank's or several),
//! score candidate explanations element by element and say which one made it:
//!
//! - [`rule`]: what makes one element — an [`Order`](cce_numerics::order::Order) and the
//!   accumulate dtype ([`Rule`]); the families real implementations use ([`Family`]: a
//!   sequential sum from every start rank in both directions, the pairwise tree, one R-source
//!   reduce with a single rounding, recursive doubling with pairs first, the binomial tree;
//!   [`RingFamily`]: a ring in either direction with the chunk it starts at, over a chunk
//!   [`Layout`]); and the merges of rules no input can tell apart ([`merge_key`], each proven
//!   in `tests/merges.rs`);
//! - [`eval`]: a rule's bits over whole blocks with RNE (cce-numerics' vectorised, bit-exact
//!   reduce: a sequential order is R − 1 two-source reduces) and, for stochastic rounding, the
//!   set of values some choice of round-down / round-up reaches ([`eval::reachable`], bounded
//!   by [`eval::MAX_REACHABLE`]);
//! - [`problem`]: the inputs and observed outputs, checked once ([`Problem`]);
//! - [`identify`]: candidates ([`Candidate`]: predicted bits — a rule evaluated here, or a
//!   run's outputs — and the order of element i as a function) scored into a [`Report`]:
//!   the ranking, the map of element ranges to orders, the unexplained elements, and how many
//!   elements separate the best from the next ([`report`]);
//! - [`reveal`]: the tree of any black-box all-reduce, element by element, recovered from its
//!   outputs on masked inputs (FPRev's masks over a collective's element classes), checked on
//!   random inputs before it is called revealed;
//! - [`probe`]: inputs on which every pair of merged family orders differs in every 64
//!   elements ([`make_probe`]);
//! - [`repro`]: which configurations of a space made bit-identical outputs and why the others
//!   differ — outputs as digests and exact byte comparisons ([`repro::bits`]), the classes,
//!   the parameter that separates two classes, each algorithm's invariance over each swept
//!   parameter, and their words; configurations as keyed values, whatever ran them.
//!
//! cce's own algorithms are candidates too: cce-api runs them (bit-exact) and hands their
//! outputs in as [`Prediction::Outputs`] with their per-element order ([`OrderOf`], which the
//! door takes from the element story).
//!
//! ## Guarantees
//! - A match is bit for bit; a stochastic-rounding consistency is exact or reported undecided.
//! - No input panics: every shape problem is a [`ForensicsError`] naming the values.
//! - The op is add (the sums whose order matters); integer dtypes are refused (their sums do
//!   not depend on the order).
#![forbid(unsafe_code)]

extern crate alloc;

pub mod error;
pub mod eval;
pub mod identify;
pub mod probe;
pub mod problem;
pub mod report;
pub mod repro;
pub mod reveal;
pub mod rule;

pub use error::ForensicsError;
pub use identify::{Candidate, Identification, OrderOf, Prediction, family_candidates, ring_candidates};
pub use probe::{Probe, make_probe};
pub use problem::{Listed, Problem};
pub use report::{MapRange, Ranked, Report, Verdict};
pub use rule::{Family, Layout, RingFamily, Rounding, Rule, merge_key};
