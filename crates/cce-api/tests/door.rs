//! cce-api is the whole door (docs/ARCHITECTURE.md, rule 4): the fronts name only cce-api's
//! own types and functions, and cce-api re-exports no other crate's modules.
//!
//! - Every `pub use cce_…` in `crates/cce-api/src` re-exports items, never a module (a `self`,
//!   or a name that is a module of its crate: a file `name.rs` / `name/mod.rs` beside its
//!   parent, or a `mod name` in it), and has a `///` line above it saying why.
//! - No source of the CLI, the Python extension or the C library names `cce_collectives`, or a
//!   `cce_api` path through a module named `collectives`, `metrics` or `demo` (the collectives
//!   crate's: a run is driven through cce-api's [`Prepared`](cce_api::collective::Prepared),
//!   the demo through its `Demo`).
//!
//! The scanners are plain functions over text, each shown failing on planted bad lines.

use std::path::{Path, PathBuf};

/// Module names of cce-collectives the fronts must not reach.
const COLLECTIVES_MODULES: [&str; 3] = ["collectives", "metrics", "demo"];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

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

/// `text` without `//` comments (line and doc comments; string literals holding `//` are rare
/// enough in use lines not to matter) — what the scanners read as code.
fn code_of(text: &str) -> String {
    text.lines().map(|l| l.find("//").map_or(l, |i| &l[..i])).collect::<Vec<_>>().join("\n")
}

/// The items of a use tree: `a::b::{c, d::e as f, self}` → `a::b::c`, `a::b::d::e`, `a::b::self`.
fn use_items(prefix: &str, tree: &str, out: &mut Vec<String>) {
    let tree = tree.trim();
    if let Some(open) = tree.find('{') {
        let head = tree[..open].trim().trim_end_matches("::");
        let prefix = if head.is_empty() { prefix.to_string() } else { join(prefix, head) };
        let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
        let (mut depth, mut start) = (0, 0);
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    use_items(&prefix, &inner[start..i], out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        use_items(&prefix, &inner[start..], out);
    } else if !tree.is_empty() {
        let path = tree.split(" as ").next().unwrap_or(tree).trim();
        out.push(join(prefix, path));
    }
}

fn join(prefix: &str, path: &str) -> String {
    if prefix.is_empty() { path.to_string() } else { format!("{prefix}::{path}") }
}

/// Whether `path` (`cce_format::ringfile`) names a module of a workspace crate.
fn is_module(root: &Path, path: &str) -> bool {
    let segs: Vec<&str> = path.split("::").collect();
    let (Some(krate), Some(&name)) = (segs.first(), segs.last()) else { return false };
    if name == "self" || segs.len() < 2 {
        return true;
    }
    let src = root.join("crates").join(krate.replace('_', "-")).join("src");
    let dir = segs[1..segs.len() - 1].iter().fold(src.clone(), |d, s| d.join(s));
    if dir.join(format!("{name}.rs")).exists() || dir.join(name).join("mod.rs").exists() {
        return true;
    }
    let parent = if segs.len() == 2 {
        src.join("lib.rs")
    } else if dir.with_extension("rs").exists() {
        dir.with_extension("rs")
    } else {
        dir.join("mod.rs")
    };
    let text = std::fs::read_to_string(parent).unwrap_or_default();
    text.contains(&format!("mod {name} {{")) || text.contains(&format!("mod {name};"))
}

/// What is wrong with the `pub use cce_…` statements of one cce-api source: a module
/// re-exported, or no `///` reason above.
fn reexport_findings(root: &Path, file: &str, text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    for (n, line) in lines.iter().enumerate() {
        if !line.trim_start().starts_with("pub use cce_") {
            continue;
        }
        let statement: String = lines[n..]
            .iter()
            .take_while(|l| !l.contains(';'))
            .chain(lines[n..].iter().find(|l| l.contains(';')))
            .map(|l| l.trim())
            .collect::<Vec<_>>()
            .join(" ");
        let tree = statement.trim_start_matches("pub use").trim().trim_end_matches(';');
        let mut items = Vec::new();
        use_items("", tree, &mut items);
        for item in items.iter().filter(|i| is_module(root, i)) {
            found.push(format!("{file}:{}: re-exports the module {item}", n + 1));
        }
        let above = lines[..n].iter().rev().find(|l| !l.trim_start().starts_with("#["));
        if !above.is_some_and(|l| l.trim_start().starts_with("///")) {
            found.push(format!("{file}:{}: no `///` line says why it is re-exported", n + 1));
        }
    }
    found
}

/// The `cce_api` paths (each with its `{…}` group) and `cce_collectives` mentions of one
/// front's source that reach the collectives crate's modules.
fn front_findings(file: &str, text: &str) -> Vec<String> {
    let code = code_of(text);
    let mut found = Vec::new();
    if code.contains("cce_collectives") {
        found.push(format!("{file}: names cce_collectives"));
    }
    let mut rest = code.as_str();
    while let Some(at) = rest.find("cce_api::") {
        let path = &rest[at..];
        let (mut depth, mut end) = (0i32, path.len());
        for (i, c) in path.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth > 0 => depth -= 1,
                c if depth == 0 && !(c.is_alphanumeric() || c == '_' || c == ':') => {
                    end = i;
                    break;
                }
                _ => {}
            }
        }
        let words = path[..end].split(|c: char| !(c.is_alphanumeric() || c == '_'));
        if let Some(m) = words.into_iter().find(|w| COLLECTIVES_MODULES.contains(w)) {
            found.push(format!(
                "{file}: {} reaches the module `{m}`",
                path[..end].split_whitespace().collect::<String>()
            ));
        }
        rest = &path[end.max(1)..];
    }
    found
}

