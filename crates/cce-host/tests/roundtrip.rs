//! build → ring bytes → walk → the same packets, and the request reconstructed, for random
//! requests.

use cce_format::packet::{self, PacketOp, RingGeometry};
use cce_format::ringfile::RingFile;
use cce_format::{KbinOp, SdmaDtype};
use cce_host::{ReduceDtypes, ReduceRequest, Rounding, plan};
use proptest::prelude::*;

fn sized() -> impl Strategy<Value = SdmaDtype> {
    prop::sample::select(SdmaDtype::ALL.iter().copied().filter(|d| d.bytes() > 0).collect::<Vec<_>>())
}

prop_compose! {
    fn request()(op in prop::sample::select(vec![KbinOp::Add, KbinOp::Fma, KbinOp::Min, KbinOp::Max]),
                 n in 1usize..=8, m in 1usize..=3, elems in 1u64..20_000, in_dt in sized(), out_dt in sized(),
                 accum in prop::sample::select(SdmaDtype::ALL[1..].to_vec()), arch in 2u32..=4,
                 seed in prop::option::of(any::<u32>()), scales in prop::collection::vec(-4.0f32..4.0, 8),
                 ring in prop::option::of(prop::sample::select(vec![32u64, 48, 64, 256])), prio in 0u32..=4) -> (ReduceRequest, Option<u64>) {
        let m = if arch == 2 { 1 } else { m };
        let srcs = (0..n as u64).map(|i| (i + 1) << 32).collect();
        let dsts = (0..m as u64).map(|i| (i + 100) << 32).collect();
        let mut req = ReduceRequest::new(op.value(), srcs, dsts, elems, ReduceDtypes { in_dt, accum_dt: accum, out_dt }, arch);
        req.prio = prio;
        req.rounding = seed.map_or(Rounding::Rne, |seed| Rounding::Stochastic { seed });
        if op == KbinOp::Fma {
            req = req.with_fma_scales(&scales[..n]).unwrap();
        }
        (req, ring)
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn build_walk_round_trip((req, ring) in request()) {
        let prog = plan(&req).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let rings = prog.to_rings(ring).unwrap();
        let file = rings.to_file_bytes(0, req.arch);
        let f = RingFile::parse(&file).unwrap();
        let q = &f.queues[0];
        let w = |b: &[u8]| -> Vec<[u32; 4]> { (0..b.len() / 16).map(|i| cce_format::ringfile::words_at(b, i).unwrap()).collect() };
        let (tx, rx) = (w(q.tx), w(q.rx));
        let geo = RingGeometry { ring_size: q.ring_size, initial_phase: q.initial_phase };
        let found: Vec<_> = packet::walk(&tx, &rx, geo, 3).collect::<Result<_, _>>().map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
        prop_assert_eq!(found.len() as u64, prog.packet_count());
        let mut elems = 0u64;
        for (f, p) in found.iter().zip(prog.packets()) {
            prop_assert_eq!(&f.parsed.packet, &p);
            let pk = &f.parsed.packet;
            // The request, reconstructed: op, dtypes (or the u16 lanes), sources in order, scales.
            prop_assert_eq!(pk.op, PacketOp::Cce(cce_format::op::kbin_cce_op_to_sdma_cce_op(req.op).unwrap()));
            let lanes = pk.in_dt == SdmaDtype::U16 && req.in_dt != SdmaDtype::U16;
            if !lanes {
                prop_assert_eq!((pk.in_dt, pk.accum_dt, pk.out_dt), (req.in_dt, req.accum_dt, req.out_dt));
            }
            let first = elems;
            elems += if lanes { 2 * pk.elems as u64 } else { pk.elems as u64 };
            let in_bytes = req.in_dt.bytes() as u64;
            for (i, s) in pk.sources.iter().enumerate() {
                prop_assert_eq!(s.addr, req.srcs[i] + first * in_bytes);
                if let Some(fm) = s.fma {
                    prop_assert_eq!(fm.scale_bits, req.cce_info.unwrap().scale_bits(i).unwrap());
                }
            }
            for (j, d) in pk.dests.iter().enumerate() {
                prop_assert_eq!(*d, req.dsts[j] + first * req.out_dt.bytes() as u64);
            }
            if let Rounding::Stochastic { seed } = req.rounding {
                prop_assert_eq!(pk.seed, Some(seed));
            }
        }
        prop_assert_eq!(elems, req.elems);
    }
}
