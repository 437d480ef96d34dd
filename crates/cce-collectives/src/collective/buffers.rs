//! The buffer map (MODEL): where rank `r`'s input, partials, outputs, receive buffers,
//! compressed buffers and rings sit in the model's address space, one slot of 2^45 bytes per
//! rank and 2^36 per scratch chunk; the input's and the output's chunks lie back to back.
//! Every address of a schedule comes from here, and [`Layout::rank_of`] gives an address's
//! owner.
//!
//! A compressed buffer (`--compress gce`, docs/MODEL.md G6) holds a chunk's GCE headers (one
//! [`cce_host::gradient::header_stride`] per packet) and then its fp8 payload; it starts on a
//! chunk slot, so headers and payload share one 4 GiB window (W3 holds 32 bits).

pub(super) const RANK_STRIDE: u64 = 1 << 45;
pub(super) const CHUNK_STRIDE: u64 = 1 << 36;
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
}

impl Layout {
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
        Self::base(r) + P_OFF + c as u64 * CHUNK_STRIDE
    }
    /// `W(r, c)`: chunk `c` of rank `r`'s output. A rank's chunks sit back to back (an empty
    /// chunk's one byte included, see [`Self::chunk_bytes`]), so one buffer can hold them all
    /// and become the rank's output as it is.
    pub(super) fn w(&self, r: usize, c: usize) -> u64 {
        Self::base(r) + W_OFF + self.w_offset(c)
    }
    /// Where chunk `c` starts in a rank's `W` chunks; `c = R` gives their total length.
    pub(super) fn w_offset(&self, c: usize) -> u64 {
        let empty_before = if self.n >= self.r as u64 { 0 } else { (0..c).filter(|&k| self.len(k) == 0).count() };
        self.start(c) * self.size + empty_before as u64
    }
    pub(super) fn recv(&self, r: usize, c: usize) -> u64 {
        Self::base(r) + RECV_OFF + c as u64 * CHUNK_STRIDE
    }
    /// `C(r, c)`: chunk `c` compressed by rank `r` for the node boundary after it.
    pub(super) fn c(&self, r: usize, c: usize) -> u64 {
        Self::base(r) + C_OFF + c as u64 * CHUNK_STRIDE
    }
    /// `CW(r, c)`: final chunk `c` in its owner's compressed form, as rank `r` holds it.
    pub(super) fn cw(&self, r: usize, c: usize) -> u64 {
        Self::base(r) + CW_OFF + c as u64 * CHUNK_STRIDE
    }
    /// Whether `addr` starts a scratch buffer — a partial `P(r, i)`, a receive buffer
    /// `RECV(r, i)` or a compressed buffer `C(r, i)` / `CW(r, i)`, each written once and read by
    /// later steps (slot `i` below R: a chunk, or RDH's round-and-chunk slot) — rather than an
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
        rel % CHUNK_STRIDE == 0 && rel / CHUNK_STRIDE < self.r as u64
    }
    /// The bytes of chunk `c`'s buffers (an empty chunk still maps one byte).
    pub(super) fn chunk_bytes(&self, c: usize) -> u64 {
        (self.len(c) * self.size).max(1)
    }
    pub(super) fn rank_of(addr: u64) -> usize {
        (addr / RANK_STRIDE).saturating_sub(1) as usize
    }
}
