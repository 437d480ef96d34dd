//! The tests' way to run a configuration: [`collective::check`] it, then [`collective::run`] the
//! checked run (what the old `run`, `run_owned`, `run_borrowed` and `run_partitioned`, which
//! took a bare configuration, did in one call).

#![allow(dead_code, reason = "each test file uses some of these")]

use cce_collectives::collective::{self, CollectiveError, Config, Outcome, Partitioned};

/// Checks `cfg`, then runs it over `inputs` read in place.
pub(crate) fn run(cfg: &Config, inputs: &[Vec<u8>]) -> Result<Outcome, CollectiveError> {
    let slices: Vec<&[u8]> = inputs.iter().map(Vec::as_slice).collect();
    run_borrowed(cfg, &slices)
}

/// Checks `cfg`, then runs it over `inputs` moved in, handing them back.
pub(crate) fn run_owned(cfg: &Config, inputs: Vec<Vec<u8>>) -> Result<(Outcome, Vec<Vec<u8>>), CollectiveError> {
    let checked = collective::check(cfg)?;
    let (outcome, back) = collective::run(&checked, collective::owned(inputs))?;
    Ok((outcome, back.into_iter().map(std::borrow::Cow::into_owned).collect()))
}

/// Checks `cfg`, then runs it over `inputs` read in place.
pub(crate) fn run_borrowed(cfg: &Config, inputs: &[&[u8]]) -> Result<Outcome, CollectiveError> {
    let checked = collective::check(cfg)?;
    collective::run(&checked, collective::borrowed(inputs)).map(|(outcome, _)| outcome)
}

/// Checks `cfg`, then runs it over `groups` blocks of memory.
pub(crate) fn run_partitioned(
    cfg: &Config,
    inputs: Vec<Vec<u8>>,
    groups: usize,
) -> Result<(Outcome, Vec<Vec<u8>>, Partitioned), CollectiveError> {
    collective::run_partitioned(&collective::check(cfg)?, inputs, groups)
}

/// Per rank, `elems` int32 values from a xorshift of `seed` + the rank: different per rank and
/// per element.
pub(crate) fn i32_inputs(ranks: usize, elems: usize, seed: u64) -> Vec<Vec<u8>> {
    (0..ranks)
        .map(|r| {
            let mut x = (seed + r as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            (0..elems)
                .flat_map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    (x as u32).to_le_bytes()
                })
                .collect()
        })
        .collect()
}

/// The exact (wrapping) int32 sum of every rank's input, element by element.
pub(crate) fn exact_sum(inputs: &[Vec<u8>]) -> Vec<u8> {
    let n = inputs[0].len() / 4;
    (0..n)
        .flat_map(|i| {
            inputs
                .iter()
                .fold(0i32, |acc, b| acc.wrapping_add(i32::from_le_bytes(b[4 * i..4 * i + 4].try_into().unwrap())))
                .to_le_bytes()
        })
        .collect()
}
