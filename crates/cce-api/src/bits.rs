//! The bits: encode a layout from named fields, decode words, the tables, the packet size and
//! the NC-v1 dtype gate — each result the JSON object `cce … --json` prints (keys in the order
//! shown; the CLI renders its text from the same object).
//!
//! Field values are text, read by the same parsers as the CLI's flags: a dtype by name or
//! number, an FMA selector as `stored` / `input` / `scale` or 0..=3, the FMA scale as a decimal
//! float or `0x` binary32 bits, any other field as an integer within its width.
//!
//! ## Guarantees
//! - Decoding never fails on words of the right count: what the words do not explain is
//!   reported inside the object (`exact`, `problem`, `unexplained_bits`).
//! - Encoding range-checks every value before any word is built; nothing panics.

use cce_format::cce_info::{CCE_INFO_BYTES, CceInfo, MAX_SCALES};
use cce_format::codec;
use cce_format::dtype::{self, KBIN_DTYPE_REMAP, SDMA_DTYPES};
use cce_format::layout::{FieldDef, FieldKind, Layout};
use cce_format::limits::{self, PrioCaps};
use cce_format::meta_ctrl;
use cce_format::op::{self, CSWTCH_21};
use cce_format::{KbinOp, SdmaCceType, SdmaDtype, Tag};
use serde_json::{Value, json};

use crate::error::{ApiError, invalid_value};
use crate::render::fields_map;
use crate::values;

fn find_layout(name: &str) -> Result<&'static Layout, ApiError> {
    codec::layouts().find(|l| l.name == name).ok_or_else(|| {
        let names: Vec<_> = codec::layouts().map(|l| l.name).collect();
        ApiError::Input(format!("unknown encoder '{name}' (expected one of: {})", names.join(" ")))
    })
}

/// An encoder: its name, where it comes from, and how many 32-bit words it encodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EncoderInfo {
    /// Name (`fma-meta-ctrl`, …, `s2m-data`).
    pub name: &'static str,
    /// The runtime function (and study section) it reproduces.
    pub source: &'static str,
    /// 1 for a meta-control word, 4 for a 16-byte descriptor.
    pub words: u8,
    layout: &'static Layout,
}

impl EncoderInfo {
    fn of(layout: &'static Layout) -> Self {
        EncoderInfo { name: layout.name, source: layout.source, words: layout.words, layout }
    }

    /// The fields it takes, in table order (implied fields, which follow from others, are not
    /// inputs and are left out).
    pub fn fields(&self) -> Vec<FieldInfo> {
        self.layout.fields.iter().filter(|f| f.is_input()).map(|f| field_info(f, self.words)).collect()
    }
}

/// Every encoder [`encode`] and [`decode`] take, in the CLI's order (`decode` also takes
/// `meta-ctrl` and `cce-info`).
pub fn encoders() -> impl Iterator<Item = EncoderInfo> {
    codec::layouts().map(EncoderInfo::of)
}

/// The encoder named `name`.
pub fn encoder(name: &str) -> Result<EncoderInfo, ApiError> {
    find_layout(name).map(EncoderInfo::of)
}

/// How a field's value is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueKind {
    /// A dtype (name or value) in a 4-bit field.
    Dtype,
    /// A dtype (name or value) in the 3-bit constant-dtype field.
    Dtype3,
    /// A decimal float (negative allowed) or `0x` binary32 bits.
    Float,
    /// An FMA operand selector: `stored`, `input`, `scale` or 0..=3.
    Selector,
    /// An integer (decimal or `0x`) of at most `max`, in a `bits`-bit field (flags: 0 or 1).
    Uint {
        /// Largest value.
        max: u64,
        /// Field width, for messages.
        bits: u32,
    },
}

impl ValueKind {
    /// The placeholder of the value in help text (`DTYPE`, `FLOAT`, `SEL`, `N`).
    pub const fn value_name(self) -> &'static str {
        match self {
            ValueKind::Dtype | ValueKind::Dtype3 => "DTYPE",
            ValueKind::Float => "FLOAT",
            ValueKind::Selector => "SEL",
            ValueKind::Uint { .. } => "N",
        }
    }

    /// Parses a value of this kind into the field's raw value; the error is the message the
    /// CLI shows after "invalid value … for …".
    pub fn parse(self, s: &str) -> Result<u64, String> {
        match self {
            ValueKind::Dtype => values::parse_dtype(s, 16),
            ValueKind::Dtype3 => values::parse_dtype(s, 8),
            ValueKind::Float => parse_f32_bits(s),
            ValueKind::Selector => parse_selector(s),
            ValueKind::Uint { max, bits } => values::parse_max(s, max, bits),
        }
    }
}

