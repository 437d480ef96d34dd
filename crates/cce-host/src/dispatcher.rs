//! The dispatcher: a request, the study's rules, and the packets that come out.

use cce_format::bits::UInt;
use cce_format::cce_info::CceInfo;
use cce_format::descriptor::{DEFAULT_FMA_SELECTORS, FmaOperand, MAX_DATA_DESC_BYTES};
use cce_format::dtype::{self, SdmaDtype};
use cce_format::limits::{self, PrioCaps};
use cce_format::op::{self, SdmaCceType};
use cce_format::packet::{self, Clamp, DataFlags, FmaOperands, Gce, GceMode, Packet, PacketOp, Source};

use crate::error::HostError;
use crate::ring::{MAX_PROGRAM_DESCRIPTORS, Program};

/// How the accumulator is rounded to the output dtype.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Rounding {
    /// Round to nearest, ties to even (the default).
    #[default]
    Rne,
    /// Stochastic rounding with a 32-bit seed: each packet starts with a seed-init descriptor
    /// (study §2.5, §3.4).
    Stochastic {
        /// The per-queue RNG seed.
        seed: u32,
    },
}

/// One reduce, as `add_dma_packet_cce` receives it.
#[derive(Clone, Debug, PartialEq)]
pub struct ReduceRequest {
    /// The kbin op value (`kbin_dma_desc_op`: FMA 1, ADD 2, MIN 3, MAX 4; COPY 0 and TRANSPOSE 5
    /// reach the dispatcher and are refused).
    pub op: u64,
    /// The 140-byte `kbin_dma_desc_cce_info_t`, or none (allowed for ADD, and MIN/MAX without a
    /// constant).
    pub cce_info: Option<CceInfo>,
    /// Source addresses, one per source stream.
    pub srcs: Vec<u64>,
    /// Destination addresses.
    pub dsts: Vec<u64>,
    /// Elements per source.
    pub elems: u64,
    /// Source dtype.
    pub in_dt: SdmaDtype,
    /// Accumulate dtype.
    pub accum_dt: SdmaDtype,
    /// Output dtype.
    pub out_dt: SdmaDtype,
    /// NeuronCore arch (2, 3, 4).
    pub arch: u32,
    /// Rounding of accumulator → output.
    pub rounding: Rounding,
    /// QoS priority class (0..=4).
    pub prio: u32,
    /// Per-priority packet caps.
    pub caps: PrioCaps,
    /// FMA operand selectors (a, b, c) for every source; the dispatcher's default is
    /// input · scale + stored.
    pub selectors: [FmaOperand; 3],
    /// Compress the result (the §9.3 EXT + GCE combo): the reduce rounds to `out_dt`, the
    /// codec writes an fp8e5 payload to every destination (one byte per element) and each
    /// packet's header from this address on ([`crate::gradient::header_stride`] apart).
    pub compress: Option<u64>,
}

/// A reduce's three dtypes, as [`ReduceRequest::new`] takes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReduceDtypes {
    /// Source dtype.
    pub in_dt: SdmaDtype,
    /// Accumulate dtype.
    pub accum_dt: SdmaDtype,
    /// Output dtype.
    pub out_dt: SdmaDtype,
}

impl ReduceRequest {
    /// A request with the defaults: no cce_info, RNE, priority 0, MODEL caps, default
    /// selectors.
    pub fn new(op: u64, srcs: Vec<u64>, dsts: Vec<u64>, elems: u64, dtypes: ReduceDtypes, arch: u32) -> Self {
        let ReduceDtypes { in_dt, accum_dt, out_dt } = dtypes;
        ReduceRequest {
            op,
            cce_info: None,
            srcs,
            dsts,
            elems,
            in_dt,
            accum_dt,
            out_dt,
            arch,
            rounding: Rounding::Rne,
            prio: 0,
            caps: PrioCaps::default(),
            selectors: DEFAULT_FMA_SELECTORS,
            compress: None,
        }
    }

    /// Sets a cce_info with FMA scales (fp32), `num_sources` and `num_dests` from the
    /// address lists. More than 32 scales are an error.
    pub fn with_fma_scales(mut self, scales: &[f32]) -> Result<Self, HostError> {
        let mut info = self.base_info();
        info.set_scale_dtype(dtype::KbinDtype::Fp32.value());
        for (i, s) in scales.iter().enumerate() {
            info.set_scale(i, *s)?;
        }
        self.cce_info = Some(info);
        Ok(self)
    }

    /// Sets a cce_info with a MIN/MAX clamp constant (`kbin_dtype`, bits).
    pub fn with_min_max_constant(mut self, constant: MinMaxConstant) -> Self {
        let mut info = self.base_info();
        info.set_use_constant(true);
        info.set_constant_dtype(constant.kbin_dtype);
        info.set_constant(constant.bits);
        self.cce_info = Some(info);
        self
    }

