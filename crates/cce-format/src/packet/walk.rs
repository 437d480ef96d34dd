//! A queue's program walked packet by packet: ring-id phases and per-arch limits.

use super::{DescKind, META_BIT, PacketError, Parsed, max_descs_per_packet, parse_packet};
use crate::layout;
use crate::ring::RingGeometry;

/// One packet found by [`walk`], with where it starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// The packet and its descriptor kinds.
    pub parsed: Parsed,
    /// Index of its first tx descriptor in program order.
    pub tx_start: usize,
    /// Index of its first rx descriptor.
    pub rx_start: usize,
}

/// A fault found by [`walk`], with where the packet started.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    /// What is wrong; its indices count from the packet start.
    pub error: PacketError,
    /// Index of the packet's first tx descriptor.
    pub tx_start: usize,
    /// Index of the packet's first rx descriptor.
    pub rx_start: usize,
}

/// Walks a queue's program (tx and rx descriptors in program order) packet by packet, checking
/// every packet against `arch`'s limits ([`check_arch`]) and every data descriptor's ring-id
/// against its slot. Stops at the first fault. Bounded: each step consumes at least one
/// descriptor and looks at most [`MAX_PACKET_DESCRIPTORS`](super::MAX_PACKET_DESCRIPTORS) ahead.
pub fn walk<'a>(
    tx: &'a [[u32; 4]],
    rx: &'a [[u32; 4]],
    geo: RingGeometry,
    arch: u32,
) -> impl Iterator<Item = Result<Found, Fault>> + 'a {
    let (mut t, mut r, mut done) = (0usize, 0usize, false);
    core::iter::from_fn(move || {
        if done || (t == tx.len() && r == rx.len()) {
            return None;
        }
        let fault = |error| Fault { error, tx_start: t, rx_start: r };
        let res = parse_packet(&tx[t..], &rx[r..]).map_err(fault).and_then(|parsed| {
            check_arch(&parsed, arch).map_err(fault)?;
            check_phases(&tx[t..t + parsed.tx_kinds.len()], t, "tx", geo)
                .and_then(|()| check_phases(&rx[r..r + parsed.rx_used], r, "rx", geo))
                .map_err(fault)?;
            Ok(Found { parsed, tx_start: t, rx_start: r })
        });
        match &res {
            Ok(f) => {
                t += f.parsed.tx_kinds.len();
                r += f.parsed.rx_used;
            }
            Err(_) => done = true,
        }
        Some(res)
    })
}

/// Checks a parsed packet against `arch`'s limits, what the host's builder refuses to make
/// ("CCE concatenation not supported"): replication descriptors (an EXT combo) only from arch
/// 3, and at most [`max_descs_per_packet`] descriptors on either ring. Arch 0 (a dump that
/// does not say) is taken as 3.
pub fn check_arch(parsed: &Parsed, arch: u32) -> Result<(), PacketError> {
    let arch = if arch == 0 { 3 } else { arch };
    let (max_tx, max_rx) = max_descs_per_packet(arch);
    let (tx, rx) = (parsed.tx_kinds.len(), parsed.rx_used);
    if parsed.tx_kinds.contains(&DescKind::Replication) && !crate::limits::replication_allowed(arch) {
        return Err(PacketError::ArchConcatenation(arch));
    }
    if tx > max_tx || rx > max_rx {
        return Err(PacketError::ArchDescriptors { arch, tx, rx, max_tx, max_rx });
    }
    Ok(())
}

/// Checks that every data descriptor of `words`, which start at program index `start`, carries
/// its slot's ring-id phase.
pub fn check_phases(
    words: &[[u32; 4]],
    start: usize,
    ring: &'static str,
    geo: RingGeometry,
) -> Result<(), PacketError> {
    for (i, w) in words.iter().enumerate() {
        if w[0] & META_BIT == 0 {
            let expected = geo.phase((start + i) as u64);
            let got = layout::LC_RING_ID.get(w) as u8;
            if got != expected {
                return Err(PacketError::Phase { ring, index: i, got, expected });
            }
        }
    }
    Ok(())
}
