//! Helpers shared by the CLI tests: run `cce`, demand success with JSON, or demand a clean
//! refusal (exit 2, nothing on stdout, one line on stderr).
#![allow(dead_code, reason = "each test file uses a subset")]

use std::process::{Command, Output};

use serde_json::Value;

/// Runs `cce` with `args`.
pub(crate) fn cce(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cce")).args(args).output().expect("run cce")
}

/// Runs a command that must succeed with `--json` (added when `args` lack it) and returns its
/// JSON: exactly one object on one line.
pub(crate) fn ok(args: &[&str]) -> Value {
    let mut args = args.to_vec();
    if !args.contains(&"--json") {
        args.push("--json");
    }
    let out = cce(&args);
    assert_eq!(out.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.lines().count(), 1, "{args:?}: --json prints one line");
    serde_json::from_str(&text).expect("stdout is one JSON object")
}

/// Runs a command that must be refused: exit 2, nothing on stdout, one line on stderr.
pub(crate) fn bad(args: &[&str]) -> String {
    let out = cce(args);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(out.stdout.is_empty(), "{args:?} printed on stdout");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: not one line: {err}");
    err
}

/// A path in this test binary's scratch directory: `<target>/tmp/<test crate>/<pid>`, under
/// cargo's target directory (never the system temp directory). The first call removes the
/// directories that earlier, finished runs of the same test binary left behind.
pub(crate) fn tmp(name: &str) -> std::path::PathBuf {
    static DIR: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    let d = DIR.get_or_init(|| {
        let root = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(env!("CARGO_CRATE_NAME"));
        if let Ok(entries) = std::fs::read_dir(&root) {
            for e in entries.flatten() {
                let pid = e.file_name().to_string_lossy().parse::<u32>().ok();
                // A directory whose process is gone is stale (a running sibling keeps its own).
                if pid.is_some_and(|p| !std::path::Path::new(&format!("/proc/{p}")).exists()) {
                    let _ = std::fs::remove_dir_all(e.path());
                }
            }
        }
        let d = root.join(std::process::id().to_string());
        std::fs::create_dir_all(&d).expect("scratch dir under target/tmp");
        d
    });
    d.join(name)
}

/// A fresh directory [`tmp`]`(name)` holding `files` (name, bytes).
pub(crate) fn files_dir<N: AsRef<str>, B: AsRef<[u8]>>(name: &str, files: &[(N, B)]) -> std::path::PathBuf {
    let d = tmp(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("a fresh scratch directory");
    for (f, bytes) in files {
        std::fs::write(d.join(f.as_ref()), bytes.as_ref()).expect("a file in it");
    }
    d
}

/// A version 1 `.npy` file: the header dict text `dict`, padded as NumPy pads it (to a multiple
/// of 64 bytes, ending in a newline), then `data`.
pub(crate) fn npy_v1(dict: &str, data: &[u8]) -> Vec<u8> {
    let mut h = dict.to_string();
    while (10 + h.len() + 1) % 64 != 0 {
        h.push(' ');
    }
    h.push('\n');
    let mut b = b"\x93NUMPY\x01\x00".to_vec();
    b.extend((h.len() as u16).to_le_bytes());
    b.extend(h.as_bytes());
    b.extend(data);
    b
}