    fn base_info(&self) -> CceInfo {
        let mut info = CceInfo::new();
        info.set_num_sources(self.srcs.len() as u32);
        info.set_num_dests(self.dsts.len() as u32);
        info
    }
}

/// A MIN/MAX clamp constant as `cce_info.min_max_info` carries it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MinMaxConstant {
    /// The constant's kbin dtype value.
    pub kbin_dtype: u32,
    /// Its bits, low bits first (a bf16 constant in the low 16 bits).
    pub bits: u32,
}

/// Whether an SDMA dtype can be a MIN/MAX constant: the descriptor's const-dtype field is 3
/// bits and W3 holds 32 bits, so the SDMA value must be below 8 and its size at most 4 bytes:
/// i8 u8 i16 u16 bf16 fp16 (MODEL; docs/MODEL.md H4).
pub fn min_max_constant_supported(d: SdmaDtype) -> bool {
    d.value() < 8 && (1..=4).contains(&d.bytes())
}

fn checked_end(addr: u64, bytes: u64) -> Result<(), HostError> {
    addr.checked_add(bytes).map(drop).ok_or(HostError::AddressOverflow { addr, bytes })
}

/// The EXT combo packet of study §5.1 for `base` (which carries every destination): arch > 2
/// only, and the packet must fit the arch's descriptors-per-packet limits, else
/// "CCE concatenation not supported".
pub fn combo_packet(base: Packet, arch: u32) -> Result<Packet, HostError> {
    let (max_tx, max_rx) = packet::max_descs_per_packet(arch);
    if !limits::replication_allowed(arch) || base.tx_count() > max_tx || base.dests.len() > max_rx {
        return Err(HostError::Concatenation);
    }
    Ok(base)
}

/// Applies the dispatcher's rules and plans the packets (study §2.1, §4, §5.1, §7.1).
pub fn plan(req: &ReduceRequest) -> Result<Program, HostError> {
    // add_dma_packet_cce converts the op first: COPY, TRANSPOSE, INVALID → "Unsupported CCE Op!".
    let sdma_op = op::kbin_cce_op_to_sdma_cce_op(req.op)?;
    check_counts(req)?;
    let (fma, clamp) = op_operands(req, sdma_op)?;
    let (n, m) = (req.srcs.len(), req.dsts.len());
    if m > 1 && !limits::replication_allowed(req.arch) {
        return Err(HostError::Replication);
    }
    let max_elems = limits::max_cce_elements(req.arch)? as u64;
    check_dtypes(req)?;
    let per_packet = packet_elems(req, max_elems)?;
    let in_size = req.in_dt.bytes() as u64;
    // Compressed, every destination holds one fp8 byte per element.
    let payload_dt = if req.compress.is_some() { SdmaDtype::Fp8E5 } else { req.out_dt };
    let out_size = payload_dt.bytes() as u64;
    debug_assert!(per_packet * in_size.max(out_size) <= MAX_DATA_DESC_BYTES as u64);
    for &a in &req.srcs {
        checked_end(a, req.elems * in_size)?;
    }
    for &a in &req.dsts {
        checked_end(a, req.elems * out_size)?;
    }
    let sources = (0..n)
        .map(|i| Source {
            addr: req.srcs[i],
            fma: fma.map(|info| FmaOperands {
                a: req.selectors[0],
                b: req.selectors[1],
                c: req.selectors[2],
                scale_bits: info.scale_bits(i).unwrap_or(0),
            }),
            meta_aux: 0,
            int_en: false,
        })
        .collect();
    let packets = req.elems.div_ceil(per_packet);
    let gce = compress_gce(req, per_packet, packets)?;
    let template = Packet {
        op: PacketOp::Cce(sdma_op),
        in_dt: req.in_dt,
        accum_dt: req.accum_dt,
        out_dt: payload_dt,
        elems: per_packet as u32,
        sources,
        dests: req.dsts.clone(),
        clamp,
        seed: match req.rounding {
            Rounding::Rne => None,
            Rounding::Stochastic { seed } => Some(seed),
        },
        flags: DataFlags::default(),
        gce,
    };
    let template = if template.is_combo() { combo_packet(template, req.arch)? } else { template };
    let (max_tx, max_rx) = packet::max_descs_per_packet(req.arch);
    if template.tx_count() > max_tx || m > max_rx {
        return Err(HostError::Concatenation);
    }
    // §4.2: a single-source, same-dtype, 1-byte transfer runs in u16 lanes. The runtime
    // promotes tx and rx dtypes; MODEL: the accumulator too, so the lanes carry the bytes.
    let promote =
        n == 1 && req.in_dt == req.out_dt && req.in_dt.bytes() == 1 && sdma_op != SdmaCceType::Fma && clamp.is_none();
    let stride = if req.compress.is_some() { crate::gradient::header_stride(per_packet) } else { 0 };
    let program =
        Program::new(template, req.elems, promote && req.compress.is_none(), req.arch).with_header_stride(stride);
    let descriptors = program.tx_descriptors() + program.rx_descriptors();
    if descriptors > MAX_PROGRAM_DESCRIPTORS {
        return Err(HostError::TooLarge { descriptors, max: MAX_PROGRAM_DESCRIPTORS });
    }
    Ok(program)
}

