//! Test data shared by the codec tests (`gce_ref.rs`, `gce_isa.rs`): a seeded generator and
//! the NaN / infinity patterns.
#![allow(dead_code, reason = "each test file uses the helpers it needs")]

/// splitmix64: test data only.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// The high 32 bits of the next draw.
    pub(crate) fn bits(&mut self) -> u32 {
        (self.next() >> 32) as u32
    }

    /// Uniform in [−1, 1).
    pub(crate) fn unit(&mut self) -> f32 {
        (self.bits() >> 8) as f32 / (1u32 << 23) as f32 - 1.0
    }

    /// Uniform in 0..n.
    pub(crate) fn below(&mut self, n: u32) -> u32 {
        (((self.next() >> 32) * u64::from(n)) >> 32) as u32
    }
}

/// NaNs of both signs (one with a payload), the infinities, and two NaNs next to them.
pub(crate) const NAN_AND_INF: [f32; 6] =
    [f32::NAN, -f32::NAN, f32::INFINITY, f32::NEG_INFINITY, f32::from_bits(0xff80_0001), f32::from_bits(0x7fbf_ffff)];

/// `values` with [`NAN_AND_INF`]'s `i`-th pattern at `i · offset`, `i · offset + stride`, ….
pub(crate) fn sprinkled(mut values: Vec<f32>, offset: usize, stride: usize) -> Vec<f32> {
    for (i, v) in NAN_AND_INF.into_iter().enumerate() {
        for j in (i * offset..values.len()).step_by(stride) {
            values[j] = v;
        }
    }
    values
}
