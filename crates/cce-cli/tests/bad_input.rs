//! The bad-input matrix: one row per refusal across the commands. Every row asserts its exit
//! code (2 for bad input, 1 for a ring the engine faults on), one line on stderr containing the
//! expected message, nothing on stdout for a refusal, and that no output file was created or
//! changed. The
//! rows live here (the first ones), in `bad_input/commands.rs` (command-line and request
//! rules), in `bad_input/packets.rs` (crafted ring dumps), `bad_input/gce.rs`,
//! `bad_input/msccl.rs` (users' MSCCL XML schedules), `bad_input/identify.rs` (`cce identify`), `bad_input/reveal.rs` (`cce reveal`), `bad_input/hier.rs` (a cluster's topology and hierarchies), `bad_input/channels.rs` (the flat ring's channels) and `bad_input/web.rs` (the page's requests, unreachable from the command line); `bad_input/catalogue.rs` scans
//! the workspace source for every error message, and the test fails on any message that no
//! row produces and that is not listed as unreachable from the command line, with the reason.

mod common;

#[path = "bad_input/catalogue.rs"]
mod catalogue;
#[path = "bad_input/channels.rs"]
mod channels;
#[path = "bad_input/commands.rs"]
mod commands;
#[path = "bad_input/gce.rs"]
mod gce;
#[path = "bad_input/hier.rs"]
mod hier;
#[path = "bad_input/identify.rs"]
mod identify;
#[path = "bad_input/inputs.rs"]
mod inputs;
#[path = "bad_input/msccl.rs"]
mod msccl;
#[path = "bad_input/outputs.rs"]
mod outputs;
#[path = "bad_input/packets.rs"]
mod packets;
#[path = "bad_input/repro.rs"]
mod repro;
#[path = "bad_input/reveal.rs"]
mod reveal;
#[path = "bad_input/web.rs"]
mod web;

use std::path::PathBuf;

use common::{cce, tmp};

