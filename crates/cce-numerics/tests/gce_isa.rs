//! The GCE codec's vector kernels (AVX2 and AVX-512) give the element loops' bytes and bits
//! (`Isa::Portable`, the reference that `tests/gce_ref.rs` checks against numpy + ml_dtypes).
//! Compression: random f32 bit patterns (NaN payloads, infinities, subnormals of both signs),
//! values on and one f32 ulp either side of every e5m2 rounding point and tie under scale
//! exponents across the whole range, blocks whose largest magnitude sits at the 1.75 mantissa
//! edge and at 57344 · 2^E, zero, signed-zero, all-NaN / infinity and subnormal blocks; every
//! block size a GCE header allows (32, 64, 128, 256), other multiples of 16 and sizes the
//! kernels leave to the element loop; lengths that end in a partial block; the f32 slice and
//! the little-endian byte entry points, the bytes at unaligned addresses. Expansion: every
//! e5m2 code under every scale byte, at every block size, and random payloads with partial
//! blocks. On a CPU without a level, that level's run is the portable one and the test still
//! checks the rest.

use cce_numerics::gce;
use cce_numerics::{Isa, detected_isa};

mod common;
use common::{NAN_AND_INF, Rng, sprinkled};

const ISAS: [Isa; 2] = [Isa::Avx2, Isa::Avx512];

/// Block sizes: the header's four, other multiples of the kernels' 16-value step, and sizes
/// only the element loop takes.
const BLOCKS: [usize; 10] = [32, 64, 128, 256, 16, 48, 1, 3, 17, 100];

/// An e5m2 code's value as f32 bits (finite codes only), by its fields.
fn e5m2_bits(code: u8) -> u32 {
    let (e, m) = (u32::from((code >> 2) & 0x1f), u32::from(code & 3));
    let sign = u32::from(code & 0x80) << 24;
    let mag = if e == 0 {
        // m · 2^-16, exactly.
        if m == 0 { 0 } else { (m as f32 * f32::from_bits(0x3780_0000)).to_bits() }
    } else {
        ((e + 112) << 23) | (m << 21)
    };
    sign | mag
}

/// `x · 2^k` exactly, for f32 bits (`k` small enough that the result stays normal or zero).
fn scaled(bits: u32, k: i32) -> u32 {
    let a = bits & 0x7fff_ffff;
    if a == 0 {
        return bits;
    }
    let v = f64::from(f32::from_bits(a)) * 2f64.powi(k);
    (bits & 0x8000_0000) | (v as f32).to_bits()
}

/// Blocks built around the rounding points: each block of `block` values has a scale exponent
/// `E` (walking −127..=112), its largest magnitude in `(57344 · 2^(E−1), 57344 · 2^E]` (often
/// exactly at the top or at the 1.75 mantissa edge), and the other values on an e5m2 value, a
/// tie between two, or one f32 ulp either side, times `2^E`, with random signs. Where `2^E`
/// makes them f32 subnormals the values are random subnormal patterns instead.
fn rounding_points(r: &mut Rng, block: usize, blocks: usize) -> Vec<f32> {
    let mut v = Vec::with_capacity(block * blocks);
    for b in 0..blocks {
        let e = -127 + (b as i32 * 7) % 240;
        let top = match r.below(4) {
            0 => 0x4760_0000,                          // 57344: the block's E exactly
            1 => 0x46e0_0001,                          // just above 28672: E − 1 is too small
            2 => 0x4700_0000 | (r.bits() & 0x5f_ffff), // mantissa up to 1.75 · 2^14 region
            _ => 0x46e0_0001 + r.below(0x80_0000 - 1),
        };
        let amax = scaled(top, e);
        for i in 0..block {
            let x = if i == (b % block) {
                amax
            } else {
                let code = (r.bits() & 0x7b) as u8;
                let base = e5m2_bits(code);
                let quantum_up = e5m2_bits(code + 1);
                let mid = if code == 0x7b {
                    f32::from_bits(base)
                } else {
                    ((f64::from(f32::from_bits(base)) + f64::from(f32::from_bits(quantum_up))) / 2.0) as f32
                }
                .to_bits();
                let pick = match r.below(5) {
                    0 => base,
                    1 => mid,
                    2 => mid.wrapping_add(1),
                    3 => mid.saturating_sub(1),
                    _ => base.wrapping_add(1),
                };
                let y = scaled(pick, e);
                if f32::from_bits(y).is_finite() && y & 0x7fff_ffff != 0 && y & 0x7f80_0000 == 0 {
                    r.bits() & 0x007f_ffff
                } else {
                    y
                }
            };
            let sign = if r.below(2) == 0 { 0 } else { 0x8000_0000 };
            // Keep the block's own magnitude bound: the largest value stays the largest.
            let x = if f32::from_bits(x & 0x7fff_ffff) > f32::from_bits(amax) { amax } else { x };
            v.push(f32::from_bits(x ^ sign));
        }
    }
    v
}

