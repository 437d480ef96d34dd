//! The buffer map (MODEL): where rank `r`'s input, partials, outputs, receive buffers,
//! compressed buffers and rings sit in the model's address space, one slot of 2^45 bytes per
//! rank; each kind of scratch buffer has 2^42 bytes per rank, cut into [`Layout::slots`]
//! slots of [`Layout::stride`] bytes (2^36 up to 64 slots, halved each time the slot count
//! doubles past it); the input's and the output's chunks lie back to back.
//! Every address of a schedule comes from here, and [`Layout::rank_of`] gives an address's
//! owner.
//!
//! A compressed buffer (`--compress gce`, docs/MODEL.md G6) holds a chunk's GCE headers (one
//! [`cce_host::gradient::header_stride`] per packet) and then its fp8 payload; it starts on a
//! chunk slot, so headers and payload share one 4 GiB window (W3 holds 32 bits).

pub(super) const RANK_STRIDE: u64 = 1 << 45;
/// A scratch slot's bytes up to 64 slots (more slots share the same 2^42 bytes).
pub(super) const CHUNK_STRIDE: u64 = 1 << 36;
/// Slots of [`CHUNK_STRIDE`] bytes in each kind of scratch buffer.
const WIDE_SLOTS: usize = 64;
pub(super) const P_OFF: u64 = 1 << 42;
pub(super) const W_OFF: u64 = 2 << 42;
pub(super) const RECV_OFF: u64 = 3 << 42;
pub(super) const C_OFF: u64 = 4 << 42;
pub(super) const CW_OFF: u64 = 5 << 42;
pub(super) const RING_OFF: u64 = RANK_STRIDE - (1 << 30);
pub(super) const RING_SIZE: u32 = 4096;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Layout {
    pub(super) r: usize,
    pub(super) n: u64,
    pub(super) size: u64,
    /// Scratch slots per kind and rank: R for a flat algorithm, 2R for a hierarchy.
    pub(super) slots: usize,
}

impl Layout {
    /// R ranks of `n` elements of `size` bytes, with R scratch slots.
    pub(super) fn new(r: usize, n: u64, size: u64) -> Layout {
        Layout { r, n, size, slots: r }
    }
    /// Bytes between scratch slots: [`CHUNK_STRIDE`] up to 64 slots, then halved each time the
    /// slot count (rounded up to a power of two) doubles.
    pub(super) fn stride(&self) -> u64 {
        let wide = self.slots.max(1).next_power_of_two().max(WIDE_SLOTS) / WIDE_SLOTS;
        CHUNK_STRIDE / wide as u64
    }
    pub(super) fn m(&self, x: i64) -> usize {
        x.rem_euclid(self.r as i64) as usize
    }
    pub(super) fn start(&self, c: usize) -> u64 {
        c as u64 * self.n / self.r as u64
    }
    pub(super) fn len(&self, c: usize) -> u64 {
        self.start(c + 1) - self.start(c)
    }
    pub(super) fn base(r: usize) -> u64 {
        RANK_STRIDE * (r as u64 + 1)
    }
    /// Rank `r`'s tx and rx rings of `ring_size` descriptors, back to back at `RING_OFF`.
    pub(super) fn rings(r: usize, ring_size: u32) -> (u64, u64) {
        let tx = Self::base(r) + RING_OFF;
        (tx, tx + cce_format::ring::ring_bytes(ring_size as u64))
    }
    pub(super) fn input(&self, r: usize, c: usize) -> u64 {
        Self::base(r) + self.start(c) * self.size
    }
    pub(super) fn p(&self, r: usize, c: usize) -> u64 {
        Self::base(r) + P_OFF + c as u64 * self.stride()
    }
    /// `W(r, c)`: chunk `c` of rank `r`'s output. A rank's chunks sit back to back (an empty
    /// chunk's one byte included, see [`Self::chunk_bytes`]), so one buffer can hold them all
    /// and become the rank's output as it is.
    pub(super) fn w(&self, r: usize, c: usize) -> u64 {
        Self::base(r) + W_OFF + self.w_offset(c)
    }
    /// Where chunk `c` starts in a rank's `W` chunks; `c = R` gives their total length.
    pub(super) fn w_offset(&self, c: usize) -> u64 {
        // Below one element per chunk every chunk holds one element or none, so the chunks
        // before c hold start(c) elements and the other c − start(c) are empty.
        let empty_before = if self.n >= self.r as u64 { 0 } else { c as u64 - self.start(c) };
        self.start(c) * self.size + empty_before
    }
    pub(super) fn recv(&self, r: usize, c: usize) -> u64 {
        Self::base(r) + RECV_OFF + c as u64 * self.stride()
    }
    /// `T(r)`: the block a hierarchy's intra-node reduce-scatter leaves rank `r`: receive slot
    /// R − 1, which no stage's receive buffer takes (an intra-node stage's slots are multiples
    /// of X ≥ 2, an inter-node stage's from R; [`super::group`]).
    pub(super) fn t(&self, r: usize) -> u64 {
        self.recv(r, self.r - 1)
    }
    /// `C(r, c)`: chunk `c` compressed by rank `r` for the node boundary after it.
    pub(super) fn c(&self, r: usize, c: usize) -> u64 {
        Self::base(r) + C_OFF + c as u64 * self.stride()
    }
    /// `CW(r, c)`: final chunk `c` in its owner's compressed form, as rank `r` holds it.
    pub(super) fn cw(&self, r: usize, c: usize) -> u64 {
        Self::base(r) + CW_OFF + c as u64 * self.stride()
    }
    /// Whether `addr` starts a scratch buffer — a partial `P(r, i)`, a receive buffer
    /// `RECV(r, i)` or a compressed buffer `C(r, i)` / `CW(r, i)`, each written once and read by
    /// later steps (slot `i` below [`Self::slots`]: a chunk, or RDH's round-and-chunk slot) — rather than an
    /// input or output, which live for the whole run.
    pub(super) fn is_scratch(&self, addr: u64) -> bool {
        let Some(off) = addr.checked_sub(RANK_STRIDE).map(|a| a % RANK_STRIDE) else { return false };
        let rel = match off {
            o if (P_OFF..W_OFF).contains(&o) => o - P_OFF,
            o if (RECV_OFF..C_OFF).contains(&o) => o - RECV_OFF,
            o if (C_OFF..CW_OFF).contains(&o) => o - C_OFF,
            o if (CW_OFF..RING_OFF).contains(&o) => o - CW_OFF,
            _ => return false,
        };
        rel % self.stride() == 0 && rel / self.stride() < self.slots as u64
    }
    /// The scratch buffer that `addr` lies in, by its start (see [`Self::is_scratch`]).
    pub(super) fn scratch_of(&self, addr: u64) -> Option<u64> {
        let base = Self::base(Self::rank_of(addr));
        let off = addr.checked_sub(base)?;
        if !(P_OFF..RING_OFF).contains(&off) || (W_OFF..RECV_OFF).contains(&off) {
            return None;
        }
        let start = base + off - (off % self.stride());
        self.is_scratch(start).then_some(start)
    }
    /// The bytes of chunk `c`'s buffers (an empty chunk still maps one byte).
    pub(super) fn chunk_bytes(&self, c: usize) -> u64 {
        (self.len(c) * self.size).max(1)
    }
    pub(super) fn rank_of(addr: u64) -> usize {
        (addr / RANK_STRIDE).saturating_sub(1) as usize
    }
}
