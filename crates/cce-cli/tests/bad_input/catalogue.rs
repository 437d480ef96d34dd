//! The catalogue of error messages: every `#[error("…")]` template and every message literal
//! that an error is built from, scanned from the workspace's non-test source (each parameter it
//! names spelled as the CLI's flag), and the matcher that decides whether a line of stderr is
//! an instance of a template.

use std::path::{Path, PathBuf};

/// Calls whose string-literal arguments are error messages (or parts of one).
const BUILDERS: [&str; 14] = [
    "MscclError::new(",
    "malformed(",
    "mismatch(",
    "Input(",
    "Failed(",
    "input(",
    "Config(",
    "Unsupported(",
    "Empty(",
    "Err(format!(",
    "Err(\"",
    "Invalid(",
    "Malformed {",
    "Dtype {",
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The string literal starting at `text[i] == '"'`: its unescaped value and the index after it.
fn literal(text: &[u8], i: usize) -> (String, usize) {
    let mut v = Vec::new();
    let mut j = i + 1;
    while j < text.len() && text[j] != b'"' {
        if text[j] == b'\\' && j + 1 < text.len() {
            match text[j + 1] {
                b'n' => v.push(b'\n'),
                other => v.push(other),
            }
            j += 2;
        } else {
            v.push(text[j]);
            j += 1;
        }
    }
    (String::from_utf8_lossy(&v).into_owned(), j + 1)
}

/// The string literals inside the call whose opening bracket is the last byte of `text[..i]`,
/// up to the matching closing bracket.
fn literals_of_call(text: &[u8], i: usize) -> Vec<String> {
    let mut depth = 1i32;
    let mut j = i;
    let mut found = Vec::new();
    while j < text.len() && depth > 0 {
        match text[j] {
            b'"' => {
                let (s, next) = literal(text, j);
                found.push(s);
                j = next;
                continue;
            }
            b'(' | b'{' | b'[' => depth += 1,
            b')' | b'}' | b']' => depth -= 1,
            _ => {}
        }
        j += 1;
    }
    found
}

/// A literal that reads as (part of) a message rather than a name or separator.
fn is_message(s: &str) -> bool {
    let pieces = pieces(s);
    s.contains(' ') && pieces.iter().map(|p| p.trim().len()).sum::<usize>() >= 8
}

/// Every message template: (file relative to the workspace, template).
pub(crate) fn templates() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    rust_files(&root.join("crates"), &mut files);
    let mut out: Vec<(String, String)> = Vec::new();
    for f in files {
        let rel = f.strip_prefix(&root).unwrap_or(&f).display().to_string();
        if !rel.contains("/src/") {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        // Unit tests sit at the end of a file; they emit nothing.
        let code = text.split("#[cfg(test)]\nmod tests").next().unwrap_or("");
        let bytes = code.as_bytes();
        let mut add = |t: String| {
            // A library message names its parameters (`seed`); the CLI prints them as flags.
            let t = cce_api::error::spell_parameters(&t, cce_api::render::flag);
            if is_message(&t) && !out.iter().any(|(_, o)| *o == t) {
                out.push((rel.clone(), t));
            }
        };
        for (i, _) in code.match_indices("#[error(\"") {
            add(literal(bytes, i + "#[error(".len()).0);
        }
        for b in BUILDERS {
            for (i, _) in code.match_indices(b) {
                let line_start = code[..i].rfind('\n').map_or(0, |k| k + 1);
                let line = code[line_start..i].trim_start();
                if line.starts_with("//") || line.starts_with("assert") {
                    continue;
                }
                let open = i + b.len() - usize::from(b.ends_with('"'));
                let start = if b.ends_with('"') { open } else { i + b.len() };
                if b.ends_with('"') {
                    add(literal(bytes, open).0);
                } else {
                    for s in literals_of_call(bytes, start) {
                        add(s);
                    }
                }
            }
        }
    }
    out
}

/// The fixed pieces of a template, in order: the text between its `{…}` placeholders.
pub(crate) fn pieces(t: &str) -> Vec<String> {
    let t = t.replace("{{", "\u{1}").replace("}}", "\u{2}");
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0;
    for c in t.chars() {
        match c {
            '{' => {
                depth += 1;
                if depth == 1 && !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            '}' if depth > 0 => depth -= 1,
            _ if depth == 0 => cur.push(c),
            _ => {}
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out.into_iter().map(|p| p.replace('\u{1}', "{").replace('\u{2}', "}")).collect()
}

/// Whether `line` contains an instance of template `t`: its fixed pieces in order.
pub(crate) fn matches(t: &str, line: &str) -> bool {
    let mut at = 0;
    for p in pieces(t) {
        match line[at..].find(&p) {
            Some(k) => at += k + p.len(),
            None => return false,
        }
    }
    true
}
