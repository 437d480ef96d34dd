//! The documentation runs verbatim: every ```` ```console ```` block of `README.md`, of
//! `docs/*.md` and of `python/README.md` is executed by trycmd against this build's `cce`, and
//! its shown output (stdout and stderr, with `[..]` / `...` elisions for times) must match.
//! Blocks marked `sh` are not commands of `cce` (cargo, the test script) and are not run.
//!
//! Each document is copied into this test's scratch directory under cargo's target directory
//! beside an empty `<name>.out/` and a `<name>.in/` holding a copy of the repository's
//! `examples/`, so its commands run in a fresh sandbox directory that starts with the examples
//! (trycmd removes it afterwards), can name them as `examples/…`, and find the files one
//! command writes in the next.

use std::path::{Path, PathBuf};

/// The documents with console blocks: README.md, docs/*.md and python/README.md.
fn documents() -> Vec<PathBuf> {
    let mut docs = documents_with("```console");
    docs.sort();
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
        // What the sandbox starts with.
        copy_tree(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples"),
            &copy.with_extension("in").join("examples"),
        );
        cases.case(copy);
    }
    cases.run();
}

/// Copies a directory tree (the repository's `examples/`).
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("a directory in the sandbox");
    for e in std::fs::read_dir(from).expect("examples/ exists").flatten() {
        let p = e.path();
        if p.is_dir() {
            copy_tree(&p, &to.join(e.file_name()));
        } else {
            std::fs::copy(&p, to.join(e.file_name())).expect("copy an example");
        }
    }
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

/// The README is a front page: at most 250 lines (the rest belongs in docs/), opening with the
/// project's two commands, the main job and the tests, then the line that builds the page.
#[test]
fn readme_is_a_front_page_that_opens_with_the_two_commands() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(lines <= 250, "README.md has {lines} lines; the front page keeps to 250, the rest goes to docs/");
    let first: Vec<&str> = readme.lines().take(7).collect();
    assert_eq!(first[..3], ["# cce", "", "```sh"], "the README opens with the two commands");
    assert!(first[3].starts_with("cargo run --release -- demo "), "first the main job: {}", first[3]);
    assert!(first[4].starts_with("scripts/test "), "then the tests: {}", first[4]);
    assert!(first[5].starts_with("scripts/web "), "then how to build the page: {}", first[5]);
    assert_eq!(first[6], "```", "and nothing else in that block");
}

/// An ```` ```xml ```` block marked `<!-- excerpt of examples/… -->` shows the file's own lines,
/// in order (a line `...` stands for lines left out).
#[test]
fn xml_excerpts_are_the_example_files() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut checked = 0;
    for doc in documents_with("```xml") {
        let text = std::fs::read_to_string(&doc).unwrap();
        for (at, _) in text.match_indices("<!-- excerpt of ") {
            let rest = &text[at + "<!-- excerpt of ".len()..];
            let file = rest[..rest.find(" -->").expect("the marker ends")].trim();
            let body = &rest[rest.find("```xml\n").expect("an xml block follows") + 7..];
            let body = &body[..body.find("```").expect("the block ends")];
            let source = std::fs::read_to_string(root.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
            let mut lines = source.lines();
            for shown in body.lines().filter(|l| *l != "...") {
                assert!(lines.any(|l| l == shown), "{}: {file} has no line, in order: {shown}", doc.display());
            }
            checked += 1;
        }
    }
    assert!(checked > 0, "docs/msccl.md shows an excerpt of an example");
}

/// README.md, docs/*.md and python/README.md that contain `marker`.
fn documents_with(marker: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut docs = vec![root.join("README.md"), root.join("python/README.md")];
    if let Ok(entries) = std::fs::read_dir(root.join("docs")) {
        docs.extend(entries.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "md")));
    }
    docs.retain(|p| std::fs::read_to_string(p).is_ok_and(|t| t.contains(marker)));
    docs
}
