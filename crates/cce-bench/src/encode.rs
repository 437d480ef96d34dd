//! Ring-building speed, for `cce bench encode`: descriptors written per second on one core.

use std::time::Instant;

use cce_format::{KbinOp, SdmaDtype};

use cce_host::{HostError, ReduceDtypes, ReduceRequest, plan};
use serde::Serialize;

/// What [`encode`] measured.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct EncodeBench {
    /// Elements per source of the reduce that was built.
    #[serde(skip)]
    pub elems: u64,
    /// Descriptors written (tx + rx).
    pub descriptors: u64,
    /// Best wall time of one plan + ring build, in seconds.
    pub seconds: f64,
    /// Descriptors per second.
    pub descriptors_per_sec: f64,
}

/// Builds the rings of a 4-source bf16 → fp32 → bf16 ADD of `bytes_per_source` bytes per
/// source on arch 3 `reps` times and reports the best run.
pub fn encode(bytes_per_source: u64, reps: u32) -> Result<EncodeBench, HostError> {
    let elems = bytes_per_source / 2;
    let srcs = (0..4u64).map(|i| (i + 1) << 36).collect();
    let req = ReduceRequest::new(
        KbinOp::Add.value(),
        srcs,
        vec![8 << 36],
        elems,
        ReduceDtypes { in_dt: SdmaDtype::Bf16, accum_dt: SdmaDtype::Fp32, out_dt: SdmaDtype::Bf16 },
        3,
    );
    let mut best = f64::INFINITY;
    let mut descriptors = 0;
    for _ in 0..reps.max(1) {
        let t = Instant::now();
        let rings = plan(&req)?.to_rings(None)?;
        best = best.min(t.elapsed().as_secs_f64());
        descriptors = cce_format::ring::descriptors_in(rings.tx.len() + rings.rx.len()) as u64;
        std::hint::black_box(&rings);
    }
    Ok(EncodeBench { elems, descriptors, seconds: best, descriptors_per_sec: descriptors as f64 / best })
}
