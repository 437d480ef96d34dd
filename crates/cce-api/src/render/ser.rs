//! How the typed results' values are written in their JSON (the `serialize_with` of their
//! fields): a tag as its name, a binary32 value as a number or, when not finite, as text, the
//! fields of a reading as an object by name.

use cce_format::Tag;
use serde::{Serialize, Serializer};

use crate::bits::Field;

/// A tag as printed: `"HIGH"`, `"MED"`, `"LOW"` or `"MODEL"`.
pub(crate) fn tag<S: Serializer>(t: &Tag, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(t.as_str())
}

/// An optional tag (`null` when absent; the fields using it skip `None`).
pub(crate) fn opt_tag<S: Serializer>(t: &Option<Tag>, s: S) -> Result<S::Ok, S::Error> {
    match t {
        Some(t) => tag(t, s),
        None => s.serialize_none(),
    }
}

/// A binary32 value widened to f64: a number when finite, else its text (`NaN`, `inf`, `-inf`),
/// which JSON has no number for.
pub(crate) fn float<S: Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
    if x.is_finite() { s.serialize_f64(*x) } else { s.serialize_str(&x.to_string()) }
}

/// An optional [`float`] (`null` when absent; the fields using it skip `None`).
pub(crate) fn opt_float<S: Serializer>(x: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match x {
        Some(x) => float(x, s),
        None => s.serialize_none(),
    }
}

/// A list of [`float`]s.
pub(crate) fn floats<S: Serializer>(v: &[f64], s: S) -> Result<S::Ok, S::Error> {
    struct F(f64);
    impl Serialize for F {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            float(&self.0, s)
        }
    }
    s.collect_seq(v.iter().map(|&x| F(x)))
}

/// One word as a one-word list.
pub(crate) fn one_word<S: Serializer>(w: &u32, s: S) -> Result<S::Ok, S::Error> {
    [*w].serialize(s)
}

/// Fields as an object: each field's name, then the field.
pub(crate) fn fields_by_name<S: Serializer>(fields: &[Field], s: S) -> Result<S::Ok, S::Error> {
    s.collect_map(fields.iter().map(|f| (f.name, f)))
}
