//! Feeding a program (descriptors in program order, e.g. from a ring dump) into a queue's
//! ring memory lap by lap, as a host driver would: write what fits, ring the doorbell, let the
//! engine drain, repeat.

use cce_format::ring;
use cce_format::ringfile::QueueRings;

use crate::engine::{Engine, EngineError, QueueConfig, QueueState, RunReport};
use crate::memory::{MemError, Memory};

/// Where [`run_programs`] puts queue `q`'s rings: two rings of `ring_size` descriptors at
/// `base + q · 2 · ring bytes` (MODEL).
pub fn ring_addresses(base: u64, queue: u32, ring_size: u32) -> (u64, u64) {
    let bytes = ring::ring_bytes(ring_size as u64);
    let tx = base + queue as u64 * 2 * bytes;
    (tx, tx + bytes)
}

/// The address [`run_programs`] places rings at by default (MODEL): high in the address space,
/// away from data.
pub const RING_BASE: u64 = 0xFFFF_0000_0000_0000;

/// Adds each queue (rings at `RING_BASE` unless they were added already), feeds its
/// descriptors lap by lap, runs the engine until every queue is drained or faulted, then closes
/// the queues and runs what that settles. `add_ring` maps the rings' memory (e.g. `PagedMemory::add_region`).
pub fn run_programs<M: Memory>(
    engine: &mut Engine<M>,
    queues: &[QueueRings<'_>],
    add_ring: &mut dyn FnMut(&mut M, u64, u64) -> Result<(), MemError>,
) -> Result<RunReport, EngineError> {
    for q in queues {
        let (tx, rx) = ring_addresses(RING_BASE, q.queue, q.ring_size);
        let bytes = ring::ring_bytes(q.ring_size as u64);
        for ring in [tx, rx] {
            add_ring(engine.memory_mut(), ring, bytes)
                .map_err(|error| EngineError::RingMemory { queue: q.queue, error })?;
        }
        engine.add_queue(
            q.queue,
            QueueConfig { tx_ring: tx, rx_ring: rx, ring_size: q.ring_size, initial_phase: q.initial_phase },
        )?;
    }
    let mut total = RunReport::default();
    let all: Vec<_> = queues
        .iter()
        .map(|q| {
            let (tx, rx) = ring_addresses(RING_BASE, q.queue, q.ring_size);
            Feed {
                queue: q.queue,
                tx_ring: tx,
                rx_ring: rx,
                ring_size: q.ring_size,
                tx: q.tx,
                rx: q.rx,
                fed: (0, 0),
                end: (ring::descriptors_in(q.tx.len()) as u64, ring::descriptors_in(q.rx.len()) as u64),
            }
        })
        .collect();
    let mut all = all;
    feed_all(engine, &mut all, &mut total)?;
    // Everything is fed: a CCE packet at the very end no longer waits for a combo's
    // replication descriptors, and one still cut off faults.
    for q in queues {
        engine.close(q.queue)?;
    }
    add(&mut total, &engine.run());
    Ok(total)
}

/// One queue's program slice being fed: descriptors `fed..end` (program indices) of `tx` / `rx`
/// go into the rings as space frees.
pub struct Feed<'a> {
    /// Queue id.
    pub queue: u32,
    /// Tx ring address.
    pub tx_ring: u64,
    /// Rx ring address.
    pub rx_ring: u64,
    /// Descriptors per ring.
    pub ring_size: u32,
    /// The queue's whole tx program (16 bytes per descriptor).
    pub tx: &'a [u8],
    /// The queue's whole rx program.
    pub rx: &'a [u8],
    /// Program indices (tx, rx) written so far.
    pub fed: (u64, u64),
    /// Program indices (tx, rx) to feed up to.
    pub end: (u64, u64),
}

fn add(total: &mut RunReport, r: &RunReport) {
    total.packets += r.packets;
    total.descriptors += r.descriptors;
    total.bytes_read += r.bytes_read;
    total.bytes_written += r.bytes_written;
    total.decode_seconds += r.decode_seconds;
    total.execute_seconds += r.execute_seconds;
}

/// Writes each feed's descriptors into its rings as space frees, rings the doorbells and runs
/// the engine, until every feed is written and drained (or its queue faulted or stalled with a
/// full ring). Descriptor `k` goes to slot `k % ring_size`, so feeding a program in slices keeps
/// the ring-id phases the host wrote.
pub fn feed_all<M: Memory>(
    engine: &mut Engine<M>,
    feeds: &mut [Feed<'_>],
    total: &mut RunReport,
) -> Result<(), EngineError> {
    loop {
        let mut wrote = false;
        for f in feeds.iter_mut() {
            let st = engine.status(f.queue).ok_or(EngineError::Queue(f.queue))?;
            if st.state == QueueState::Faulted {
                continue;
            }
            let size = f.ring_size as u64;
            let mut counts = [0u64; 2];
            for (i, (ring, bytes, done, fed, end)) in [
                (f.tx_ring, f.tx, st.tx_done, &mut f.fed.0, f.end.0),
                (f.rx_ring, f.rx, st.rx_done, &mut f.fed.1, f.end.1),
            ]
            .into_iter()
            .enumerate()
            {
                let free = size.saturating_sub(fed.saturating_sub(done));
                let have = ring::descriptors_in(bytes.len()) as u64;
                let n = free.min(end.min(have).saturating_sub(*fed));
                // One write per stretch of slots that does not wrap.
                let mut k = *fed;
                while k < *fed + n {
                    let run = (*fed + n - k).min(size - k % size);
                    let d = &bytes[ring::ring_bytes(k) as usize..ring::ring_bytes(k + run) as usize];
                    engine
                        .memory_mut()
                        .write(ring + ring::slot_offset(k % size), d)
                        .map_err(|error| EngineError::RingMemory { queue: f.queue, error })?;
                    k += run;
                }
                *fed += n;
                counts[i] = n;
            }
            if counts != [0, 0] {
                // Only the program's own end is known to be a packet boundary.
                if f.fed == f.end {
                    engine.doorbell(f.queue, counts[0], counts[1])?;
                } else {
                    engine.doorbell_partial(f.queue, counts[0], counts[1])?;
                }
                wrote = true;
            }
        }
        let r = engine.run();
        add(total, &r);
        if !wrote && r.packets == 0 {
            return Ok(());
        }
    }
}
