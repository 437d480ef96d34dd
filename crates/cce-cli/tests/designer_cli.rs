//! The collective designer's view: `--explain` lists every algorithm's model time and `auto`
//! takes the least of the printed times; the model counts the packets and descriptors the
//! engine then runs; `--trace` writes a Chrome trace with a process per rank, every packet once
//! and flows that start before they end; `--sweep --plot` draws one series per algorithm.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use common::{bad, cce, ok, tmp};
use serde_json::Value;

const ALGOS: [&str; 5] = ["ring", "ring-2r2w", "kangaring", "mesh", "rdh"];

/// A command line's words (no argument here holds a space).
fn words(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

fn explain(ranks: usize, elems: u64, extra: &[&str]) -> Value {
    let (r, e) = (ranks.to_string(), elems.to_string());
    let mut args = vec!["allreduce", "--ranks", &r, "--algo", "auto", "--op", "add", "--dtype", "bf16"];
    args.extend(["--elems", &e, "--explain"]);
    args.extend(extra);
    ok(&args)
}

/// The algorithm with the least printed model time (the first listed on a tie).
fn argmin(v: &Value) -> String {
    let mut best: Option<(f64, &str)> = None;
    for c in v["candidates"].as_array().unwrap() {
        if let Some(t) = c["model_seconds"].as_f64() {
            if best.is_none_or(|(b, _)| t < b) {
                best = Some((t, c["algo"].as_str().unwrap()));
            }
        }
    }
    best.unwrap().1.to_string()
}

#[test]
fn auto_takes_the_least_printed_model_time() {
    let mut chosen = BTreeSet::new();
    for ranks in [2usize, 4, 6, 8, 16, 48, 64] {
        for elems in [256u64, 1 << 16, 1 << 20, 1 << 24] {
            let v = explain(ranks, elems, &[]);
            let cands = v["candidates"].as_array().unwrap();
            let names: Vec<&str> = cands.iter().map(|c| c["algo"].as_str().unwrap()).collect();
            assert_eq!(names, ALGOS, "every algorithm, in order");
            for c in cands {
                match c["model_seconds"].as_f64() {
                    Some(t) => assert!(t > 0.0 && c["packets"].as_u64().unwrap() > 0, "{c}"),
                    None => assert!(c["refused"].as_str().is_some_and(|w| !w.is_empty()), "{c}"),
                }
            }
            let refused = |a: &str| cands.iter().any(|c| c["algo"] == a && c["model_seconds"].is_null());
            assert_eq!(refused("rdh"), !ranks.is_power_of_two(), "R={ranks}");
            assert_eq!(refused("mesh"), ranks > 32, "R={ranks}");
            assert_eq!(v["algo"].as_str().unwrap(), argmin(&v), "R={ranks} elems={elems}: {v}");
            chosen.insert(argmin(&v));
        }
    }
    // The model is not a constant answer: several algorithms win somewhere.
    assert!(chosen.len() >= 3, "{chosen:?}");
    // A size far beyond this machine is modelled all the same (nothing is allocated).
    let v = explain(64, 1 << 29, &[]);
    assert!(v["candidates"][0]["model_seconds"].as_f64().unwrap() > 0.0);
}

#[test]
fn explain_shows_every_parameter_and_obeys_its_flag() {
    let base = explain(32, 1 << 20, &[]);
    let params: BTreeMap<String, Value> = base["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["name"].as_str().unwrap().to_string(), p.clone()))
        .collect();
    for (name, flag) in [
        ("engines", "--engines"),
        ("dma_gbps", "--dma-gbps"),
        ("cce_rate", "--cce-rate"),
        ("alpha_ns", "--alpha-ns"),
        ("hbm_gbps", "--hbm-gbps"),
        ("cores_per_chip", "--cores-per-chip"),
        ("link_gbps", "--link-gbps"),
        ("inter_link_gbps", "--inter-link-gbps"),
        ("efa_per_node", "--efa-per-node"),
        ("latency_us", "--latency-us"),
        ("inter_latency_us", "--inter-latency-us"),
        ("ranks_per_node", "--ranks-per-node"),
        ("launch_us", "--launch-us"),
        ("step_us", "--step-us"),
        ("dma_share", "--dma-share"),
    ] {
        let p = &params[name];
        assert_eq!(p["flag"], flag);
        assert!(["MED", "MODEL"].contains(&p["tag"].as_str().unwrap()), "{p}");
        assert!(!p["source"].as_str().unwrap().is_empty());
        // The flag sets the value it shows, and the model times change with it.
        let value = if ["cce_rate", "dma_share"].contains(&name) { "0.25" } else { "3" };
        let v = explain(32, 1 << 20, &[flag, value]);
        let shown = v["parameters"].as_array().unwrap().iter().find(|q| q["name"] == name).unwrap()["value"].clone();
        let want: f64 = value.parse().unwrap();
        assert!((shown.as_f64().unwrap() - want).abs() < 1e-9 * want, "{flag}: {shown}");
        let t = |v: &Value| -> Vec<f64> {
            v["candidates"].as_array().unwrap().iter().filter_map(|c| c["model_seconds"].as_f64()).collect()
        };
        if !["inter_link_gbps", "inter_latency_us", "efa_per_node"].contains(&name) {
            assert_ne!(t(&v), t(&base), "{flag} {value} changes no model time");
        }
    }
    // The EFA interfaces count where bytes cross nodes: 4 nodes of 8, a hierarchy's all-reduce
    // sends each local index's bytes through its chip's interface.
    let efa = |n: &str| {
        let v = explain(32, 1 << 24, &["--ranks-per-node", "8", "--cores-per-chip", "1", "--efa-per-node", n]);
        v["candidates"].as_array().unwrap().iter().filter_map(|c| c["model_seconds"].as_f64()).collect::<Vec<_>>()
    };
    assert_ne!(efa("1"), efa("8"), "--efa-per-node changes no model time across nodes");
    // Across nodes the inter-node figures count.
    let one = explain(8, 1 << 20, &["--ranks-per-node", "4"]);
    let slow = explain(8, 1 << 20, &["--ranks-per-node", "4", "--inter-latency-us", "100"]);
    assert!(slow["candidates"][0]["model_seconds"].as_f64() > one["candidates"][0]["model_seconds"].as_f64());
    // The instance types' defaults differ where their public figures do.
    let v2 = explain(8, 1 << 20, &["--instance", "trn1"]);
    let v4 = explain(8, 1 << 20, &["--instance", "trn3"]);
    assert_eq!(v2["instance"], "trn1");
    assert_ne!(v2["parameters"], v4["parameters"]);
    // The text form: every parameter with its tag, every algorithm, the choice.
    let out = cce(&words("allreduce --ranks 6 --algo auto --op add --dtype bf16 --elems 4096 --explain"));
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0));
    for name in params.keys() {
        assert!(text.contains(name.as_str()), "{name}: {text}");
    }
    assert!(text.contains("rdh") && text.contains("refused: rdh pairs ranks"), "{text}");
    assert!(text.contains("auto chooses"), "{text}");
    for bad_args in
        [&["--instance", "trn9"][..], &["--engines", "0"], &["--latency-us", "-1"], &["--cores-per-chip", "0"]]
    {
        let mut a =
            vec!["allreduce", "--ranks", "4", "--algo", "auto", "--op", "add", "--dtype", "bf16", "--elems", "64"];
        a.extend(bad_args);
        a.push("--explain");
        bad(&a);
    }
}

