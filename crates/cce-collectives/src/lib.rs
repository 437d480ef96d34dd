//! # cce-collectives — reduces and collectives, end to end
//!
//! Everything here is lowered to CCE packets by `cce-host` and executed, as ring bytes, by
//! `cce-engine`: nothing computes a result any other way.
//!
//! - [`collective`]: all-reduce, reduce-scatter and all-gather over 2–4096 ranks run as tasks,
//!   each with its own engine, five algorithms (ring, ring-2r2w, KangaRing, mesh, RDH) and their
//!   hierarchies over nodes (an intra-node and an inter-node algorithm); its time model
//!   ([`collective::model`]) times the rings' own packets, and [`collective::choose`] picks the
//!   fastest; [`collective::check`] refuses a configuration (memory budget included) before
//!   anything is allocated, and what it accepts, an [`collective::Checked`], is the only thing
//!   [`collective::run`] runs;
//! - [`numerics_report`]: the all-reduce error against the rank count (bf16 RNE, SR, fp32);
//!   [`numerics_scale`]: the same to 4096 ranks for several orders, with fitted laws;
//! - [`metrics`]: a result against the exact reduction (absolute, relative and ulp errors);
//! - [`demo`]: `cce demo`, the worked examples (§9.3's in [`gradient_demo`]) and an all-reduce
//!   with every algorithm;
#![forbid(unsafe_code)]

pub mod collective;
pub mod demo;
pub mod gradient_demo;
pub mod measured;
pub mod metrics;
pub mod model_report;
pub mod numerics_report;
pub mod numerics_scale;
