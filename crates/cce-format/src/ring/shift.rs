//! "This packet is that packet shifted by `k`" as one rule that both writes and reads: a
//! [`Shift`] holds a packet's descriptors (one ring's share of it) as a template, each split
//! once into the bits that stay and the bits that move from copy to copy. [`Shift::apply`]
//! writes copy `k`; [`Shift::matches`] and [`Shift::recognise`] tell whether a ring slot holds
//! descriptor `i` of copy `n`, [`Shift::recognise_copy`] whether a ring holds all of copy `n`.
//! The host writes its repeated packets by it and the engine finds its runs by it; nothing
//! else works out a shifted copy.
//!
//! Copy `k` of a template descriptor, at the ring-id phase of the slot it goes to (the phases
//! come from [`RingGeometry::slots_from`](super::RingGeometry::slots_from)), is:
//! - a data descriptor ([`META_BIT`] clear): the template with its buffer address
//!   ([`descriptor::data_buf_ptr`], W2–W3) advanced by `k · stride` (mod 2^64) and its ring id
//!   ([`layout::LC_RING_ID`]) set to the slot's phase; the template's own ring id does not
//!   matter;
//! - the header descriptor, where one is named (a GCE gradient descriptor): the template with
//!   its header word ([`layout::GRAD_D_HEADER`], W3) advanced by `k · header step` (mod 2^32);
//! - any other compute descriptor: the template, unchanged (its `[31:24]` is a meta index, not
//!   a ring id).
//!
//! ## Guarantees
//! - One rule both ways: `matches(i, n, phase, s)` holds exactly when `s` is the bytes
//!   [`Shift::apply`] writes for descriptor `i` of copy `n` at that phase (mod 4).
//! - Copy 0 is the template with only its data descriptors' ring ids replaced.
//! - A header step not given is learnt from copy 1 only; until then the header matches copy 0
//!   only (an unknown step is not a step of 0).
//! - Neither direction divides, allocates or panics; [`Shift::new`] allocates the template once.
//!   An index past the template matches nothing.

use alloc::vec::Vec;

use crate::descriptor::{self, DESC_BYTES};
use crate::layout;
use crate::packet::META_BIT;

use super::Slots;

/// Bytes in each half of a descriptor: W0–W1 (where the ring id is) and W2–W3 (what moves).
const HALF: usize = DESC_BYTES / 2;
/// The ring-id bits in a descriptor's first half.
const PHASE_MASK: u64 = layout::LC_RING_ID.span.mask() as u64;
/// Words in a descriptor.
const WORDS: usize = DESC_BYTES / size_of::<u32>();

// The ring id lies in W0, the low word of the first half; the GCE header is the whole of W3,
// the high word of the second half, so a header step wraps within its own word.
const _: () = assert!(layout::LC_RING_ID.word == 0);
const _: () = assert!(layout::GRAD_D_HEADER.word as usize == WORDS - 1);
const _: () = assert!(layout::GRAD_D_HEADER.span.lo == 0 && layout::GRAD_D_HEADER.span.width as u32 == u32::BITS);

/// One template descriptor, split into what stays and what moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Part {
    /// The first half (W0–W1), its ring id cleared for a data descriptor.
    lo: u64,
    /// The second half (W2–W3) of copy 0.
    hi: u64,
    /// What each copy adds to the second half (mod 2^64): the stride for a data descriptor,
    /// the header step in W3 for the header descriptor, 0 for any other.
    step: u64,
    /// [`PHASE_MASK`] for a data descriptor (it takes its slot's phase), else 0.
    phased: u64,
}

impl Part {
    /// Its bytes in copy `k` at ring-id phase `phase`, as (first half, second half).
    #[inline]
    fn at(&self, k: u64, phase: u8) -> (u64, u64) {
        let placed = u64::from(layout::LC_RING_ID.place(u32::from(phase)));
        (self.lo | (placed & self.phased), self.hi.wrapping_add(k.wrapping_mul(self.step)))
    }
}

