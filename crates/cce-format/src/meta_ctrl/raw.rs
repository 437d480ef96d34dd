//! The runtime's encoders, formula for formula (study §2.5, §2.6; all HIGH except the
//! replication composition, see [`replication_meta_ctrl`]).

/// `al_sdma_m2s_build_fma_meta_ctrl` @0x451bd0.
pub const fn fma_meta_ctrl(sub: u32, in_dt: u32, scale_dt: u32, accum_dt: u32, f4: u32, f5: u32, f6: u32) -> u32 {
    (sub & 7)
        | ((in_dt & 0xF) << 8)
        | ((scale_dt & 0xF) << 12)
        | ((accum_dt & 0xF) << 16)
        | (f5 << 6)
        | (f6 << 4)
        | (f4 << 7)
        | 0x0210_0000
}

/// `al_sdma_m2s_build_min_max_meta_ctrl` @0x451ca0. The out-dtype nibble is written only
/// when `use_const` is set ("use_const FORCES out_dt; else out_dt=0").
#[allow(clippy::too_many_arguments)]
pub const fn min_max_meta_ctrl(
    sub: u32,
    const_dt: u32,
    in_dt: u32,
    out_dt: u32,
    accum_dt: u32,
    notif: u32,
    wrbar: u32,
    use_const: u32,
    last: u32,
) -> u32 {
    let out = if use_const != 0 { (out_dt & 0xF) << 12 } else { 0 };
    (sub & 7)
        | ((const_dt & 7) << 20)
        | ((in_dt & 0xF) << 8)
        | out
        | ((accum_dt & 0xF) << 16)
        | (notif << 7)
        | (wrbar << 6)
        | (use_const << 5)
        | (last << 4)
        | 0x0200_0000
}

/// `al_sdma_m2s_build_add_meta_ctrl` @0x451b80 (no in-dtype nibble).
pub const fn add_meta_ctrl(sub: u32, out_dt: u32, accum_dt: u32, last: u32, wrbar: u32, f: u32) -> u32 {
    (sub & 7) | ((out_dt & 0xF) << 12) | ((accum_dt & 0xF) << 16) | (last << 7) | (wrbar << 6) | (f << 4) | 0x0200_0000
}

/// `al_sdma_m2s_build_gradient_meta_ctrl` @0x451d70.
#[allow(clippy::too_many_arguments)]
pub const fn gradient_meta_ctrl(
    sub: u32,
    in_dt: u32,
    scale_dt: u32,
    accum_dt: u32,
    wrbar: u32,
    f: u32,
    last: u32,
) -> u32 {
    (sub & 7)
        | ((in_dt & 0xF) << 8)
        | ((scale_dt & 0xF) << 12)
        | ((accum_dt & 0xF) << 16)
        | (wrbar << 6)
        | (f << 4)
        | (last << 7)
        | 0x0250_0000
}

/// `al_sdma_m2s_build_cce_ext_meta_ctrl` @0x451dc0.
pub const fn ext_meta_ctrl(sub: u32, mid_dt: u32, accum_dt: u32) -> u32 {
    (sub & 7) | ((mid_dt & 0xF) << 12) | ((accum_dt & 0xF) << 16) | 0x0240_0000
}

/// `al_sdma_m2s_build_replication_meta_ctrl` @0x451b00: the study gives "when its mode arg
/// is set, ORs 0x4a00000 | (mode << 29)" (HIGH); the companion chapter gives the base
/// `0xA00000` with the count in `[15:0]` (MED). Their composition is MODEL: base | count,
/// plus `0x4A00000 | mode << 29` when mode is non-zero.
pub const fn replication_meta_ctrl(mode: u32, count: u32) -> u32 {
    let ext = if mode != 0 { 0x04A0_0000 | (mode << 29) } else { 0 };
    0x00A0_0000 | (count & 0xFFFF) | ext
}
