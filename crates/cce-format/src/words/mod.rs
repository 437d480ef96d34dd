//! Every word the runtime writes, declared once: one file per meta-control word and per
//! 16-byte descriptor, holding its name, fixed bits, source and fields (Rust type, `[hi:lo]`,
//! tag, note). From that declaration come the word's typed struct, its `parse` and `emit`, its
//! layout table for `cce decode`, and its entry in the [`REGISTRY`] the [codec](crate::codec)
//! iterates. Fields several words share (the meta-control dtype nibbles, the compute
//! descriptors' W0, the UDMA `len_ctrl`) are declared once in [`shared`] and [`len_ctrl`].
//!
//! ## Guarantees
//! - A word's `emit` is its fixed bits ORed with each field placed through its declaration;
//!   `parse` accepts exactly the words `emit` can write (`parse(emit(x)) == x`), refusing the
//!   rest with [`FormatError::NotThisLayout`] naming the bits.
//! - No two fields of a word claim the same bit, nor a fixed bit, and every word with a typed
//!   struct is in the registry: the `registry` test walks it.
//! - The runtime's raw encoders ([`crate::meta_ctrl::raw`], [`crate::descriptor::raw`]) place
//!   their arguments through the same declarations, masking exactly where the runtime masks.
//! - To add a field: one `FieldDef` const and one line in its word's `fields` list.

use crate::error::FormatError;
use crate::layout::{FieldDef, FieldKind, Layout};

mod declare;
mod field_type;
mod registry;

pub mod len_ctrl;
pub mod shared;

mod add_meta_ctrl;
mod copy_meta_ctrl;
mod ext_meta_ctrl;
mod fma_meta_ctrl;
mod gradient_meta_ctrl;
mod min_max_meta_ctrl;
mod replication_meta_ctrl;

mod data_frame;
mod fma_descriptor;
mod gradient_descriptor;
mod m2s_data;
mod min_max_descriptor;
mod replication_descriptor;
mod s2m_data;
mod seed_init_descriptor;

pub(crate) use data_frame::join_address;
pub(crate) use declare::word;
pub use field_type::FieldType;
pub use registry::{DESCRIPTOR_LAYOUTS, Entry, META_CTRL_LAYOUTS, REGISTRY, entry};

pub use add_meta_ctrl::*;
pub use copy_meta_ctrl::*;
pub use ext_meta_ctrl::*;
pub use fma_descriptor::*;
pub use fma_meta_ctrl::*;
pub use gradient_descriptor::*;
pub use gradient_meta_ctrl::*;
pub use len_ctrl::*;
pub use m2s_data::*;
pub use min_max_descriptor::*;
pub use min_max_meta_ctrl::*;
pub use replication_descriptor::*;
pub use replication_meta_ctrl::*;
pub use s2m_data::*;
pub use seed_init_descriptor::*;
pub use shared::*;

/// Field values by name; a name that is absent reads as 0.
pub trait FieldSource {
    /// The value given for `name`, or 0.
    fn value(&self, name: &str) -> u64;
}

impl FieldSource for [(&str, u64)] {
    fn value(&self, name: &str) -> u64 {
        self.iter().rev().find(|(n, _)| *n == name).map_or(0, |(_, v)| *v)
    }
}

/// A word built from named values, each range-checked against its field (the codec's encode).
pub trait FromInput: Sized {
    /// The word from `values`; a value that does not fit is refused naming its field.
    fn from_input(values: &dyn FieldSource) -> Result<Self, FormatError>;
}

/// A word whose struct holds one Rust field per declared field (made by [`word!`]).
pub(crate) trait Declared: Rules {
    /// The declaration.
    const LAYOUT: &'static Layout;
    /// Fixed bits, then every field placed.
    fn fields_to_words(&self) -> [u32; 4];
    /// Every field read (the words already checked to fit).
    fn fields_from_words(words: &[u32; 4]) -> Self;
}

/// What a word's fields alone do not say: a field written only when another is set, or a
/// combination an exact encoding never has. Both default to nothing.
pub(crate) trait Rules: Sized {
    /// Adjusts the placed words (e.g. drops a field the runtime writes only under a flag).
    #[inline]
    fn emit_rule(&self, words: [u32; 4]) -> [u32; 4] {
        words
    }
    /// Refuses a fitting word that is still no encoding.
    #[inline]
    fn parse_rule(_words: &[u32; 4]) -> Result<(), FormatError> {
        Ok(())
    }
}

/// A declared word's words.
#[inline]
pub(crate) fn emit<T: Declared>(value: &T) -> [u32; 4] {
    value.emit_rule(value.fields_to_words())
}

/// A declared word from words that must be an exact encoding.
#[inline]
pub(crate) fn parse<T: Declared>(words: [u32; 4]) -> Result<T, FormatError> {
    check_fit(T::LAYOUT, &words)?;
    T::parse_rule(&words)?;
    Ok(T::fields_from_words(&words))
}

/// Checks that `words` are an exact encoding of `layout`: fixed bits set, nothing unexplained,
/// and every [`Pattern`](FieldKind::Pattern) field either clear or full.
pub(crate) fn check_fit(layout: &Layout, words: &[u32]) -> Result<(), FormatError> {
    let missing = layout.missing_fixed(words);
    let extra = layout.unexplained(words);
    for w in 0..layout.words as usize {
        if missing[w] != 0 {
            return Err(mismatch(layout, w as u8, "lacks the fixed bits", missing[w]));
        }
        if extra[w] != 0 {
            return Err(mismatch(layout, w as u8, "has bits no field explains", extra[w]));
        }
    }
    for f in layout.fields.iter().filter(|f| f.kind == FieldKind::Pattern) {
        let v = f.get(words);
        if v != 0 && v != f.span.max() {
            return Err(mismatch(layout, f.word, "has a partial sub-descriptor pattern", f.place(v)));
        }
    }
    Ok(())
}

/// The error for words that are not an exact encoding of `layout`.
pub(crate) fn mismatch(layout: &Layout, word: u8, problem: &'static str, bits: u32) -> FormatError {
    FormatError::NotThisLayout { layout: layout.name, word, problem, bits }
}

/// Whether a flag field is set.
#[inline]
pub(crate) fn flag(def: &FieldDef, words: &[u32]) -> bool {
    def.get(words) != 0
}
