//! From a parsed packet to the numerics call, and the data movement around it.

use cce_format::SdmaDtype;
use cce_format::descriptor::FmaOperand;
use cce_format::op::SdmaCceType;
use cce_format::packet::{Packet, PacketOp};
use cce_numerics::{AccumType, Exec, FmaSource, NumType, Op, Operand, ReduceSpec, Rounding, Scalar};

use crate::engine::FaultReason;
use crate::memory::{MemError, Memory};

/// What a packet asks the engine to do, resolved and checked.
#[derive(Clone, Debug)]
pub(crate) struct Work {
    /// `None` for a plain copy.
    pub(crate) spec: Option<ReduceSpec>,
    pub(crate) srcs: Vec<u64>,
    pub(crate) dsts: Vec<u64>,
    /// Elements per source (bytes for a copy).
    pub(crate) elems: u64,
    pub(crate) in_size: u64,
    pub(crate) out_size: u64,
    /// A GCE packet (gradient packet or EXT + GCE combo): runs one packet at a time through
    /// [`crate::gce::execute`].
    pub(crate) gce: Option<crate::gce::GceWork>,
}

impl Work {
    /// Packet `p` of a run of this packet: every stream `p` packets further on and, for a GCE
    /// packet, the header word `p` header steps further on (wrapping in its 32 bits, as the
    /// descriptors' words do). The caller checked that the run's packets are in bounds.
    pub(crate) fn shifted(&self, p: u64, header_step: u32) -> Work {
        let mut w = self.clone();
        for a in &mut w.srcs {
            *a += p * self.elems * self.in_size;
        }
        for a in &mut w.dsts {
            *a += p * self.elems * self.out_size;
        }
        if let Some(g) = &mut w.gce {
            g.gce.header = g.gce.header.wrapping_add((p as u32).wrapping_mul(header_step));
        }
        w
    }
}

fn num(d: SdmaDtype, role: &'static str) -> Result<NumType, FaultReason> {
    NumType::from_sdma(d).map_err(|_| FaultReason::Dtype { role, dtype: d.name() })
}

fn operand(o: FmaOperand) -> Result<Operand, FaultReason> {
    Operand::from_bits(o.bits() as u8).map_err(|_| FaultReason::Selector(o.bits() as u8))
}

/// The clamp constant in its dtype (MODEL H4: i8 u8 i16 u16 bf16 fp16), as a numerics scalar.
fn clamp_scalar(const_dt: u32, bits: u32) -> Result<Scalar, FaultReason> {
    let d = SdmaDtype::from_nibble(const_dt);
    Ok(match d {
        SdmaDtype::I8 => Scalar::I64(bits as u8 as i8 as i64),
        SdmaDtype::U8 => Scalar::U64((bits & 0xFF) as u64),
        SdmaDtype::I16 => Scalar::I64(bits as u16 as i16 as i64),
        SdmaDtype::U16 => Scalar::U64((bits & 0xFFFF) as u64),
        SdmaDtype::Bf16 => Scalar::F64(half::bf16::from_bits(bits as u16).to_f64()),
        SdmaDtype::Fp16 => Scalar::F64(half::f16::from_bits(bits as u16).to_f64()),
        _ => return Err(FaultReason::Dtype { role: "clamp constant", dtype: d.name() }),
    })
}

