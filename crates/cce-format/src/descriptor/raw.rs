//! The runtime's descriptor formulas (HIGH), for any `u32` arguments.

use crate::layout;

/// `al_sdma_m2s_build_fma_descriptor` @0x451c20.
#[allow(clippy::too_many_arguments)]
pub const fn fma_descriptor(
    meta_idx: u32,
    a_sel: u32,
    b_sel: u32,
    c_sel: u32,
    scale_bits: u32,
    sema: u32,
    wb: u32,
    a8: u32,
    sub: u32,
    a10: u32,
) -> [u32; 4] {
    [
        wb | layout::COMPUTE_W0 | (meta_idx << 24),
        (sub & 7) | ((a10 & 1) << 26) | (a8 << 29) | 0x0210_0000,
        (sema & 0x00FF_FFFF) | ((a_sel & 3) << 24) | ((b_sel & 3) << 26) | ((c_sel & 3) << 28),
        scale_bits,
    ]
}

/// `al_sdma_m2s_build_min_max_descriptor` @0x451d10.
pub const fn min_max_descriptor(
    meta_idx: u32,
    constant: u32,
    length: u32,
    use_const: u32,
    const_dt: u32,
    wb: u32,
) -> [u32; 4] {
    let w1 = if use_const != 0 { ((const_dt & 7) << 20) | 0x0600_0000 } else { 0 };
    [wb | layout::COMPUTE_W0 | (meta_idx << 24), w1, (length & 0x00FF_FFFF) | 0x0200_0000, constant]
}

/// `al_sdma_m2s_build_seed_init_descriptor` @0x451e40: the part the study gives
/// (`W0 |= 0x800000`; `W1 = 0x6000000` when seed-enable is set).
pub const fn seed_init_descriptor(seed_en: u32) -> [u32; 4] {
    [layout::COMPUTE_W0, if seed_en != 0 { 0x0600_0000 } else { 0 }, 0, 0]
}
