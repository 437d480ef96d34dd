//! The register-resident ADD kernels (AVX2 and AVX-512) give the portable bits. Into bf16 (bf16
//! or fp32 sources): every bf16 pattern in every source position, fp32 patterns around every
//! bf16 rounding, subnormal, overflow, infinity and NaN boundary, 1 to 32 sources, RNE and SR
//! at first indices that start, straddle and end runs of 2³² indices, both overflow modes,
//! ragged tails, outputs at odd and unaligned addresses, and outputs large enough for
//! non-temporal stores. fp16 into fp16 (RNE): every fp16 pattern in every source position, 1
//! to 32 sources, both overflow modes, ragged tails, odd and unaligned outputs. The same
//! kernels' FMA (the runtime's default selectors, one scale per source) and MIN / MAX (with
//! and without clamps: ±0, a finite value, NaN) over the same patterns. The widening of bf16
//! into fp32: every bf16 pattern, both overflow modes, odd, unaligned and streaming outputs. On a CPU
//! without a level, that level's run is the portable copy and the test still checks the rest.

use cce_numerics::{Exec, FmaSource, Isa, NumType, Op, Operand, ReduceSpec, Rounding, Scalar, reduce_with};

const ISAS: [Isa; 2] = [Isa::Avx2, Isa::Avx512];

/// Runs `spec` with the output `offset` bytes into its buffer (to move its alignment).
fn run(spec: &ReduceSpec, srcs: &[Vec<u8>], first: u64, isa: Isa, offset: usize) -> Vec<u8> {
    let refs: Vec<&[u8]> = srcs.iter().map(|s| &s[..]).collect();
    let n = srcs[0].len() / spec.in_type.size();
    let mut buf = vec![0u8; n * 2 + offset];
    let exec = Exec { max_isa: isa, ..Exec::default() };
    reduce_with(spec, &refs, &mut [&mut buf[offset..]], first, &exec).unwrap();
    buf.split_off(offset)
}

/// Source `k` of `nsrc` 16-bit sources (bf16 or fp16): source 0 walks every pattern in order, source `k` with
/// its own odd stride, so every pattern meets many partners (inf, NaN, subnormals, zeros).
fn bf16_sources(nsrc: usize, n: usize) -> Vec<Vec<u8>> {
    (0..nsrc)
        .map(|k| (0..n).flat_map(|j| (((j * (2 * k + 1) + 37 * k) & 0xffff) as u16).to_le_bytes()).collect())
        .collect()
}

/// fp32 patterns: a stride over all 2³² and the neighbourhood of every bf16 rounding point of
/// every exponent (ties, one below, one above), both signs.
fn f32_patterns() -> Vec<u32> {
    let mut v: Vec<u32> = (0..(1u64 << 32)).step_by(65_537).map(|x| x as u32).collect();
    for e in 0..512u32 {
        let b = (e & 0xff) << 23 | (e >> 8) << 31;
        for m in [0u32, 0x7fff, 0x8000, 0x8001, 0x1_7fff, 0x1_8000, 0x1_8001, 0x7f_ffff, 0x7f_8000, 0x40_0000] {
            v.push(b | m);
        }
    }
    v
}

fn specs(tin: NumType) -> Vec<ReduceSpec> {
    let mut v = Vec::new();
    for rounding in [Rounding::Rne, Rounding::Stochastic { seed: 3, stream: 1 }] {
        for saturate in [false, true] {
            v.push(ReduceSpec {
                saturate,
                ..ReduceSpec::add(tin, NumType::F32, NumType::Bf16).with_rounding(rounding)
            });
        }
    }
    v
}

#[test]
fn bf16_sources_agree_on_every_isa() {
    let n = 65_536 + 23;
    for nsrc in [1usize, 2, 3, 4, 7, 32] {
        let srcs = bf16_sources(nsrc, n);
        for spec in specs(NumType::Bf16) {
            for first in [0u64, 5, (1 << 32) - 1000, u64::MAX - n as u64] {
                let p = run(&spec, &srcs, first, Isa::Portable, 0);
                for isa in ISAS {
                    assert!(run(&spec, &srcs, first, isa, 0) == p, "{spec:?} {isa:?} nsrc {nsrc} first {first}");
                }
            }
        }
    }
}

#[test]
fn f32_sources_agree_on_every_isa() {
    let x: Vec<u8> = f32_patterns().iter().flat_map(|p| p.to_le_bytes()).collect();
    // -0.0 leaves every sum exact but takes a NaN's sign away; the third source rotates.
    let neg_zero: Vec<u8> = (0..x.len() / 4).flat_map(|_| 0x8000_0000u32.to_le_bytes()).collect();
    let mut rotated = x.clone();
    rotated.rotate_left(4 * 101);
    for srcs in [vec![x.clone()], vec![x.clone(), neg_zero.clone()], vec![x.clone(), rotated.clone(), neg_zero]] {
        for spec in specs(NumType::F32) {
            for first in [0u64, 17, (1 << 32) - 3000] {
                let p = run(&spec, &srcs, first, Isa::Portable, 0);
                for isa in ISAS {
                    assert!(
                        run(&spec, &srcs, first, isa, 0) == p,
                        "{spec:?} {isa:?} nsrc {} first {first}",
                        srcs.len()
                    );
                }
            }
        }
    }
}

