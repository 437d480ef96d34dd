//! The project's generator (`scripts/msccl_gen.py`, Python, written from docs/MODEL.md apart
//! from this crate) against the checks: every schedule it writes is accepted, at every rank
//! count, in place and out of place; every defect it writes is refused in one line, and fast.

use std::process::Command;
use std::time::{Duration, Instant};

use cce_msccl::Schedule;

fn generate(args: &[&str]) -> String {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/msccl_gen.py");
    let out = Command::new("python3").arg(script).args(args).output().expect("python3 runs scripts/msccl_gen.py");
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("utf-8 XML")
}

#[test]
fn every_generated_schedule_passes() {
    let algos = [
        "ring-allreduce",
        "allpairs-allreduce",
        "hier-allreduce",
        "tree-allreduce",
        "ring-reducescatter",
        "ring-allgather",
    ];
    for algo in algos {
        for r in [2, 3, 4, 8, 16] {
            for place in ["--inplace", "--outofplace"] {
                let xml = generate(&[algo, &r.to_string(), place]);
                let s = Schedule::from_xml(&xml).unwrap_or_else(|e| panic!("{algo} R={r} {place}: {e}"));
                assert_eq!(s.program.ranks, r);
                assert_eq!(s.program.in_place, place == "--inplace", "{algo} R={r}");
            }
        }
    }
    for (algo, extra) in [("ring-allreduce", ["--chunks", "3"]), ("ring-allreduce", ["--channels", "2"])] {
        let xml = generate(&[algo, "5", extra[0], extra[1]]);
        Schedule::from_xml(&xml).unwrap_or_else(|e| panic!("{algo} {extra:?}: {e}"));
    }
    // 31 re steps fused into one 32-source packet on every rank.
    let s = Schedule::from_xml(&generate(&["allpairs-allreduce", "32"])).expect("allpairs 32");
    let sum = s.summary();
    assert_eq!((sum.max_reduce_sources, sum.fused_beyond_executor), (32, 32));
}

#[test]
fn every_generated_defect_is_refused_in_one_line_at_once() {
    for (defect, ranks, want) in [
        ("unmatched-send", "4", "an unmatched send"),
        ("reordered-recv", "4", "the allreduce is wrong"),
        ("cycle", "2", "deadlock"),
        ("offset", "4", "is outside the buffer"),
        ("unknown-type", "4", "unknown step type \"rrx\""),
        ("missing-attr", "4", "lacks the attribute cnt"),
    ] {
        let xml = generate(&["ring-allreduce", ranks, "--defect", defect]);
        let t = Instant::now();
        let e = Schedule::from_xml(&xml).expect_err(defect).to_string();
        assert!(t.elapsed() < Duration::from_secs(1), "{defect}: {:?}", t.elapsed());
        assert!(e.contains(want), "{defect}: {e}");
        assert!(e.starts_with("rank ") || e.starts_with("line "), "{defect}: names where: {e}");
        assert_eq!(e.lines().count(), 1, "{defect}: {e}");
    }
}

/// The example files the docs and `cce bench allreduce` use are the generator's output, as it
/// is now (so they are regenerated, not edited, when the generator changes).
#[test]
fn the_examples_are_the_generators() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/msccl");
    for (file, args) in [
        ("ring-allreduce-4.xml", &["ring-allreduce", "4"][..]),
        ("ring-allreduce-8.xml", &["ring-allreduce", "8"]),
        ("allpairs-allreduce-8.xml", &["allpairs-allreduce", "8"]),
        ("hier-allreduce-8.xml", &["hier-allreduce", "8", "--inplace"]),
    ] {
        let want = generate(args);
        let got = std::fs::read_to_string(format!("{dir}/{file}")).expect("the example exists");
        assert_eq!(
            got,
            want,
            "examples/msccl/{file}: python3 scripts/msccl_gen.py {} -o examples/msccl/{file}",
            args.join(" ")
        );
        Schedule::from_xml(&got).unwrap_or_else(|e| panic!("{file}: {e}"));
    }
}
