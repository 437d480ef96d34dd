//! Times the GCE codec (`cce_numerics::gce`): compress and expand of 16 Mi gradient-like f32
//! values in blocks of 32, in one call and in packets of 2048 values (the engine's GCE
//! packet), and of one 2048-value packet's buffers over and over (in cache: the codec's own
//! speed), at each level up to the best this CPU has.
//! `cargo run --release -p cce-numerics --example gce_codec [portable|avx2|avx512]`.
use cce_numerics::{Isa, gce};

fn main() {
    let isas: Vec<Isa> = match std::env::args().nth(1).as_deref() {
        Some("portable") => vec![Isa::Portable],
        Some("avx2") => vec![Isa::Avx2],
        Some("avx512") => vec![Isa::Avx512],
        _ => vec![Isa::Portable, Isa::Avx2, Isa::Avx512],
    };
    let n = 1usize << 24;
    let block = 32;
    // Gradient-like: bf16-representable values over 40 binades, both signs.
    let values: Vec<f32> = (0..n)
        .map(|i| {
            let r = cce_numerics::rng::mix64(i as u64);
            let m = f32::from_bits(0x3f80_0000 | ((r as u32) & 0x007f_0000)) - 1.5;
            m * f32::from_bits((((r >> 32) as u32 % 40 + 100) << 23) & 0x7f80_0000)
        })
        .collect();
    let mut scales = vec![0u8; n / block];
    let mut payload = vec![0u8; n];
    let mut out = vec![0f32; n];
    for isa in isas {
        let level = gce::kernel_level(isa);
        for (name, piece, in_cache) in [("whole", n, false), ("2048", 2048, false), ("cache", 2048, true)] {
            // In cache: packet `i % 8` of the first eight, so the buffers stay in L1 / L2.
            let at = |i: usize| if in_cache { i % 8 } else { i } * piece;
            let t = std::time::Instant::now();
            for i in 0..n / piece {
                let (v, q) = (&values[at(i)..at(i) + piece], &mut payload[at(i)..at(i) + piece]);
                gce::compress_with(v, block, &mut scales[at(i) / block..(at(i) + piece) / block], q, isa).unwrap();
            }
            let c = t.elapsed().as_secs_f64();
            let t = std::time::Instant::now();
            for i in 0..n / piece {
                let (q, y) = (&payload[at(i)..at(i) + piece], &mut out[at(i)..at(i) + piece]);
                gce::decompress_with(&scales[at(i) / block..(at(i) + piece) / block], q, block, y, isa).unwrap();
            }
            let d = t.elapsed().as_secs_f64();
            println!(
                "{level:>8} {name:>5}: compress {:.3} ns/value ({:.2} GB/s of f32 in), expand {:.3} ns/value ({:.2} GB/s of f32 out)",
                c * 1e9 / n as f64,
                4.0 * n as f64 / c / 1e9,
                d * 1e9 / n as f64,
                4.0 * n as f64 / d / 1e9
            );
        }
    }
}
