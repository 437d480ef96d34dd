//! `cce identify` through the door, with cce's algorithms really run: each algorithm's own
//! output is named by it, the merges the identification makes between cce's algorithms hold on
//! real runs, and the probe tells kangaring (whose order is in no family) from every family
//! order in every chunk.

use cce_api::SdmaDtype;
use cce_api::collective::{AllreduceParams, allreduce_slices};
use cce_api::identify::{IdentifyParams, identify, make_probe};
use cce_api::params::{Algo, AlgoChoice, Check, RedOp};
use cce_forensics::eval::rne_block;
use cce_forensics::{Prediction, Rounding, family_candidates};
use cce_numerics::NumType;

/// Inputs that differ per rank and per element: bf16 values over several binades.
fn inputs(ranks: usize, elems: usize, seed: u64) -> Vec<Vec<u8>> {
    let mut s = seed;
    (0..ranks)
        .map(|_| {
            (0..elems)
                .flat_map(|_| {
                    s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    let e = 120 + (s >> 60) as u16; // exponents 120..=135
                    let bits = (s >> 40) as u16 & 0x807f | e << 7;
                    bits.to_le_bytes()
                })
                .collect()
        })
        .collect()
}

fn run(algo: Algo, accum: SdmaDtype, inputs: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let p = AllreduceParams {
        accum: Some(accum),
        check: Check::None,
        ..AllreduceParams::new(inputs.len() as u64, AlgoChoice::Algo(algo), RedOp::Add, SdmaDtype::Bf16)
    };
    let slices: Vec<&[u8]> = inputs.iter().map(Vec::as_slice).collect();
    allreduce_slices(&p, &slices).unwrap().outcome.outputs
}

#[test]
fn every_algorithm_is_named_by_its_own_output() {
    let ins = inputs(8, 4096, 5);
    let slices: Vec<&[u8]> = ins.iter().map(Vec::as_slice).collect();
    for (algo, name) in
        [(Algo::Ring, "ring"), (Algo::KangaRing, "kangaring, accumulate fp32"), (Algo::Rdh, "pairwise tree")]
    {
        let out = run(algo, SdmaDtype::Fp32, &ins);
        let seen: Vec<(usize, &[u8])> = out.iter().enumerate().map(|(r, o)| (r, o.as_slice())).collect();
        let r = identify(&IdentifyParams::new(SdmaDtype::Bf16), &slices, &seen).unwrap().report;
        let best = &r.candidates[r.best.unwrap()];
        assert_eq!(best.name, name);
        assert_eq!(best.matched, 4096);
        // rdh is the family's pairwise tree (its documented order), named as an alias.
        let named = best.algo.as_deref() == Some(algo.name()) || best.aliases.iter().any(|a| a == algo.name());
        assert!(named, "{name}: {:?} {:?}", best.algo, best.aliases);
        assert_eq!(r.unexplained.count, 0);
        assert!(r.separating.unwrap() > 0, "{name}: nothing separates it from {}", r.candidates[1].name);
    }
}

#[test]
fn the_merges_of_cce_algorithms_hold_on_real_runs() {
    for ranks in [4usize, 8] {
        let ins = inputs(ranks, 2048, ranks as u64);
        let ring = run(Algo::Ring, SdmaDtype::Fp32, &ins);
        // Same order as ring (docs/collectives.md).
        assert_eq!(run(Algo::Ring2r2w, SdmaDtype::Fp32, &ins), ring);
        // Two sources per packet: the accumulations agree (merge 4).
        assert_eq!(run(Algo::Ring, SdmaDtype::Bf16, &ins), ring);
        assert_eq!(run(Algo::Rdh, SdmaDtype::Bf16, &ins), run(Algo::Rdh, SdmaDtype::Fp32, &ins));
        // Accumulated in bf16, kangaring is ring (merge 2) ...
        assert_eq!(run(Algo::KangaRing, SdmaDtype::Bf16, &ins), ring);
        // ... and mesh the sequential sum from 0 up, in every chunk.
        let slices: Vec<&[u8]> = ins.iter().map(Vec::as_slice).collect();
        let cands = family_candidates(ranks as u32, NumType::Bf16, &[NumType::F32, NumType::Bf16], Rounding::Rne);
        // rdh is the pairwise tree over 0..R in every chunk.
        let tree = cands.iter().find(|c| c.name == "pairwise tree").unwrap();
        let Prediction::Rule(rule) = &tree.prediction else { panic!() };
        assert_eq!(
            run(Algo::Rdh, SdmaDtype::Fp32, &ins)[1],
            rne_block(rule, NumType::Bf16, &slices, 0, 2048).unwrap().to_vec()
        );
        let from_0 = cands.iter().find(|c| c.name == "sequential from 0 up").unwrap();
        let Prediction::Rule(rule) = &from_0.prediction else { panic!() };
        let seq = rne_block(rule, NumType::Bf16, &slices, 0, 2048).unwrap();
        assert_eq!(run(Algo::Mesh, SdmaDtype::Bf16, &ins)[0], seq.to_vec());
        // And not with fp32 accumulation (these inputs tell them apart).
        assert_ne!(run(Algo::KangaRing, SdmaDtype::Fp32, &ins), ring);
        assert_ne!(run(Algo::Mesh, SdmaDtype::Fp32, &ins)[0], seq.to_vec());
    }
}

