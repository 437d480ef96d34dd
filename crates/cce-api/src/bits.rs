//! The bits: encode a layout from named fields, decode words, the tables, the packet size and
//! the NC-v1 dtype gate — each result a typed value ([`Encoded`], [`Decoded`], [`Tables`],
//! [`PacketSize`], [`DtypeGate`]) whose `serde::Serialize` form is the JSON object
//! `cce … --json` prints (keys in field order) and whose `to_text` (in the render layer) is the
//! text `cce …` prints.
//!
//! Field values are text, read by the same parsers as the CLI's flags: a dtype by name or
//! number, an FMA selector as `stored` / `input` / `scale` or 0..=3, the FMA scale as a decimal
//! float or `0x` binary32 bits, any other field as an integer within its width.
//!
//! ## Guarantees
//! - Decoding never fails on words of the right count: what the words do not explain is
//!   reported inside the result ([`Reading::exact`], [`Reading::problem`],
//!   [`Reading::unexplained_bits`]).
//! - Encoding range-checks every value before any word is built; nothing panics.

use cce_format::cce_info::{CCE_INFO_BYTES, CceInfo, MAX_SCALES};
use cce_format::codec;
use cce_format::collective::{LowersTo, PSEUDO_TRIGGER_COLLECTIVE, ReductionType};
use cce_format::descriptor::{DEFAULT_FMA_SELECTORS, FmaOperand};
use cce_format::dtype::{self, KBIN_DTYPE_REMAP, SDMA_DTYPES};
use cce_format::layout::{FieldDef, FieldKind, Layout};
use cce_format::limits::{self, PRIORITY_CLASSES, PrioCaps};
use cce_format::meta_ctrl;
use cce_format::op::{self, CSWTCH_21};
use cce_format::{KbinOp, SdmaCceType, SdmaDtype, Tag};
use serde::Serialize;

use crate::error::{ApiError, invalid_value};
use crate::render::ser;
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
/// twice the last value counts).
pub fn encode(encoder: &str, fields: &[(&str, &str)]) -> Result<Encoded, ApiError> {
    let infos = encoder_fields(encoder)?;
    let given = fields
        .iter()
        .map(|(name, text)| {
            let f = infos.iter().find(|f| f.name == *name).ok_or_else(|| unexpected_field(name))?;
            let v = f
                .parse(text)
                .map_err(|why| invalid_value(&format!("`{}` <{}>", f.name, f.value.value_name()), text, &why))?;
            Ok((f.name, v))
        })
        .collect::<Result<Vec<_>, ApiError>>()?;
    encode_values(encoder, &given)
}

/// A field name the encoder does not take, in the words of the CLI's argument parser.
fn unexpected_field(name: &str) -> ApiError {
    ApiError::Input(format!("unexpected argument '`{name}`' found"))
}

/// Encodes `encoder` from raw field values (as [`FieldInfo::parse`] gives them; each is
/// range-checked again), as [`encode`] does.
pub fn encode_values(encoder: &str, fields: &[(&str, u64)]) -> Result<Encoded, ApiError> {
    let layout = find_layout(encoder)?;
    if let Some((name, _)) = fields.iter().find(|(n, _)| !layout.fields.iter().any(|f| f.is_input() && f.name == *n)) {
        return Err(unexpected_field(name));
    }
    let words = codec::encode(layout, fields)?;
    let fields = fields_of(layout, &codec::decode(layout, &words));
    Ok(Encoded {
        encoder: layout.name,
        bytes_hex: values::to_hex(&values::words_le(&words)),
        words_hex: words_hex(&words),
        words,
        fields,
    })
}

/// What [`encode`] made: `cce encode`'s words (its JSON: `encoder`, `words`, `bytes_hex`,
/// `words_hex`, in that order).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Encoded {
    /// The encoder's name.
    pub encoder: &'static str,
    /// The 32-bit words (1 for a meta-control word, 4 for a descriptor).
    pub words: Vec<u32>,
    /// The words' little-endian bytes as hex, as [`decode`] takes them back.
    pub bytes_hex: String,
    /// Each word as `0x%08x`.
    pub words_hex: Vec<String>,
    /// Every field of the layout as the words read back, in table order (not in the JSON:
    /// `cce decode` shows them).
    #[serde(skip)]
    pub fields: Vec<Field>,
}

