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

/// The runtime's descriptor builders, its formulas with its arity (the C library's exports).
pub use cce_format::descriptor::raw::{
    fma_descriptor, gradient_descriptor, min_max_descriptor, replication_descriptor, seed_init_descriptor,
};
/// A descriptor's words as the bytes a ring holds.
pub use cce_format::descriptor::words_to_bytes;
/// `kbin_get_dtype_size`, as the C library exports it.
pub use cce_format::dtype::kbin_get_dtype_size;
/// `has_valid_dma_cce_inout_dtype_nc_v1`, as the C library exports it.
pub use cce_format::limits::dtype_gate_nc_v1;
/// The runtime's meta-control builders, its formulas with its arity (the C library's exports).
pub use cce_format::meta_ctrl::raw::{
    add_meta_ctrl, ext_meta_ctrl, fma_meta_ctrl, gradient_meta_ctrl, min_max_meta_ctrl, replication_meta_ctrl,
};

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
