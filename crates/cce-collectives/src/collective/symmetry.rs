//! A configuration's symmetry over its nodes, which lets the time model walk one node's ranks
//! instead of all of them (docs/MODEL.md C27).
//!
//! When the ranks are X ≥ 2 whole nodes of Y, every chunk has the same length (N a multiple of
//! R, of R·C for a ring of C channels, whose rings turn alike in every node) and the algorithm
//! treats the nodes alike, a map σ of the nodes onto themselves carries
//! every rank's schedule onto another's: rank q's steps, with every rank in them moved by σ,
//! are σ(q)'s, step for step, up to the order of a reduce's sources. The map is
//! - **a rotation** (node n → n + k mod X) for the rings and mesh (flat, or between nodes), and
//! - **an exclusive or** (node n → n ⊕ k, X a power of two) for RDH (flat, or between nodes);
//!   the stages inside a node take either.
//!
//! The places are node-local (each node's chips, its ring of links, its EFA interfaces), so σ
//! carries links onto links and memories onto memories. What the model computes of a rank's
//! step — bytes per engine, per link and per memory (integer sums, order-free), the latest of
//! its peers' finishes and hops (a maximum, order-free) — is then the same for q and σ(q), by
//! induction over the steps: the model of node 0's ranks is every node's, bit for bit. The
//! guarantee is tested, not only argued: `tests::symmetric_models_equal_the_whole_walk`
//! holds every figure of the symmetric walk equal to the whole walk's on every algorithm,
//! hierarchy and collective over small nodes.
//!
//! Not symmetric (walked whole): one node, a last node that is not whole, chunks of unequal
//! lengths, a user's schedule, GCE compression (its boundary hops differ from the others).

use super::config::{Algo, Compress, Config, Inter};

/// How σ moves the nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum NodeMap {
    /// n → n + k mod X.
    Rotate,
    /// n → n ⊕ k.
    Xor,
}

/// The nodes' symmetry of a configuration: the ranks of node 0 stand for every node's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Symmetry {
    /// Ranks per node (Y): the representatives are ranks 0..Y.
    pub(super) period: usize,
    /// Nodes (X).
    pub(super) nodes: usize,
    /// How the nodes map onto each other.
    pub(super) map: NodeMap,
}

impl Symmetry {
    /// The symmetry of `cfg` (which passed the shape check), or `None` when it has none the
    /// model uses.
    pub(super) fn of(cfg: &Config) -> Option<Symmetry> {
        let y = cfg.model.ranks_per_node;
        let r = cfg.ranks;
        // Every chunk (every channel's piece of it) of one length.
        if y == 0 || r % y != 0 || r / y < 2 || cfg.elems % (r * cfg.channels.max(1)) as u64 != 0 {
            return None;
        }
        if cfg.user.is_some() || cfg.compress != Compress::None || cfg.fail.is_some() {
            return None;
        }
        let map = match (cfg.algo, cfg.hier.inter) {
            (Algo::Ring | Algo::Ring2r2w | Algo::KangaRing | Algo::Mesh, _) => NodeMap::Rotate,
            (Algo::Rdh, _) | (Algo::Hier, Inter::Rdh) => NodeMap::Xor,
            (Algo::Hier, Inter::Ring | Inter::Mesh | Inter::SingleStepMesh) => NodeMap::Rotate,
            (Algo::File, _) => return None,
        };
        if map == NodeMap::Xor && !y.is_power_of_two() {
            return None;
        }
        Some(Symmetry { period: y, nodes: r / y, map })
    }

    /// The rank standing for `q` (node 0's rank of the same local index).
    pub(super) fn rep(&self, q: usize) -> usize {
        q % self.period
    }

    /// Where σ_k (k of X) takes rank `q`.
    pub(super) fn image(&self, k: usize, q: usize) -> usize {
        let (n, i) = (q / self.period, q % self.period);
        let to = match self.map {
            NodeMap::Rotate => (n + k) % self.nodes,
            NodeMap::Xor => n ^ k,
        };
        to * self.period + i
    }
}

#[cfg(test)]
mod tests {
    use cce_format::SdmaDtype;

    use super::super::config::{Collective, Hier, RedOp};
    use super::super::lowered::Lowered;
    use super::super::{model, time_model};
    use super::*;

    /// Every algorithm and hierarchy the shape check takes, over nodes of `y` ranks.
    fn configs(x: usize, y: usize) -> Vec<Config> {
        let mut algos: Vec<(Algo, Hier)> = Algo::ALL.into_iter().map(|a| (a, Hier::default())).collect();
        for intra in Algo::ALL {
            for inter in Inter::ALL {
                algos.push((Algo::Hier, Hier { intra, inter }));
            }
        }
        let mut v = Vec::new();
        // The flat rings of 2 and 3 channels.
        for (algo, channels) in [(Algo::Ring, 2), (Algo::Ring, 3), (Algo::Ring2r2w, 2)] {
            for collective in [Collective::AllReduce, Collective::ReduceScatter, Collective::AllGather] {
                let r = x * y;
                let mut cfg = Config::new(r, algo, RedOp::Avg, SdmaDtype::Bf16, 5 * (r * channels) as u64);
                (cfg.collective, cfg.channels, cfg.model.ranks_per_node, cfg.model.efa_per_node) =
                    (collective, channels, y, 2);
                v.push(cfg);
            }
        }
        for (algo, hier) in algos {
            for collective in [Collective::AllReduce, Collective::ReduceScatter, Collective::AllGather] {
                for (arch, cores, efa, per_chunk, op, dtype) in [
                    (3, 1, 2, 7, RedOp::Add, SdmaDtype::Bf16),
                    (2, 2, 1, 64, RedOp::Avg, SdmaDtype::Fp32),
                    (4, 2, 3, 1, RedOp::Max, SdmaDtype::Fp16),
                ] {
                    let r = x * y;
                    let mut cfg = Config::new(r, algo, op, dtype, per_chunk * r as u64);
                    cfg.hier = hier;
                    cfg.collective = collective;
                    cfg.arch = arch;
                    cfg.model.ranks_per_node = y;
                    cfg.model.cores_per_chip = cores;
                    cfg.model.efa_per_node = efa;
                    v.push(cfg);
                }
            }
        }
        v
    }

