//! The engine on its own: a fault test per kind (destination memory unchanged), paged memory.
//! Its behaviour on host-built rings is tested in cce-collectives (tests/engine_rings.rs), so
//! this crate needs no cce-host, not even for tests.

use SdmaDtype::*;
use cce_engine::feed::run_programs;
use cce_engine::{Engine, EngineConfig, FaultReason, Memory, PagedMemory, QueueState};
use cce_format::SdmaDtype;
use cce_format::packet::{self, Packet, PacketError};

const DATA: u64 = 0x1000_0000;
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

fn mem() -> PagedMemory {
    let mut m = PagedMemory::new(1 << 30);
    m.add_region(DATA, 64 << 20).unwrap();
    m
}

fn read(e: &Engine<PagedMemory>, addr: u64, n: usize) -> Vec<u8> {
    let mut b = vec![0; n];
    e.memory().read(addr, &mut b).unwrap();
    b
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
    let sentinel = bytes(2, 0x1000);
    let e = run_words(2, tx, rx, Some(&sentinel));
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

/// Runs the descriptors `tx` / `rx` (program order) as queue `queue` on rings of 64, phase 1:
/// each data descriptor without a ring id gets its slot's (a corrupted one keeps its own), over
/// `bytes(1, 1 MiB)` at `DATA` and, when given, `out` at `OUT`.
fn run_words(queue: u32, mut tx: Vec<[u32; 4]>, mut rx: Vec<[u32; 4]>, out: Option<&[u8]>) -> Engine<PagedMemory> {
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
        queue,
        ring_size: 64,
        initial_phase: 1,
        tx_doorbell: 0,
        rx_doorbell: 0,
        tx: &txb,
        rx: &rxb,
    };
    let mut m = mem();
    m.write(DATA, &bytes(1, 1 << 20)).unwrap();
    if let Some(out) = out {
        m.write(OUT, out).unwrap();
    }
    let mut e = Engine::new(m, EngineConfig::default());
    run_programs(&mut e, &[q], &mut |m: &mut PagedMemory, a, l| m.add_region(a, l)).unwrap();
    e
}