/// Outputs at every byte offset of a cache line (odd ones cannot stream), small and large
/// enough for non-temporal stores (8 MiB of bf16 output), with a ragged tail.
#[test]
fn unaligned_and_streaming_outputs_agree_on_every_isa() {
    for n in [1000usize, (4 << 20) + 45] {
        let srcs = bf16_sources(3, n);
        for spec in specs(NumType::Bf16).into_iter().step_by(3) {
            let p = run(&spec, &srcs, 9, Isa::Portable, 0);
            for offset in [0usize, 1, 2, 30, 62] {
                for isa in ISAS {
                    assert!(run(&spec, &srcs, 9, isa, offset) == p, "{spec:?} {isa:?} n {n} offset {offset}");
                }
            }
        }
    }
}

#[test]
fn f16_sources_agree_on_every_isa() {
    let n = 65_536 + 23;
    for nsrc in [1usize, 2, 3, 4, 7, 32] {
        let srcs = bf16_sources(nsrc, n);
        for saturate in [false, true] {
            let spec = ReduceSpec { saturate, ..ReduceSpec::add(NumType::F16, NumType::F32, NumType::F16) };
            let p = run(&spec, &srcs, 3, Isa::Portable, 0);
            for isa in ISAS {
                for offset in [0usize, 1, 34] {
                    assert!(run(&spec, &srcs, 3, isa, offset) == p, "{spec:?} {isa:?} nsrc {nsrc} offset {offset}");
                }
            }
        }
    }
    // Large enough for non-temporal stores, with a ragged tail.
    let srcs = bf16_sources(3, (4 << 20) + 45);
    let spec = ReduceSpec::add(NumType::F16, NumType::F32, NumType::F16);
    let p = run(&spec, &srcs, 0, Isa::Portable, 0);
    for isa in ISAS {
        for offset in [0usize, 2] {
            assert!(run(&spec, &srcs, 0, isa, offset) == p, "{isa:?} streaming offset {offset}");
        }
    }
}

/// The report names the register-resident route where the CPU has a level with it.
#[test]
fn kernel_name_reports_the_route() {
    let spec = ReduceSpec::add(NumType::Bf16, NumType::F32, NumType::Bf16);
    let exec = Exec::default();
    let small = cce_numerics::kernel_name(&spec, 4, 1 << 10, &exec);
    let large = cce_numerics::kernel_name(&spec, 4, 64 << 20, &exec);
    let portable = cce_numerics::kernel_name(&spec, 4, 1 << 10, &Exec { max_isa: Isa::Portable, ..exec });
    assert_eq!(portable, "portable:tiles");
    match cce_numerics::detected_isa() {
        Isa::Avx512 => {
            assert_eq!(small, "avx512:bf16-add");
            assert_eq!(large, "avx512:bf16-add-nt");
        }
        Isa::Avx2 => assert_eq!(small, "avx2:bf16-add"),
        Isa::Portable => assert_eq!(small, "portable:tiles"),
    }
    let f16 = ReduceSpec::add(NumType::F16, NumType::F32, NumType::F16);
    let f16_sr = f16.clone().with_rounding(Rounding::Stochastic { seed: 1, stream: 0 });
    match cce_numerics::detected_isa() {
        Isa::Avx512 => assert_eq!(cce_numerics::kernel_name(&f16, 2, 1 << 10, &exec), "avx512:f16-add"),
        Isa::Avx2 => assert_eq!(cce_numerics::kernel_name(&f16, 2, 1 << 10, &exec), "avx2:f16-add"),
        Isa::Portable => {}
    }
    assert!(cce_numerics::kernel_name(&f16_sr, 2, 1 << 10, &exec).ends_with(":tiles"));
    let int = ReduceSpec::add(NumType::I16, NumType::I32, NumType::I16);
    assert!(cce_numerics::kernel_name(&int, 2, 100, &exec).ends_with(":generic"));
}

