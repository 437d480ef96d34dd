//! The engine over host-built rings: every op and path, batching and threads that never change
//! the bits, a test per fault kind (destination memory unchanged), round robin, ring wrap.

use SdmaDtype::*;
use cce_engine::feed::run_programs;
use cce_engine::{Engine, EngineConfig, FaultReason, Memory, PagedMemory, QueueState};
use cce_format::packet::{self, Packet, PacketError};
use cce_format::{KbinOp, SdmaDtype};
use cce_host::{MinMaxConstant, ReduceRequest, Rings, Rounding, plan};
use cce_numerics::{AccumType, FmaSource, NumType, Op, ReduceSpec, Scalar};

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
            ..ReduceRequest::new(KbinOp::Add.value(), src_addrs(3), vec![OUT], elems as u64, Bf16, Fp32, Bf16, 3)
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
        ..ReduceRequest::new(KbinOp::Fma.value(), src_addrs(2), vec![], elems as u64, Bf16, Fp32, Bf16, 3)
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
    let req = ReduceRequest::new(KbinOp::Max.value(), src_addrs(2), vec![OUT], elems as u64, Bf16, Fp32, Bf16, 4)
        .with_min_max_constant(MinMaxConstant::parse("1.5", Bf16).unwrap());
    let s = run(&plan(&req).unwrap().to_rings(None).unwrap(), &srcs, EngineConfig::default());
    let spec = ReduceSpec {
        op: Op::Max { clamp: Some(Scalar::F64(1.5)) },
        ..ReduceSpec::add(NumType::Bf16, NumType::F32, NumType::Bf16)
    };
    assert_eq!(read(&s.engine, OUT, elems * 2), expect(&spec, &srcs, elems * 2));
    // One u8 source: the u16 lanes copy its bytes.
    let raw = bytes(99, 1001);
    let req = ReduceRequest::new(KbinOp::Add.value(), src_addrs(1), vec![OUT], 1001, U8, U8, U8, 3);
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
    let req = ReduceRequest::new(KbinOp::Add.value(), src_addrs(2), vec![OUT], elems as u64, Bf16, Fp32, Bf16, 3);
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
    let a = plan(&ReduceRequest::new(KbinOp::Add.value(), src_addrs(2), vec![OUT], elems as u64, Bf16, Fp32, Bf16, 3))
        .unwrap()
        .to_rings(None)
        .unwrap();
    let b = plan(&ReduceRequest::new(
        KbinOp::Max.value(),
        src_addrs(2),
        vec![OUT + 0x10_0000],
        elems as u64,
        Bf16,
        Fp32,
        Fp32,
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

/// Builds a one-packet program from `p`, lets `corrupt` change its words, runs it after a
/// good packet, and checks: the good packet ran, the bad one faulted with `want`, and its
/// destination is unchanged.
fn fault_case(
    p: Packet,
    corrupt: impl Fn(&mut Vec<[u32; 4]>, &mut Vec<[u32; 4]>),
    want: impl Fn(&FaultReason) -> bool,
) {
    let good = Packet { dests: vec![OUT + 0x20_0000], ..add_packet(2) };
    let (mut tx, mut rx) = (Vec::new(), Vec::new());
    good.emit(&mut tx, &mut rx);
    let (mut btx, mut brx) = (Vec::new(), Vec::new());
    p.emit(&mut btx, &mut brx);
    corrupt(&mut btx, &mut brx);
    let (t0, r0) = (tx.len() as u64, rx.len() as u64);
    tx.extend(btx);
    rx.extend(brx);
    let phase = |w: &mut Vec<[u32; 4]>| {
        for (i, d) in w.iter_mut().enumerate() {
            if d[0] & packet::META_BIT == 0 && d[0] >> 24 & 3 == 0 {
                *d = packet::with_phase(*d, packet::phase(i as u64, 64, 1));
            }
        }
    };
    phase(&mut tx);
    phase(&mut rx);
    let to_bytes =
        |w: &[[u32; 4]]| w.iter().flat_map(|d| cce_format::descriptor::words_to_bytes(*d)).collect::<Vec<u8>>();
    let (txb, rxb) = (to_bytes(&tx), to_bytes(&rx));
    let q = cce_format::ringfile::QueueRings {
        queue: 2,
        ring_size: 64,
        initial_phase: 1,
        tx_doorbell: 0,
        rx_doorbell: 0,
        tx: &txb,
        rx: &rxb,
    };
    let mut m = mem();
    m.write(DATA, &bytes(1, 1 << 20)).unwrap();
    let sentinel = bytes(2, 0x1000);
    m.write(OUT, &sentinel).unwrap();
    let mut e = Engine::new(m, EngineConfig::default());
    run_programs(&mut e, &[q], &mut |m: &mut PagedMemory, a, l| m.add_region(a, l)).unwrap();
    let st = e.status(2).unwrap();
    assert_eq!(st.packets, 1, "the good packet ran: {st:?}");
    assert_eq!(st.semaphore, 1);
    assert_eq!(st.state, QueueState::Faulted);
    let f = st.fault.unwrap();
    assert_eq!((f.queue, f.tx_index, f.rx_index), (2, t0, r0), "{f}");
    assert!(want(&f.reason), "unexpected reason: {f}");
    assert!(!f.to_string().is_empty());
    assert_eq!(read(&e, OUT, 0x1000), sentinel, "a faulting packet writes nothing");
}

fn add_packet(n: usize) -> Packet {
    let mut p = packet::Packet::copy(DATA, OUT, 64);
    p.op = packet::PacketOp::Cce(cce_format::SdmaCceType::Add);
    p.in_dt = Bf16;
    p.accum_dt = Fp32;
    p.out_dt = Bf16;
    p.elems = 32;
    p.sources = (0..n as u64).map(|i| packet::Source { addr: DATA + i * 64, fma: None, meta_aux: 0 }).collect();
    p
}

#[test]
fn faults_write_nothing() {
    use PacketError as P;
    let is = |f: fn(&FaultReason) -> bool| f;
    // No last bit before the ring ends.
    fault_case(
        add_packet(2),
        |tx, _| {
            let l = tx.len() - 1;
            tx[l][0] &= !(1 << 27);
            tx[l][1] &= !(1 << 7);
        },
        is(|r| matches!(r, FaultReason::Packet(P::NoLast(_)))),
    );
    // No rx descriptor.
    fault_case(add_packet(2), |_, rx| rx.clear(), is(|r| matches!(r, FaultReason::Packet(P::NoRx(_)))));
    // More than 32 sources.
    fault_case(add_packet(33), |_, _| {}, is(|r| matches!(r, FaultReason::Packet(P::TooManySources(33)))));
    // Unknown op (sub-op 5 on a 0x2000000 word).
    fault_case(
        add_packet(2),
        |tx, _| {
            for d in tx.iter_mut() {
                d[1] |= 5;
            }
        },
        is(|r| matches!(r, FaultReason::Packet(P::UnknownOp { .. }))),
    );
    // Unknown dtype: output fp32r in the S2M word.
    fault_case(
        add_packet(2),
        |_, rx| rx[0][1] = 11 << 12,
        is(|r| matches!(r, FaultReason::Packet(P::BadDtype { .. }) | FaultReason::Packet(P::Length { .. }))),
    );
    // Lengths that disagree.
    fault_case(
        add_packet(2),
        |_, rx| rx[0][0] = (rx[0][0] & !0xFFFF) | 62,
        is(|r| matches!(r, FaultReason::Packet(P::Length { .. }))),
    );
    // Address out of bounds, and overflowing.
    fault_case(
        Packet { dests: vec![0x10], ..add_packet(2) },
        |_, _| {},
        is(|r| matches!(r, FaultReason::Memory(cce_engine::MemError::OutOfBounds { .. }))),
    );
    fault_case(
        Packet { dests: vec![u64::MAX - 8], ..add_packet(2) },
        |_, _| {},
        is(|r| matches!(r, FaultReason::Memory(cce_engine::MemError::Overflow { .. }))),
    );
    // A corrupt ring index (wrong phase).
    fault_case(add_packet(2), |tx, _| tx[0][0] ^= 3 << 24, is(|r| matches!(r, FaultReason::Packet(P::Phase { .. }))));
    // FMA selector 3.
    let mut f = add_packet(2);
    f.op = packet::PacketOp::Cce(cce_format::SdmaCceType::Fma);
    for s in &mut f.sources {
        s.fma = Some(packet::FmaOperands {
            a: cce_format::descriptor::FmaOperand::Reserved3,
            b: cce_format::descriptor::FmaOperand::Scale,
            c: cce_format::descriptor::FmaOperand::Stored,
            scale_bits: 0,
        });
    }
    fault_case(f, |_, _| {}, is(|r| matches!(r, FaultReason::Selector(3))));
}

#[test]
fn paged_memory_bounds_regions_and_budget() {
    use cce_engine::memory::PAGE;
    let mut m = PagedMemory::new(64 << 20);
    m.add_region(0x1000, 40 << 20).unwrap();
    assert!(m.add_region(0x2000, 10).is_err(), "overlap");
    assert!(m.add_region(0x1000 + (40 << 20), 30 << 20).is_err(), "budget");
    assert!(m.add_region(u64::MAX - 10, 100).is_err(), "wrap");
    assert!(m.add_region(0x9000_0000, 0).is_err(), "empty");
    // A write and read across a page boundary.
    let data = bytes(3, 2 << 20);
    let at = 0x1000 + PAGE - 12345;
    m.write(at, &data).unwrap();
    let mut back = vec![0; data.len()];
    m.read(at, &mut back).unwrap();
    assert_eq!(back, data);
    assert!(m.read(0x0FFF, &mut [0; 2]).is_err());
    assert!(m.write(0x1000 + (40 << 20) - 1, &[0, 0]).is_err());
    assert_eq!(m.contiguous(0x1000), PAGE);
    assert_eq!(m.contiguous(0x1000 + PAGE + 5), PAGE - 5);
    assert_eq!(m.remaining(0x1000 + 5), (40 << 20) - 5);
    assert_eq!(m.contiguous(0), 0);
    // Views: zero-copy only when contiguous and the destination shares no page with a source.
    let mut seen = 0;
    let ok = m
        .with_views(&[(0x1000, 16)], (0x1000 + PAGE, 16), &mut |s, d| {
            d.copy_from_slice(s[0]);
            seen += 1;
        })
        .unwrap();
    assert!(ok && seen == 1);
    let same_page = m.with_views(&[(0x1000, 16)], (0x1000 + 64, 16), &mut |_, _| seen += 1).unwrap();
    assert!(!same_page && seen == 1, "a source in the destination's page is refused");
    let straddle = m.with_views(&[(0x1000 + PAGE - 8, 16)], (0x1000 + 2 * PAGE, 16), &mut |_, _| seen += 1).unwrap();
    assert!(!straddle && seen == 1);
}
