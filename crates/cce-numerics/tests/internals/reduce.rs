use cce_numerics::internals::any_dtype::reduce_generic;
use cce_numerics::spec::{FmaSource, Operand, Scalar};
use cce_numerics::*;

fn bytes(seed: u64, n: usize) -> Vec<u8> {
    let mut x = seed;
    (0..n)
        .map(|i| {
            x = cce_numerics::rng::mix64(x.wrapping_add(0x9e37_79b9_7f4a_7c15));
            // Mostly small exponents, some zeros of both signs, some random patterns.
            match i % 7 {
                0 => x as u8,
                1 => (x as u8) & 0x80,
                _ => (x as u8) & 0xbf,
            }
        })
        .collect()
}

/// The hot path (checked against numpy and exact rationals elsewhere) and the generic
/// exact path agree bit for bit on every op with an fp32 accumulator.
#[test]
fn hot_and_generic_paths_agree() {
    use Operand::*;
    let types = [NumType::F32, NumType::Bf16, NumType::F16, NumType::F8E4M3, NumType::F8E5M2, NumType::F8E4M3Fn];
    let fma_sets = [
        vec![FmaSource::scaled(0.75), FmaSource::scaled(-3.5), FmaSource::scaled(1e-3)],
        vec![
            FmaSource { scale: 2.0, a: Stored, b: Input, c: Scale },
            FmaSource { scale: -0.0, a: Input, b: Input, c: Stored },
            FmaSource { scale: 1e30, a: Scale, b: Stored, c: Input },
        ],
    ];
    let mut ops = vec![
        Op::Add,
        Op::Min { clamp: None },
        Op::Max { clamp: None },
        Op::Min { clamp: Some(Scalar::F64(0.25)) },
        Op::Max { clamp: Some(Scalar::I64(-2)) },
        Op::Max { clamp: Some(Scalar::F64(f64::NAN)) },
    ];
    ops.extend(fma_sets.into_iter().map(Op::Fma));
    for tin in types {
        for tout in types {
            for op in &ops {
                for nsrc in [1usize, 3] {
                    for rounding in [Rounding::Rne, Rounding::Stochastic { seed: 5, stream: 1 }] {
                        let op = match op {
                            Op::Fma(v) => Op::Fma(v[..nsrc].to_vec()),
                            o => o.clone(),
                        };
                        let spec = ReduceSpec { saturate: nsrc == 3, ..ReduceSpec::add(tin, NumType::F32, tout) }
                            .with_op(op)
                            .with_rounding(rounding);
                        let n = 333;
                        let srcs: Vec<Vec<u8>> = (0..nsrc).map(|i| bytes(i as u64 + 1, n * tin.size())).collect();
                        let refs: Vec<&[u8]> = srcs.iter().map(|v| &v[..]).collect();
                        let mut hot = vec![0u8; n * tout.size()];
                        reduce(&spec, &refs, &mut [&mut hot], 77).unwrap();
                        let kernel = kernel_name(&spec, nsrc, n, &Exec::default());
                        assert!(!kernel.ends_with(":generic"), "{spec:?}: {kernel}");
                        let mut gen_out = vec![0u8; n * tout.size()];
                        reduce_generic(&spec, NumType::F32, &refs, &mut [&mut gen_out], 77);
                        assert!(hot == gen_out, "{spec:?}");
                    }
                }
            }
        }
    }
}
