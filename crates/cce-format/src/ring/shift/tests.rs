//! The Shift's unit tests: apply and recognise, both ways.

use alloc::vec;
use alloc::vec::Vec;

use super::*;
use crate::descriptor::{bytes_to_words, data_buf_ptr, words_to_bytes};
use crate::ring::RingGeometry;

/// Per copy: past a 32-bit boundary, so address carries cross W2 into W3.
const STRIDE: u64 = 0x1_0000_0040;
/// Per copy of the header: wraps W3 within four copies.
const STEP: u32 = 0x4000_0010;
/// The header descriptor's index in [`TEMPLATE`].
const HEADER: usize = 3;
/// Data, compute, data, gradient-like compute, data; every word differs. The data
/// descriptors carry ring ids 3, 0 and 2 (which the copies must replace); the compute ones
/// carry meta indices whose bits overlap the ring id's (which must stay); the last address
/// wraps past 2^64 from copy 1.
const TEMPLATE: [[u32; 4]; 5] = [
    [0x0300_0040, 0x0000_0011, 0xFFFF_FF00, 0x0000_0007],
    [0x2A80_0005, 0x1234_5678, 0x9ABC_DEF0, 0x0F0F_0F0F],
    [0x0400_0200, 0x0000_0022, 0x0000_1000, 0x0000_0000],
    [0x0180_0009, 0x0000_0400, 0x0000_0100, 0x8000_0000],
    [0x0600_0300, 0x0000_0033, 0xDEAD_0000, 0xFFFF_FFFF],
];

fn is_data(i: usize) -> bool {
    TEMPLATE[i][0] & META_BIT == 0
}

/// Copy `k` written as if `head` descriptors and `k` copies came before it.
fn copy(shift: &Shift, geo: RingGeometry, head: u64, k: u64) -> Vec<[u8; DESC_BYTES]> {
    let mut out = vec![0u8; shift.bytes()];
    let at = head + k * shift.len() as u64;
    assert_eq!(shift.apply(k, &mut geo.slots_from(at), &mut out), shift.bytes());
    out.chunks_exact(DESC_BYTES).map(|c| c.try_into().unwrap()).collect()
}

fn without_phase(mut w: [u32; 4]) -> [u32; 4] {
    w[0] &= !layout::LC_RING_ID.span.mask();
    w
}

#[test]
fn the_template_is_data_and_compute() {
    assert_eq!((0..TEMPLATE.len()).filter(|&i| is_data(i)).count(), 3);
    assert!(!is_data(HEADER));
    for (i, w) in TEMPLATE.iter().enumerate() {
        assert!(TEMPLATE[i + 1..].iter().all(|v| v.iter().zip(w).all(|(a, b)| a != b)), "descriptor {i}");
    }
}

#[test]
fn apply_then_recognise_round_trips_across_wraps() {
    let shift = Shift::new(&TEMPLATE, STRIDE);
    let mut phases_seen = [false; 4];
    for ring_size in [3, 4, 7, 11, 32] {
        for initial_phase in 0..4 {
            let geo = RingGeometry { ring_size, initial_phase };
            for head in [0, 2] {
                for k in [0, 1, 2, 3, 9, 100] {
                    let at = head + k * TEMPLATE.len() as u64;
                    for (i, got) in copy(&shift, geo, head, k).iter().enumerate() {
                        let phase = geo.phase(at + i as u64);
                        let words = bytes_to_words(got).unwrap();
                        let t = TEMPLATE[i];
                        let case = (ring_size, initial_phase, head, k, i);
                        // Independently of `Shift`: what copy k must be.
                        if is_data(i) {
                            phases_seen[phase as usize] = true;
                            assert_eq!(layout::LC_RING_ID.get(&words), u32::from(phase), "{case:?}");
                            assert_eq!(
                                data_buf_ptr(words),
                                data_buf_ptr(t).wrapping_add(k.wrapping_mul(STRIDE)),
                                "{case:?}"
                            );
                            assert_eq!(without_phase(words)[..2], without_phase(t)[..2], "{case:?}");
                        } else {
                            assert_eq!(words, t, "{case:?}");
                        }
                        assert!(shift.matches(i, k, phase, got), "{case:?}");
                        if is_data(i) {
                            assert!(!shift.matches(i, k + 1, phase, got), "{case:?}");
                            assert!(!shift.matches(i, k, (phase + 1) & 3, got), "{case:?}");
                        }
                    }
                }
            }
        }
    }
    assert_eq!(phases_seen, [true; 4]);
}

