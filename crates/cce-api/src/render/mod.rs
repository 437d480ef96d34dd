//! The render layer: every JSON object and text line the fronts print is made here, from the
//! typed results the other modules return. Nothing else in the crate builds JSON by hand.

mod algo;
pub mod bench;
mod bits;
pub mod collective;
mod convert;
mod dtype_value;
mod fields;
mod identify;
mod identify_readme;
mod listing;
#[cfg(feature = "mpi")]
pub mod mpi;
#[cfg(feature = "plot")]
pub mod plot;
mod reduce;
pub mod report;
mod repro;
mod reveal;
#[cfg(feature = "plot")]
mod reveal_plot;
pub(crate) use reveal::reveal_readme;
mod run;
pub(crate) mod ser;
pub mod story;
pub mod trace;

pub(crate) use fields::{fields_map, fields_text};

/// An option as the CLI spells it, `--{option}`: how the texts made here name a parameter that
/// the lower crates name by its option alone (the time model's parameters, `check`), and how
/// the fronts spell the parameters an error message names ([`crate::ApiError::message_with`]).
/// The one place below the fronts that writes a flag's dashes.
pub fn flag(option: &str) -> String {
    format!("--{option}")
}
