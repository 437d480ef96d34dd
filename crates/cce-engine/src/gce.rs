//! GCE packets (study §5.2, §9.3): the gradient packet (compress or decompress) and the EXT +
//! GCE combo (a reduce whose result is compressed), with the project's codec — block-scaled fp8
//! e5m2 with one E8M0 scale per block of [`COMPRESS_BLOCK`] elements (`cce_numerics::gce`, header
//! layout `cce_format::gce`; all MODEL, docs/MODEL.md "GCE").
//!
//! ## Guarantees
//! - Everything is checked before the first write: the packet's dtypes for its mode ("Failed to
//!   build buffer packet for gce op"), the header's address and extent ("invalid compression
//!   header addr …" / "invalid decompression header addr …": unmapped, or overlapping the
//!   packet's own buffers), the header itself when decompressing ("Failed to build
//!   decompression header: …"); a faulting GCE packet writes nothing.
//! - Compressing writes the payload (one fp8 byte per element) to every destination and the
//!   header with its scale table at the header address; decompressing writes the values in the
//!   output dtype (rounded to nearest even from the exact decoded f32).
//! - Deterministic and independent of threads: the codec is a pure function of the values.
//! - Per packet, the values pass through buffers the engine keeps (`GceScratch`): the
//!   reduce's output, its exact widening to f32 (the crate's widening kernels) and the codec's
//!   vector kernels (`cce_numerics::gce`; expanding to bf16 rounds in the same pass), with no
//!   allocation once the buffers have grown. `compress_values` and `expand_values` are the
//!   codec steps both this path and the batched runs (`crate::gce_run`) take.

use cce_format::SdmaDtype;
use cce_format::gce::{COMPRESS_BLOCK, GceHeader};
use cce_format::packet::{Gce, GceMode};
use cce_numerics::{Exec, NumType, ReduceSpec, Rounding};

use crate::engine::FaultReason;
use crate::memory::Memory;

/// Why a GCE packet cannot run: the study's three messages.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GceFault {
    /// The header's address is unmapped, too short for the header, or overlaps the packet's
    /// buffers.
    #[error("invalid {}compression header addr {addr:x}", if *.decompress { "de" } else { "" })]
    HeaderAddr {
        /// Decompressing (`de` in the message).
        decompress: bool,
        /// The full header address.
        addr: u64,
    },
    /// The header read back does not describe this packet's payload.
    #[error("Failed to build decompression header: {0}")]
    Header(String),
    /// The packet's buffers do not fit its mode.
    #[error("Failed to build buffer packet for gce op: {0}")]
    Buffer(&'static str),
}

/// A GCE packet resolved: what to do around the numerics.
#[derive(Clone, Debug)]
pub(crate) struct GceWork {
    pub(crate) gce: Gce,
    /// Compressing: the dtype the reduce rounds to before compression.
    pub(crate) mid: NumType,
    /// Decompressing: the output dtype.
    pub(crate) out: NumType,
}

/// Checks a GCE packet's dtypes and shape for its mode; `None` for a packet without GCE.
pub(crate) fn resolve(
    gce: &Gce,
    in_dt: SdmaDtype,
    out_dt: SdmaDtype,
    sources: usize,
    dests: usize,
) -> Result<GceWork, FaultReason> {
    let bad = |why| FaultReason::Gce(GceFault::Buffer(why));
    let num = |d: SdmaDtype| NumType::from_sdma(d).map_err(|_| bad("a dtype the codec cannot use"));
    match gce.mode {
        GceMode::Compress => {
            if out_dt != SdmaDtype::Fp8E5 {
                return Err(bad("compressing writes an fp8e5 payload: the destination dtype must be fp8e5"));
            }
            if !cce_format::gce::is_source_dtype(gce.mid_dt) {
                return Err(bad(concat!("the values compressed must be ", cce_format::gce_source_dtypes!())));
            }
            Ok(GceWork { gce: *gce, mid: num(gce.mid_dt)?, out: num(out_dt)? })
        }
        GceMode::Decompress => {
            if in_dt != SdmaDtype::Fp8E5 || sources != 1 || dests != 1 {
                return Err(bad("decompressing reads one fp8e5 payload and writes one destination"));
            }
            if !cce_format::gce::is_source_dtype(out_dt) {
                return Err(bad(concat!("decompressed values are ", cce_format::gce_source_dtypes!())));
            }
            Ok(GceWork { gce: *gce, mid: num(in_dt)?, out: num(out_dt)? })
        }
    }
}

