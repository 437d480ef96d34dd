//! The engine from C: `cce build` ([`cce_build`] → a [`cce_rings`] handle), `cce run` over
//! memory the caller owns ([`cce_run`]), `cce reduce` on arrays ([`cce_reduce`]).
//!
//! ## Guarantees
//! - A request is C data (numbers, pointers, lengths): every value is checked and turned into
//!   `cce-api`'s typed parameters here, and a refused request writes nothing to the caller's
//!   outputs (no handle, no buffer touched).
//! - A handle is freed only by its free function (NULL is allowed); the bytes its accessors
//!   return stay valid until then.
//! - [`cce_run`] reads the caller's regions into the engine's memory, runs, and writes the
//!   memory back into the same regions; [`cce_reduce`] writes straight into the caller's
//!   output buffers.

use std::ffi::c_char;

use cce_api::params::FmaOperand;
use cce_api::{
    BuildOp, BuildParams, Built, ClampConstant, FmaSelectors, OpOptions, ReduceOp, ReduceParams, RoundingMode,
    SdmaDtype,
};

use crate::error::{Failure, cce_status, guard};
use crate::ptr;

/// `op`: a sum.
pub const CCE_OP_ADD: u32 = 0;
/// `op`: Σ scaleᵢ · xᵢ (the study's FMA; the scales are `scales`).
pub const CCE_OP_FMA: u32 = 1;
/// `op`: the minimum (a clamp constant optional).
pub const CCE_OP_MIN: u32 = 2;
/// `op`: the maximum (a clamp constant optional).
pub const CCE_OP_MAX: u32 = 3;
/// `op` of a build: a copy (the dispatcher refuses it, as the runtime's does).
pub const CCE_OP_COPY: u32 = 4;
/// `op` of a build: a transpose (refused, as the runtime's dispatcher does).
pub const CCE_OP_TRANSPOSE: u32 = 5;
/// `op` of a build: gradient packets compressing the sources (GCE; `header` required).
pub const CCE_OP_GCE_COMPRESS: u32 = 6;
/// `op` of a build: gradient packets expanding a payload (GCE; `header` required).
pub const CCE_OP_GCE_DECOMPRESS: u32 = 7;

/// `rounding`: to nearest, ties to even.
pub const CCE_ROUND_RNE: u32 = 0;
/// `rounding`: stochastic, seeded by `seed`.
pub const CCE_ROUND_SR: u32 = 1;

/// FMA operand selector (`al_sdma_m2s_fma_operand`): the running accumulator.
pub const CCE_FMA_STORED: u32 = 0;
/// FMA operand selector: this source's stream.
pub const CCE_FMA_INPUT: u32 = 1;
/// FMA operand selector: the source's fp32 scale.
pub const CCE_FMA_SCALE: u32 = 2;

/// A reduce to build, as `cce build`'s flags. Start from `cce_build_request_default()`, which
/// fills in the defaults; a field of -1 means "not given".
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct cce_build_request {
    /// NeuronCore arch, 1..=4 (replication needs 3 or 4). Default 3.
    pub arch: u32,
    /// One of `CCE_OP_*`.
    pub op: u32,
    /// Source SDMA dtype (0..=15: bf16 6, fp32 10, …).
    pub in_dtype: u32,
    /// Accumulate SDMA dtype.
    pub accum_dtype: u32,
    /// Output SDMA dtype.
    pub out_dtype: u32,
    /// Elements per source.
    pub elems: u64,
    /// `num_srcs` source addresses.
    pub srcs: *const u64,
    /// Number of sources (1..=32).
    pub num_srcs: usize,
    /// `num_dsts` destination addresses; more than one replicates (arch 3 or 4).
    pub dsts: *const u64,
    /// Number of destinations.
    pub num_dsts: usize,
    /// FMA scales: none (each 1.0), one for every source, or one per source.
    pub scales: *const f32,
    /// Number of scales.
    pub num_scales: usize,
    /// The MIN/MAX clamp constant as `cce build --constant` takes it (a number, or `0x` bits
    /// of `const_dtype`), NUL-terminated; NULL for none.
    pub constant: *const c_char,
    /// The clamp constant's SDMA dtype; -1 for the in dtype.
    pub const_dtype: i32,
    /// `CCE_ROUND_RNE` or `CCE_ROUND_SR`.
    pub rounding: u32,
    /// The stochastic-rounding seed (32 bits), -1 for none (0); only with `CCE_ROUND_SR`.
    pub seed: i64,
    /// QoS priority class, 0..=4.
    pub priority_class: u32,
    /// That class's packet cap in bytes (0 = none); -1 for the MODEL default (64 KiB).
    pub prio_pkt_size: i64,
    /// Build without a cce_info (an FMA then fails as the runtime's assert does).
    pub no_cce_info: bool,
    /// FMA operand selectors a, b, c (`CCE_FMA_*`); default input, scale, stored.
    pub selectors: [u32; 3],
    /// Ring size in descriptors (a multiple of 16, at least 32); 0 for the smallest that fits.
    pub ring_size: u64,
    /// Queue id written to the ring dump, 0..=15.
    pub queue: u32,
    /// The first packet's compression header address; -1 for none (required by the GCE ops;
    /// with a reduce op, it compresses the result: the study's §9.3 EXT + GCE combo).
    pub header: i64,
}