/// One field an encoder takes: its name, where its bits are, its tag and note, its value kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldInfo {
    /// Name (the flag `--<name>`, the JSON key).
    pub name: &'static str,
    /// Where the bits are: `[11:8]`, or `W2[23:0]` in a descriptor.
    pub bits: String,
    /// How far the field can be trusted.
    pub tag: Tag,
    /// One line on what it is and where it comes from.
    pub note: &'static str,
    /// How its value is written.
    pub value: ValueKind,
}

impl FieldInfo {
    /// The field's help line: `{bits} [{tag}] {note}`.
    pub fn help(&self) -> String {
        format!("{} [{}] {}", self.bits, self.tag, self.note)
    }

    /// Parses a value for this field (see [`ValueKind::parse`]).
    pub fn parse(&self, s: &str) -> Result<u64, String> {
        self.value.parse(s)
    }
}

fn field_info(f: &'static FieldDef, words: u8) -> FieldInfo {
    let value = match f.kind {
        FieldKind::Dtype => ValueKind::Dtype,
        FieldKind::Dtype3 => ValueKind::Dtype3,
        FieldKind::F32Bits => ValueKind::Float,
        FieldKind::Selector => ValueKind::Selector,
        _ => ValueKind::Uint { max: f.input_max(), bits: if f.input_max() == 1 { 1 } else { f.span.width as u32 } },
    };
    FieldInfo { name: f.name, bits: f.location(words), tag: f.tag, note: f.note, value }
}

/// The fields `encoder` takes (see [`EncoderInfo::fields`]).
pub fn encoder_fields(encoder: &str) -> Result<Vec<FieldInfo>, ApiError> {
    Ok(self::encoder(encoder)?.fields())
}

/// A decimal float (negative allowed), or `0x…` raw binary32 bits.
fn parse_f32_bits(s: &str) -> Result<u64, String> {
    if s.trim().starts_with("0x") || s.trim().starts_with("0X") {
        return values::parse_max(s, u32::MAX as u64, 32);
    }
    s.trim().parse::<f32>().map(|f| f.to_bits() as u64).map_err(|_| format!("'{s}' is not a decimal float"))
}

/// An FMA operand selector: `stored`, `input`, `scale` or 0..=3.
fn parse_selector(s: &str) -> Result<u64, String> {
    match s.trim() {
        "stored" => Ok(0),
        "input" => Ok(1),
        "scale" => Ok(2),
        t => values::parse_max(t, 3, 2),
    }
}

/// Encodes `encoder` from `(field, value)` text pairs (an omitted field is 0; of a field given
/// twice the last value counts): `{"encoder", "words", "bytes_hex", "words_hex"}`.
pub fn encode(encoder: &str, fields: &[(&str, &str)]) -> Result<Value, ApiError> {
    let infos = encoder_fields(encoder)?;
    let given = fields
        .iter()
        .map(|(name, text)| {
            let f = infos.iter().find(|f| f.name == *name).ok_or_else(|| unexpected_field(name))?;
            let v = f
                .parse(text)
                .map_err(|why| invalid_value(&format!("--{} <{}>", f.name, f.value.value_name()), text, &why))?;
            Ok((f.name, v))
        })
        .collect::<Result<Vec<_>, ApiError>>()?;
    encode_values(encoder, &given)
}

/// A field name the encoder does not take, in the words of the CLI's argument parser.
fn unexpected_field(name: &str) -> ApiError {
    ApiError::Input(format!("unexpected argument '--{name}' found"))
}

/// Encodes `encoder` from raw field values (as [`FieldInfo::parse`] gives them; each is
/// range-checked again): the object of [`encode`].
pub fn encode_values(encoder: &str, fields: &[(&str, u64)]) -> Result<Value, ApiError> {
    let layout = find_layout(encoder)?;
    if let Some((name, _)) = fields.iter().find(|(n, _)| !layout.fields.iter().any(|f| f.is_input() && f.name == *n)) {
        return Err(unexpected_field(name));
    }
    let words = codec::encode(layout, fields)?;
    Ok(words_json(layout.name, &words))
}

/// `{"encoder", "words", "bytes_hex", "words_hex"}`.
fn words_json(encoder: &str, words: &[u32]) -> Value {
    json!({
        "encoder": encoder,
        "words": words,
        "bytes_hex": values::to_hex(&values::words_le(words)),
        "words_hex": words_hex(words),
    })
}

fn words_hex(words: &[u32]) -> Vec<String> {
    words.iter().map(|w| format!("0x{w:08x}")).collect()
}