/// (arguments, expected message fragment, exit code).
type Row = (Vec<String>, &'static str, i32);

/// A message fragment built at run time (it names a scratch file), for a row.
fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

/// The fixtures every row may use (written by [`files`]).
pub(crate) struct Files {
    pub(crate) a: PathBuf,
    pub(crate) b: PathBuf,
    pub(crate) odd: PathBuf,
    pub(crate) ring: PathBuf,
    pub(crate) out: PathBuf,
    pub(crate) dir: PathBuf,
    pub(crate) sparse: PathBuf,
}

pub(crate) fn files() -> Files {
    let a = tmp("m-a.bin");
    let b = tmp("m-b.bin");
    let odd = tmp("m-odd.bin");
    let ring = tmp("m.ring");
    let out = tmp("m-out.bin");
    let dir = tmp("m-dir");
    let sparse = tmp("m-sparse.bin");
    std::fs::write(&a, [0u8; 64]).unwrap();
    std::fs::write(&b, [0u8; 32]).unwrap();
    std::fs::write(&odd, [0u8; 7]).unwrap();
    std::fs::create_dir_all(&dir).unwrap();
    // A file that claims 64 GiB (sparse): refused by size before anything is read.
    let f = std::fs::File::create(&sparse).unwrap();
    f.set_len(64 << 30).unwrap();
    let o = cce(&[
        "build",
        "--arch",
        "3",
        "--op",
        "add",
        "--in",
        "fp32",
        "--accum",
        "fp32",
        "--out-dtype",
        "fp32",
        "--elems",
        "8",
        "--src",
        "0x1000",
        "--dst",
        "0x2000",
        "-o",
        ring.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0));
    let _ = std::fs::remove_file(&out);
    Files { a, b, odd, ring, out, dir, sparse }
}

pub(crate) fn ring_variant(name: &str, f: impl Fn(&mut Vec<u8>)) -> String {
    let base = std::fs::read(tmp("m.ring")).unwrap();
    let mut b = base.clone();
    f(&mut b);
    let p = tmp(name);
    std::fs::write(&p, b).unwrap();
    p.display().to_string()
}

/// Owned arguments.
/// A fresh scratch directory holding `files` (name, bytes), as a path argument.
pub(crate) fn dir(name: &str, files: &[(&str, Vec<u8>)]) -> String {
    common::files_dir(name, files).display().to_string()
}

pub(crate) fn sv(x: &[&str]) -> Vec<String> {
    x.iter().map(|s| s.to_string()).collect()
}

/// `cce build` of a 64-element bf16 → fp32 → bf16 request (source 0x1000, destination 0x9000)
/// written to `out`, then `extra`.
pub(crate) fn build_args(out: &str, extra: &[&str]) -> Vec<String> {
    let mut x = sv(&[
        "build",
        "--arch",
        "3",
        "--in",
        "bf16",
        "--accum",
        "fp32",
        "--out-dtype",
        "bf16",
        "--elems",
        "64",
        "--src",
        "0x1000",
        "--dst",
        "0x9000",
        "-o",
        out,
    ]);
    x.extend(sv(extra));
    x
}

/// `cce reduce` fp32 → fp32 → fp32 into `out`, then `extra`.
pub(crate) fn reduce_args(out: &str, extra: &[&str]) -> Vec<String> {
    let mut x = sv(&["reduce", "--in", "fp32", "--accum", "fp32", "--out", "fp32", "--dst", out]);
    x.extend(sv(extra));
    x
}

/// `args` with the value after `flag` replaced by `values`.
pub(crate) fn set(mut args: Vec<String>, flag: &str, values: &[&str]) -> Vec<String> {
    let i = args.iter().position(|a| a == flag).expect("the flag is present");
    args.splice(i + 1..i + 2, values.iter().map(|v| v.to_string()));
    args
}

/// (arguments, expected message fragment).
fn rows(f: &Files) -> Vec<(Vec<String>, &'static str)> {
    let mut rows = dispatcher_rows(f);
    rows.extend(field_rows());
    rows.extend(dtype_name_rows(f));
    rows.extend(ring_dump_rows(f));
    rows.extend(file_rows(f));
    rows
}

/// The rows of the study's asserts, through the dispatcher.
fn dispatcher_rows(f: &Files) -> Vec<(Vec<String>, &'static str)> {
    let s = |p: &PathBuf| p.display().to_string();
    let out = s(&f.out);
    let build = |extra: &[&str]| build_args(&out, extra);
    vec![
        // The study's asserts, through the dispatcher.
        (build(&["--op", "copy"]), "Unsupported CCE Op! 0"),
        (build(&["--op", "transpose"]), "Unsupported CCE Op! 5"),
        (build(&["--op", "fma", "--no-cce-info"]), "vring.c:0x3B8"),
        (
            set(set(build(&["--op", "add"]), "--arch", &["2"]), "--dst", &["0x9000", "0xA000"]),
            "CCE replication not supported for v1/v2 archs",
        ),
        (build(&["--op", "max", "--const", "1", "--const-dtype", "fp32"]), "Unsupported data type for min/max op fp32"),
        (build(&["--op", "add", "--prio", "5"]), "priority class 5"),
        (set(build(&["--op", "add"]), "--arch", &["7"]), "unsupported arch 7"),
        (set(build(&["--op", "add"]), "--in", &["fp32r"]), "fp32r"),
        (build(&["--op", "add", "--cap", "16"]), "below the 32-byte packet granule"),
        (set(build(&["--op", "add"]), "--elems", &["0x1000000000000"]), "descriptors exceed"),
        (build(&["--op", "add", "--dst", "0xFFFFFFFFFFFFFFF0"]), "overflows 64 bits"),
        (build(&["--op", "add", "--ring-size", "40"]), "ring size 40"),
        (build(&["--op", "min", "--const", "300", "--const-dtype", "i8"]), "not a i8 value"),
        (build(&["--op", "add", "--scale", "2"]), "fma only"),
    ]
}

/// The rows of out-of-range fields and malformed values.
fn field_rows() -> Vec<(Vec<String>, &'static str)> {
    let v = sv;
    vec![
        // Out-of-range fields and malformed values.
        (v(&["encode", "fma-meta-ctrl", "--sub", "8"]), "0..=7"),
        (v(&["encode", "fma-meta-ctrl", "--in-dt", "16"]), "0..=15"),
        (v(&["encode", "min-max-meta-ctrl", "--const-dt", "8"]), "0..=7"),
        (v(&["encode", "fma-descriptor", "--a-sel", "4"]), "0..=3"),
        (v(&["encode", "fma-descriptor", "--meta-idx", "256"]), "0..=255"),
        (v(&["encode", "fma-descriptor", "--wb", "0x800000"]), "23 bits"),
        (v(&["encode", "fma-descriptor", "--sema", "0x1000000"]), "24 bits"),
        (v(&["encode", "fma-descriptor", "--a8", "8"]), "0..=7"),
        (v(&["encode", "min-max-descriptor", "--length", "0x1000000"]), "24 bits"),
        (v(&["encode", "min-max-descriptor", "--constant", "0x100000000"]), "32 bits"),
        (v(&["encode", "replication-meta-ctrl", "--count", "65536"]), "16 bits"),
        (v(&["encode", "add-meta-ctrl", "--last", "2"]), "0..=1"),
        (v(&["encode", "fma-descriptor", "--scale", "one"]), "not a decimal float"),
        (v(&["encode", "fma-meta-ctrl", "--sub", "0xG"]), "not a number"),
        (v(&["encode", "no-such"]), "unknown encoder"),
        (v(&["decode", "fma-descriptor", "00ff"]), "expected 32 hex digits"),
        (v(&["decode", "fma-descriptor", "zz"]), "malformed hex"),
        (v(&["decode", "cce-info", "00"]), "expected 280 hex digits"),
        (v(&["packet-size", "--dtype", "fp32r", "--elems", "1", "--prio", "0"]), "fp32r"),
        (v(&["packet-size", "--dtype", "bf16", "--elems", "1", "--prio", "9"]), "priority class 9"),
    ]
}

/// The rows of unknown dtype names.
fn dtype_name_rows(f: &Files) -> Vec<(Vec<String>, &'static str)> {
    let s = |p: &PathBuf| p.display().to_string();
    let (a, out) = (s(&f.a), s(&f.out));
    let v = sv;
    vec![
        // Unknown dtype names.
        (v(&["dtype-gate", "--in", "bfloat16", "--out", "fp32"]), "unknown dtype 'bfloat16'"),
        (v(&["convert", "--from", "f64", "--to", "bf16", "--input", &a, "--output", &out]), "f64"),
        (
            v(&[
                "reduce", "--op", "add", "--in", "float8", "--accum", "fp32", "--out", "fp32", "--src", &a, "--dst",
                &out,
            ]),
            "unknown dtype",
        ),
    ]
}

/// The rows of malformed ring dumps (each refused file named).
fn ring_dump_rows(f: &Files) -> Vec<(Vec<String>, &'static str)> {
    let s = |p: &PathBuf| p.display().to_string();
    let (out, dir) = (s(&f.out), s(&f.dir));
    let v = sv;
    let truncated = ring_variant("m-trunc.ring", |b| b.truncate(b.len() - 5));
    let magic = ring_variant("m-magic.ring", |b| b[0] = b'X');
    let version = ring_variant("m-version.ring", |b| b[8] = 9);
    let not16 = ring_variant("m-not16.ring", |b| {
        let n = b.len();
        b.insert(n - 8, 0);
    });
    let size = ring_variant("m-size.ring", |b| b[36..40].copy_from_slice(&40u32.to_le_bytes()));
    let checksum = ring_variant("m-sum.ring", |b| {
        let n = b.len();
        b[n - 20] ^= 1;
    });
    let queues = ring_variant("m-queues.ring", |b| b[20..24].copy_from_slice(&17u32.to_le_bytes()));
    vec![
        // Malformed ring dumps.
        (v(&["disasm", &truncated]), "truncated"),
        (v(&["disasm", &magic]), "bad magic"),
        // A refused ring file is named.
        (v(&["disasm", &magic]), leak(format!("{magic}: not a cce ring dump (bad magic)"))),
        (v(&["run", &magic]), leak(format!("{magic}: not a cce ring dump (bad magic)"))),
        (v(&["disasm", &version]), "version 9"),
        (v(&["disasm", &not16]), "trailing"),
        (v(&["disasm", &size]), "ring size 40"),
        (v(&["disasm", &checksum]), "checksum"),
        (v(&["disasm", &queues]), "queue count"),
        (v(&["run", &magic, "--dump", &format!("0x2000:32={out}")]), "bad magic"),
        (v(&["disasm", &dir]), "m-dir"),
    ]
}

/// The rows of files: lengths, sizes, overlaps.
fn file_rows(f: &Files) -> Vec<(Vec<String>, &'static str)> {
    let s = |p: &PathBuf| p.display().to_string();
    let (a, b, odd, ring, out, dir, sparse) =
        (s(&f.a), s(&f.b), s(&f.odd), s(&f.ring), s(&f.out), s(&f.dir), s(&f.sparse));
    let v = sv;
    let reduce = |extra: &[&str]| reduce_args(&out, extra);
    let load_a = format!("0x1000={a}");
    let load_a2 = format!("0x1010={a}");
    let dump_big = format!("0x9000:0x4000000000={out}");
    vec![
        // Files: lengths, sizes, overlaps.
        (reduce(&["--op", "add", "--src", &a, &b]), "differ in length"),
        // A length mismatch names both files.
        (reduce(&["--op", "add", "--src", &a, &b]), leak(format!("sources differ in length: {a} has"))),
        (reduce(&["--op", "add", "--src", &a, &b]), leak(format!(" bytes, {b} has "))),
        (reduce(&["--op", "add", "--src", &odd]), "not a positive multiple"),
        (reduce(&["--op", "add", "--src", &a, "--dst", &a]), "may not also be a source"),
        (reduce(&["--op", "add", "--src", &sparse, &sparse]), "exceed the budget"),
        (v(&["convert", "--from", "u8", "--to", "u64", "--input", &sparse, "--output", &out]), "budget"),
        (
            v(&["convert", "--from", "fp32", "--to", "bf16", "--input", &odd, "--output", &out]),
            "not a multiple of the fp32 element size",
        ),
        (v(&["run", &ring, "--load", &load_a, &load_a2]), "overlaps"),
        // An overlapping --load names the region (and the --load) it overlaps.
        (v(&["run", &ring, "--load", &load_a, &load_a2]), leak(format!("--load {load_a2}: region 0x1010+"))),
        (v(&["run", &ring, "--load", &load_a, &load_a2]), "overlaps the region 0x1000+"),
        (v(&["run", &ring, "--load", &load_a, &load_a2]), leak(format!("already mapped (--load {load_a})"))),
        (v(&["run", &ring, "--dump", &dump_big]), "budget"),
        (v(&["run", &ring, "--load", "0x1000"]), "expected ADDR=FILE"),
        (
            v(&[
                "allreduce",
                "--ranks",
                "8",
                "--algo",
                "ring",
                "--op",
                "add",
                "--dtype",
                "bf16",
                "--elems",
                "0x100000000000",
            ]),
            "budget",
        ),
        (
            v(&["allreduce", "--ranks", "2", "--algo", "ring", "--op", "add", "--dtype", "bf16", "--input-dir", &dir]),
            "rank0.bin",
        ),
        (
            v(&["allreduce", "--ranks", "4097", "--algo", "ring", "--op", "add", "--dtype", "bf16", "--elems", "8"]),
            "between 2 and 4096",
        ),
    ]
}

/// Every row of the matrix: (arguments, expected message fragment, exit code). Exit 2 is bad
/// input; exit 1 is a run that executed and stopped on a fault (a ring the engine refuses).
fn all_rows(f: &Files) -> Vec<Row> {
    let mut all: Vec<Row> = rows(f).into_iter().map(|(args, want)| (args, want, 2)).collect();
    all.extend(packets::rows(f));
    all.extend(commands::rows(f));
    gce::rows(&mut all);
    msccl::rows(f, &mut all);
    identify::rows(&mut all);
    repro::rows(&mut all);
    reveal::rows(&mut all);
    inputs::rows(&mut all);
    outputs::rows(&mut all);
    hier::rows(&mut all);
    channels::rows(&mut all);
    all
}

#[test]
fn every_bad_input_is_refused_cleanly_and_every_message_has_a_row() {
    let f = files();
    std::fs::write(tmp("m-sentinel"), b"keep").unwrap();
    let before: Vec<(PathBuf, Vec<u8>)> =
        [&f.a, &f.b, &f.odd, &f.ring].iter().map(|p| ((*p).clone(), std::fs::read(p).unwrap())).collect();
    let mut failures = Vec::new();
    let mut seen = Vec::new();
    let rows = all_rows(&f);
    println!("{} rows", rows.len());
    for (args, want, code) in rows {
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = cce(&argv);
        let err = String::from_utf8_lossy(&o.stderr).to_string();
        // A refusal (exit 2) prints nothing on stdout; a run that executed and faulted (exit 1)
        // prints its per-queue report there, as `cce run` documents.
        let ok = o.status.code() == Some(code)
            && (code != 2 || o.stdout.is_empty())
            && err.trim_end().lines().count() == 1
            && err.contains(want);
        if !ok {
            failures.push(format!("{argv:?}: exit {:?}, stderr {err:?}, want {want:?} (exit {code})", o.status.code()));
        }
        if f.out.exists() {
            failures.push(format!("{argv:?} created {}", f.out.display()));
            let _ = std::fs::remove_file(&f.out);
        }
        seen.push(err.trim_end().to_string());
    }
    for (p, bytes) in before {
        assert_eq!(std::fs::read(&p).unwrap(), bytes, "{} changed", p.display());
    }
    assert!(failures.is_empty(), "{} rows failed:\n{}", failures.len(), failures.join("\n"));

    // Completeness: every message template in the source is produced by some row, or is listed
    // as unreachable from the command line with the reason.
    let unreachable: Vec<(&str, &str)> = packets::UNREACHABLE
        .iter()
        .chain(commands::UNREACHABLE)
        .chain(gce::UNREACHABLE)
        .chain(msccl::UNREACHABLE)
        .chain(identify::UNREACHABLE)
        .chain(hier::UNREACHABLE)
        .chain(repro::UNREACHABLE)
        .chain(reveal::UNREACHABLE)
        .chain(web::UNREACHABLE)
        .copied()
        .collect();
    let templates = catalogue::templates();
    assert!(templates.len() > 100, "the scan found only {} templates", templates.len());
    let mut missing = Vec::new();
    for (file, t) in &templates {
        let listed = unreachable.iter().any(|(u, _)| t.starts_with(u));
        if !listed && !seen.iter().any(|line| catalogue::matches(t, line)) {
            missing.push(format!("{file}: {t:?}"));
        }
    }
    for (u, why) in &unreachable {
        assert!(!why.is_empty(), "{u:?}: an unreachable message needs its reason");
        assert!(templates.iter().any(|(_, t)| t.starts_with(u)), "stale unreachable entry {u:?}");
    }
    assert!(missing.is_empty(), "{} messages have no row:\n{}", missing.len(), missing.join("\n"));
}
