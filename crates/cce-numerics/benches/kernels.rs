//! Criterion benches of the hot kernels on small (1 MiB per source) buffers.
#![allow(missing_docs)]

use cce_numerics::{NumType, ReduceSpec, Rounding, reduce};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

const N: usize = 1 << 19; // elements; 1 MiB of bf16 per source

fn data(seed: u64, bytes: usize) -> Vec<u8> {
    let mut x = seed;
    (0..bytes)
        .map(|i| {
            x = cce_numerics::rng::mix64(x.wrapping_add(0x9e37_79b9_7f4a_7c15));
            // keep bf16 / fp8 values finite: clear the top exponent bit of every high byte
            if i % 2 == 1 { (x as u8) & 0xbf } else { x as u8 }
        })
        .collect()
}

fn add4(c: &mut Criterion, name: &str, ty: NumType, rounding: Rounding) {
    let srcs: Vec<Vec<u8>> = (0..4).map(|i| data(i + 1, N * ty.size())).collect();
    let refs: Vec<&[u8]> = srcs.iter().map(|v| &v[..]).collect();
    let mut out = vec![0u8; N * ty.size()];
    let spec = ReduceSpec::add(ty, NumType::F32, ty).with_rounding(rounding);
    let mut g = c.benchmark_group("reduce");
    g.throughput(Throughput::Bytes((5 * N * ty.size()) as u64));
    g.bench_function(name, |b| b.iter(|| reduce(&spec, &refs, &mut [&mut out], 0)));
    g.finish();
}

fn benches(c: &mut Criterion) {
    add4(c, "add4-bf16-rne", NumType::Bf16, Rounding::Rne);
    add4(c, "add4-bf16-sr", NumType::Bf16, Rounding::Stochastic { seed: 1, stream: 0 });
    add4(c, "add4-fp8e4-rne", NumType::F8E4M3, Rounding::Rne);
    add4(c, "add4-fp16-rne", NumType::F16, Rounding::Rne);
    let src = data(7, 4 * N);
    let mut out = vec![0u8; 2 * N];
    let mut g = c.benchmark_group("convert");
    g.throughput(Throughput::Bytes((6 * N) as u64));
    g.bench_function("narrow-bf16-rne", |b| {
        b.iter(|| cce_numerics::convert(NumType::F32, NumType::Bf16, &src, &mut out, Rounding::Rne, false))
    });
    g.finish();
}

criterion_group! {
    name = group;
    config = Criterion::default().sample_size(10).measurement_time(std::time::Duration::from_secs(1)).warm_up_time(std::time::Duration::from_millis(300));
    targets = benches
}
criterion_main!(group);
