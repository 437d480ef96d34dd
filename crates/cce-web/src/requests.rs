//! The page's requests: a JSON object in, the CLI's JSON object out. This module parses the
//! request's keys (the page's spelling of the CLI's flags: the flag without its dashes, so
//! `--a-sel` is `"a-sel"` and `--ranks-per-node` is `"ranks-per-node"`) and calls the library;
//! the library computes and renders.

use cce_api::collective::{AllreduceParams, StoryInputs};
use cce_api::params::{AlgoChoice, Compress};
use serde_json::{Map, Value, json};

use crate::budget;

/// The functions a request may name in its `fn` key.
pub const FUNCTIONS: [&str; 8] = ["names", "encoders", "tables", "decode", "encode", "disasm", "value", "element"];

/// The largest request taken (a ring dump of 32 MiB as hex); a longer one is refused before it
/// is parsed.
pub const MAX_REQUEST_BYTES: usize = 64 << 20;

type Answer = Result<Value, String>;

/// The answer to one request, or the refusal's message.
pub(crate) fn answer(request: &str) -> Answer {
    if request.len() > MAX_REQUEST_BYTES {
        return Err(format!("a request of {} bytes: at most {MAX_REQUEST_BYTES} are taken", request.len()));
    }
    let v: Value = serde_json::from_str(request).map_err(|e| format!("the request is not JSON: {e}"))?;
    let Value::Object(req) = v else { return Err("the request is not a JSON object".into()) };
    let req = Request(req);
    match req.text("fn")?.as_str() {
        "names" => Ok(names()),
        "encoders" => Ok(encoders()),
        "tables" => Ok(to_value(&cce_api::tables())),
        "decode" => decode(&req),
        "encode" => encode(&req),
        "disasm" => disasm(&req),
        "value" => value(&req),
        "element" => element(&req),
        other => Err(format!("unknown `fn` '{other}' (expected one of: {})", FUNCTIONS.join(", "))),
    }
}

fn to_value<T: serde::Serialize>(v: &T) -> Value {
    // A typed result's keys are strings: it always serialises.
    serde_json::to_value(v).unwrap_or(Value::Null)
}

fn api(e: cce_api::ApiError) -> String {
    e.to_string()
}

/// A request's keys, read with their names in messages.
struct Request(Map<String, Value>);

impl Request {
    fn get(&self, key: &str) -> Option<&Value> {
        self.0.get(key).filter(|v| !v.is_null())
    }

    /// A string (or a number, written as JSON writes it) under `key`.
    fn opt_text(&self, key: &str) -> Result<Option<String>, String> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(Value::Number(n)) => Ok(Some(n.to_string())),
            Some(Value::Bool(b)) => Ok(Some(u8::from(*b).to_string())),
            Some(other) => Err(format!("`{key}` must be a string or a number, not {other}")),
        }
    }

    fn text(&self, key: &str) -> Result<String, String> {
        self.opt_text(key)?.ok_or_else(|| format!("missing `{key}`"))
    }

    fn opt_u64(&self, key: &str) -> Result<Option<u64>, String> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Number(n)) => {
                n.as_u64().map(Some).ok_or_else(|| format!("`{key}` must be an integer ≥ 0, not {n}"))
            }
            Some(Value::String(s)) => cce_api::values::parse_u64(s).map(Some).map_err(|e| format!("`{key}` {e}")),
            Some(other) => Err(format!("`{key}` must be an integer ≥ 0, not {other}")),
        }
    }

    fn u64_or(&self, key: &str, default: u64) -> Result<u64, String> {
        Ok(self.opt_u64(key)?.unwrap_or(default))
    }

    fn flag(&self, key: &str) -> Result<bool, String> {
        match self.get(key) {
            None => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(other) => Err(format!("`{key}` must be true or false, not {other}")),
        }
    }

    /// A name parsed by its type's `FromStr` (algorithms, ops, roundings, …).
    fn named<T: std::str::FromStr>(&self, key: &str, default: &str) -> Result<T, String>
    where
        T::Err: std::fmt::Display,
    {
        let text = self.opt_text(key)?.unwrap_or_else(|| default.to_string());
        text.parse().map_err(|e| format!("`{key}` {e}"))
    }
}

