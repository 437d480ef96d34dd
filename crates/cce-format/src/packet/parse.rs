//! Reading one packet from ring words, checked against the convention.

use alloc::vec::Vec;

use super::error::malformed;
use super::tx_read::TxRead;
use super::{
    DataFlags, DescKind, MAX_PACKET_DESCRIPTORS, META_BIT, META_CTRL_COPY_DEFAULT, Packet, PacketError, PacketOp,
    RX_OUT_DT,
};
use crate::descriptor::{Descriptor, GradientDescriptor, ReplicationDescriptor, S2mDataDescriptor};
use crate::dtype::SdmaDtype;
use crate::layout;
use crate::meta_ctrl::{
    AddMetaCtrl, CopyMetaCtrl, FmaMetaCtrl, GradientMetaCtrl, MetaCtrl, MinMaxMetaCtrl, WRITE_BARRIER,
};
use crate::op::SdmaCceType;

/// A packet read from ring words, with the kind of every descriptor it used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parsed {
    /// The packet.
    pub packet: Packet,
    /// Kind of each tx descriptor used, in order.
    pub tx_kinds: Vec<DescKind>,
    /// Number of rx descriptors used.
    pub rx_used: usize,
}

/// The op named by a data descriptor's meta-control word (the write barrier, bit 26, aside).
pub(super) fn op_of(meta: u32) -> Option<PacketOp> {
    let meta = meta & !WRITE_BARRIER;
    if meta == META_CTRL_COPY_DEFAULT {
        return Some(PacketOp::Copy);
    }
    let sub = layout::MC_SUB.get(&[meta]);
    let op = SdmaCceType::from_value(sub as u64)?;
    let ok = match op {
        SdmaCceType::Fma => FmaMetaCtrl::parse(meta).is_ok(),
        SdmaCceType::Min | SdmaCceType::Max => MinMaxMetaCtrl::parse(meta).is_ok(),
        SdmaCceType::Add => AddMetaCtrl::parse(meta).is_ok(),
        SdmaCceType::Gce => GradientMetaCtrl::parse(meta).is_ok(),
        SdmaCceType::Ext => false,
    };
    ok.then_some(PacketOp::Cce(op))
}

/// Reads one packet from the start of `tx` and `rx` (ring words, in ring order, already
/// unwrapped), taking the words given as everything there is. Walks at most
/// [`MAX_PACKET_DESCRIPTORS`] descriptors of either ring; never panics on any words.
pub fn parse_packet(tx: &[[u32; 4]], rx: &[[u32; 4]]) -> Result<Parsed, PacketError> {
    parse_packet_at(tx, rx, false)
}

/// [`parse_packet`] for a reader that may see more tx descriptors later (`more_tx`, e.g. an
/// engine whose doorbell has not covered the packet yet): a CCE packet whose LAST data
/// descriptor is the last word given could still be followed by the replication descriptors
/// of a combo, so it reads as cut off ([`PacketError::NoLast`]) until more words come or the
/// caller knows none will. A copy is never a combo and needs no look-ahead.
pub fn parse_packet_at(tx: &[[u32; 4]], rx: &[[u32; 4]], more_tx: bool) -> Result<Parsed, PacketError> {
    let end = extent(tx, more_tx)?;
    let words = &tx[..end];
    let (op, first_data) = packet_op(words, end)?;
    let mut t = TxRead::new(op, end);
    for (i, &w) in words.iter().enumerate() {
        if w[0] & META_BIT == 0 { t.data(i, w)? } else { t.compute(i, w)? }
    }
    let head = t.head(first_data)?;
    let rx_used = t.rx_used(end)?;
    let (dests, out_dt) = read_rx(rx, rx_used, op, head.elems, &mut t.flags)?;
    if head.use_const && head.forced_out != out_dt {
        return Err(malformed("tx", first_data, "MIN/MAX meta-control out dtype disagrees with the S2M"));
    }
    let packet = Packet {
        op,
        in_dt: head.in_dt,
        accum_dt: head.accum_dt,
        out_dt,
        elems: head.elems,
        sources: t.sources,
        dests,
        clamp: t.clamp.map(|(c, _)| c),
        seed: t.seed,
        flags: t.flags,
        gce: head.gce,
    };
    check_convention(&packet, &tx[..end], &rx[..rx_used])?;
    Ok(Parsed { packet, tx_kinds: t.kinds, rx_used })
}