/// The defaults of `cce build`: arch 3, ADD, bf16 in and out with fp32 accumulate, no
/// addresses, no scales or constant, RNE, priority 0 with the MODEL cap, a cce_info, the
/// runtime's selectors (input, scale, stored), the smallest ring, queue 0, no header.
#[unsafe(no_mangle)]
pub extern "C" fn cce_build_request_default() -> cce_build_request {
    cce_build_request {
        arch: 3,
        op: CCE_OP_ADD,
        in_dtype: SdmaDtype::Bf16.value(),
        accum_dtype: SdmaDtype::Fp32.value(),
        out_dtype: SdmaDtype::Bf16.value(),
        elems: 0,
        srcs: std::ptr::null(),
        num_srcs: 0,
        dsts: std::ptr::null(),
        num_dsts: 0,
        scales: std::ptr::null(),
        num_scales: 0,
        constant: std::ptr::null(),
        const_dtype: -1,
        rounding: CCE_ROUND_RNE,
        seed: -1,
        priority_class: 0,
        prio_pkt_size: -1,
        no_cce_info: false,
        selectors: [CCE_FMA_INPUT, CCE_FMA_SCALE, CCE_FMA_STORED],
        ring_size: 0,
        queue: 0,
        header: -1,
    }
}

/// The rings of one built reduce (opaque): from `cce_build`, freed by `cce_rings_free`.
pub struct cce_rings {
    built: Built,
    dump: Vec<u8>,
}

/// What `cce build` reports about the rings it built.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct cce_rings_info {
    /// Packets written.
    pub packets: u64,
    /// Tx (M2S) descriptors: the tx doorbell.
    pub tx_descriptors: u32,
    /// Rx (S2M) descriptors: the rx doorbell, rung first.
    pub rx_descriptors: u32,
    /// Ring size in descriptors.
    pub ring_size: u32,
}

fn dtype(value: u32, what: &str) -> Result<SdmaDtype, Failure> {
    SdmaDtype::from_value(u64::from(value)).map_err(|e| Failure::from(cce_api::ApiError::from(e)).named(what))
}

fn optional(v: i64) -> Option<u64> {
    u64::try_from(v).ok()
}

fn rounding(v: u32) -> Result<RoundingMode, Failure> {
    match v {
        CCE_ROUND_RNE => Ok(RoundingMode::Rne),
        CCE_ROUND_SR => Ok(RoundingMode::Sr),
        _ => Err(Failure::invalid(format!("rounding {v}: expected CCE_ROUND_RNE (0) or CCE_ROUND_SR (1)"))),
    }
}

/// The op options both requests share.
///
/// # Safety
/// `scales` holds `num_scales` floats; a non-NULL `constant` is NUL-terminated.
unsafe fn op_options(
    scales: *const f32,
    num_scales: usize,
    constant: *const c_char,
    const_dtype: i32,
    round: u32,
    seed: i64,
) -> Result<OpOptions, Failure> {
    // SAFETY: the caller's promise for `scales` and `constant`, passed on.
    let (scales, constant) =
        unsafe { (ptr::slice(scales, num_scales, "scales")?, ptr::opt_str(constant, "constant")?) };
    let const_dtype = match u32::try_from(const_dtype) {
        Ok(v) => Some(dtype(v, "const_dtype")?),
        Err(_) => None,
    };
    Ok(OpOptions {
        scales: scales.to_vec(),
        constant: constant.map(ClampConstant::new),
        const_dtype,
        rounding: rounding(round)?,
        seed: optional(seed),
    })
}

