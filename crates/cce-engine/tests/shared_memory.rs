//! `SharedMemory`'s mapping rules: overlap and budget refused before anything is made, a
//! released buffer reused (zeroed by `add_region`, as it was by `add_scratch_region`), kept
//! buffers never standing between a mapping and its budget, and lengths read while another
//! thread holds a region's write lock; a borrowed region read in place and never written.

use cce_engine::Memory;
use cce_engine::memory::{MemError, SPARE_MAX, SharedMemory};

#[test]
fn overlap_and_budget_are_refused() {
    let m = SharedMemory::new(1000);
    m.add_region(0x100, 100).unwrap();
    assert!(matches!(m.add_region(0x150, 10), Err(MemError::Overlap { other_base: 0x100, other_len: 100, .. })));
    assert!(matches!(m.add_region(0x80, 0x81), Err(MemError::Overlap { .. })));
    assert!(matches!(m.add_region(0x1000, 901), Err(MemError::Budget { want: 1001, budget: 1000 })));
    assert!(matches!(m.add_region(0x1000, 0), Err(MemError::Region { .. })));
    assert_eq!(m.used(), 100, "a refused mapping reserves nothing");
    m.add_region(0x1000, 900).unwrap();
    assert_eq!((m.used(), m.peak()), (1000, 1000));
}

#[test]
fn released_buffers_are_reused_and_zeroed_by_add_region() {
    let m = SharedMemory::new(1 << 20);
    let mut w = m.clone();
    m.add_scratch_region(0x1000, 64).unwrap();
    w.write(0x1000, &[7u8; 64]).unwrap();
    assert!(m.release_region(0x1000));
    assert!(!m.release_region(0x1000), "nothing left to release");
    assert_eq!(m.used(), 0);
    // The scratch mapping takes the kept buffer as it is ...
    m.add_scratch_region(0x2000, 64).unwrap();
    let mut b = [0u8; 64];
    m.read(0x2000, &mut b).unwrap();
    assert_eq!(b, [7u8; 64]);
    assert!(m.release_region(0x2000));
    // ... add_region zeroes it.
    m.add_region(0x3000, 64).unwrap();
    m.read(0x3000, &mut b).unwrap();
    assert_eq!(b, [0u8; 64]);
    // Another length gets a fresh, zeroed buffer.
    m.add_scratch_region(0x4000, 32).unwrap();
    let mut c = [1u8; 32];
    m.read(0x4000, &mut c).unwrap();
    assert_eq!(c, [0u8; 32]);
}

#[test]
fn kept_buffers_give_way_to_the_budget() {
    let m = SharedMemory::new(1000);
    assert!(m.keep_spare(600));
    assert!(!m.keep_spare(500), "a spare over the budget is not made");
    // 600 kept + 700 wanted > 1000: the kept buffer is dropped, the mapping fits.
    m.add_region(0x100, 700).unwrap();
    assert_eq!(m.used(), 700);
    assert!(m.release_region(0x100));
    // Kept now: the 700 bytes; another mapping of 900 still fits (the spare gives way).
    m.add_region(0x1000, 900).unwrap();
    assert!(matches!(m.add_region(0x2000, 101), Err(MemError::Budget { .. })));
    assert!(!m.keep_spare(0) && !m.keep_spare(SPARE_MAX + 1));
    // The peak counts kept bytes too: 700 kept + 900 mapped never coexisted (the spare gave
    // way), 600 kept + 0 mapped and 700 mapped did.
    assert_eq!(m.peak(), 900);
}

#[test]
fn lookups_do_not_wait_for_a_writer_of_the_region() {
    let m = SharedMemory::new(1 << 20);
    m.add_region(0x1000, 1 << 16).unwrap();
    m.add_region(0x100000, 64).unwrap();
    let (locked_tx, locked_rx) = std::sync::mpsc::channel();
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let mut writer = m.clone();
    std::thread::scope(|s| {
        // A view of the first region holds its write lock until the lookups below are done
        // (or 10 s have passed: then they waited for it, and the test fails).
        let held = s.spawn(move || {
            let mut in_time = false;
            writer
                .with_views(&[(0x100000, 64)], (0x1000, 1 << 16), &mut |_, out| {
                    locked_tx.send(()).unwrap();
                    in_time = done_rx.recv_timeout(std::time::Duration::from_secs(10)).is_ok();
                    out[0] = 1;
                })
                .unwrap();
            in_time
        });
        locked_rx.recv().unwrap();
        assert_eq!(m.remaining(0x1000), 1 << 16);
        m.add_region(0x20000, 64).unwrap();
        let _ = done_tx.send(());
        assert!(held.join().unwrap(), "the lookups waited for the writer's lock");
    });
}

