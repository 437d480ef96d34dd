//! The whole path (host rings → engine → memory): stochastic rounding is unbiased and
//! deterministic, refusals allocate nothing, FMA scales and replication reach the engine.

use SdmaDtype::*;
use cce_format::{KbinOp, SdmaDtype};
use cce_host::Rounding;
use cce_job::{PathError, ReduceJob, run_reduce};

fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// 10^6 elements whose exact sum is 1 + 2^-9 (a quarter of a bf16 ulp above 1.0): stochastic
/// rounding to bf16 gives 1.0 or 1.0078125, and their mean must sit within 3σ of the exact
/// value; RNE always gives 1.0.
#[test]
fn stochastic_rounding_through_the_engine_is_unbiased() {
    let n = 1_000_000;
    let a = f32s(&vec![1.0; n]);
    let b = f32s(&vec![2f32.powi(-9); n]);
    let job = ReduceJob { rounding: Rounding::Stochastic { seed: 2024 }, ..ReduceJob::add(Fp32, Fp32, Bf16) };
    let o = run_reduce(&job, &[&a, &b]).unwrap();
    let vals: Vec<f64> = o.outputs[0]
        .chunks_exact(2)
        .map(|c| f32::from_bits((u16::from_le_bytes([c[0], c[1]]) as u32) << 16) as f64)
        .collect();
    let ulp = 2f64.powi(-7);
    assert!(vals.iter().all(|&v| v == 1.0 || v == 1.0 + ulp), "each result is a neighbour of the exact value");
    let exact = 1.0 + 2f64.powi(-9);
    let mean = vals.iter().sum::<f64>() / n as f64;
    let sigma = ulp * (0.25f64 * 0.75).sqrt() / (n as f64).sqrt();
    assert!((mean - exact).abs() <= 3.0 * sigma, "mean {mean} vs exact {exact} (3σ = {})", 3.0 * sigma);
    // Same seed: same bytes with two threads; another seed: other bytes.
    let two = run_reduce(&ReduceJob { threads: 2, ..job.clone() }, &[&a, &b]).unwrap();
    assert_eq!(two.outputs, o.outputs);
    let other =
        run_reduce(&ReduceJob { rounding: Rounding::Stochastic { seed: 7 }, ..job.clone() }, &[&a, &b]).unwrap();
    assert_ne!(other.outputs, o.outputs);
    let rne = run_reduce(&ReduceJob { rounding: Rounding::Rne, ..job }, &[&a, &b]).unwrap();
    assert!(rne.outputs[0].chunks_exact(2).all(|c| c == 0x3F80u16.to_le_bytes()));
}

#[test]
fn scales_constant_and_replication_reach_the_engine() {
    let a = f32s(&[1.0, 2.0, -3.0, 4.0]);
    let b = f32s(&[10.0, 20.0, 30.0, -40.0]);
    let job = ReduceJob { op: KbinOp::Fma, scales: vec![2.0, 0.5], dests: 3, ..ReduceJob::add(Fp32, Fp32, Fp32) };
    let o = run_reduce(&job, &[&a, &b]).unwrap();
    assert_eq!(o.outputs.len(), 3);
    assert!(o.outputs.iter().all(|x| *x == f32s(&[7.0, 14.0, 9.0, -12.0])));
    let c = cce_host::MinMaxConstant::parse("3", I16).unwrap();
    let job = ReduceJob { op: KbinOp::Max, constant: Some(c), ..ReduceJob::add(Fp32, Fp32, Fp32) };
    assert_eq!(run_reduce(&job, &[&a, &b]).unwrap().outputs[0], f32s(&[10.0, 20.0, 30.0, 4.0]));
}

#[test]
fn refusals_allocate_nothing() {
    let a = vec![0u8; 64];
    // The study's dispatcher rules come back as host errors.
    let job = ReduceJob { op: KbinOp::Copy, ..ReduceJob::add(Bf16, Fp32, Bf16) };
    assert!(matches!(run_reduce(&job, &[&a]), Err(PathError::Host(_))));
    let job = ReduceJob { dests: 2, arch: 2, ..ReduceJob::add(Bf16, Fp32, Bf16) };
    assert_eq!(run_reduce(&job, &[&a]).unwrap_err().to_string(), "CCE replication not supported for v1/v2 archs");
    // Sizes that would exhaust the model's memory are refused before allocating.
    let job = ReduceJob { budget: 100, ..ReduceJob::add(Bf16, Fp32, Bf16) };
    assert!(matches!(run_reduce(&job, &[&a, &a]), Err(PathError::Memory(_))));
    assert!(matches!(
        run_reduce(&ReduceJob::add(Bf16, Fp32, Bf16), &[&a, &a[..62]]),
        Err(PathError::SourceLengths { index: 1, first: 64, len: 62 })
    ));
}
