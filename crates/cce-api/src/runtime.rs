//! The host runtime's own encoders and helpers, by the names the study gives them (§1.1, §1.2,
//! §2.3–§2.6, §7): what the C library (`cce-capi`) exports as `al_sdma_m2s_build_*`,
//! `kbin_cce_op_to_sdma_cce_op`, `kbin_dtype_to_sdma_dtype`, `encd_get_cce_reduce_packet_size`,
//! `has_valid_dma_cce_inout_dtype_nc_v1` and `aws_hal_get_sdma_max_cce_elements`.
//!
//! ## Guarantees
//! - The builders are the runtime's formulas for any `u32` arguments: masked where the runtime
//!   masks, shifted unmasked where it shifts unmasked (HIGH; the replication and gradient
//!   descriptors' frames are MODEL, docs/MODEL.md). They cannot fail.
//! - Where the runtime asserts, the function returns an [`ApiError`] whose message is the
//!   study's, and [`runtime_assert`] says which assert it is.

use cce_format::SdmaDtype;
use cce_format::limits::{self, PrioCaps};

use crate::error::{ApiError, FormatError, HostError};

// The runtime's builders, wrapped rather than re-exported so the door names only its own
// functions; each is the formula of `cce_format`'s raw module of the same name.
/// `al_sdma_m2s_build_fma_descriptor`: the runtime's formula for any `u32` arguments (never fails).
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
    cce_format::descriptor::raw::fma_descriptor(meta_idx, a_sel, b_sel, c_sel, scale_bits, sema, wb, a8, sub, a10)
}

/// `al_sdma_m2s_build_min_max_descriptor`: the runtime's formula for any `u32` arguments (never fails).
pub const fn min_max_descriptor(
    meta_idx: u32,
    constant: u32,
    length: u32,
    use_const: u32,
    const_dt: u32,
    wb: u32,
) -> [u32; 4] {
    cce_format::descriptor::raw::min_max_descriptor(meta_idx, constant, length, use_const, const_dt, wb)
}

/// `al_sdma_m2s_build_seed_init_descriptor`: the runtime's formula for any `u32` arguments (never fails).
pub const fn seed_init_descriptor(seed_en: u32) -> [u32; 4] {
    cce_format::descriptor::raw::seed_init_descriptor(seed_en)
}

/// `al_sdma_m2s_build_replication_descriptor (MODEL frame)`: the runtime's formula for any `u32` arguments (never fails).
pub const fn replication_descriptor(
    meta_idx: u32,
    wb: u32,
    mode: u32,
    count: u32,
    more: u32,
    ext_meta: u32,
) -> [u32; 4] {
    cce_format::descriptor::raw::replication_descriptor(meta_idx, wb, mode, count, more, ext_meta)
}

/// `al_sdma_m2s_build_gradient_descriptor (MODEL frame)`: the runtime's formula for any `u32` arguments (never fails).
pub const fn gradient_descriptor(meta_idx: u32, wb: u32, mode: u32, length: u32, more: u32, header: u32) -> [u32; 4] {
    cce_format::descriptor::raw::gradient_descriptor(meta_idx, wb, mode, length, more, header)
}

/// `al_sdma_m2s_build_fma_meta_ctrl`: the runtime's formula for any `u32` arguments (never fails).
pub const fn fma_meta_ctrl(sub: u32, in_dt: u32, scale_dt: u32, accum_dt: u32, f4: u32, f5: u32, f6: u32) -> u32 {
    cce_format::meta_ctrl::raw::fma_meta_ctrl(sub, in_dt, scale_dt, accum_dt, f4, f5, f6)
}

/// `al_sdma_m2s_build_min_max_meta_ctrl`: the runtime's formula for any `u32` arguments (never fails).
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
    cce_format::meta_ctrl::raw::min_max_meta_ctrl(sub, const_dt, in_dt, out_dt, accum_dt, notif, wrbar, use_const, last)
}