/// `CCE_OP_*` is the op's index in `BuildOp::ALL` (ADD, FMA, MIN, MAX, COPY, TRANSPOSE, GCE
/// compress, GCE decompress); the unit test below holds the constants to it.
fn build_op(op: u32) -> Result<BuildOp, Failure> {
    BuildOp::ALL
        .get(op as usize)
        .copied()
        .ok_or_else(|| Failure::invalid(format!("op {op}: expected a CCE_OP_* value (0..=7)")))
}

fn selector(v: u32) -> Result<FmaOperand, Failure> {
    match v {
        CCE_FMA_STORED | CCE_FMA_INPUT | CCE_FMA_SCALE => Ok(FmaOperand::from_bits(v)),
        _ => Err(Failure::invalid(format!("selector {v}: expected 0 (stored), 1 (input) or 2 (scale)"))),
    }
}

/// The typed parameters of a C build request.
///
/// # Safety
/// The request's pointers hold what their lengths say (see `cce_build`).
unsafe fn build_params(r: &cce_build_request) -> Result<BuildParams, Failure> {
    // SAFETY: the caller's promise for the request's arrays, passed on.
    let (srcs, dsts) = unsafe { (ptr::slice(r.srcs, r.num_srcs, "srcs")?, ptr::slice(r.dsts, r.num_dsts, "dsts")?) };
    let dtypes =
        (dtype(r.in_dtype, "in_dtype")?, dtype(r.accum_dtype, "accum_dtype")?, dtype(r.out_dtype, "out_dtype")?);
    let mut p = BuildParams::new(build_op(r.op)?, dtypes, r.elems, srcs.to_vec(), dsts.to_vec());
    // SAFETY: as above.
    p.opts = unsafe { op_options(r.scales, r.num_scales, r.constant, r.const_dtype, r.rounding, r.seed) }?;
    p.arch = u64::from(r.arch);
    p.prio = u64::from(r.priority_class);
    p.cap = optional(r.prio_pkt_size);
    p.no_cce_info = r.no_cce_info;
    p.selectors = FmaSelectors([selector(r.selectors[0])?, selector(r.selectors[1])?, selector(r.selectors[2])?]);
    p.ring_size = (r.ring_size != 0).then_some(r.ring_size);
    p.queue = u64::from(r.queue);
    p.header = optional(r.header);
    Ok(p)
}

/// Builds the tx/rx rings of one reduce, as the host runtime would (`cce build`), and stores a
/// handle in `*rings`. On failure `*rings` is left as it was and nothing is allocated. An FMA
/// with `no_cce_info` fails as the runtime's assert does (`CCE_ERR_RUNTIME_ASSERT`,
/// "cce_info != NULL (vring.c:0x3B8): …").
///
/// # Safety
/// `request` points to a request whose `srcs`, `dsts` and `scales` hold `num_srcs`,
/// `num_dsts` and `num_scales` elements (NULL allowed for 0) and whose `constant` is NULL or
/// NUL-terminated; `rings` has room for one pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cce_build(request: *const cce_build_request, rings: *mut *mut cce_rings) -> cce_status {
    guard(|| {
        // SAFETY: the caller promises a valid request.
        let r = unsafe { ptr::value(request, "request") }?;
        if rings.is_null() {
            return Err(Failure::null("rings"));
        }
        // SAFETY: the request's arrays are as the caller promises.
        let built = cce_api::build(&unsafe { build_params(r) }?)?;
        let dump = built.file_bytes();
        let handle = Box::into_raw(Box::new(cce_rings { built, dump }));
        // SAFETY: `rings` is non-NULL and the caller promises room for one pointer.
        unsafe { ptr::write(rings, handle, "rings") }
    })
}

