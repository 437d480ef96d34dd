//! Hierarchical collectives (docs/MODEL.md H1–H6): int32 equals the exact (wrapping) sum for
//! every (intra, inter) pair and collective, over several node shapes, in one memory and split
//! over blocks; thousands of ranks run in one process as tasks. (The float orders are checked
//! bit for bit against the independent numpy reference in tests/python.)

mod common;

use common::{exact_sum, i32_inputs};

use cce_collectives::collective::{self, Algo, Collective, Config, Hier, Inter, RedOp};
use cce_format::SdmaDtype;

fn hier(nodes: usize, per_node: usize, intra: Algo, inter: Inter, collective: Collective, elems: u64) -> Config {
    let mut cfg = Config::new(nodes * per_node, Algo::Hier, RedOp::Add, SdmaDtype::I32, elems);
    cfg.model.ranks_per_node = per_node;
    cfg.hier = Hier { intra, inter };
    cfg.collective = collective;
    cfg
}

/// Chunk `c`'s bytes of R chunks of `elems` 4-byte elements.
fn chunk(v: &[u8], c: usize, r: usize, elems: usize) -> &[u8] {
    let (a, b) = (c * elems / r, (c + 1) * elems / r);
    &v[4 * a..4 * b]
}

#[test]
fn int32_is_the_exact_sum_for_every_pair_and_collective() {
    let mut ran = 0;
    for intra in Algo::ALL {
        for inter in Inter::ALL {
            for (x, y) in [(2, 2), (3, 2), (2, 3), (4, 4), (2, 5)] {
                for collective in Collective::ALL {
                    let elems = 97 * x * y + 5;
                    let cfg = hier(x, y, intra, inter, collective, elems as u64);
                    let Ok(checked) = collective::check(&cfg) else { continue };
                    let r = x * y;
                    let inputs = i32_inputs(r, elems, (r * 7 + elems) as u64);
                    let what = format!("{} x{x} y{y} {collective}", cfg.hier.label());
                    let (o, _) = collective::run(&checked, collective::owned(inputs.clone()))
                        .unwrap_or_else(|e| panic!("{what}: {e}"));
                    let sum = exact_sum(&inputs);
                    for (q, out) in o.outputs.iter().enumerate() {
                        match collective {
                            Collective::AllReduce => assert_eq!(out, &sum, "{what} rank {q}"),
                            Collective::ReduceScatter => {
                                let c = (0..r).find(|&c| chunk(&sum, c, r, elems) == &out[..]);
                                assert!(c.is_some() && !out.is_empty(), "{what} rank {q}: not a chunk of the sum");
                            }
                            Collective::AllGather => {
                                // Every chunk comes from the one rank that owns it.
                                for c in 0..r {
                                    let from =
                                        (0..r).filter(|&p| chunk(&inputs[p], c, r, elems) == chunk(out, c, r, elems));
                                    assert!(from.count() >= 1, "{what} rank {q} chunk {c}");
                                }
                            }
                        }
                    }
                    ran += 1;
                }
            }
        }
    }
    assert!(ran > 200, "{ran} configurations ran");
}

#[test]
fn a_hierarchy_split_over_blocks_gives_the_same_bits() {
    for (intra, inter) in
        [(Algo::KangaRing, Inter::Rdh), (Algo::Ring2r2w, Inter::Ring), (Algo::Mesh, Inter::SingleStepMesh)]
    {
        let cfg = hier(4, 4, intra, inter, Collective::AllReduce, 4096);
        let inputs = i32_inputs(16, 4096, 11);
        let one = common::run(&cfg, &inputs).unwrap();
        let (split, _, report) = common::run_partitioned(&cfg, inputs.clone(), 4).unwrap();
        assert_eq!(one.outputs, split.outputs, "{}", cfg.hier.label());
        assert!(report.bytes_between > 0);
        assert_eq!(one.outputs[0], exact_sum(&inputs));
    }
}

/// A flat ring over 4096 ranks makes 33 million steps: its need counts them from the schedule's
/// closed-form size, and a budget they overflow refuses it at once, before one is made.
#[test]
fn a_flat_ring_of_4096_ranks_is_refused_from_its_size() {
    let t = std::time::Instant::now();
    let cfg = Config { budget: 8 << 30, ..Config::new(4096, Algo::Ring, RedOp::Add, SdmaDtype::Bf16, 65536) };
    let size = collective::schedule_size(&cfg).unwrap();
    assert_eq!((size.steps, size.works), (4096 * 2 * 4095, 4096 * 2 * 4095));
    let err = collective::check(&cfg).unwrap_err();
    let collective::CollectiveError::Budget { need, .. } = &err else { panic!("{err}") };
    assert!(need.at_least && need.bytes > size.bytes(4096), "{err}");
    assert!(err.to_string().starts_with("4096 ranks x 65536 bf16 elements need at least "), "{err}");
    assert!(t.elapsed() < std::time::Duration::from_secs(2), "refused from its size: {:?}", t.elapsed());
}
