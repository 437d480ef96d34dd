//! A reduce's options as a front end names them — `cce build`, `cce reduce` and the Python
//! package give the op and the rounding by name, the FMA scales as a list and the MIN/MAX clamp
//! constant as text. Each rule is here once, so every front end refuses the same input with the
//! same [`HostError`] (whose messages name the options as the CLI spells them: `--op`,
//! `--rounding`, `--seed`, `--scale`).
//!
//! ## Guarantees
//! - Names are matched exactly (no case folding, no prefixes).
//! - Nothing here allocates more than the scales it returns; nothing panics.

use cce_format::KbinOp;
use cce_format::packet::MAX_SOURCES;

use crate::build::{MinMaxConstant, ReduceRequest, Rounding};
use crate::error::HostError;

/// The ops [`reduce_op`] takes, for messages.
const REDUCE_OPS: &str = "add, fma, min or max";
/// The ops [`dispatcher_op`] takes, for messages.
const DISPATCHER_OPS: &str = "add, fma, min, max, copy or transpose";

/// A reduce op by name: `add`, `fma`, `min` or `max` (what `cce reduce` runs).
pub fn reduce_op(name: &str) -> Result<KbinOp, HostError> {
    match name {
        "add" => Ok(KbinOp::Add),
        "fma" => Ok(KbinOp::Fma),
        "min" => Ok(KbinOp::Min),
        "max" => Ok(KbinOp::Max),
        _ => Err(HostError::OpName { name: name.to_string(), expected: REDUCE_OPS }),
    }
}

/// An op the dispatcher receives, by name: the reduce ops, and `copy` / `transpose`, which
/// reach it and are refused there as the runtime refuses them (what `cce build` takes).
pub fn dispatcher_op(name: &str) -> Result<KbinOp, HostError> {
    KbinOp::from_name(name)
        .filter(|o| !matches!(o, KbinOp::Invalid | KbinOp::Num))
        .ok_or_else(|| HostError::OpName { name: name.to_string(), expected: DISPATCHER_OPS })
}

/// The stochastic-rounding seed that `rounding` (`rne` or `sr`) and `seed` ask for: `None` for
/// `rne`, the seed (0 when omitted) for `sr`. A seed with `rne` is refused: it would be ignored.
pub fn rounding_seed(rounding: &str, seed: Option<u64>) -> Result<Option<u64>, HostError> {
    match rounding {
        "rne" if seed.is_none() => Ok(None),
        "rne" => Err(HostError::SeedWithoutSr),
        "sr" => Ok(Some(seed.unwrap_or(0))),
        other => Err(HostError::RoundingName(other.to_string())),
    }
}

impl Rounding {
    /// The rounding `name` (`rne` or `sr`) and `seed` ask for, as [`rounding_seed`] reads them.
    pub fn from_name(name: &str, seed: Option<u32>) -> Result<Rounding, HostError> {
        Ok(match rounding_seed(name, seed.map(u64::from))? {
            None => Rounding::Rne,
            Some(s) => Rounding::Stochastic { seed: s as u32 },
        })
    }
}

/// Checks that `op` takes the options given: scales are for FMA only, a clamp constant for
/// MIN and MAX only.
pub fn check_options(op: KbinOp, scales: &[f32], constant: Option<&str>) -> Result<(), HostError> {
    if !scales.is_empty() && op != KbinOp::Fma {
        return Err(HostError::ScalesNotFma);
    }
    if constant.is_some() && !matches!(op, KbinOp::Min | KbinOp::Max) {
        return Err(HostError::ConstantNotMinMax);
    }
    Ok(())
}

/// One FMA scale per source: none gives 1.0 each, one applies to every source, one per source
/// is taken as given; any other count is refused.
pub fn broadcast_scales(scales: &[f32], sources: usize) -> Result<Vec<f32>, HostError> {
    match scales.len() {
        0 => Ok(vec![1.0; sources]),
        1 => Ok(vec![scales[0]; sources]),
        k if k == sources => Ok(scales.to_vec()),
        given => Err(HostError::ScaleCount { given, sources }),
    }
}

impl ReduceRequest {
    /// Sets the cce_info the op's options ask for: for FMA the scales, broadcast by
    /// [`broadcast_scales`] (over more than 32 sources nothing is set, so [`crate::plan`]
    /// refuses the source count); for MIN / MAX the clamp constant, if any; other ops take
    /// neither (see [`check_options`]).
    pub fn with_options(self, scales: &[f32], constant: Option<MinMaxConstant>) -> Result<Self, HostError> {
        let n = self.srcs.len();
        match KbinOp::from_value(self.op) {
            Some(KbinOp::Fma) if n <= MAX_SOURCES => self.with_fma_scales(&broadcast_scales(scales, n)?),
            Some(KbinOp::Min | KbinOp::Max) => Ok(match constant {
                Some(c) => self.with_min_max_constant(c),
                None => self,
            }),
            _ => Ok(self),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ops_by_name() {
        assert_eq!(reduce_op("fma"), Ok(KbinOp::Fma));
        assert_eq!(reduce_op("copy").unwrap_err().to_string(), "--op 'copy': expected add, fma, min or max");
        assert_eq!(dispatcher_op("transpose"), Ok(KbinOp::Transpose));
        assert_eq!(
            dispatcher_op("num").unwrap_err().to_string(),
            "--op 'num': expected add, fma, min, max, copy or transpose"
        );
    }

    #[test]
    fn rounding_by_name() {
        assert_eq!(rounding_seed("rne", None), Ok(None));
        assert_eq!(rounding_seed("sr", None), Ok(Some(0)));
        assert_eq!(rounding_seed("sr", Some(9)), Ok(Some(9)));
        assert_eq!(rounding_seed("rne", Some(9)), Err(HostError::SeedWithoutSr));
        assert_eq!(rounding_seed("rtz", None).unwrap_err().to_string(), "--rounding 'rtz': expected rne or sr");
        assert_eq!(Rounding::from_name("sr", Some(7)), Ok(Rounding::Stochastic { seed: 7 }));
        assert_eq!(Rounding::from_name("rne", None), Ok(Rounding::Rne));
    }

    #[test]
    fn options_follow_the_op() {
        assert_eq!(check_options(KbinOp::Add, &[2.0], None), Err(HostError::ScalesNotFma));
        assert_eq!(check_options(KbinOp::Fma, &[], Some("1")), Err(HostError::ConstantNotMinMax));
        assert_eq!(check_options(KbinOp::Max, &[], Some("1")), Ok(()));
        assert_eq!(check_options(KbinOp::Fma, &[2.0], None), Ok(()));
    }

    #[test]
    fn scales_broadcast() {
        assert_eq!(broadcast_scales(&[], 3), Ok(vec![1.0; 3]));
        assert_eq!(broadcast_scales(&[0.5], 2), Ok(vec![0.5; 2]));
        assert_eq!(broadcast_scales(&[1.0, 2.0], 2), Ok(vec![1.0, 2.0]));
        assert_eq!(
            broadcast_scales(&[1.0, 2.0], 3).unwrap_err().to_string(),
            "2 scales for 3 sources (give one, or one per source)"
        );
    }
}