/// Frees rings from `cce_build` (NULL is allowed). The bytes its accessors returned are gone
/// after this.
///
/// # Safety
/// `rings` is NULL or a handle from `cce_build` not freed before.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cce_rings_free(rings: *mut cce_rings) {
    if !rings.is_null() {
        // SAFETY: the caller promises a live handle from `cce_build` (made by Box::into_raw).
        drop(unsafe { Box::from_raw(rings) });
    }
}

/// The rings' counts: packets, tx and rx descriptors (the doorbells), ring size.
///
/// # Safety
/// `rings` is a live handle; `info` has room for one `cce_rings_info`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cce_rings_get_info(rings: *const cce_rings, info: *mut cce_rings_info) -> cce_status {
    guard(|| {
        // SAFETY: the caller promises a live handle.
        let r = unsafe { ptr::value(rings, "rings") }?;
        let s = r.built.summary();
        let v = cce_rings_info {
            packets: s.packets,
            tx_descriptors: s.tx_descriptors,
            rx_descriptors: s.rx_descriptors,
            ring_size: s.ring_size,
        };
        // SAFETY: the caller promises room for one `cce_rings_info`.
        unsafe { ptr::write(info, v, "info") }
    })
}

/// Bytes the handle holds, and their length in `*len`: NULL (and no length written) for a
/// NULL handle.
///
/// # Safety
/// `rings` is NULL or a live handle; a non-NULL `len` has room for one `size_t`.
unsafe fn held(rings: *const cce_rings, len: *mut usize, pick: impl Fn(&cce_rings) -> &[u8]) -> *const u8 {
    // SAFETY: the caller promises NULL or a live handle.
    let Some(r) = (unsafe { rings.as_ref() }) else { return std::ptr::null() };
    let bytes = pick(r);
    if !len.is_null() {
        // SAFETY: non-NULL, and the caller promises room for one size_t.
        unsafe { len.write_unaligned(bytes.len()) };
    }
    bytes.as_ptr()
}

/// The tx (M2S) ring's descriptor bytes, 16 per descriptor in ring order, and their length in
/// `*len`; valid until `cce_rings_free`. NULL for a NULL handle.
///
/// # Safety
/// `rings` is NULL or a live handle; a non-NULL `len` has room for one `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cce_rings_tx(rings: *const cce_rings, len: *mut usize) -> *const u8 {
    // SAFETY: this function's own promise, passed on.
    unsafe { held(rings, len, |r| &r.built.rings.tx) }
}

/// The rx (S2M) ring's descriptor bytes, as `cce_rings_tx`.
///
/// # Safety
/// `rings` is NULL or a live handle; a non-NULL `len` has room for one `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cce_rings_rx(rings: *const cce_rings, len: *mut usize) -> *const u8 {
    // SAFETY: this function's own promise, passed on.
    unsafe { held(rings, len, |r| &r.built.rings.rx) }
}

/// The ring dump file (`cce build --out`'s bytes: what `cce_run`, `cce run` and `cce disasm`
/// read), and its length in `*len`; valid until `cce_rings_free`. NULL for a NULL handle.
///
/// # Safety
/// `rings` is NULL or a live handle; a non-NULL `len` has room for one `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cce_rings_dump(rings: *const cce_rings, len: *mut usize) -> *const u8 {
    // SAFETY: this function's own promise, passed on.
    unsafe { held(rings, len, |r| &r.dump) }
}

/// A range of the engine's memory that the caller owns: `len` bytes at device address `addr`,
/// held at `data`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct cce_region {
    /// The device address of the first byte.
    pub addr: u64,
    /// The caller's bytes: read before the run, overwritten with the memory after it.
    pub data: *mut u8,
    /// Bytes (at least 1).
    pub len: usize,
}

/// What a run did, summed over its queues.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct cce_run_report {
    /// Queues in the dump.
    pub queues: u32,
    /// Queues that faulted.
    pub faulted: u32,
    /// Packets completed.
    pub packets: u64,
    /// Tx descriptors completed.
    pub tx_done: u64,
    /// Rx descriptors completed.
    pub rx_done: u64,
}