/// FMA with the default selectors (both operand orders), MIN and MAX with every kind of clamp,
/// over `nsrc` sources, RNE and SR, both overflow modes.
fn op_specs(tin: NumType, nsrc: usize) -> Vec<ReduceSpec> {
    let scales = [0.25f32, -1.5, 3.0, 1e-3, -0.0, 7.0e30, 1.0];
    let fma = |swap: bool| {
        Op::Fma(
            (0..nsrc)
                .map(|i| {
                    let scale = scales[i % scales.len()];
                    if swap {
                        FmaSource { scale, a: Operand::Scale, b: Operand::Input, c: Operand::Stored }
                    } else {
                        FmaSource::scaled(scale)
                    }
                })
                .collect(),
        )
    };
    let mut ops = vec![fma(false), fma(true)];
    for clamp in [None, Some(0.0), Some(-0.0), Some(1.5), Some(f64::NAN)] {
        let clamp = clamp.map(Scalar::F64);
        ops.push(Op::Max { clamp });
        ops.push(Op::Min { clamp });
    }
    let mut v = Vec::new();
    for op in ops {
        for rounding in [Rounding::Rne, Rounding::Stochastic { seed: 5, stream: 2 }] {
            for saturate in [false, true] {
                v.push(ReduceSpec {
                    saturate,
                    ..ReduceSpec::add(tin, NumType::F32, NumType::Bf16).with_rounding(rounding).with_op(op.clone())
                });
            }
        }
    }
    v
}

#[test]
fn fma_min_max_agree_on_every_isa() {
    let n = 65_536 + 23;
    for nsrc in [1usize, 2, 3, 4, 7, 32] {
        let srcs = bf16_sources(nsrc, n);
        for spec in op_specs(NumType::Bf16, nsrc) {
            for first in [0u64, (1 << 32) - 1000] {
                let p = run(&spec, &srcs, first, Isa::Portable, 0);
                for isa in ISAS {
                    assert!(run(&spec, &srcs, first, isa, 0) == p, "{spec:?} {isa:?} nsrc {nsrc} first {first}");
                }
            }
        }
    }
    let x: Vec<u8> = f32_patterns().iter().flat_map(|p| p.to_le_bytes()).collect();
    let neg_zero: Vec<u8> = (0..x.len() / 4).flat_map(|_| 0x8000_0000u32.to_le_bytes()).collect();
    let mut rotated = x.clone();
    rotated.rotate_left(4 * 101);
    for srcs in [vec![x.clone()], vec![x.clone(), neg_zero.clone()], vec![x.clone(), rotated.clone(), neg_zero]] {
        for spec in op_specs(NumType::F32, srcs.len()) {
            let p = run(&spec, &srcs, 17, Isa::Portable, 0);
            for isa in ISAS {
                for offset in [0usize, 2] {
                    assert!(
                        run(&spec, &srcs, 17, isa, offset) == p,
                        "{spec:?} {isa:?} nsrc {} offset {offset}",
                        srcs.len()
                    );
                }
            }
        }
    }
    // Streaming (8 MiB of output), a ragged tail.
    let srcs = bf16_sources(3, (4 << 20) + 45);
    for spec in op_specs(NumType::Bf16, 3).into_iter().step_by(5) {
        let p = run(&spec, &srcs, 0, Isa::Portable, 0);
        for isa in ISAS {
            assert!(run(&spec, &srcs, 0, isa, 0) == p, "{spec:?} {isa:?} streaming");
        }
    }
}

/// FMA, MIN and MAX name their register-resident routes; FMA with other selectors, or with
/// fewer operand sets than sources, stays on the tile loop.
#[test]
fn kernel_name_reports_the_op_routes() {
    let exec = Exec::default();
    let base = ReduceSpec::add(NumType::Bf16, NumType::F32, NumType::Bf16);
    let name = |op: Op, n: usize| cce_numerics::kernel_name(&base.clone().with_op(op), n, 1 << 10, &exec);
    let level = match cce_numerics::detected_isa() {
        Isa::Avx512 => "avx512",
        Isa::Avx2 => "avx2",
        Isa::Portable => return,
    };
    assert_eq!(name(Op::Fma(vec![FmaSource::scaled(0.5); 2]), 2), format!("{level}:bf16-fma"));
    assert_eq!(name(Op::Max { clamp: None }, 2), format!("{level}:bf16-max"));
    assert_eq!(name(Op::Min { clamp: Some(Scalar::F64(1.0)) }, 2), format!("{level}:bf16-min"));
    let stored_first = FmaSource { scale: 0.5, a: Operand::Stored, b: Operand::Scale, c: Operand::Input };
    assert_eq!(name(Op::Fma(vec![stored_first; 2]), 2), format!("{level}:tiles"));
    assert_eq!(name(Op::Fma(vec![FmaSource::scaled(0.5); 1]), 2), format!("{level}:tiles"));
}

/// Widens `src` (bf16) into fp32 with the output `offset` bytes into its buffer.
fn run_widen(saturate: bool, src: &[u8], isa: Isa, offset: usize) -> Vec<u8> {
    let spec = cce_numerics::convert_spec(NumType::Bf16, NumType::F32, Rounding::Rne, saturate);
    let mut buf = vec![0u8; src.len() * 2 + offset];
    let exec = Exec { max_isa: isa, ..Exec::default() };
    reduce_with(&spec, &[src], &mut [&mut buf[offset..]], 0, &exec).unwrap();
    buf.split_off(offset)
}