#[test]
fn the_probe_tells_kangaring_from_every_family_order_in_every_chunk() {
    for ranks in [4usize, 8, 16, 32] {
        let n = 64 * ranks;
        let probe = make_probe(ranks as u64, n as u64, SdmaDtype::Bf16).unwrap();
        let kanga = run(Algo::KangaRing, SdmaDtype::Fp32, &probe.inputs);
        let slices: Vec<&[u8]> = probe.inputs.iter().map(Vec::as_slice).collect();
        let cands = family_candidates(ranks as u32, NumType::Bf16, &[NumType::F32, NumType::Bf16], Rounding::Rne);
        for c in &cands {
            let Prediction::Rule(rule) = &c.prediction else { panic!() };
            let out = rne_block(rule, NumType::Bf16, &slices, 0, n).unwrap();
            for chunk in 0..ranks {
                let (lo, hi) = (chunk * n / ranks * 2, (chunk + 1) * n / ranks * 2);
                assert_ne!(&kanga[0][lo..hi], &out[lo..hi], "R={ranks}: kangaring is {} on chunk {chunk}", c.name);
            }
        }
    }
}

/// cce's algorithms carry their orders from the element story: the ring's candidate shows chunk
/// 0's documented order, the map gives each chunk its own range and order (chunk c's sum starts
/// at rank c), and with stochastic rounding its consistency is computed (an RNE output is one
/// of the outcomes SR can reach, so every element is consistent).
#[test]
fn cce_algorithms_carry_their_orders_chunk_by_chunk() {
    let ins = inputs(4, 4096, 9);
    let slices: Vec<&[u8]> = ins.iter().map(Vec::as_slice).collect();
    let out = run(Algo::Ring, SdmaDtype::Fp32, &ins);
    let seen: Vec<(usize, &[u8])> = out.iter().enumerate().map(|(r, o)| (r, o.as_slice())).collect();
    let r = identify(&IdentifyParams::new(SdmaDtype::Bf16), &slices, &seen).unwrap().report;
    let best = &r.candidates[r.best.unwrap()];
    assert_eq!(best.name, "ring");
    assert_eq!(best.expr.as_ref().map(ToString::to_string).as_deref(), Some("(((0+1)+2)+3)"));
    let want = ["(((0+1)+2)+3)", "(((1+2)+3)+0)", "(((2+3)+0)+1)", "(((3+0)+1)+2)"];
    assert_eq!(r.map.len(), 4, "{:?}", r.map);
    for (c, (m, w)) in r.map.iter().zip(want).enumerate() {
        assert_eq!((m.first, m.last), (c as u64 * 1024, c as u64 * 1024 + 1023));
        assert_eq!(m.expr.as_ref().map(ToString::to_string).as_deref(), Some(w), "chunk {c}");
    }
    let sr = IdentifyParams { rounding: cce_api::params::RoundingMode::Sr, ..IdentifyParams::new(SdmaDtype::Bf16) };
    let r = identify(&sr, &slices, &seen).unwrap().report;
    let ring = r.candidates.iter().find(|c| c.algo.as_deref() == Some("ring")).unwrap();
    assert_eq!(ring.consistent, Some(4096), "{ring:?}");
}

/// With `ranks_per_node`, the hierarchical orders join the candidates: a hierarchy's own output
/// is matched in full by its pair (and by the pairs whose orders the inputs cannot tell from
/// it), and no flat algorithm explains it.
#[test]
fn a_hierarchy_is_named_by_its_own_output() {
    use cce_api::params::Inter;
    let ins = inputs(16, 4096, 9);
    let slices: Vec<&[u8]> = ins.iter().map(Vec::as_slice).collect();
    let p = AllreduceParams {
        accum: Some(SdmaDtype::Fp32),
        check: Check::None,
        nodes: Some(4),
        ranks_per_node: Some(4),
        intra: Some(Algo::KangaRing),
        inter: Some(Inter::Ring),
        ..AllreduceParams::new(16, AlgoChoice::Algo(Algo::Hier), RedOp::Add, SdmaDtype::Bf16)
    };
    let out = allreduce_slices(&p, &slices).unwrap().outcome.outputs;
    let seen: Vec<(usize, &[u8])> = vec![(0, out[0].as_slice())];
    let params = IdentifyParams { ranks_per_node: Some(4), ..IdentifyParams::new(SdmaDtype::Bf16) };
    let r = identify(&params, &slices, &seen).unwrap().report;
    let full: Vec<&str> = r.candidates.iter().filter(|c| c.matched == 4096).map(|c| c.name.as_str()).collect();
    assert!(full.contains(&"hier(kangaring/ring), accumulate fp32"), "{full:?}");
    assert!(full.iter().all(|n| n.starts_with("hier(")), "a flat order explains a hierarchy's output: {full:?}");
    // Without nodes, no candidate explains every element.
    let flat = identify(&IdentifyParams::new(SdmaDtype::Bf16), &slices, &seen).unwrap().report;
    assert!(flat.candidates.iter().all(|c| c.matched < 4096));
}

