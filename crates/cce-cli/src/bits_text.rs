//! The text form of the bits commands (`encode`, `decode`, `tables`, `packet-size`,
//! `dtype-gate`), rendered from the same JSON object `--json` prints, so the two never disagree.

use std::fmt::Write;

use serde_json::{Map, Value};

fn s(v: &Value) -> String {
    match v {
        Value::String(t) => t.clone(),
        Value::Null => "-".into(),
        other => other.to_string(),
    }
}

fn words_line(v: &Value) -> String {
    v["words"].as_array().map_or_else(String::new, |ws| {
        ws.iter().map(|w| format!("0x{:08x}", w.as_u64().unwrap_or(0))).collect::<Vec<_>>().join(" ")
    })
}

/// `cce encode`: the words, then the little-endian bytes.
pub(crate) fn encode(v: &Value) -> String {
    format!("{}: {}\nbytes (little-endian): {}\n", s(&v["encoder"]), words_line(v), s(&v["bytes_hex"]))
}

/// A field's value with its readable form: `1 (input)`, `0x3f000000 (0.5)`, `10 (bf16)`.
fn field_value(f: &Value) -> String {
    let value = f["value"].as_u64().unwrap_or(0);
    let readable = ["operand", "dtype", "float", "set"].iter().find_map(|k| f.get(*k).map(|x| (*k, s(x))));
    match readable {
        Some(("float", x)) => format!("0x{value:08x} ({x})"),
        Some(("set", x)) => format!("{value} (set: {x})"),
        Some((_, x)) => format!("{value} ({x})"),
        None => value.to_string(),
    }
}

fn fields_block(out: &mut String, fields: &Map<String, Value>, indent: &str) {
    let name_w = fields.keys().map(String::len).max().unwrap_or(0);
    let bits_w = fields.values().map(|f| s(&f["bits"]).len()).max().unwrap_or(0);
    let rows: Vec<(String, String)> = fields.iter().map(|(n, f)| (n.clone(), field_value(f))).collect();
    let val_w = rows.iter().map(|(_, v)| v.len()).max().unwrap_or(0);
    for ((name, value), f) in rows.iter().zip(fields.values()) {
        let tag = match f.get("dtype_tag") {
            Some(t) => format!("{} (dtype {})", s(&f["tag"]), s(t)),
            None => s(&f["tag"]),
        };
        let _ = writeln!(
            out,
            "{indent}{name:<name_w$}  {:<bits_w$}  {value:<val_w$}  {tag:<5}  {}",
            s(&f["bits"]),
            s(&f["note"])
        );
    }
}

fn layout_block(out: &mut String, v: &Value, indent: &str) {
    if let Some(fields) = v["fields"].as_object() {
        fields_block(out, fields, indent);
    }
    let exact = v["exact"].as_bool().unwrap_or(false);
    let _ = write!(out, "{indent}exact encoding: {}", if exact { "yes" } else { "no" });
    if let Some(p) = v["problem"].as_str() {
        let _ = write!(out, " ({p})");
    }
    out.push('\n');
    for (key, label) in [("unexplained_bits", "bits no field explains"), ("missing_fixed_bits", "fixed bits missing")] {
        let words: Vec<u64> = v[key].as_array().map_or_else(Vec::new, |a| a.iter().filter_map(Value::as_u64).collect());
        if words.iter().any(|&w| w != 0) {
            let hex: Vec<String> = words.iter().map(|w| format!("0x{w:08x}")).collect();
            let _ = writeln!(out, "{indent}{label}: {}", hex.join(" "));
        }
    }
}