/// One field of a layout as some words read: its raw value, a readable form where its kind has
/// one (`dtype`, `operand`, `float`, `set`: at most one is given), where its bits are, its tag
/// and note. In the JSON a field is the value of its name, its keys in this order, the absent
/// readable forms left out.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Field {
    /// Name (the flag `--<name>`, the JSON key).
    #[serde(skip)]
    pub name: &'static str,
    /// The raw value of its bits.
    pub value: u32,
    /// A dtype field's SDMA dtype name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dtype: Option<&'static str>,
    /// How far that dtype name can be trusted, when less than the field (the 3-bit constant
    /// dtype read as an SDMA value is a guess: LOW).
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "ser::opt_tag")]
    pub dtype_tag: Option<Tag>,
    /// An FMA selector's operand name (`stored`, `input`, `scale`, `reserved3`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operand: Option<&'static str>,
    /// The binary32 value of an F32-bits field, widened exactly (NaN and infinities are
    /// written as text in the JSON).
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "ser::opt_float")]
    pub float: Option<f64>,
    /// A pattern field: whether all its bits are set (any other non-zero value is no valid
    /// encoding).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub set: Option<bool>,
    /// Where the bits are: `[11:8]`, or `W2[23:0]` in a descriptor.
    pub bits: String,
    /// How far the field can be trusted.
    #[serde(serialize_with = "ser::tag")]
    pub tag: Tag,
    /// One line on what it is and where it comes from.
    pub note: &'static str,
}

impl Field {
    /// The field `def` (of a layout of `words` words) holding `value`.
    pub(crate) fn of(def: &FieldDef, value: u32, words: u8) -> Field {
        let mut f = Field {
            name: def.name,
            value,
            dtype: None,
            dtype_tag: None,
            operand: None,
            float: None,
            set: None,
            bits: def.location(words),
            tag: def.tag,
            note: def.note,
        };
        match def.kind {
            FieldKind::Dtype => f.dtype = Some(SdmaDtype::from_nibble(value).name()),
            FieldKind::Dtype3 => {
                f.dtype = Some(SdmaDtype::from_nibble(value).name());
                f.dtype_tag = Some(Tag::Low);
            }
            FieldKind::Selector => f.operand = Some(FmaOperand::from_bits(value).name()),
            FieldKind::F32Bits => f.float = Some(f32::from_bits(value) as f64),
            FieldKind::Pattern => f.set = Some(value == def.span.max()),
            FieldKind::Uint | FieldKind::Flag | FieldKind::Implied => {}
        }
        f
    }
}

fn fields_of(layout: &Layout, d: &codec::Decoded) -> Vec<Field> {
    d.fields.iter().map(|fv| Field::of(&fv.def, fv.value, layout.words)).collect()
}

fn words_hex(words: &[u32]) -> Vec<String> {
    words.iter().map(|w| format!("0x{w:08x}")).collect()
}

/// Some words read as one layout: every field, the fixed bits, and what the fields do not
/// explain. In the JSON its keys follow the words' (`fields` is an object by field name).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Reading {
    /// Every field of the layout, in table order.
    #[serde(serialize_with = "ser::fields_by_name")]
    pub fields: Vec<Field>,
    /// The bits every encoding of the layout sets.
    pub fixed: FixedBits,
    /// Whether the words are an exact encoding of the layout.
    pub exact: bool,
    /// Why not, when they are not (`null` in the JSON when they are).
    pub problem: Option<String>,
    /// Per word: set bits no field or fixed constant explains.
    pub unexplained_bits: Vec<u32>,
    /// Per word: fixed bits that are clear.
    pub missing_fixed_bits: Vec<u32>,
    /// Where the layout comes from (the runtime function and study section).
    pub source: &'static str,
}

