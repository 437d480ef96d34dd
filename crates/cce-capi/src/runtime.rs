//! The host runtime's encoders and helpers under the study's names (study §1.1, §1.2, §2.3–§2.6,
//! §7), each with the arguments the study's listing names, in the order the study writes them.
//! Where the study leaves an argument unnamed, the function's comment says so and names it
//! after its place in the formula.
//!
//! ## Guarantees
//! - The words are `cce_api::runtime`'s (the runtime's formulas, bit for bit, for any
//!   arguments: masked where the runtime masks); the meta-control builders cannot fail.
//! - A descriptor builder writes exactly 16 bytes (W0..W3, little-endian, as on the ring) to
//!   `dst`, or nothing when `dst` is NULL.
//! - A helper that the runtime asserts in returns a status code, and `cce_last_error()` gives
//!   the study's message; its output is written only on success.

use std::ffi::c_void;

use cce_api::runtime as rt;

use crate::error::{Failure, cce_status, guard};
use crate::ptr;

/// `al_sdma_m2s_build_fma_meta_ctrl` @0x451bd0 (study §2.6):
/// `(sub & 7) | (in_dt & 0xF) << 8 | (scale_dt & 0xF) << 12 | (accum_dt & 0xF) << 16 | f5 << 6 |
/// f6 << 4 | f4 << 7 | 0x2100000`. The study names f4, f5 and f6 only by their positions
/// (bits 7, 6 and 4, shifted unmasked); the arguments are in the order its formula writes them.
#[unsafe(no_mangle)]
pub extern "C" fn al_sdma_m2s_build_fma_meta_ctrl(
    sub: u32,
    in_dt: u32,
    scale_dt: u32,
    accum_dt: u32,
    f5: u32,
    f6: u32,
    f4: u32,
) -> u32 {
    rt::fma_meta_ctrl(sub, in_dt, scale_dt, accum_dt, f4, f5, f6)
}

/// `al_sdma_m2s_build_min_max_meta_ctrl` @0x451ca0 (study §2.6): the out-dtype nibble is
/// written only when `use_const` is set.
// Mirrors the C runtime's function argument for argument (its names and order), so no struct.
#[allow(clippy::too_many_arguments)]
#[unsafe(no_mangle)]
pub extern "C" fn al_sdma_m2s_build_min_max_meta_ctrl(
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
    rt::min_max_meta_ctrl(sub, const_dt, in_dt, out_dt, accum_dt, notif, wrbar, use_const, last)
}

/// `al_sdma_m2s_build_add_meta_ctrl` @0x451b80 (study §2.6; no in-dtype nibble). The study
/// names the bit-4 argument only `f`.
#[unsafe(no_mangle)]
pub extern "C" fn al_sdma_m2s_build_add_meta_ctrl(
    sub: u32,
    out_dt: u32,
    accum_dt: u32,
    last: u32,
    wrbar: u32,
    f: u32,
) -> u32 {
    rt::add_meta_ctrl(sub, out_dt, accum_dt, last, wrbar, f)
}

/// `al_sdma_m2s_build_gradient_meta_ctrl` @0x451d70 (study §2.6, GCE). The study names the
/// bit-4 argument only `f`.
#[unsafe(no_mangle)]
pub extern "C" fn al_sdma_m2s_build_gradient_meta_ctrl(
    sub: u32,
    in_dt: u32,
    scale_dt: u32,
    accum_dt: u32,
    wrbar: u32,
    f: u32,
    last: u32,
) -> u32 {
    rt::gradient_meta_ctrl(sub, in_dt, scale_dt, accum_dt, wrbar, f, last)
}

/// The EXT meta-control builder, `cce_ext` @0x451dc0 (study §2.6: "EXT (cce_ext)"; the study
/// gives the address and the `al_sdma_m2s_build_*_meta_ctrl` family, this name joins them):
/// `(sub & 7) | (mid_dt & 0xF) << 12 | (accum_dt & 0xF) << 16 | 0x2400000`.
#[unsafe(no_mangle)]
pub extern "C" fn al_sdma_m2s_build_cce_ext_meta_ctrl(sub: u32, mid_dt: u32, accum_dt: u32) -> u32 {
    rt::ext_meta_ctrl(sub, mid_dt, accum_dt)
}

