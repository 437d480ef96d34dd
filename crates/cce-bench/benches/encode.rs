//! Criterion: planning and laying out the rings of a 4-source bf16 reduce.
#![allow(missing_docs, reason = "criterion_group! generates undocumented items")]
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn encode(c: &mut Criterion) {
    let mut g = c.benchmark_group("encode");
    for mib in [1u64, 64] {
        let r = cce_bench::encode::encode(mib << 20, 1).expect("plan");
        g.throughput(Throughput::Elements(r.descriptors));
        g.bench_function(format!("add4-bf16-{mib}MiB"), |b| {
            b.iter(|| cce_bench::encode::encode(mib << 20, 1).expect("plan"))
        });
    }
    g.finish();
}

criterion_group!(benches, encode);
criterion_main!(benches);