impl Reading {
    fn of(layout: &Layout, words: &[u32]) -> Reading {
        let d = codec::decode(layout, words);
        let n = layout.words as usize;
        Reading {
            fields: fields_of(layout, &d),
            fixed: FixedBits { words: layout.fixed[..n].to_vec(), tag: layout.fixed_tag },
            exact: d.exact.is_ok(),
            problem: d.exact.err().map(|e| e.to_string()),
            unexplained_bits: d.unexplained[..n].to_vec(),
            missing_fixed_bits: d.missing_fixed[..n].to_vec(),
            source: layout.source,
        }
    }
}

/// A layout's fixed bits, per word, with their tag.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FixedBits {
    /// Per word: the bits every encoding sets.
    pub words: Vec<u32>,
    /// How far they can be trusted.
    #[serde(serialize_with = "ser::tag")]
    pub tag: Tag,
}

/// What [`decode`] read: `cce decode`'s object, one of three shapes by what was decoded.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Decoded {
    /// Words as one encoder's layout.
    Layout(LayoutDecoded),
    /// One word as every meta-control encoder that produces it exactly (`meta-ctrl`).
    MetaCtrl(MetaCtrlDecoded),
    /// The 140-byte `cce_info` struct (`cce-info`).
    CceInfo(CceInfoDecoded),
}

/// Words decoded as one encoder's layout (JSON: `encoder`, `words`, `bytes_hex`, `words_hex`,
/// then the reading's keys).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LayoutDecoded {
    /// The encoder's name.
    pub encoder: &'static str,
    /// The words.
    pub words: Vec<u32>,
    /// Their little-endian bytes as hex.
    pub bytes_hex: String,
    /// Each word as `0x%08x`.
    pub words_hex: Vec<String>,
    /// What they say as the layout.
    #[serde(flatten)]
    pub reading: Reading,
}

/// One meta-control word read as every encoder whose exact encoding it is.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MetaCtrlDecoded {
    /// Always `meta-ctrl`.
    pub encoder: &'static str,
    /// The word (a one-word `words` list in the JSON).
    #[serde(rename = "words", serialize_with = "ser::one_word")]
    pub word: u32,
    /// Its little-endian bytes as hex.
    pub bytes_hex: String,
    /// Whether more than one encoder produces it.
    pub ambiguous: bool,
    /// Each encoder that produces it, in the CLI's order.
    pub readings: Vec<MetaCtrlReading>,
    /// What the readings are (or that there are none).
    pub note: &'static str,
}

/// A meta-control word read as one encoder (JSON: `encoder`, `tag`, then the reading's keys).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MetaCtrlReading {
    /// The encoder's name.
    pub encoder: &'static str,
    /// How far attributing the word to this encoder can be trusted: the encoder's fixed bits'
    /// tag, LOW when several encoders fit.
    #[serde(serialize_with = "ser::tag")]
    pub tag: Tag,
    /// The word as its layout.
    #[serde(flatten)]
    pub reading: Reading,
}

/// The `cce_info` struct decoded.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CceInfoDecoded {
    /// Always `cce-info`.
    pub encoder: &'static str,
    /// The struct's size in bytes (140).
    pub bytes: usize,
    /// `num_sources`.
    pub num_sources: u32,
    /// `num_dests`.
    pub num_dests: u32,
    /// The FMA arm of the union.
    pub fma_info: FmaInfo,
    /// The MIN/MAX arm of the union (it aliases the FMA arm).
    pub min_max_info: MinMaxInfo,
    /// How far the layout can be trusted.
    #[serde(serialize_with = "ser::tag")]
    pub tag: Tag,
    /// How the union's arms alias.
    pub note: &'static str,
}

/// `cce_info.fma_info`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FmaInfo {
    /// The scale dtype as the struct holds it (a kbin dtype).
    pub scale_dtype: u32,
    /// That kbin dtype remapped to its SDMA dtype's name, or why it does not remap.
    pub scale_dtype_sdma: String,
    /// The scales, as binary32 values widened exactly (NaN and infinities are written as
    /// text in the JSON).
    #[serde(serialize_with = "ser::floats")]
    pub scale: Vec<f64>,
}

/// `cce_info.min_max_info`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MinMaxInfo {
    /// Whether the constant is used.
    pub use_constant: bool,
    /// The constant's dtype as the struct holds it (a kbin dtype).
    pub constant_dtype: u32,
    /// That kbin dtype remapped to its SDMA dtype's name, or why it does not remap.
    pub constant_dtype_sdma: String,
    /// The constant's bits.
    pub constant: u32,
}