/// The names the page's menus offer: the algorithms `element` takes (the flat ones, `hier` with
/// its default ring/ring, `auto`), the ops, the roundings, the SDMA dtypes (with their sizes;
/// `element` takes those of a size) and every dtype `value` takes (`cce value --dtype`'s, with
/// their sizes: fp8e4fn and the integers beyond the SDMA's among them).
fn names() -> Value {
    let algos: Vec<&str> = cce_api::params::Algo::ALL.iter().map(|a| a.name()).chain(["hier", "auto"]).collect();
    let dtypes: Vec<Value> =
        cce_api::SdmaDtype::ALL.iter().skip(1).map(|d| json!({ "name": d.name(), "bytes": d.bytes() })).collect();
    let value_dtypes: Vec<Value> =
        cce_api::NumType::ALL.iter().map(|t| json!({ "name": t.name(), "bytes": t.size() })).collect();
    let ops: Vec<&str> = cce_api::params::RedOp::ALL.iter().map(|o| o.name()).collect();
    json!({
        "algos": algos,
        "ops": ops,
        "roundings": ["rne", "sr"],
        "dtypes": dtypes,
        "value_dtypes": value_dtypes,
    })
}

/// Every encoder with its fields (what the page builds its forms from) and every name `decode`
/// takes.
fn encoders() -> Value {
    let encoders: Vec<Value> = cce_api::encoders()
        .map(|e| {
            let fields: Vec<Value> = e
                .fields()
                .into_iter()
                .map(|f| {
                    let mut v = json!({
                        "name": f.name, "bits": f.bits, "tag": f.tag.to_string(), "note": f.note,
                        "value": f.value.value_name(),
                    });
                    if let cce_api::ValueKind::Uint { max, .. } = f.value {
                        v["max"] = json!(max);
                    }
                    v
                })
                .collect();
            json!({ "name": e.name, "source": e.source, "words": e.words, "fields": fields })
        })
        .collect();
    let decoders = cce_api::decoder_names();
    json!({ "encoders": encoders, "decoders": decoders })
}

fn decode(req: &Request) -> Answer {
    let decoded = cce_api::decode(&req.text("encoder")?, &req.text("hex")?).map_err(api)?;
    Ok(to_value(&decoded))
}

/// `cce encode`: the fields keyed by their flag names, each value a string or a number.
fn encode(req: &Request) -> Answer {
    let encoder = cce_api::encoder(&req.text("encoder")?).map_err(api)?;
    let infos = encoder.fields();
    let given = match req.get("fields") {
        None => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(other) => return Err(format!("`fields` must be an object of field names, not {other}")),
    };
    let fields = Request(given);
    let mut values: Vec<(&str, u64)> = Vec::new();
    for name in fields.0.keys() {
        let Some(info) = infos.iter().find(|f| f.name == name) else {
            let known: Vec<&str> = infos.iter().map(|f| f.name).collect();
            return Err(format!("{} has no field `{name}` (its fields: {})", encoder.name, known.join(", ")));
        };
        let text = fields.text(name)?;
        values.push((info.name, info.parse(&text).map_err(|e| format!("`{name}` {e}"))?));
    }
    Ok(to_value(&cce_api::encode_values(encoder.name, &values).map_err(api)?))
}

/// `cce disasm`: a ring dump (any version the CLI reads), as hex. The answer is the object
/// `cce disasm --json` prints; with `"text": true`, `{"text": …}` holding the listing `cce disasm`
/// prints (the same render, [`cce_api::Listing::to_text`]).
fn disasm(req: &Request) -> Answer {
    let bytes = cce_api::values::parse_hex(&req.text("hex")?).map_err(|e| format!("`hex`: {e}"))?;
    let bytes = cce_api::ringfile::upgrade(&bytes).map_err(|e| format!("the ring dump: {e}"))?;
    let file = cce_api::ringfile::RingFile::parse(&bytes).map_err(|e| format!("the ring dump: {e}"))?;
    let listing = cce_api::Listing::of(&file);
    Ok(if req.flag("text")? { json!({ "text": listing.to_text() }) } else { listing.to_json() })
}

/// `cce value`: one value (or bit pattern) in one dtype.
fn value(req: &Request) -> Answer {
    let v = cce_api::dtype_value(&req.text("dtype")?, &req.text("value")?, req.flag("saturate")?).map_err(api)?;
    Ok(v.to_json())
}