/// Every kind of input, as (name, values): lengths that are not multiples of any block size.
fn kinds() -> Vec<(String, Vec<f32>)> {
    let mut r = Rng(0x6CE_15A);
    let mut k: Vec<(String, Vec<f32>)> = Vec::new();
    k.push(("random bits".into(), (0..40_003).map(|_| f32::from_bits(r.bits())).collect()));
    k.push(("random finite bits".into(), (0..20_011).map(|_| f32::from_bits(r.bits() & 0xff7f_ffff)).collect()));
    for (block, blocks) in [(32usize, 1000), (256, 240)] {
        k.push((format!("rounding points, block {block}"), rounding_points(&mut r, block, blocks)));
    }
    k.push((
        "gradient-like".into(),
        (0..30_007)
            .map(|_| {
                let m = f32::from_bits(0x3f80_0000 | (r.bits() & 0x007f_ffff)) - 1.5;
                m * f32::from_bits((r.below(60) + 90) << 23)
            })
            .collect(),
    ));
    k.push(("subnormals".into(), (0..5_001).map(|_| f32::from_bits(r.bits() & 0x807f_ffff)).collect()));
    k.push(("tiny subnormals".into(), (0..2_001).map(|_| f32::from_bits(r.bits() & 0x8000_00ff)).collect()));
    k.push(("zeros".into(), vec![0.0; 1_000]));
    k.push(("signed zeros".into(), (0..1_000).map(|i| if i % 3 == 0 { -0.0 } else { 0.0 }).collect()));
    k.push(("only nan and inf".into(), (0..2_000).map(|i| NAN_AND_INF[i % NAN_AND_INF.len()]).collect()));
    let mix: Vec<f32> = (0..6_000).map(|_| f32::from_bits(0x3f80_0000 | (r.bits() & 0x807f_ffff))).collect();
    k.push(("nan and inf among values".into(), sprinkled(mix, 7, 37)));
    for (i, c) in [1.75f32, f32::from_bits(0x3fe0_0001), 57344.0, f32::from_bits(0x4760_0001), f32::MAX, 1e-40]
        .into_iter()
        .enumerate()
    {
        k.push((format!("constant {i}"), vec![c; 999]));
    }
    k
}

fn compressed(values: &[f32], block: usize, isa: Isa) -> (Vec<u8>, Vec<u8>) {
    let mut scales = vec![0xa5; values.len().div_ceil(block)];
    let mut payload = vec![0xa5; values.len()];
    gce::compress_with(values, block, &mut scales, &mut payload, isa).unwrap();
    (scales, payload)
}

#[test]
fn compress_agrees_on_every_isa() {
    for (name, values) in kinds() {
        for block in BLOCKS {
            // Whole inputs, and lengths that cut the last block short (or leave nothing).
            for len in [values.len(), values.len() - values.len() % block + block / 2, 0, 1, block - 1, block + 1] {
                let xs = &values[..len.min(values.len())];
                let want = compressed(xs, block, Isa::Portable);
                for isa in ISAS {
                    assert!(compressed(xs, block, isa) == want, "{name}: block {block} len {} {isa:?}", xs.len());
                }
            }
        }
    }
}

/// The little-endian entry point at every byte offset of a word: the kernels load unaligned.
#[test]
fn compress_le_agrees_at_unaligned_addresses() {
    let mut r = Rng(99);
    let values: Vec<f32> = (0..10_007).map(|_| f32::from_bits(r.bits())).collect();
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    for block in [32usize, 256, 3] {
        let want = compressed(&values, block, Isa::Portable);
        for offset in 0..4 {
            let mut buf = vec![0u8; offset];
            buf.extend_from_slice(&bytes);
            for isa in [Isa::Portable, Isa::Avx2, Isa::Avx512] {
                let mut scales = vec![0xa5; want.0.len()];
                let mut payload = vec![0xa5; values.len() + offset];
                gce::compress_le(&buf[offset..], block, &mut scales, &mut payload[offset..], isa).unwrap();
                assert!(scales == want.0 && payload[offset..] == want.1[..], "block {block} offset {offset} {isa:?}");
            }
        }
    }
}

fn expanded(scales: &[u8], payload: &[u8], block: usize, isa: Isa) -> Vec<u32> {
    let mut out = vec![f32::from_bits(0xa5a5_a5a5); payload.len()];
    gce::decompress_with(scales, payload, block, &mut out, isa).unwrap();
    out.iter().map(|y| y.to_bits()).collect()
}

