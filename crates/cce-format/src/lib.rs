//! # cce-format — the bits of the CCE in-transfer reduce
//!
//! Everything the Trainium host runtime writes to configure a CCE (compute-DMA) transfer, as
//! data and pure functions, reproduced from the study `cce-in-transfer-compute.txt` and the gap
//! rules of `GAPS.md`:
//!
//! - [`tag`]: how far a fact can be trusted (HIGH / MED / LOW / MODEL);
//! - [`bits`]: bit spans and range-checked field integers;
//! - [`dtype`], [`op`]: the SDMA and kbin enums and the runtime's remap tables (CSWTCH.19/21);
//! - [`meta_ctrl`]: the five CCE meta-control encoders (FMA, MIN/MAX, ADD, GCE, EXT) and the
//!   replication word, each with a decoder;
//! - [`descriptor`]: the 16-byte compute descriptors (FMA, MIN/MAX, seed-init, replication,
//!   gradient) and the public UDMA data descriptors (M2S, S2M);
//! - [`words`]: every word declared once, one file per word — its fields, fixed bits and
//!   source, from which come its typed struct, `parse`, `emit`, layout table and codec entry;
//! - [`layout`]: what a declaration is made of, and generic decoding and display against one;
//! - [`codec`]: encode and decode any layout by name from named field values (the registry);
//! - [`cce_info`]: the 140-byte `kbin_dma_desc_cce_info_t` C layout;
//! - [`packet`]: the packet convention (MODEL): a reduce as ring descriptors, both ways;
//! - [`ringfile`]: the versioned ring dump file (MODEL);
//! - [`limits`]: per-arch limits, the reduce packet-size rule and the NC-v1 dtype gate;
//! - [`collective`]: the ties to the collective reduce (study §8): the runtime's
//!   `reduction_type_t` and the algorithm each value is, and the compiler's collective codes.
//!
//! ## Guarantees
//! - Each `raw_*` encoder is the study's formula, including its masking, for any `u32` input.
//! - Each typed value's `emit` writes every bit of its word(s); `parse(emit(x)) == x` for every
//!   representable `x` (property-tested).
//! - Decoding never panics: every parser and [`layout::Layout::describe`] accepts any bits and
//!   reports what it cannot explain instead of failing.
//! - No `unsafe`, no allocation except where a function returns a `Vec` (the `alloc` crate).
#![no_std]
#![forbid(unsafe_code)]

extern crate alloc;

pub mod bits;
pub mod cce_info;
pub mod codec;
pub mod collective;
pub mod descriptor;
pub mod dtype;
pub mod error;
pub mod gce;
pub mod layout;
pub mod limits;
pub mod meta_ctrl;
pub mod op;
pub mod packet;
pub mod ring;
pub mod ringfile;
pub mod tag;
pub mod words;

pub use bits::{BitSpan, UInt};
pub use dtype::{KbinDtype, SdmaDtype};
pub use error::FormatError;
pub use op::{KbinOp, SdmaCceType};
pub use tag::Tag;