#[test]
fn a_wrap_inside_a_copy_changes_the_phase_there() {
    // Ring of 3: copy 1 holds program indices 5..10, slots 2, 0, 1, 2, 0 on laps 1, 2, 2, 2, 3.
    let geo = RingGeometry { ring_size: 3, initial_phase: 1 };
    let got = copy(&Shift::new(&TEMPLATE, STRIDE), geo, 0, 1);
    let phase = |i: usize| layout::LC_RING_ID.get(&bytes_to_words(&got[i]).unwrap());
    assert_eq!([phase(0), phase(2), phase(4)], [2, 3, 0]);
}

#[test]
fn every_changed_bit_is_refused() {
    let geo = RingGeometry { ring_size: 7, initial_phase: 1 };
    let mut shift = Shift::new(&TEMPLATE, STRIDE).with_header(HEADER, STEP);
    for k in [0, 3] {
        let at = k * TEMPLATE.len() as u64;
        for (i, got) in copy(&shift, geo, 0, k).iter().enumerate() {
            let phase = geo.phase(at + i as u64);
            assert!(shift.matches(i, k, phase, got));
            for byte in 0..DESC_BYTES {
                for bit in 0..u8::BITS {
                    let mut bad = *got;
                    bad[byte] ^= 1 << bit;
                    assert!(!shift.matches(i, k, phase, &bad), "k {k} descriptor {i} byte {byte} bit {bit}");
                    assert!(!shift.recognise(i, k, phase, &bad), "k {k} descriptor {i} byte {byte} bit {bit}");
                }
            }
        }
    }
    // Past the template nothing matches.
    assert!(!shift.matches(TEMPLATE.len(), 0, 0, &[0; DESC_BYTES]));
}

#[test]
fn compute_descriptors_stay_as_they_are() {
    let shift = Shift::new(&TEMPLATE, STRIDE);
    for initial_phase in 0..4 {
        let geo = RingGeometry { ring_size: 4, initial_phase };
        for k in 0..6 {
            let got = copy(&shift, geo, 1, k);
            for i in (0..TEMPLATE.len()).filter(|&i| !is_data(i)) {
                assert_eq!(got[i], words_to_bytes(TEMPLATE[i]), "phase {initial_phase} k {k} descriptor {i}");
            }
        }
    }
}

#[test]
fn the_template_ring_ids_do_not_matter() {
    let mut other = TEMPLATE;
    for w in other.iter_mut().filter(|w| w[0] & META_BIT == 0) {
        w[0] ^= layout::LC_RING_ID.span.mask();
    }
    assert_eq!(Shift::new(&other, STRIDE), Shift::new(&TEMPLATE, STRIDE));
    assert_ne!(Shift::new(&other, STRIDE), Shift::new(&TEMPLATE, STRIDE + 1));
}

#[test]
fn a_header_step_is_applied_and_recognised() {
    let geo = RingGeometry { ring_size: 4, initial_phase: 1 };
    let shift = Shift::new(&TEMPLATE, STRIDE).with_header(HEADER, STEP);
    assert_eq!(shift.header_step(), Some(STEP));
    for k in 0..6u64 {
        let at = k * TEMPLATE.len() as u64;
        let got = copy(&shift, geo, 0, k);
        let words = bytes_to_words(&got[HEADER]).unwrap();
        let mut want = TEMPLATE[HEADER];
        want[3] = want[3].wrapping_add((k as u32).wrapping_mul(STEP));
        assert_eq!(words, want, "k {k}");
        for (i, g) in got.iter().enumerate() {
            assert!(shift.matches(i, k, geo.phase(at + i as u64), g), "k {k} descriptor {i}");
        }
        // Without a header the moved header is refused from copy 1 on.
        assert_eq!(Shift::new(&TEMPLATE, STRIDE).matches(HEADER, k, 0, &got[HEADER]), k == 0);
    }
    // A wrong step is refused.
    let wrong = Shift::new(&TEMPLATE, STRIDE).with_header(HEADER, STEP + 1);
    let got = copy(&shift, geo, 0, 1);
    assert!(!wrong.matches(HEADER, 1, 0, &got[HEADER]));
    assert!(wrong.matches(HEADER, 0, 0, &copy(&shift, geo, 0, 0)[HEADER]));
}

