//! Stochastic-rounding seeds of the framework adapters (docs/MODEL.md C18), written once:
//! `cce._seeds.derived_seed` (Python) calls this, and the XLA handler uses it directly.

use pyo3::prelude::*;

/// SplitMix64's finaliser: a 64-bit integer to 64 well-mixed bits.
fn mix64(x: u64) -> u64 {
    let x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    let x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// The seed of a collective called without an explicit one: the base seed, the call's position
/// and the step (see `cce._seeds`), mixed.
pub(crate) fn derived_seed(base: u64, position: u64, step: u64) -> u64 {
    mix64(mix64(mix64(base) ^ position) ^ step)
}

/// `cce._seeds.derived_seed`.
#[pyfunction(name = "derived_seed")]
pub(crate) fn py_derived_seed(base: u64, position: u64, step: u64) -> u64 {
    derived_seed(base, position, step)
}