/// `cce decode`: every field by name with its bits, value, tag and note.
pub(crate) fn decode(v: &Value) -> String {
    let mut out = String::new();
    match s(&v["encoder"]).as_str() {
        "meta-ctrl" => {
            let readings = v["readings"].as_array().cloned().unwrap_or_default();
            let _ = writeln!(out, "meta-ctrl {}: {} reading(s)", words_line(v), readings.len());
            for r in &readings {
                let _ = writeln!(out, "reading {} [{}]", s(&r["encoder"]), s(&r["tag"]));
                layout_block(&mut out, r, "  ");
            }
            let _ = writeln!(out, "note: {}", s(&v["note"]));
        }
        "cce-info" => {
            let _ = writeln!(
                out,
                "cce-info ({} bytes) [{}]: {} source(s), {} destination(s)",
                s(&v["bytes"]),
                s(&v["tag"]),
                s(&v["num_sources"]),
                s(&v["num_dests"])
            );
            let fma = &v["fma_info"];
            let _ = writeln!(out, "fma_info.scale_dtype: {} ({})", s(&fma["scale_dtype"]), s(&fma["scale_dtype_sdma"]));
            let scales: Vec<String> = fma["scale"].as_array().map_or_else(Vec::new, |a| a.iter().map(s).collect());
            let _ = writeln!(out, "fma_info.scale: {}", scales.join(" "));
            let mm = &v["min_max_info"];
            let _ = writeln!(
                out,
                "min_max_info: use_constant {}, constant_dtype {} ({}), constant {}",
                s(&mm["use_constant"]),
                s(&mm["constant_dtype"]),
                s(&mm["constant_dtype_sdma"]),
                s(&mm["constant"])
            );
            let _ = writeln!(out, "note: {}", s(&v["note"]));
        }
        name => {
            let _ = writeln!(out, "{name} {}", words_line(v));
            layout_block(&mut out, v, "  ");
            let _ = writeln!(out, "source: {}", s(&v["source"]));
        }
    }
    out
}

/// A table of rows (objects) under `title`, with the given columns.
fn table(out: &mut String, title: &str, rows: &Value, cols: &[&str]) {
    let rows: Vec<Vec<String>> =
        rows.as_array().map_or_else(Vec::new, |a| a.iter().map(|r| cols.iter().map(|c| s(&r[*c])).collect()).collect());
    let widths: Vec<usize> = cols
        .iter()
        .enumerate()
        .map(|(i, c)| rows.iter().map(|r| r[i].len()).chain([c.len()]).max().unwrap_or(0))
        .collect();
    let _ = writeln!(out, "{title}");
    let line = |cells: Vec<String>| {
        cells.iter().zip(&widths).map(|(c, w)| format!("{c:<w$}")).collect::<Vec<_>>().join("  ").trim_end().to_string()
    };
    let _ = writeln!(out, "  {}", line(cols.iter().map(|c| c.to_string()).collect()));
    for r in rows {
        let _ = writeln!(out, "  {}", line(r));
    }
    out.push('\n');
}

/// `cce tables`: every table with its tags.
pub(crate) fn tables(v: &Value) -> String {
    let mut out = String::new();
    table(
        &mut out,
        "kbin op -> SDMA CCE op (CSWTCH.21)",
        &v["ops"],
        &["kbin", "kbin_name", "sdma", "sdma_name", "tag"],
    );
    table(&mut out, "kbin ops", &v["kbin_ops"], &["value", "name", "cce", "tag"]);
    table(&mut out, "SDMA CCE ops", &v["sdma_ops"], &["value", "name", "kbin_op", "tag"]);
    table(&mut out, "SDMA dtypes", &v["dtypes"], &["sdma", "name", "bytes", "kbin_bytes", "tag", "bytes_tag"]);
    table(&mut out, "kbin dtype -> SDMA dtype (CSWTCH.19)", &v["kbin_dtypes"], &["kbin", "sdma", "name", "tag"]);
    table(&mut out, "archs", &v["archs"], &["arch", "max_cce_elements", "replication", "tag"]);
    table(&mut out, "FMA operands", &v["fma_operands"], &["value", "name", "tag"]);
    let caps: Vec<String> = v["prio_caps"]["bytes"].as_array().map_or_else(Vec::new, |a| a.iter().map(s).collect());
    let _ = writeln!(out, "priority-class caps (bytes): {} [{}]", caps.join(" "), s(&v["prio_caps"]["tag"]));
    let sel = &v["fma_default_selectors"];
    let _ = writeln!(
        out,
        "FMA default selectors: a={} b={} c={} [{}]",
        s(&sel["a"]),
        s(&sel["b"]),
        s(&sel["c"]),
        s(&sel["tag"])
    );
    let _ = writeln!(out, "max sources: {}", s(&v["max_sources"]));
    out
}
