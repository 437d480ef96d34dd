//! Every relative link of the documentation resolves: each `[text](path)` and
//! `[text](path#anchor)` (images included) in `README.md`, `docs/*.md` and `python/README.md`
//! names a file or directory of the repository, and an anchor names a heading of its target, by
//! GitHub's slug rules (lowercase, spaces to `-`, punctuation other than `-` and `_` dropped, a
//! repeated heading numbered `-1`, `-2`, …). Links with a scheme (`https:`, `mailto:`) and text
//! inside code (fenced blocks and inline spans) are not links and are not checked.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// README.md, python/README.md and docs/*.md.
fn documents() -> Vec<PathBuf> {
    let root = root();
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/ exists")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    docs.insert(0, root.join("python/README.md"));
    docs.insert(0, root.join("README.md"));
    docs
}

#[test]
fn every_relative_link_resolves() {
    let docs = documents();
    assert!(docs.len() >= 4, "README.md, python/README.md and the docs/ pages: {docs:?}");
    let mut broken = Vec::new();
    let mut checked = 0;
    for doc in &docs {
        let text = std::fs::read_to_string(doc).unwrap_or_else(|e| panic!("{}: {e}", doc.display()));
        checked += links(&text).len();
        broken.extend(broken_links(doc, &text));
    }
    assert!(checked > 10, "the documents link to each other ({checked} links found)");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn a_broken_link_or_anchor_is_reported() {
    // The check must be able to fail: a missing file and a missing heading are reported, what
    // exists is not, and code is not read as links.
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("docs-links");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(
        dir.join("sub/target.md"),
        "# Title\n\n## AMD EPYC (Zen 5), AVX-512 — 2026-12-04\n\n## Notes\n\n## Notes\n\n```sh\n# not a heading\n```\n",
    )
    .unwrap();
    let doc = dir.join("doc.md");
    let text = "# Doc\n\
        [ok](sub/target.md) [ok](sub/target.md#amd-epyc-zen-5-avx-512--2026-12-04) [ok](sub/target.md#notes-1)\n\
        ![ok](sub) [ok](#doc) [ok](https://example.com/x.md) [ok](sub/target.md \"a title\")\n\
        [missing file](sub/missing.md) [missing anchor](sub/target.md#not-a-heading)\n\
        [fenced heading](sub/target.md#not-a-heading-1) [third notes](sub/target.md#notes-2) [self](#nowhere)\n\
        `[in code](nowhere.md)`\n\
        ```md\n[in a block](nowhere.md)\n```\n";
    std::fs::write(&doc, text).unwrap();
    let broken = broken_links(&doc, text);
    let named: Vec<&str> = broken.iter().map(|b| b.rsplit(": ").next().unwrap().split(' ').next().unwrap()).collect();
    assert_eq!(
        named,
        [
            "sub/missing.md",
            "sub/target.md#not-a-heading",
            "sub/target.md#not-a-heading-1",
            "sub/target.md#notes-2",
            "#nowhere"
        ],
        "{broken:#?}"
    );
}

#[test]
fn slugs_follow_github() {
    assert_eq!(
        slug("The designer's view: RDH, `--algo auto`, the model, traces, plots"),
        "the-designers-view-rdh---algo-auto-the-model-traces-plots"
    );
    assert_eq!(
        slug("End to end: the command a user waits for — 2026-12-03"),
        "end-to-end-the-command-a-user-waits-for--2026-12-03"
    );
    assert_eq!(slug("GCE: gradient compression (the project's codec)"), "gce-gradient-compression-the-projects-codec");
    assert_eq!(slug("snake_case and §9.2"), "snake_case-and-92");
}

/// One line per link of `text` (the document `doc`) that does not resolve: the document, the
/// line, the target and why.
fn broken_links(doc: &Path, text: &str) -> Vec<String> {
    let base = doc.parent().expect("a document has a directory");
    let mut broken = Vec::new();
    for (line, target) in links(text) {
        if has_scheme(&target) {
            continue;
        }
        let (path, anchor) = match target.split_once('#') {
            Some((p, a)) => (p, Some(a)),
            None => (target.as_str(), None),
        };
        let file = if path.is_empty() { doc.to_path_buf() } else { base.join(percent_decoded(path)) };
        let why = if !file.exists() {
            Some("no such file".to_string())
        } else if let Some(anchor) = anchor {
            match std::fs::read_to_string(&file) {
                Ok(t) if file.extension().is_some_and(|x| x == "md") => {
                    (!anchors(&t).iter().any(|a| a == anchor)).then(|| "no such heading".to_string())
                }
                _ => Some("an anchor into a file that is not markdown".to_string()),
            }
        } else {
            None
        };
        if let Some(why) = why {
            let root = root();
            let name = doc.strip_prefix(&root).unwrap_or(doc);
            broken.push(format!("{}:{line}: {target} ({why})", name.display()));
        }
    }
    broken
}

/// `(line, target)` of every `[text](target)` outside code, the target without its title.
fn links(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (line, prose) in prose_lines(text) {
        let mut rest = prose.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            // The target ends at the parenthesis that balances the opening one.
            let mut depth = 0usize;
            let mut end = None;
            for (i, c) in after.char_indices() {
                match c {
                    '(' => depth += 1,
                    ')' if depth == 0 => {
                        end = Some(i);
                        break;
                    }
                    ')' => depth -= 1,
                    _ => {}
                }
            }
            let Some(end) = end else { break };
            let inner = after[..end].trim();
            let target = inner.split_whitespace().next().unwrap_or("");
            let target = target.trim_start_matches('<').trim_end_matches('>');
            if !target.is_empty() {
                found.push((line, target.to_string()));
            }
            rest = &after[end..];
        }
    }
    found
}