#[test]
fn a_header_step_is_learnt_from_copy_one() {
    let geo = RingGeometry { ring_size: 7, initial_phase: 2 };
    let written = Shift::new(&TEMPLATE, STRIDE).with_header(HEADER, STEP);
    let mut learner = Shift::new(&TEMPLATE, STRIDE).learning_header(Some(HEADER));
    assert_eq!(learner.header_step(), None);
    // Unknown, the step matches copy 0 only.
    let copy0 = copy(&written, geo, 0, 0);
    let copy1 = copy(&written, geo, 0, 1);
    let phase = |k: u64, i: usize| geo.phase(k * TEMPLATE.len() as u64 + i as u64);
    assert!(learner.matches(HEADER, 0, phase(0, HEADER), &copy0[HEADER]));
    assert!(!learner.matches(HEADER, 1, phase(1, HEADER), &copy1[HEADER]));
    // Not learnt from copy 2.
    let copy2 = copy(&written, geo, 0, 2);
    assert!(!learner.recognise(HEADER, 2, phase(2, HEADER), &copy2[HEADER]));
    assert_eq!(learner.header_step(), None);
    // Not even a header that stays put: unknown is not a step of 0.
    let still = copy(&Shift::new(&TEMPLATE, STRIDE).with_header(HEADER, 0), geo, 0, 2);
    assert_eq!(still[HEADER], copy0[HEADER]);
    assert!(!learner.matches(HEADER, 2, phase(2, HEADER), &still[HEADER]));
    assert!(!learner.recognise(HEADER, 2, phase(2, HEADER), &still[HEADER]));
    assert_eq!(learner.header_step(), None);
    for k in 1..5 {
        for (i, g) in copy(&written, geo, 0, k).iter().enumerate() {
            assert!(learner.recognise(i, k, phase(k, i), g), "k {k} descriptor {i}");
        }
    }
    assert_eq!(learner.header_step(), Some(STEP));
    assert_eq!(learner, written);
    // A copy 2 whose header moved by another step is refused.
    let other = Shift::new(&TEMPLATE, STRIDE).with_header(HEADER, STEP.wrapping_mul(3));
    let copy2 = copy(&other, geo, 0, 2);
    assert!(!learner.recognise(HEADER, 2, phase(2, HEADER), &copy2[HEADER]));
    assert!(learner.recognise(0, 2, phase(2, 0), &copy2[0]));
    // Without a header index, or with a data descriptor's, there is no header.
    assert_eq!(Shift::new(&TEMPLATE, STRIDE).learning_header(None), Shift::new(&TEMPLATE, STRIDE));
    assert_eq!(Shift::new(&TEMPLATE, STRIDE).with_header(0, STEP), Shift::new(&TEMPLATE, STRIDE));
    assert_eq!(Shift::new(&TEMPLATE, STRIDE).with_header(TEMPLATE.len(), STEP).header_step(), None);
}

/// A ring of `geo.ring_size` slots holding copy `k` at its slots (program index
/// `head + k · len` on), the other slots zero.
fn ring_with(shift: &Shift, geo: RingGeometry, head: u64, k: u64) -> Vec<u8> {
    let mut ring = vec![0u8; geo.bytes() as usize];
    let at = head + k * shift.len() as u64;
    for (d, (slot, _)) in copy(shift, geo, head, k).iter().zip(geo.slots_from(at)) {
        let o = crate::ring::slot_offset(slot) as usize;
        ring[o..o + DESC_BYTES].copy_from_slice(d);
    }
    ring
}