/// The model plans the rings the engine runs: its packet and descriptor counts are the run's.
#[test]
fn the_model_counts_the_packets_the_engine_runs() {
    for (ranks, elems) in [(4usize, 5000u64), (8, 70_000), (6, 999)] {
        let v = explain(ranks, elems, &[]);
        for c in v["candidates"].as_array().unwrap() {
            if c["model_seconds"].is_null() {
                continue;
            }
            let (r, e) = (ranks.to_string(), elems.to_string());
            let algo = c["algo"].as_str().unwrap();
            let run =
                ok(&["allreduce", "--ranks", &r, "--algo", algo, "--op", "add", "--dtype", "bf16", "--elems", &e]);
            assert_eq!(run["algo"], algo);
            assert_eq!(run["packets"], c["packets"], "{algo} R={ranks}");
            assert_eq!(run["descriptors"], c["descriptors"], "{algo} R={ranks}");
            assert_eq!(run["model_seconds"], c["model_seconds"], "{algo} R={ranks}");
            assert_eq!(run["steps"], c["steps"], "{algo} R={ranks}");
        }
        // auto runs the chosen algorithm and reports the candidates it chose from.
        let (r, e) = (ranks.to_string(), elems.to_string());
        let run = ok(&["allreduce", "--ranks", &r, "--algo", "auto", "--op", "add", "--dtype", "bf16", "--elems", &e]);
        assert_eq!(run["algo"], v["algo"]);
        assert_eq!(run["candidates"], v["candidates"]);
        assert_eq!(run["wrong"], 0);
    }
}

