//! The hierarchical collectives (`--algo hier --intra A --inter B`; docs/MODEL.md H1–H6): X
//! nodes of Y ranks (rank q = nY + i: node n, local index i), each stage one algorithm run by
//! groups of ranks ([`super::group::Group`]), stage after stage — the legs of its
//! [`super::schedule::Plan`] ([`legs`]):
//!
//! - **all-reduce** — (1) every node's intra-node reduce-scatter of A over its Y blocks: local
//!   rank i ends with block `ob(i)` (A's owner of i) reduced over the node, in `T(q)`; (2) every
//!   local index's inter-node all-reduce of B over the X fine chunks of block `ob(i)`, reading
//!   `T` and writing the output `W`: B's reduce-scatter then its all-gather, or the single-step
//!   mesh (each rank reduces the whole block from the X ranks' `T`, in node order, into its
//!   `W`); (3) every node's intra-node all-gather of A's blocks.
//! - **reduce-scatter** — intra-node first: (1), then B's inter-node reduce-scatter; rank q
//!   ends with fine chunk `ob(i)·X + oB(n)` (B's owner of node n).
//! - **all-gather** — inter-node first: rank q starts with fine chunk `ob(i)·X + oB(n)` of its
//!   input, B's inter-node all-gather fills block `ob(i)`, then A's intra-node all-gather.
//!
//! Each stage reduces in the order of its algorithm (the module docs of [`super`]), over the
//! stage's members in their group order (node order between nodes, local order inside one);
//! so an element's sum is A's order over the Y ranks of every node, then B's order over those
//! X node sums — rounded to the buffer dtype at every step of both. `avg` scales the inputs by
//! fl32(1/R) in stage (1) and every partial by 1 after.
//!
//! With `--compress gce` (inter ring, all-reduce; docs/MODEL.md H8) the inter-node stage is the
//! GCE ring of the flat all-reduce over the X members, every hop crossing a node boundary:
//! each sender reduces and compresses, each receiver expands before its own reduce, the owner
//! quantizes the final chunk once and the all-gather carries its compressed bytes; the
//! intra-node stages move the buffer dtype as they are.
//!
//! A stage starts when what it reads from another rank's earlier stage is complete: its first
//! step waits for the last step of every rank whose `T` it reads.

use std::collections::BTreeSet;

use super::buffers::Layout;
use super::config::{Algo, Collective, Compress, Config, Inter};
use super::group::owner;
use super::schedule::{Leg, Part, Split, Step, Work};

/// The legs of a hierarchy, in order ([`super::schedule::Plan`]). `cfg` passed the shape
/// check: the ranks are X whole nodes of Y, X, Y ≥ 2, and A and B can run them.
pub(super) fn legs(cfg: &Config) -> Vec<Leg> {
    let intra = cfg.hier.intra;
    // The single-step mesh runs no reduce-scatter or all-gather of its own: mesh's owners.
    let inter = cfg.hier.inter.staged().unwrap_or(Algo::Mesh);
    let nodes = |part| Leg { part, algo: intra, split: Split::Nodes };
    let across = |part| Leg { part, algo: inter, split: Split::Across { intra } };
    let gather = Part::AllGather { after_rs: false };
    if cfg.collective == Collective::AllGather {
        return vec![across(gather), nodes(gather)];
    }
    let mut v = vec![nodes(Part::ReduceScatter)];
    match (cfg.hier.inter, cfg.collective) {
        // Every hop of the inter-node ring crosses nodes: each is compressed.
        (Inter::Ring, Collective::AllReduce) if cfg.compress == Compress::Gce => v.push(across(Part::RingGce)),
        (Inter::SingleStepMesh, _) => v.push(across(Part::SingleStepMesh)),
        (_, Collective::AllReduce) => {
            v.push(across(Part::ReduceScatter));
            v.push(across(Part::AllGather { after_rs: true }));
        }
        _ => v.push(across(Part::ReduceScatter)),
    }
    if cfg.collective == Collective::AllReduce {
        v.push(nodes(gather));
    }
    v
}

/// The fine chunk each rank of a hierarchy owns after the reduce-scatter (and starts from in
/// an all-gather alone): rank nY + i holds fine chunk `ob(i)·X + oB(n)`.
pub(super) fn owners(cfg: &Config, l: &Layout) -> Vec<usize> {
    let y = cfg.model.ranks_per_node.max(1);
    let x = l.r / y;
    let inter = cfg.hier.inter.staged().unwrap_or(Algo::Mesh);
    (0..l.r).map(|q| owner(cfg.hier.intra, y, q % y) * x + owner(inter, x, q / y)).collect()
}

/// Makes the first step at `base` of every rank wait for the last earlier step of every other
/// rank whose `T` a step from `base` on reads (the stage's input, complete when that rank's
/// earlier stage is).
pub(super) fn wait_for_inputs(l: &Layout, steps: &mut [Vec<Step>], base: usize) {
    if base == 0 {
        return;
    }
    for (q, mine) in steps.iter_mut().enumerate() {
        let peers = input_peers(l, q, mine[base..].iter().flat_map(|s| &s.work));
        add_input_waits(&mut mine[base], peers, base);
    }
}

/// The other ranks whose `T` rank `q`'s `works` read (the stage's inputs it waits for).
pub(super) fn input_peers<'w>(l: &Layout, q: usize, works: impl Iterator<Item = &'w Work>) -> BTreeSet<usize> {
    works.flat_map(Work::reads).filter(|&a| is_t(l, a)).map(Layout::rank_of).filter(|&p| p != q).collect()
}

/// Makes `first` (the step at `base`) wait for each of `peers`' last step before it.
pub(super) fn add_input_waits(first: &mut Step, peers: BTreeSet<usize>, base: usize) {
    for p in peers {
        if !first.deps.contains(&(p, base - 1)) {
            first.deps.push((p, base - 1));
        }
    }
}

/// Whether `addr` lies in its rank's `T`.
fn is_t(l: &Layout, addr: u64) -> bool {
    l.scratch_of(addr) == Some(l.t(Layout::rank_of(addr)))
}
