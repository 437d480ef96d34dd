//! `include/cce.h` is what cbindgen makes of this crate today: the test regenerates it and
//! fails on any difference (run it with `CCE_BLESS=1` to write the header after a change).

use std::path::Path;

#[test]
fn the_checked_in_header_is_current() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).expect("cbindgen.toml");
    let bindings =
        cbindgen::Builder::new().with_crate(dir).with_config(config).generate().expect("cbindgen generates the header");
    let mut fresh = Vec::new();
    bindings.write(&mut fresh);
    let path = dir.join("include/cce.h");
    if std::env::var_os("CCE_BLESS").is_some() {
        std::fs::write(&path, &fresh).expect("write include/cce.h");
    }
    let checked_in = std::fs::read(&path).unwrap_or_default();
    assert!(
        checked_in == fresh,
        "include/cce.h is stale: run `CCE_BLESS=1 cargo test -p cce-capi --test header` and commit it"
    );
}