#[test]
fn the_trace_has_a_process_per_rank_every_packet_once_and_forward_flows() {
    for algo in ALGOS {
        let ranks = 4usize;
        let path = tmp(&format!("trace-{algo}.json"));
        let p = path.to_str().unwrap();
        let run = ok(&[
            "allreduce",
            "--ranks",
            "4",
            "--algo",
            algo,
            "--op",
            "add",
            "--dtype",
            "bf16",
            "--elems",
            "9000",
            "--trace",
            p,
        ]);
        let trace: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).expect("the trace is JSON");
        let events = trace["traceEvents"].as_array().unwrap();
        // One process per rank (and one for the links' counters).
        let procs: BTreeMap<u64, String> = events
            .iter()
            .filter(|e| e["ph"] == "M" && e["name"] == "process_name")
            .map(|e| (e["pid"].as_u64().unwrap(), e["args"]["name"].as_str().unwrap().to_string()))
            .collect();
        for q in 0..ranks as u64 {
            assert_eq!(procs[&q], format!("rank {q}"));
        }
        assert_eq!(procs.len(), ranks + 1);
        assert_eq!(procs[&(ranks as u64)], "links");
        // Every packet of the run exactly once: per rank, sequence numbers 0..n without gaps.
        let packets: Vec<&Value> = events.iter().filter(|e| e["cat"] == "packet").collect();
        assert_eq!(packets.len() as u64, run["packets"].as_u64().unwrap(), "{algo}");
        let mut seen: BTreeMap<u64, BTreeSet<u64>> = BTreeMap::new();
        for e in &packets {
            assert_eq!(e["ph"], "X");
            assert!(e["dur"].as_f64().unwrap() > 0.0 && e["ts"].as_f64().unwrap() >= 0.0);
            assert!(e["tid"].as_u64().unwrap() < 16, "one of the rank's 16 engines");
            assert!(e["args"]["measured_step_us"].as_f64().is_some(), "the measured step is attached");
            assert!(seen.entry(e["pid"].as_u64().unwrap()).or_default().insert(e["args"]["packet"].as_u64().unwrap()));
        }
        for (q, s) in &seen {
            assert_eq!(s.iter().copied().collect::<Vec<_>>(), (0..s.len() as u64).collect::<Vec<_>>(), "rank {q}");
        }
        let per_rank: Vec<u64> =
            run["per_rank"].as_array().unwrap().iter().map(|r| r["packets"].as_u64().unwrap()).collect();
        for (q, n) in per_rank.iter().enumerate() {
            assert_eq!(seen.get(&(q as u64)).map_or(0, |s| s.len() as u64), *n, "{algo} rank {q}");
        }
        // Flows: each id starts once and ends once, the start first.
        let mut flows: BTreeMap<u64, (Option<f64>, Option<f64>)> = BTreeMap::new();
        for e in events.iter().filter(|e| e["cat"] == "flow") {
            let f = flows.entry(e["id"].as_u64().unwrap()).or_default();
            let ts = e["ts"].as_f64();
            match e["ph"].as_str().unwrap() {
                "s" => assert!(f.0.replace(ts.unwrap()).is_none()),
                "f" => assert!(f.1.replace(ts.unwrap()).is_none()),
                ph => panic!("{ph}"),
            }
        }
        assert!(!flows.is_empty(), "{algo}: the gather reads what the reduce wrote");
        for (id, (s, f)) in flows {
            let (s, f) = (s.unwrap(), f.unwrap());
            assert!(s < f, "{algo}: flow {id} starts at {s} and ends at {f}");
        }
        // Bytes in flight never go below zero and end at zero.
        let mut last: BTreeMap<String, i64> = BTreeMap::new();
        for e in events.iter().filter(|e| e["ph"] == "C") {
            let b = e["args"]["bytes"].as_i64().unwrap();
            assert!(b >= 0);
            last.insert(e["name"].as_str().unwrap().to_string(), b);
        }
        assert!(!last.is_empty() && last.values().all(|&b| b == 0), "{algo}: {last:?}");
    }
    // Too many steps for a trace, even drawn alone: refused before anything runs.
    let p = tmp("big.json");
    let big = format!("allreduce --ranks 1024 --algo ring --op add --dtype bf16 --elems 2048 --trace {}", p.display());
    let err = bad(&words(&big));
    assert!(err.contains("trace would hold") && err.contains("steps drawn alone"), "{err}");
    assert!(!p.exists());
}

