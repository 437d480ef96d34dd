//! A rank's program: every work item of its schedule planned by `cce-host` (reduce packets,
//! copies) and laid out on one queue's rings, with the cumulative descriptor and packet counts
//! after each step (what its peers wait for).

use cce_format::packet::GceMode;
use cce_format::{KbinOp, SdmaDtype};
use cce_host::{
    CopyRequest, GradientRequest, Program, ReduceDtypes, ReduceRequest, Rings, plan, plan_copy, plan_gradient,
};

use super::buffers::RING_SIZE;
use super::config::{CollectiveError, Config};
use super::schedule::{Step, Work};

/// One work item's program (`None` for an empty one).
pub(super) fn plan_work(cfg: &Config, rank: usize, step: usize, w: &Work) -> Result<Option<Program>, CollectiveError> {
    let host = |error| CollectiveError::Host { rank, step, error };
    let kop = cfg.op.kbin();
    if w.is_empty() {
        return Ok(None);
    }
    Ok(Some(match w {
        Work::Reduce { srcs, dsts, elems, scales } => {
            // A one-source reduce is the 1R2W gather: an ADD that copies (MODEL C4).
            let op = if srcs.len() == 1 { KbinOp::Add } else { kop };
            // The gather's one-source ADD widens floats to fp32 (exact, and the fast path);
            // integers stay in their own type.
            let accum = match (srcs.len(), cfg.dtype.is_float()) {
                (1, true) => SdmaDtype::Fp32,
                (1, false) => cfg.dtype,
                _ => cfg.accum,
            };
            let mut req = ReduceRequest::new(
                op.value(),
                srcs.clone(),
                dsts.clone(),
                *elems,
                ReduceDtypes { in_dt: cfg.dtype, accum_dt: accum, out_dt: cfg.dtype },
                cfg.arch,
            );
            req.rounding = cfg.rounding;
            if op == KbinOp::Fma {
                req = req.with_fma_scales(scales).map_err(host)?;
            }
            plan(&req).map_err(host)?
        }
        Work::Copy { src, dst, bytes } => {
            plan_copy(&CopyRequest { src: *src, dst: *dst, bytes: *bytes, arch: cfg.arch }).map_err(host)?
        }
        // One source: a gradient packet compresses it as it is.
        Work::Compress { srcs, dst, elems, headers, .. } if srcs.len() == 1 => plan_gradient(&GradientRequest {
            mode: GceMode::Compress,
            srcs: srcs.clone(),
            dst: dst + headers,
            header: *dst,
            elems: *elems,
            dtype: cfg.dtype,
            arch: cfg.arch,
        })
        .map_err(host)?,
        // Several: the §9.3 EXT combo, the reduce rounded to the buffer dtype and compressed.
        Work::Compress { srcs, dst, elems, scales, headers } => {
            let mut req = ReduceRequest::new(
                kop.value(),
                srcs.clone(),
                vec![dst + headers],
                *elems,
                ReduceDtypes { in_dt: cfg.dtype, accum_dt: cfg.accum, out_dt: cfg.dtype },
                cfg.arch,
            );
            req.rounding = cfg.rounding;
            req.compress = Some(*dst);
            if kop == KbinOp::Fma {
                req = req.with_fma_scales(scales).map_err(host)?;
            }
            plan(&req).map_err(host)?
        }
        Work::Expand { src, dst, elems, headers } => plan_gradient(&GradientRequest {
            mode: GceMode::Decompress,
            srcs: vec![src + headers],
            dst: *dst,
            header: *src,
            elems: *elems,
            dtype: cfg.dtype,
            arch: cfg.arch,
        })
        .map_err(host)?,
    }))
}

/// The ring size of a rank whose programs hold `descs` descriptors per ring.
pub(super) fn ring_size(descs: u64) -> u32 {
    cce_format::ringfile::ring_size_for(descs).min(RING_SIZE as u64) as u32
}

/// A built rank: its rings and, per step, the cumulative (tx, rx, packets) after it.
pub(super) struct RankProgram {
    pub(super) rings: Rings,
    pub(super) marks: Vec<(u64, u64, u64)>,
}

pub(super) fn build(cfg: &Config, rank: usize, steps: &[Step]) -> Result<RankProgram, CollectiveError> {
    let mut programs: Vec<(usize, Program)> = Vec::new();
    for (s, step) in steps.iter().enumerate() {
        for w in &step.work {
            if let Some(p) = plan_work(cfg, rank, s, w)? {
                programs.push((s, p));
            }
        }
    }
    let total: u64 = programs.iter().map(|(_, p)| p.tx_descriptors().max(p.rx_descriptors())).sum();
    let ring = ring_size(total) as u64;
    let mut b = Rings::builder(Some(ring), total).map_err(|error| CollectiveError::Host { rank, step: 0, error })?;
    let mut marks = Vec::with_capacity(steps.len());
    let (mut tx, mut rx, mut packets) = (0u64, 0u64, 0u64);
    let mut it = programs.iter().peekable();
    for s in 0..steps.len() {
        while let Some((_, p)) = it.next_if(|(ps, _)| *ps == s) {
            b.push(p);
            tx += p.tx_descriptors();
            rx += p.rx_descriptors();
            packets += p.packet_count();
        }
        marks.push((tx, rx, packets));
    }
    Ok(RankProgram { rings: b.finish(), marks })
}
