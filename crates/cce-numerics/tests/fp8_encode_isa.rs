//! The explicit-SIMD f32 → fp8 RNE encoder gives the portable bits on f32 patterns chosen
//! around every rounding, subnormal, overflow, infinity and NaN boundary.

use cce_numerics::{Exec, Isa, NumType, ReduceSpec, reduce_with};

fn patterns() -> Vec<u32> {
    let mut v: Vec<u32> = (0..(1u64 << 32)).step_by(4099).map(|x| x as u32).collect();
    for e in 0..512u32 {
        let b = (e & 0xff) << 23 | (e >> 8) << 31;
        for m in
            [0u32, 1, 0x7_ffff, 0x8_0000, 0x8_0001, 0xf_ffff, 0x10_0000, 0x17_ffff, 0x18_0000, 0x3f_ffff, 0x40_0000]
        {
            for d in [0u32, 1, u32::MAX] {
                v.push(b.wrapping_add(m).wrapping_add(d));
            }
        }
    }
    // Keep whole tiles and a ragged tail.
    v.truncate(v.len() / 64 * 64 + 17);
    v
}

fn run(spec: &ReduceSpec, srcs: &[Vec<u8>], isa: Isa) -> Vec<u8> {
    let refs: Vec<&[u8]> = srcs.iter().map(|s| &s[..]).collect();
    let n = srcs[0].len() / spec.in_type.size();
    let mut out = vec![0u8; n * spec.out_type.size()];
    reduce_with(spec, &refs, &mut [&mut out], 5, &Exec { max_isa: isa, ..Exec::default() }).unwrap();
    out
}

#[test]
fn fp8_outputs_agree_on_every_isa_for_f32_patterns() {
    let x: Vec<u8> = patterns().iter().flat_map(|p| p.to_le_bytes()).collect();
    // x + (-0.0) == x exactly, but with two sources a NaN loses its sign.
    let neg_zero: Vec<u8> = (0..x.len() / 4).flat_map(|_| 0x8000_0000u32.to_le_bytes()).collect();
    for out in [NumType::F8E3M4, NumType::F8E4M3, NumType::F8E5M2, NumType::F8E4M3Fn] {
        for saturate in [false, true] {
            for srcs in [vec![x.clone()], vec![x.clone(), neg_zero.clone()]] {
                let spec = ReduceSpec { saturate, ..ReduceSpec::add(NumType::F32, NumType::F32, out) };
                let p = run(&spec, &srcs, Isa::Portable);
                for isa in [Isa::Avx2, Isa::Avx512] {
                    assert!(run(&spec, &srcs, isa) == p, "{spec:?} {isa:?} nsrc {}", srcs.len());
                }
            }
        }
    }
}

/// One-byte float in and out: the fused decode + add + encode kernel (AVX-512 VBMI) and the
/// tile-by-tile paths give the portable bits for every format pair, 1 to 5 sources (one source
/// keeps a NaN's sign, more do not), both overflow modes, every byte pattern in every source
/// position, whole tiles and a ragged tail.
#[test]
fn fp8_to_fp8_add_agrees_on_every_isa() {
    let n = 64 * 41 + 23;
    let fp8 = [NumType::F8E3M4, NumType::F8E4M3, NumType::F8E5M2, NumType::F8E4M3Fn];
    for tin in fp8 {
        for tout in fp8 {
            for nsrc in 1..=5usize {
                // Source k walks the byte patterns with its own odd stride, so every pattern
                // meets many partners (including inf and NaN patterns).
                let srcs: Vec<Vec<u8>> =
                    (0..nsrc).map(|k| (0..n).map(|j| (j * (2 * k + 1) + 37 * k) as u8).collect()).collect();
                for saturate in [false, true] {
                    let spec = ReduceSpec { saturate, ..ReduceSpec::add(tin, NumType::F32, tout) };
                    let p = run(&spec, &srcs, Isa::Portable);
                    for isa in [Isa::Avx2, Isa::Avx512] {
                        assert!(run(&spec, &srcs, isa) == p, "{spec:?} {isa:?} nsrc {nsrc}");
                    }
                }
            }
        }
    }
}

/// Three one-byte sources whose fp32 sums land on a rounding tie of the output format with
/// bits far below it: every byte of source 0 against every byte of source 1, plus a third
/// source of the smallest magnitudes (and zeros). The fused kernel cuts its sums to 16 bits
/// before encoding, so a tie decided only by the low 16 bits of the sum must still round as
/// the portable encoder rounds it.
#[test]
fn fp8_sums_with_low_sticky_bits_agree_on_every_isa() {
    let small = [0u8, 1, 2, 3, 0x81, 0x82, 0x80, 5];
    let mut srcs = vec![Vec::new(), Vec::new(), Vec::new()];
    for a in 0..=255u8 {
        for b in 0..=255u8 {
            for &c in &small {
                srcs[0].push(a);
                srcs[1].push(b);
                srcs[2].push(c);
            }
        }
    }
    let fp8 = [NumType::F8E3M4, NumType::F8E4M3, NumType::F8E5M2, NumType::F8E4M3Fn];
    for tin in fp8 {
        for tout in fp8 {
            let spec = ReduceSpec::add(tin, NumType::F32, tout);
            let p = run(&spec, &srcs, Isa::Portable);
            for isa in [Isa::Avx2, Isa::Avx512] {
                assert!(run(&spec, &srcs, isa) == p, "{spec:?} {isa:?}");
            }
        }
    }
}

