//! Runs of GCE packets: a packet followed by copies of itself shifted by one packet each (the
//! engine's runs, docs/MODEL.md E2), each with its own header one step further on (G3).
//!
//! ## Guarantees
//! - The bytes are those of executing the packets one at a time ([`crate::gce::execute`]):
//!   payload blocks never straddle two packets (a batch needs whole blocks per packet), the
//!   stochastic-rounding key is the payload's element address either way, and each packet gets
//!   its own header and scale table.
//! - A prefix of the run is batched only when its headers lie in one mapped span that overlaps
//!   no stream of the prefix, so no packet's header can be another packet's source or payload;
//!   decompressing, every header of the prefix is read and decoded before anything is written
//!   and must equal the first. Whatever is not batched runs one packet at a time, so a packet
//!   that faults faults exactly as it does alone, after the packets before it ran.
//! - A batch runs in pieces of whole packets ([`PIECE_ELEMS`] elements at most) through views of
//!   the engine's memory where storage allows, else through copies, with no allocation once the
//!   scratch buffers have grown.

use cce_format::gce::{COMPRESS_BLOCK, GceHeader, HEADER_BYTES};
use cce_format::packet::GceMode;
use cce_numerics::Exec;

use crate::engine::FaultReason;
use crate::exec::{Scratch, Work};
use crate::gce::{CompressReduce, GceScratch, GceWork, compress_values, expand_values, overlaps};
use crate::memory::Memory;

/// Most elements one piece of a batch holds (whole packets, at least one): its scratch stays
/// in the core's cache.
const PIECE_ELEMS: u64 = 1 << 15;

/// Most bytes a batch's header span covers (the span is read whole when decompressing).
const MAX_HEADER_SPAN: u64 = 1 << 20;

/// What a run did: packets done, bytes read and written, and the fault of the packet after
/// them.
pub(crate) type RunOutcome = (u64, (u64, u64), Option<FaultReason>);

/// A prefix of a run that executes as one batch.
struct Batch {
    /// Packets in it (at least 2).
    count: u64,
    /// Packet 0's header address, and the step from one header to the next.
    header: u64,
    step: u64,
    /// Every packet's header (they are equal).
    head: GceHeader,
    /// The packets' GCE work.
    gce: GceWork,
}

/// Executes `count` packets of the run of `w` (headers `header_step` apart): batches where
/// the rules above allow, one at a time elsewhere; stops at the first packet that faults.
pub(crate) fn execute_run(
    mem: &mut dyn Memory,
    w: &Work,
    count: u64,
    header_step: u32,
    exec: &Exec,
    scratch: &mut Scratch,
) -> RunOutcome {
    let (mut done, mut io) = (0u64, (0u64, 0u64));
    while done < count {
        let here = w.shifted(done, header_step);
        let batch = plan(mem, &here, count - done, header_step, &mut scratch.gce);
        let result = match &batch {
            Some(b) => run_batch(mem, &here, b, exec, scratch).map(|rw| (b.count, rw)),
            None => crate::gce::execute(mem, &here, exec, &mut scratch.gce).map(|rw| (1, rw)),
        };
        match result {
            Ok((n, (r, wr))) => {
                done += n;
                io = (io.0 + r, io.1 + wr);
            }
            Err(e) => return (done, io, Some(e)),
        }
    }
    (done, io, None)
}

/// The batch that starts at `w` (the run's next packet), if at least two packets qualify.
/// Decompressing, leaves the batch's scale tables in `scratch.scales`, packet after packet.
fn plan(mem: &dyn Memory, w: &Work, count: u64, header_step: u32, scratch: &mut GceScratch) -> Option<Batch> {
    let g = w.gce.as_ref()?;
    let step = u64::from(header_step);
    let n = w.elems;
    if count < 2 || step == 0 || n > u64::from(u32::MAX) {
        return None;
    }
    let compress = g.gce.mode == GceMode::Compress;
    if compress && w.spec.is_none() {
        return None;
    }
    let (buffer, size) = if compress { (w.dsts[0], w.out_size) } else { (w.srcs[0], w.in_size) };
    let header = g.gce.header_addr(buffer);
    // The first header: built (compressing) or read back (decompressing).
    let head = if compress {
        GceHeader::new(g.gce.mid_dt, n as u32, COMPRESS_BLOCK).ok()?
    } else {
        let mut b = [0u8; HEADER_BYTES];
        mem.read(header, &mut b).ok()?;
        GceHeader::decode(&b).ok().filter(|h| u64::from(h.elems) == n)?
    };
    let (region, block) = (head.region_bytes(), u64::from(head.block.elems()));
    if step < region || n % block != 0 {
        return None;
    }
    // As many packets as keep every header in the span's 4 GiB window and the span short.
    let fit = MAX_HEADER_SPAN.checked_sub(region)? / step + 1;
    let window = (1u64 << 32).checked_sub(region)?.checked_sub(u64::from(g.gce.header))? / step + 1;
    let mut count = count.min(fit).min(window);
    // Packet p's header is p steps on only while the buffer stays in the same 4 GiB window.
    let last_buffer = buffer.checked_add((count - 1) * n * size)?;
    if last_buffer >> 32 != buffer >> 32 {
        count = (((buffer | 0xFFFF_FFFF) - buffer) / (n * size) + 1).min(count);
    }
    // And as many as the header's region holds.
    let room = mem.remaining(header).checked_sub(region)?;
    count = count.min(room / step + 1);
    if count < 2 {
        return None;
    }
    let span = (count - 1) * step + region;
    mem.check(header, span).ok()?;
    // No header of the batch in a stream of it, no source in a destination and no two
    // destinations sharing a byte: then nothing one packet writes is read or written by another.
    let srcs: Vec<(u64, u64)> = w.srcs.iter().map(|&a| (a, count * n * w.in_size)).collect();
    let dsts: Vec<(u64, u64)> = w.dsts.iter().map(|&d| (d, count * n * w.out_size)).collect();
    let clash = srcs.iter().chain(&dsts).any(|&(a, l)| overlaps(header, span, a, l))
        || dsts.iter().enumerate().any(|(i, &(d, dl))| {
            srcs.iter().any(|&(a, l)| overlaps(d, dl, a, l))
                || dsts[i + 1..].iter().any(|&(e, el)| overlaps(d, dl, e, el))
        });
    if clash {
        return None;
    }
    if !compress {
        // Every header of the batch read now, equal to the first, its scale table kept.
        let bytes = &mut scratch.head;
        bytes.resize(span as usize, 0);
        mem.read(header, bytes).ok()?;
        let tables = head.scale_count() as usize;
        scratch.scales.clear();
        let mut good = 0;
        for p in 0..count as usize {
            let at = p * step as usize;
            if GceHeader::decode(&bytes[at..]).ok() != Some(head) {
                break;
            }
            scratch.scales.extend_from_slice(&bytes[at + HEADER_BYTES..at + HEADER_BYTES + tables]);
            good += 1;
        }
        count = good;
        if count < 2 {
            return None;
        }
    }
    Some(Batch { count, header, step, head, gce: g.clone() })
}