/// Executes a ring dump (`cce run`): the caller's `regions` are the engine's memory (they may
/// not overlap), every queue of the dump runs on one engine of `threads` threads (0 means 1),
/// then each region receives the memory's bytes at its range. A queue that faults returns
/// `CCE_ERR_FAILED` with the fault (queue, descriptor, reason) as the message; the regions then
/// hold what the engine left, as device memory would. A refused dump or region list (bad
/// bytes, overlapping or empty regions) touches no region. `report` may be NULL.
///
/// # Safety
/// `dump` holds `dump_len` bytes; `regions` holds `num_regions` regions, each `data` with
/// `len` writable bytes that nothing else uses during the call; a non-NULL `report` has room
/// for one `cce_run_report`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cce_run(
    dump: *const u8,
    dump_len: usize,
    regions: *const cce_region,
    num_regions: usize,
    threads: u32,
    report: *mut cce_run_report,
) -> cce_status {
    guard(|| {
        // SAFETY: the caller promises `dump_len` bytes and `num_regions` regions.
        let (file, regions) =
            unsafe { (ptr::slice(dump, dump_len, "dump")?, ptr::slice(regions, num_regions, "regions")?) };
        let mut buffers = Vec::with_capacity(regions.len());
        for (i, r) in regions.iter().enumerate() {
            // SAFETY: the caller promises `len` writable bytes at each region's `data`.
            buffers.push(unsafe { ptr::bytes_mut(r.data, r.len, &format!("regions[{i}].data")) }?);
        }
        let loads: Vec<(u64, &[u8])> = regions.iter().zip(&buffers).map(|(r, b)| (r.addr, &b[..])).collect();
        let dumps: Vec<(u64, u64)> = regions.iter().map(|r| (r.addr, r.len as u64)).collect();
        let result = cce_api::run_ring(file, &loads, &dumps, u64::from(threads.max(1)))?;
        drop(loads);
        for (buffer, bytes) in buffers.iter_mut().zip(&result.dumps) {
            buffer.copy_from_slice(bytes);
        }
        if !report.is_null() {
            let q = &result.queues;
            let r = cce_run_report {
                queues: q.len() as u32,
                faulted: q.iter().filter(|q| q.fault.is_some()).count() as u32,
                packets: q.iter().map(|q| q.packets).sum(),
                tx_done: q.iter().map(|q| q.tx_done).sum(),
                rx_done: q.iter().map(|q| q.rx_done).sum(),
            };
            // SAFETY: non-NULL, and the caller promises room for one report.
            unsafe { ptr::write(report, r, "report") }?;
        }
        Ok(result.check()?)
    })
}

/// A reduce of arrays, as `cce reduce`'s flags. Start from `cce_reduce_request_default()`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct cce_reduce_request {
    /// `CCE_OP_ADD`, `CCE_OP_FMA`, `CCE_OP_MIN` or `CCE_OP_MAX`.
    pub op: u32,
    /// Source SDMA dtype.
    pub in_dtype: u32,
    /// Accumulate SDMA dtype.
    pub accum_dtype: u32,
    /// Output SDMA dtype.
    pub out_dtype: u32,
    /// FMA scales: none (each 1.0), one for every source, or one per source.
    pub scales: *const f32,
    /// Number of scales.
    pub num_scales: usize,
    /// The MIN/MAX clamp constant (a number, or `0x` bits), NUL-terminated; NULL for none.
    pub constant: *const c_char,
    /// The clamp constant's SDMA dtype; -1 for the in dtype.
    pub const_dtype: i32,
    /// `CCE_ROUND_RNE` or `CCE_ROUND_SR`.
    pub rounding: u32,
    /// The stochastic-rounding seed (32 bits), -1 for none (0); only with `CCE_ROUND_SR`.
    pub seed: i64,
    /// NeuronCore arch: 2, 3 or 4. Default 3.
    pub arch: u32,
    /// Engine threads (at least 1). Default 1.
    pub threads: u32,
}

/// The defaults of `cce reduce`: ADD, bf16 in and out with fp32 accumulate, no scales or
/// constant, RNE, arch 3, one thread.
#[unsafe(no_mangle)]
pub extern "C" fn cce_reduce_request_default() -> cce_reduce_request {
    cce_reduce_request {
        op: CCE_OP_ADD,
        in_dtype: SdmaDtype::Bf16.value(),
        accum_dtype: SdmaDtype::Fp32.value(),
        out_dtype: SdmaDtype::Bf16.value(),
        scales: std::ptr::null(),
        num_scales: 0,
        constant: std::ptr::null(),
        const_dtype: -1,
        rounding: CCE_ROUND_RNE,
        seed: -1,
        arch: 3,
        threads: 1,
    }
}

