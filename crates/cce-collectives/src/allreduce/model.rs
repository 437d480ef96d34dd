//! The alpha-beta time model: per-link bytes and the critical path of a schedule (MODEL
//! defaults, docs/MODEL.md C6). It counts what the schedule's work items move, not the rings.

use std::collections::BTreeMap;

use super::config::Config;
use super::layout::Layout;
use super::schedule::{Step, Work};

/// The alpha-beta time model's parameters (MODEL defaults, overridable).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimeModel {
    /// Seconds per descriptor.
    pub per_descriptor: f64,
    /// DMA bandwidth of one rank's engine, bytes/s (read + write counted once each).
    pub dma_bytes_per_sec: f64,
    /// Link bandwidth between two ranks, bytes/s.
    pub link_bytes_per_sec: f64,
    /// Fraction of the DMA rate a CCE reduce runs at (0.5 before NeuronCore-v4, GAPS.md §10).
    pub cce_rate: f64,
    /// Seconds per step for the semaphore handshake.
    pub step_latency: f64,
}

impl TimeModel {
    /// The defaults for `arch` (docs/MODEL.md C6).
    pub fn defaults(arch: u32) -> Self {
        TimeModel {
            per_descriptor: 64e-9,
            dma_bytes_per_sec: 100e9,
            link_bytes_per_sec: 50e9,
            cce_rate: if arch >= 4 { 1.0 } else { 0.5 },
            step_latency: 2e-6,
        }
    }
}

/// A work item's (reads, writes, is-CCE, descriptors), each access as (address, bytes).
type Traffic = (Vec<(u64, u64)>, Vec<(u64, u64)>, bool, u64);

/// Per-link bytes and the alpha-beta critical path.
pub(super) fn account(cfg: &Config, l: &Layout, steps: &[Vec<Step>]) -> (BTreeMap<(usize, usize), u64>, f64) {
    let mut links = BTreeMap::new();
    let size = l.size;
    let m = cfg.model;
    let mut finish = vec![vec![0.0f64; steps[0].len()]; l.r];
    for s in 0..steps[0].len() {
        for q in 0..l.r {
            let step = &steps[q][s];
            let mut t = m.step_latency;
            for w in &step.work {
                let (reads, writes, cce, descs): Traffic = match w {
                    Work::Reduce { srcs, dsts, elems, .. } => {
                        let b = elems * size;
                        let packets = (elems * size).div_ceil(4096).max(1);
                        (
                            srcs.iter().map(|&a| (a, b)).collect(),
                            dsts.iter().map(|&a| (a, b)).collect(),
                            true,
                            packets * (srcs.len() + dsts.len()) as u64,
                        )
                    }
                    Work::Copy { src, dst, bytes } => {
                        (vec![(*src, *bytes)], vec![(*dst, *bytes)], false, 2 * bytes.div_ceil(65536).max(1))
                    }
                };
                let mut local = 0u64;
                let mut remote = 0u64;
                for &(a, b) in &reads {
                    let from = Layout::rank_of(a);
                    if from == q {
                        local += b
                    } else {
                        remote += b;
                        *links.entry((from, q)).or_insert(0) += b;
                    }
                }
                for &(a, b) in &writes {
                    let to = Layout::rank_of(a);
                    if to == q {
                        local += b
                    } else {
                        remote += b;
                        *links.entry((q, to)).or_insert(0) += b;
                    }
                }
                let rate = if cce { m.dma_bytes_per_sec * m.cce_rate } else { m.dma_bytes_per_sec };
                t += descs as f64 * m.per_descriptor + local as f64 / rate + remote as f64 / m.link_bytes_per_sec;
            }
            let start =
                step.deps.iter().map(|&(p, u)| finish[p][u]).fold(if s > 0 { finish[q][s - 1] } else { 0.0 }, f64::max);
            finish[q][s] = start + t;
        }
    }
    let total = finish.iter().filter_map(|f| f.last().copied()).fold(0.0, f64::max);
    (links, total)
}
