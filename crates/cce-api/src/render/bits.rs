//! The text of the bits commands (`cce encode`, `decode`, `tables`, `packet-size`,
//! `dtype-gate`), rendered from the same typed results whose JSON `--json` prints, so the two
//! never disagree.

use core::fmt::{Display, Write};

use crate::bits::{
    ArchRow, CceInfoDecoded, CollectiveCodeRow, Decoded, DtypeGate, DtypeRow, Encoded, Field, FmaOperandRow,
    KbinDtypeRow, KbinOpRow, LayoutDecoded, MetaCtrlDecoded, OpRemapRow, PacketSize, Reading, ReductionTypeRow,
    SdmaOpRow, Tables,
};

/// Words as `0x%08x`, space-separated.
fn words_line(words: &[u32]) -> String {
    words.iter().map(|w| format!("0x{w:08x}")).collect::<Vec<_>>().join(" ")
}

/// A binary32 value (widened exactly) as its JSON shows it: the shortest text that reads back
/// as the same f64, or `NaN` / `inf` / `-inf`.
fn float_text(x: f64) -> String {
    serde_json::Number::from_f64(x).map_or_else(|| x.to_string(), |n| n.to_string())
}

/// An optional cell: its text, or `-`.
fn opt<T: Display>(x: Option<T>) -> String {
    x.map_or_else(|| "-".into(), |x| x.to_string())
}

impl Encoded {
    /// `cce encode`: the words, then the little-endian bytes.
    pub fn to_text(&self) -> String {
        format!("{}: {}\nbytes (little-endian): {}\n", self.encoder, words_line(&self.words), self.bytes_hex)
    }
}

impl Field {
    /// The value with its readable form: `1 (input)`, `0x3f000000 (0.5)`, `10 (bf16)`,
    /// `15 (set: true)`, or the bare value.
    pub fn value_text(&self) -> String {
        let value = self.value;
        if let Some(x) = self.operand.or(self.dtype) {
            format!("{value} ({x})")
        } else if let Some(f) = self.float {
            format!("0x{value:08x} ({})", float_text(f))
        } else if let Some(set) = self.set {
            format!("{value} (set: {set})")
        } else {
            value.to_string()
        }
    }

    /// The tag, with the dtype's when it has its own: `HIGH (dtype LOW)`.
    fn tag_text(&self) -> String {
        match self.dtype_tag {
            Some(t) => format!("{} (dtype {t})", self.tag),
            None => self.tag.to_string(),
        }
    }
}

/// Fields as aligned rows: name, bits, value, tag, note.
fn fields_block(out: &mut String, fields: &[Field], indent: &str) {
    let name_w = fields.iter().map(|f| f.name.len()).max().unwrap_or(0);
    let bits_w = fields.iter().map(|f| f.bits.len()).max().unwrap_or(0);
    let values: Vec<String> = fields.iter().map(Field::value_text).collect();
    let val_w = values.iter().map(String::len).max().unwrap_or(0);
    for (f, value) in fields.iter().zip(&values) {
        let _ = writeln!(
            out,
            "{indent}{:<name_w$}  {:<bits_w$}  {value:<val_w$}  {:<5}  {}",
            f.name,
            f.bits,
            f.tag_text(),
            f.note
        );
    }
}

impl Reading {
    fn write_text(&self, out: &mut String, indent: &str) {
        fields_block(out, &self.fields, indent);
        let _ = write!(out, "{indent}exact encoding: {}", if self.exact { "yes" } else { "no" });
        if let Some(p) = &self.problem {
            let _ = write!(out, " ({p})");
        }
        out.push('\n');
        for (words, label) in
            [(&self.unexplained_bits, "bits no field explains"), (&self.missing_fixed_bits, "fixed bits missing")]
        {
            if words.iter().any(|&w| w != 0) {
                let _ = writeln!(out, "{indent}{label}: {}", words_line(words));
            }
        }
    }
}