/// The decoders [`decode`] takes that are not encoders: every reading of a meta-control word,
/// and the 140-byte `cce_info` struct.
pub const DECODERS_BEYOND_ENCODERS: [&str; 2] = ["meta-ctrl", "cce-info"];

/// Every name [`decode`] takes: [`DECODERS_BEYOND_ENCODERS`], then every encoder's.
pub fn decoder_names() -> Vec<&'static str> {
    DECODERS_BEYOND_ENCODERS.into_iter().chain(encoders().map(|e| e.name)).collect()
}

/// Decodes hex bytes (little-endian, as `bytes_hex`; spaces, `_` and `:` ignored; a one-word
/// layout also takes a `0x` number) as `encoder`'s output, or as `meta-ctrl` (every encoder a
/// word can come from) or `cce-info` (the 140-byte struct): what `cce decode` prints.
pub fn decode(encoder: &str, hex: &str) -> Result<Decoded, ApiError> {
    match encoder {
        "meta-ctrl" => Ok(Decoded::MetaCtrl(decode_meta_ctrl(parse_words(hex, 1)?[0]))),
        "cce-info" => decode_cce_info(&values::parse_hex_bytes(hex, CCE_INFO_BYTES).map_err(ApiError::Input)?),
        name => {
            let layout = find_layout(name)?;
            Ok(Decoded::Layout(decode_layout(layout, &parse_words(hex, layout.words as usize)?)))
        }
    }
}

/// Decodes words (`cce-info`: the struct's 35 little-endian words) as [`decode`] does.
pub fn decode_words(encoder: &str, words: &[u32]) -> Result<Decoded, ApiError> {
    let want = match encoder {
        "meta-ctrl" => 1,
        "cce-info" => CCE_INFO_BYTES / 4,
        name => find_layout(name)?.words as usize,
    };
    if words.len() != want {
        return Err(ApiError::Input(format!("{encoder} takes {want} words, got {}", words.len())));
    }
    match encoder {
        "meta-ctrl" => Ok(Decoded::MetaCtrl(decode_meta_ctrl(words[0]))),
        "cce-info" => decode_cce_info(&values::words_le(words)),
        name => Ok(Decoded::Layout(decode_layout(find_layout(name)?, words))),
    }
}

/// A layout's words with every field.
fn decode_layout(layout: &'static Layout, words: &[u32]) -> LayoutDecoded {
    LayoutDecoded {
        encoder: layout.name,
        words: words.to_vec(),
        bytes_hex: values::to_hex(&values::words_le(words)),
        words_hex: words_hex(words),
        reading: Reading::of(layout, words),
    }
}