/// Whether `[a, a + alen)` and `[b, b + blen)` share a byte.
pub(crate) fn overlaps(a: u64, alen: u64, b: u64, blen: u64) -> bool {
    a < b.saturating_add(blen) && b < a.saturating_add(alen)
}

/// The header address of a packet, checked: mapped for `len` bytes and clear of `buffers`
/// (address, bytes).
fn header_at(mem: &dyn Memory, g: &GceWork, buffer: u64, len: u64, buffers: &[(u64, u64)]) -> Result<u64, FaultReason> {
    let addr = g.gce.header_addr(buffer);
    let decompress = g.gce.mode == GceMode::Decompress;
    let clash = buffers.iter().any(|&(a, l)| overlaps(addr, len, a, l));
    if mem.check(addr, len).is_err() || clash {
        return Err(FaultReason::Gce(GceFault::HeaderAddr { decompress, addr }));
    }
    Ok(addr)
}

/// The buffers GCE packets reuse from one packet to the next (one set per engine).
#[derive(Debug, Default)]
pub(crate) struct GceScratch {
    /// The sources' bytes.
    pub(crate) inputs: Vec<Vec<u8>>,
    /// The reduce's output (compressing) or the output dtype's bytes (decompressing).
    pub(crate) narrow: Vec<u8>,
    /// The values as little-endian f32 bytes, the codec's side.
    pub(crate) wide: Vec<u8>,
    /// The scale table.
    pub(crate) scales: Vec<u8>,
    /// The compressed payload.
    pub(crate) payload: Vec<u8>,
    /// The header (and, compressing, its scale table after it).
    pub(crate) head: Vec<u8>,
}

/// Executes one GCE packet `w` (its `gce` set): compressing, `w.spec` is the reduce (its
/// output type the mid dtype) over `w.srcs`; decompressing, the one source is the payload.
/// Bounds were checked. Returns the bytes read and written.
pub(crate) fn execute(
    mem: &mut dyn Memory,
    w: &crate::exec::Work,
    exec: &Exec,
    scratch: &mut GceScratch,
) -> Result<(u64, u64), FaultReason> {
    let Some(g) = &w.gce else { return Err(FaultReason::Gce(GceFault::Buffer("not a GCE packet"))) };
    let (spec, srcs, dsts, elems, in_size) = (w.spec.as_ref(), &w.srcs[..], &w.dsts[..], w.elems, w.in_size);
    let n = elems as usize;
    let GceScratch { inputs, narrow, wide, scales, payload, head } = scratch;
    if inputs.len() < srcs.len() {
        inputs.resize_with(srcs.len(), Vec::new);
    }
    let inputs = &mut inputs[..srcs.len()];
    for (buf, &a) in inputs.iter_mut().zip(srcs) {
        buf.resize(n * in_size as usize, 0);
        mem.read(a, buf).map_err(FaultReason::Memory)?;
    }
    let read: u64 = inputs.iter().map(|b| b.len() as u64).sum();
    let own: Vec<(u64, u64)> = srcs
        .iter()
        .map(|&a| (a, elems * in_size))
        .chain(dsts.iter().map(|&d| (d, elems * g.out.size() as u64)))
        .collect();
    match (g.gce.mode, spec) {
        (GceMode::Compress, Some(spec)) => {
            let header = GceHeader::new(g.gce.mid_dt, elems as u32, COMPRESS_BLOCK)
                .map_err(|_| FaultReason::Gce(GceFault::Buffer("no header describes these values")))?;
            let region = header.region_bytes();
            let at = header_at(mem, g, dsts[0], region, &own)?;
            scales.resize(header.scale_count() as usize, 0);
            payload.resize(n, 0);
            let views: Vec<&[u8]> = inputs.iter().map(Vec::as_slice).collect();
            let block = COMPRESS_BLOCK as usize;
            let reduce = CompressReduce { spec, mid: g.mid, first: dsts[0] };
            compress_values(reduce, &views, exec, (narrow, wide), block, scales, payload)?;
            for &d in dsts {
                mem.write(d, payload).map_err(FaultReason::Memory)?;
            }
            head.clear();
            head.extend_from_slice(&header.encode());
            head.extend_from_slice(scales);
            mem.write(at, head).map_err(FaultReason::Memory)?;
            Ok((read, (n * dsts.len()) as u64 + region))
        }
        _ => {
            let at = header_at(mem, g, srcs[0], cce_format::gce::HEADER_BYTES as u64, &own)?;
            head.resize(cce_format::gce::HEADER_BYTES, 0);
            mem.read(at, head).map_err(FaultReason::Memory)?;
            let header = GceHeader::decode(head).map_err(|e| FaultReason::Gce(GceFault::Header(e.to_string())))?;
            if u64::from(header.elems) != elems {
                return Err(FaultReason::Gce(GceFault::Header(format!(
                    "it holds {} elements, the packet {elems}",
                    header.elems
                ))));
            }
            let at = header_at(mem, g, srcs[0], header.region_bytes(), &own)?;
            scales.resize(header.scale_count() as usize, 0);
            mem.read(at + cce_format::gce::HEADER_BYTES as u64, scales).map_err(FaultReason::Memory)?;
            narrow.resize(n * g.out.size(), 0);
            expand_values(g.out, &inputs[0], header.block.elems() as usize, scales, exec, wide, narrow)?;
            mem.write(dsts[0], narrow).map_err(FaultReason::Memory)?;
            Ok((read + header.region_bytes(), narrow.len() as u64))
        }
    }
}

