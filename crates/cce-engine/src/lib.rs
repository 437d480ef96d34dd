//! # cce-engine — the silicon model: ring bytes in, memory out
//!
//! A functional model of the compute-DMA engine. It knows nothing of the host: queues hold tx
//! and rx rings **in memory**, a doorbell makes descriptors visible, and the executor drains
//! them packet by packet, reading only bytes — so any ring, built by `cce-host` or captured
//! elsewhere, runs the same.
//!
//! - [`memory`]: the [`Memory`] trait (bounds-checked, u64 addresses) and [`PagedMemory`],
//!   sparse regions of 1 MiB pages; a flat fake behind the `test-utils` feature;
//! - [`host_memory`]: [`HostMemory`], the caller's own buffers mapped in place (read-only)
//!   beside owned destination regions, for jobs on arrays a program already holds;
//! - [`Engine`]: up to 16 queues, served round robin, switching only at packet boundaries;
//!   a completion semaphore per queue (signed 32-bit, wrapping) incremented per packet;
//! - the executor: plain copies and CCE ADD / FMA / MIN / MAX through `cce-numerics`, with
//!   replication, the seed-init descriptor and stochastic rounding;
//! - [`gce`]: GCE gradient packets (compress / decompress) and the EXT + GCE combo, with the
//!   project's block-scaled fp8 codec (MODEL).
//!
//! ## Guarantees
//! - **A faulting packet writes nothing.** Every check (the packet convention, dtypes, bounds
//!   and address overflow of every stream) happens before the first write; the queue then stops
//!   in [`QueueState::Faulted`] with a [`Fault`] naming queue, descriptor and reason.
//! - **Bounded.** Each step consumes at least one descriptor or stops the queue; a packet is
//!   parsed from at most 128 descriptors; no panic on any bytes.
//! - **Deterministic.** Stochastic rounding is keyed by (seed, queue, destination element
//!   address), so results never depend on threads, runs or packet batching (docs/MODEL.md E3).
//! - No unsafe.
#![forbid(unsafe_code)]

mod engine;
mod exec;
pub mod feed;
pub mod gce;
mod gce_run;
pub mod host_memory;
pub mod memory;

pub use engine::{
    Engine, EngineConfig, EngineError, Fault, FaultReason, MAX_QUEUES, QueueConfig, QueueState, QueueStatus, RunReport,
};
pub use exec::packet_spec;
pub use host_memory::HostMemory;
pub use memory::{MemError, Memory, PagedMemory};
