//! GCE requests (study §5.2, §9.3): the gradient packet builder — the role of
//! `al_sdma_m2m_build_gradient_packet`: a mode (compress or decompress), the header address for
//! W3 and an optional fused accumulate — and the compression step of the §9.3 EXT combo, which
//! [`crate::plan`] adds to a reduce with [`ReduceRequest::compress`](crate::ReduceRequest).
//!
//! Every packet has its own header: packet k's lies [`header_stride`] × k bytes after the first
//! (MODEL). Each header must sit in its payload's 4 GiB window, since W3 holds only its low 32
//! bits (the engine takes the high ones from the payload's address); the builder refuses a
//! layout that breaks this with "Failed to build buffer packet for gce op: …".

use cce_format::dtype::SdmaDtype;
use cce_format::gce::{COMPRESS_BLOCK, HEADER_BYTES};
use cce_format::limits;
use cce_format::op::SdmaCceType;
use cce_format::packet::{self, DataFlags, Gce, GceMode, Packet, PacketOp, Source};

use crate::error::HostError;
use crate::ring::{MAX_PROGRAM_DESCRIPTORS, Program};

/// The bytes between consecutive packets' headers when each packet holds `per_packet`
/// elements: the header and its scale table, rounded up to 16 bytes.
pub fn header_stride(per_packet: u64) -> u64 {
    (HEADER_BYTES as u64 + per_packet.div_ceil(COMPRESS_BLOCK as u64)).next_multiple_of(16)
}

/// The bytes the headers of `elems` elements take, packet by packet, on `arch`.
pub fn header_bytes(elems: u64, arch: u32) -> Result<u64, HostError> {
    let per = limits::max_cce_elements(arch)? as u64;
    Ok(elems.div_ceil(per) * header_stride(per.min(elems.max(1))))
}

/// One gradient packet program, as the runtime's gradient builder receives it.
#[derive(Clone, Debug, PartialEq)]
pub struct GradientRequest {
    /// Compress or decompress.
    pub mode: GceMode,
    /// Compress: 1..=32 sources of `dtype` (several: the fused accumulate); decompress: the one
    /// fp8 payload.
    pub srcs: Vec<u64>,
    /// Compress: where the payload goes (one byte per element); decompress: the values.
    pub dst: u64,
    /// The first packet's compression header (written when compressing, read when
    /// decompressing).
    pub header: u64,
    /// Elements.
    pub elems: u64,
    /// Compress: the sources' dtype; decompress: the output dtype (bf16, fp16 or fp32).
    pub dtype: SdmaDtype,
    /// NeuronCore arch.
    pub arch: u32,
}

/// Checks that the headers of `packets` packets from `header` and the payload `[payload,
/// payload + elems)` share one 4 GiB window, and returns the header's low 32 bits.
pub(crate) fn header_word(header: u64, payload: u64, elems: u64, packets: u64, stride: u64) -> Result<u32, HostError> {
    let window = |a: u64| a >> 32;
    let last = |a: u64, len: u64| a.checked_add(len.max(1) - 1);
    let (h_end, p_end) = (last(header, packets * stride), last(payload, elems));
    match (h_end, p_end) {
        (Some(h), Some(p))
            if window(header) == window(h) && window(payload) == window(p) && window(header) == window(payload) =>
        {
            Ok(header as u32)
        }
        _ => Err(HostError::GceBuffer("the headers and the payload must share one 4 GiB window (W3 holds 32 bits)")),
    }
}

/// Plans a gradient packet program: packets of at most the arch's CCE elements, each with its
/// header [`header_stride`] after the previous one's.
pub fn plan_gradient(req: &GradientRequest) -> Result<Program, HostError> {
    let bad = HostError::GceBuffer;
    if !cce_format::gce::is_source_dtype(req.dtype) {
        return Err(bad(concat!("the values must be ", cce_format::gce_source_dtypes!())));
    }
    if req.elems == 0 {
        return Err(HostError::Empty("element"));
    }
    if req.srcs.is_empty() {
        return Err(HostError::Empty("source"));
    }
    let n = req.srcs.len();
    let (in_dt, out_dt) = match req.mode {
        GceMode::Compress => {
            if n > packet::MAX_SOURCES {
                return Err(HostError::TooManySources(n));
            }
            (req.dtype, SdmaDtype::Fp8E5)
        }
        GceMode::Decompress => {
            if n != 1 {
                return Err(bad("decompressing reads one payload"));
            }
            (SdmaDtype::Fp8E5, req.dtype)
        }
    };
    let per_packet = (limits::max_cce_elements(req.arch)? as u64).min(req.elems);
    let packets = req.elems.div_ceil(per_packet);
    let stride = header_stride(per_packet);
    let payload = match req.mode {
        GceMode::Compress => req.dst,
        GceMode::Decompress => req.srcs[0],
    };
    let header = header_word(req.header, payload, req.elems, packets, stride)?;
    for &a in &req.srcs {
        a.checked_add(req.elems * in_dt.bytes() as u64)
            .ok_or(HostError::AddressOverflow { addr: a, bytes: req.elems * in_dt.bytes() as u64 })?;
    }
    let template = Packet {
        op: PacketOp::Cce(SdmaCceType::Gce),
        in_dt,
        accum_dt: SdmaDtype::Fp32,
        out_dt,
        elems: per_packet as u32,
        sources: req.srcs.iter().map(|&addr| Source { addr, fma: None, meta_aux: 0, int_en: false }).collect(),
        dests: vec![req.dst],
        clamp: None,
        seed: None,
        flags: DataFlags::default(),
        gce: Some(Gce { mode: req.mode, header, mid_dt: in_dt }),
    };
    let program = Program::new(template, req.elems, false, req.arch).with_header_stride(stride);
    let descriptors = program.tx_descriptors() + program.rx_descriptors();
    if descriptors > MAX_PROGRAM_DESCRIPTORS {
        return Err(HostError::TooLarge { descriptors, max: MAX_PROGRAM_DESCRIPTORS });
    }
    Ok(program)
}