#[test]
fn the_sweep_plot_has_a_measured_and_a_model_series_per_algorithm() {
    for (ranks, algos) in [("4", &ALGOS[..]), ("6", &ALGOS[..4])] {
        let path = tmp(&format!("busbw-{ranks}.svg"));
        let line = format!(
            "allreduce --ranks {ranks} --algo auto --op add --dtype bf16 --sweep 1024:8192 --plot {}",
            path.display()
        );
        let out = cce(&words(&line));
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        let text = std::fs::read_to_string(&path).unwrap();
        let doc = roxmltree::Document::parse(&text).expect("the plot is XML");
        assert_eq!(doc.root_element().tag_name().name(), "svg");
        let lines: BTreeSet<&str> = doc
            .descendants()
            .filter(|n| n.has_tag_name("polyline") && n.attribute("data-role") == Some("line"))
            .filter_map(|n| n.attribute("data-series"))
            .collect();
        assert_eq!(lines.len(), 2 * algos.len(), "R={ranks}: one simulator and one model line per algorithm");
        let texts: Vec<&str> = doc.descendants().filter(|n| n.has_tag_name("text")).filter_map(|n| n.text()).collect();
        for a in algos {
            for kind in ["simulator on this CPU", "Trainium model"] {
                let name = format!("{a} {kind}");
                assert!(texts.iter().any(|t| t.trim() == name), "R={ranks}: no legend entry {name}");
            }
        }
        assert!(!texts.iter().any(|t| t.contains("rdh")) || algos.contains(&"rdh"), "R={ranks}: rdh cannot run");
        // auto's choice is marked at every size (4 sizes), labelled where it changes.
        let marks =
            doc.descendants().filter(|n| n.has_tag_name("circle") && n.attribute("class") == Some("mark")).count();
        assert_eq!(marks, 4, "R={ranks}: {marks} marks");
        assert!(texts.iter().any(|t| t.trim().starts_with("auto: ")), "R={ranks}");
    }
}

/// A named algorithm is modelled alone; `auto` stops a large candidate once it cannot win, and
/// the time it shows then is a lower bound of that algorithm's whole model.
#[test]
fn a_named_algorithm_is_modelled_alone_and_a_stopped_one_shows_a_lower_bound() {
    let named = ok(&words("allreduce --ranks 16 --algo kangaring --op add --dtype bf16 --elems 65536 --explain"));
    assert_eq!(named["compared"], false);
    let c = named["candidates"].as_array().unwrap();
    assert_eq!(c.len(), 1);
    assert_eq!(c[0]["algo"], "kangaring");
    let auto = explain(16, 65536, &[]);
    assert_eq!(auto["compared"], true);
    let same = auto["candidates"].as_array().unwrap().iter().find(|c| c["algo"] == "kangaring").unwrap();
    assert_eq!(same["model_seconds"], c[0]["model_seconds"]);
    // 1024 ranks: the flat rings' schedules (2M steps) stop; the hierarchies win.
    let big = explain(1024, 1 << 20, &[]);
    let chosen = big["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["model_seconds"].as_f64())
        .fold(f64::INFINITY, f64::min);
    let stopped: Vec<&Value> =
        big["candidates"].as_array().unwrap().iter().filter(|c| c["stopped"].is_string()).collect();
    assert!(!stopped.is_empty(), "{big}");
    for s in stopped {
        let at_least = s["at_least_seconds"].as_f64().unwrap();
        assert!(at_least > chosen, "{s}");
        let algo = s["algo"].as_str().unwrap();
        if algo != "hier" {
            let line = format!("allreduce --ranks 1024 --algo {algo} --op add --dtype bf16 --elems 1048576 --explain");
            let whole = ok(&words(&line));
            assert!(whole["candidates"][0]["model_seconds"].as_f64().unwrap() >= at_least, "{algo}");
        }
    }
}
