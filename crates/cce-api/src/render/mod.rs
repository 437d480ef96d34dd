//! The render layer: every JSON object and text line the fronts print is made here, from the
//! typed results the other modules return. Nothing else in the crate builds JSON by hand.

mod algo;
pub mod bench;
mod bits;
pub mod collective;
mod convert;
mod fields;
mod listing;
#[cfg(feature = "mpi")]
pub mod mpi;
pub mod plot;
mod reduce;
pub mod report;
mod run;
pub(crate) mod ser;
pub mod trace;

pub(crate) use fields::{fields_map, fields_text};
