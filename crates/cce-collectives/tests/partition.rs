//! Ranks split over 1–4 memories (the way processes hold them) give the same outputs, bit for
//! bit, as one memory: every algorithm, five op / dtype / rounding configurations, several
//! rank counts and sizes; and an injected failure in one block stops every block, naming it.

mod common;

use cce_collectives::collective::{self, Algo, Collective, Config, RedOp};
use cce_collectives::metrics;
use cce_format::SdmaDtype;
use cce_host::Rounding;

fn configs(ranks: usize, algo: Algo, elems: u64) -> Vec<(&'static str, Config)> {
    let base = |op, dtype| Config::new(ranks, algo, op, dtype, elems);
    vec![
        ("add bf16 rne", base(RedOp::Add, SdmaDtype::Bf16)),
        ("add bf16 sr", Config { rounding: Rounding::Stochastic { seed: 7 }, ..base(RedOp::Add, SdmaDtype::Bf16) }),
        ("avg fp32", base(RedOp::Avg, SdmaDtype::Fp32)),
        ("max fp16", base(RedOp::Max, SdmaDtype::Fp16)),
        ("add int32", base(RedOp::Add, SdmaDtype::I32)),
    ]
}

#[test]
fn every_split_gives_the_single_memory_bits() {
    for algo in Algo::ALL {
        for (ranks, elems) in [(4usize, 3001u64), (5, 257), (8, 4096)] {
            if algo.refusal(ranks, 3).is_some() {
                continue;
            }
            for (name, cfg) in configs(ranks, algo, elems) {
                let inputs = metrics::generate(&cfg, 11);
                let (one, _) = common::run_owned(&cfg, inputs.clone()).unwrap();
                for groups in 1..=4 {
                    let (o, back, p) = common::run_partitioned(&cfg, inputs.clone(), groups).unwrap();
                    let what = format!("{} R={ranks} {name} in {groups} blocks", algo.name());
                    assert_eq!(back, inputs, "{what}: inputs handed back unchanged");
                    assert!(o.outputs == one.outputs, "{what}: outputs differ from one memory");
                    if name == "add int32" {
                        // And the exact wrapping sum, computed here on its own.
                        let sum: Vec<u8> = (0..elems as usize)
                            .flat_map(|i| {
                                let v = inputs.iter().fold(0i32, |acc, b| {
                                    acc.wrapping_add(i32::from_le_bytes(b[4 * i..4 * i + 4].try_into().unwrap()))
                                });
                                v.to_le_bytes()
                            })
                            .collect();
                        assert!(o.outputs.iter().all(|x| *x == sum), "{what}: not the exact sum");
                    }
                    assert_eq!(p.groups, groups);
                    assert_eq!(p.peak_bytes.len(), groups);
                    assert_eq!(p.bytes_between == 0, groups == 1, "{what}: {} bytes between blocks", p.bytes_between);
                }
            }
        }
    }
}

#[test]
fn reduce_scatter_and_all_gather_split_too() {
    for algo in Algo::ALL {
        for collective in [Collective::ReduceScatter, Collective::AllGather] {
            let ranks = if algo.refusal(6, 3).is_some() { 8 } else { 6 };
            let cfg = Config { collective, ..Config::new(ranks, algo, RedOp::Add, SdmaDtype::Bf16, 999) };
            let inputs = metrics::generate(&cfg, 3);
            let (one, _) = common::run_owned(&cfg, inputs.clone()).unwrap();
            for groups in [2, 3, 6] {
                let (o, _, _) = common::run_partitioned(&cfg, inputs.clone(), groups).unwrap();
                assert!(o.outputs == one.outputs, "{} {collective:?} in {groups} blocks", algo.name());
            }
        }
    }
}

/// Each block holds only its ranks' buffers and what it is sent: with 4 blocks of 8 ranks each
/// block's peak is well under the single memory's.
#[test]
fn a_block_holds_about_its_share() {
    let cfg = Config::new(8, Algo::Ring, RedOp::Add, SdmaDtype::Bf16, 1 << 16);
    let inputs = metrics::generate(&cfg, 5);
    let (one, _) = common::run_owned(&cfg, inputs.clone()).unwrap();
    let (_, _, p) = common::run_partitioned(&cfg, inputs, 4).unwrap();
    let worst = p.peak_bytes.iter().copied().max().unwrap();
    assert!(worst * 2 < one.model_peak_bytes, "block peak {worst} vs one memory {}", one.model_peak_bytes);
}

#[test]
fn a_failure_in_one_block_stops_them_all_with_its_name() {
    let cfg = Config { fail: Some((5, 2)), ..Config::new(8, Algo::Ring, RedOp::Add, SdmaDtype::Bf16, 4096) };
    let inputs = metrics::generate(&cfg, 1);
    let e = common::run_partitioned(&cfg, inputs, 4).unwrap_err().to_string();
    assert!(e.starts_with("rank 5 failed at step 2"), "{e}");
    let err = common::run_partitioned(&Config::new(4, Algo::Ring, RedOp::Add, SdmaDtype::Bf16, 64), vec![], 5);
    assert!(err.unwrap_err().to_string().contains("5 blocks for 4 ranks"));
}

/// `--compress gce` split into its nodes (one memory per node): the same bits as one memory,
/// and the bytes that crossed between the memories — the messages a transport moved — are
/// the bytes over the node boundaries `hop_report` counts from the packets, compressed and not.
#[test]
fn the_gce_ring_split_by_node_moves_the_hop_bytes() {
    for (ranks, per_node, elems) in [(8usize, 4usize, 5001u64), (4, 2, 4096), (6, 3, 999)] {
        for compress in [collective::Compress::Gce, collective::Compress::None] {
            let mut cfg = Config::new(ranks, Algo::Ring, RedOp::Add, SdmaDtype::Bf16, elems);
            cfg.compress = compress;
            cfg.model.ranks_per_node = per_node;
            let inputs = metrics::generate(&cfg, 3);
            let (one, _) = common::run_owned(&cfg, inputs.clone()).unwrap();
            let nodes = ranks / per_node;
            let (o, _, p) = common::run_partitioned(&cfg, inputs, nodes).unwrap();
            let what = format!("R={ranks} per node {per_node} {}", compress.name());
            assert!(o.outputs == one.outputs, "{what}: outputs differ from one memory");
            let hops = collective::hop_bytes(&cfg, &o.links);
            assert_eq!(p.bytes_between, hops, "{what}: messages against the packets' count");
            if compress == collective::Compress::Gce {
                let report = collective::hop_report(&cfg, &o).unwrap();
                assert_eq!(report.compressed, hops);
                let mut plain = cfg.clone();
                plain.compress = collective::Compress::None;
                let (po, _, pp) = common::run_partitioned(&plain, metrics::generate(&plain, 3), nodes).unwrap();
                assert_eq!(report.uncompressed, pp.bytes_between, "{what}: the uncompressed count is its run's");
                assert_eq!(report.uncompressed, collective::hop_bytes(&plain, &po.links));
                // 48 header bytes per 166-element chunk at the smallest size: 0.64.
                assert!(report.ratio() < 0.65, "{what}: ratio {}", report.ratio());
            }
        }
    }
}