fn reader(ring: &[u8]) -> impl FnMut(u64) -> Option<[u8; DESC_BYTES]> + '_ {
    |slot| {
        let o = crate::ring::slot_offset(slot) as usize;
        ring.get(o..o + DESC_BYTES)?.try_into().ok()
    }
}

#[test]
fn a_whole_copy_is_recognised_in_its_slots() {
    let written = Shift::new(&TEMPLATE, STRIDE).with_header(HEADER, STEP);
    let mut unreadable_seen = false;
    // Rings of one packet, and of more, whose copies wrap.
    for ring_size in [5, 7, 16] {
        let geo = RingGeometry { ring_size, initial_phase: 3 };
        for (head, k) in [(0, 1), (1, 2), (4, 5), (2, 11)] {
            let at = head + k * TEMPLATE.len() as u64;
            let ring = ring_with(&written, geo, head, k);
            let case = (ring_size, head, k);
            let mut shift = written.clone();
            assert!(shift.recognise_copy(k, &mut geo.slots_from(at), reader(&ring)), "{case:?}");
            assert!(!shift.recognise_copy(k + 1, &mut geo.slots_from(at), reader(&ring)), "{case:?}");
            // One slot further on, the phases (and slots) are not the copy's.
            assert!(!shift.recognise_copy(k, &mut geo.slots_from(at + 1), reader(&ring)), "{case:?}");
            // A slot that cannot be read, or one changed byte, refuses the copy.
            let mut short = ring.clone();
            short.truncate(short.len() - DESC_BYTES);
            let uses_last = geo.slots_from(at).take(TEMPLATE.len()).any(|(slot, _)| slot + 1 == u64::from(ring_size));
            unreadable_seen |= uses_last;
            assert_eq!(shift.recognise_copy(k, &mut geo.slots_from(at), reader(&short)), !uses_last, "{case:?}");
            for (i, (slot, _)) in geo.slots_from(at).take(TEMPLATE.len()).enumerate() {
                let mut bad = ring.clone();
                bad[crate::ring::slot_offset(slot) as usize + i % DESC_BYTES] ^= 0x10;
                assert!(!shift.recognise_copy(k, &mut geo.slots_from(at), reader(&bad)), "{case:?} descriptor {i}");
            }
            // A learner learns the step from copy 1 only.
            let mut learner = Shift::new(&TEMPLATE, STRIDE).learning_header(Some(HEADER));
            if k != 1 {
                assert!(!learner.recognise_copy(k, &mut geo.slots_from(at), reader(&ring)), "{case:?}");
                // Unknown is not a step of 0.
                let still = Shift::new(&TEMPLATE, STRIDE).with_header(HEADER, 0);
                let ring0 = ring_with(&still, geo, head, k);
                assert!(still.clone().recognise_copy(k, &mut geo.slots_from(at), reader(&ring0)), "{case:?}");
                assert!(!learner.recognise_copy(k, &mut geo.slots_from(at), reader(&ring0)), "{case:?}");
                assert_eq!(learner.header_step(), None);
                let at1 = head + TEMPLATE.len() as u64;
                let ring1 = ring_with(&written, geo, head, 1);
                assert!(learner.recognise_copy(1, &mut geo.slots_from(at1), reader(&ring1)), "{case:?}");
            }
            assert!(learner.recognise_copy(k, &mut geo.slots_from(at), reader(&ring)), "{case:?}");
            assert_eq!(learner.header_step(), Some(STEP));
        }
    }
    assert!(unreadable_seen);
}

#[test]
fn apply_writes_what_fits() {
    let shift = Shift::new(&TEMPLATE, STRIDE);
    let geo = RingGeometry { ring_size: 4, initial_phase: 0 };
    let mut slots = geo.slots_from(0);
    let mut out = [0u8; 2 * DESC_BYTES + 3];
    assert_eq!(shift.apply(0, &mut slots, &mut out), 2 * DESC_BYTES);
    assert_eq!(out[2 * DESC_BYTES..], [0; 3]);
    // Two slots taken.
    assert_eq!(slots.next(), Some((2, 0)));
}
