//! # cce-numerics — the numbers of the CCE in-transfer reduce
//!
//! A bit-exact model of what a Trainium compute-DMA reduce does to the data: every SDMA dtype
//! as a codec, round-to-nearest-even and stochastic rounding, and the element kernels
//! (ADD, FMA, MIN, MAX over 1..=32 sources into 1..=M outputs) with independent input,
//! accumulate and output dtypes. Every model choice is listed in `docs/MODEL.md` ("Numerics").
//!
//! - [`types`]: [`NumType`], [`AccumType`] (fp32r = fp32, LOW) and the float formats;
//! - [`float`]: exact decode and the one rounding rule (RNE / SR, overflow, saturation);
//! - [`rng`]: the counter-based generator keyed by (seed, stream, site, element index);
//! - [`spec`]: [`ReduceSpec`] and its parts;
//! - [`reduce()`], [`reduce_par`], [`reduce_with`], [`convert()`], [`convert_par`]: the entry
//!   points on raw little-endian byte buffers;
//! - [`sample`]: deterministic test arrays (`cce gen`), counter-based: any block made alone;
//! - [`check`]: the error check's block kernels (the exact reduction in f64, an output's errors);
//! - [`gce`]: the gradient-compression codec (MODEL), element loops and vector kernels;
//! - [`order`]: the order grammar (`(((0+1)+2)+3)`), how an element's reduction is written;
//! - [`trace`]: one element's reduce step by step (operands, exact partials, roundings);
//! - `bench` (feature `std`): the `cce bench numerics` runner;
//! - `buffer` (feature `std`): large zeroed buffers the OS may map with huge pages.
//!
//! ## Guarantees
//! - Conversions follow ml_dtypes: RNE, overflow → ±inf (NaN for e4m3fn), NaN keeps its sign,
//!   subnormals exact (checked against ml_dtypes over every 8- and 16-bit pattern and a
//!   stride of f32 patterns).
//! - A reduce's bits depend only on the spec, the inputs and `first_element_index`: never on
//!   the thread count, chunk size, or the CPU's SIMD level (tested).
//! - FMA is fused: one rounding into the accumulate dtype per step (checked against exact
//!   rational arithmetic).
//! - No input panics: every shape problem is a [`NumericsError`].
//! - `unsafe` only in `buffer` (one `madvise`) and the private `simd` modules (runtime
//!   CPU-feature dispatch, one file per ISA family, and the hand-written kernels: the AVX-512
//!   fp8 table decoders, encoder and fused ADD, the AVX-512 and AVX2 register-resident ADD
//!   into bf16 and fp16, the GCE codec's compress and expand, the error check's measures),
//!   each block with a `// SAFETY:` comment; a portable copy of every kernel gives the same
//!   bits where the CPU features are missing (tested against it on every pattern class).
//!   [`kernel_name`] says which kernel a call takes. The benchmark's memory-floor loop
//!   (`bench::floor_pass`, AVX2 / AVX-512) is the one other `unsafe` module; it computes
//!   nothing a caller reads as numbers.
//!
//! ## Example
//! ```
//! use cce_numerics::{NumType, ReduceSpec, reduce};
//! // bf16 1.5 + bf16 2.25, fp32 accumulate, bf16 out.
//! let a = 0x3fc0u16.to_le_bytes();
//! let b = 0x4010u16.to_le_bytes();
//! let mut out = [0u8; 2];
//! let spec = ReduceSpec::add(NumType::Bf16, NumType::F32, NumType::Bf16);
//! reduce(&spec, &[&a, &b], &mut [&mut out], 0).unwrap();
//! assert_eq!(u16::from_le_bytes(out), 0x4070); // 3.75
//! ```
#![no_std]
#![deny(unsafe_code)]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

mod any_dtype;
#[cfg(feature = "std")]
pub mod bench;
#[cfg(feature = "std")]
pub mod buffer;
pub mod check;
pub mod error;
pub mod float;
mod fp32_tiles;
pub mod gce;
#[doc(hidden)]
pub mod internals;
pub mod npy;
pub mod order;
pub mod reduce;
pub mod rng;
pub mod sample;
mod simd;
pub mod spec;
pub mod trace;
pub mod types;

pub use error::NumericsError;
pub use reduce::{Exec, convert, convert_spec, convert_to_vec, kernel_name, reduce, reduce_with};
#[cfg(feature = "std")]
pub use reduce::{convert_par, reduce_par};
pub use simd::{Isa, detected_isa};
pub use spec::{FmaSource, MAX_SOURCES, Op, Operand, ReduceSpec, Rounding, Scalar};
pub use types::{AccumType, FloatFormat, NumType};
