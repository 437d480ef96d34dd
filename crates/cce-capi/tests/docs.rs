//! docs/c.md shows the C example verbatim: its ```c block equals
//! `examples/weighted_average.c`, which scripts/c-test compiles and runs.

use std::path::Path;

#[test]
fn the_docs_example_is_the_compiled_file() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(dir.join("../../docs/c.md")).expect("docs/c.md");
    let file = std::fs::read_to_string(dir.join("examples/weighted_average.c")).expect("the example");
    let start = doc.find("```c\n").expect("a ```c block in docs/c.md") + 5;
    let end = start + doc[start..].find("```").expect("the block's end");
    assert_eq!(&doc[start..end], file, "docs/c.md's example differs from examples/weighted_average.c");
}