fn fields_json(layout: &Layout, words: &[u32]) -> Value {
    let d = codec::decode(layout, words);
    json!({
        "fields": fields_map(&d.fields, layout.words),
        "fixed": { "words": &layout.fixed[..layout.words as usize], "tag": layout.fixed_tag.as_str() },
        "exact": d.exact.is_ok(),
        "problem": d.exact.err().map(|e| e.to_string()),
        "unexplained_bits": &d.unexplained[..layout.words as usize],
        "missing_fixed_bits": &d.missing_fixed[..layout.words as usize],
        "source": layout.source,
    })
}

/// Decodes hex bytes (little-endian, as `bytes_hex`; spaces, `_` and `:` ignored; a one-word
/// layout also takes a `0x` number) as `encoder`'s output, or as `meta-ctrl` (every encoder a
/// word can come from) or `cce-info` (the 140-byte struct): the object `cce decode --json`
/// prints.
pub fn decode(encoder: &str, hex: &str) -> Result<Value, ApiError> {
    match encoder {
        "meta-ctrl" => Ok(decode_meta_ctrl(parse_words(hex, 1)?[0])),
        "cce-info" => decode_cce_info(&values::parse_hex_bytes(hex, CCE_INFO_BYTES).map_err(ApiError::Input)?),
        name => {
            let layout = find_layout(name)?;
            Ok(layout_json(layout, &parse_words(hex, layout.words as usize)?))
        }
    }
}

/// Decodes words (`cce-info`: the struct's 35 little-endian words) as [`decode`] does.
pub fn decode_words(encoder: &str, words: &[u32]) -> Result<Value, ApiError> {
    let want = match encoder {
        "meta-ctrl" => 1,
        "cce-info" => CCE_INFO_BYTES / 4,
        name => find_layout(name)?.words as usize,
    };
    if words.len() != want {
        return Err(ApiError::Input(format!("{encoder} takes {want} words, got {}", words.len())));
    }
    match encoder {
        "meta-ctrl" => Ok(decode_meta_ctrl(words[0])),
        "cce-info" => decode_cce_info(&values::words_le(words)),
        name => Ok(layout_json(find_layout(name)?, words)),
    }
}

/// A layout's words with every field.
fn layout_json(layout: &Layout, words: &[u32]) -> Value {
    let mut out = words_json(layout.name, words);
    merge(&mut out, fields_json(layout, words));
    out
}