/// `al_sdma_m2s_build_add_meta_ctrl`: the runtime's formula for any `u32` arguments (never fails).
pub const fn add_meta_ctrl(sub: u32, out_dt: u32, accum_dt: u32, last: u32, wrbar: u32, f: u32) -> u32 {
    cce_format::meta_ctrl::raw::add_meta_ctrl(sub, out_dt, accum_dt, last, wrbar, f)
}

/// `al_sdma_m2s_build_gradient_meta_ctrl`: the runtime's formula for any `u32` arguments (never fails).
pub const fn gradient_meta_ctrl(
    sub: u32,
    in_dt: u32,
    scale_dt: u32,
    accum_dt: u32,
    wrbar: u32,
    f: u32,
    last: u32,
) -> u32 {
    cce_format::meta_ctrl::raw::gradient_meta_ctrl(sub, in_dt, scale_dt, accum_dt, wrbar, f, last)
}

/// `al_sdma_m2s_build_cce_ext_meta_ctrl`: the runtime's formula for any `u32` arguments (never fails).
pub const fn ext_meta_ctrl(sub: u32, mid_dt: u32, accum_dt: u32) -> u32 {
    cce_format::meta_ctrl::raw::ext_meta_ctrl(sub, mid_dt, accum_dt)
}

/// `al_sdma_m2s_build_replication_meta_ctrl`: the runtime's formula for any `u32` arguments (never fails).
pub const fn replication_meta_ctrl(mode: u32, count: u32) -> u32 {
    cce_format::meta_ctrl::raw::replication_meta_ctrl(mode, count)
}

/// A descriptor's words as the bytes a ring holds (little-endian, W0 first).
pub fn words_to_bytes(words: [u32; 4]) -> [u8; crate::DESC_BYTES] {
    cce_format::descriptor::words_to_bytes(words)
}

/// `kbin_get_dtype_size`, as the C library exports it: a kbin dtype's bytes, 0 for an unknown one.
pub fn kbin_get_dtype_size(d: u32) -> u8 {
    cce_format::dtype::kbin_get_dtype_size(d)
}

/// `has_valid_dma_cce_inout_dtype_nc_v1`, as the C library exports it.
pub fn dtype_gate_nc_v1(compute_op: bool, in_dt: u32, out_dt: u32) -> bool {
    cce_format::limits::dtype_gate_nc_v1(compute_op, in_dt, out_dt)
}

/// `kbin_cce_op_to_sdma_cce_op` @0x2664c0: CSWTCH.21 `{1, 0, 3, 2}` at `op − 1`; an op outside
/// 1..=4 is the runtime's assert, "Unsupported CCE Op! %u".
pub fn kbin_cce_op_to_sdma_cce_op(op: u32) -> Result<u32, ApiError> {
    Ok(cce_format::op::kbin_cce_op_to_sdma_cce_op(u64::from(op))?.value())
}

/// `kbin_dtype_to_sdma_dtype` @0x266460: CSWTCH.19 at `d − 1`; a dtype outside 1..=15 is the
/// runtime's assert, "Unsupported data type!".
pub fn kbin_dtype_to_sdma_dtype(dtype: u32) -> Result<u32, ApiError> {
    Ok(cce_format::dtype::kbin_dtype_to_sdma_dtype(dtype)?.value())
}

/// `sdma_data_type_size[sdma_dtype]` @0x9be140 (fp32r and invalid are 0); a value past the
/// table's 16 entries is refused.
pub fn sdma_data_type_size(sdma_dtype: u32) -> Result<u8, ApiError> {
    Ok(SdmaDtype::from_value(u64::from(sdma_dtype))?.bytes())
}

