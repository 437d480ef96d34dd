//! The runtime's encoders, formula for formula (study §2.5, §2.6; all HIGH except the
//! replication composition, see [`replication_meta_ctrl`]).
//!
//! Each places its arguments through the words' field declarations: [`place`](FieldDef::place)
//! where the runtime masks (`sub & 7`, `in_dt & 0xF`), [`shift`](FieldDef::shift) where it
//! shifts an unmasked argument (`f5 << 6`), so any `u32` inputs give the runtime's bits.

#[cfg(doc)]
use crate::layout::FieldDef;
use crate::words::*;

/// `al_sdma_m2s_build_fma_meta_ctrl` @0x451bd0.
pub const fn fma_meta_ctrl(sub: u32, in_dt: u32, scale_dt: u32, accum_dt: u32, f4: u32, f5: u32, f6: u32) -> u32 {
    MC_SUB.place(sub)
        | MC_IN_DT.place(in_dt)
        | MC_SCALE_DT.place(scale_dt)
        | MC_ACCUM_DT.place(accum_dt)
        | FMA_MC_F5.shift(f5)
        | FMA_MC_F6.shift(f6)
        | FMA_MC_F4.shift(f4)
        | FMA_META_CTRL.fixed[0]
}

/// `al_sdma_m2s_build_min_max_meta_ctrl` @0x451ca0. The out-dtype nibble is written only
/// when `use_const` is set ("use_const FORCES out_dt; else out_dt=0").
// Mirrors the C runtime's function argument for argument (its names and order), so no struct.
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
    let out = if use_const != 0 { MM_MC_OUT_DT.place(out_dt) } else { 0 };
    MC_SUB.place(sub)
        | MM_MC_CONST_DT.place(const_dt)
        | MC_IN_DT.place(in_dt)
        | out
        | MC_ACCUM_DT.place(accum_dt)
        | MM_MC_NOTIF.shift(notif)
        | MM_MC_WRBAR.shift(wrbar)
        | MM_MC_USE_CONST.shift(use_const)
        | MM_MC_LAST.shift(last)
        | MIN_MAX_META_CTRL.fixed[0]
}

/// `al_sdma_m2s_build_add_meta_ctrl` @0x451b80 (no in-dtype nibble).
pub const fn add_meta_ctrl(sub: u32, out_dt: u32, accum_dt: u32, last: u32, wrbar: u32, f: u32) -> u32 {
    MC_SUB.place(sub)
        | MC_OUT_DT.place(out_dt)
        | MC_ACCUM_DT.place(accum_dt)
        | ADD_MC_LAST.shift(last)
        | ADD_MC_WRBAR.shift(wrbar)
        | ADD_MC_F.shift(f)
        | ADD_META_CTRL.fixed[0]
}

/// `al_sdma_m2s_build_gradient_meta_ctrl` @0x451d70.
// Mirrors the C runtime's function argument for argument (its names and order), so no struct.
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
    MC_SUB.place(sub)
        | MC_IN_DT.place(in_dt)
        | MC_SCALE_DT.place(scale_dt)
        | MC_ACCUM_DT.place(accum_dt)
        | GCE_MC_WRBAR.shift(wrbar)
        | GCE_MC_F.shift(f)
        | GCE_MC_LAST.shift(last)
        | GRADIENT_META_CTRL.fixed[0]
}

/// `al_sdma_m2s_build_cce_ext_meta_ctrl` @0x451dc0.
pub const fn ext_meta_ctrl(sub: u32, mid_dt: u32, accum_dt: u32) -> u32 {
    MC_SUB.place(sub) | MC_MID_DT.place(mid_dt) | MC_ACCUM_DT.place(accum_dt) | EXT_META_CTRL.fixed[0]
}

/// `al_sdma_m2s_build_replication_meta_ctrl` @0x451b00: the study gives "when its mode arg
/// is set, ORs 0x4a00000 | (mode << 29)" (HIGH); the companion chapter gives the base
/// `0xA00000` with the count in `[15:0]` (MED). Their composition is MODEL: base | count,
/// plus `0x4A00000 | mode << 29` when mode is non-zero (`0x4A00000` = the base and the ext bit).
pub const fn replication_meta_ctrl(mode: u32, count: u32) -> u32 {
    let base = REPLICATION_META_CTRL.fixed[0];
    let ext = if mode != 0 { base | REP_MC_EXT.place(1) | REP_MC_MODE.shift(mode) } else { 0 };
    base | REP_MC_COUNT.place(count) | ext
}