/// Hex bytes for `n` words; one word may also be given as a 0x-number.
fn parse_words(hex: &str, n: usize) -> Result<Vec<u32>, ApiError> {
    if n == 1 && (hex.starts_with("0x") || hex.starts_with("0X")) {
        return Ok(vec![values::parse_max(hex, u32::MAX as u64, 32).map_err(ApiError::Input)? as u32]);
    }
    let bytes = values::parse_hex_bytes(hex, 4 * n).map_err(ApiError::Input)?;
    Ok(bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
}

fn decode_meta_ctrl(word: u32) -> MetaCtrlDecoded {
    let readings = meta_ctrl::readings(word);
    let ambiguous = readings.len() > 1;
    let list: Vec<MetaCtrlReading> = readings
        .iter()
        .map(|r| {
            let layout = r.layout();
            // Attributing a word to one of several encoders that fit it is a guess.
            let tag = if ambiguous { Tag::Low } else { layout.fixed_tag };
            MetaCtrlReading { encoder: layout.name, tag, reading: Reading::of(layout, &[word]) }
        })
        .collect();
    MetaCtrlDecoded {
        encoder: "meta-ctrl",
        word,
        bytes_hex: values::to_hex(&word.to_le_bytes()),
        ambiguous,
        note: if list.is_empty() {
            "no CCE meta-control encoder produces this word"
        } else {
            "every encoder whose exact encoding this word is; ADD and MIN/MAX share 0x2000000 and MIN/MAX const-dt sits on the op-type bits [22:20] (GAPS.md §5)"
        },
        readings: list,
    }
}

fn decode_cce_info(bytes: &[u8]) -> Result<Decoded, ApiError> {
    let info = CceInfo::from_bytes(bytes)?;
    let remap = |d: u32| dtype::kbin_dtype_to_sdma_dtype(d).map_or_else(|e| e.to_string(), |s| s.name().to_string());
    Ok(Decoded::CceInfo(CceInfoDecoded {
        encoder: "cce-info",
        bytes: CCE_INFO_BYTES,
        num_sources: info.num_sources(),
        num_dests: info.num_dests(),
        fma_info: FmaInfo {
            scale_dtype: info.scale_dtype(),
            scale_dtype_sdma: remap(info.scale_dtype()),
            scale: (0..MAX_SCALES).map(|i| info.scale(i).unwrap_or(0.0) as f64).collect(),
        },
        min_max_info: MinMaxInfo {
            use_constant: info.use_constant(),
            constant_dtype: info.constant_dtype(),
            constant_dtype_sdma: remap(info.constant_dtype()),
            constant: info.constant(),
        },
        tag: Tag::High,
        note: "the union arms alias: min_max_info.constant_dtype is fma_info.scale[0], constant is scale[1] (study §2.1)",
    }))
}

/// The op, dtype and arch tables with their tags: what `cce tables` prints.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Tables {
    /// kbin op → SDMA CCE op (`CSWTCH.21`).
    pub ops: Vec<OpRemapRow>,
    /// The kbin ops.
    pub kbin_ops: Vec<KbinOpRow>,
    /// The SDMA CCE ops.
    pub sdma_ops: Vec<SdmaOpRow>,
    /// The SDMA dtypes.
    pub dtypes: Vec<DtypeRow>,
    /// kbin dtype → SDMA dtype (`CSWTCH.19`).
    pub kbin_dtypes: Vec<KbinDtypeRow>,
    /// The known archs.
    pub archs: Vec<ArchRow>,
    /// The per-priority-class packet caps.
    pub prio_caps: PrioCapsRow,
    /// Most sources one reduce takes.
    pub max_sources: usize,
    /// The FMA operand selectors' values.
    pub fma_operands: Vec<FmaOperandRow>,
    /// The FMA selectors a descriptor gets when none are given.
    pub fma_default_selectors: FmaSelectorsRow,
    /// The runtime's reduction topologies (`enc_primitive::reduction_type_t`, study §8) and
    /// the algorithm each is.
    pub reduction_types: Vec<ReductionTypeRow>,
    /// The compiler collective's codes that lower to `SDMA_CCETYPE_ADD` reduce packets
    /// (`PSEUDO_TRIGGER_COLLECTIVE`, study §8).
    pub collective_codes: Vec<CollectiveCodeRow>,
}

/// One `reduction_type_t` value and the algorithm that has its topology.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ReductionTypeRow {
    /// Its value.
    pub value: u32,
    /// Its name as the runtime spells it.
    pub name: &'static str,
    /// The all-reduce algorithm (`cce allreduce --algo`) with this topology.
    pub algorithm: &'static str,
    /// How far the row can be trusted.
    #[serde(serialize_with = "ser::tag")]
    pub tag: Tag,
}

/// One compiler collective code and the SDMA value it lowers to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CollectiveCodeRow {
    /// The instruction's field: `op` or `dtype`.
    pub field: &'static str,
    /// The code's name.
    pub name: &'static str,
    /// Its value.
    pub value: u32,
    /// The SDMA CCE op (for `op`) or SDMA dtype (for `dtype`) the reduce packets get.
    pub sdma: u32,
    /// Its name.
    pub sdma_name: &'static str,
    /// How far the row can be trusted.
    #[serde(serialize_with = "ser::tag")]
    pub tag: Tag,
}

