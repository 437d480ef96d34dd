//! Fields as the fronts show them: one field as JSON (its value, a readable form, bits, tag and
//! note), and the non-zero fields of a word as listing text.

use cce_format::SdmaDtype;
use cce_format::Tag;
use cce_format::descriptor::FmaOperand;
use cce_format::layout::{FieldDef, FieldKind, FieldValue};
use serde_json::{Map, Value, json};

/// One field: its value, a readable form where it has one, its bits, tag and note.
pub(crate) fn field_json(def: &FieldDef, value: u32, words: u8) -> Value {
    let mut o = Map::new();
    o.insert("value".into(), json!(value));
    match def.kind {
        FieldKind::Dtype => {
            o.insert("dtype".into(), json!(SdmaDtype::from_nibble(value).name()));
        }
        FieldKind::Dtype3 => {
            // The 3-bit constant dtype read as an SDMA value is a guess (LOW).
            o.insert("dtype".into(), json!(SdmaDtype::from_nibble(value).name()));
            o.insert("dtype_tag".into(), json!(Tag::Low.as_str()));
        }
        FieldKind::Selector => {
            o.insert("operand".into(), json!(FmaOperand::from_bits(value).name()));
        }
        FieldKind::F32Bits => {
            let f = f32::from_bits(value);
            o.insert("float".into(), if f.is_finite() { json!(f) } else { json!(f.to_string()) });
        }
        FieldKind::Pattern => {
            o.insert("set".into(), json!(value == def.span.max()));
        }
        _ => {}
    }
    o.insert("bits".into(), json!(def.location(words)));
    o.insert("tag".into(), json!(def.tag.as_str()));
    o.insert("note".into(), json!(def.note));
    Value::Object(o)
}

/// Decoded fields (of a layout of `words` words) by name.
pub(crate) fn fields_map(fields: &[FieldValue], words: u8) -> Value {
    Value::Object(fields.iter().map(|fv| (fv.def.name.to_string(), field_json(&fv.def, fv.value, words))).collect())
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