#[test]
fn cce_api_reexports_no_module_and_says_why_for_each_item() {
    let root = workspace();
    let mut files = Vec::new();
    rust_files(&root.join("crates/cce-api/src"), &mut files);
    assert!(files.len() > 10, "the scan found cce-api's sources");
    let found: Vec<String> = files
        .iter()
        .flat_map(|f| reexport_findings(&root, &f.display().to_string(), &std::fs::read_to_string(f).unwrap()))
        .collect();
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_fronts_reach_no_collectives_module() {
    let root = workspace();
    let mut files = Vec::new();
    for front in ["cce-cli", "cce-py", "cce-capi", "cce-web"] {
        rust_files(&root.join("crates").join(front).join("src"), &mut files);
    }
    assert!(files.len() > 20, "the scan found the fronts' sources");
    let found: Vec<String> = files
        .iter()
        .flat_map(|f| front_findings(&f.display().to_string(), &std::fs::read_to_string(f).unwrap()))
        .collect();
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_reexport_scanner_finds_planted_modules_and_missing_reasons() {
    let root = workspace();
    let scan = |text: &str| reexport_findings(&root, "planted.rs", text);
    // What cce-api held before the door was shut: three modules, one renamed.
    let modules = scan("/// The collectives.\npub use cce_collectives::{collective as collectives, demo, metrics};\n");
    assert_eq!(modules.len(), 3, "{modules:?}");
    assert!(modules[0].contains("module cce_collectives::collective"), "{modules:?}");
    assert_eq!(scan("/// Rings.\npub use cce_format::{ring::DESC_BYTES, ringfile};\n").len(), 1);
    assert_eq!(scan("/// Self.\npub use cce_collectives::numerics_report::{self as nr, Params};\n").len(), 1);
    // A module declared inline or by file, below the crate root.
    assert_eq!(scan("/// Threads.\npub use cce_collectives::collective::threads;\n").len(), 1);
    // A type without a reason; with one (an attribute may sit between), nothing.
    let bare = scan("use x;\npub use cce_collectives::collective::Config;\n");
    assert_eq!(bare.len(), 1);
    assert!(bare[0].contains("no `///` line"), "{bare:?}");
    assert!(scan("/// Why.\n#[cfg(feature = \"mpi\")]\npub use cce_collectives::collective::{\n    Config,\n    MemoryNeed,\n};\n").is_empty());
}

#[test]
fn the_front_scanner_finds_planted_collectives_paths() {
    let scan = |text: &str| front_findings("planted.rs", text);
    assert_eq!(scan("use cce_api::collective::collectives::{self as allreduce, Config};").len(), 1);
    assert_eq!(scan("    let i = cce_api::collective::metrics::generate(&cfg, 1);").len(), 1);
    assert_eq!(scan("cce_api::collective::demo::check_allreduce(8, 64)?;").len(), 1);
    assert_eq!(scan("use cce_api::collective::{\n    self as api,\n    demo,\n};").len(), 1);
    assert_eq!(scan("use cce_collectives::collective::run;").len(), 1);
    // The fronts' own names, and cce-api's functions that merely contain the words, pass.
    assert!(scan("mod collectives;\nuse crate::collectives::params;\nlet f = api::demo_failures(&e, &r);").is_empty());
    assert!(scan("let d = cce_api::collective::Demo::prepare(64)?; // not cce_api::collective::demo::x").is_empty());
    assert!(scan("crate::print_json(&cce_api::render::collective::demo_json(e, &r, 64));").is_empty());
}
