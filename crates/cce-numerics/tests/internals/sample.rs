use cce_numerics::rng::fmix32;
use cce_numerics::sample::*;
use cce_numerics::*;

#[test]
fn uniform_floats_lie_in_range_and_are_deterministic() {
    let a = sample(NumType::Bf16, 1000, 7, SampleKind::Uniform).unwrap();
    assert_eq!(a.len(), 2000);
    assert_eq!(a, sample(NumType::Bf16, 1000, 7, SampleKind::Uniform).unwrap());
    assert_ne!(a, sample(NumType::Bf16, 1000, 8, SampleKind::Uniform).unwrap());
    for c in a.chunks_exact(2) {
        let f = f32::from_bits(u32::from(u16::from_le_bytes([c[0], c[1]])) << 16);
        assert!((-1.0..=1.0).contains(&f), "{f}");
    }
}

#[test]
fn integers_stay_in_range_and_ramp_counts() {
    let a = sample(NumType::I16, 500, 3, SampleKind::Uniform).unwrap();
    assert!(a.chunks_exact(2).all(|c| (-999..=999).contains(&i16::from_le_bytes([c[0], c[1]]))));
    // The same values as two's complement in an unsigned dtype of the same width.
    let u = sample(NumType::U16, 500, 3, SampleKind::Uniform).unwrap();
    assert_eq!(u, a);
    let u = sample(NumType::U8, 300, 3, SampleKind::Ramp).unwrap();
    assert_eq!(u[299], (299 % 256) as u8);
    let f = sample(NumType::F32, 4, 0, SampleKind::Ramp).unwrap();
    assert_eq!(f32::from_le_bytes([f[12], f[13], f[14], f[15]]), 3.0);
    assert_eq!(sample(NumType::F8E4M3, 33, 1, SampleKind::Bits).unwrap().len(), 33);
}

#[test]
fn any_block_equals_the_same_elements_of_the_whole_sample() {
    for t in [NumType::Bf16, NumType::F16, NumType::F32, NumType::F8E4M3, NumType::I32, NumType::U8, NumType::I64] {
        for kind in [SampleKind::Uniform, SampleKind::Ramp, SampleKind::Bits] {
            let whole = sample(t, 5000, 42, kind).unwrap();
            for (first, len) in [(0usize, 1usize), (1, 4097), (2047, 2), (2048, 2049), (4999, 1), (3, 0)] {
                let mut part = vec![0u8; len * t.size()];
                sample_into(t, first as u64, 42, kind, &mut part).unwrap();
                assert_eq!(part, whole[first * t.size()..(first + len) * t.size()], "{t:?} {kind:?} {first}");
            }
        }
    }
    assert!(sample_into(NumType::Bf16, 0, 1, SampleKind::Uniform, &mut [0u8; 3]).is_err());
    let whole = sample(NumType::Bf16, 3 * PASS + 5, 8, SampleKind::Uniform).unwrap();
    for threads in [1, 2, 3, 7] {
        assert_eq!(sample_par(NumType::Bf16, 3 * PASS + 5, 8, SampleKind::Uniform, threads).unwrap(), whole);
        // A stretch that starts mid-sample, split over threads, is that stretch of the whole.
        let mut part = vec![0u8; 2 * (2 * PASS + 3)];
        sample_into_par(NumType::Bf16, 7, 8, SampleKind::Uniform, &mut part, threads).unwrap();
        assert_eq!(part, whole[14..14 + part.len()], "{threads}");
    }
}

#[test]
fn uniform_values_are_the_formula_of_the_counter_bits() {
    // Element i's fp32 value from the module's formula, written out here independently.
    let f = sample(NumType::F32, 3000, 9, SampleKind::Uniform).unwrap();
    let mut sum = 0.0f64;
    for (i, c) in f.chunks_exact(4).enumerate() {
        let v = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        let (k0, k1) = keys(9, 0);
        let x = fmix32(fmix32(i as u32 ^ k0) ^ k1);
        let want = ((x >> 8) as f64 * 2.0 + 1.0 - 16_777_216.0) / 16_777_216.0;
        assert_eq!(f64::from(v), want, "{i}");
        assert!(v > -1.0 && v < 1.0 && v != 0.0);
        sum += f64::from(v);
    }
    // Roughly centred: |mean| of 3000 uniforms on (−1, 1) is far below 0.1.
    assert!((sum / 3000.0).abs() < 0.1, "{sum}");
    // Elements past 2³² take the keys of their high half.
    let mut far = [0u8; 8];
    sample_into(NumType::F32, (1u64 << 32) + 5, 9, SampleKind::Uniform, &mut far).unwrap();
    let (k0, k1) = keys(9, 1);
    let x = fmix32(fmix32(5 ^ k0) ^ k1);
    assert_eq!(f32::from_le_bytes([far[0], far[1], far[2], far[3]]), uniform_of(x));
    // Integers: trunc(1000 v), computed in f64 here.
    let ints = sample(NumType::I32, 3000, 9, SampleKind::Uniform).unwrap();
    for (c, fc) in ints.chunks_exact(4).zip(f.chunks_exact(4)) {
        let v = f64::from(f32::from_le_bytes([fc[0], fc[1], fc[2], fc[3]]));
        assert_eq!(i32::from_le_bytes([c[0], c[1], c[2], c[3]]), (1000.0 * v).trunc() as i32);
    }
}
