//! The page's budget (src/budget.rs): an element's answer is counted before it is rendered,
//! never below its real size and not far above it; what the budget refuses is refused with the
//! CLI's kind of message, and what it takes answers — a 4096-rank ring's story with short
//! orders among them.

use cce_api::collective::{AllreduceParams, StoryInputs};
use cce_web::budget::{ANSWER_COPIES, PAGE_BUDGET, story_answer_bytes};
use serde_json::{Value, json};

fn call(request: &Value) -> (String, Value) {
    let text = cce_web::call(&request.to_string());
    let v = serde_json::from_str(&text).expect("every answer is JSON");
    (text, v)
}

/// The story the request `r` tells, made by the library as `call` makes it (`None`: refused).
fn story(r: &Value) -> Option<cce_api::collective::ElementStory> {
    let s = |k: &str, d: &str| r.get(k).and_then(Value::as_str).unwrap_or(d).to_string();
    let mut p = AllreduceParams::new(
        r["ranks"].as_u64().unwrap(),
        s("algo", "ring").parse().unwrap(),
        s("op", "add").parse().unwrap(),
        cce_api::dtype(&s("dtype", "bf16")).unwrap(),
    );
    p.rounding = s("rounding", "rne").parse().unwrap();
    if let Some(c) = r.get("compress").and_then(Value::as_str) {
        p.compress = c.parse().unwrap();
    }
    let elems = r["elems"].as_u64().unwrap();
    p.element_story(elems, r["element"].as_u64().unwrap(), None, StoryInputs::Generated { seed: 1 }).ok()
}

#[test]
fn an_answer_is_counted_at_or_above_its_size() {
    let mut cases = Vec::new();
    for ranks in [2u64, 3, 8, 33, 64, 256, 1024] {
        for algo in ["ring", "ring-2r2w", "kangaring", "rdh", "mesh", "hier"] {
            if (algo == "rdh" && !ranks.is_power_of_two()) || (algo == "mesh" && ranks > 32) {
                continue;
            }
            for (dtype, op, rounding) in [("bf16", "add", "rne"), ("fp32", "avg", "sr"), ("fp8e4", "max", "rne")] {
                let elems = ranks * 4 + 3;
                cases.push(json!({"fn": "element", "ranks": ranks, "algo": algo, "op": op, "dtype": dtype,
                    "rounding": rounding, "elems": elems, "element": elems - 2}));
            }
        }
    }
    cases.push(json!({"fn": "element", "ranks": 64, "algo": "ring", "op": "add", "dtype": "bf16", "compress": "gce",
        "elems": 4096, "element": 77}));
    let mut told = 0;
    for r in cases {
        let Some(s) = story(&r) else {
            assert!(call(&r).1.get("error").is_some(), "{r}: the library refuses it");
            continue;
        };
        told += 1;
        for short in [false, true] {
            let mut r = r.clone();
            r["orders"] = json!(if short { "short" } else { "whole" });
            let (text, v) = call(&r);
            assert!(v.get("element").is_some(), "{r}: {v}");
            let (got, counted) = (text.len() as u64, story_answer_bytes(&s, short));
            assert!(got <= counted && counted <= 3 * got + 4096, "{r}: {got} bytes, counted {counted}");
        }
    }
    assert!(told >= 60, "{told} stories told");
}

#[test]
fn the_budget_refuses_with_what_it_needs_and_takes_the_rest() {
    let ring = |ranks: u64, orders: &str| {
        json!({"fn": "element", "ranks": ranks, "algo": "ring", "op": "add", "dtype": "bf16", "elems": 1024,
            "element": 7, "orders": orders})
    };
    // Every order whole: O(R²) bytes; 1024 ranks fit, 2048 do not.
    let (text, v) = call(&ring(1024, "whole"));
    assert!(v.get("element").is_some(), "{v}");
    assert!(text.len() as u64 * ANSWER_COPIES <= PAGE_BUDGET);
    let (_, v) = call(&ring(2048, "whole"));
    let e = v["error"].as_str().expect("refused");
    assert!(e.starts_with("2048 ranks x 1024 bf16 elements: the story's answer ("), "{e}");
    assert!(
        e.contains("of the page's memory, over its budget of 268435456 bytes (256.0 MiB): ask for `orders` short"),
        "{e}"
    );
    // Short orders: linear; the largest ring answers in megabytes.
    let (text, v) = call(&ring(4096, "short"));
    assert_eq!(v["element"]["steps"].as_array().map(Vec::len), Some(8161), "{}", &text[..200.min(text.len())]);
    assert!(text.len() < 16 << 20, "{} bytes", text.len());
    assert_eq!(v["element"]["steps"][4000]["operands"][0]["expr"], "(order of 4001 leaves)");
    // auto models every algorithm: a few hundred ranks, not thousands.
    let auto = |ranks: u64| json!({"fn": "element", "ranks": ranks, "algo": "auto", "op": "add", "dtype": "bf16", "elems": 4096, "element": 7});
    assert!(call(&auto(256)).1.get("element").is_some());
    let (_, v) = call(&auto(4096));
    let e = v["error"].as_str().expect("refused");
    assert!(
        e.contains("`algo` auto's model") && e.contains("over its budget") && e.contains("name an algorithm"),
        "{e}"
    );
    // Out of range: the library's message, not the budget's.
    let (_, v) = call(&auto(5000));
    assert!(v["error"].as_str().unwrap().contains("ranks"), "{v}");
    let (_, v) = call(
        &json!({"fn": "element", "ranks": 4, "algo": "ring", "op": "add", "dtype": "bf16", "elems": 8, "orders": "all"}),
    );
    assert_eq!(v["error"], "`orders` 'all': expected whole or short");
}
