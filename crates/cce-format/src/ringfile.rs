//! The ring dump file (MODEL, version 2): one or more queues' tx and rx rings as bytes, as
//! `cce build --out` writes them and `cce disasm` / `cce run` read them.
//!
//! Version 2 has the layout of version 1; what changed is the rings it holds. Version 1 was
//! written while cce set FIRST / LAST on every S2M descriptor (docs/MODEL.md, the former P8);
//! the public driver's S2M descriptors carry neither, and neither do version 2's. [`upgrade`]
//! reads a version-1 file as version 2 by clearing those two bits of every rx descriptor,
//! which is all that tells the two apart.
//!
//! ```text
//! offset  size  field (all little-endian)
//! 0       8     magic "CCERING\0"
//! 8       2     version (2; 1 is converted on read by [`upgrade`])
//! 10      2     header bytes (32)
//! 12      4     flags: bit 0 = a 64-bit FNV-1a checksum of everything before it ends the file
//! 16      4     arch the rings were built for (informational; 0 = unknown)
//! 20      4     queue count (1..=16)
//! 24      8     reserved, 0
//! 32      32×Q  queue table, one entry per queue:
//!               u32 queue id (0..=15, unique), u32 ring size in descriptors (a multiple of 16,
//!               at least 32), u32 tx descriptors, u32 rx descriptors, u8 initial ring-id phase
//!               (0..=3), u8[3] reserved 0, u32 tx doorbell, u32 rx doorbell, u32 reserved 0
//! …       16×n  per queue, in table order: its tx descriptors, then its rx descriptors
//! end     8     checksum, if flag bit 0
//! ```
//! Descriptors are stored in program order; descriptor `k` of a ring sits in slot
//! `k % ring_size` on lap `k / ring_size`, whose ring-id phase is `initial + lap` (mod 4).
//! [`RingFile::parse`] checks every count against the file length before it trusts it, so a
//! hostile header cannot make a reader allocate; it never panics.

use alloc::vec::Vec;

use crate::ring::{DESC_BYTES, MAX_PHASE, RingGeometry, descriptors_in, ring_bytes, valid_phase};

/// The file's first 8 bytes.
pub const MAGIC: [u8; 8] = *b"CCERING\0";
/// The version this code reads and writes.
pub const VERSION: u16 = 2;
/// The earlier version [`upgrade`] converts.
pub const VERSION_1: u16 = 1;
const HEADER_BYTES: usize = 32;
const QUEUE_BYTES: usize = 32;
/// Most queues one engine serves (see [`crate::limits::MAX_QUEUES`]).
pub use crate::limits::MAX_QUEUES;
/// Smallest ring, in descriptors.
pub const MIN_RING: u32 = 32;
/// Ring sizes are multiples of this many descriptors.
pub const RING_GRANULE: u32 = 16;
const FLAG_CHECKSUM: u32 = 1;

/// Why a file cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RingFileError {
    /// Not a ring dump at all.
    #[error("not a cce ring dump (bad magic)")]
    Magic,
    /// A version this code does not read.
    #[error("ring dump version {0} is not supported (this build reads versions 1 and {VERSION})")]
    Version(u16),
    /// Fewer bytes than the header and table promise.
    #[error("truncated ring dump: {need} bytes needed, {got} present")]
    Truncated {
        /// Bytes needed.
        need: u64,
        /// Bytes present.
        got: u64,
    },
    /// More bytes than the header and table account for.
    #[error("ring dump has {0} trailing bytes")]
    Trailing(u64),
    /// The checksum does not match.
    #[error("ring dump checksum mismatch: the file is corrupt")]
    Checksum,
    /// A header field out of range.
    #[error("ring dump header: {0}")]
    Header(&'static str),
    /// A ring size the UDMA model does not allow.
    #[error("queue {queue}: ring size {size} is not a multiple of 16 of at least 32 descriptors")]
    RingSize {
        /// Queue id.
        queue: u32,
        /// The size.
        size: u64,
    },
    /// Raw ring memory that is not whole descriptors.
    #[error("queue {queue}: the {ring} ring has {bytes} bytes, not a whole number of 16-byte descriptors")]
    RawLength {
        /// Queue id.
        queue: u32,
        /// `tx` or `rx`.
        ring: &'static str,
        /// Its length.
        bytes: u64,
    },
    /// Raw ring memory larger than the ring.
    #[error("queue {queue}: the {ring} ring holds {descriptors} descriptors, more than its {ring_size} slots")]
    RawTooLong {
        /// Queue id.
        queue: u32,
        /// `tx` or `rx`.
        ring: &'static str,
        /// Descriptors given.
        descriptors: u64,
        /// Slots.
        ring_size: u64,
    },
    /// A tail past the descriptors given.
    #[error("queue {queue}: {ring} tail {tail} is past the end of the {ring} ring ({descriptors} descriptors given)")]
    RawTail {
        /// Queue id.
        queue: u32,
        /// `tx` or `rx`.
        ring: &'static str,
        /// The tail.
        tail: u64,
        /// Descriptors given.
        descriptors: u64,
    },
    /// A ring-id phase above [`MAX_PHASE`].
    #[error("queue {queue}: phase {phase} is not a ring id (0..={})", MAX_PHASE)]
    RawPhase {
        /// Queue id.
        queue: u32,
        /// The phase.
        phase: u64,
    },
    /// Two raw queues with the same id, or one of 16 or more.
    #[error("queue {queue}: queue ids must be unique and below 16")]
    RawQueueId {
        /// Queue id.
        queue: u32,
    },
}