/// The sources and destinations: at least one each, at most [`packet::MAX_SOURCES`] sources,
/// and as many as a cce_info says.
fn check_counts(req: &ReduceRequest) -> Result<(), HostError> {
    let (n, m) = (req.srcs.len(), req.dsts.len());
    if n == 0 {
        return Err(HostError::Empty("source"));
    }
    if m == 0 {
        return Err(HostError::Empty("destination"));
    }
    if n > packet::MAX_SOURCES {
        return Err(HostError::TooManySources(n));
    }
    if let Some(info) = &req.cce_info {
        if info.num_sources() as usize != n {
            return Err(HostError::CountMismatch { field: "num_sources", info: info.num_sources(), given: n });
        }
        if info.num_dests() as usize != m {
            return Err(HostError::CountMismatch { field: "num_dests", info: info.num_dests(), given: m });
        }
    }
    Ok(())
}

/// Per-op arms of vring_add_dma_packet_cce_int: an FMA's cce_info (its scales fp32), a
/// MIN/MAX's clamp constant (when the cce_info uses one).
fn op_operands(req: &ReduceRequest, sdma_op: SdmaCceType) -> Result<(Option<&CceInfo>, Option<Clamp>), HostError> {
    let mut fma = None;
    let mut clamp = None;
    match sdma_op {
        SdmaCceType::Fma => {
            let info = req.cce_info.as_ref().ok_or(HostError::MissingCceInfo)?;
            let sdt = dtype::kbin_dtype_to_sdma_dtype(info.scale_dtype())?;
            if sdt != SdmaDtype::Fp32 {
                return Err(HostError::ScaleNotFp32(sdt.name()));
            }
            fma = Some(info);
        }
        SdmaCceType::Min | SdmaCceType::Max => {
            if let Some(info) = req.cce_info.as_ref().filter(|i| i.use_constant()) {
                let cdt = dtype::kbin_dtype_to_sdma_dtype(info.constant_dtype())?;
                if !min_max_constant_supported(cdt) {
                    return Err(HostError::MinMaxConstDtype(cdt.name()));
                }
                let bits = info.constant() & low_mask(cdt.bytes());
                clamp = Some(Clamp { const_dt: UInt::masked(cdt.value()), bits });
            }
        }
        _ => {}
    }
    Ok((fma, clamp))
}

/// Dtypes: in and out move bytes, accum only needs to name a type.
fn check_dtypes(req: &ReduceRequest) -> Result<(), HostError> {
    if req.out_dt.bytes() == 0 {
        return Err(HostError::Dtype { role: "out", dtype: req.out_dt.name(), why: "it has no byte size" });
    }
    if req.accum_dt == SdmaDtype::Invalid {
        return Err(HostError::Dtype { role: "accum", dtype: req.accum_dt.name(), why: "it names no type" });
    }
    if req.in_dt == SdmaDtype::Invalid {
        return Err(HostError::Dtype { role: "in", dtype: req.in_dt.name(), why: "it names no type" });
    }
    Ok(())
}

/// Elements per packet: the priority's packet size in input elements (§7.1), at most the arch's
/// `max_elems`; compressed, the arch's CCE elements.
fn packet_elems(req: &ReduceRequest, max_elems: u64) -> Result<u64, HostError> {
    // §7.1: the packet size (fp32r as in dtype traps here, line 0x1204).
    let pkt_bytes = limits::reduce_packet_size(req.in_dt, req.elems, req.prio, &req.caps)?;
    if req.elems == 0 {
        return Err(HostError::Empty("element"));
    }
    let in_size = req.in_dt.bytes() as u64;
    let per_packet = if pkt_bytes == 0 {
        // Under 32 bytes in all: one packet; otherwise the cap is below the granule.
        if req.elems * in_size < 32 {
            req.elems.min(max_elems)
        } else {
            return Err(HostError::CapTooSmall(req.caps.0[req.prio as usize]));
        }
    } else {
        (pkt_bytes / in_size).clamp(1, max_elems)
    };
    // Compressed, packets hold the arch's CCE elements, as the gradient packets that
    // decompress them do (each packet has its own header; MODEL).
    Ok(if req.compress.is_some() { max_elems.min(req.elems) } else { per_packet })
}