#[test]
fn a_region_is_found_by_its_start_and_taken_whole() {
    let m = SharedMemory::new(1 << 20);
    m.add_region_from(0x1000, (0..=255u8).collect()).unwrap();
    assert_eq!(m.region_len(0x1000), Some(256));
    // Only where a region starts: not inside one, not where none is.
    assert_eq!((m.region_len(0x1001), m.region_len(0x9000)), (None, None));
    assert_eq!(m.take_region(0x1000).unwrap(), (0..=255u8).collect::<Vec<_>>());
    assert_eq!((m.region_len(0x1000), m.used()), (None, 0));
}

#[test]
fn long_regions_touched_by_several_threads_are_whole_and_zero() {
    // Above the length at which every host thread touches its own stretch; not a multiple of
    // the page or of the stretch.
    let len = (8 << 20) + 3 * 4096 + 77;
    let m = SharedMemory::new(1 << 30);
    m.add_region(0x10_0000, len).unwrap();
    assert_eq!(m.region_len(0x10_0000), Some(len));
    let mut back = vec![1u8; len as usize];
    m.read(0x10_0000, &mut back).unwrap();
    assert!(back.iter().all(|&b| b == 0));
    let mut w = m.clone();
    w.write(0x10_0000 + len - 1, &[9]).unwrap();
    assert!(m.read(0x10_0000 + len, &mut [0]).is_err(), "the region ends at its length");
}

#[test]
fn a_borrowed_region_is_read_in_place_and_never_written() {
    let caller: Vec<u8> = (0..64u8).collect();
    let m = SharedMemory::new(1000);
    let mut w = m.clone();
    m.add_borrowed(0x1000, &caller).unwrap();
    assert_eq!(m.used(), 64, "counted as a copy would be");
    assert!(matches!(m.add_region(0x1020, 8), Err(MemError::Overlap { other_base: 0x1000, .. })));
    let mut b = [0u8; 8];
    m.read(0x1008, &mut b).unwrap();
    assert_eq!(b, [8, 9, 10, 11, 12, 13, 14, 15]);
    assert_eq!(w.write(0x1008, &[0xFF; 4]), Err(MemError::ReadOnly { base: 0x1000 }));
    // A kernel's view reads it as a source, and refuses it as a destination.
    m.add_region(0x2000, 16).unwrap();
    let mut seen = Vec::new();
    let mut sum = |srcs: &[&[u8]], dst: &mut [u8]| {
        seen = srcs[0].to_vec();
        dst.copy_from_slice(srcs[0]);
    };
    assert!(w.with_views(&[(0x1010, 16)], (0x2000, 16), &mut sum).unwrap());
    assert_eq!(seen, (16..32u8).collect::<Vec<_>>());
    let mut out = [0u8; 16];
    m.read(0x2000, &mut out).unwrap();
    assert_eq!(out.to_vec(), seen);
    assert_eq!(w.with_views(&[(0x2000, 16)], (0x1000, 16), &mut |_, _| ()), Err(MemError::ReadOnly { base: 0x1000 }));
    assert_eq!(caller, (0..64u8).collect::<Vec<_>>(), "the caller's bytes are unchanged");
    // Taken, it is copied out; released, it is unmapped and never kept for reuse.
    assert_eq!(m.take_region(0x1000), Some(caller.clone()));
    m.add_borrowed(0x1000, &caller).unwrap();
    assert!(m.release_region(0x1000));
    assert_eq!(m.used(), 16);
    m.add_scratch_region(0x3000, 64).unwrap();
    let mut fresh = [1u8; 64];
    m.read(0x3000, &mut fresh).unwrap();
    assert_eq!(fresh, [0u8; 64], "a fresh buffer, not the caller's");
}
