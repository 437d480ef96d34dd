//! The page's request reader: any bytes, as the text a `window.cce` call or a permalink hands
//! to the module (`cce_web::call`). Invariants: nothing panics or aborts (a trap in the page),
//! nothing allocates past libFuzzer's memory limit (the page's budget is checked first), and
//! every answer is one JSON object.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The bridge hands the module UTF-8 (TextEncoder); the module reads bytes lossily.
    let text = String::from_utf8_lossy(data);
    let answer = cce_web::call(&text);
    let v: serde_json::Value = serde_json::from_str(&answer).expect("every answer is JSON");
    assert!(v.is_object(), "every answer is an object: {answer}");
});
