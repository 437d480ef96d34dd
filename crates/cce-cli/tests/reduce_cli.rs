//! `cce reduce` against an independent reference: scripts/engine_ref.py (numpy + ml_dtypes in
//! source order; exact rationals for FMA), bit for bit, across dtypes, ops, clamps, scales,
//! 1–32 sources and 1–4 destinations. Needs python3 with numpy and ml_dtypes
//! (`scripts/test` installs them into .venv).

mod common;

use std::process::Command;

use common::{bad, cce, ok, tmp};

/// Random bit patterns of `dtype` that are finite, non-zero normals with exponents in a
/// moderate range (the reference and the model agree on everything else too, but numpy's
/// min/max conventions for ±0 and NaN differ from the documented model).
fn data(dtype: &str, elems: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut out = Vec::new();
    for _ in 0..elems {
        let r = next();
        let sign = (r >> 63) as u32;
        let pick = |lo: u64, hi: u64| (lo + (r >> 20) % (hi - lo + 1)) as u32;
        match dtype {
            "bf16" => {
                out.extend(((sign << 15) | (pick(0x70, 0x8F) << 7) | (r as u32 & 0x7F)).to_le_bytes()[..2].iter())
            }
            "fp16" => out.extend(((sign << 15) | (pick(5, 24) << 10) | (r as u32 & 0x3FF)).to_le_bytes()[..2].iter()),
            "fp32" => out.extend(((sign << 31) | (pick(100, 150) << 23) | (r as u32 & 0x7F_FFFF)).to_le_bytes()),
            "fp8e4" => out.push(((sign << 7) | (pick(1, 10) << 3) | (r as u32 & 7)) as u8),
            "fp8e5" => out.push(((sign << 7) | (pick(1, 25) << 2) | (r as u32 & 3)) as u8),
            "fp8e3" => out.push(((sign << 7) | (pick(1, 5) << 4) | (r as u32 & 15)) as u8),
            "i32" => out.extend((r as u32).to_le_bytes()),
            "u8" => out.push(r as u8),
            _ => panic!("no generator for {dtype}"),
        }
    }
    out
}

struct Case<'a> {
    op: &'a str,
    in_dt: &'a str,
    accum: &'a str,
    out: &'a str,
    sources: usize,
    dests: usize,
    elems: usize,
    scales: &'a [&'a str],
    constant: Option<(&'a str, &'a str)>,
}

fn check(c: &Case, tag: &str) {
    let mut args: Vec<String> = ["reduce", "--op", c.op, "--in", c.in_dt, "--accum", c.accum, "--out", c.out, "--json"]
        .map(String::from)
        .to_vec();
    let mut refargs: Vec<String> =
        ["--op", c.op, "--in", c.in_dt, "--accum", c.accum, "--out", c.out].map(String::from).to_vec();
    refargs.push("--src".into());
    let mut srcs = Vec::new();
    for i in 0..c.sources {
        let f = tmp(&format!("{tag}-src{i}"));
        std::fs::write(&f, data(c.in_dt, c.elems, 1000 + i as u64)).unwrap();
        srcs.push(f.display().to_string());
    }
    args.push("--src".into());
    args.extend(srcs.iter().cloned());
    refargs.extend(srcs.iter().cloned());
    let dsts: Vec<String> = (0..c.dests).map(|j| tmp(&format!("{tag}-dst{j}")).display().to_string()).collect();
    args.push("--dst".into());
    args.extend(dsts.iter().cloned());
    refargs.push("--dst".into());
    refargs.extend(dsts.iter().cloned());
    if !c.scales.is_empty() {
        args.push("--scale".into());
        refargs.push("--scale".into());
        for s in c.scales {
            args.push(s.to_string());
            refargs.push(s.to_string());
        }
    }
    if let Some((v, d)) = c.constant {
        for a in [&mut args, &mut refargs] {
            a.extend(["--const".to_string(), v.to_string(), "--const-dtype".to_string(), d.to_string()]);
        }
    }
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let v = ok(&argv);
    assert_eq!(v["elements"], c.elems as u64, "{tag}");
    assert!(v["packets"].as_u64().unwrap() >= 1);
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/engine_ref.py");
    let out = Command::new("python3")
        .arg(script)
        .args(&refargs)
        .output()
        .expect("python3 is needed for the reference: run scripts/test");
    assert!(
        out.status.success(),
        "{tag}: the reference disagrees (or numpy / ml_dtypes are missing: run scripts/test, which installs them):\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// ADD over every input dtype family, 1 to 32 sources, 1 to 4 destinations.
fn add_cases() -> Vec<Case<'static>> {
    let none: &[&str] = &[];
    vec![
        Case {
            op: "add",
            in_dt: "bf16",
            accum: "fp32",
            out: "bf16",
            sources: 3,
            dests: 1,
            elems: 10_000,
            scales: none,
            constant: None,
        },
        Case {
            op: "add",
            in_dt: "fp16",
            accum: "fp32",
            out: "fp16",
            sources: 5,
            dests: 2,
            elems: 7_001,
            scales: none,
            constant: None,
        },
        Case {
            op: "add",
            in_dt: "fp8e4",
            accum: "fp32",
            out: "fp8e4",
            sources: 4,
            dests: 1,
            elems: 9_000,
            scales: none,
            constant: None,
        },
        Case {
            op: "add",
            in_dt: "fp8e5",
            accum: "fp32",
            out: "bf16",
            sources: 2,
            dests: 3,
            elems: 5_000,
            scales: none,
            constant: None,
        },
        Case {
            op: "add",
            in_dt: "fp8e3",
            accum: "fp32",
            out: "fp8e3",
            sources: 32,
            dests: 4,
            elems: 3_000,
            scales: none,
            constant: None,
        },
        Case {
            op: "add",
            in_dt: "fp32",
            accum: "fp32",
            out: "fp32",
            sources: 7,
            dests: 1,
            elems: 6_000,
            scales: none,
            constant: None,
        },
        Case {
            op: "add",
            in_dt: "i32",
            accum: "i32",
            out: "i32",
            sources: 3,
            dests: 1,
            elems: 6_000,
            scales: none,
            constant: None,
        },
    ]
}

/// MIN and MAX, with and without a clamp constant.
fn min_max_cases() -> Vec<Case<'static>> {
    let none: &[&str] = &[];
    vec![
        Case {
            op: "max",
            in_dt: "bf16",
            accum: "fp32",
            out: "bf16",
            sources: 4,
            dests: 1,
            elems: 5_000,
            scales: none,
            constant: Some(("0.5", "bf16")),
        },
        Case {
            op: "min",
            in_dt: "fp16",
            accum: "fp32",
            out: "fp16",
            sources: 2,
            dests: 2,
            elems: 5_000,
            scales: none,
            constant: None,
        },
        Case {
            op: "min",
            in_dt: "i32",
            accum: "i32",
            out: "i32",
            sources: 3,
            dests: 1,
            elems: 5_000,
            scales: none,
            constant: Some(("-1000", "i16")),
        },
        Case {
            op: "max",
            in_dt: "fp8e4",
            accum: "fp32",
            out: "fp8e4",
            sources: 1,
            dests: 1,
            elems: 4_001,
            scales: none,
            constant: None,
        },
    ]
}