/// `CCE_OP_ADD` … `CCE_OP_MAX` index `ReduceOp::ALL` as they index `BuildOp::ALL`.
fn reduce_op(op: u32) -> Result<ReduceOp, Failure> {
    ReduceOp::ALL
        .get(op as usize)
        .copied()
        .ok_or_else(|| Failure::invalid(format!("op {op}: expected CCE_OP_ADD, FMA, MIN or MAX (0..=3)")))
}

/// Reduces `num_sources` arrays of `source_bytes` bytes each (raw little-endian elements of the
/// in dtype) through the whole path (`cce reduce`: the host's rings run by the engine) into
/// `num_outputs` output buffers of `output_bytes` bytes each (elements × the out dtype's size;
/// more than one replicates, arch 3 or 4). A refused request writes no output.
///
/// # Safety
/// `request` points to a valid request (its `scales` and `constant` as in `cce_build`);
/// `sources` holds `num_sources` pointers to `source_bytes` readable bytes each; `outputs`
/// holds `num_outputs` pointers to `output_bytes` writable bytes each, overlapping nothing
/// else in the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cce_reduce(
    request: *const cce_reduce_request,
    sources: *const *const u8,
    num_sources: usize,
    source_bytes: usize,
    outputs: *const *mut u8,
    num_outputs: usize,
    output_bytes: usize,
) -> cce_status {
    guard(|| {
        // SAFETY: the caller promises a valid request and the two pointer lists.
        let (r, src_ptrs, out_ptrs) = unsafe {
            (
                ptr::value(request, "request")?,
                ptr::slice(sources, num_sources, "sources")?,
                ptr::slice(outputs, num_outputs, "outputs")?,
            )
        };
        let mut srcs = Vec::with_capacity(src_ptrs.len());
        for (i, &p) in src_ptrs.iter().enumerate() {
            // SAFETY: the caller promises `source_bytes` readable bytes behind each pointer.
            srcs.push(unsafe { ptr::slice(p, source_bytes, &format!("sources[{i}]")) }?);
        }
        let mut outs = Vec::with_capacity(out_ptrs.len());
        for (i, &p) in out_ptrs.iter().enumerate() {
            // SAFETY: the caller promises `output_bytes` writable bytes behind each pointer.
            outs.push(unsafe { ptr::bytes_mut(p, output_bytes, &format!("outputs[{i}]")) }?);
        }
        let mut p = ReduceParams::new(
            reduce_op(r.op)?,
            dtype(r.in_dtype, "in_dtype")?,
            dtype(r.accum_dtype, "accum_dtype")?,
            dtype(r.out_dtype, "out_dtype")?,
        );
        // SAFETY: the request's `scales` and `constant` are as the caller promises.
        p.opts = unsafe { op_options(r.scales, r.num_scales, r.constant, r.const_dtype, r.rounding, r.seed) }?;
        p.arch = u64::from(r.arch);
        p.dests = num_outputs;
        p.threads = u64::from(r.threads);
        cce_api::reduce_into(&p, &srcs, &mut outs)?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn op_constants_name_their_ops() {
        let named = [
            (CCE_OP_ADD, "add"),
            (CCE_OP_FMA, "fma"),
            (CCE_OP_MIN, "min"),
            (CCE_OP_MAX, "max"),
            (CCE_OP_COPY, "copy"),
            (CCE_OP_TRANSPOSE, "transpose"),
            (CCE_OP_GCE_COMPRESS, "gce-compress"),
            (CCE_OP_GCE_DECOMPRESS, "gce-decompress"),
        ];
        for (c, name) in named {
            assert_eq!(build_op(c).unwrap().to_string(), name);
            if c <= CCE_OP_MAX {
                assert_eq!(reduce_op(c).unwrap().to_string(), name);
            }
        }
        assert!(build_op(8).is_err() && reduce_op(CCE_OP_COPY).is_err());
        assert_eq!(selector(CCE_FMA_SCALE).unwrap(), FmaOperand::Scale);
        assert!(selector(3).is_err());
    }
}