/// Stage 1, the packet's extent on the tx ring (its descriptor count): up to the LAST data
/// descriptor, then the combo's trailing gradient descriptor (an EXT + GCE combo) and
/// replication descriptors (the only meta descriptors whose W1 carries 0xA00000), up to the one
/// without the more-bit.
fn extent(tx: &[[u32; 4]], more_tx: bool) -> Result<usize, PacketError> {
    let mut end = None;
    for (i, w) in tx.iter().enumerate() {
        if i >= MAX_PACKET_DESCRIPTORS {
            return Err(PacketError::TooLong(i));
        }
        if w[0] & META_BIT == 0 && layout::LC_LAST.get(w) != 0 {
            end = Some(i + 1);
            break;
        }
    }
    // Without a LAST among the descriptors given: a packet cut off by the end of the words, or,
    // when they already fill the packet bound, one that exceeds it.
    let cut = |n: usize| if n >= MAX_PACKET_DESCRIPTORS { PacketError::TooLong(n) } else { PacketError::NoLast(n) };
    let Some(mut end) = end else {
        return Err(cut(tx.len()));
    };
    let last_end = end;
    // A combo's gradient descriptor comes first after LAST and carries the more-bit (its
    // replication descriptors follow); one without it opens the next gradient packet.
    let trailing = |w: &[u32; 4], first: bool| {
        w[0] & META_BIT != 0
            && (ReplicationDescriptor::parse(*w).is_ok()
                || (first && layout::D_MORE.get(w) != 0 && GradientDescriptor::parse(*w).is_ok()))
    };
    while let Some(w) = tx.get(end).filter(|w| trailing(w, end == last_end)) {
        end += 1;
        if end > MAX_PACKET_DESCRIPTORS {
            return Err(PacketError::TooLong(end));
        }
        if layout::D_MORE.get(w) == 0 {
            break;
        }
        if end == tx.len() {
            return Err(cut(end));
        }
    }
    if end > 0 && tx[end - 1][0] & META_BIT != 0 && layout::D_MORE.get(&tx[end - 1]) != 0 {
        return Err(malformed("tx", end, "replication chain broken: more-bit set on its last descriptor"));
    }
    let words = &tx[..end];
    // A compute descriptor before the LAST data descriptor with the more-bit set says the
    // packet is a combo: its replication descriptors must follow.
    let combo_pending = words[..last_end].iter().any(|w| w[0] & META_BIT != 0 && layout::D_MORE.get(w) != 0);
    if end == last_end {
        if combo_pending && end == tx.len() {
            return Err(PacketError::NoLast(end));
        }
        if combo_pending {
            return Err(malformed(
                "tx",
                end,
                "more-bit set in the packet but no replication descriptor follows its LAST",
            ));
        }
        let copy = op_of(words[last_end - 1][1]) == Some(PacketOp::Copy);
        if more_tx && end == tx.len() && !copy {
            return Err(PacketError::NoLast(end));
        }
    }
    Ok(end)
}

/// Stage 2, the op, from the first data descriptor's meta-control word: `(op, its index)`.
fn packet_op(words: &[[u32; 4]], end: usize) -> Result<(PacketOp, usize), PacketError> {
    let first_data = words.iter().position(|w| w[0] & META_BIT == 0).ok_or(PacketError::NoLast(end))?;
    let meta0 = words[first_data][1];
    let op = op_of(meta0).ok_or(if CopyMetaCtrl::parse(meta0).is_ok() {
        PacketError::CopyFields { index: first_data, meta: meta0 }
    } else {
        PacketError::UnknownOp { index: first_data, meta: meta0 }
    })?;
    Ok((op, first_data))
}

