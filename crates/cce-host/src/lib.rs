//! # cce-host — the runtime's producer stack, from a request to ring bytes
//!
//! The study's §2.1 chain — `add_dma_packet_cce` → the `vring_add_dma_packet_cce_int`
//! dispatcher → `build_{add,min_max,fma}_packet` → the per-source encoders — as a library:
//!
//! 1. a [`ReduceRequest`] (op, `cce_info`, addresses, element count, dtypes, arch, rounding,
//!    priority class);
//! 2. [`plan`] applies every rule of the dispatcher, each a [`HostError`] carrying the study's
//!    message, the special paths (seed-init for stochastic rounding, the u8 → u16 lane
//!    promotion, the MIN/MAX constant sub-descriptor, the EXT combo with replication) and the
//!    chunking of §7.1 (32-byte granular, per-priority cap, per-arch max elements);
//! 3. [`Program::to_rings`] lays the packets out as one queue's tx and rx ring bytes, with the
//!    ring-id phase that changes on every wrap, and the doorbell counts.
//!
//! [`gradient`] plans GCE gradient packets (compress / decompress) and the compression step of
//! the EXT combo (study §5.2, §9.3; the codec is the project's MODEL).
//!
//! [`options`] reads a reduce's options as a front end names them (the op and rounding by
//! name, FMA scales, the clamp constant) with one rule each, for every front end.
//!
//! Packets are laid out by [`cce_format::packet`] (the MODEL packet convention), so whatever
//! the host writes, the engine's parser reads back exactly.
//!
//! ## Guarantees
//! - A refused request allocates nothing large: sizes are checked before any ring is built.
//! - No panics on any request; no unsafe.
#![forbid(unsafe_code)]

mod dispatcher;
mod error;
pub mod gradient;
pub mod options;
mod ring;

pub use dispatcher::{
    CopyRequest, MinMaxConstant, ReduceDtypes, ReduceRequest, Rounding, combo_packet, min_max_constant_supported, plan,
    plan_copy,
};
pub use error::HostError;
pub use gradient::{GradientRequest, plan_gradient};
pub use options::{broadcast_scales, check_options};
pub use ring::{INITIAL_PHASE, MAX_PROGRAM_DESCRIPTORS, Program, RingBuilder, Rings};
