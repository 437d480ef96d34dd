//! The fuzz target's seed corpus (fuzz/corpus/request, run by `cargo +nightly fuzz run request`
//! in CI) holds real requests: each is one the page or a `window.cce` call sends, and each is
//! answered, not refused — so the fuzzer starts from the paths the page takes.

#[test]
fn every_seed_is_answered() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/request");
    let mut seeds: Vec<_> = std::fs::read_dir(&dir).expect("the seed corpus").flatten().map(|e| e.path()).collect();
    seeds.retain(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("seed-")));
    seeds.sort();
    assert!(seeds.len() >= 20, "{} seeds", seeds.len());
    for p in seeds {
        let request = std::fs::read_to_string(&p).expect("a seed is text");
        let answer: serde_json::Value = serde_json::from_str(&cce_web::call(&request)).expect("JSON");
        assert!(answer.is_object() && answer.get("error").is_none(), "{}: {answer}", p.display());
    }
}
