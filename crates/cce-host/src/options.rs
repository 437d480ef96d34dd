//! The rules a reduce's options follow, once for every front: FMA scales only for FMA and
//! broadcast to the sources, a clamp constant only for MIN and MAX. (Names — ops, rounding — are
//! parsed above this crate, by `cce-api`'s types.)
//!
//! ## Guarantees
//! - Nothing here allocates more than the scales it returns; nothing panics.

use cce_format::KbinOp;
use cce_format::packet::MAX_SOURCES;

use crate::dispatcher::{MinMaxConstant, ReduceRequest};
use crate::error::HostError;

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
