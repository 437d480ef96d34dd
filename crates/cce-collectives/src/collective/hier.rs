//! The hierarchical collectives (`--algo hier --intra A --inter B`; docs/MODEL.md H1–H6): X
//! nodes of Y ranks (rank q = nY + i: node n, local index i), each stage one algorithm run by
//! groups of ranks ([`Group`]), stage after stage:
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
use super::config::{Collective, Compress, Config, Inter, RedOp};
use super::group::{Group, Stage, owners};
use super::schedule::{Step, Work, all_gather, reduce_scatter, ring_gce};

/// The schedule of every rank of a hierarchy, and the fine chunk each rank owns after the
/// reduce-scatter (and starts from in an all-gather alone). `cfg` passed the shape check: the
/// ranks are X whole nodes of Y, X, Y ≥ 2, and A and B can run them. Only the steps of ranks
/// below `keep` are made (the others' lists stay empty).
pub(super) fn schedule(cfg: &Config, l: &Layout, keep: usize) -> (Vec<Vec<Step>>, Vec<usize>) {
    let y = cfg.model.ranks_per_node;
    let x = l.r / y;
    let intra_algo = cfg.hier.intra;
    let inter = cfg.hier.inter;
    let input_scale = 1.0 / l.r as f32;
    let intra = |n: usize| Group {
        l,
        ranks: (0..y).map(|i| n * y + i).collect(),
        algo: intra_algo,
        stage: Stage::Intra { x },
        input_scale,
        keep,
    };
    let ob = owners(intra_algo, y);
    // The single-step mesh runs no reduce-scatter or all-gather of its own: mesh's owners.
    let inter_algo = inter.staged().unwrap_or(super::config::Algo::Mesh);
    let across = |i: usize| Group {
        l,
        ranks: (0..x).map(|n| n * y + i).collect(),
        algo: inter_algo,
        stage: Stage::Inter { block: ob[i], x },
        input_scale: 1.0,
        keep,
    };
    let on = owners(inter_algo, x);
    let owner: Vec<usize> = (0..l.r).map(|q| ob[q % y] * x + on[q / y]).collect();
    let mut steps = vec![Vec::new(); l.r];
    match cfg.collective {
        Collective::AllReduce | Collective::ReduceScatter => {
            for n in 0..x {
                reduce_scatter(cfg, &intra(n), &mut steps);
            }
            let base = steps[0].len();
            for i in 0..y {
                let g = across(i);
                match (inter, cfg.collective) {
                    // Every hop of the inter-node ring crosses nodes: each is compressed.
                    (Inter::Ring, Collective::AllReduce) if cfg.compress == Compress::Gce => {
                        ring_gce(cfg, &g, &mut steps, &|_| true);
                    }
                    (Inter::SingleStepMesh, _) => single_step_mesh(cfg, &g, &mut steps),
                    (_, Collective::AllReduce) => {
                        reduce_scatter(cfg, &g, &mut steps);
                        all_gather(cfg, &g, &mut steps, &on, true);
                    }
                    _ => reduce_scatter(cfg, &g, &mut steps),
                }
            }
            wait_for_inputs(l, &mut steps, base);
            if cfg.collective == Collective::AllReduce {
                for n in 0..x {
                    all_gather(cfg, &intra(n), &mut steps, &ob, false);
                }
            }
        }
        Collective::AllGather => {
            for i in 0..y {
                all_gather(cfg, &across(i), &mut steps, &on, false);
            }
            for n in 0..x {
                all_gather(cfg, &intra(n), &mut steps, &ob, false);
            }
        }
    }
    (steps, owner)
}

/// The single-step mesh all-reduce of group `g`: every member reduces the whole block from
/// every member's `T`, in member order, into its own `W`.
fn single_step_mesh(cfg: &Config, g: &Group, steps: &mut [Vec<Step>]) {
    let n = g.n();
    let elems: u64 = (0..n).map(|c| g.len(c)).sum();
    let scales = if cfg.op == RedOp::Avg { vec![1.0; n] } else { Vec::new() };
    for q in (0..n).filter(|&q| g.keeps(q)) {
        let srcs = (0..n).map(|p| g.input(p, 0)).collect();
        let work = vec![Work::Reduce { srcs, dsts: vec![g.w(q, 0)], elems, scales: scales.clone() }];
        steps[g.g(q)].push(Step { work, deps: vec![] });
    }
}

/// Makes the first step at `base` of every rank wait for the last earlier step of every other
/// rank whose `T` a step from `base` on reads (the stage's input, complete when that rank's
/// earlier stage is).
fn wait_for_inputs(l: &Layout, steps: &mut [Vec<Step>], base: usize) {
    if base == 0 {
        return;
    }
    // Ranks whose steps were not made have none.
    for (q, mine) in steps.iter_mut().enumerate().filter(|(_, mine)| mine.len() > base) {
        let peers: BTreeSet<usize> = mine[base..]
            .iter()
            .flat_map(|s| s.work.iter().flat_map(Work::reads))
            .filter(|&a| is_t(l, a))
            .map(Layout::rank_of)
            .filter(|&p| p != q)
            .collect();
        let first = &mut mine[base].deps;
        for p in peers {
            if !first.contains(&(p, base - 1)) {
                first.push((p, base - 1));
            }
        }
    }
}

/// Whether `addr` lies in its rank's `T`.
fn is_t(l: &Layout, addr: u64) -> bool {
    l.scratch_of(addr) == Some(l.t(Layout::rank_of(addr)))
}