/// With `channels`, the flat ring of that many channels joins the candidates: its own output
/// (nodes of 4 ranks, where the channels' rings turn) is explained by `ring(4 channels)` alone,
/// piece by piece, with ring-2r2w of 4 channels as its alias; without it, no candidate is the
/// answer. On one node every channel's ring is the ring turned: the same bits, one candidate.
#[test]
fn a_ring_of_channels_is_named_by_its_own_output() {
    let ins = inputs(8, 4000, 11);
    let slices: Vec<&[u8]> = ins.iter().map(Vec::as_slice).collect();
    let channels = |algo: Algo, ranks_per_node: Option<u64>| {
        let p = AllreduceParams {
            check: Check::None,
            ranks_per_node,
            channels: Some(4),
            ..AllreduceParams::new(8, AlgoChoice::Algo(algo), RedOp::Add, SdmaDtype::Bf16)
        };
        allreduce_slices(&p, &slices).unwrap().outcome.outputs
    };
    let out = channels(Algo::Ring, Some(4));
    assert_eq!(channels(Algo::Ring2r2w, Some(4)), out, "ring-2r2w of 4 channels is ring's order");
    let seen: Vec<(usize, &[u8])> = out.iter().enumerate().map(|(r, o)| (r, o.as_slice())).collect();
    let params = IdentifyParams { channels: Some(4), ranks_per_node: Some(4), ..IdentifyParams::new(SdmaDtype::Bf16) };
    let r = identify(&params, &slices, &seen).unwrap().report;
    let answer = &r.candidates[r.answer().expect("explained")];
    assert_eq!(answer.name, "ring(4 channels)");
    assert_eq!(answer.aliases, ["ring-2r2w(4 channels)"]);
    assert_eq!(answer.matched, 4000);
    assert!(r.candidates.iter().filter(|c| c.matched == 4000).count() == 1, "one candidate explains it");
    // The map cuts at every piece (500-element chunks in 4 pieces), one order each.
    assert_eq!(r.map.len(), 32, "{:?}", r.map);
    assert!(r.map.iter().all(|m| m.last - m.first + 1 == 125));
    // Without the channels: no candidate is the answer.
    let flat = identify(&IdentifyParams::new(SdmaDtype::Bf16), &slices, &seen).unwrap().report;
    assert_eq!(flat.answer(), None, "{}: {}", flat.verdict.name(), flat.verdict_reason);
    assert!(flat.candidates.iter().all(|c| c.matched < 4000));
    // One node (the instance's 128 ranks): the ring's bits, so the channels join the ring.
    let one = channels(Algo::Ring, None);
    assert_eq!(one, run(Algo::Ring, SdmaDtype::Fp32, &ins));
    let seen: Vec<(usize, &[u8])> = vec![(0, one[0].as_slice())];
    let params = IdentifyParams { channels: Some(4), ..IdentifyParams::new(SdmaDtype::Bf16) };
    let r = identify(&params, &slices, &seen).unwrap().report;
    let answer = &r.candidates[r.answer().expect("explained")];
    assert_eq!(answer.name, "ring");
    assert!(answer.aliases.iter().any(|a| a == "ring(4 channels)"), "{:?}", answer.aliases);
}

/// Channels the flat ring cannot run are refused before anything is evaluated, as a run of
/// them is.
#[test]
fn channels_out_of_range_are_refused() {
    let ins = inputs(4, 64, 3);
    let slices: Vec<&[u8]> = ins.iter().map(Vec::as_slice).collect();
    let seen: Vec<(usize, &[u8])> = vec![(0, slices[0])];
    for bad in [0, 33] {
        let params = IdentifyParams { channels: Some(bad), ..IdentifyParams::new(SdmaDtype::Bf16) };
        let e = identify(&params, &slices, &seen).unwrap_err().to_string();
        assert!(e.contains(&format!("`channels` {bad}: between 1 and 32")), "{e}");
    }
}