/// `encd_get_cce_reduce_packet_size(ctx, sdma_dtype)` @0x2396f0 with the context passed as
/// arguments: the priority class (`encd_get_ctx_curr_priority_class`), that class's cap
/// (`nrt_gconf()->cc_cce_reduce_prio_pkt_size[pc]`, bytes, 0 = none) and the element count
/// (`ctx->elem_count`). A class above 4 and a dtype of size 0 (fp32r) are the runtime's asserts.
pub fn reduce_packet_size(
    priority_class: u32,
    prio_pkt_size: u32,
    elem_count: u64,
    sdma_dtype: u32,
) -> Result<u64, ApiError> {
    let dtype = SdmaDtype::from_value(u64::from(sdma_dtype))?;
    let caps = PrioCaps::default().with_cap(priority_class, prio_pkt_size);
    Ok(limits::reduce_packet_size(dtype, elem_count, priority_class, &caps)?)
}

/// `aws_hal_get_sdma_max_cce_elements` @0x44be60 with the arch (which the runtime reads from
/// `al_hal_tpb_get_arch_type`) passed in: 1024 on arch 2, 2048 on 3 and 4, else its assert.
pub fn max_cce_elements(arch: u32) -> Result<u32, ApiError> {
    Ok(limits::max_cce_elements(arch)?)
}

/// Which of the runtime's asserts an error is (for a C caller's error code).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuntimeAssert {
    /// "Unsupported CCE Op! %u" (`kbin_cce_op_to_sdma_cce_op`).
    UnsupportedOp,
    /// A dtype the runtime refuses: "Unsupported data type!", a value that is no SDMA dtype, a
    /// MIN/MAX constant dtype the engine cannot carry.
    UnsupportedDtype,
    /// Any other assert or bail the study names: FMA without cce_info (vring.c:0x3B8), a scale
    /// dtype other than fp32 (0x3BA), more than 32 sources, replication or concatenation on
    /// arch ≤ 2, a priority class above 4, a size-0 dtype in packet sizing (fp32r), an arch
    /// with no element limit.
    Assert,
}

/// The runtime assert `error` is, if it is one.
pub fn runtime_assert(error: &ApiError) -> Option<RuntimeAssert> {
    match error {
        ApiError::Format(f) | ApiError::Host(HostError::Format(f)) => format_assert(f),
        ApiError::Host(h) => match h {
            HostError::MinMaxConstDtype(_) => Some(RuntimeAssert::UnsupportedDtype),
            HostError::MissingCceInfo
            | HostError::ScaleNotFp32(_)
            | HostError::TooManySources(_)
            | HostError::Replication
            | HostError::Concatenation => Some(RuntimeAssert::Assert),
            _ => None,
        },
        _ => None,
    }
}

fn format_assert(f: &FormatError) -> Option<RuntimeAssert> {
    match f {
        FormatError::UnsupportedCceOp(_) => Some(RuntimeAssert::UnsupportedOp),
        FormatError::UnsupportedDataType(_) | FormatError::NotAnSdmaDtype(_) => Some(RuntimeAssert::UnsupportedDtype),
        FormatError::UnsupportedArch(_) | FormatError::PriorityClass(_) | FormatError::ZeroSizeDtype(_) => {
            Some(RuntimeAssert::Assert)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn asserts_are_classified() {
        let op = kbin_cce_op_to_sdma_cce_op(0).unwrap_err();
        assert_eq!(op.to_string(), "Unsupported CCE Op! 0");
        assert_eq!(runtime_assert(&op), Some(RuntimeAssert::UnsupportedOp));
        let dt = kbin_dtype_to_sdma_dtype(16).unwrap_err();
        assert_eq!(runtime_assert(&dt), Some(RuntimeAssert::UnsupportedDtype));
        let fp32r = reduce_packet_size(0, 0, 10, SdmaDtype::Fp32r.value()).unwrap_err();
        assert!(fp32r.to_string().contains("fp32r"), "{fp32r}");
        assert_eq!(runtime_assert(&fp32r), Some(RuntimeAssert::Assert));
        assert_eq!(runtime_assert(&ApiError::Input("x".into())), None);
    }
}
