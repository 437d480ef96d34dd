//! Encode and decode any layout by name, from named field values — the generic face of the
//! typed codecs, used by tools (the `cce encode` / `cce decode` commands) that pick the encoder
//! at run time.
//!
//! [`encode`] range-checks every value through the typed builders (an out-of-range value is a
//! [`FormatError::FieldOutOfRange`] naming the field), then emits through the runtime formula.
//! [`decode`] never fails: it reports each field, whether the words are an exact encoding, and
//! any bits it cannot explain.

use alloc::vec::Vec;

use crate::error::FormatError;
use crate::layout::{FieldValue, Layout};
use crate::words::{self, Entry};

pub use crate::words::FieldSource;

/// A sized handle on any field source, so an unsized one (a slice) can be passed as `dyn`.
struct Values<'a, S: FieldSource + ?Sized>(&'a S);

impl<S: FieldSource + ?Sized> FieldSource for Values<'_, S> {
    fn value(&self, name: &str) -> u64 {
        self.0.value(name)
    }
}

/// The registry entry of `layout`, or the error `missing` names.
fn entry_of(layout: &Layout, missing: &'static str) -> Result<&'static Entry, FormatError> {
    words::entry(layout.name).ok_or(FormatError::Rule { message: missing, tag: crate::Tag::Model })
}

/// Every layout [`encode`] and [`decode`] know, in the order the CLI lists them.
pub fn layouts() -> impl Iterator<Item = &'static Layout> {
    words::REGISTRY.iter().map(|e| e.layout)
}

/// Encodes `layout` from named values (flags and patterns take 0 or 1; dtypes their value; the
/// FMA scale its f32 bits). Returns `layout.words` words. A name left out is 0 for every
/// encoder (the driver's copy word is `--last-block 1 --first-block 1 --copy-source-data 1`).
pub fn encode<S: FieldSource + ?Sized>(layout: &Layout, values: &S) -> Result<Vec<u32>, FormatError> {
    let words = entry_of(layout, "no encoder for this layout")?.encode(&Values(values))?;
    Ok(words[..layout.words as usize].to_vec())
}

/// What [`decode`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decoded {
    /// Each field's raw value, in table order.
    pub fields: Vec<FieldValue>,
    /// `Ok` if the words are an exact encoding of the layout, else why not.
    pub exact: Result<(), FormatError>,
    /// Per word: set bits no field or fixed constant explains.
    pub unexplained: [u32; 4],
    /// Per word: fixed bits that are clear.
    pub missing_fixed: [u32; 4],
}

/// Decodes `words` as `layout`. Never fails and never panics.
pub fn decode(layout: &Layout, words: &[u32]) -> Decoded {
    let mut w = [0u32; 4];
    for (dst, src) in w.iter_mut().zip(words) {
        *dst = *src;
    }
    let exact = if words.len() != layout.words as usize {
        Err(FormatError::ByteLength { what: layout.name, expected: 4 * layout.words as usize, got: 4 * words.len() })
    } else {
        entry_of(layout, "no decoder for this layout").and_then(|e| e.check(w))
    };
    Decoded {
        fields: layout.describe(&w),
        exact,
        unexplained: layout.unexplained(&w),
        missing_fixed: layout.missing_fixed(&w),
    }
}