/// The header descriptor of a [`Shift`]: which one, and its step once known.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Header {
    index: usize,
    /// W3 of the template.
    word: u32,
    /// `None` until learnt from copy 1 ([`Shift::learning_header`]).
    step: Option<u32>,
}

/// A packet's descriptors on one ring and how each copy moves them (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shift {
    parts: Vec<Part>,
    header: Option<Header>,
}

impl Shift {
    /// The template `descriptors` (copy 0), whose data descriptors' addresses advance by
    /// `stride` bytes per copy.
    pub fn new(descriptors: &[[u32; 4]], stride: u64) -> Shift {
        let parts = descriptors
            .iter()
            .map(|w| {
                let data = w[0] & META_BIT == 0;
                let (lo, _) = halves(&descriptor::words_to_bytes(*w));
                let phased = if data { PHASE_MASK } else { 0 };
                Part { lo: lo & !phased, hi: descriptor::data_buf_ptr(*w), step: if data { stride } else { 0 }, phased }
            })
            .collect();
        Shift { parts, header: None }
    }

    /// With descriptor `index` a header descriptor whose W3 advances by `step` per copy. A
    /// header must be a compute descriptor: an index past the template or naming a data
    /// descriptor leaves the shift as it was.
    pub fn with_header(self, index: usize, step: u32) -> Shift {
        self.header_at(index, Some(step))
    }

    /// With descriptor `index` (if any) a header descriptor whose step is not known yet:
    /// [`Shift::recognise`] learns it from copy 1's header slot, as W3 there less W3 of the
    /// template. Same conditions as [`Shift::with_header`].
    pub fn learning_header(self, index: Option<usize>) -> Shift {
        match index {
            Some(i) => self.header_at(i, None),
            None => self,
        }
    }

    fn header_at(mut self, index: usize, step: Option<u32>) -> Shift {
        let Some(p) = self.parts.get_mut(index) else { return self };
        if p.phased != 0 {
            return self;
        }
        p.step = step.map_or(0, header_step);
        let word = layout::GRAD_D_HEADER.get(&halves_to_words(p.lo, p.hi));
        self.header = Some(Header { index, word, step });
        self
    }

    /// The header step: `None` without a header descriptor or before it is learnt.
    #[inline]
    pub fn header_step(&self) -> Option<u32> {
        self.header.and_then(|h| h.step)
    }

    /// Descriptors per copy.
    #[inline]
    pub fn len(&self) -> usize {
        self.parts.len()
    }

