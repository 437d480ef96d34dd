//! GCE compression of a raw buffer, as `cce.gce_compress` / `cce.gce_decompress` run it:
//! [`cce_job::gradient`] (gradient packets on the engine) on raw buffers.
//!
//! The codec is the project's MODEL (docs/MODEL.md "GCE"): block-scaled fp8 e5m2, one E8M0
//! scale per 32 elements, one header per packet of 2048 elements.

use cce_format::SdmaDtype;
use cce_job::gradient::{self, Compressed};

use crate::error::ApiError;

/// Compresses raw little-endian elements of `dtype` (bf16, fp16, fp32): the fp8 payload (one
/// byte per element) and the packets' headers.
pub fn compress(dtype: SdmaDtype, data: &[u8]) -> Result<Compressed, ApiError> {
    Ok(gradient::compress(dtype, data)?)
}

/// Expands a payload and its headers (as [`compress`] made them) to raw elements of `out`.
pub fn decompress(payload: &[u8], headers: &[u8], out: SdmaDtype) -> Result<Vec<u8>, ApiError> {
    let c =
        Compressed { dtype: out, elems: payload.len() as u64, payload: payload.to_vec(), headers: headers.to_vec() };
    Ok(gradient::decompress(&c, out)?)
}