/// The reduce a compression runs before its codec: its spec, the mid dtype it rounds to, and
/// the payload's first element address (which keys stochastic rounding).
pub(crate) struct CompressReduce<'a> {
    /// The reduce.
    pub(crate) spec: &'a ReduceSpec,
    /// The dtype the reduce rounds to.
    pub(crate) mid: NumType,
    /// The payload's first element address.
    pub(crate) first: u64,
}

/// Compresses one packet's values, or a batch's piece of whole packets: the reduce rounded to
/// the mid dtype (stochastic rounding keyed from the payload's first element address), widened
/// exactly to f32, compressed into `out` and `scales`.
pub(crate) fn compress_values(
    reduce: CompressReduce<'_>,
    views: &[&[u8]],
    exec: &Exec,
    (narrow, wide): (&mut Vec<u8>, &mut Vec<u8>),
    block: usize,
    scales: &mut [u8],
    out: &mut [u8],
) -> Result<(), FaultReason> {
    let CompressReduce { spec, mid, first } = reduce;
    narrow.resize(out.len() * mid.size(), 0);
    cce_numerics::reduce_with(spec, views, &mut [narrow.as_mut_slice()], first, exec).map_err(FaultReason::Numerics)?;
    wide.resize(out.len() * 4, 0);
    cce_numerics::convert(mid, NumType::F32, narrow, wide, Rounding::Rne, false).map_err(FaultReason::Numerics)?;
    cce_numerics::gce::compress_le(wide, block, scales, out, exec.max_isa)
        .map_err(|_| FaultReason::Gce(GceFault::Buffer("the codec refused the sizes")))
}

/// Expands one packet's payload, or a batch's piece of whole packets: the values rounded to
/// the output dtype (RNE) into `out`, in one pass for bf16, through f32 otherwise.
pub(crate) fn expand_values(
    to: NumType,
    payload: &[u8],
    block: usize,
    scales: &[u8],
    exec: &Exec,
    wide: &mut Vec<u8>,
    out: &mut [u8],
) -> Result<(), FaultReason> {
    let bad = |_| FaultReason::Gce(GceFault::Header("its scale table does not fit the payload".into()));
    if to == NumType::Bf16 {
        return cce_numerics::gce::decompress_bf16_le(scales, payload, block, out, exec.max_isa).map_err(bad);
    }
    wide.resize(payload.len() * 4, 0);
    cce_numerics::gce::decompress_le(scales, payload, block, wide, exec.max_isa).map_err(bad)?;
    cce_numerics::convert(NumType::F32, to, wide, out, Rounding::Rne, false).map_err(FaultReason::Numerics)
}
