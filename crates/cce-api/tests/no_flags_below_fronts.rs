//! Nothing below the fronts spells a flag: no string literal under the `src/` of a crate other
//! than `cce-cli`, `cce-py` and `cce-capi` contains `--` followed by a letter. A library message
//! names a parameter in backquotes (`` `seed` ``) and each front spells it as its own flag
//! (`cce_api::ApiError::message_with`); the one function that writes the CLI's dashes,
//! `cce_api::render::flag`, builds them with `format!`. Comments (doc comments included) may
//! mention flags.

use std::path::{Path, PathBuf};

/// The crates that spell flags: the fronts.
const FRONTS: [&str; 3] = ["cce-cli", "cce-py", "cce-capi"];

/// Every string literal of Rust source `text` with the line it starts on; comments, char
/// literals and lifetimes skipped. Raw strings (`r"…"`, `r#"…"#`) and byte strings included.
fn string_literals(text: &str) -> Vec<(usize, String)> {
    let b = text.as_bytes();
    let (mut i, mut line, mut out) = (0, 1, Vec::new());
    while i < b.len() {
        match b[i] {
            b'\n' => line += 1,
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let end = text[i + 2..].find("*/").map_or(b.len(), |e| i + 2 + e + 2);
                line += text[i..end].matches('\n').count();
                i = end;
                continue;
            }
            b'\'' => {
                // A char literal ('x', '\n', '\u{..}', '"'); otherwise a lifetime.
                if b.get(i + 1) == Some(&b'\\') {
                    i += 3 + text[i + 3..].find('\'').unwrap_or(0) + 1;
                    continue;
                }
                if let Some(c) = text[i + 1..].chars().next()
                    && text[i + 1 + c.len_utf8()..].starts_with('\'')
                {
                    i += 2 + c.len_utf8();
                    continue;
                }
            }
            b'r' if (b.get(i + 1) == Some(&b'"') || b.get(i + 1) == Some(&b'#'))
                && (i == 0 || b[i - 1] == b'b' || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')) =>
            {
                let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
                if b.get(i + 1 + hashes) == Some(&b'"') {
                    let start = i + 2 + hashes;
                    let close = format!("\"{}", "#".repeat(hashes));
                    let end = text[start..].find(&close).map_or(b.len(), |e| start + e);
                    out.push((line, text[start..end].to_string()));
                    line += text[start..end].matches('\n').count();
                    i = end + close.len();
                    continue;
                }
            }
            b'"' => {
                let start = i + 1;
                let mut j = start;
                while j < b.len() && b[j] != b'"' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                let end = j.min(b.len());
                out.push((line, text[start..end].to_string()));
                line += text[start..end].matches('\n').count();
                i = end + 1;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// The literals of `text` that spell a flag (`--` then a letter), with their lines.
fn flag_spellings(text: &str) -> Vec<(usize, String)> {
    string_literals(text)
        .into_iter()
        .filter(|(_, s)| s.as_bytes().windows(3).any(|w| w[0] == b'-' && w[1] == b'-' && w[2].is_ascii_alphabetic()))
        .collect()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn the_scanner_finds_a_flag_in_a_literal_and_only_there() {
    let text = concat!(
        "// --comment\n/// --doc\n/* --block\n */ fn f<'a>(c: char) -> &'a str {\n",
        "    let _ = ['\"', '\\'', c];\n    if c == '-' { \"--seed is for sr\" } else { r#\"x \"--raw\"\"# }\n}\n",
        "const OK: &str = \"`seed` -- -1 --{name}\";\n",
    );
    assert_eq!(
        flag_spellings(text),
        [(6, "--seed is for sr".to_string()), (6, "x \"--raw\"".to_string())],
        "{:?}",
        string_literals(text)
    );
}

#[test]
fn no_crate_below_the_fronts_spells_a_flag() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for e in std::fs::read_dir(&crates).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with("cce-") && !FRONTS.contains(&name.as_str()) {
            rust_files(&e.path().join("src"), &mut files);
        }
    }
    assert!(files.len() > 50, "found only {} source files under {}", files.len(), crates.display());
    let mut found = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        // Another tool's command line, quoted from its source (the measured figures' runs), is
        // that tool's spelling, not cce's.
        for (line, s) in flag_spellings(&text).into_iter().filter(|(_, s)| !s.contains("nccom-test")) {
            let path = f.strip_prefix(&crates).unwrap_or(f).display().to_string();
            found.push(format!("crates/{path}:{line}: {s:?}"));
        }
    }
    assert!(
        found.is_empty(),
        "flag spellings below the fronts (name the parameter in backquotes, `name`, and let the front spell it):\n{}",
        found.join("\n")
    );
}