/// Resolves a packet for queue `queue` (the stochastic-rounding stream).
pub(crate) fn resolve(p: &Packet, queue: u32) -> Result<Work, FaultReason> {
    let srcs: Vec<u64> = p.sources.iter().map(|s| s.addr).collect();
    let elems = p.elems as u64;
    let gce = p
        .gce
        .as_ref()
        .map(|g| crate::gce::resolve(g, p.in_dt, p.out_dt, p.sources.len(), p.dests.len()))
        .transpose()?;
    let decompress = gce.as_ref().is_some_and(|g| g.gce.mode == cce_format::packet::GceMode::Decompress);
    let spec = match p.op {
        PacketOp::Copy => None,
        _ if decompress => None,
        PacketOp::Cce(op) => {
            let in_type = num(p.in_dt, "in")?;
            // Compressing, the reduce rounds to the mid dtype; the codec makes the payload.
            let out_type = match &gce {
                Some(g) => g.mid,
                None => num(p.out_dt, "out")?,
            };
            let accum_type = AccumType::from_sdma(p.accum_dt)
                .map_err(|_| FaultReason::Dtype { role: "accum", dtype: p.accum_dt.name() })?;
            let clamp = p.clamp.map(|c| clamp_scalar(c.const_dt.get(), c.bits)).transpose()?;
            let op = match op {
                SdmaCceType::Add => Op::Add,
                SdmaCceType::Min => Op::Min { clamp },
                SdmaCceType::Max => Op::Max { clamp },
                SdmaCceType::Fma => Op::Fma(
                    p.sources
                        .iter()
                        .map(|s| {
                            let f = s.fma.ok_or(FaultReason::Unsupported("FMA source without operands"))?;
                            Ok(FmaSource {
                                scale: f32::from_bits(f.scale_bits),
                                a: operand(f.a)?,
                                b: operand(f.b)?,
                                c: operand(f.c)?,
                            })
                        })
                        .collect::<Result<_, FaultReason>>()?,
                ),
                // A gradient packet's accumulate (one source: the values themselves).
                SdmaCceType::Gce => Op::Add,
                SdmaCceType::Ext => return Err(FaultReason::Unsupported("EXT as a packet op")),
            };
            let rounding = match p.seed {
                None => Rounding::Rne,
                Some(seed) => Rounding::Stochastic { seed: seed as u64, stream: queue as u64 },
            };
            Some(ReduceSpec { op, in_type, accum_type, out_type, rounding, saturate: false })
        }
    };
    Ok(Work {
        spec,
        srcs,
        dsts: p.dests.clone(),
        elems,
        in_size: p.in_dt.bytes().max(1) as u64,
        out_size: p.out_dt.bytes().max(1) as u64,
        gce,
    })
}

/// The reduce a packet runs on queue `queue` (whose number keys stochastic rounding), as the
/// executor resolves it: `None` for a plain copy or a GCE decompress; a compressing packet's
/// reduce rounds to its mid dtype (the codec then makes the payload). An element at byte
/// address `a` of the packet's first destination has stochastic-rounding index
/// `a / out_size` (the payload's byte address, compressing).
///
/// # Errors
/// What the executor would fault the packet with: a dtype, selector or op it cannot run.
pub fn packet_spec(p: &Packet, queue: u32) -> Result<Option<ReduceSpec>, FaultReason> {
    resolve(p, queue).map(|w| w.spec)
}

/// Checks every stream of `count` consecutive packets of `w` (addresses advancing by one
/// packet each) against memory: in bounds, no overflow.
pub(crate) fn check_bounds(mem: &dyn Memory, w: &Work, count: u64) -> Result<(), MemError> {
    let total = w.elems * count;
    for &a in &w.srcs {
        mem.check(a, total * w.in_size)?;
    }
    for &a in &w.dsts {
        mem.check(a, total * w.out_size)?;
    }
    Ok(())
}

/// Largest elements one numerics call takes (keeps scratch buffers bounded).
const PIECE_ELEMS: u64 = 1 << 23;

/// How many consecutive packets of `w` (addresses advancing one packet each) stay inside
/// their streams' regions: at most `limit`, from one region lookup per stream.
pub(crate) fn packets_in_bounds(mem: &dyn Memory, w: &Work, limit: u64) -> u64 {
    let (sb, db) = (w.elems * w.in_size, w.elems * w.out_size);
    let mut n = limit;
    for &a in &w.srcs {
        n = n.min(mem.remaining(a) / sb.max(1));
    }
    for &a in &w.dsts {
        n = n.min(mem.remaining(a) / db.max(1));
    }
    n
}

