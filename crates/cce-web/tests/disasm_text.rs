//! The page's Rings view shows `cce disasm`'s text: `{"fn": "disasm", "text": true}` answers with
//! the listing the CLI prints (the same render of the same walk), and without `text` the object
//! `cce disasm --json` prints, unchanged. (The page against the `cce` binary, for dumps the CLI
//! builds and the version-1 fixtures: tests/web/test_rings_text.py.)

use serde_json::{Value, json};

fn call(request: &Value) -> Value {
    serde_json::from_str(&cce_web::call(&request.to_string())).expect("every answer is JSON")
}

fn fixture(name: &str) -> Vec<u8> {
    let path = format!("{}/../cce-cli/tests/fixtures/v1/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn the_text_is_the_listing_the_cli_prints() {
    for name in ["add.ring", "fma.ring", "min.ring"] {
        let bytes = fixture(name);
        let listing = cce_api::disasm(&bytes).unwrap();
        let text = call(&json!({ "fn": "disasm", "hex": hex(&bytes), "text": true }));
        assert_eq!(text, json!({ "text": listing.to_text() }), "{name}");
        let plain = call(&json!({ "fn": "disasm", "hex": hex(&bytes) }));
        assert_eq!(plain, listing.to_json(), "{name}: the JSON answer keeps the CLI's --json object");
        assert!(text["text"].as_str().unwrap().contains("meta=0x"), "{name}: the named sub-fields");
    }
}

#[test]
fn text_is_a_flag() {
    let v = call(&json!({ "fn": "disasm", "hex": hex(&fixture("add.ring")), "text": "yes" }));
    assert!(v["error"].as_str().unwrap().contains("`text` must be true or false"), "{v}");
}
