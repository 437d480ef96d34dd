//! `cce demo`'s study §9.3: a gradient all-reduce leg with GCE compression. One rank's EXT
//! combo reduces three bf16 sources in fp32 and compresses the result for the cross-die hop —
//! `[seed-init | ADD × 3 (last on the final) | gradient (compress, header) | replication (EXT
//! word)]`, every compute descriptor but the last with the more-bit — and the peer's gradient
//! packet decompresses it to bf16 before its own reduce. Both run on the engine from ring
//! bytes; the result is checked against a computation of the documented codec (docs/MODEL.md
//! "GCE") written here, independently of `cce_numerics::gce`.

use cce_engine::feed::run_programs;
use cce_engine::{Engine, EngineConfig, Memory, PagedMemory};
use cce_format::gce::{GceHeader, HEADER_BYTES};
use cce_format::packet::GceMode;
use cce_format::{KbinOp, SdmaDtype};
use cce_host::{GradientRequest, ReduceDtypes, ReduceRequest, Rings, Rounding, plan, plan_gradient};

use cce_job::PathError;

const SRC: u64 = 0x1000_0000;
const PAYLOAD: u64 = 0x5000_0000;
const HEADER: u64 = 0x5800_0000;
const OUT: u64 = 0x6000_0000;
const BLOCK: usize = 32;

/// What the §9.3 example did.
pub struct GradientExample {
    /// The EXT combo's rings (the listing).
    pub combo: Rings,
    /// Elements.
    pub elems: usize,
    /// Elements whose payload byte or decompressed value differs from the independent
    /// computation, plus scale bytes and header bytes that differ.
    pub mismatches: usize,
}

/// The exact power of two `2^k` (|k| < 1000).
fn pow2(k: i32) -> f64 {
    2f64.powi(k)
}

/// The exponent e of `a > 0` with 2^e ≤ a < 2^(e+1), exactly.
fn exponent(a: f64) -> i32 {
    let mut e = a.log2().floor() as i32;
    while pow2(e) > a {
        e -= 1;
    }
    while pow2(e + 1) <= a {
        e += 1;
    }
    e
}

/// The block's scale exponent: the least E with max|x| ≤ 57344 · 2^E, at least −127.
fn scale_exponent(block: &[f32]) -> i32 {
    let amax = block.iter().filter(|x| x.is_finite()).map(|x| f64::from(x.abs())).fold(0.0, f64::max);
    if amax == 0.0 {
        return -127;
    }
    let e = exponent(amax);
    let e = if amax / pow2(e) <= 1.75 { e - 15 } else { e - 14 };
    e.max(-127)
}

/// e5m2 bits of a finite `v` (|v| ≤ 57344), rounded to nearest even.
fn e5m2(v: f64) -> u8 {
    let sign = if v.is_sign_negative() { 0x80 } else { 0 };
    let a = v.abs();
    if a == 0.0 {
        return sign;
    }
    let mut e = exponent(a).max(-14);
    let mut q = (a / pow2(e - 2)).round_ties_even() as u32;
    if q == 8 {
        e += 1;
        q = 4;
    }
    let bits = if q < 4 { q } else { (((e + 15) as u32) << 2) | (q - 4) };
    sign | bits as u8
}

/// The value of finite e5m2 bits.
fn e5m2_value(b: u8) -> f64 {
    let sign = if b & 0x80 != 0 { -1.0 } else { 1.0 };
    let (e, m) = (i32::from((b >> 2) & 0x1F), f64::from(b & 3));
    sign * if e == 0 { m * pow2(-16) } else { (4.0 + m) * pow2(e - 17) }
}

fn bf16_to_f32(b: u16) -> f32 {
    f32::from_bits(u32::from(b) << 16)
}

fn f32_to_bf16(x: f32) -> u16 {
    let b = x.to_bits();
    ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) as u16
}