/// The widening rule written out here: the bf16 bits in the high half; NaN → 0x7fc0_0000 with
/// its sign; with saturation an infinity → the largest finite fp32 of its sign.
fn widened(b: u16, saturate: bool) -> u32 {
    let x = u32::from(b) << 16;
    let (mag, sign) = (x & 0x7fff_ffff, x & 0x8000_0000);
    if mag > 0x7f80_0000 {
        0x7fc0_0000 | sign
    } else if saturate && mag == 0x7f80_0000 {
        0x7f7f_ffff | sign
    } else {
        x
    }
}

#[test]
fn bf16_widening_agrees_on_every_isa() {
    // Every pattern twice over with a ragged tail, then a call large enough for non-temporal
    // stores.
    for n in [2 * 65_536 + 23, (1usize << 20) + 45] {
        let src: Vec<u8> = (0..n).flat_map(|j| (((j * 40_503) & 0xffff) as u16).to_le_bytes()).collect();
        for saturate in [false, true] {
            let want: Vec<u8> = src
                .chunks_exact(2)
                .flat_map(|c| widened(u16::from_le_bytes([c[0], c[1]]), saturate).to_le_bytes())
                .collect();
            assert!(run_widen(saturate, &src, Isa::Portable, 0) == want, "portable, saturate {saturate}");
            for isa in ISAS {
                for offset in [0usize, 1, 4, 60] {
                    assert!(
                        run_widen(saturate, &src, isa, offset) == want,
                        "{isa:?} n {n} saturate {saturate} offset {offset}"
                    );
                }
            }
        }
    }
}

#[test]
fn kernel_name_reports_the_widening_route() {
    let spec = cce_numerics::convert_spec(NumType::Bf16, NumType::F32, Rounding::Rne, false);
    let exec = Exec::default();
    let (small, large) =
        (cce_numerics::kernel_name(&spec, 1, 1 << 10, &exec), cce_numerics::kernel_name(&spec, 1, 64 << 20, &exec));
    match cce_numerics::detected_isa() {
        Isa::Avx512 => assert_eq!((small.as_str(), large.as_str()), ("avx512:bf16-widen", "avx512:bf16-widen-nt")),
        Isa::Avx2 => assert_eq!((small.as_str(), large.as_str()), ("avx2:bf16-widen", "avx2:bf16-widen-nt")),
        Isa::Portable => assert_eq!(small, "portable:tiles"),
    }
    // Two sources into fp32 are a sum, not a widening: the tile loop.
    let sum = ReduceSpec::add(NumType::Bf16, NumType::F32, NumType::F32);
    assert!(cce_numerics::kernel_name(&sum, 2, 1 << 10, &exec).ends_with(":tiles"));
}

/// MIN and MAX of bf16 sources meet every pair (and triple) of the values where the model's
/// rules bite — ±0 (equal values give their AND / OR), ±inf, NaNs of both signs and several
/// payloads, the largest and smallest magnitudes, neighbours of one — and agree on every ISA.
#[test]
fn min_max_of_every_pair_of_edge_values_agree_on_every_isa() {
    let edge: [u16; 20] = [
        0x0000, 0x8000, 0x7f80, 0xff80, 0x7fc0, 0xffc0, 0x7f81, 0xffff, 0x7f7f, 0xff7f, 0x0001, 0x8001, 0x3f80, 0xbf80,
        0x3f81, 0xbf7f, 0x0080, 0x8080, 0x4000, 0xc000,
    ];
    let m = edge.len();
    // Every triple, so that two-source runs see every pair and three-source runs every triple;
    // repeated to whole and ragged blocks.
    let mut srcs = [Vec::new(), Vec::new(), Vec::new()];
    for i in 0..m * m * m {
        for (k, s) in srcs.iter_mut().enumerate() {
            let v = edge[(i / m.pow(k as u32)) % m];
            s.extend_from_slice(&v.to_le_bytes());
        }
    }
    for nsrc in [2usize, 3] {
        let srcs = &srcs[..nsrc];
        for op in [Op::Max { clamp: None }, Op::Min { clamp: None }] {
            for saturate in [false, true] {
                let spec = ReduceSpec {
                    saturate,
                    ..ReduceSpec::add(NumType::Bf16, NumType::F32, NumType::Bf16).with_op(op.clone())
                };
                let p = run(&spec, srcs, 0, Isa::Portable, 0);
                for isa in ISAS {
                    assert!(run(&spec, srcs, 0, isa, 0) == p, "{spec:?} {isa:?} nsrc {nsrc}");
                }
            }
        }
    }
}