/// One queue's rings as they sit in device memory (a raw capture): slot 0 first, 16 bytes per
/// descriptor, at most a ring's worth. The queue's head is slot 0; the tails say how many
/// slots were doorbelled (all the descriptors given when `None`); `phase` is the ring id of
/// this lap (the driver's first lap, 1, when `None`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawQueue<'a> {
    /// Queue id (0..=15).
    pub queue: u32,
    /// Tx ring memory.
    pub tx: &'a [u8],
    /// Rx ring memory.
    pub rx: &'a [u8],
    /// Slots per ring.
    pub ring_size: u64,
    /// Tx slots doorbelled.
    pub tx_tail: Option<u64>,
    /// Rx slots doorbelled.
    pub rx_tail: Option<u64>,
    /// Ring id of the lap.
    pub phase: Option<u64>,
}

/// The driver's ring id on a ring's first lap (GAPS.md §12).
pub const DRIVER_FIRST_PHASE: u8 = 1;

impl<'a> RawQueue<'a> {
    /// The queue as a program (slots `0..tail` in order), or the first thing wrong with it:
    /// the ring size, a length that is not whole descriptors or exceeds the ring, a tail past
    /// the descriptors given, a phase above 3. Never panics.
    pub fn to_rings(&self) -> Result<QueueRings<'a>, RingFileError> {
        let queue = self.queue;
        if queue as usize >= MAX_QUEUES {
            return Err(RingFileError::RawQueueId { queue });
        }
        let size = self.ring_size;
        if size > u32::MAX as u64 || !valid_ring_size(size as u32) {
            return Err(RingFileError::RingSize { queue, size });
        }
        let phase = self.phase.unwrap_or(DRIVER_FIRST_PHASE as u64);
        if !valid_phase(phase) {
            return Err(RingFileError::RawPhase { queue, phase });
        }
        let ring = |ring: &'static str, bytes: &'a [u8], tail: Option<u64>| {
            let len = bytes.len() as u64;
            if len % DESC_BYTES as u64 != 0 {
                return Err(RingFileError::RawLength { queue, ring, bytes: len });
            }
            let descriptors = descriptors_in(bytes.len()) as u64;
            if descriptors > size {
                return Err(RingFileError::RawTooLong { queue, ring, descriptors, ring_size: size });
            }
            let tail = tail.unwrap_or(descriptors);
            if tail > descriptors {
                return Err(RingFileError::RawTail { queue, ring, tail, descriptors });
            }
            Ok((&bytes[..ring_bytes(tail) as usize], tail as u32))
        };
        let (tx, tx_doorbell) = ring("tx", self.tx, self.tx_tail)?;
        let (rx, rx_doorbell) = ring("rx", self.rx, self.rx_tail)?;
        Ok(QueueRings { queue, ring_size: size as u32, initial_phase: phase as u8, tx_doorbell, rx_doorbell, tx, rx })
    }
}

impl<'a> RingFile<'a> {
    /// Raw queues as a file (arch 0: a capture does not say), each checked by
    /// [`RawQueue::to_rings`], with unique queue ids.
    pub fn from_raw(queues: &[RawQueue<'a>]) -> Result<RingFile<'a>, RingFileError> {
        let mut seen = 0u32;
        let mut out = Vec::with_capacity(queues.len());
        for q in queues {
            let rings = q.to_rings()?;
            if seen & (1 << q.queue) != 0 {
                return Err(RingFileError::RawQueueId { queue: q.queue });
            }
            seen |= 1 << q.queue;
            out.push(rings);
        }
        if out.is_empty() {
            return Err(RingFileError::Header("no queue given"));
        }
        Ok(RingFile { arch: 0, queues: out })
    }
}

/// One queue's rings, borrowed from the file bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueueRings<'a> {
    /// Queue id (0..=15).
    pub queue: u32,
    /// Ring size in descriptors.
    pub ring_size: u32,
    /// Ring-id phase of the first lap.
    pub initial_phase: u8,
    /// Descriptors to doorbell on tx.
    pub tx_doorbell: u32,
    /// Descriptors to doorbell on rx.
    pub rx_doorbell: u32,
    /// The tx descriptors, 16 bytes each, program order.
    pub tx: &'a [u8],
    /// The rx descriptors, 16 bytes each, program order.
    pub rx: &'a [u8],
}

impl QueueRings<'_> {
    /// Both rings' geometry.
    pub const fn geometry(&self) -> RingGeometry {
        RingGeometry { ring_size: self.ring_size, initial_phase: self.initial_phase }
    }
    /// Number of tx descriptors.
    pub fn tx_len(&self) -> usize {
        descriptors_in(self.tx.len())
    }
    /// Number of rx descriptors.
    pub fn rx_len(&self) -> usize {
        descriptors_in(self.rx.len())
    }
    /// Tx descriptor `i` as words.
    pub fn tx_words(&self, i: usize) -> Option<[u32; 4]> {
        words_at(self.tx, i)
    }
    /// Rx descriptor `i` as words.
    pub fn rx_words(&self, i: usize) -> Option<[u32; 4]> {
        words_at(self.rx, i)
    }
}

