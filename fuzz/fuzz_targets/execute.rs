//! Execute any bytes as a queue's rings over a small memory: the engine never panics, every
//! step consumes descriptors or stops the queue, and the walk is bounded.
#![no_main]

use cce_engine::{Engine, EngineConfig, Memory, PagedMemory, QueueConfig, RunReport};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() < 16 {
        return;
    }
    let mut m = PagedMemory::new(1 << 24);
    // Data at 0..64 KiB (seeded from the input), rings at 1 MiB.
    let _ = m.add_region(0, 1 << 16);
    let _ = m.write(0, &data[..data.len().min(1 << 16)]);
    let ring = 32u32;
    let (tx, rx) = (1u64 << 20, (1u64 << 20) + 16 * ring as u64);
    let _ = m.add_region(tx, 32 * ring as u64);
    let n = (data.len() / 16).min(2 * ring as usize);
    let (ntx, nrx) = (n.min(ring as usize), n.saturating_sub(ring as usize));
    let _ = m.write(tx, &data[..16 * n]);
    let mut e = Engine::new(m, EngineConfig::default());
    if e.add_queue(0, QueueConfig { tx_ring: tx, rx_ring: rx, ring_size: ring, initial_phase: data[0] & 3 }).is_err() {
        return;
    }
    let _ = e.doorbell(0, ntx as u64, nrx as u64);
    let mut report = RunReport::default();
    let mut steps = 0;
    while e.step(&mut report) {
        steps += 1;
        assert!(steps <= 2 * n + 2, "the drain is bounded by the descriptors");
    }
    let _ = e.close(0);
});
