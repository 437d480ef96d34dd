//! One ring's geometry: its slots, their byte offsets and their ring-id phases. The host
//! writes rings by it, the engine reads them by it, the feed fills them by it and the
//! collectives place them by it; nothing else computes a slot's address, a ring's size in bytes
//! or a lap's phase.
//!
//! A ring holds `ring_size` descriptors of [`DESC_BYTES`] each. Program index `k` (descriptors
//! counted from the start of the program) sits in slot `k mod ring_size`, on lap
//! `k / ring_size`, whose ring id is the initial one plus the lap, mod 4 (public UDMA model;
//! the driver starts at 1).
//!
//! A packet repeated along a ring, each copy shifted by one packet's addresses, is a [`Shift`]
//! (module `shift`): the host writes copies by it and the engine recognises them by it.

use crate::bits::U2;
pub use crate::descriptor::DESC_BYTES;
use crate::layout;

mod shift;
pub use shift::Shift;

/// [`DESC_BYTES`] as an address step.
const STEP: u64 = DESC_BYTES as u64;

/// A ring's geometry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RingGeometry {
    /// Descriptors per lap.
    pub ring_size: u32,
    /// Phase (ring id) of the first lap.
    pub initial_phase: u8,
}

impl RingGeometry {
    /// The bytes of `ring_size` descriptors.
    #[inline]
    pub const fn bytes(self) -> u64 {
        ring_bytes(self.ring_size as u64)
    }

    /// The slot of program index `index`.
    #[inline]
    pub const fn slot(self, index: u64) -> u64 {
        index % self.laps_of_one()
    }

    /// The ring-id phase of program index `index`.
    #[inline]
    pub const fn phase(self, index: u64) -> u8 {
        phase(index, self.ring_size, self.initial_phase)
    }

    /// The slots and phases of program indices `index`, `index + 1`, …, one after another
    /// without a division each (a ring writer's or reader's cursor).
    #[inline]
    pub const fn slots_from(self, index: u64) -> Slots {
        Slots { size: self.laps_of_one(), slot: self.slot(index), phase: self.phase(index) }
    }

    /// Slots per lap, at least one (a zero size never divides by zero).
    #[inline]
    const fn laps_of_one(self) -> u64 {
        if self.ring_size == 0 { 1 } else { self.ring_size as u64 }
    }
}

/// The bytes of `descriptors` descriptors.
#[inline]
pub const fn ring_bytes(descriptors: u64) -> u64 {
    descriptors * STEP
}

/// The whole descriptors in `bytes` of ring memory.
#[inline]
pub const fn descriptors_in(bytes: usize) -> usize {
    bytes / DESC_BYTES
}

/// The byte offset of slot `slot` from a ring's base.
#[inline]
pub const fn slot_offset(slot: u64) -> u64 {
    ring_bytes(slot)
}

/// The largest ring-id phase: the phase is len_ctrl's 2-bit ring id (`[25:24]`), so it is one
/// of `0..=MAX_PHASE` and advances mod `MAX_PHASE + 1` on every wrap. The one statement of the
/// limit, which ring dumps and the engine check through [`valid_phase`].
pub const MAX_PHASE: u8 = U2::MAX as u8;

/// Whether `phase` is a ring id (at most [`MAX_PHASE`]).
pub const fn valid_phase(phase: u64) -> bool {
    phase <= MAX_PHASE as u64
}

/// The ring-id phase of slot `index` on a ring of `ring_size` descriptors whose first lap has
/// phase `initial`: it advances by one (mod 4) on every wrap (public UDMA model).
#[inline]
pub const fn phase(index: u64, ring_size: u32, initial: u8) -> u8 {
    let size = if ring_size == 0 { 1 } else { ring_size as u64 };
    ((initial as u64 + index / size) & MAX_PHASE as u64) as u8
}

/// Sets the ring-id phase of a data descriptor (len_ctrl `[25:24]`); compute descriptors keep
/// their bits (there `[31:24]` is the meta index).
#[inline]
pub fn with_phase(mut words: [u32; 4], phase: u8) -> [u32; 4] {
    words[0] = (words[0] & !layout::LC_RING_ID.span.mask()) | layout::LC_RING_ID.place(U2::masked(phase as u32).get());
    words
}

/// [`with_phase`] on a data descriptor's 16 little-endian bytes.
#[inline]
pub fn with_phase_bytes(mut bytes: [u8; DESC_BYTES], phase: u8) -> [u8; DESC_BYTES] {
    let w0 = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    bytes[..4].copy_from_slice(&with_phase([w0, 0, 0, 0], phase)[0].to_le_bytes());
    bytes
}

/// [`RingGeometry::slots_from`]: each program index's `(slot, ring-id phase)` in turn, the
/// phase advancing by one (mod 4) at every wrap.
#[derive(Clone, Debug)]
pub struct Slots {
    size: u64,
    slot: u64,
    phase: u8,
}

impl Iterator for Slots {
    type Item = (u64, u8);

    #[inline]
    fn next(&mut self) -> Option<(u64, u8)> {
        let here = (self.slot, self.phase);
        self.slot += 1;
        if self.slot == self.size {
            self.slot = 0;
            self.phase = (self.phase + 1) & MAX_PHASE;
        }
        Some(here)
    }
}
