//! Fields as the fronts show them in a listing: the fields of a word as JSON (each the typed
//! [`Field`]'s object), and the non-zero ones as listing text.

use cce_format::SdmaDtype;
use cce_format::Tag;
use cce_format::descriptor::FmaOperand;
use cce_format::layout::{FieldDef, FieldKind, FieldValue};
use serde_json::Value;

use crate::bits::Field;

/// Decoded fields (of a layout of `words` words) by name, each as [`Field`] serialises.
pub(crate) fn fields_map(fields: &[FieldValue], words: u8) -> Value {
    Value::Object(
        fields
            .iter()
            .map(|fv| {
                // A field's object has string keys only, so serialising it cannot fail.
                let f = serde_json::to_value(Field::of(&fv.def, fv.value, words)).unwrap_or(Value::Null);
                (fv.def.name.to_string(), f)
            })
            .collect(),
    )
}

/// One field as listing text, `name=value`, with its tag when it is not HIGH.
fn field_text(def: &FieldDef, value: u32) -> String {
    let v = match def.kind {
        FieldKind::Dtype | FieldKind::Dtype3 => SdmaDtype::from_nibble(value).name().to_string(),
        FieldKind::Selector => FmaOperand::from_bits(value).name().to_string(),
        FieldKind::F32Bits => format!("{}", f32::from_bits(value)),
        FieldKind::Flag | FieldKind::Pattern | FieldKind::Implied => {
            return if def.tag == Tag::High { def.name.to_string() } else { format!("{}[{}]", def.name, def.tag) };
        }
        FieldKind::Uint if def.span.width >= 16 => format!("0x{value:x}"),
        FieldKind::Uint => value.to_string(),
    };
    if def.tag == Tag::High { format!("{}={v}", def.name) } else { format!("{}={v}[{}]", def.name, def.tag) }
}

/// The non-zero decoded fields, except those named in `skip`, as listing text.
pub(crate) fn fields_text(fields: &[FieldValue], skip: &[&str]) -> String {
    fields
        .iter()
        .filter(|fv| fv.value != 0 && !skip.contains(&fv.def.name))
        .map(|fv| field_text(&fv.def, fv.value))
        .collect::<Vec<_>>()
        .join(" ")
}