/// One kbin op and the SDMA CCE op it remaps to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct OpRemapRow {
    /// The kbin op's value.
    pub kbin: u64,
    /// Its name, if the value names an op.
    pub kbin_name: Option<&'static str>,
    /// The SDMA CCE op's value, if it remaps.
    pub sdma: Option<u32>,
    /// Its name.
    pub sdma_name: Option<&'static str>,
    /// How far the row can be trusted.
    #[serde(serialize_with = "ser::tag")]
    pub tag: Tag,
}

/// One kbin op.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct KbinOpRow {
    /// Its value.
    pub value: u64,
    /// Its name.
    pub name: &'static str,
    /// Whether it remaps to an SDMA CCE op.
    pub cce: bool,
    /// How far the row can be trusted.
    #[serde(serialize_with = "ser::tag")]
    pub tag: Tag,
}

/// One SDMA CCE op.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SdmaOpRow {
    /// Its value.
    pub value: u32,
    /// Its name.
    pub name: &'static str,
    /// Whether a kbin op remaps to it.
    pub kbin_op: bool,
    /// How far the row can be trusted.
    #[serde(serialize_with = "ser::tag")]
    pub tag: Tag,
}

/// One SDMA dtype.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DtypeRow {
    /// Its SDMA value.
    pub sdma: u32,
    /// Its name.
    pub name: &'static str,
    /// Bytes per element.
    pub bytes: u8,
    /// Bytes per element as the kbin side counts them.
    pub kbin_bytes: u8,
    /// How far the dtype's value and name can be trusted.
    #[serde(serialize_with = "ser::tag")]
    pub tag: Tag,
    /// How far its sizes can be trusted.
    #[serde(serialize_with = "ser::tag")]
    pub bytes_tag: Tag,
}

/// One kbin dtype and the SDMA dtype it remaps to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct KbinDtypeRow {
    /// The kbin dtype's value.
    pub kbin: u32,
    /// The SDMA dtype's value.
    pub sdma: u32,
    /// The SDMA dtype's name.
    pub name: &'static str,
    /// How far the row can be trusted.
    #[serde(serialize_with = "ser::tag")]
    pub tag: Tag,
}

/// One known arch.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ArchRow {
    /// The arch number.
    pub arch: u32,
    /// Most elements one CCE transfer takes, if it has CCE.
    pub max_cce_elements: Option<u32>,
    /// Whether replication is allowed.
    pub replication: bool,
    /// How far the row can be trusted.
    #[serde(serialize_with = "ser::tag")]
    pub tag: Tag,
}

/// The per-priority-class packet caps.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PrioCapsRow {
    /// Per class, the cap in bytes (0 = none).
    pub bytes: [u32; PRIORITY_CLASSES],
    /// How far they can be trusted (MODEL: the runtime's defaults are unknown).
    #[serde(serialize_with = "ser::tag")]
    pub tag: Tag,
}

/// One FMA operand selector value.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FmaOperandRow {
    /// The 2-bit value.
    pub value: u32,
    /// The operand's name.
    pub name: &'static str,
    /// How far the row can be trusted.
    #[serde(serialize_with = "ser::tag")]
    pub tag: Tag,
}

/// The FMA selectors `a`, `b`, `c` by operand name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FmaSelectorsRow {
    /// Selector `a`.
    pub a: &'static str,
    /// Selector `b`.
    pub b: &'static str,
    /// Selector `c`.
    pub c: &'static str,
    /// How far they can be trusted.
    #[serde(serialize_with = "ser::tag")]
    pub tag: Tag,
}