/// Every e5m2 code under every scale byte 0..=255 (scale exponents −127..=128, beyond what the
/// compressor writes: saturation to ±f32::MAX, f32 subnormal results), at every block size.
#[test]
fn expand_every_code_under_every_scale_agrees_on_every_isa() {
    let payload: Vec<u8> = (0..256 * 256).map(|i| i as u8).collect();
    for block in BLOCKS {
        let scales: Vec<u8> = (0..payload.len().div_ceil(block)).map(|b| (b * block / 256) as u8).collect();
        let want = expanded(&scales, &payload, block, Isa::Portable);
        for isa in ISAS {
            assert!(expanded(&scales, &payload, block, isa) == want, "block {block} {isa:?}");
        }
    }
}

/// Random payloads and scale bytes, lengths ending in a partial block, and the little-endian
/// entry point at every byte offset of a word.
#[test]
fn expand_random_and_unaligned_agree_on_every_isa() {
    let mut r = Rng(5);
    let payload: Vec<u8> = (0..20_013).map(|_| r.bits() as u8).collect();
    for block in BLOCKS {
        let scales: Vec<u8> = (0..payload.len().div_ceil(block)).map(|_| r.bits() as u8).collect();
        let want = expanded(&scales, &payload, block, Isa::Portable);
        for isa in ISAS {
            assert!(expanded(&scales, &payload, block, isa) == want, "block {block} {isa:?}");
            for offset in 1..4 {
                let mut out = vec![0xa5u8; 4 * payload.len() + offset];
                gce::decompress_le(&scales, &payload, block, &mut out[offset..], isa).unwrap();
                let got: Vec<u32> =
                    out[offset..].chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
                assert!(got == want, "block {block} {isa:?} offset {offset}");
            }
        }
    }
}

/// The fused expand-and-round to bf16 gives, at every level and byte offset, the bits of
/// expanding to f32 (the portable element loop) and then `convert` to bf16 (RNE, no
/// saturation): every code under every scale byte (overflow to inf, f32-subnormal results that
/// round, NaN signs) and random payloads with partial blocks, at every block size.
#[test]
fn expand_to_bf16_is_expand_then_convert_on_every_isa() {
    use cce_numerics::{NumType, Rounding};
    let mut r = Rng(11);
    let every: Vec<u8> = (0..256 * 256).map(|i| i as u8).collect();
    let random: Vec<u8> = (0..20_013).map(|_| r.bits() as u8).collect();
    for (name, payload) in [("every code", &every), ("random", &random)] {
        for block in BLOCKS {
            let scales: Vec<u8> = if name == "random" {
                (0..payload.len().div_ceil(block)).map(|_| r.bits() as u8).collect()
            } else {
                (0..payload.len().div_ceil(block)).map(|b| (b * block / 256) as u8).collect()
            };
            let wide: Vec<u8> =
                expanded(&scales, payload, block, Isa::Portable).iter().flat_map(|b| b.to_le_bytes()).collect();
            let mut want = vec![0u8; 2 * payload.len()];
            cce_numerics::convert(NumType::F32, NumType::Bf16, &wide, &mut want, Rounding::Rne, false).unwrap();
            for isa in [Isa::Portable, Isa::Avx2, Isa::Avx512] {
                for offset in 0..2 {
                    let mut out = vec![0xa5u8; 2 * payload.len() + offset];
                    gce::decompress_bf16_le(&scales, payload, block, &mut out[offset..], isa).unwrap();
                    assert!(out[offset..] == want[..], "{name}: block {block} {isa:?} offset {offset}");
                }
            }
        }
    }
    let (s, q) = ([0u8; 1], [0u8; 2]);
    let mut out = [0u8; 3];
    assert_eq!(
        gce::decompress_bf16_le(&s, &q, 32, &mut out, Isa::Avx512),
        Err(gce::GceError::OutputBytes { got: 3, expected: 4 })
    );
    assert_eq!(out, [0; 3], "nothing written before an error");
}

/// The level a call takes is the best this CPU has, capped; the byte entry points refuse what
/// is not whole f32 values.
#[test]
fn kernel_level_and_byte_sizes() {
    assert_eq!(gce::kernel_level(Isa::Portable), "portable");
    let best = gce::kernel_level(Isa::Avx512);
    match detected_isa() {
        Isa::Avx512 => {
            assert_eq!(best, "avx512");
            assert_eq!(gce::kernel_level(Isa::Avx2), "avx2");
        }
        Isa::Avx2 => assert_eq!(best, "avx2"),
        Isa::Portable => assert_eq!(best, "portable"),
    }
    let mut s = [0u8; 1];
    let mut q = [0u8; 2];
    assert_eq!(gce::compress_le(&[0; 7], 32, &mut s, &mut q, Isa::Avx512), Err(gce::GceError::InputBytes { len: 7 }));
    let mut out = [0u8; 7];
    assert_eq!(
        gce::decompress_le(&s, &q, 32, &mut out, Isa::Avx512),
        Err(gce::GceError::OutputBytes { got: 7, expected: 8 })
    );
    assert_eq!(out, [0; 7], "nothing written before an error");
}
