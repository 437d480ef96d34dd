//! The flat ring's channels (`--channels C`, docs/MODEL.md C29) through the forensic and trace
//! commands: `--trace` of a channelled ring holds every packet of the run once; `--element`
//! gives the bits the run gives for every piece of every chunk; `cce identify --channels`
//! names a channelled ring's output, and without the flag names nothing; `cce repro
//! --channels` sweeps them as an axis.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use common::{bad, ok, tmp};
use serde_json::Value;

/// `cce allreduce` of a 3-channel ring over 8 bf16 ranks in nodes of 4, then `extra`.
fn channelled(elems: u64, extra: &[&str]) -> Vec<String> {
    let e = elems.to_string();
    let mut v: Vec<String> = [
        "allreduce",
        "--algo",
        "ring",
        "--channels",
        "3",
        "--ranks-per-node",
        "4",
        "--ranks",
        "8",
        "--op",
        "add",
        "--dtype",
        "bf16",
        "--elems",
        &e,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    v.extend(extra.iter().map(|s| s.to_string()));
    v
}

fn run(args: &[String]) -> Value {
    ok(&args.iter().map(String::as_str).collect::<Vec<_>>())
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn the_trace_of_a_channelled_ring_holds_every_packet_of_the_run_once() {
    let path = tmp("trace-channels.json");
    let v = run(&channelled(3000, &["--trace", s(&path)]));
    assert_eq!((v["channels"].as_u64(), v["label"].as_str()), (Some(3), Some("ring(3 channels)")), "{v}");
    assert_eq!(v["wrong"], 0);
    let trace: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).expect("the trace is JSON");
    let events = trace["traceEvents"].as_array().unwrap();
    let procs: BTreeSet<u64> = events
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "process_name")
        .map(|e| e["pid"].as_u64().unwrap())
        .collect();
    assert_eq!(procs, (0..=8).collect(), "a process per rank and one for the links");
    let packets: Vec<&Value> = events.iter().filter(|e| e["cat"] == "packet").collect();
    assert_eq!(packets.len() as u64, v["packets"].as_u64().unwrap());
    // Per rank, sequence numbers 0..n without gaps, n the run's packets of that rank.
    let mut seen: BTreeMap<u64, BTreeSet<u64>> = BTreeMap::new();
    for e in &packets {
        assert_eq!(e["ph"], "X");
        assert!(e["dur"].as_f64().unwrap() > 0.0 && e["ts"].as_f64().unwrap() >= 0.0);
        assert!(seen.entry(e["pid"].as_u64().unwrap()).or_default().insert(e["args"]["packet"].as_u64().unwrap()));
    }
    let per_rank: Vec<u64> = v["per_rank"].as_array().unwrap().iter().map(|r| r["packets"].as_u64().unwrap()).collect();
    assert_eq!(per_rank.len(), 8);
    for (q, n) in per_rank.iter().enumerate() {
        let got = seen.get(&(q as u64)).map_or(Vec::new(), |s| s.iter().copied().collect());
        assert_eq!(got, (0..*n).collect::<Vec<_>>(), "rank {q}");
    }
    // Flows start before they end; bytes in flight end at zero on every link.
    let mut flows: BTreeMap<u64, (Option<f64>, Option<f64>)> = BTreeMap::new();
    for e in events.iter().filter(|e| e["cat"] == "flow") {
        let f = flows.entry(e["id"].as_u64().unwrap()).or_default();
        match e["ph"].as_str().unwrap() {
            "s" => assert!(f.0.replace(e["ts"].as_f64().unwrap()).is_none()),
            "f" => assert!(f.1.replace(e["ts"].as_f64().unwrap()).is_none()),
            ph => panic!("{ph}"),
        }
    }
    assert!(!flows.is_empty());
    assert!(flows.values().all(|(s, f)| s.unwrap() < f.unwrap()), "{flows:?}");
    let mut last: BTreeMap<String, i64> = BTreeMap::new();
    for e in events.iter().filter(|e| e["ph"] == "C") {
        last.insert(e["name"].as_str().unwrap().to_string(), e["args"]["bytes"].as_i64().unwrap());
    }
    assert!(!last.is_empty() && last.values().all(|&b| b == 0), "{last:?}");
}

/// Rank `r`'s output bits of element `i` (bf16) from `--output-dir`'s files.
fn bits(out: &Path, r: u64, i: u64) -> String {
    let b = std::fs::read(out.join(format!("rank{r}.bin"))).unwrap();
    let i = i as usize * 2;
    format!("0x{:04x}", u16::from_le_bytes([b[i], b[i + 1]]))
}

#[test]
fn the_element_story_of_a_channelled_ring_gives_the_run_s_bits() {
    let out = tmp("out-channels");
    let v = run(&channelled(1000, &["--output-dir", s(&out)]));
    assert_eq!(v["label"], "ring(3 channels)");
    // 125-element chunks cut into pieces [0, 41), [41, 83), [83, 125): every piece's first and
    // last element in chunks 0, 4 (the second node's first) and 7, on ranks of both nodes.
    let mut pieces = Vec::new();
    for chunk in [0u64, 4, 7] {
        for (lo, hi) in [(0, 40), (41, 82), (83, 124)] {
            pieces.extend([chunk * 125 + lo, chunk * 125 + hi]);
        }
    }
    let mut orders = BTreeSet::new();
    for (k, &i) in pieces.iter().enumerate() {
        let rank = [0u64, 3, 5, 6][k % 4];
        let (e, r) = (i.to_string(), rank.to_string());
        let story = &run(&channelled(1000, &["--element", &e, "--rank", &r]))["element"];
        assert_eq!(story["algo"], "ring(3 channels)");
        assert_eq!(story["output"]["bits"].as_str().unwrap(), bits(&out, rank, i), "element {i} rank {rank}");
        orders.insert(story["expr"].as_str().unwrap().to_string());
    }
    // The channels' rings turn in each node: the pieces of a chunk have different orders.
    assert!(orders.len() >= 6, "{orders:?}");
}