/// `al_sdma_m2s_build_replication_meta_ctrl` @0x451b00 (study §2.5 names `mode`: set, it ORs
/// `0x4A00000 | mode << 29`). The base `0xA00000` with `count` in `[15:0]` is MED (companion
/// chapter) and their composition MODEL (docs/MODEL.md).
#[unsafe(no_mangle)]
pub extern "C" fn al_sdma_m2s_build_replication_meta_ctrl(mode: u32, count: u32) -> u32 {
    rt::replication_meta_ctrl(mode, count)
}

/// Writes `words` to `dst` as ring bytes.
///
/// # Safety
/// A non-NULL `dst` has room for 16 bytes.
unsafe fn put(dst: *mut c_void, words: [u32; 4]) -> cce_status {
    guard(|| {
        // SAFETY: the caller of the builder promises 16 writable bytes at a non-NULL `dst`.
        let out = unsafe { ptr::bytes_mut(dst.cast(), 16, "dst") }?;
        out.copy_from_slice(&rt::words_to_bytes(words));
        Ok(())
    })
}

/// `al_sdma_m2s_build_fma_descriptor(dst, meta_idx, a_sel, b_sel, c_sel, scale, ...wb, sub,
/// last)` @0x451c20 (study §2.3): W0 = `wb | 0x800000 | meta_idx << 24`; W1 = `(sub & 7) |
/// (last & 1) << 26 | a8 << 29 | 0x2100000`; W2 = `(sema & 0xFFFFFF) | (a_sel & 3) << 24 |
/// (b_sel & 3) << 26 | (c_sel & 3) << 28`; W3 = the bits of `scale`. The study's listing
/// elides arguments between `scale` and `wb` ("..."): its formula uses two, `sema` (W2's low
/// 24 bits) and `a8` (W1 bits 29..31), which stand there under those names, in the order of
/// the formula's argument numbers; `last` is the formula's `a10`.
///
/// # Safety
/// A non-NULL `dst` has room for 16 bytes.
// Mirrors the C runtime's function argument for argument (its names and order), so no struct.
#[allow(clippy::too_many_arguments)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn al_sdma_m2s_build_fma_descriptor(
    dst: *mut c_void,
    meta_idx: u32,
    a_sel: u32,
    b_sel: u32,
    c_sel: u32,
    scale: f32,
    sema: u32,
    a8: u32,
    wb: u32,
    sub: u32,
    last: u32,
) -> cce_status {
    let words = rt::fma_descriptor(meta_idx, a_sel, b_sel, c_sel, scale.to_bits(), sema, wb, a8, sub, last);
    // SAFETY: this function's own promise, passed on.
    unsafe { put(dst, words) }
}

/// `al_sdma_m2s_build_min_max_descriptor(dst, meta_idx, W1, length, use_const, const_dt, wb)`
/// @0x451d10 (study §2.4). The study's third argument, which it calls `W1`, is the clamp
/// constant's bits: it lands in W3 (`W3 = W1_arg`), so it is named `constant` here. W1 is
/// `(const_dt & 7) << 20 | 0x6000000` with `use_const`, else 0; W2 = `(length & 0xFFFFFF) |
/// 0x2000000`.
///
/// # Safety
/// A non-NULL `dst` has room for 16 bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn al_sdma_m2s_build_min_max_descriptor(
    dst: *mut c_void,
    meta_idx: u32,
    constant: u32,
    length: u32,
    use_const: u32,
    const_dt: u32,
    wb: u32,
) -> cce_status {
    // SAFETY: this function's own promise, passed on.
    unsafe { put(dst, rt::min_max_descriptor(meta_idx, constant, length, use_const, const_dt, wb)) }
}

