//! What `cce algo` reports about a checked schedule, before any size is chosen.

use std::collections::BTreeMap;

use crate::check::EXECUTOR_FUSION;
use crate::model::Kind;
use crate::plan::{Placement, Plan};
use crate::program::Program;

/// One link's traffic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkUse {
    /// Sending rank.
    pub from: usize,
    /// Receiving rank.
    pub to: usize,
    /// Channel.
    pub chan: usize,
    /// Messages.
    pub messages: usize,
    /// Chunks over all its messages.
    pub chunks: u64,
}

/// The summary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    /// `<step>` elements per type (types with none left out), in the file's type order.
    pub steps_by_type: Vec<(&'static str, usize)>,
    /// Every `<step>`.
    pub steps: usize,
    /// Transmissions (after fusing `re` runs).
    pub transmissions: usize,
    /// Fused reductions (two or more `re` steps in one transmission).
    pub fused_reductions: usize,
    /// The most sources of one reduce packet the schedule lowers to (a fused reduction's
    /// members plus its destination; 2 for any receive-reduce).
    pub max_reduce_sources: usize,
    /// Fused reductions with more members than the executor's 16, which cce runs as one packet.
    pub fused_beyond_executor: usize,
    /// Thread blocks on the busiest rank.
    pub max_thread_blocks: usize,
    /// Steps of the longest thread block (the executor needs `MSCCL_MAX_NUM_STEPS` at least
    /// this; its default build has 64).
    pub max_tb_steps: usize,
    /// The longest chain of transmissions (happens-before), which is the steps per rank.
    pub longest_chain: usize,
    /// Every link used.
    pub links: Vec<LinkUse>,
    /// Messages read where the sender keeps them.
    pub messages_in_place: usize,
    /// Messages staged (`rrs` results).
    pub messages_staged: usize,
    /// Messages snapshotted at the send.
    pub messages_snapshot: usize,
}

pub(crate) fn summary(p: &Program, plan: &Plan) -> Summary {
    let mut links: BTreeMap<(usize, usize, usize), (usize, u64)> = BTreeMap::new();
    for m in &p.messages {
        let e = links.entry((m.from, m.to, m.chan)).or_default();
        e.0 += 1;
        e.1 += p.txs[m.sender].cnt;
    }
    let fused: Vec<usize> =
        p.txs.iter().filter(|t| t.kind == Kind::Reduce && t.srcs.len() > 1).map(|t| t.srcs.len()).collect();
    let count = |pl: Placement| plan.placement.iter().filter(|x| **x == pl).count();
    Summary {
        steps_by_type: Kind::ALL
            .iter()
            .zip(p.step_counts)
            .filter(|(_, n)| *n > 0)
            .map(|(k, n)| (k.name(), n))
            .collect(),
        steps: p.step_counts.iter().sum(),
        transmissions: p.txs.len(),
        fused_reductions: fused.len(),
        max_reduce_sources: p
            .txs
            .iter()
            .filter(|t| t.kind.reduces())
            .map(|t| if t.kind == Kind::Reduce { t.srcs.len() + 1 } else { 2 })
            .max()
            .unwrap_or(0),
        fused_beyond_executor: fused.iter().filter(|&&n| n > EXECUTOR_FUSION).count(),
        max_thread_blocks: p.blocks.iter().map(Vec::len).max().unwrap_or(0),
        max_tb_steps: p.blocks.iter().flatten().map(|b| b.steps).max().unwrap_or(0),
        longest_chain: plan.steps.first().map_or(0, Vec::len),
        links: links
            .into_iter()
            .map(|((from, to, chan), (messages, chunks))| LinkUse { from, to, chan, messages, chunks })
            .collect(),
        messages_in_place: count(Placement::InPlace),
        messages_staged: count(Placement::Staged),
        messages_snapshot: count(Placement::Snapshot),
    }
}