/// The smallest magnitude of `t` that is an infinity or a NaN (every larger one is one too).
fn first_special(t: NumType) -> u8 {
    match t {
        NumType::F8E3M4 => 0x70,
        NumType::F8E4M3 => 0x78,
        NumType::F8E5M2 => 0x7c,
        _ => 0x7f,
    }
}

/// One-byte float in and out, in tiles free of infinities and NaNs (where the AVX2 level's
/// fused kernel computes in the input format's scaled domain when the output shares its grid;
/// see `fp8_add_scaled_avx2`), into every output format:
/// every finite byte against every finite byte, plus 1 to 32 sources walking the finite bytes
/// (sums up to 32 times the largest finite, so overflow and saturation), both overflow modes,
/// now and then a tile with one infinity or NaN byte in one source (declined to the tile loop,
/// the kernel going on after it), whole tiles and a ragged tail, each against the portable bits.
#[test]
fn fp8_add_agrees_on_every_isa_in_finite_tiles() {
    for t in [NumType::F8E3M4, NumType::F8E4M3, NumType::F8E5M2, NumType::F8E4M3Fn] {
        let lim = first_special(t);
        let finite: Vec<u8> = (0..=255u8).filter(|b| b & 0x7f < lim).collect();
        let f = finite.len();
        let mut cases: Vec<Vec<Vec<u8>>> =
            vec![vec![(0..f * f).map(|j| finite[j / f]).collect(), (0..f * f).map(|j| finite[j % f]).collect()]];
        for nsrc in [1usize, 3, 4, 5, 8, 17, 32] {
            let n = 64 * 53 + 23;
            cases.push((0..nsrc).map(|k| (0..n).map(|j| finite[(j * (2 * k + 1) + 37 * k) % f]).collect()).collect());
        }
        for mut srcs in cases {
            let (nsrc, n) = (srcs.len(), srcs[0].len());
            // One special byte in every seventh tile, in a source and at a place that move.
            for (i, tile) in (0..n / 64).step_by(7).enumerate() {
                let (mag, sign) = (if i % 2 == 0 { lim } else { 0x7f }, ((i / 2) % 2) as u8);
                srcs[i % nsrc][64 * tile + (i * 13) % 64] = mag | (sign << 7);
            }
            // Every output format: the kernel takes e4m3 <-> e4m3fn too (one grid, different
            // specials); the others run the tile loop.
            for tout in [NumType::F8E3M4, NumType::F8E4M3, NumType::F8E5M2, NumType::F8E4M3Fn] {
                for saturate in [false, true] {
                    let spec = ReduceSpec { saturate, ..ReduceSpec::add(t, NumType::F32, tout) };
                    let p = run(&spec, &srcs, Isa::Portable);
                    for isa in [Isa::Avx2, Isa::Avx512] {
                        assert!(run(&spec, &srcs, isa) == p, "{spec:?} {isa:?} nsrc {nsrc}");
                    }
                }
            }
        }
    }
}

/// The AVX2 level takes one-byte ADDs into the input's own grid (the same format, or e4m3 <->
/// e4m3fn) through its fused kernel, and leaves other format changes and stochastic rounding
/// to the tile loop.
#[test]
fn kernel_name_reports_the_avx2_fused_route() {
    let exec = Exec { max_isa: Isa::Avx2, ..Exec::default() };
    if !cce_numerics::kernel_name(&ReduceSpec::add(NumType::Bf16, NumType::F32, NumType::Bf16), 2, 4096, &exec)
        .starts_with("avx2:")
    {
        return; // not an AVX2 machine
    }
    let name = |tin, tout| cce_numerics::kernel_name(&ReduceSpec::add(tin, NumType::F32, tout), 4, 1 << 20, &exec);
    for t in [NumType::F8E3M4, NumType::F8E4M3, NumType::F8E5M2, NumType::F8E4M3Fn] {
        assert_eq!(name(t, t), "avx2:fp8-fused", "{t:?}");
    }
    assert_eq!(name(NumType::F8E4M3, NumType::F8E4M3Fn), "avx2:fp8-fused");
    assert_eq!(name(NumType::F8E4M3Fn, NumType::F8E4M3), "avx2:fp8-fused");
    assert_eq!(name(NumType::F8E4M3, NumType::F8E5M2), "avx2:tiles");
    let sr = ReduceSpec::add(NumType::F8E4M3, NumType::F32, NumType::F8E4M3)
        .with_rounding(cce_numerics::Rounding::Stochastic { seed: 1, stream: 0 });
    assert_eq!(cce_numerics::kernel_name(&sr, 4, 1 << 20, &exec), "avx2:tiles");
}
