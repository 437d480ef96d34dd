//! The bytes that cross node boundaries (the nodes of [`Config::node`]): what `--compress gce`
//! saves, counted from the packets of the rings (their payloads, and their GCE header regions
//! at the header stride), as the time model's link counts are.

use std::collections::BTreeMap;

use super::config::{CollectiveError, Compress, Config, Outcome};

/// Bytes between nodes: the sum of `links` (from rank, to rank) whose ends are in different
/// nodes.
pub fn hop_bytes(cfg: &Config, links: &BTreeMap<(usize, usize), u64>) -> u64 {
    links.iter().filter(|((from, to), _)| cfg.node(*from) != cfg.node(*to)).map(|(_, b)| b).sum()
}

/// The bytes over the node boundaries of a compressed run and of the same run uncompressed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HopBytes {
    /// The run's.
    pub compressed: u64,
    /// The same configuration without compression (its packets counted, not run).
    pub uncompressed: u64,
    /// The time model's estimate of the same configuration without compression.
    pub uncompressed_model_seconds: f64,
}

impl HopBytes {
    /// compressed / uncompressed (0 when nothing would cross).
    pub fn ratio(&self) -> f64 {
        if self.uncompressed == 0 { 0.0 } else { self.compressed as f64 / self.uncompressed as f64 }
    }
}

/// The hop bytes of `outcome` (a run of `cfg`) against `cfg` without compression.
pub fn hop_report(cfg: &Config, outcome: &Outcome) -> Result<HopBytes, CollectiveError> {
    let plain = Config { compress: Compress::None, ..cfg.clone() };
    let t = super::model(&plain, false)?;
    Ok(HopBytes {
        compressed: hop_bytes(cfg, &outcome.links),
        uncompressed: hop_bytes(cfg, &t.links),
        uncompressed_model_seconds: t.seconds,
    })
}