/// The codec of a compressed reduce (`req.compress`, its `packets` of `per_packet` elements):
/// bf16, fp16 or fp32 values compressed, each destination's header word checked.
fn compress_gce(req: &ReduceRequest, per_packet: u64, packets: u64) -> Result<Option<Gce>, HostError> {
    let Some(header) = req.compress else { return Ok(None) };
    if !cce_format::gce::is_source_dtype(req.out_dt) {
        return Err(HostError::GceBuffer(concat!("the values compressed must be ", cce_format::gce_source_dtypes!())));
    }
    let stride = crate::gradient::header_stride(per_packet);
    let mut word = 0;
    for &d in &req.dsts {
        word = crate::gradient::header_word(header, d, req.elems, packets, stride)?;
    }
    Ok(Some(Gce { mode: GceMode::Compress, header: word, mid_dt: req.out_dt }))
}

fn low_mask(bytes: u8) -> u32 {
    if bytes >= 4 { u32::MAX } else { (1u32 << (8 * bytes as u32)) - 1 }
}

/// A plain copy, as the public driver builds one (GAPS.md §12): ≤ 64 KiB chunks, each one M2S
/// descriptor (FIRST | LAST) and one S2M descriptor; on the final chunk a DMB on v1, the
/// meta_ctrl write barrier on v2 and later. (The runtime's `vring_add_desc_transfer`, per a
/// companion chapter, uses DMB on v2 and strong-ordered writes on v3+: docs/MODEL.md H6.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CopyRequest {
    /// Source address.
    pub src: u64,
    /// Destination address.
    pub dst: u64,
    /// Bytes.
    pub bytes: u64,
    /// NeuronCore arch.
    pub arch: u32,
}

/// Plans a plain copy.
pub fn plan_copy(req: &CopyRequest) -> Result<Program, HostError> {
    if req.bytes == 0 {
        return Err(HostError::Empty("byte"));
    }
    checked_end(req.src, req.bytes)?;
    checked_end(req.dst, req.bytes)?;
    let per = req.bytes.min(MAX_DATA_DESC_BYTES as u64);
    let template = Packet::copy(req.src, req.dst, per as u32);
    let program = Program::new(template, req.bytes, false, req.arch);
    let descriptors = program.tx_descriptors() + program.rx_descriptors();
    if descriptors > MAX_PROGRAM_DESCRIPTORS {
        return Err(HostError::TooLarge { descriptors, max: MAX_PROGRAM_DESCRIPTORS });
    }
    Ok(program)
}

impl MinMaxConstant {
    /// Parses a clamp constant written in `dtype` (an SDMA dtype the constant field supports):
    /// a decimal number (rounded to nearest even for bf16 / fp16 after a correctly rounded
    /// parse to f64; range-checked for integers), or `0x…` raw bits of the dtype.
    pub fn parse(text: &str, dtype: SdmaDtype) -> Result<MinMaxConstant, HostError> {
        if !min_max_constant_supported(dtype) {
            return Err(HostError::MinMaxConstDtype(dtype.name()));
        }
        let kbin_dtype = dtype::KBIN_DTYPE_REMAP
            .iter()
            .find(|r| r.sdma == dtype)
            .map(|r| r.kbin.value())
            .ok_or(HostError::MinMaxConstDtype(dtype.name()))?;
        let bad = || HostError::Constant { text: text.to_string(), dtype: dtype.name() };
        let t = text.trim();
        let width = 8 * dtype.bytes() as u32;
        let bits = if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
            let v = u64::from_str_radix(hex, 16).map_err(|_| bad())?;
            if v >> width != 0 {
                return Err(bad());
            }
            v as u32
        } else if dtype.is_float() {
            let v: f64 = t.parse().map_err(|_| bad())?;
            match dtype {
                SdmaDtype::Bf16 => half::bf16::from_f64(v).to_bits() as u32,
                _ => half::f16::from_f64(v).to_bits() as u32,
            }
        } else {
            let v: i64 = t.parse().map_err(|_| bad())?;
            let signed = matches!(dtype, SdmaDtype::I8 | SdmaDtype::I16);
            let (lo, hi) =
                if signed { (-(1i64 << (width - 1)), (1i64 << (width - 1)) - 1) } else { (0, (1i64 << width) - 1) };
            if !(lo..=hi).contains(&v) {
                return Err(bad());
            }
            (v as u32) & low_mask(dtype.bytes())
        };
        Ok(MinMaxConstant { kbin_dtype, bits })
    }
}
