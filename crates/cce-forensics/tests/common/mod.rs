//! An independent reference for the tests: an order evaluated with Rust's own f32 addition
//! (IEEE, RNE) and a bf16 rounding written here from the format's definition — no cce code.

#![allow(dead_code)]

use cce_numerics::order::Order;

/// f32 → bf16 with round-to-nearest-even (finite values): the 16 dropped bits, ties to even.
pub(crate) fn bf16_rne(x: f32) -> f32 {
    let b = x.to_bits();
    let lsb = (b >> 16) & 1;
    f32::from_bits(b.wrapping_add(0x7fff + lsb) & 0xffff_0000)
}

/// The identity rounding (fp32 buffers).
pub(crate) fn f32_keep(x: f32) -> f32 {
    x
}

/// `order` over `vals` (each rank's value as an f32): every `+` in f32, every parenthesis
/// rounded by `round`.
pub(crate) fn eval(order: &Order, vals: &[f32], round: fn(f32) -> f32) -> f32 {
    match order {
        Order::Rank(r) => vals[*r as usize],
        Order::Round(v) => {
            let mut acc = eval(&v[0], vals, round);
            for x in &v[1..] {
                acc += eval(x, vals, round);
            }
            round(acc)
        }
        Order::Gce(_) => panic!("no GCE in the reference"),
    }
}

/// bf16 bits of an f32 that holds a bf16 value.
pub(crate) fn bf16_bits(x: f32) -> u16 {
    (x.to_bits() >> 16) as u16
}

/// The value of bf16 bits.
pub(crate) fn bf16_value(b: u16) -> f32 {
    f32::from_bits(u32::from(b) << 16)
}

/// A deterministic generator (SplitMix64) for test inputs.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}
