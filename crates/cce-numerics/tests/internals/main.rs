//! The crate's tests of its internal functions (through `cce_numerics::internals` and the
//! `#[doc(hidden)]` items of its public modules). They live here, not in `#[cfg(test)]` modules,
//! so that the crate compiles once for the tests instead of twice (its library is among the
//! slowest units of the workspace's test build; docs/performance-history.md).

mod any_dtype;
mod buffer;
mod check;
mod float;
mod floor;
mod gce;
mod order;
mod reduce;
mod sample;
mod trace;