fn add_packet(n: usize) -> Packet {
    let mut p = packet::Packet::copy(DATA, OUT, 64);
    p.op = packet::PacketOp::Cce(cce_format::SdmaCceType::Add);
    p.in_dt = Bf16;
    p.accum_dt = Fp32;
    p.out_dt = Bf16;
    p.elems = 32;
    p.sources =
        (0..n as u64).map(|i| packet::Source { addr: DATA + i * 64, fma: None, meta_aux: 0, int_en: false }).collect();
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

/// The shipped fake: a copy packet on `FlatMemory` through the engine API directly (rings in
/// memory, doorbell, run), and its write log shows the engine wrote the destination and nothing
/// else; a faulting packet adds no write at all.
#[test]
fn flat_memory_fake_logs_exactly_the_writes() {
    use cce_engine::QueueConfig;
    use cce_engine::memory::FlatMemory;
    let mut m = FlatMemory::new(0, 1 << 20);
    m.bytes[0x100..0x140].copy_from_slice(&bytes(9, 64));
    let (tx_ring, rx_ring) = (0x8_0000u64, 0x9_0000u64);
    let (mut tx, mut rx) = (Vec::new(), Vec::new());
    Packet::copy(0x100, 0x4000, 64).emit(&mut tx, &mut rx);
    // A second packet whose destination is outside memory: it must fault and write nothing.
    Packet::copy(0x100, 0xF000_0000, 64).emit(&mut tx, &mut rx);
    for (ring, words) in [(tx_ring, &tx), (rx_ring, &rx)] {
        for (i, w) in words.iter().enumerate() {
            let w = packet::with_phase(*w, packet::phase(i as u64, 32, 1));
            m.bytes[(ring as usize + 16 * i)..(ring as usize + 16 * i + 16)]
                .copy_from_slice(&cce_format::descriptor::words_to_bytes(w));
        }
    }
    let mut e = Engine::new(m, EngineConfig::default());
    e.add_queue(1, QueueConfig { tx_ring, rx_ring, ring_size: 32, initial_phase: 1 }).unwrap();
    e.doorbell(1, tx.len() as u64, rx.len() as u64).unwrap();
    e.run();
    let st = e.status(1).unwrap();
    assert_eq!((st.packets, st.semaphore, st.state), (1, 1, QueueState::Faulted));
    let m = e.into_memory();
    assert_eq!(m.writes, vec![(0x4000, 64)], "only the good packet's destination was written");
    assert_eq!(m.bytes[0x4000..0x4040], m.bytes[0x100..0x140]);
}

mod any_bytes {
    //! The `execute` fuzz target as a property test (runs in CI): any bytes as a queue's rings
    //! over a small memory — no panic, and the drain is bounded by the descriptors.
    use cce_engine::{Engine, EngineConfig, Memory, PagedMemory, QueueConfig, RunReport};
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]
        #[test]
        fn executing_any_ring_is_bounded_and_never_panics(data in prop::collection::vec(any::<u8>(), 16..1024), phase in 0u8..4) {
            let mut m = PagedMemory::new(1 << 24);
            m.add_region(0, 1 << 16).unwrap();
            m.write(0, &data).unwrap();
            let ring = 32u32;
            let (tx, rx) = (1u64 << 20, (1u64 << 20) + 16 * ring as u64);
            m.add_region(tx, 32 * ring as u64).unwrap();
            let n = (data.len() / 16).min(2 * ring as usize);
            m.write(tx, &data[..16 * n]).unwrap();
            let mut e = Engine::new(m, EngineConfig::default());
            e.add_queue(0, QueueConfig { tx_ring: tx, rx_ring: rx, ring_size: ring, initial_phase: phase }).unwrap();
            e.doorbell(0, n.min(ring as usize) as u64, n.saturating_sub(ring as usize) as u64).unwrap();
            let mut report = RunReport::default();
            let mut steps = 0;
            while e.step(&mut report) {
                steps += 1;
                prop_assert!(steps <= 2 * n + 2);
            }
            e.close(0).unwrap();
        }
    }
}

/// Runs packet `p` alone over `bytes(1, 1 MiB)` at `DATA` ([`run_words`]); returns the queue's
/// status and 64 bytes at `OUT`.
fn run_alone(p: &Packet) -> (cce_engine::QueueStatus, Vec<u8>) {
    let (mut tx, mut rx) = (Vec::new(), Vec::new());
    p.emit(&mut tx, &mut rx);
    let e = run_words(0, tx, rx, None);
    (e.status(0).unwrap(), read(&e, OUT, 64))
}

/// The public driver's `udma.h` defines INT_EN (len_ctrl bit 28, interrupt on completion) for
/// M2S descriptors too: a packet whose tx data descriptors carry it runs, and writes what the
/// same packet without it writes.
#[test]
fn int_en_on_m2s_data_descriptors_runs_as_without() {
    let plain = add_packet(3);
    let mut flagged = plain.clone();
    for s in &mut flagged.sources {
        s.int_en = true;
    }
    let (mut tx, mut rx) = (Vec::new(), Vec::new());
    flagged.emit(&mut tx, &mut rx);
    let data: Vec<&[u32; 4]> = tx.iter().filter(|d| d[0] & packet::META_BIT == 0).collect();
    assert_eq!(data.len(), 3);
    assert!(data.iter().all(|d| d[0] & (1 << 28) != 0), "every M2S data descriptor carries INT_EN");
    let (a, out_a) = run_alone(&plain);
    let (b, out_b) = run_alone(&flagged);
    assert_eq!((a.packets, a.state, b.packets, b.state), (1, QueueState::Idle, 1, QueueState::Idle), "{b:?}");
    assert_eq!(out_b, out_a);
    assert_ne!(out_a, vec![0u8; 64], "the packet wrote its sum");
}
