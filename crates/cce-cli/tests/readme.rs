//! The README runs verbatim: every ```` ```console ```` block of `README.md` and of `docs/*.md`
//! is executed by trycmd against this build's `cce`, and its shown output (stdout and stderr,
//! with `[..]` / `...` elisions for times) must match. Blocks marked `sh` are not commands of
//! `cce` (cargo, the test script) and are not run.
//!
//! Each document is copied into this test's scratch directory under cargo's target directory
//! beside an empty `<name>.out/`, so its commands run in a fresh sandbox directory (trycmd
//! removes it afterwards) and the files one command writes are there for the next.

use std::path::{Path, PathBuf};

/// The documents with console blocks: README.md and docs/*.md.
fn documents() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut docs = vec![root.join("README.md")];
    if let Ok(entries) = std::fs::read_dir(root.join("docs")) {
        let mut md: Vec<PathBuf> =
            entries.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "md")).collect();
        md.sort();
        docs.extend(md);
    }
    docs.retain(|p| std::fs::read_to_string(p).is_ok_and(|t| t.contains("```console")));
    docs
}

#[test]
fn readme_and_docs_run_verbatim() {
    let docs = documents();
    assert!(docs.iter().any(|p| p.ends_with("README.md")), "README.md has console blocks");
    let scratch = Path::new(env!("CARGO_TARGET_TMPDIR")).join("readme");
    let _ = std::fs::remove_dir_all(&scratch);
    let cases = trycmd::TestCases::new();
    cases.register_bin("cce", Path::new(env!("CARGO_BIN_EXE_cce")));
    for (i, doc) in docs.iter().enumerate() {
        let dir = scratch.join(i.to_string());
        std::fs::create_dir_all(&dir).expect("scratch dir");
        let name = doc.file_name().expect("a file name");
        let copy = dir.join(name);
        std::fs::copy(doc, &copy).expect("copy the document");
        std::fs::create_dir_all(copy.with_extension("out")).expect("sandbox marker");
        cases.case(copy);
    }
    cases.run();
}

#[test]
fn a_changed_output_fails() {
    // The harness must be able to fail: the README's first console block with one shown output
    // line changed is run and must be reported as a failure.
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md")).unwrap();
    let start = readme.find("```console\n").expect("README has a console block");
    let end = start + readme[start..].find("\n```\n").expect("the block ends");
    let block = &readme[start..end + 5];
    let changed = block
        .lines()
        .map(|l| {
            if !l.starts_with("$ ") && !l.starts_with("```") && !l.is_empty() {
                format!("{l} CHANGED")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    assert_ne!(changed, block, "the block shows some output to change");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("readme-mutant");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("mutant.out")).unwrap();
    std::fs::write(dir.join("mutant.md"), format!("{changed}\n")).unwrap();
    let cases = trycmd::TestCases::new();
    cases.register_bin("cce", Path::new(env!("CARGO_BIN_EXE_cce")));
    cases.case(dir.join("mutant.md"));
    // trycmd reports a failed case by panicking.
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| cases.run()));
    assert!(outcome.is_err(), "a README block whose shown output was changed still passed");
}