/// Hex bytes for `n` words; one word may also be given as a 0x-number.
fn parse_words(hex: &str, n: usize) -> Result<Vec<u32>, ApiError> {
    if n == 1 && (hex.starts_with("0x") || hex.starts_with("0X")) {
        return Ok(vec![values::parse_max(hex, u32::MAX as u64, 32).map_err(ApiError::Input)? as u32]);
    }
    let bytes = values::parse_hex_bytes(hex, 4 * n).map_err(ApiError::Input)?;
    Ok(bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
}

fn merge(into: &mut Value, from: Value) {
    if let (Value::Object(a), Value::Object(b)) = (into, from) {
        a.extend(b);
    }
}

fn decode_meta_ctrl(word: u32) -> Value {
    let readings = meta_ctrl::readings(word);
    let ambiguous = readings.len() > 1;
    let list: Vec<Value> = readings
        .iter()
        .map(|r| {
            let layout = r.layout();
            // Attributing a word to one of several encoders that fit it is a guess.
            let tag = if ambiguous { Tag::Low } else { layout.fixed_tag };
            let mut o = json!({ "encoder": layout.name, "tag": tag.as_str() });
            merge(&mut o, fields_json(layout, &[word]));
            o
        })
        .collect();
    json!({
        "encoder": "meta-ctrl",
        "words": [word],
        "bytes_hex": values::to_hex(&word.to_le_bytes()),
        "ambiguous": ambiguous,
        "readings": list,
        "note": if readings.is_empty() {
            "no CCE meta-control encoder produces this word"
        } else {
            "every encoder whose exact encoding this word is; ADD and MIN/MAX share 0x2000000 and MIN/MAX const-dt sits on the op-type bits [22:20] (GAPS.md §5)"
        },
    })
}

fn decode_cce_info(bytes: &[u8]) -> Result<Value, ApiError> {
    let info = CceInfo::from_bytes(bytes)?;
    let remap = |d: u32| dtype::kbin_dtype_to_sdma_dtype(d).map_or_else(|e| e.to_string(), |s| s.name().to_string());
    let scales: Vec<Value> = (0..MAX_SCALES)
        .map(|i| {
            let f = info.scale(i).unwrap_or(0.0);
            if f.is_finite() { json!(f) } else { json!(f.to_string()) }
        })
        .collect();
    Ok(json!({
        "encoder": "cce-info",
        "bytes": CCE_INFO_BYTES,
        "num_sources": info.num_sources(),
        "num_dests": info.num_dests(),
        "fma_info": {
            "scale_dtype": info.scale_dtype(),
            "scale_dtype_sdma": remap(info.scale_dtype()),
            "scale": scales,
        },
        "min_max_info": {
            "use_constant": info.use_constant(),
            "constant_dtype": info.constant_dtype(),
            "constant_dtype_sdma": remap(info.constant_dtype()),
            "constant": info.constant(),
        },
        "tag": Tag::High.as_str(),
        "note": "the union arms alias: min_max_info.constant_dtype is fma_info.scale[0], constant is scale[1] (study §2.1)",
    }))
}

/// The op, dtype and arch tables with their tags: the object `cce tables --json` prints.
pub fn tables() -> Value {
    let ops: Vec<Value> = CSWTCH_21
        .iter()
        .enumerate()
        .map(|(i, _)| {
            let kbin = i as u64 + 1;
            let sdma = op::kbin_cce_op_to_sdma_cce_op(kbin).map(|s| s.value()).ok();
            let kname = KbinOp::from_value(kbin).map(KbinOp::name);
            let sname = sdma.and_then(|v| SdmaCceType::from_value(v as u64)).map(SdmaCceType::name);
            json!({ "kbin": kbin, "kbin_name": kname, "sdma": sdma, "sdma_name": sname, "tag": "HIGH" })
        })
        .collect();
    let kbin_ops: Vec<Value> = KbinOp::ALL
        .iter()
        .map(|o| json!({ "value": o.value(), "name": o.name(), "cce": op::kbin_cce_op_to_sdma_cce_op(o.value()).is_ok(), "tag": "HIGH" }))
        .collect();
    let sdma_ops: Vec<Value> = SdmaCceType::ALL
        .iter()
        .map(|o| json!({ "value": o.value(), "name": o.name(), "kbin_op": o.has_kbin_op(), "tag": "HIGH" }))
        .collect();
    let dtypes: Vec<Value> = SDMA_DTYPES
        .iter()
        .map(|r| {
            json!({
                "sdma": r.dtype.value(), "name": r.name, "bytes": r.bytes, "kbin_bytes": r.kbin_bytes,
                "tag": r.tag.as_str(), "bytes_tag": r.bytes_tag.as_str(),
            })
        })
        .collect();
    let kbin_dtypes: Vec<Value> = KBIN_DTYPE_REMAP
        .iter()
        .map(
            |r| json!({ "kbin": r.kbin.value(), "sdma": r.sdma.value(), "name": r.sdma.name(), "tag": r.tag.as_str() }),
        )
        .collect();
    let archs: Vec<Value> = limits::KNOWN_ARCHS
        .iter()
        .map(|&a| {
            json!({
                "arch": a, "max_cce_elements": limits::max_cce_elements(a).ok(),
                "replication": limits::replication_allowed(a), "tag": "HIGH",
            })
        })
        .collect();
    json!({
        "ops": ops,
        "kbin_ops": kbin_ops,
        "sdma_ops": sdma_ops,
        "dtypes": dtypes,
        "kbin_dtypes": kbin_dtypes,
        "archs": archs,
        "prio_caps": { "bytes": PrioCaps::default().0, "tag": "MODEL" },
        "max_sources": limits::MAX_SOURCES,
        "fma_operands": [
            { "value": 0, "name": "stored", "tag": "HIGH" },
            { "value": 1, "name": "input", "tag": "HIGH" },
            { "value": 2, "name": "scale", "tag": "HIGH" },
        ],
        "fma_default_selectors": { "a": "input", "b": "scale", "c": "stored", "tag": "HIGH" },
    })
}

/// The CCE reduce packet size of study §7.1 for `elems` elements of `dtype` in priority
/// class `prio`, with that class's cap `cap` bytes (0 = none; the MODEL default when `None`):
/// `{"bytes": …}`.
pub fn packet_size(dtype: SdmaDtype, elems: u64, prio: u64, cap: Option<u64>) -> Result<Value, ApiError> {
    let prio = u32::try_from(prio).unwrap_or(u32::MAX);
    let caps = match cap {
        Some(cap) => {
            let cap = values::fit(cap, u32::MAX as u64, 32).map_err(|why| invalid_value("--cap", cap, &why))?;
            PrioCaps::default().with_cap(prio, cap as u32)
        }
        None => PrioCaps::default(),
    };
    let bytes = limits::reduce_packet_size(dtype, elems, prio, &caps)?;
    Ok(json!({ "bytes": bytes }))
}

/// The NC-v1 in/out dtype validity gate of study §7.2 (`compute`: the transfer has a compute
/// op; a plain copy is always valid): `{"valid": …}`.
pub fn dtype_gate(in_dt: SdmaDtype, out_dt: SdmaDtype, compute: bool) -> Value {
    json!({ "valid": limits::dtype_gate_nc_v1(compute, in_dt.value(), out_dt.value()) })
}
