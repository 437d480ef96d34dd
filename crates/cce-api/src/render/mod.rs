//! The render layer: every JSON object and text line the fronts print is made here, from the
//! typed results the other modules return. Nothing else in the crate builds JSON by hand.

mod fields;
#[cfg(feature = "mpi")]
pub mod mpi;

pub(crate) use fields::{fields_map, fields_text};