/// Runs a planned batch; returns the bytes read and written.
fn run_batch(
    mem: &mut dyn Memory,
    w: &Work,
    b: &Batch,
    exec: &Exec,
    scratch: &mut Scratch,
) -> Result<(u64, u64), FaultReason> {
    let g = &b.gce;
    let n = w.elems;
    let per = (PIECE_ELEMS / n).max(1);
    let block = b.head.block.elems() as usize;
    let tables = b.head.scale_count() as usize;
    let region = b.head.region_bytes();
    let compress = g.gce.mode == GceMode::Compress;
    let mut p0 = 0;
    if compress {
        scratch.gce.scales.resize(b.count as usize * tables, 0);
    }
    while p0 < b.count {
        let k = per.min(b.count - p0);
        let elems = (k * n) as usize;
        let srcs: Vec<(u64, usize)> =
            w.srcs.iter().map(|&a| (a + p0 * n * w.in_size, elems * w.in_size as usize)).collect();
        let dst = (w.dsts[0] + p0 * n * w.out_size, elems * w.out_size as usize);
        let GceScratch { inputs, narrow, wide, payload, scales, .. } = &mut scratch.gce;
        let scales = &mut scales[p0 as usize * tables..(p0 + k) as usize * tables];
        // (A compressing batch has its reduce: `plan` checked.)
        let mut piece = |views: &[&[u8]], out: &mut [u8]| match (compress, w.spec.as_ref()) {
            (true, Some(spec)) => {
                let reduce = CompressReduce { spec, mid: g.mid, first: dst.0 };
                compress_values(reduce, views, exec, (narrow, wide), block, scales, out)
            }
            _ => expand_values(g.out, views[0], block, scales, exec, wide, out),
        };
        let mut failed = None;
        let viewed = mem
            .with_views(&srcs, dst, &mut |views, out| failed = piece(views, out).err())
            .map_err(FaultReason::Memory)?;
        if !viewed {
            if inputs.len() < srcs.len() {
                inputs.resize_with(srcs.len(), Vec::new);
            }
            for (buf, &(a, l)) in inputs.iter_mut().zip(&srcs) {
                buf.resize(l, 0);
                mem.read(a, buf).map_err(FaultReason::Memory)?;
            }
            payload.resize(dst.1, 0);
            let views: Vec<&[u8]> = inputs[..srcs.len()].iter().map(Vec::as_slice).collect();
            piece(&views, payload.as_mut_slice())?;
            mem.write(dst.0, payload).map_err(FaultReason::Memory)?;
        }
        if let Some(e) = failed {
            return Err(e);
        }
        p0 += k;
    }
    let count = b.count;
    if compress {
        let out_bytes = count * n * w.out_size;
        crate::exec::replicate(mem, w.dsts[0], &w.dsts[1..], out_bytes, &mut scratch.gce.payload)?;
        write_headers(mem, b, tables, &mut scratch.gce)?;
        let read = count * n * w.in_size * w.srcs.len() as u64;
        Ok((read, count * (n * w.out_size * w.dsts.len() as u64 + region)))
    } else {
        Ok((count * (n * w.in_size + region), count * n * w.out_size))
    }
}

/// Writes every packet's header and scale table, in one write when they are back to back.
fn write_headers(mem: &mut dyn Memory, b: &Batch, tables: usize, scratch: &mut GceScratch) -> Result<(), FaultReason> {
    let encoded = b.head.encode();
    let region = HEADER_BYTES + tables;
    let head = &mut scratch.head;
    head.clear();
    for table in scratch.scales.chunks_exact(tables).take(b.count as usize) {
        head.extend_from_slice(&encoded);
        head.extend_from_slice(table);
    }
    if b.step == region as u64 {
        return mem.write(b.header, head).map_err(FaultReason::Memory);
    }
    for (p, one) in head.chunks_exact(region).enumerate() {
        mem.write(b.header + p as u64 * b.step, one).map_err(FaultReason::Memory)?;
    }
    Ok(())
}