/// `cce gen`'s inputs for 8 bf16 ranks of `elems` elements in a fresh directory.
fn gen_inputs(name: &str, elems: u64) -> PathBuf {
    let d = tmp(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    for r in 0..8u64 {
        let (e, seed, f) = (elems.to_string(), (r + 1).to_string(), d.join(format!("rank{r}.bin")));
        ok(&["gen", "--dtype", "bf16", "--elems", &e, "--seed", &seed, "-o", s(&f)]);
    }
    d
}

#[test]
fn identify_names_a_channelled_ring_with_channels_and_nothing_without() {
    let ins = gen_inputs("id-in", 4000);
    let out = tmp("id-out");
    let ar = |algo: &str| {
        let args = ["allreduce", "--algo", algo, "--channels", "4", "--ranks-per-node", "4", "--ranks", "8"];
        let mut a: Vec<&str> = args.to_vec();
        a.extend(["--op", "add", "--dtype", "bf16", "--input-dir", s(&ins), "--output-dir", s(&out)]);
        ok(&a)
    };
    assert_eq!(ar("ring")["label"], "ring(4 channels)");
    let id = |extra: &[&str]| {
        let mut a = vec!["identify", "--input-dir", s(&ins), "--observed", s(&out), "--dtype", "bf16"];
        a.extend(extra);
        ok(&a)
    };
    let v = id(&["--channels", "4", "--ranks-per-node", "4"]);
    assert_eq!((v["verdict"].as_str(), v["answer"].as_str()), (Some("explained"), Some("ring(4 channels)")), "{v}");
    let best = &v["candidates"][0];
    assert_eq!((best["matched"].as_u64(), best["total"].as_u64()), (Some(4000), Some(4000)));
    assert_eq!(best["aliases"], serde_json::json!(["ring-2r2w(4 channels)"]));
    assert!(v["candidates"].as_array().unwrap()[1..].iter().all(|c| c["matched"].as_u64() < Some(4000)));
    // ring-2r2w of 4 channels writes the same bits: the same answer.
    ar("ring-2r2w");
    assert_eq!(id(&["--channels", "4", "--ranks-per-node", "4"])["answer"], "ring(4 channels)");
    // Without --channels no candidate made it: no answer, and the verdict says so.
    let v = id(&[]);
    assert_ne!(v["verdict"], "explained", "{v}");
    assert!(v["answer"].is_null());
    // Another channel count is not the order either.
    let v = id(&["--channels", "3", "--ranks-per-node", "4"]);
    assert!(v["answer"].is_null(), "{}", v["verdict_reason"]);
    // Out of range: refused as the run refuses it, before anything is evaluated.
    let e = bad(&["identify", "--input-dir", s(&ins), "--observed", s(&out), "--dtype", "bf16", "--channels", "33"]);
    assert!(e.contains("--channels 33: between 1 and 32"), "{e}");
}

#[test]
fn repro_sweeps_the_channels() {
    let v = ok(&[
        "repro",
        "--ranks",
        "8",
        "--algo",
        "ring,ring-2r2w,mesh",
        "--elems",
        "1000",
        "--dtype",
        "bf16",
        "--ranks-per-node",
        "4",
        "--channels",
        "1,3",
    ]);
    let configs = v["configs"].as_array().unwrap();
    // `channels` and `label` as `cce allreduce --json` gives them: for several channels only.
    let of = |c: &Value| {
        let label = c["label"].as_str().map(str::to_string);
        (c["algo"].as_str().unwrap().to_string(), c["channels"].as_u64(), label)
    };
    let ran: Vec<(String, Option<u64>, Option<String>)> = configs.iter().map(of).collect();
    let want = [
        ("ring", None, None),
        ("ring", Some(3), Some("ring(3 channels)")),
        ("ring-2r2w", None, None),
        ("ring-2r2w", Some(3), Some("ring-2r2w(3 channels)")),
        ("mesh", None, None),
    ];
    assert_eq!(ran, want.map(|(a, c, l)| (a.to_string(), c, l.map(str::to_string))));
    // ring and ring-2r2w agree at each channel count; the channels change the bits.
    let class = |i: usize| configs[i]["class"].as_u64().unwrap();
    assert_eq!((class(0), class(1)), (class(2), class(3)));
    assert_ne!(class(0), class(1));
    assert_eq!(v["swept"], serde_json::json!(["algo", "channels"]));
    assert_eq!(v["invariant"]["channels"], serde_json::json!([]));
    let words = v["pairs"].as_array().unwrap().iter().map(|p| p["words"].as_str().unwrap()).collect::<Vec<_>>();
    assert!(words.contains(&"channels: 1 vs 3"), "{words:?}");
    // mesh of 3 channels is skipped with the reason.
    let skipped = v["skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), 1);
    assert_eq!((skipped[0]["algo"].as_str(), skipped[0]["channels"].as_str()), (Some("mesh"), Some("3")));
    assert!(skipped[0]["reason"].as_str().unwrap().contains("--channels 3 splits the flat ring"), "{skipped:?}");
}
