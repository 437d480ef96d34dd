use cce_numerics::*;

use cce_numerics::trace::*;

/// The trace's output bits are the bulk reduce's, element by element, for RNE and SR, bf16
/// and fp32 accumulate; and its steps chain (each combine starts from the previous one).
#[test]
fn the_trace_gives_the_reduce_bits() {
    let n = 300usize;
    let srcs: Vec<Vec<u8>> = (0..3u32)
        .map(|s| {
            (0..n as u32)
                .flat_map(|i| {
                    let x = ((i.wrapping_mul(2_654_435_761) ^ (s * 977)) % 4001) as f32 / 97.0 - 20.0;
                    ((x.to_bits() >> 16) as u16).to_le_bytes()
                })
                .collect()
        })
        .collect();
    let views: Vec<&[u8]> = srcs.iter().map(Vec::as_slice).collect();
    for acc in [NumType::F32, NumType::Bf16] {
        for rounding in [Rounding::Rne, Rounding::Stochastic { seed: 7, stream: 0 }] {
            let spec = ReduceSpec::add(NumType::Bf16, acc, NumType::Bf16).with_rounding(rounding);
            let mut out = vec![0u8; 2 * n];
            reduce(&spec, &views, &mut [&mut out], 1000).unwrap();
            let mut stochastic = 0;
            for j in 0..n {
                let bits: Vec<u64> =
                    srcs.iter().map(|s| u64::from(u16::from_le_bytes([s[2 * j], s[2 * j + 1]]))).collect();
                let t = trace_element(&spec, &bits, 1000 + j as u64).unwrap();
                assert_eq!(
                    t.out.bits,
                    u64::from(u16::from_le_bytes([out[2 * j], out[2 * j + 1]])),
                    "{acc:?} {rounding:?} {j}"
                );
                assert_eq!((t.operands.len(), t.steps.len()), (3, 2));
                assert_eq!(t.accumulator, t.steps[1].rounded);
                stochastic += t.steps.iter().filter(|s| matches!(s.rounding, HowRounded::Stochastic { .. })).count();
            }
            // bf16 accumulate under SR rounds its steps stochastically; fp32 does not.
            let expect_sr = acc == NumType::Bf16 && rounding != Rounding::Rne;
            assert_eq!(stochastic > 0, expect_sr, "{acc:?} {rounding:?}");
        }
    }
}

/// SR's record: `up` is exactly `⌊frac · 2³²⌋ + random ≥ 2³²`, checked against the value
/// rounded down and up by hand (fp32 accumulator → bf16 out).
#[test]
fn stochastic_rounding_records_its_bits_and_probability() {
    let spec = ReduceSpec::add(NumType::F32, NumType::F32, NumType::Bf16)
        .with_rounding(Rounding::Stochastic { seed: 3, stream: 0 });
    // 1 + 2^-9 + 2^-10 lies 0.375 of a bf16 ulp (2^-7) above 1.
    let x = 1.0f32 + 2f32.powi(-9) + 2f32.powi(-10);
    let mut ups = 0;
    for index in 0..2000u64 {
        let t = trace_element(&spec, &[u64::from(x.to_bits())], index).unwrap();
        let HowRounded::Stochastic { random, p_up, up } = t.out_rounding else { panic!("{t:?}") };
        assert_eq!(p_up, 0.375);
        assert_eq!(up, (0.375 * 4_294_967_296.0) as u64 + u64::from(random) >= 1 << 32);
        let want = if up { 1.0 + 2f64.powi(-7) } else { 1.0 };
        assert_eq!(t.out.value, want);
        ups += usize::from(up);
    }
    // About 37.5 % of 2000 round up.
    assert!((650..850).contains(&ups), "{ups}");
}
