//! Users' MSCCL XML schedules through the CLI (`cce allreduce --algo-file`, `cce algo`;
//! docs/MODEL.md X1–X13). The schedules are the project's own (`scripts/msccl_gen.py`); every
//! rank's output equals `scripts/allreduce_ref.py --xml` bit for bit — an operational
//! simulation of the MSCCL executor with the CCE's numerics (numpy + ml_dtypes), written from
//! the documented semantics apart from the Rust — for ring, all-pairs with fused `re`,
//! hierarchical and tree schedules (waits, nops, scratch), reduce-scatter and all-gather, at
//! R = 2, 4, 8, 16, in bf16, fp16, fp32 (RNE and SR) and int32, on inputs that differ per rank
//! and element. Defective files are refused in under a second with one line naming where.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{bad, cce, ok, tmp};

const SCRIPTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts");

/// Writes the generator's schedule `args` to a file named after them.
fn gen_xml(args: &[&str]) -> PathBuf {
    let path = tmp(&format!("{}.xml", args.join("_").replace("--", "")));
    let out = Command::new("python3")
        .arg(format!("{SCRIPTS}/msccl_gen.py"))
        .args(args)
        .args(["-o", path.to_str().unwrap()])
        .output()
        .expect("python3 runs scripts/msccl_gen.py");
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    path
}

