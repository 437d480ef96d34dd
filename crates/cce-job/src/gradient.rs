//! GCE compression of one buffer through the whole path: gradient packets planned by
//! `cce-host` and executed by `cce-engine` from ring bytes (study §5.2; the codec is the
//! project's MODEL, docs/MODEL.md "GCE"). What `cce.gce_compress` / `cce.gce_decompress` run.
//!
//! A compressed buffer is its fp8 payload (one byte per element) and its headers: one per
//! packet of at most the arch's CCE elements, [`cce_host::gradient::header_stride`] apart.

use cce_engine::feed::run_programs;
use cce_engine::{Engine, EngineConfig, Memory, PagedMemory};
use cce_format::SdmaDtype;
use cce_format::packet::GceMode;
use cce_host::{GradientRequest, plan_gradient};

use crate::reduce::PathError;

/// The uncompressed values (the source when compressing, the destination when decompressing).
const VALUES: u64 = 0x1_0000_0000;
/// The headers and the payload share one 4 GiB window (W3 holds 32 bits).
const HEADER: u64 = 0x2_0000_0000;
const PAYLOAD: u64 = 0x2_8000_0000;
const ARCH: u32 = 3;

/// A compressed buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Compressed {
    /// The dtype the values had.
    pub dtype: SdmaDtype,
    /// Elements.
    pub elems: u64,
    /// One fp8 e5m2 byte per element.
    pub payload: Vec<u8>,
    /// Every packet's header and scale table, at the header stride.
    pub headers: Vec<u8>,
}

/// Most elements one call takes (the program's descriptors and the model memory stay small).
pub const MAX_ELEMS: u64 = 1 << 28;

fn check(dtype: SdmaDtype, elems: u64) -> Result<(), PathError> {
    if !cce_format::gce::is_source_dtype(dtype) {
        return Err(PathError::Input(format!(
            concat!("gce: dtype {} is not ", cce_format::gce_source_dtypes!()),
            dtype.name()
        )));
    }
    if elems == 0 || elems > MAX_ELEMS {
        return Err(PathError::Input(format!("gce: {elems} elements; 1..={MAX_ELEMS}")));
    }
    Ok(())
}

/// Runs one gradient program over `mem` and returns the memory.
fn run(req: &GradientRequest, mut mem: PagedMemory) -> Result<PagedMemory, PathError> {
    let rings = plan_gradient(req)?.to_rings(None)?;
    let mut engine = Engine::new(std::mem::take(&mut mem), EngineConfig::default());
    run_programs(&mut engine, &[rings.queue(0)], &mut |m: &mut PagedMemory, a, l| m.add_region(a, l))?;
    if let Some(f) = engine.status(0).and_then(|s| s.fault) {
        return Err(PathError::Fault(f));
    }
    Ok(engine.into_memory())
}

fn read(mem: &PagedMemory, addr: u64, len: u64) -> Result<Vec<u8>, PathError> {
    let mut b = vec![0u8; len as usize];
    mem.read(addr, &mut b)?;
    Ok(b)
}

/// Compresses `data` (raw little-endian `dtype` elements) with gradient packets on the engine.
pub fn compress(dtype: SdmaDtype, data: &[u8]) -> Result<Compressed, PathError> {
    let size = dtype.bytes().max(1) as u64;
    if data.len() as u64 % size != 0 {
        return Err(PathError::Input(format!("gce: {} bytes is not whole {} elements", data.len(), dtype.name())));
    }
    let elems = data.len() as u64 / size;
    check(dtype, elems)?;
    let headers = cce_host::gradient::header_bytes(elems, ARCH)?;
    let mut mem = PagedMemory::new(4 * data.len() as u64 + headers + (1 << 20));
    mem.add_region(VALUES, data.len() as u64)?;
    mem.write(VALUES, data)?;
    mem.add_region(PAYLOAD, elems)?;
    mem.add_region(HEADER, headers)?;
    let req = GradientRequest {
        mode: GceMode::Compress,
        srcs: vec![VALUES],
        dst: PAYLOAD,
        header: HEADER,
        elems,
        dtype,
        arch: ARCH,
    };
    let mem = run(&req, mem)?;
    Ok(Compressed { dtype, elems, payload: read(&mem, PAYLOAD, elems)?, headers: read(&mem, HEADER, headers)? })
}

/// Expands `c` to its dtype (`out`: bf16, fp16 or fp32; any of them, not only the original)
/// with gradient packets on the engine; a header that does not describe the payload faults
/// with "Failed to build decompression header".
pub fn decompress(c: &Compressed, out: SdmaDtype) -> Result<Vec<u8>, PathError> {
    check(out, c.elems)?;
    if c.payload.len() as u64 != c.elems {
        return Err(PathError::Input(format!("gce: a payload of {} bytes for {} elements", c.payload.len(), c.elems)));
    }
    let headers = cce_host::gradient::header_bytes(c.elems, ARCH)?;
    if c.headers.len() as u64 != headers {
        return Err(PathError::Input(format!("gce: {} header bytes, expected {headers}", c.headers.len())));
    }
    let out_bytes = c.elems * out.bytes() as u64;
    let mut mem = PagedMemory::new(2 * c.elems + headers + out_bytes + (1 << 20));
    mem.add_region(PAYLOAD, c.elems)?;
    mem.write(PAYLOAD, &c.payload)?;
    mem.add_region(HEADER, headers)?;
    mem.write(HEADER, &c.headers)?;
    mem.add_region(VALUES, out_bytes)?;
    let req = GradientRequest {
        mode: GceMode::Decompress,
        srcs: vec![PAYLOAD],
        dst: VALUES,
        header: HEADER,
        elems: c.elems,
        dtype: out,
        arch: ARCH,
    };
    let mem = run(&req, mem)?;
    read(&mem, VALUES, out_bytes)
}
