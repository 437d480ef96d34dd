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
