//! The counter-based random generator behind stochastic rounding (MODEL, GAPS.md §8).
//!
//! The random bits for one rounding depend only on `(seed, stream, site, element index)`:
//!
//! 1. a 64-bit key per `(seed, stream, site)` from SplitMix64's finaliser ([`mix64`]), computed
//!    once per call;
//! 2. per run of 2³² elements (the high half `hi` of the 64-bit element index), a 32-bit key
//!    `k = k_lo ^ fmix32(k_hi ^ hi·0x9e3779b1)` ([`run_key`]);
//! 3. per element, 32 bits `fmix32(lo ^ k)` where `lo` is the low half of the element index and
//!    `fmix32` is MurmurHash3's finaliser (two multiplies, three xor-shifts).
//!
//! For a fixed key and index high half, `lo ↦ bits` is a bijection of the 32-bit integers, so
//! over any aligned run of 2³² indices every 32-bit value occurs exactly once. The function is
//! plain integer arithmetic, vectorised by the compiler, identical on every path and machine.
//!
//! Sites: 0 is the final accumulate → output rounding; `1 + i` the rounding of source `i`'s
//! element into a narrower accumulator; `33 + i` the rounding of accumulate step `i` into a
//! narrower-than-fp32 accumulator.

/// SplitMix64's output function.
#[inline]
pub const fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The 64-bit key of one rounding site of one (seed, stream).
#[inline]
pub const fn site_key(seed: u64, stream: u64, site: u32) -> u64 {
    let a = mix64(seed ^ 0x9e37_79b9_7f4a_7c15);
    let b = mix64(a ^ stream.wrapping_mul(0xd1b5_4a32_d192_ed03));
    mix64(b ^ (site as u64).wrapping_mul(0x8cb9_2ba7_2f3d_8dd7) ^ 0x2545_f491_4f6c_dd1d)
}

/// MurmurHash3's 32-bit finaliser (a bijection).
#[inline(always)]
pub const fn fmix32(mut h: u32) -> u32 {
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

/// The 32-bit key of the run of 2³² elements whose indices have high half `hi`.
#[inline(always)]
pub const fn run_key(key: u64, hi: u32) -> u32 {
    key as u32 ^ fmix32((key >> 32) as u32 ^ hi.wrapping_mul(0x9e37_79b1))
}

/// The 32 random bits for element `index` under `key`.
#[inline(always)]
pub const fn bits32(key: u64, index: u64) -> u32 {
    fmix32(index as u32 ^ run_key(key, (index >> 32) as u32))
}