    #[test]
    fn symmetric_models_equal_the_whole_walk() {
        let mut compared = 0;
        for (x, y) in [(2, 4), (4, 4), (8, 2), (2, 8), (3, 3), (4, 2), (2, 2)] {
            for cfg in configs(x, y) {
                let Some(sym) = Symmetry::of(&cfg) else { continue };
                let Ok(fast) = model(&cfg, false) else { continue };
                let low = Lowered::new(&cfg);
                let whole = time_model(&cfg, &low.l, &low.steps, false, None).unwrap();
                let what = format!("{} {:?} x{x} y{y} arch {}", cfg.algo.label(cfg.hier), cfg.collective, cfg.arch);
                assert_eq!(fast.seconds.to_bits(), whole.seconds.to_bits(), "{what}");
                assert_eq!(fast.packet_count, whole.packet_count, "{what}");
                assert_eq!(fast.descriptors, whole.descriptors, "{what}");
                assert_eq!(fast.busiest_link_bytes, whole.busiest_link_bytes, "{what}");
                assert_eq!(fast.busiest_engine_bytes, whole.busiest_engine_bytes, "{what}");
                assert_eq!(fast.links, whole.links, "{what}");
                assert_eq!(fast.steps.len(), y, "{what}");
                for q in 0..cfg.ranks {
                    assert_eq!(whole.steps[q], fast.steps[sym.rep(q)], "{what}: rank {q}");
                }
                compared += 1;
            }
        }
        assert!(compared > 300, "only {compared} symmetric configurations compared");
    }

    /// The steps the model makes one at a time are the schedule's, step for step, on every
    /// algorithm, hierarchy and collective (symmetric or not, GCE included).
    #[test]
    fn streamed_steps_are_the_schedules() {
        use super::super::schedule::{StepSource, Streamed};
        let mut compared = 0;
        for (x, y) in [(2, 4), (4, 2), (3, 3), (2, 2), (1, 5)] {
            for mut cfg in configs(x, y) {
                for (elems, compress) in
                    [(cfg.elems, Compress::None), (cfg.elems + 3, Compress::None), (cfg.elems, Compress::Gce)]
                {
                    cfg.elems = elems;
                    cfg.compress = compress;
                    if super::super::budget_shape(&cfg).is_err() {
                        continue;
                    }
                    let low = Lowered::new(&cfg);
                    let streamed = Streamed::new(&cfg, &low.l);
                    assert_eq!(streamed.nsteps(), low.nsteps(), "{}", cfg.algo.label(cfg.hier));
                    for (q, st) in low.steps.iter().enumerate() {
                        for (s, step) in st.iter().enumerate() {
                            assert_eq!(&*streamed.step(q, s), step, "{} rank {q} step {s}", cfg.algo.label(cfg.hier));
                        }
                    }
                    compared += 1;
                }
            }
        }
        assert!(compared > 500, "only {compared} configurations compared");
    }

    #[test]
    fn what_is_not_symmetric_is_walked_whole() {
        let mut cfg = Config::new(8, Algo::Ring, RedOp::Add, SdmaDtype::Bf16, 64);
        cfg.model.ranks_per_node = 4;
        assert!(Symmetry::of(&cfg).is_some());
        // Chunks of unequal length, one node, a partial node.
        assert_eq!(Symmetry::of(&Config { elems: 65, ..cfg.clone() }), None);
        let one = Config { model: TimeModelOf::nodes(&cfg, 8), ..cfg.clone() };
        assert_eq!(Symmetry::of(&one), None);
        let partial = Config { model: TimeModelOf::nodes(&cfg, 3), ..cfg.clone() };
        assert_eq!(Symmetry::of(&partial), None);
        assert_eq!(Symmetry::of(&Config { compress: Compress::Gce, ..cfg.clone() }), None);
        // RDH over nodes whose rank count is not a power of two has no exclusive-or map.
        let rdh = Config { algo: Algo::Rdh, model: TimeModelOf::nodes(&cfg, 3), ranks: 6, elems: 60, ..cfg };
        assert_eq!(Symmetry::of(&rdh), None);
    }

    /// A time model with `y` ranks per node.
    struct TimeModelOf;
    impl TimeModelOf {
        fn nodes(cfg: &Config, y: usize) -> super::super::TimeModel {
            super::super::TimeModel { ranks_per_node: y, ..cfg.model }
        }
    }
}