/// Executes `count` consecutive packets of `w` as one stream of `w.elems · count` elements.
/// Bounds were checked; the numerics spec was resolved. Returns the bytes read and written.
pub(crate) fn execute(
    mem: &mut dyn Memory,
    w: &Work,
    count: u64,
    exec: &Exec,
    scratch: &mut Scratch,
) -> Result<(u64, u64), FaultReason> {
    let total = w.elems * count;
    let mut done = 0u64;
    let d0 = w.dsts[0];
    while done < total {
        // The piece: as many elements as every stream holds contiguously from here. Viewed in
        // place, it is one numerics call however long (one fan-out to the threads); copied, at
        // most `PIECE_ELEMS` (the scratch buffers' bound).
        let mut n = total - done;
        for &a in &w.srcs {
            n = n.min(mem.contiguous(a + done * w.in_size) / w.in_size);
        }
        n = n.min(mem.contiguous(d0 + done * w.out_size) / w.out_size);
        let n = n.max(1).min(total - done);
        let piece = |n: u64| -> (Vec<(u64, usize)>, (u64, usize)) {
            let srcs = w.srcs.iter().map(|&a| (a + done * w.in_size, (n * w.in_size) as usize)).collect();
            (srcs, (d0 + done * w.out_size, (n * w.out_size) as usize))
        };
        let (srcs, dst) = piece(n);
        let first = dst.0 / w.out_size;
        let mut err = None;
        // In place where storage allows: one pass from the sources' bytes to the destination's.
        let viewed = mem
            .with_views(&srcs, dst, &mut |views, out| match &w.spec {
                // A copy has one source of its own length (the parser's rule).
                None => {
                    if let Some(v) = views.first().filter(|v| v.len() == out.len()) {
                        out.copy_from_slice(v);
                    }
                }
                Some(spec) => {
                    if let Err(e) = cce_numerics::reduce_with(spec, views, &mut [out], first, exec) {
                        err = Some(e);
                    }
                }
            })
            .map_err(FaultReason::Memory)?;
        if let Some(e) = err {
            return Err(FaultReason::Numerics(e));
        }
        let n = if viewed { n } else { n.min(PIECE_ELEMS) };
        if !viewed {
            let (srcs, dst) = piece(n);
            scratch.srcs.resize(srcs.len(), Vec::new());
            for (buf, &(a, l)) in scratch.srcs.iter_mut().zip(&srcs) {
                buf.resize(l, 0);
                mem.read(a, buf).map_err(FaultReason::Memory)?;
            }
            match &w.spec {
                None => mem.write(dst.0, &scratch.srcs[0]).map_err(FaultReason::Memory)?,
                Some(spec) => {
                    scratch.out.resize(dst.1, 0);
                    let views: Vec<&[u8]> = scratch.srcs.iter().map(Vec::as_slice).collect();
                    cce_numerics::reduce_with(spec, &views, &mut [scratch.out.as_mut_slice()], first, exec)
                        .map_err(FaultReason::Numerics)?;
                    mem.write(dst.0, &scratch.out).map_err(FaultReason::Memory)?;
                }
            }
        }
        done += n;
    }
    // Replication: the result, copied to every other destination.
    replicate(mem, d0, &w.dsts[1..], total * w.out_size, &mut scratch.out)?;
    let out_bytes = total * w.out_size;
    Ok((total * w.in_size * w.srcs.len() as u64, out_bytes * w.dsts.len() as u64))
}

/// Copies `out_bytes` bytes at `d0` to each of `others`, through views where storage allows,
/// else through `buf`.
pub(crate) fn replicate(
    mem: &mut dyn Memory,
    d0: u64,
    others: &[u64],
    out_bytes: u64,
    buf: &mut Vec<u8>,
) -> Result<(), FaultReason> {
    for &d in others {
        let mut off = 0;
        while off < out_bytes {
            let n = (out_bytes - off).min(PIECE_ELEMS * 8);
            let n = n.min(mem.contiguous(d0 + off)).min(mem.contiguous(d + off)).max(1);
            let copied = mem
                .with_views(&[(d0 + off, n as usize)], (d + off, n as usize), &mut |v, out| out.copy_from_slice(v[0]))
                .map_err(FaultReason::Memory)?;
            if !copied {
                buf.resize(n as usize, 0);
                mem.read(d0 + off, buf).map_err(FaultReason::Memory)?;
                mem.write(d + off, buf).map_err(FaultReason::Memory)?;
            }
            off += n;
        }
    }
    Ok(())
}

/// Reusable buffers for the copying path and the GCE packets.
#[derive(Default)]
pub(crate) struct Scratch {
    srcs: Vec<Vec<u8>>,
    out: Vec<u8>,
    pub(crate) gce: crate::gce::GceScratch,
}