/// Descriptor `i` of a slice of descriptors ([`DESC_BYTES`] apart).
pub fn words_at(bytes: &[u8], i: usize) -> Option<[u32; 4]> {
    let at = i.checked_mul(DESC_BYTES)?;
    let b = bytes.get(at..at.checked_add(DESC_BYTES)?)?;
    crate::descriptor::bytes_to_words(b).ok()
}

/// A parsed dump.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RingFile<'a> {
    /// Arch the rings were built for (0 = unknown).
    pub arch: u32,
    /// The queues.
    pub queues: Vec<QueueRings<'a>>,
}

fn u16_at(b: &[u8], o: usize) -> u16 {
    u16::from_le_bytes([b[o], b[o + 1]])
}
fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]])
}

/// 64-bit FNV-1a.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3))
}

/// Whether `size` is a ring size the UDMA model allows.
pub const fn valid_ring_size(size: u32) -> bool {
    size >= MIN_RING && size % RING_GRANULE == 0
}

/// The smallest valid ring holding `descs` descriptors.
pub fn ring_size_for(descs: u64) -> u64 {
    descs.max(MIN_RING as u64).div_ceil(RING_GRANULE as u64) * RING_GRANULE as u64
}

/// The bytes of a dump as the current version: a version-2 file as it is (borrowed), a
/// version-1 file converted (every rx descriptor's FIRST and LAST, len_ctrl bits 26 and 27,
/// cleared; the file rewritten with the version-2 header and a checksum). Anything else is
/// the error [`RingFile::parse`] gives.
pub fn upgrade(bytes: &[u8]) -> Result<alloc::borrow::Cow<'_, [u8]>, RingFileError> {
    use alloc::borrow::Cow;
    if bytes.len() < HEADER_BYTES || bytes[..8] != MAGIC || u16_at(bytes, 8) != VERSION_1 {
        return RingFile::parse(bytes).map(|_| Cow::Borrowed(bytes));
    }
    let old = RingFile::parse_version(bytes, VERSION_1)?;
    let first_last = crate::layout::LC_FIRST.span.mask() | crate::layout::LC_LAST.span.mask();
    let rx: Vec<Vec<u8>> = old
        .queues
        .iter()
        .map(|q| {
            let mut rx = q.rx.to_vec();
            for d in rx.chunks_exact_mut(DESC_BYTES) {
                let w0 = u32_at(d, 0) & !first_last;
                d[..4].copy_from_slice(&w0.to_le_bytes());
            }
            rx
        })
        .collect();
    let queues = old.queues.iter().zip(&rx).map(|(q, rx)| QueueRings { rx, ..q.clone() }).collect();
    Ok(Cow::Owned(RingFile { arch: old.arch, queues }.to_bytes()))
}

