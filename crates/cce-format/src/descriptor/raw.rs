//! The runtime's descriptor formulas (HIGH), for any `u32` arguments, placed through the
//! words' field declarations: masked where the runtime masks, shifted unmasked where it does not.

use crate::words::*;

/// `al_sdma_m2s_build_fma_descriptor` @0x451c20.
// Mirrors the C runtime's function argument for argument (its names and order), so no struct.
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
    let fixed = FMA_DESCRIPTOR.fixed;
    [
        D_WB.shift(wb) | fixed[0] | D_META_IDX.shift(meta_idx),
        FMA_D_SUB.place(sub) | FMA_D_A10.place(a10) | FMA_D_A8.shift(a8) | fixed[1],
        FMA_D_SEMA.place(sema) | FMA_D_A_SEL.place(a_sel) | FMA_D_B_SEL.place(b_sel) | FMA_D_C_SEL.place(c_sel),
        FMA_D_SCALE.place(scale_bits),
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
    let fixed = MIN_MAX_DESCRIPTOR.fixed;
    let w1 = if use_const != 0 { MM_D_CONST_DT.place(const_dt) | MM_D_USE_CONST.span.mask() } else { 0 };
    [
        D_WB.shift(wb) | fixed[0] | D_META_IDX.shift(meta_idx),
        w1,
        MM_D_LENGTH.place(length) | fixed[2],
        MM_D_CONSTANT.place(constant),
    ]
}

/// `al_sdma_m2s_build_seed_init_descriptor` @0x451e40: the part the study gives
/// (`W0 |= 0x800000`; `W1 = 0x6000000` when seed-enable is set).
pub const fn seed_init_descriptor(seed_en: u32) -> [u32; 4] {
    let w1 = if seed_en != 0 { SEED_D_SEED_EN.span.mask() } else { 0 };
    [SEED_INIT_DESCRIPTOR.fixed[0], w1, 0, 0]
}

/// `al_sdma_m2s_build_replication_descriptor` @0x451b10, as this crate models it: the study
/// gives only that W1 is the replication meta-control word (§2.5, [`replication_meta_ctrl`]:
/// its mode HIGH, its count MED); W0 (the compute frame with `wb` and `meta_idx`), W2 (the
/// combo's more-bit) and W3 (the EXT meta-control word tagging the combo) are MODEL. Each
/// argument is masked to its field, as the runtime's known encoders mask theirs.
///
/// [`replication_meta_ctrl`]: crate::meta_ctrl::raw::replication_meta_ctrl
pub const fn replication_descriptor(
    meta_idx: u32,
    wb: u32,
    mode: u32,
    count: u32,
    more: u32,
    ext_meta: u32,
) -> [u32; 4] {
    [
        REPLICATION_DESCRIPTOR.fixed[0] | D_WB_MODEL.place(wb) | D_META_IDX_MODEL.place(meta_idx),
        crate::meta_ctrl::raw::replication_meta_ctrl(mode & 7, count & 0xFFFF),
        D_MORE.place(more),
        REP_D_EXT_META.place(ext_meta),
    ]
}

/// `al_sdma_m2s_build_gradient_descriptor` @0x451de0, as this crate models it: W1 =
/// `(mode << 29) | 0x6500001` (companion chapter, MED); W0 (the compute frame), W2 (the length
/// and the combo's more-bit) and W3 (the compression header's address, low 32 bits) are MODEL.
/// Each argument is masked to its field.
pub const fn gradient_descriptor(meta_idx: u32, wb: u32, mode: u32, length: u32, more: u32, header: u32) -> [u32; 4] {
    let fixed = GRADIENT_DESCRIPTOR.fixed;
    [
        fixed[0] | D_WB_MODEL.place(wb) | D_META_IDX_MODEL.place(meta_idx),
        fixed[1] | GRAD_D_MODE.place(mode),
        GRAD_D_LENGTH.place(length) | D_MORE.place(more),
        GRAD_D_HEADER.place(header),
    ]
}
