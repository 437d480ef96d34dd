//! `cce reveal --plot`: the SVG of a reveal of cce's own all-reduce (run as the black box) holds
//! one tree per distinct `expr` of the JSON, each with one leaf label per rank of its expr, at
//! most 16 with the rest counted; a `--plot` path that cannot be written is refused before the
//! black box first runs.

mod common;

use std::collections::BTreeSet;

use common::{cce, tmp};
use serde_json::Value;

/// `cce reveal` of `cce allreduce --algo ALGO` at `ranks` x `elems` bf16, plotted to `plot`.
fn reveal(algo: &str, ranks: u32, elems: u32, plot: &str) -> (Value, String) {
    let bin = env!("CARGO_BIN_EXE_cce");
    let run = format!(
        "'{bin}' allreduce --ranks {ranks} --algo {algo} --op add --dtype bf16 --elems {elems} --input-dir {{in}} --output-dir {{out}} --check none"
    );
    let (r, n) = (ranks.to_string(), elems.to_string());
    let args = ["reveal", "--run", &run, "--ranks", &r, "--elems", &n, "--dtype", "bf16", "--json", "--plot", plot];
    let o = cce(&args);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
    (v, std::fs::read_to_string(plot).expect("the plot is written"))
}

/// The distinct (expr, accum) of the JSON's classes, in order of first appearance.
fn distinct(v: &Value) -> Vec<(String, String)> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for c in v["classes"].as_array().unwrap() {
        let key = (c["expr"].as_str().unwrap().to_string(), c["accum"].as_str().unwrap().to_string());
        if seen.insert(key.clone()) {
            out.push(key);
        }
    }
    out
}

/// The trees of the document: (data-expr, data-accum, leaf labels).
fn trees(svg: &str) -> Vec<(String, String, Vec<String>)> {
    let doc = roxmltree::Document::parse(svg).expect("the plot is XML");
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    doc.descendants()
        .filter(|n| n.attribute("class") == Some("tree"))
        .map(|g| {
            let leaves = g
                .descendants()
                .filter(|n| n.attribute("class") == Some("leaf"))
                .map(|n| n.text().unwrap_or("").to_string())
                .collect();
            (g.attribute("data-expr").unwrap().to_string(), g.attribute("data-accum").unwrap().to_string(), leaves)
        })
        .collect()
}

/// The rank numbers of an expr, in order.
fn ranks_of(expr: &str) -> Vec<String> {
    expr.split(|c: char| !c.is_ascii_digit()).filter(|s| !s.is_empty()).map(str::to_string).collect()
}

#[test]
fn the_plot_draws_one_tree_per_distinct_expr_with_a_leaf_per_rank() {
    let path = tmp("reveal-ring4.svg");
    let (v, svg) = reveal("ring", 4, 64, path.to_str().unwrap());
    assert_eq!(v["revealed"], true);
    let want = distinct(&v);
    assert_eq!(want.len(), 4, "ring at 4 ranks: a tree per chunk");
    let got = trees(&svg);
    assert_eq!(got.len(), want.len());
    for ((expr, accum, leaves), (want_expr, want_accum)) in got.iter().zip(&want) {
        assert_eq!((expr, accum), (want_expr, want_accum));
        assert_eq!(leaves, &ranks_of(expr), "{expr}: one leaf label per rank, in order");
    }
    // Every class's range is in its tree's heading.
    for c in v["classes"].as_array().unwrap() {
        assert!(svg.contains(&format!("{}..={}", c["first"], c["last"])), "{c}");
    }
}

#[test]
fn classes_that_share_a_tree_share_a_drawing_and_at_most_16_are_drawn() {
    // Mesh: every chunk is one R-source reduce, the same tree over the whole buffer.
    let path = tmp("reveal-mesh4.svg");
    let (v, svg) = reveal("mesh", 4, 64, path.to_str().unwrap());
    assert_eq!(distinct(&v).len(), trees(&svg).len());
    let multi = roxmltree::Document::parse(&svg)
        .unwrap()
        .descendants()
        .filter(|n| n.attribute("class") == Some("node") && n.attribute("data-operands") == Some("4"))
        .count();
    assert!(multi >= 1, "a 4-operand rounding is one node of 4 children: {svg}");

    // Ring at 20 ranks: 20 distinct trees, 16 drawn, the rest counted.
    let path = tmp("reveal-ring20.svg");
    let (v, svg) = reveal("ring", 20, 5120, path.to_str().unwrap());
    assert_eq!(distinct(&v).len(), 20);
    let got = trees(&svg);
    assert_eq!(got.len(), 16);
    assert!(got.iter().all(|(_, _, leaves)| leaves.len() == 20));
    assert!(svg.contains("4 more distinct trees not drawn"), "{svg}");
}

#[test]
fn a_plot_path_that_cannot_be_written_is_refused_before_any_run() {
    let marker = tmp("reveal-ran");
    let _ = std::fs::remove_file(&marker);
    let run = format!("touch '{}' {{in}} {{out}}", marker.display());
    let missing = tmp("no-such-dir").join("t.svg");
    let dir = tmp("reveal-plot-dir");
    std::fs::create_dir_all(&dir).unwrap();
    for plot in [&missing, &dir] {
        let p = plot.to_str().unwrap();
        let o = cce(&["reveal", "--run", &run, "--ranks", "4", "--elems", "64", "--dtype", "bf16", "--plot", p]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(o.stdout.is_empty());
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains(p), "the message names the path: {err}");
        assert!(!marker.exists(), "the black box ran before --plot {p} was refused");
    }
    assert!(!missing.exists());
}