impl<'a> RingFile<'a> {
    /// Parses a version-2 dump, borrowing its descriptor bytes (a version-1 file: [`upgrade`]
    /// first).
    pub fn parse(bytes: &'a [u8]) -> Result<RingFile<'a>, RingFileError> {
        Self::parse_version(bytes, VERSION)
    }

    fn parse_version(bytes: &'a [u8], expected: u16) -> Result<RingFile<'a>, RingFileError> {
        let got = bytes.len() as u64;
        if bytes.len() < 8 || bytes[..8] != MAGIC {
            return Err(if bytes.len() < 8 && MAGIC.starts_with(bytes) {
                RingFileError::Truncated { need: HEADER_BYTES as u64, got }
            } else {
                RingFileError::Magic
            });
        }
        if bytes.len() < HEADER_BYTES {
            return Err(RingFileError::Truncated { need: HEADER_BYTES as u64, got });
        }
        let version = u16_at(bytes, 8);
        if version != expected {
            return Err(RingFileError::Version(version));
        }
        if u16_at(bytes, 10) as usize != HEADER_BYTES {
            return Err(RingFileError::Header("header size is not 32"));
        }
        let flags = u32_at(bytes, 12);
        if flags & !FLAG_CHECKSUM != 0 {
            return Err(RingFileError::Header("unknown flag bits"));
        }
        let arch = u32_at(bytes, 16);
        let nq = u32_at(bytes, 20) as usize;
        if nq == 0 || nq > MAX_QUEUES {
            return Err(RingFileError::Header("queue count must be 1..=16"));
        }
        if bytes[24..32].iter().any(|&b| b != 0) {
            return Err(RingFileError::Header("reserved header bytes are not zero"));
        }
        let table_end = HEADER_BYTES + nq * QUEUE_BYTES;
        if bytes.len() < table_end {
            return Err(RingFileError::Truncated { need: table_end as u64, got });
        }
        // Sizes first, in u64, before any slice is taken.
        let mut need = table_end as u64;
        let mut seen = 0u32;
        for q in 0..nq {
            let e = HEADER_BYTES + q * QUEUE_BYTES;
            let id = u32_at(bytes, e);
            if id as usize >= MAX_QUEUES || seen & (1 << id) != 0 {
                return Err(RingFileError::Header("queue ids must be unique and below 16"));
            }
            seen |= 1 << id;
            let size = u32_at(bytes, e + 4);
            if !valid_ring_size(size) {
                return Err(RingFileError::RingSize { queue: id, size: size as u64 });
            }
            if !valid_phase(bytes[e + 16].into())
                || bytes[e + 17..e + 20].iter().any(|&b| b != 0)
                || u32_at(bytes, e + 28) != 0
            {
                return Err(RingFileError::Header("queue entry: phase above 3 or reserved bytes set"));
            }
            need += ring_bytes(u32_at(bytes, e + 8) as u64 + u32_at(bytes, e + 12) as u64);
        }
        if flags & FLAG_CHECKSUM != 0 {
            need += 8;
        }
        if got < need {
            return Err(RingFileError::Truncated { need, got });
        }
        if got > need {
            return Err(RingFileError::Trailing(got - need));
        }
        if flags & FLAG_CHECKSUM != 0 {
            let body = bytes.len() - 8;
            let stored = u64::from_le_bytes(bytes[body..].try_into().map_err(|_| RingFileError::Checksum)?);
            if stored != fnv1a64(&bytes[..body]) {
                return Err(RingFileError::Checksum);
            }
        }
        let mut at = table_end;
        let mut queues = Vec::with_capacity(nq);
        for q in 0..nq {
            let e = HEADER_BYTES + q * QUEUE_BYTES;
            let (ntx, nrx) =
                (ring_bytes(u32_at(bytes, e + 8) as u64) as usize, ring_bytes(u32_at(bytes, e + 12) as u64) as usize);
            let tx = &bytes[at..at + ntx];
            let rx = &bytes[at + ntx..at + ntx + nrx];
            at += ntx + nrx;
            queues.push(QueueRings {
                queue: u32_at(bytes, e),
                ring_size: u32_at(bytes, e + 4),
                initial_phase: bytes[e + 16],
                tx_doorbell: u32_at(bytes, e + 20),
                rx_doorbell: u32_at(bytes, e + 24),
                tx,
                rx,
            });
        }
        Ok(RingFile { arch, queues })
    }

    /// Writes a dump (with checksum). The caller supplies valid ring sizes, unique queue ids
    /// and whole descriptors; [`RingFile::parse`] of the result gives back the same file.
    pub fn to_bytes(&self) -> Vec<u8> {
        let body: usize = self.queues.iter().map(|q| q.tx.len() + q.rx.len()).sum();
        let mut out = Vec::with_capacity(HEADER_BYTES + QUEUE_BYTES * self.queues.len() + body + 8);
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&(HEADER_BYTES as u16).to_le_bytes());
        out.extend_from_slice(&FLAG_CHECKSUM.to_le_bytes());
        out.extend_from_slice(&self.arch.to_le_bytes());
        out.extend_from_slice(&(self.queues.len() as u32).to_le_bytes());
        out.extend_from_slice(&[0; 8]);
        for q in &self.queues {
            for v in [q.queue, q.ring_size, q.tx_len() as u32, q.rx_len() as u32] {
                out.extend_from_slice(&v.to_le_bytes());
            }
            out.extend_from_slice(&[q.initial_phase, 0, 0, 0]);
            for v in [q.tx_doorbell, q.rx_doorbell, 0] {
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
        for q in &self.queues {
            out.extend_from_slice(q.tx);
            out.extend_from_slice(q.rx);
        }
        let sum = fnv1a64(&out);
        out.extend_from_slice(&sum.to_le_bytes());
        out
    }
}