/// `al_sdma_m2s_build_seed_init_descriptor` @0x451e40 (study §2.5): W0 = `0x800000`; W1 =
/// `0x6000000` when `seed_en` (the study's "seed-enable arg") is set.
///
/// # Safety
/// A non-NULL `dst` has room for 16 bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn al_sdma_m2s_build_seed_init_descriptor(dst: *mut c_void, seed_en: u32) -> cce_status {
    // SAFETY: this function's own promise, passed on.
    unsafe { put(dst, rt::seed_init_descriptor(seed_en)) }
}

/// `al_sdma_m2s_build_replication_descriptor` @0x451b10 (study §2.5): W1 is
/// `al_sdma_m2s_build_replication_meta_ctrl(mode, count)`. The study names only `mode`; the
/// other arguments and words are MODEL, named after the fields they fill: W0 = `0x800000 |
/// (wb & 0x7FFFFF) | (meta_idx & 0xFF) << 24`, W2 = `(more & 1) << 30` (the combo's
/// more-descriptors bit), W3 = `ext_meta` (the EXT meta-control word that tags the combo).
///
/// # Safety
/// A non-NULL `dst` has room for 16 bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn al_sdma_m2s_build_replication_descriptor(
    dst: *mut c_void,
    meta_idx: u32,
    wb: u32,
    mode: u32,
    count: u32,
    more: u32,
    ext_meta: u32,
) -> cce_status {
    // SAFETY: this function's own promise, passed on.
    unsafe { put(dst, rt::replication_descriptor(meta_idx, wb, mode, count, more, ext_meta)) }
}

/// `al_sdma_m2s_build_gradient_descriptor` @0x451de0 (study §5.2 names it; W1 = `(mode & 7) <<
/// 29 | 0x6500001` from the companion chapter, MED). The other arguments and words are MODEL,
/// named after the fields they fill: W0 as in the FMA frame, W2 = `(length & 0xFFFFFF) |
/// (more & 1) << 30`, W3 = `header` (the compression header's address, low 32 bits).
///
/// # Safety
/// A non-NULL `dst` has room for 16 bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn al_sdma_m2s_build_gradient_descriptor(
    dst: *mut c_void,
    meta_idx: u32,
    wb: u32,
    mode: u32,
    length: u32,
    more: u32,
    header: u32,
) -> cce_status {
    // SAFETY: this function's own promise, passed on.
    unsafe { put(dst, rt::gradient_descriptor(meta_idx, wb, mode, length, more, header)) }
}

/// Runs a helper and writes its value to `out` on success.
///
/// # Safety
/// A non-NULL `out` has room for one `T`.
unsafe fn answer<T>(out: *mut T, what: &str, f: impl FnOnce() -> Result<T, cce_api::ApiError>) -> cce_status {
    guard(|| {
        if out.is_null() {
            return Err(Failure::null(what));
        }
        let v = f()?;
        // SAFETY: the caller promises room for one `T` at the non-NULL `out`.
        unsafe { ptr::write(out, v, what) }
    })
}

/// `kbin_cce_op_to_sdma_cce_op` @0x2664c0 (study §1.1): CSWTCH.21 `{1, 0, 3, 2}` at `op − 1`,
/// written to `*sdma_op`. An op outside 1..=4 is the runtime's assert:
/// `CCE_ERR_UNSUPPORTED_OP`, "Unsupported CCE Op! <op>".
///
/// # Safety
/// A non-NULL `sdma_op` has room for one `uint32_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kbin_cce_op_to_sdma_cce_op(op: u32, sdma_op: *mut u32) -> cce_status {
    // SAFETY: this function's own promise, passed on.
    unsafe { answer(sdma_op, "sdma_op", || rt::kbin_cce_op_to_sdma_cce_op(op)) }
}

/// `kbin_dtype_to_sdma_dtype` @0x266460 (study §1.2): CSWTCH.19 at `dtype − 1`, written to
/// `*sdma_dtype`. A dtype outside 1..=15 is the runtime's assert: `CCE_ERR_UNSUPPORTED_DTYPE`,
/// "Unsupported data type!: <dtype>".
///
/// # Safety
/// A non-NULL `sdma_dtype` has room for one `uint32_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kbin_dtype_to_sdma_dtype(dtype: u32, sdma_dtype: *mut u32) -> cce_status {
    // SAFETY: this function's own promise, passed on.
    unsafe { answer(sdma_dtype, "sdma_dtype", || rt::kbin_dtype_to_sdma_dtype(dtype)) }
}