/// FMA with a scale per source, or one for all.
fn fma_cases() -> Vec<Case<'static>> {
    vec![
        Case {
            op: "fma",
            in_dt: "bf16",
            accum: "fp32",
            out: "bf16",
            sources: 3,
            dests: 1,
            elems: 3_000,
            scales: &["0.5", "-0.25", "3.0"],
            constant: None,
        },
        Case {
            op: "fma",
            in_dt: "fp32",
            accum: "fp32",
            out: "fp32",
            sources: 2,
            dests: 2,
            elems: 2_000,
            scales: &["0.1", "-7.3"],
            constant: None,
        },
        Case {
            op: "fma",
            in_dt: "fp8e5",
            accum: "fp32",
            out: "fp16",
            sources: 32,
            dests: 1,
            elems: 300,
            scales: &["0.3"],
            constant: None,
        },
    ]
}

#[test]
fn reduce_matches_numpy_and_ml_dtypes() {
    let cases: Vec<Case> = [add_cases(), min_max_cases(), fma_cases()].into_iter().flatten().collect();
    for (i, c) in cases.iter().enumerate() {
        check(c, &format!("case{i}"));
    }
}

#[test]
fn reduce_refusals() {
    let a = tmp("r-a");
    let b = tmp("r-b");
    std::fs::write(&a, [0u8; 64]).unwrap();
    std::fs::write(&b, [0u8; 62]).unwrap();
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let d = tmp("r-out");
    let _ = std::fs::remove_file(&d);
    let ds = d.to_str().unwrap();
    let e =
        bad(&["reduce", "--op", "add", "--in", "bf16", "--accum", "fp32", "--out", "bf16", "--src", a, b, "--dst", ds]);
    assert!(e.contains("differ in length"), "{e}");
    let e =
        bad(&["reduce", "--op", "add", "--in", "fp32", "--accum", "fp32", "--out", "fp32", "--src", b, "--dst", ds]);
    assert!(e.contains("multiple"), "{e}");
    let e = bad(&[
        "reduce", "--op", "add", "--in", "bf16", "--accum", "fp32", "--out", "bf16", "--src", a, "--dst", ds, ds,
        "--arch", "2",
    ]);
    assert!(e.contains("destination") || e.contains("replication"), "{e}");
    let e = bad(&["reduce", "--op", "fma", "--in", "bf16", "--accum", "fp32", "--out", "bf16", "--src", a, "--dst", a]);
    assert!(e.contains("source"), "{e}");
    let e =
        bad(&["reduce", "--op", "copy", "--in", "bf16", "--accum", "fp32", "--out", "bf16", "--src", a, "--dst", ds]);
    assert!(e.contains("--op"), "{e}");
    bad(&[
        "reduce",
        "--op",
        "add",
        "--in",
        "bf16",
        "--accum",
        "fp32",
        "--out",
        "bf16",
        "--src",
        "/nonexistent/x",
        "--dst",
        ds,
    ]);
    assert!(!d.exists(), "no output file is left behind");
}

#[test]
fn sr_through_the_engine_is_deterministic_across_threads() {
    let src: Vec<String> = (0..4)
        .map(|i| {
            let f = tmp(&format!("sr-src{i}"));
            std::fs::write(&f, data("bf16", 200_000, 50 + i)).unwrap();
            f.display().to_string()
        })
        .collect();
    let mut outs = Vec::new();
    for t in ["1", "2"] {
        let d = tmp(&format!("sr-out{t}"));
        let mut args = vec![
            "reduce",
            "--op",
            "add",
            "--in",
            "bf16",
            "--accum",
            "fp32",
            "--out",
            "bf16",
            "--rounding",
            "sr",
            "--seed",
            "12345",
            "--threads",
            t,
            "--src",
        ];
        args.extend(src.iter().map(String::as_str));
        let ds = d.display().to_string();
        args.extend(["--dst", ds.as_str()]);
        let out = cce(&args);
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        outs.push(std::fs::read(&d).unwrap());
    }
    assert_eq!(outs[0], outs[1], "same seed, same bytes at 1 and 2 threads");
}