/// Runs the §9.3 leg on the engine and compares it with the independent computation.
pub fn example(sources: &[Vec<u16>; 3]) -> Result<GradientExample, PathError> {
    let n = sources[0].len();
    // The rank's EXT combo: ADD × 3 in fp32, compressed (stochastic rounding to the fp32 mid
    // dtype discards nothing, so the seed-init only opens the combo, as in the study's listing).
    let srcs: Vec<u64> = (0..3).map(|i| SRC + i * 0x100_0000).collect();
    let mut req = ReduceRequest::new(
        KbinOp::Add.value(),
        srcs.clone(),
        vec![PAYLOAD],
        n as u64,
        ReduceDtypes { in_dt: SdmaDtype::Bf16, accum_dt: SdmaDtype::Fp32, out_dt: SdmaDtype::Fp32 },
        3,
    );
    req.rounding = Rounding::Stochastic { seed: 0x9_3 };
    req.compress = Some(HEADER);
    let combo = plan(&req)?.to_rings(None)?;
    // The peer's gradient packet: expand to bf16.
    let decompress = GradientRequest {
        mode: GceMode::Decompress,
        srcs: vec![PAYLOAD],
        dst: OUT,
        header: HEADER,
        elems: n as u64,
        dtype: SdmaDtype::Bf16,
        arch: 3,
    };
    let expand = plan_gradient(&decompress)?.to_rings(None)?;
    let headers = cce_host::gradient::header_bytes(n as u64, 3)?;

    let mut mem = PagedMemory::new(1 << 30);
    for (i, s) in sources.iter().enumerate() {
        let bytes: Vec<u8> = s.iter().flat_map(|v| v.to_le_bytes()).collect();
        mem.add_region(srcs[i], bytes.len() as u64)?;
        mem.write(srcs[i], &bytes)?;
    }
    mem.add_region(PAYLOAD, n as u64)?;
    mem.add_region(HEADER, headers)?;
    mem.add_region(OUT, 2 * n as u64)?;
    let mut engine = Engine::new(mem, EngineConfig::default());
    let add_ring = &mut |m: &mut PagedMemory, a, l| m.add_region(a, l);
    // The rank's queue 0, then the peer's queue 1 (its rings elsewhere).
    for (q, rings) in [(0, &combo), (1, &expand)] {
        run_programs(&mut engine, &[rings.queue(q)], add_ring)?;
        if let Some(f) = engine.status(q).and_then(|s| s.fault) {
            return Err(PathError::Fault(f));
        }
        engine = Engine::new(engine.into_memory(), EngineConfig::default());
    }
    let mem = engine.into_memory();
    let read = |a: u64, len: usize| -> Result<Vec<u8>, PathError> {
        let mut b = vec![0u8; len];
        mem.read(a, &mut b)?;
        Ok(b)
    };
    let (payload, head, out) = (read(PAYLOAD, n)?, read(HEADER, headers as usize)?, read(OUT, 2 * n)?);

    // The independent computation: the fp32 sums in source order, blocks of 32, E8M0 scales,
    // e5m2 codes, one header per packet of at most 2048 elements, then bf16 of code · 2^E.
    let sums: Vec<f32> =
        (0..n).map(|i| bf16_to_f32(sources[0][i]) + bf16_to_f32(sources[1][i]) + bf16_to_f32(sources[2][i])).collect();
    let per_packet = cce_format::limits::max_cce_elements(3).map_err(cce_host::HostError::from)? as usize;
    let stride = cce_host::gradient::header_stride(per_packet.min(n) as u64) as usize;
    let mut mismatches = 0;
    for (k, packet) in sums.chunks(per_packet).enumerate() {
        let h = &head[k * stride..];
        let want = GceHeader::new(SdmaDtype::Fp32, packet.len() as u32, BLOCK as u32)
            .map_err(|e| PathError::Input(e.to_string()))?;
        mismatches += want.encode().iter().zip(h).filter(|(a, b)| a != b).count();
        for (b, block) in packet.chunks(BLOCK).enumerate() {
            let e = scale_exponent(block);
            mismatches += usize::from(h[HEADER_BYTES + b] != (e + 127) as u8);
            for (j, &x) in block.iter().enumerate() {
                let i = k * per_packet + b * BLOCK + j;
                let q = e5m2(f64::from(x) * pow2(-e));
                let value = f32_to_bf16((e5m2_value(q) * pow2(e)) as f32);
                let got = u16::from_le_bytes([out[2 * i], out[2 * i + 1]]);
                mismatches += usize::from(payload[i] != q || got != value);
            }
        }
    }
    Ok(GradientExample { combo, elems: n, mismatches })
}