/// The op, dtype and arch tables with their tags.
pub fn tables() -> Tables {
    let ops = (1..=CSWTCH_21.len() as u64)
        .map(|kbin| {
            let sdma = op::kbin_cce_op_to_sdma_cce_op(kbin).map(|s| s.value()).ok();
            OpRemapRow {
                kbin,
                kbin_name: KbinOp::from_value(kbin).map(KbinOp::name),
                sdma,
                sdma_name: sdma.and_then(|v| SdmaCceType::from_value(v as u64)).map(SdmaCceType::name),
                tag: Tag::High,
            }
        })
        .collect();
    let kbin_ops = KbinOp::ALL
        .iter()
        .map(|o| KbinOpRow {
            value: o.value(),
            name: o.name(),
            cce: op::kbin_cce_op_to_sdma_cce_op(o.value()).is_ok(),
            tag: Tag::High,
        })
        .collect();
    let sdma_ops = SdmaCceType::ALL
        .iter()
        .map(|o| SdmaOpRow { value: o.value(), name: o.name(), kbin_op: o.has_kbin_op(), tag: Tag::High })
        .collect();
    let dtypes = SDMA_DTYPES
        .iter()
        .map(|r| DtypeRow {
            sdma: r.dtype.value(),
            name: r.name,
            bytes: r.bytes,
            kbin_bytes: r.kbin_bytes,
            tag: r.tag,
            bytes_tag: r.bytes_tag,
        })
        .collect();
    let kbin_dtypes = KBIN_DTYPE_REMAP
        .iter()
        .map(|r| KbinDtypeRow { kbin: r.kbin.value(), sdma: r.sdma.value(), name: r.sdma.name(), tag: r.tag })
        .collect();
    let archs = limits::KNOWN_ARCHS
        .iter()
        .map(|&arch| ArchRow {
            arch,
            max_cce_elements: limits::max_cce_elements(arch).ok(),
            replication: limits::replication_allowed(arch),
            tag: Tag::High,
        })
        .collect();
    let [a, b, c] = DEFAULT_FMA_SELECTORS.map(FmaOperand::name);
    Tables {
        ops,
        kbin_ops,
        sdma_ops,
        dtypes,
        kbin_dtypes,
        archs,
        prio_caps: PrioCapsRow { bytes: PrioCaps::default().0, tag: Tag::Model },
        max_sources: limits::MAX_SOURCES,
        fma_operands: [FmaOperand::Stored, FmaOperand::Input, FmaOperand::Scale]
            .map(|o| FmaOperandRow { value: o.bits(), name: o.name(), tag: Tag::High })
            .to_vec(),
        fma_default_selectors: FmaSelectorsRow { a, b, c, tag: Tag::High },
        reduction_types: ReductionType::ALL
            .iter()
            .map(|t| ReductionTypeRow { value: t.value(), name: t.name(), algorithm: t.algorithm(), tag: t.tag() })
            .collect(),
        collective_codes: PSEUDO_TRIGGER_COLLECTIVE
            .iter()
            .map(|c| {
                let (sdma, sdma_name) = match c.lowers_to {
                    LowersTo::Op(op) => (op.value(), op.name()),
                    LowersTo::Dtype(dtype) => (dtype.value(), dtype.name()),
                };
                CollectiveCodeRow { field: c.field, name: c.name, value: c.value, sdma, sdma_name, tag: c.tag }
            })
            .collect(),
    }
}

/// The size of a CCE reduce packet (`cce packet-size`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct PacketSize {
    /// Bytes.
    pub bytes: u64,
}

/// The CCE reduce packet size of study §7.1 for `elems` elements of `dtype` in priority
/// class `prio`, with that class's cap `cap` bytes (0 = none; the MODEL default when `None`).
pub fn packet_size(dtype: SdmaDtype, elems: u64, prio: u64, cap: Option<u64>) -> Result<PacketSize, ApiError> {
    let prio = u32::try_from(prio).unwrap_or(u32::MAX);
    let caps = match cap {
        Some(cap) => {
            let cap = values::fit(cap, u32::MAX as u64, 32).map_err(|why| invalid_value("`cap`", cap, &why))?;
            PrioCaps::default().with_cap(prio, cap as u32)
        }
        None => PrioCaps::default(),
    };
    Ok(PacketSize { bytes: limits::reduce_packet_size(dtype, elems, prio, &caps)? })
}

/// Whether an in/out dtype pair passes the NC-v1 gate (`cce dtype-gate`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct DtypeGate {
    /// Whether the pair is valid.
    pub valid: bool,
}

/// The NC-v1 in/out dtype validity gate of study §7.2 (`compute`: the transfer has a compute
/// op; a plain copy is always valid).
pub fn dtype_gate(in_dt: SdmaDtype, out_dt: SdmaDtype, compute: bool) -> DtypeGate {
    DtypeGate { valid: limits::dtype_gate_nc_v1(compute, in_dt.value(), out_dt.value()) }
}
