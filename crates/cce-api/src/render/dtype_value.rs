//! `cce value`'s report (and the browser page's "dtypes" view), as JSON and as text.
//!
//! The JSON is a contract the page renders as it is: keys are added, never renamed
//! (`dtype`, `tag`, `input`, `input_kind`, `input_exact`, `bits`, `bits_hex`, `value`, `exact`,
//! `class`, `fields`, `next_down`, `next_up`, `ulp`, `rne`, `sr`, `saturate`, `conversions`).

use serde_json::{Value, json};

use crate::dtype_value::{BitField, DtypeValue, DtypeValues, Rne, Sr, Stored};

/// A value of some dtype: `{"bits", "bits_hex", "exact"}`.
fn stored_json(s: &Stored) -> Value {
    json!({"bits": s.bits, "bits_hex": s.bits_hex, "exact": s.exact})
}

/// An optional [`stored_json`] (`null` when absent).
fn opt_stored_json(s: &Option<Stored>) -> Value {
    s.as_ref().map_or(Value::Null, stored_json)
}

/// A field's bits as the docs write them: `[15]`, `[14:7]`.
fn span(f: &BitField) -> String {
    if f.hi == f.lo { format!("[{}]", f.hi) } else { format!("[{}:{}]", f.hi, f.lo) }
}

/// A field's value as a JSON number (an i64 when it fits, else a u64: a u64 dtype's top half).
fn field_number(v: i128) -> Value {
    i64::try_from(v).map_or_else(|_| json!(v as u64), |v| json!(v))
}

fn field_json(f: &BitField) -> Value {
    let mut v = json!({"name": f.name, "bits": span(f), "value": field_number(f.value)});
    if f.name == "exponent" {
        v["unbiased"] = json!(f.unbiased);
    }
    v
}

fn rne_json(r: &Rne) -> Value {
    json!({
        "bits": r.result.bits, "bits_hex": r.result.bits_hex, "exact": r.result.exact,
        "inexact": r.inexact, "error": r.error,
    })
}

fn sr_json(s: &Sr) -> Value {
    let outcome = |o: &crate::dtype_value::SrOutcome| json!({"bits": o.to.bits, "bits_hex": o.to.bits_hex, "exact": o.to.exact, "p": o.p});
    json!({"down": outcome(&s.down), "up": outcome(&s.up), "p32_up": s.p32_up, "engine_uses": s.engine_uses})
}

impl DtypeValue {
    /// The object `cce value --json` prints (the page's contract; see the module's keys).
    pub fn to_json(&self) -> Value {
        let conversions: Vec<Value> = self
            .conversions
            .iter()
            .map(|c| {
                json!({
                    "dtype": c.dtype.name(), "bits": c.to.bits, "bits_hex": c.to.bits_hex,
                    "exact": c.to.exact, "tag": c.tag.as_str(),
                })
            })
            .collect();
        json!({
            "dtype": self.dtype.name(), "tag": self.tag.as_str(),
            "input": self.input, "input_kind": self.input_kind.name(), "input_exact": self.input_exact,
            "bits": self.stored.bits, "bits_hex": self.stored.bits_hex,
            "value": self.value, "exact": self.stored.exact, "class": self.class.name(),
            "fields": self.fields.iter().map(field_json).collect::<Vec<_>>(),
            "next_down": opt_stored_json(&self.next_down), "next_up": opt_stored_json(&self.next_up),
            "ulp": self.ulp,
            "rne": self.rne.as_ref().map_or(Value::Null, rne_json),
            "sr": self.sr.as_ref().map_or(Value::Null, sr_json),
            "saturate": self.saturate,
            "conversions": conversions,
        })
    }

    /// The lines `cce value` prints.
    pub fn to_text(&self) -> String {
        let at = |s: &Stored| format!("{} = {}", s.bits_hex, s.exact);
        let opt = |s: &Option<Stored>| s.as_ref().map_or("none".to_string(), at);
        let mut out = format!("{} {} ({}, tag {})\n", self.dtype.name(), self.input, self.input_kind.name(), self.tag);
        out += &format!("  stored     {} ({})\n", at(&self.stored), self.class.name());
        let fields: Vec<String> = self
            .fields
            .iter()
            .map(|f| {
                let unbiased = f.unbiased.map_or(String::new(), |u| format!(" (2^{u})"));
                format!("{} {} {}{unbiased}", f.name, span(f), f.value)
            })
            .collect();
        out += &format!("  fields     {}\n", fields.join(", "));
        if let Some(x) = &self.input_exact {
            out += &format!("  input      {x} (the f64 the decimal reads as)\n");
        }
        if let Some(r) = &self.rne {
            let how = if r.inexact { "inexact" } else { "exact" };
            let error = r.error.as_ref().map_or(String::new(), |e| format!(", error {e}"));
            out += &format!("  rne        {} ({how}{error})\n", at(&r.result));
        }
        if let Some(s) = &self.sr {
            out += &format!(
                "  sr         down {} p {}, up {} p {}; the engine's 32 random bits round up with p {}{}\n",
                at(&s.down.to),
                s.down.p,
                at(&s.up.to),
                s.up.p,
                s.p32_up,
                if s.engine_uses { "" } else { " (the engine never rounds into fp32 stochastically)" }
            );
        }
        out += &format!("  next down  {}\n  next up    {}\n", opt(&self.next_down), opt(&self.next_up));
        out += &format!("  ulp        {}\n", self.ulp.as_deref().unwrap_or("none"));
        let sat = if self.saturate { ", saturating" } else { "" };
        out += &format!("  conversions (round to nearest even{sat}):\n");
        for c in &self.conversions {
            out += &format!("    {:<8} {:<5}  {:<18} {}\n", c.dtype.name(), c.tag.as_str(), c.to.bits_hex, c.to.exact);
        }
        out
    }
}

impl DtypeValues {
    /// One value's object ([`DtypeValue::to_json`]) for one value, `{"values": [...]}` for
    /// several.
    pub fn to_json(&self) -> Value {
        match self.0.as_slice() {
            [one] => one.to_json(),
            all => json!({"values": all.iter().map(DtypeValue::to_json).collect::<Vec<_>>()}),
        }
    }

    /// Each value's text ([`DtypeValue::to_text`]), a blank line between them.
    pub fn to_text(&self) -> String {
        self.0.iter().map(DtypeValue::to_text).collect::<Vec<_>>().join("\n")
    }
}
