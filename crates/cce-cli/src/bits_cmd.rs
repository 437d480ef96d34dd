//! `cce encode`, `decode`, `tables`, `packet-size`, `dtype-gate`: the bits, as the JSON object
//! `--json` prints (the text form is rendered from it by [`crate::bits_text`]).

use cce_format::cce_info::{CCE_INFO_BYTES, CceInfo, MAX_SCALES};
use cce_format::codec;
use cce_format::dtype::{self, KBIN_DTYPE_REMAP, SDMA_DTYPES};
use cce_format::layout::{FieldDef, FieldKind, Layout};
use cce_format::limits::{self, PrioCaps};
use cce_format::meta_ctrl;
use cce_format::op::{self, CSWTCH_21};
use cce_format::{KbinOp, SdmaCceType, Tag};
use clap::{Arg, ArgAction, Command};
use serde_json::{Map, Value, json};

use crate::args::{DecodeArgs, DtypeGateArgs, EncodeArgs, PacketSizeArgs};
use crate::error::CliError;
use crate::render::field_json;
use crate::values;

fn find_layout(name: &str) -> Result<&'static Layout, CliError> {
    codec::layouts().find(|l| l.name == name).ok_or_else(|| {
        let names: Vec<_> = codec::layouts().map(|l| l.name).collect();
        CliError::Input(format!("unknown encoder '{name}' (expected one of: {})", names.join(" ")))
    })
}

/// The value parser and help of one field, from its table entry.
fn field_arg(f: &'static FieldDef, words: u8) -> Arg {
    let help = format!("{} [{}] {}", f.location(words), f.tag, f.note);
    let arg = Arg::new(f.name).long(f.name).action(ArgAction::Set).help(help);
    match f.kind {
        FieldKind::Dtype => arg.value_name("DTYPE").value_parser(|s: &str| values::parse_dtype(s, 16)),
        FieldKind::Dtype3 => arg.value_name("DTYPE").value_parser(|s: &str| values::parse_dtype(s, 8)),
        FieldKind::F32Bits => arg.value_name("FLOAT").allow_negative_numbers(true).value_parser(parse_f32_bits),
        FieldKind::Selector => arg.value_name("SEL").value_parser(parse_selector),
        _ => {
            let (max, bits) = (f.input_max(), if f.input_max() == 1 { 1 } else { f.span.width as u32 });
            arg.value_name("N").value_parser(move |s: &str| values::parse_max(s, max, bits))
        }
    }
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

/// The encoded words and whether `--json` was given (it sits among the encoder's fields).
pub(crate) fn encode(a: &EncodeArgs) -> Result<(Value, bool), CliError> {
    if matches!(a.encoder.as_str(), "-h" | "--help" | "help") {
        let mut cmd = codec::layouts().fold(
            Command::new("cce encode").about("Encode a meta-control word or a 16-byte descriptor from its fields"),
            |c, l| c.subcommand(Command::new(l.name).about(l.source)),
        );
        return Err(CliError::Help(cmd.render_help().to_string()));
    }
    let layout = find_layout(&a.encoder)?;
    let cmd = layout.fields.iter().filter(|f| f.is_input()).fold(
        Command::new(layout.name)
            .no_binary_name(true)
            .bin_name(format!("cce encode {}", layout.name))
            .about(layout.source)
            .arg(Arg::new("json").long("json").action(ArgAction::SetTrue).help("One JSON object instead of text")),
        |c, f| c.arg(field_arg(f, layout.words)),
    );
    let m = cmd.try_get_matches_from(&a.fields).map_err(CliError::Clap)?;
    let given: Vec<(&str, u64)> = layout
        .fields
        .iter()
        .filter(|f| f.is_input())
        .filter_map(|f| m.get_one::<u64>(f.name).map(|v| (f.name, *v)))
        .collect();
    let words = codec::encode(layout, &given[..])?;
    let v = json!({
        "encoder": layout.name,
        "words": words,
        "bytes_hex": values::to_hex(&values::words_le(&words)),
        "words_hex": words_hex(&words),
    });
    Ok((v, m.get_flag("json")))
}

fn words_hex(words: &[u32]) -> Vec<String> {
    words.iter().map(|w| format!("0x{w:08x}")).collect()
}

fn fields_json(layout: &Layout, words: &[u32]) -> Value {
    let d = codec::decode(layout, words);
    let fields: Map<String, Value> =
        d.fields.iter().map(|fv| (fv.def.name.to_string(), field_json(&fv.def, fv.value, layout.words))).collect();
    json!({
        "fields": fields,
        "fixed": { "words": &layout.fixed[..layout.words as usize], "tag": layout.fixed_tag.as_str() },
        "exact": d.exact.is_ok(),
        "problem": d.exact.err().map(|e| e.to_string()),
        "unexplained_bits": &d.unexplained[..layout.words as usize],
        "missing_fixed_bits": &d.missing_fixed[..layout.words as usize],
        "source": layout.source,
    })
}

pub(crate) fn decode(a: &DecodeArgs) -> Result<Value, CliError> {
    let hex = a.hex.join("");
    match a.encoder.as_str() {
        "meta-ctrl" => decode_meta_ctrl(&hex),
        "cce-info" => decode_cce_info(&hex),
        name => {
            let layout = find_layout(name)?;
            let words = parse_words(&hex, layout.words as usize)?;
            let mut out = json!({
                "encoder": layout.name,
                "words": words,
                "bytes_hex": values::to_hex(&values::words_le(&words)),
                "words_hex": words_hex(&words),
            });
            merge(&mut out, fields_json(layout, &words));
            Ok(out)
        }
    }
}

/// Hex bytes for `n` words; one word may also be given as a 0x-number.
fn parse_words(hex: &str, n: usize) -> Result<Vec<u32>, CliError> {
    if n == 1 && (hex.starts_with("0x") || hex.starts_with("0X")) {
        return Ok(vec![values::parse_max(hex, u32::MAX as u64, 32).map_err(CliError::Input)? as u32]);
    }
    let bytes = values::parse_hex_bytes(hex, 4 * n).map_err(CliError::Input)?;
    Ok(bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
}

fn merge(into: &mut Value, from: Value) {
    if let (Value::Object(a), Value::Object(b)) = (into, from) {
        a.extend(b);
    }
}

fn decode_meta_ctrl(hex: &str) -> Result<Value, CliError> {
    let word = parse_words(hex, 1)?[0];
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
    Ok(json!({
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
    }))
}

fn decode_cce_info(hex: &str) -> Result<Value, CliError> {
    let bytes = values::parse_hex_bytes(hex, CCE_INFO_BYTES).map_err(CliError::Input)?;
    let info = CceInfo::from_bytes(&bytes)?;
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

pub(crate) fn tables() -> Value {
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

pub(crate) fn packet_size(a: &PacketSizeArgs) -> Result<Value, CliError> {
    let prio = u32::try_from(a.prio).unwrap_or(u32::MAX);
    let caps = match a.cap {
        Some(cap) => PrioCaps::default().with_cap(prio, cap as u32),
        None => PrioCaps::default(),
    };
    let bytes = limits::reduce_packet_size(a.dtype, a.elems, prio, &caps)?;
    Ok(json!({ "bytes": bytes }))
}

pub(crate) fn dtype_gate(a: &DtypeGateArgs) -> Value {
    json!({ "valid": limits::dtype_gate_nc_v1(!a.no_compute, a.in_dt.value(), a.out_dt.value()) })
}