impl Decoded {
    /// `cce decode`: every field by name with its bits, value, tag and note.
    pub fn to_text(&self) -> String {
        match self {
            Decoded::Layout(d) => d.to_text(),
            Decoded::MetaCtrl(d) => d.to_text(),
            Decoded::CceInfo(d) => d.to_text(),
        }
    }
}

impl LayoutDecoded {
    /// The words, each field, whether they are an exact encoding, the layout's source.
    pub fn to_text(&self) -> String {
        let mut out = format!("{} {}\n", self.encoder, words_line(&self.words));
        self.reading.write_text(&mut out, "  ");
        let _ = writeln!(out, "source: {}", self.reading.source);
        out
    }
}

impl MetaCtrlDecoded {
    /// The word, then each reading with its fields.
    pub fn to_text(&self) -> String {
        let mut out = format!("meta-ctrl {}: {} reading(s)\n", words_line(&[self.word]), self.readings.len());
        for r in &self.readings {
            let _ = writeln!(out, "reading {} [{}]", r.encoder, r.tag);
            r.reading.write_text(&mut out, "  ");
        }
        let _ = writeln!(out, "note: {}", self.note);
        out
    }
}

impl CceInfoDecoded {
    /// The counts, both arms of the union, the note.
    pub fn to_text(&self) -> String {
        let (fma, mm) = (&self.fma_info, &self.min_max_info);
        let scales: Vec<String> = fma.scale.iter().map(|&x| float_text(x)).collect();
        format!(
            "cce-info ({} bytes) [{}]: {} source(s), {} destination(s)\n\
             fma_info.scale_dtype: {} ({})\n\
             fma_info.scale: {}\n\
             min_max_info: use_constant {}, constant_dtype {} ({}), constant {}\n\
             note: {}\n",
            self.bytes,
            self.tag,
            self.num_sources,
            self.num_dests,
            fma.scale_dtype,
            fma.scale_dtype_sdma,
            scales.join(" "),
            mm.use_constant,
            mm.constant_dtype,
            mm.constant_dtype_sdma,
            mm.constant,
            self.note
        )
    }
}

/// A row of one of the tables: its columns' names (the JSON keys) and its cells' text.
trait Row {
    const COLUMNS: &'static [&'static str];
    fn cells(&self) -> Vec<String>;
}

impl Row for OpRemapRow {
    const COLUMNS: &'static [&'static str] = &["kbin", "kbin_name", "sdma", "sdma_name", "tag"];
    fn cells(&self) -> Vec<String> {
        vec![self.kbin.to_string(), opt(self.kbin_name), opt(self.sdma), opt(self.sdma_name), self.tag.to_string()]
    }
}

impl Row for KbinOpRow {
    const COLUMNS: &'static [&'static str] = &["value", "name", "cce", "tag"];
    fn cells(&self) -> Vec<String> {
        vec![self.value.to_string(), self.name.into(), self.cce.to_string(), self.tag.to_string()]
    }
}

impl Row for SdmaOpRow {
    const COLUMNS: &'static [&'static str] = &["value", "name", "kbin_op", "tag"];
    fn cells(&self) -> Vec<String> {
        vec![self.value.to_string(), self.name.into(), self.kbin_op.to_string(), self.tag.to_string()]
    }
}

impl Row for DtypeRow {
    const COLUMNS: &'static [&'static str] = &["sdma", "name", "bytes", "kbin_bytes", "tag", "bytes_tag"];
    fn cells(&self) -> Vec<String> {
        vec![
            self.sdma.to_string(),
            self.name.into(),
            self.bytes.to_string(),
            self.kbin_bytes.to_string(),
            self.tag.to_string(),
            self.bytes_tag.to_string(),
        ]
    }
}

impl Row for KbinDtypeRow {
    const COLUMNS: &'static [&'static str] = &["kbin", "sdma", "name", "tag"];
    fn cells(&self) -> Vec<String> {
        vec![self.kbin.to_string(), self.sdma.to_string(), self.name.into(), self.tag.to_string()]
    }
}