/// Every anchor a markdown document defines: its headings' slugs (outside code), numbered as
/// GitHub numbers repeats.
fn anchors(text: &str) -> Vec<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = Vec::new();
    for (_, prose) in prose_lines(text) {
        let trimmed = prose.trim_start();
        let hashes = trimmed.chars().take_while(|&c| c == '#').count();
        if !(1..=6).contains(&hashes) || !trimmed[hashes..].starts_with(' ') {
            continue;
        }
        let title = trimmed[hashes..].trim().trim_end_matches('#').trim();
        let base = slug(title);
        let n = seen.entry(base.clone()).or_insert(0);
        out.push(if *n == 0 { base.clone() } else { format!("{base}-{n}") });
        *n += 1;
    }
    out
}

/// GitHub's heading slug: lowercase; letters, digits, `-` and `_` kept, each space a `-`,
/// everything else dropped.
fn slug(title: &str) -> String {
    let mut s = String::new();
    for c in title.chars().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() || c == '-' || c == '_' {
            s.push(c);
        } else if c == ' ' {
            s.push('-');
        }
    }
    s
}

/// The lines outside fenced code blocks, numbered from 1, with inline code spans removed (the
/// text of a heading keeps what its code spans hold, as GitHub's slugs do).
fn prose_lines(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut fence: Option<usize> = None;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let ticks = trimmed.chars().take_while(|&c| c == '`').count();
        match fence {
            Some(open) => {
                if ticks >= open && trimmed[ticks..].trim().is_empty() {
                    fence = None;
                }
                continue;
            }
            None if ticks >= 3 => {
                fence = Some(ticks);
                continue;
            }
            None => {}
        }
        let is_heading = trimmed.starts_with('#');
        out.push((i + 1, without_code_spans(line, is_heading)));
    }
    out
}

/// `line` with each inline code span removed, or (`keep_text`) replaced by its text.
fn without_code_spans(line: &str, keep_text: bool) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(start) = rest.find('`') {
        out.push_str(&rest[..start]);
        let run = rest[start..].chars().take_while(|&c| c == '`').count();
        let after = &rest[start + run..];
        let closer = "`".repeat(run);
        // A span closes at the next run of exactly as many backticks; an unclosed run is text.
        let mut close = None;
        let mut from = 0;
        while let Some(at) = after[from..].find(&closer) {
            let at = from + at;
            let longer = after[at + run..].starts_with('`');
            if !longer && (at == 0 || !after[..at].ends_with('`')) {
                close = Some(at);
                break;
            }
            from = at + after[at..].chars().take_while(|&c| c == '`').count();
        }
        match close {
            Some(at) => {
                if keep_text {
                    out.push_str(&after[..at]);
                }
                rest = &after[at + run..];
            }
            None => {
                out.push_str(&rest[start..start + run]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// `https:`, `mailto:` and the like: a scheme (letters, digits, `+`, `-`) before a `:`.
fn has_scheme(target: &str) -> bool {
    match target.find(':') {
        Some(colon) => {
            let scheme = &target[..colon];
            scheme.starts_with(|c: char| c.is_ascii_alphabetic())
                && scheme.chars().all(|c| c.is_ascii_alphanumeric() || c == '+' || c == '-')
        }
        None => false,
    }
}

/// `%20` and the like decoded (a path GitHub would accept written either way).
fn percent_decoded(path: &str) -> String {
    let bytes = path.as_bytes();
    let hex = |b: u8| (b as char).to_digit(16);
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}