/// `kbin_get_dtype_size` @0x266520: the kbin dtype's byte size through the remap
/// (`data_type_sizes.0`, where fp32r is 4); 0 for a dtype outside 1..=15, as the runtime
/// returns 0 after logging.
#[unsafe(no_mangle)]
pub extern "C" fn kbin_get_dtype_size(dtype: u32) -> u32 {
    u32::from(rt::kbin_get_dtype_size(dtype))
}

/// The runtime's table `sdma_data_type_size[16]` @0x9be140 (study §1.2), entry `sdma_dtype`,
/// written to `*size`: fp32r (11) and invalid (0) are 0. (A table in the runtime, a function
/// here: the library exports functions only.) A value above 15 is `CCE_ERR_UNSUPPORTED_DTYPE`.
///
/// # Safety
/// A non-NULL `size` has room for one `uint32_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cce_sdma_data_type_size(sdma_dtype: u32, size: *mut u32) -> cce_status {
    // SAFETY: this function's own promise, passed on.
    unsafe { answer(size, "size", || rt::sdma_data_type_size(sdma_dtype).map(u32::from)) }
}

/// `encd_get_cce_reduce_packet_size(ctx, sdma_dtype)` @0x2396f0 (study §7.1), its context
/// passed as arguments: `priority_class` (`encd_get_ctx_curr_priority_class(ctx)`),
/// `prio_pkt_size` (that class's `nrt_gconf()->cc_cce_reduce_prio_pkt_size[pc]`, bytes, 0 =
/// no cap) and `elem_count` (`ctx->elem_count`). Writes `min(size · elems, cap)` rounded down
/// to 32 bytes to `*packet_size`. The runtime's asserts, as `CCE_ERR_RUNTIME_ASSERT`: a class
/// above 4 (line 0x1202), a dtype of byte size 0 (line 0x1204: fp32r traps here).
///
/// # Safety
/// A non-NULL `packet_size` has room for one `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn encd_get_cce_reduce_packet_size(
    priority_class: u32,
    prio_pkt_size: u32,
    elem_count: u64,
    sdma_dtype: u32,
    packet_size: *mut u64,
) -> cce_status {
    // SAFETY: this function's own promise, passed on.
    unsafe {
        answer(packet_size, "packet_size", || {
            rt::reduce_packet_size(priority_class, prio_pkt_size, elem_count, sdma_dtype)
        })
    }
}

/// `has_valid_dma_cce_inout_dtype_nc_v1(compute_op, in_dt, out_dt)` @0x280820 (study §7.2):
/// true without a compute op; with one, `in_dt` and `out_dt` must both be in the 32-bit band
/// {int32, uint32, fp32, fp32r} (8..=11, compared as `uint8_t` as the runtime does) or both
/// outside it.
#[unsafe(no_mangle)]
pub extern "C" fn has_valid_dma_cce_inout_dtype_nc_v1(compute_op: bool, in_dt: i32, out_dt: i32) -> bool {
    rt::dtype_gate_nc_v1(compute_op, in_dt as u32, out_dt as u32)
}

/// `aws_hal_get_sdma_max_cce_elements` @0x44be60 (study §7.1) with the arch passed in (the
/// runtime reads it from `al_hal_tpb_get_arch_type()`): 1024 on arch 2, 2048 on 3 and 4,
/// written to `*max_elements`; any other arch is the runtime's assert (line 0x2C),
/// `CCE_ERR_RUNTIME_ASSERT`.
///
/// # Safety
/// A non-NULL `max_elements` has room for one `uint32_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aws_hal_get_sdma_max_cce_elements(arch: u32, max_elements: *mut u32) -> cce_status {
    // SAFETY: this function's own promise, passed on.
    unsafe { answer(max_elements, "max_elements", || rt::max_cce_elements(arch)) }
}
