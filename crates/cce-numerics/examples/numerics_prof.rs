//! Profiling helper: runs one job repeatedly on in-cache buffers.
//! `cargo run --release -p cce-numerics --example numerics_prof -- JOB`.
use cce_numerics::{Exec, Isa, NumType, ReduceSpec, Rounding, reduce_with};

fn main() {
    let job = std::env::args().nth(1).unwrap_or_else(|| "add4-bf16-rne".into());
    let max_isa = match std::env::args().nth(2).as_deref() {
        Some("portable") => Isa::Portable,
        Some("avx2") => Isa::Avx2,
        _ => Isa::Avx512,
    };
    let exec = Exec { max_isa, ..Exec::default() };
    let n = 1 << 16;
    let (ty, r) = match job.as_str() {
        "add4-bf16-sr" => (NumType::Bf16, Rounding::Stochastic { seed: 1, stream: 0 }),
        "add4-fp8e4-rne" => (NumType::F8E4M3, Rounding::Rne),
        "add4-fp16-rne" => (NumType::F16, Rounding::Rne),
        _ => (NumType::Bf16, Rounding::Rne),
    };
    let srcs: Vec<Vec<u8>> = (0..4u64)
        .map(|i| {
            (0..n * ty.size()).map(|j| (cce_numerics::rng::mix64(i * 1_000_003 + j as u64) as u8) & 0x37).collect()
        })
        .collect();
    let refs: Vec<&[u8]> = srcs.iter().map(|v| &v[..]).collect();
    let mut out = vec![0u8; n * ty.size()];
    let spec = ReduceSpec::add(ty, NumType::F32, ty).with_rounding(r);
    let t = std::time::Instant::now();
    let reps = 20000;
    for _ in 0..reps {
        reduce_with(&spec, &refs, &mut [&mut out], 0, &exec).unwrap();
    }
    let s = t.elapsed().as_secs_f64();
    println!(
        "{job}: {:.2} ns/element, {:.2} GB/s",
        s * 1e9 / (reps * n) as f64,
        (5 * n * ty.size() * reps) as f64 / s / 1e9
    );
}
