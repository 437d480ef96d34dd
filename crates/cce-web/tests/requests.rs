//! The page's one call, natively: malformed requests are refused with a message and never
//! panic; each refusal names what is wrong. (That the answers equal the CLI's `--json` is
//! checked in a real browser against the `cce` binary: tests/web/test_page.py.)

use proptest::prelude::*;
use serde_json::Value;

fn call(request: &str) -> Value {
    serde_json::from_str(&cce_web::call(request)).expect("every answer is JSON")
}

fn error(request: &str) -> String {
    let v = call(request);
    v["error"].as_str().unwrap_or_else(|| panic!("{request}: not refused: {v}")).to_string()
}

#[test]
fn refusals_name_what_is_wrong() {
    assert!(error("").contains("not JSON"));
    assert!(error("[1]").contains("not a JSON object"));
    assert!(error("{}").contains("missing `fn`"));
    assert!(error(r#"{"fn": "nope"}"#).contains("unknown `fn` 'nope'"));
    assert!(error(r#"{"fn": "decode", "encoder": "fma-meta-ctrl"}"#).contains("missing `hex`"));
    assert!(error(r#"{"fn": "encode", "encoder": "fma-descriptor", "fields": {"zz": 1}}"#).contains("no field `zz`"));
    assert!(error(r#"{"fn": "encode", "encoder": "fma-descriptor", "fields": {"scale": "x"}}"#).starts_with("`scale`"));
    assert!(error(r#"{"fn": "disasm", "hex": "abc"}"#).contains("3 digits, an odd number"));
    assert!(error(r#"{"fn": "disasm", "hex": "00 0z"}"#).contains("'z' at digit 3 is not 0-9 a-f"));
    let e = error(r#"{"fn": "element", "ranks": 4, "dtype": "bf16", "elems": 8, "values": ["1", "2"]}"#);
    assert!(e.contains("2 values for 4 ranks"), "{e}");
    let e = error(r#"{"fn": "element", "ranks": 2, "dtype": "bf16", "elems": 1000000000, "values": ["1", "2"]}"#);
    assert!(e.contains("over its budget") && e.contains("generated values take any size"), "{e}");
    assert!(
        error(r#"{"fn": "value", "dtype": "bf16", "value": "1", "saturate": 1}"#)
            .contains("`saturate` must be true or false")
    );
    assert!(
        error(r#"{"fn": "element", "ranks": -1, "dtype": "bf16", "elems": 8}"#).contains("`ranks` must be an integer")
    );
    assert!(
        error(r#"{"fn": "decode", "encoder": [1], "hex": "00"}"#).contains("`encoder` must be a string or a number")
    );
    assert!(
        error(r#"{"fn": "encode", "encoder": "fma-descriptor", "fields": [1]}"#).contains("`fields` must be an object")
    );
    let base = r#""fn": "element", "ranks": 2, "dtype": "bf16", "elems": 8"#;
    assert!(error(&format!("{{{base}, \"values\": 1}}")).contains("`values` must be a list"));
    assert!(error(&format!("{{{base}, \"values\": [true, 1]}}")).contains("`values` [0] must be a string or a number"));
    assert!(
        error(&format!("{{{base}, \"element\": 8, \"values\": [1, 2]}}"))
            .contains("`element` 8 is past the 8 elements")
    );
    let ok = call(&format!("{{{base}, \"element\": 7, \"values\": [\"1.5\", \"0x3f80\"]}}"));
    assert_eq!(ok["element"]["output"]["value"], 2.5, "{ok}");
    let too_long = format!(r#"{{"fn": "decode", "hex": "{}"}}"#, "0".repeat(cce_web::MAX_REQUEST_BYTES));
    assert!(error(&too_long).contains("at most"));
}

#[test]
fn every_function_answers() {
    for f in cce_web::FUNCTIONS {
        let v = call(&format!(r#"{{"fn": "{f}"}}"#));
        assert!(v.is_object(), "{f}: {v}");
    }
    let names = call(r#"{"fn": "names"}"#);
    assert!(names["algos"].as_array().unwrap().iter().any(|a| a == "ring"));
    assert!(names["dtypes"].as_array().unwrap().iter().any(|d| d["name"] == "bf16" && d["bytes"] == 2));
    // Every dtype `value` takes is on the list the Dtypes menu is filled from.
    let value_dtypes: Vec<&str> =
        names["value_dtypes"].as_array().unwrap().iter().map(|d| d["name"].as_str().unwrap()).collect();
    for t in cce_api::NumType::ALL {
        assert!(value_dtypes.contains(&t.name()), "{}", t.name());
        let v = call(&format!(r#"{{"fn": "value", "dtype": "{}", "value": "1"}}"#, t.name()));
        assert!(v.get("error").is_none(), "{}: {v}", t.name());
    }
    assert!(value_dtypes.contains(&"fp8e4fn"));
    let enc = call(r#"{"fn": "encode", "encoder": "fma-descriptor", "fields": {"a-sel": "input", "scale": 0.5}}"#);
    assert_eq!(enc["words_hex"][3], "0x3f000000");
    assert_eq!(enc["words_hex"][2], "0x01000000");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Any text, and any object with the known keys holding anything, gets a JSON answer.
    #[test]
    fn no_request_panics(text in ".{0,200}", f in 0usize..8, key in "[a-z-]{1,8}", value in ".{0,40}") {
        let _ = call(&text);
        let fname = cce_web::FUNCTIONS[f];
        for v in [serde_json::json!(value), serde_json::json!(-1), serde_json::json!(1e300), serde_json::json!([value]), serde_json::json!({ "k": 1 })] {
            let mut req = serde_json::json!({ "fn": fname, "encoder": "fma-descriptor", "dtype": "bf16", "ranks": 3, "elems": 4 });
            req[key.as_str()] = v;
            let _ = call(&req.to_string());
        }
    }
}