/// `cce allreduce --element`: one element's story. Its parameters are `cce allreduce`'s; the
/// inputs are generated from `seed` as the CLI generates them, or typed: `values` holds each
/// rank's value of the element (a decimal, or `0x` bits), every other element being zero.
/// `orders`: `whole` (the CLI's object, every order whole) or `short` (an order over 16 leaves
/// as the CLI's text shows it, [`cce_api::collective::ElementStory::to_json_short`]). Checked
/// against the page's budget ([`crate::budget`]) before each part that takes memory is made:
/// `auto`'s model, typed arrays, the answer.
fn element(req: &Request) -> Answer {
    let algo: AlgoChoice = req.named("algo", "ring")?;
    let params = AllreduceParams {
        accum: req.opt_text("accum")?.map(|a| cce_api::dtype(&a)).transpose().map_err(api)?,
        seed: req.u64_or("seed", 1)?,
        arch: req.u64_or("arch", 3)?,
        rounding: req.named("rounding", "rne")?,
        collective: req
            .opt_text("collective")?
            .map(|c| c.parse().map_err(|e| format!("`collective` {e}")))
            .transpose()?,
        compress: req
            .opt_text("compress")?
            .map(|c| c.parse().map_err(|e| format!("`compress` {e}")))
            .transpose()?
            .unwrap_or(Compress::None),
        ranks_per_node: req.opt_u64("ranks-per-node")?,
        ..AllreduceParams::new(
            req.u64_or("ranks", 0)?,
            algo,
            req.named("op", "add")?,
            cce_api::dtype(&req.text("dtype")?).map_err(api)?,
        )
    };
    let elems = req.opt_u64("elems")?.ok_or("missing `elems`")?;
    let index = req.u64_or("element", 0)?;
    let rank = req.opt_u64("rank")?;
    let short = match req.opt_text("orders")?.as_deref() {
        None | Some("whole") => false,
        Some("short") => true,
        Some(other) => return Err(format!("`orders` '{other}': expected whole or short")),
    };
    let shape = format!("{} ranks x {elems} {} elements", params.ranks, params.dtype.name());
    if let Some(need) = params.is_auto().then(|| budget::auto_need(&params, elems)).flatten() {
        let what =
            format!("{shape}: `algo` auto's model of every algorithm (the flat ring's schedule the largest) needs");
        budget::check(
            &what,
            need,
            "name an algorithm, or let the command line's explain of auto choose (it has no page budget)",
        )?;
    }
    let story = match req.get("values") {
        None => params.element_story(elems, index, rank, StoryInputs::Generated { seed: params.seed }),
        Some(values) => {
            let arrays = typed_arrays(&params, elems, index, values)?;
            let views: Vec<&[u8]> = arrays.iter().map(Vec::as_slice).collect();
            params.element_story(elems, index, rank, StoryInputs::Arrays(&views))
        }
    }
    .map_err(api)?;
    let bytes = budget::story_answer_bytes(&story, short);
    let what = format!(
        "{shape}: the story's answer ({bytes} bytes of JSON{}, held {} times over) needs",
        if short { "" } else { " with every order whole" },
        budget::ANSWER_COPIES
    );
    let instead = if short {
        "give fewer ranks"
    } else {
        "ask for `orders` short (an order over 16 leaves as its leaf count, as the CLI's text and the page's view show it), or fewer ranks"
    };
    budget::check(&what, bytes.saturating_mul(budget::ANSWER_COPIES), instead)?;
    Ok(if short { story.to_json_short() } else { story.to_json() })
}

/// One array per rank: zero but for element `index`, which holds that rank's typed value.
fn typed_arrays(params: &AllreduceParams, elems: u64, index: u64, values: &Value) -> Result<Vec<Vec<u8>>, String> {
    let Value::Array(values) = values else { return Err("`values` must be a list of one value per rank".into()) };
    if values.len() as u64 != params.ranks {
        return Err(format!("`values` has {} values for {} ranks: give one per rank", values.len(), params.ranks));
    }
    if index >= elems {
        return Err(format!("`element` {index} is past the {elems} elements of each rank"));
    }
    let t = cce_api::num_type(params.dtype.name()).map_err(api)?;
    let size = t.size() as u64;
    let total = elems.saturating_mul(size).saturating_mul(params.ranks);
    let what =
        format!("typed values for {} ranks x {elems} {} elements (one array per rank) need", params.ranks, t.name());
    budget::check(&what, total, "give fewer `elems` (generated values take any size)")?;
    values
        .iter()
        .enumerate()
        .map(|(r, v)| {
            let text = match v {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                other => return Err(format!("`values` [{r}] must be a string or a number, not {other}")),
            };
            let bits = cce_api::value_bits(t, &text).map_err(|e| format!("`values` [{r}]: {e}"))?;
            let mut a = vec![0u8; (elems * size) as usize];
            let at = (index * size) as usize;
            a[at..at + size as usize].copy_from_slice(&bits.to_le_bytes()[..size as usize]);
            Ok(a)
        })
        .collect()
}
