//! Helpers shared by the CLI tests: run `cce`, demand success with JSON, or demand a clean
//! refusal (exit 2, nothing on stdout, one line on stderr).
#![allow(dead_code, reason = "each test file uses a subset")]

use std::process::{Command, Output};

use serde_json::Value;

/// Runs `cce` with `args`.
pub(crate) fn cce(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cce")).args(args).output().expect("run cce")
}

/// Runs a command that must succeed and returns its JSON.
pub(crate) fn ok(args: &[&str]) -> Value {
    let out = cce(args);
    assert_eq!(out.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("stdout is one JSON object")
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

/// A fresh path in a per-process temporary directory.
pub(crate) fn tmp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("cce-cli-tests-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("temp dir");
    d.join(name)
}