/// Stage 4, the rx side: `rx_used` S2M descriptors, one per destination, each `elems` of the
/// output dtype. Returns the destinations and the output dtype; sets the rx flags.
fn read_rx(
    rx: &[[u32; 4]],
    rx_used: usize,
    op: PacketOp,
    elems: u32,
    flags: &mut DataFlags,
) -> Result<(Vec<u64>, SdmaDtype), PacketError> {
    if rx.len() < rx_used {
        return Err(PacketError::NoRx(rx.len()));
    }
    let mut dests = Vec::with_capacity(rx_used);
    let mut out_dt = None;
    for (j, &w) in rx[..rx_used].iter().enumerate() {
        let d = S2mDataDescriptor::parse(w).map_err(|_| malformed("rx", j, "not a valid S2M data descriptor"))?;
        let lc = d.len_ctrl;
        if lc.first || lc.last || lc.concat || lc.meta || lc.dmb {
            return Err(malformed(
                "rx",
                j,
                "FIRST / LAST / CONCAT / META / DMB on an S2M descriptor: the driver's S2M carries only length, ring id and INT_EN (bits 27 / 31 read as FLUSH / DUAL_BUF in the Annapurna HAL)",
            ));
        }
        if lc.int_en && j + 1 != rx_used {
            return Err(malformed("rx", j, "INT_EN on an S2M that is not the packet's last"));
        }
        if j == 0 {
            flags.strong_order = lc.strong_order;
        } else if flags.strong_order != lc.strong_order {
            return Err(malformed("rx", j, "strong-order set on some destinations only"));
        }
        flags.int_en = lc.int_en;
        let word_out = RX_OUT_DT.get(&w);
        if d.buf2_ptr_lo & !RX_OUT_DT.span.mask() != 0 {
            return Err(malformed("rx", j, "unexpected bits in the S2M W1 slot"));
        }
        let dt = if op == PacketOp::Copy {
            if word_out != 0 {
                return Err(malformed("rx", j, "a copy S2M carries no output dtype"));
            }
            SdmaDtype::U8
        } else {
            SdmaDtype::from_nibble(word_out)
        };
        if *out_dt.get_or_insert(dt) != dt {
            return Err(malformed("rx", j, "destinations disagree on the output dtype"));
        }
        let expected = elems as u64 * dt.bytes() as u64;
        if lc.byte_len() as u64 != expected {
            return Err(PacketError::Length { ring: "rx", index: j, got: lc.byte_len(), expected: expected as u32 });
        }
        dests.push(d.buf1_ptr);
    }
    let out_dt = out_dt.unwrap_or(SdmaDtype::Invalid);
    if out_dt.bytes() == 0 {
        return Err(PacketError::BadDtype { index: 0, dtype: out_dt.name(), role: "out" });
    }
    Ok((dests, out_dt))
}

/// Re-emits `packet` and compares with the words it was read from (ring-id phases aside, which
/// the engine checks against the slot): whatever the IR does not hold must be exactly what the
/// convention writes, so parsing is lossless.
fn check_convention(packet: &Packet, tx: &[[u32; 4]], rx: &[[u32; 4]]) -> Result<(), PacketError> {
    let (mut t2, mut r2) = (Vec::with_capacity(tx.len()), Vec::with_capacity(rx.len()));
    packet.emit(&mut t2, &mut r2);
    for (ring, got, want) in [("tx", tx, &t2[..]), ("rx", rx, &r2[..])] {
        if got.len() != want.len() {
            return Err(malformed(
                ring,
                got.len().min(want.len()),
                "descriptor count differs from the packet convention",
            ));
        }
        for (index, (g, w)) in got.iter().zip(want).enumerate() {
            let phase = if g[0] & META_BIT == 0 { layout::LC_RING_ID.span.mask() } else { 0 };
            for word in 0..4 {
                let mask = if word == 0 { !phase } else { u32::MAX };
                let bits = (g[word] ^ w[word]) & mask;
                if bits != 0 {
                    return Err(PacketError::Convention { ring, index, word, bits });
                }
            }
        }
    }
    Ok(())
}
