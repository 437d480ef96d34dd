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
mod tests;
