//! A trace of hundreds of ranks: above the packet limit the timeline holds steps alone, and the
//! trace draws one slice per rank and step (model only: nothing runs).

use cce_api::collective::Config;
use cce_api::params::{Algo, RedOp};
use cce_collectives::collective::{self, MAX_TRACE_PACKETS, TimeModel};
use cce_format::SdmaDtype;

#[test]
fn a_flat_ring_of_256_ranks_is_traced_step_by_step() {
    // 256 ranks of 2 MB on Trn1 (8 nodes of 32): 326,400 packets.
    let mut cfg = Config::new(256, Algo::Ring, RedOp::Add, SdmaDtype::Bf16, 1 << 20);
    cfg.arch = 2;
    cfg.model = TimeModel::defaults(2);
    let t = collective::trace(&cfg).unwrap();
    assert!(t.packet_count > MAX_TRACE_PACKETS && t.packets.is_empty());
    let v = cce_api::trace::chrome_trace(&cfg, &t, &[]);
    assert_eq!(v["otherData"]["aggregated"], "steps");
    assert_eq!(v["otherData"]["packets"], t.packet_count);
    let events = v["traceEvents"].as_array().unwrap();
    let steps: Vec<&serde_json::Value> = events.iter().filter(|e| e["cat"] == "step").collect();
    assert_eq!(steps.len(), 256 * 510);
    // Every rank's steps in order, none before the one before it ends.
    for q in [0usize, 31, 32, 255] {
        let mine: Vec<(f64, f64)> = steps
            .iter()
            .filter(|e| e["pid"] == q)
            .map(|e| (e["ts"].as_f64().unwrap(), e["dur"].as_f64().unwrap()))
            .collect();
        assert_eq!(mine.len(), 510);
        assert!(mine.windows(2).all(|w| w[1].0 >= w[0].0 + w[0].1 - 1e-9), "rank {q}");
    }
    // A hierarchy of the same ranks lists its packets.
    let mut hier = cfg.clone();
    hier.algo = Algo::Hier;
    hier.model.ranks_per_node = 32;
    hier.elems = 65536;
    let t = collective::trace(&hier).unwrap();
    assert!(!t.packets.is_empty() && t.packet_count <= MAX_TRACE_PACKETS);
}