    /// Whether the template is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.parts.is_empty()
    }

    /// Ring bytes per copy.
    #[inline]
    pub fn bytes(&self) -> usize {
        super::ring_bytes(self.parts.len() as u64) as usize
    }

    /// Writes copy `k` to the front of `out`, descriptor after descriptor in program order,
    /// each at the phase of the next slot of `slots` (the cursor of its first descriptor's
    /// program index). Writes as many descriptors as fit, taking one slot each, and returns the
    /// bytes written ([`Shift::bytes`] when `out` holds the copy).
    #[inline]
    pub fn apply(&self, k: u64, slots: &mut Slots, out: &mut [u8]) -> usize {
        let mut written = 0;
        for ((p, d), (_, phase)) in self.parts.iter().zip(out.chunks_exact_mut(DESC_BYTES)).zip(slots) {
            let (lo, hi) = p.at(k, phase);
            let (d_lo, d_hi) = d.split_at_mut(HALF);
            d_lo.copy_from_slice(&lo.to_le_bytes());
            d_hi.copy_from_slice(&hi.to_le_bytes());
            written += DESC_BYTES;
        }
        written
    }

    /// Whether `slot` holds descriptor `i` of copy `n` at ring-id phase `phase` (mod 4): the
    /// bytes [`Shift::apply`] writes there. A header whose step is not known matches only
    /// copy 0.
    #[inline]
    pub fn matches(&self, i: usize, n: u64, phase: u8, slot: &[u8; DESC_BYTES]) -> bool {
        let Some(p) = self.parts.get(i) else { return false };
        if n != 0 && self.learning() == Some(i) {
            return false;
        }
        halves(slot) == p.at(n, phase)
    }

    /// [`Shift::matches`], first learning the header step from this slot when it is copy 1's
    /// header descriptor and the step is not known yet (a step learnt from a slot that does
    /// not match otherwise stays learnt).
    #[inline]
    pub fn recognise(&mut self, i: usize, n: u64, phase: u8, slot: &[u8; DESC_BYTES]) -> bool {
        if n == 1 && self.learning() == Some(i) {
            let (lo, hi) = halves(slot);
            self.learn(layout::GRAD_D_HEADER.get(&halves_to_words(lo, hi)));
        }
        self.matches(i, n, phase, slot)
    }

    /// Whether a ring holds all of copy `n` from the slot cursor `slots` on, reading each slot
    /// with `read` (`None`: it cannot be read, so not a copy): [`Shift::recognise`] of each
    /// descriptor in turn, stopping at the first that is not the copy's.
    #[inline]
    pub fn recognise_copy(
        &mut self,
        n: u64,
        slots: &mut Slots,
        mut read: impl FnMut(u64) -> Option<[u8; DESC_BYTES]>,
    ) -> bool {
        if n != 0 && self.learning().is_some() {
            // Learning the header step (copy 1) or refusing the copy: descriptor by descriptor.
            for (i, (slot, phase)) in (0..self.parts.len()).zip(slots) {
                if !read(slot).is_some_and(|got| self.recognise(i, n, phase, &got)) {
                    return false;
                }
            }
            return true;
        }
        self.parts
            .iter()
            .zip(slots)
            .all(|(p, (slot, phase))| read(slot).is_some_and(|got| halves(&got) == p.at(n, phase)))
    }

    /// The header descriptor whose step is still to learn.
    #[inline]
    fn learning(&self) -> Option<usize> {
        self.header.and_then(|h| if h.step.is_none() { Some(h.index) } else { None })
    }

    /// Learns the header step from copy 1's header word `word`.
    fn learn(&mut self, word: u32) {
        if let Some(h) = &mut self.header {
            let step = word.wrapping_sub(h.word);
            h.step = Some(step);
            if let Some(p) = self.parts.get_mut(h.index) {
                p.step = header_step(step);
            }
        }
    }
}

/// What a header step adds to a descriptor's second half: `step` in W3.
#[inline]
fn header_step(step: u32) -> u64 {
    let mut w = [0; WORDS];
    w[layout::GRAD_D_HEADER.word as usize] = step;
    descriptor::data_buf_ptr(w)
}

/// A descriptor's 16 bytes as its two little-endian halves.
#[inline]
fn halves(bytes: &[u8; DESC_BYTES]) -> (u64, u64) {
    let (mut lo, mut hi) = ([0u8; HALF], [0u8; HALF]);
    lo.copy_from_slice(&bytes[..HALF]);
    hi.copy_from_slice(&bytes[HALF..]);
    (u64::from_le_bytes(lo), u64::from_le_bytes(hi))
}

/// [`halves`] back to words.
fn halves_to_words(lo: u64, hi: u64) -> [u32; 4] {
    let mut b = [0u8; DESC_BYTES];
    b[..HALF].copy_from_slice(&lo.to_le_bytes());
    b[HALF..].copy_from_slice(&hi.to_le_bytes());
    descriptor::bytes_to_words(&b).unwrap_or_default()
}

#[cfg(test)]
mod tests {
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
                let uses_last =
                    geo.slots_from(at).take(TEMPLATE.len()).any(|(slot, _)| slot + 1 == u64::from(ring_size));
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
}