impl Row for ArchRow {
    const COLUMNS: &'static [&'static str] = &["arch", "max_cce_elements", "replication", "tag"];
    fn cells(&self) -> Vec<String> {
        vec![self.arch.to_string(), opt(self.max_cce_elements), self.replication.to_string(), self.tag.to_string()]
    }
}

impl Row for FmaOperandRow {
    const COLUMNS: &'static [&'static str] = &["value", "name", "tag"];
    fn cells(&self) -> Vec<String> {
        vec![self.value.to_string(), self.name.into(), self.tag.to_string()]
    }
}

impl Row for ReductionTypeRow {
    const COLUMNS: &'static [&'static str] = &["value", "name", "algorithm", "tag"];
    fn cells(&self) -> Vec<String> {
        vec![self.value.to_string(), self.name.into(), self.algorithm.into(), self.tag.to_string()]
    }
}

impl Row for CollectiveCodeRow {
    const COLUMNS: &'static [&'static str] = &["field", "name", "value", "sdma", "sdma_name", "tag"];
    fn cells(&self) -> Vec<String> {
        vec![
            self.field.into(),
            self.name.into(),
            format!("0x{:02x}", self.value),
            self.sdma.to_string(),
            self.sdma_name.into(),
            self.tag.to_string(),
        ]
    }
}

/// A table of `rows` under `title`: a header of the column names, columns padded to their
/// widest cell, two spaces apart, then a blank line.
fn table<R: Row>(out: &mut String, title: &str, rows: &[R]) {
    let rows: Vec<Vec<String>> = rows.iter().map(Row::cells).collect();
    let widths: Vec<usize> = R::COLUMNS
        .iter()
        .enumerate()
        .map(|(i, c)| rows.iter().map(|r| r[i].len()).chain([c.len()]).max().unwrap_or(0))
        .collect();
    let line = |cells: &[String]| {
        cells.iter().zip(&widths).map(|(c, w)| format!("{c:<w$}")).collect::<Vec<_>>().join("  ").trim_end().to_string()
    };
    let _ = writeln!(out, "{title}");
    let header: Vec<String> = R::COLUMNS.iter().map(|c| c.to_string()).collect();
    let _ = writeln!(out, "  {}", line(&header));
    for r in &rows {
        let _ = writeln!(out, "  {}", line(r));
    }
    out.push('\n');
}

impl Tables {
    /// `cce tables`: every table with its tags.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        table(&mut out, "kbin op -> SDMA CCE op (CSWTCH.21)", &self.ops);
        table(&mut out, "kbin ops", &self.kbin_ops);
        table(&mut out, "SDMA CCE ops", &self.sdma_ops);
        table(&mut out, "SDMA dtypes", &self.dtypes);
        table(&mut out, "kbin dtype -> SDMA dtype (CSWTCH.19)", &self.kbin_dtypes);
        table(&mut out, "archs", &self.archs);
        table(&mut out, "FMA operands", &self.fma_operands);
        table(&mut out, "reduction_type_t -> algorithm (study §8)", &self.reduction_types);
        table(
            &mut out,
            "PSEUDO_TRIGGER_COLLECTIVE -> SDMA_CCETYPE_ADD reduce packets (study §8)",
            &self.collective_codes,
        );
        let caps: Vec<String> = self.prio_caps.bytes.iter().map(u32::to_string).collect();
        let _ = writeln!(out, "priority-class caps (bytes): {} [{}]", caps.join(" "), self.prio_caps.tag);
        let sel = &self.fma_default_selectors;
        let _ = writeln!(out, "FMA default selectors: a={} b={} c={} [{}]", sel.a, sel.b, sel.c, sel.tag);
        let _ = writeln!(out, "max sources: {}", self.max_sources);
        out
    }
}

impl PacketSize {
    /// `cce packet-size`: `N bytes`.
    pub fn to_text(&self) -> String {
        format!("{} bytes\n", self.bytes)
    }
}

impl DtypeGate {
    /// `cce dtype-gate`: `valid` or `invalid`.
    pub fn to_text(&self) -> String {
        format!("{}\n", if self.valid { "valid" } else { "invalid" })
    }
}
