//! The engine over host-built rings: every op and path, batching and threads that never change
//! the bits, ring wrap, round robin. (Here because it needs both cce-host and cce-engine.)

use SdmaDtype::*;
use cce_engine::feed::run_programs;
use cce_engine::{Engine, EngineConfig, Memory, PagedMemory, QueueState};
use cce_format::{KbinOp, SdmaDtype};
use cce_host::{MinMaxConstant, ReduceDtypes, ReduceRequest, Rings, Rounding, plan};
use cce_numerics::{AccumType, FmaSource, NumType, Op, ReduceSpec, Scalar};

/// bf16 in and out, fp32 accumulate.
const BF16_VIA_FP32: ReduceDtypes = ReduceDtypes { in_dt: Bf16, accum_dt: Fp32, out_dt: Bf16 };

const DATA: u64 = 0x1000_0000;
const SRC_STRIDE: u64 = 0x10_0000 * 4; // 4 MiB apart: sources straddle page boundaries differently
const OUT: u64 = DATA + 40 * 0x10_0000;

/// Deterministic pseudo-random bytes.
fn bytes(seed: u64, n: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

/// Finite bf16 values (exponent never all-ones), for arithmetic checks.
fn bf16_data(seed: u64, elems: usize) -> Vec<u8> {
    let mut b = bytes(seed, elems * 2);
    for c in b.chunks_exact_mut(2) {
        c[1] = (c[1] & 0x80) | (0x38 + c[1] % 16); // exponents near 1.0
    }
    b
}

struct Setup {
    engine: Engine<PagedMemory>,
}

fn mem() -> PagedMemory {
    let mut m = PagedMemory::new(1 << 30);
    m.add_region(DATA, 64 << 20).unwrap();
    m
}

fn run(rings: &Rings, srcs: &[Vec<u8>], config: EngineConfig) -> Setup {
    let mut m = mem();
    for (i, s) in srcs.iter().enumerate() {
        m.write(DATA + i as u64 * SRC_STRIDE + 0x123, s).unwrap();
    }
    let mut engine = Engine::new(m, config);
    run_programs(&mut engine, &[rings.queue(0)], &mut |m: &mut PagedMemory, a, l| m.add_region(a, l)).unwrap();
    Setup { engine }
}

fn src_addrs(n: usize) -> Vec<u64> {
    (0..n as u64).map(|i| DATA + i * SRC_STRIDE + 0x123).collect()
}

fn read(e: &Engine<PagedMemory>, addr: u64, n: usize) -> Vec<u8> {
    let mut b = vec![0; n];
    e.memory().read(addr, &mut b).unwrap();
    b
}

fn expect(spec: &ReduceSpec, srcs: &[Vec<u8>], out_bytes: usize) -> Vec<u8> {
    let mut out = vec![0u8; out_bytes];
    let views: Vec<&[u8]> = srcs.iter().map(Vec::as_slice).collect();
    cce_numerics::reduce(spec, &views, &mut [out.as_mut_slice()], OUT / 2).unwrap();
    out
}

#[test]
fn add_matches_one_numerics_call_for_any_batching_and_threads() {
    let elems = 300_000usize; // 147 packets, crossing 1 MiB pages
    let srcs: Vec<_> = (0..3).map(|i| bf16_data(i, elems)).collect();
    for rounding in [Rounding::Rne, Rounding::Stochastic { seed: 77 }] {
        let req = ReduceRequest {
            rounding,
            ..ReduceRequest::new(KbinOp::Add.value(), src_addrs(3), vec![OUT], elems as u64, BF16_VIA_FP32, 3)
        };
        let rings = plan(&req).unwrap().to_rings(None).unwrap();
        let mut results = Vec::new();
        for config in [
            EngineConfig::default(),
            EngineConfig { batch: false, ..EngineConfig::default() },
            EngineConfig { threads: 2, ..EngineConfig::default() },
            EngineConfig { max_run: 7, ..EngineConfig::default() },
        ] {
            let s = run(&rings, &srcs, config);
            let st = s.engine.status(0).unwrap();
            assert_eq!(st.state, QueueState::Idle, "{:?}", st.fault);
            assert_eq!(st.packets, plan(&req).unwrap().packet_count());
            assert_eq!(st.semaphore as u64, st.packets);
            results.push(read(&s.engine, OUT, elems * 2));
        }
        assert!(results.windows(2).all(|w| w[0] == w[1]), "bits depend on execution settings");
        // The plumbing (addresses, packets, pages) against one direct numerics call; the
        // numerics themselves are checked against ml_dtypes in cce-numerics.
        let nr = match rounding {
            Rounding::Rne => cce_numerics::Rounding::Rne,
            Rounding::Stochastic { seed } => cce_numerics::Rounding::Stochastic { seed: seed as u64, stream: 0 },
        };
        let spec = ReduceSpec::add(NumType::Bf16, NumType::F32, NumType::Bf16).with_rounding(nr);
        assert_eq!(results[0], expect(&spec, &srcs, elems * 2));
    }
}

#[test]
fn fma_min_max_replication_and_u8_lanes() {
    let elems = 5000usize;
    let srcs: Vec<_> = (0..2).map(|i| bf16_data(10 + i, elems)).collect();
    // FMA 0.5 / -0.25 into two destinations.
    let req = ReduceRequest {
        dsts: vec![OUT, OUT + 0x10_0000],
        ..ReduceRequest::new(KbinOp::Fma.value(), src_addrs(2), vec![], elems as u64, BF16_VIA_FP32, 3)
    };
    let req = ReduceRequest { dsts: vec![OUT, OUT + 0x10_0000], ..req }.with_fma_scales(&[0.5, -0.25]).unwrap();
    let s = run(&plan(&req).unwrap().to_rings(None).unwrap(), &srcs, EngineConfig::default());
    let spec = ReduceSpec {
        op: Op::Fma(vec![FmaSource::scaled(0.5), FmaSource::scaled(-0.25)]),
        ..ReduceSpec::add(NumType::Bf16, NumType::F32, NumType::Bf16)
    };
    let want = expect(&spec, &srcs, elems * 2);
    assert_eq!(read(&s.engine, OUT, elems * 2), want);
    assert_eq!(read(&s.engine, OUT + 0x10_0000, elems * 2), want, "replicated");
    // MAX with a bf16 clamp of 1.5.
    let req = ReduceRequest::new(KbinOp::Max.value(), src_addrs(2), vec![OUT], elems as u64, BF16_VIA_FP32, 4)
        .with_min_max_constant(MinMaxConstant::parse("1.5", Bf16).unwrap());
    let s = run(&plan(&req).unwrap().to_rings(None).unwrap(), &srcs, EngineConfig::default());
    let spec = ReduceSpec {
        op: Op::Max { clamp: Some(Scalar::F64(1.5)) },
        ..ReduceSpec::add(NumType::Bf16, NumType::F32, NumType::Bf16)
    };
    assert_eq!(read(&s.engine, OUT, elems * 2), expect(&spec, &srcs, elems * 2));
    // One u8 source: the u16 lanes copy its bytes.
    let raw = bytes(99, 1001);
    let req = ReduceRequest::new(
        KbinOp::Add.value(),
        src_addrs(1),
        vec![OUT],
        1001,
        ReduceDtypes { in_dt: U8, accum_dt: U8, out_dt: U8 },
        3,
    );
    let s = run(&plan(&req).unwrap().to_rings(None).unwrap(), std::slice::from_ref(&raw), EngineConfig::default());
    assert_eq!(read(&s.engine, OUT, 1001), raw);
    let _ = AccumType::Fp32r;
}

#[test]
fn copies_move_bytes() {
    let raw = bytes(5, 200_000);
    let prog = cce_host::plan_copy(&cce_host::CopyRequest {
        src: src_addrs(1)[0],
        dst: OUT,
        bytes: raw.len() as u64,
        arch: 2,
    })
    .unwrap();
    let s = run(&prog.to_rings(None).unwrap(), std::slice::from_ref(&raw), EngineConfig::default());
    assert_eq!(read(&s.engine, OUT, raw.len()), raw);
    assert_eq!(s.engine.status(0).unwrap().packets, 4);
}

#[test]
fn a_program_longer_than_its_ring_wraps() {
    let elems = 100 * 2048usize;
    let srcs: Vec<_> = (0..2).map(|i| bf16_data(20 + i, elems)).collect();
    let req = ReduceRequest::new(KbinOp::Add.value(), src_addrs(2), vec![OUT], elems as u64, BF16_VIA_FP32, 3);
    let rings = plan(&req).unwrap().to_rings(Some(32)).unwrap();
    let s = run(&rings, &srcs, EngineConfig::default());
    let st = s.engine.status(0).unwrap();
    assert_eq!((st.state, st.packets, st.tx_done), (QueueState::Idle, 100, 200));
    let spec = ReduceSpec::add(NumType::Bf16, NumType::F32, NumType::Bf16);
    assert_eq!(read(&s.engine, OUT, elems * 2), expect(&spec, &srcs, elems * 2));
}

#[test]
fn queues_are_served_round_robin() {
    let elems = 4 * 2048usize;
    let srcs: Vec<_> = (0..2).map(|i| bf16_data(30 + i, elems)).collect();
    let a = plan(&ReduceRequest::new(KbinOp::Add.value(), src_addrs(2), vec![OUT], elems as u64, BF16_VIA_FP32, 3))
        .unwrap()
        .to_rings(None)
        .unwrap();
    let b = plan(&ReduceRequest::new(
        KbinOp::Max.value(),
        src_addrs(2),
        vec![OUT + 0x10_0000],
        elems as u64,
        ReduceDtypes { in_dt: Bf16, accum_dt: Fp32, out_dt: Fp32 },
        3,
    ))
    .unwrap()
    .to_rings(None)
    .unwrap();
    let mut m = mem();
    for (i, s) in srcs.iter().enumerate() {
        m.write(src_addrs(2)[i], s).unwrap();
    }
    let mut e = Engine::new(m, EngineConfig::default());
    let report =
        run_programs(&mut e, &[a.queue(3), b.queue(9)], &mut |m: &mut PagedMemory, x, l| m.add_region(x, l)).unwrap();
    assert_eq!(report.packets, 8);
    for q in [3, 9] {
        let st = e.status(q).unwrap();
        assert_eq!((st.state, st.packets, st.semaphore), (QueueState::Idle, 4, 4));
    }
}