/// `cce gen` inputs: rank r's uniform array of `seed + r` (distinct per rank and element).
fn inputs(dir: &Path, ranks: usize, dtype: &str, elems: u64, seed: u64) {
    std::fs::create_dir_all(dir).unwrap();
    for r in 0..ranks {
        let f = dir.join(format!("rank{r}.bin"));
        let s = (seed + r as u64).to_string();
        let e = elems.to_string();
        let o = cce(&["gen", "--dtype", dtype, "--elems", &e, "--seed", &s, "-o", f.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    }
}

/// Runs `xml` through cce and the reference; panics with both sides' words on a difference.
fn agree(xml: &Path, dtype: &str, op: &str, sr: Option<u64>, chunk_elems: u64) -> serde_json::Value {
    let name = xml.file_stem().unwrap().to_string_lossy().to_string();
    let tag = format!("{name}-{dtype}-{op}-{}", sr.map_or("rne".into(), |s| format!("sr{s}")));
    let (din, dout) = (tmp(&format!("{tag}-in")), tmp(&format!("{tag}-out")));
    let nchunks: u64 = {
        let text = std::fs::read_to_string(xml).unwrap();
        let at = text.find("nchunksperloop=\"").unwrap() + 16;
        text[at..].split('"').next().unwrap().parse().unwrap()
    };
    let ranks: usize = {
        let text = std::fs::read_to_string(xml).unwrap();
        let at = text.find("ngpus=\"").unwrap() + 7;
        text[at..].split('"').next().unwrap().parse().unwrap()
    };
    let elems = nchunks * chunk_elems;
    inputs(&din, ranks, dtype, elems, 11);
    let mut args = vec![
        "allreduce".to_string(),
        "--algo-file".into(),
        xml.to_str().unwrap().into(),
        "--op".into(),
        op.into(),
        "--dtype".into(),
        dtype.into(),
        "--input-dir".into(),
        din.to_str().unwrap().into(),
        "--output-dir".into(),
        dout.to_str().unwrap().into(),
    ];
    let mut refargs = vec![
        format!("{SCRIPTS}/allreduce_ref.py"),
        "--xml".into(),
        xml.to_str().unwrap().into(),
        dtype.into(),
        din.to_str().unwrap().into(),
        dout.to_str().unwrap().into(),
        "--op".into(),
        op.into(),
    ];
    if let Some(seed) = sr {
        args.extend(["--rounding".into(), "sr".into(), "--seed".into(), seed.to_string()]);
        refargs.extend(["--rounding".into(), "sr".into(), "--seed".into(), seed.to_string()]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let v = ok(&args);
    let out = Command::new("python3").args(&refargs).output().expect("python3 with numpy and ml_dtypes (scripts/test)");
    assert!(
        out.status.success(),
        "{tag}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    v
}

const ALGOS: [&str; 6] = [
    "ring-allreduce",
    "allpairs-allreduce",
    "hier-allreduce",
    "tree-allreduce",
    "ring-reducescatter",
    "ring-allgather",
];

#[test]
fn bf16_schedules_equal_the_reference_at_2_4_8_16_ranks() {
    for algo in ALGOS {
        for (r, place) in [("2", "--inplace"), ("4", "--outofplace"), ("8", "--inplace"), ("16", "--outofplace")] {
            let xml = gen_xml(&[algo, r, place]);
            let v = agree(&xml, "bf16", "add", None, 37);
            assert_eq!(v["algo"], "file");
            assert_eq!(v["coll"], algo.split('-').nth(1).unwrap());
            if algo.ends_with("allreduce") {
                assert_eq!((v["wrong"].as_u64(), v["ranks_identical"].as_bool()), (Some(0), Some(true)), "{algo} {r}");
            }
        }
    }
}

#[test]
fn stochastic_rounding_fp16_fp32_int32_and_max_equal_the_reference() {
    for algo in ALGOS {
        for (r, place) in [("2", "--outofplace"), ("4", "--inplace"), ("8", "--outofplace"), ("16", "--inplace")] {
            let xml = gen_xml(&[algo, r, place]);
            agree(&xml, "bf16", "add", Some(7), 53);
            agree(&xml, "fp32", "add", None, 29);
            if r == "4" || r == "8" {
                agree(&xml, "fp16", "add", Some(3), 41);
                agree(&xml, "i32", "add", None, 31);
                agree(&xml, "bf16", "max", None, 17);
            }
        }
    }
    // Several chunks per step and two channels; 32 ranks fuse 31 re steps into one packet.
    agree(&gen_xml(&["ring-allreduce", "5", "--chunks", "2", "--channels", "2"]), "bf16", "add", Some(9), 19);
    let v = agree(&gen_xml(&["allpairs-allreduce", "32"]), "bf16", "add", Some(1), 3);
    assert_eq!((v["wrong"].as_u64(), v["ranks_identical"].as_bool()), (Some(0), Some(true)));
}

/// Runs `cce` with a deadline: a defective file must never hang it.
fn refused_fast(args: &[&str]) -> String {
    let t = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_cce"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cce runs");
    while child.try_wait().unwrap().is_none() {
        if t.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            panic!("{args:?} hung");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let out = child.wait_with_output().unwrap();
    let took = t.elapsed();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(out.stdout.is_empty(), "{args:?} printed on stdout");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    assert!(took < Duration::from_secs(1), "{args:?} took {took:?}");
    err
}

#[test]
fn defective_files_are_refused_in_under_a_second_naming_where() {
    for (defect, ranks, want) in [
        ("unmatched-send", "4", "an unmatched send"),
        ("reordered-recv", "4", "the allreduce is wrong"),
        ("cycle", "2", "deadlock, a cycle of waits and receives"),
        ("offset", "4", "is outside the buffer: i_chunks = 4"),
        ("unknown-type", "4", "unknown step type \"rrx\""),
        ("missing-attr", "4", "<step> lacks the attribute cnt"),
    ] {
        let xml = gen_xml(&["ring-allreduce", ranks, "--defect", defect]);
        let x = xml.to_str().unwrap();
        for args in
            [vec!["algo", x], vec!["allreduce", "--algo-file", x, "--op", "add", "--dtype", "bf16", "--elems", "4096"]]
        {
            let err = refused_fast(&args);
            assert!(err.starts_with(&format!("cce: {x}: ")), "{defect}: {err}");
            assert!(err.contains(want), "{defect}: {err}");
            assert!(err.contains("line "), "{defect}: names the line: {err}");
            if defect != "missing-attr" && defect != "unknown-type" {
                assert!(err.contains("rank ") && err.contains(" tb ") && err.contains(" step "), "{defect}: {err}");
            }
        }
    }
}

#[test]
fn flags_that_disagree_with_the_file_are_refused() {
    let xml = gen_xml(&["ring-allreduce", "4"]);
    let x = xml.to_str().unwrap();
    let run = ["allreduce", "--algo-file", x, "--dtype", "bf16", "--elems", "4096"];
    fn with<'a>(run: &[&'a str], more: &[&'a str]) -> Vec<&'a str> {
        [run, more].concat()
    }
    assert!(bad(&with(&run, &["--op", "add", "--ranks", "8"])).contains("is an algorithm for 4 ranks (ngpus)"));
    assert!(bad(&with(&run, &["--op", "add", "--collective", "all-gather"])).contains("is a allreduce schedule"));
    assert!(bad(&with(&run, &["--op", "avg"])).contains("avg is not an MSCCL reduction"));
    assert!(bad(&with(&run, &["--op", "add", "--algo", "ring"])).contains("--algo"));
    let odd = ["allreduce", "--algo-file", x, "--op", "add", "--dtype", "bf16", "--elems", "4097"];
    assert!(bad(&odd).contains("a positive multiple of nchunksperloop = 4"));
    assert!(bad(&["algo", "/nonexistent/file.xml"]).contains("/nonexistent/file.xml"));
    // --ranks and --collective that agree are accepted.
    ok(&with(&run, &["--op", "add", "--ranks", "4", "--collective", "allreduce"]));
}

#[test]
fn everything_allreduce_offers_works_with_a_file() {
    let xml = gen_xml(&["hier-allreduce", "8", "--inplace"]);
    let x = xml.to_str().unwrap();
    let run = ["allreduce", "--algo-file", x, "--op", "add", "--dtype", "bf16", "--elems", "65536"];
    // The JSON: today's keys and the file's.
    let v = ok(&run);
    for k in [
        "algorithm_file",
        "algorithm_name",
        "coll",
        "proto",
        "nchannels",
        "algorithm_steps",
        "seconds",
        "model_seconds",
        "steps",
        "packets",
    ] {
        assert!(!v[k].is_null(), "{k}: {v}");
    }
    assert_eq!(
        (v["algorithm_file"].as_str(), v["coll"].as_str(), v["proto"].as_str()),
        (Some(x), Some("allreduce"), Some("Simple"))
    );
    assert_eq!(v["nchannels"], 2);
    // --explain: the file among cce's algorithms, with its own packets' model time.
    let e = ok(&[&run[..], &["--explain"]].concat());
    let cands = e["candidates"].as_array().unwrap();
    assert_eq!(cands.len(), 6);
    let file = &cands[5];
    assert_eq!((file["algo"].as_str(), file["model_seconds"].as_f64().is_some()), (Some("file"), true));
    assert_eq!(file["packets"], v["packets"]);
    assert_eq!(e["algo"], "file");
    assert!(cands.iter().any(|c| c["algo"] == e["auto"]));
    let text = cce(&[&run[..], &["--explain"]].concat());
    assert!(String::from_utf8_lossy(&text.stdout).contains("<- runs"));
    // --trace.
    let trace = tmp("msccl-trace.json");
    ok(&[&run[..], &["--trace", trace.to_str().unwrap()]].concat());
    let t: serde_json::Value = serde_json::from_slice(&std::fs::read(&trace).unwrap()).unwrap();
    assert_eq!(t["otherData"]["algorithm_name"], v["algorithm_name"]);
    let packets: Vec<&serde_json::Value> =
        t["traceEvents"].as_array().unwrap().iter().filter(|e| e["cat"] == "packet").collect();
    assert!(!packets.is_empty());
    // Every packet names the file's step it comes from, by type and place.
    for p in &packets {
        let name = p["name"].as_str().unwrap();
        let origin = p["args"]["msccl"].as_str().unwrap_or_default();
        assert!(origin.starts_with(&format!("rank {} tb ", p["pid"])), "{p}");
        assert!(origin.ends_with(&format!("({name})")) || (name == "re" && origin.contains("(re x")), "{p}");
    }
    // --fail-rank: exit 1 naming the rank and step.
    let o = cce(&[&run[..], &["--fail-rank", "3", "--fail-step", "2"]].concat());
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("rank 3 failed at step 2"));
    // --sweep and --plot: sizes rounded to the file's chunks; the plot has the file's series.
    let plot = tmp("msccl-sweep.svg");
    let sweep = ["allreduce", "--algo-file", x, "--op", "add", "--dtype", "bf16", "--sweep", "1000:70000"];
    let s = ok(&[&sweep[..], &["--plot", plot.to_str().unwrap()]].concat());
    let rows = s["rows"].as_array().unwrap();
    assert!(rows.len() >= 3);
    let n = v["nchunksperloop"].as_u64().unwrap();
    assert!(rows.iter().all(|r| r["count"].as_u64().unwrap() % n == 0 && r["wrong"] == 0), "{s}");
    let svg = std::fs::read_to_string(&plot).unwrap();
    assert!(
        svg.contains("file simulator on this CPU") && svg.contains("ring Trainium model"),
        "the plot draws the file and cce's own"
    );
}

#[test]
fn cce_algo_summarises_and_lowers_to_ring_dumps() {
    let xml = gen_xml(&["allpairs-allreduce", "4"]);
    let x = xml.to_str().unwrap();
    let dir = tmp("msccl-lower");
    let v = ok(&["algo", x, "--elems", "4096", "--lower", dir.to_str().unwrap()]);
    assert_eq!(
        (v["ranks"].as_u64(), v["checks"].as_str(), v["coll"].as_str()),
        (Some(4), Some("passed"), Some("allreduce"))
    );
    // 4 ranks: per peer a send and a receive block, one reducer; 3 re steps fused per rank.
    assert_eq!(v["steps_by_type"]["re"], 12);
    assert_eq!((v["fused_reductions"].as_u64(), v["max_reduce_sources"].as_u64()), (Some(4), Some(4)));
    assert_eq!(v["links"].as_array().unwrap().len(), 12);
    assert!(v["packets"].as_u64().unwrap() > 0 && v["descriptors"].as_u64().unwrap() > v["packets"].as_u64().unwrap());
    // The dumps disassemble, and their packets are the ones counted.
    let mut packets = 0;
    for r in 0..4 {
        let f = dir.join(format!("rank{r}.ring"));
        let d = ok(&["disasm", f.to_str().unwrap()]);
        packets += d["queues"][0]["packets"].as_u64().unwrap();
    }
    assert_eq!(Some(packets), v["packets"].as_u64());
    let text = String::from_utf8(cce(&["algo", x]).stdout).unwrap();
    assert!(text.contains("checks passed") && text.contains("fused reductions: 4"), "{text}");
}
