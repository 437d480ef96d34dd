//! Every subcommand over the fuzz corpora (and mangled versions of them): the process never
//! exits 101 (a panic), never dies by a signal, and never runs past a time bound.

mod common;

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::tmp;

fn corpus(target: &str) -> Vec<PathBuf> {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../fuzz/corpus")).join(target);
    let mut v: Vec<PathBuf> =
        std::fs::read_dir(&dir).map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect()).unwrap_or_default();
    v.sort();
    assert!(!v.is_empty(), "no corpus in {}", dir.display());
    v
}

/// Runs `cce` with a time bound; fails on exit 101, a signal, or a hang.
fn survive(args: &[String]) {
    let start = Instant::now();
    let mut child =
        Command::new(env!("CARGO_BIN_EXE_cce")).args(args).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            assert!(st.code().is_some(), "{args:?} died by a signal");
            assert_ne!(st.code(), Some(101), "{args:?} panicked");
            return;
        }
        if start.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            panic!("{args:?} ran past 30 s");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The file and versions of it with bytes flipped, truncated and extended.
fn variants(p: &PathBuf, tag: &str) -> Vec<PathBuf> {
    let b = std::fs::read(p).unwrap();
    let mut out = vec![p.clone()];
    for (i, v) in [
        {
            let mut x = b.clone();
            if let Some(y) = x.get_mut(b.len() / 2) {
                *y ^= 0x5A;
            }
            x
        },
        b[..b.len() / 2].to_vec(),
        {
            let mut x = b.clone();
            x.extend_from_slice(&[0xFF; 17]);
            x
        },
        b.iter().map(|x| !x).collect(),
    ]
    .into_iter()
    .enumerate()
    {
        let q = tmp(&format!("h-{tag}-{}-{i}", p.file_name().unwrap().to_string_lossy()));
        std::fs::write(&q, v).unwrap();
        out.push(q);
    }
    out
}

#[test]
fn every_subcommand_survives_the_corpora() {
    let s = |p: &PathBuf| p.display().to_string();
    let out = s(&tmp("h-out"));
    for f in corpus("ring_file").iter().chain(corpus("execute").iter()).flat_map(|p| variants(p, "ring")) {
        survive(&["disasm".into(), s(&f)]);
        survive(&["disasm".into(), s(&f), "--json".into()]);
        survive(&[
            "run".into(),
            s(&f),
            "--load".into(),
            format!("0x0={}", s(&f)),
            "--dump".into(),
            format!("0x9000:64={out}"),
        ]);
    }
    for f in corpus("decode_descriptor").iter().chain(corpus("execute").iter()).flat_map(|p| variants(p, "dec")) {
        let b = std::fs::read(&f).unwrap();
        let hex: String = b.iter().take(16).map(|x| format!("{x:02x}")).collect();
        for enc in [
            "fma-descriptor",
            "min-max-descriptor",
            "seed-init-descriptor",
            "replication-descriptor",
            "m2s-data",
            "s2m-data",
            "meta-ctrl",
            "cce-info",
        ] {
            survive(&["decode".into(), enc.into(), hex.clone()]);
        }
    }
    for f in corpus("msccl").iter().flat_map(|p| variants(p, "xml")) {
        survive(&["algo".into(), s(&f), "--elems".into(), "4096".into()]);
        survive(&["algo".into(), s(&f), "--json".into(), "--lower".into(), s(&tmp("h-lower"))]);
        let run = ["allreduce", "--algo-file", &s(&f), "--op", "add", "--dtype", "bf16", "--elems", "4096"];
        survive(&run.map(String::from));
    }
    for f in corpus("convert").iter().chain(corpus("ring_file").iter()).flat_map(|p| variants(p, "cv")) {
        for (from, to) in [("fp32", "fp8e4"), ("u8", "bf16"), ("fp8e3", "i32"), ("bf16", "fp8e5")] {
            survive(&[
                "convert".into(),
                "--from".into(),
                from.into(),
                "--to".into(),
                to.into(),
                "--input".into(),
                s(&f),
                "--output".into(),
                out.clone(),
            ]);
        }
        survive(&[
            "reduce".into(),
            "--op".into(),
            "max".into(),
            "--in".into(),
            "u8".into(),
            "--accum".into(),
            "i32".into(),
            "--out".into(),
            "u8".into(),
            "--src".into(),
            s(&f),
            "--dst".into(),
            out.clone(),
        ]);
    }
}
