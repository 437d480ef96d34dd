//! `cce build` and `cce disasm`: contract, study examples, refusals, files.

mod common;

use common::{bad, cce, ok, tmp};
use serde_json::Value;

#[test]
fn build_json_of_example_9_1() {
    let v = ok(&[
        "build",
        "--arch",
        "3",
        "--op",
        "add",
        "--in",
        "bf16",
        "--accum",
        "fp32",
        "--out",
        "bf16",
        "--elems",
        "1024",
        "--src",
        "0x10000000",
        "--src",
        "0x20000000",
        "--src",
        "0x30000000",
        "--dst",
        "0xD0000000",
        "--json",
    ]);
    assert_eq!(v["packets"], 1);
    let tx = v["tx"].as_array().unwrap();
    assert_eq!(tx.len(), 3);
    assert!(tx.iter().all(|d| d["kind"] == "m2s-data"));
    assert_eq!(tx[0]["meta_ctrl"], 0x020A_6000u32);
    assert_eq!(tx[2]["meta_ctrl"], 0x020A_6080u32);
    assert_eq!(tx[2]["words"], serde_json::json!([0x0900_0800u32, 0x020A_6080u32, 0x3000_0000u32, 0]));
    assert_eq!(v["rx"][0]["kind"], "s2m-data");
    assert_eq!(v["rx"][0]["meta_ctrl"], Value::Null);
}

#[test]
fn build_json_of_example_9_2() {
    let v = ok(&[
        "build", "--arch", "3", "--op", "fma", "--in", "bf16", "--accum", "fp32", "--out", "bf16", "--elems", "64",
        "--src", "0x1000", "0x2000", "--dst", "0x9000", "--scale", "0.5", "--scale", "0.5", "--json",
    ]);
    let tx = v["tx"].as_array().unwrap();
    let kinds: Vec<_> = tx.iter().map(|d| d["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["fma", "m2s-data", "fma", "m2s-data"]);
    for d in [&tx[0], &tx[2]] {
        assert_eq!(d["words"][3], 0x3F00_0000u32);
        assert_eq!(d["fields"]["a-sel"]["value"], 1);
        assert_eq!(d["fields"]["b-sel"]["value"], 2);
        assert_eq!(d["fields"]["c-sel"]["value"], 0);
        assert_eq!(d["words"][1], 0x0210_0001u32);
    }
    assert_eq!(tx[1]["meta_fields"]["f4"]["value"], 0);
    assert_eq!(tx[3]["meta_fields"]["f4"]["value"], 1);
}

#[test]
fn build_refusals_carry_the_study_messages() {
    let base = [
        "build", "--in", "bf16", "--accum", "fp32", "--out", "bf16", "--elems", "64", "--src", "0x1000", "--dst",
        "0x9000",
    ];
    let with = |extra: &[&str]| -> Vec<String> {
        let arch: &[&str] = if extra.contains(&"--arch") { &[] } else { &["--arch", "3"] };
        base.iter().chain(arch).chain(extra).map(|s| s.to_string()).collect()
    };
    let run = |extra: &[&str]| {
        let a = with(extra);
        bad(&a.iter().map(String::as_str).collect::<Vec<_>>())
    };
    assert!(run(&["--op", "copy"]).contains("Unsupported CCE Op! 0"));
    assert!(run(&["--op", "transpose"]).contains("Unsupported CCE Op! 5"));
    assert!(run(&["--op", "fma", "--no-cce-info"]).contains("0x3B8"));
    assert!(
        run(&["--op", "add", "--dst", "0xA000", "--arch", "2"])
            .contains("CCE replication not supported for v1/v2 archs")
    );
    assert!(
        run(&["--op", "max", "--const", "1", "--const-dtype", "fp32"])
            .contains("Unsupported data type for min/max op fp32")
    );
    assert!(run(&["--op", "add", "--prio", "5"]).contains("priority"));
    assert!(run(&["--op", "add", "--arch", "9"]).contains("arch 9"));
    assert!(run(&["--op", "add", "--scale", "2"]).contains("fma only"));
    assert!(run(&["--op", "nonsense"]).contains("--op"));
    let many: Vec<String> = (0..32).map(|i| format!("0x{:x}", (i + 1) * 0x10000)).collect();
    let mut a = with(&["--op", "add", "--src"]);
    a.extend(many);
    assert!(bad(&a.iter().map(String::as_str).collect::<Vec<_>>()).contains("33 sources"));
    // fp32r as the in dtype fails packet sizing.
    assert!(
        bad(&[
            "build", "--arch", "3", "--op", "add", "--in", "fp32r", "--accum", "fp32", "--out", "fp32", "--elems",
            "64", "--src", "0", "--dst", "0x100"
        ])
        .contains("fp32r")
    );
}

#[test]
fn build_writes_a_file_that_disasm_reads() {
    let f = tmp("a.ring");
    let out = cce(&[
        "build",
        "--arch",
        "3",
        "--op",
        "min",
        "--in",
        "bf16",
        "--accum",
        "fp32",
        "--out",
        "bf16",
        "--elems",
        "5000",
        "--src",
        "0x1000",
        "0x100000",
        "--dst",
        "0x200000",
        "0x300000",
        "--const",
        "1.5",
        "--const-dtype",
        "bf16",
        "--rounding",
        "sr",
        "--seed",
        "9",
        "--out",
        f.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let listing = cce(&["disasm", f.to_str().unwrap()]);
    assert_eq!(listing.status.code(), Some(0));
    let text = String::from_utf8(listing.stdout).unwrap();
    assert!(
        text.contains("packet 2: min in=bf16 accum=fp32 out=bf16 elems=904 sources=2 dests=2 sr-seed=9 clamp=0x3fc0"),
        "{text}"
    );
    assert!(text.contains("seed-init") && text.contains("replication") && text.contains("min-max"), "{text}");
    assert!(text.contains("[MODEL]"), "tags of non-HIGH fields are shown");
    assert!(!text.contains("fault"), "{text}");
    let v = ok(&["disasm", f.to_str().unwrap(), "--json"]);
    assert_eq!(v["queues"][0]["packets"], 3);
    assert_eq!(v["queues"][0]["fault"], Value::Null);
    assert_eq!(v["queues"][0]["packet_list"][0]["dests"].as_array().unwrap().len(), 2);
}

#[test]
fn disasm_refuses_bad_files_and_marks_bad_packets() {
    let f = tmp("b.ring");
    assert_eq!(
        cce(&[
            "build",
            "--arch",
            "3",
            "--op",
            "add",
            "--in",
            "fp32",
            "--accum",
            "fp32",
            "--out",
            "fp32",
            "--elems",
            "4096",
            "--src",
            "0x1000",
            "--dst",
            "0x90000",
            "--out",
            f.to_str().unwrap()
        ])
        .status
        .code(),
        Some(0)
    );
    let bytes = std::fs::read(&f).unwrap();
    // Truncated, foreign, corrupt, missing.
    let t = tmp("trunc.ring");
    std::fs::write(&t, &bytes[..bytes.len() - 3]).unwrap();
    assert!(bad(&["disasm", t.to_str().unwrap()]).contains("truncated"));
    std::fs::write(&t, b"\x7fELF not a ring dump at all........").unwrap();
    assert!(bad(&["disasm", t.to_str().unwrap()]).contains("magic"));
    let mut c = bytes.clone();
    c[70] ^= 0x10;
    std::fs::write(&t, &c).unwrap();
    assert!(bad(&["disasm", t.to_str().unwrap()]).contains("checksum"));
    assert!(bad(&["disasm", "/nonexistent/cce.ring"]).contains("nonexistent"));
    std::fs::write(&t, b"").unwrap();
    bad(&["disasm", t.to_str().unwrap()]);
}

#[test]
fn out_is_dtype_or_file() {
    let f = tmp("c.ring");
    // --out FILE before --out D, and the unambiguous spellings.
    let out = cce(&[
        "build",
        "--arch",
        "4",
        "--op",
        "add",
        "--in",
        "bf16",
        "--accum",
        "fp32",
        "--out",
        f.to_str().unwrap(),
        "--out",
        "bf16",
        "--elems",
        "10",
        "--src",
        "0",
        "--dst",
        "0x100",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(f.exists());
    let out = cce(&[
        "build",
        "--arch",
        "4",
        "--op",
        "add",
        "--in",
        "bf16",
        "--accum",
        "fp32",
        "--out-dtype",
        "bf16",
        "-o",
        f.to_str().unwrap(),
        "--elems",
        "10",
        "--src",
        "0",
        "--dst",
        "0x100",
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        bad(&[
            "build", "--arch", "4", "--op", "add", "--in", "bf16", "--accum", "fp32", "--elems", "10", "--src", "0",
            "--dst", "0x100"
        ])
        .contains("missing --out")
    );
}

#[test]
fn run_executes_a_built_dump() {
    let ring = tmp("run.ring");
    let out = cce(&[
        "build",
        "--arch",
        "3",
        "--op",
        "add",
        "--in",
        "fp32",
        "--accum",
        "fp32",
        "--out",
        "fp32",
        "--elems",
        "4",
        "--src",
        "0x1000",
        "0x2000",
        "--dst",
        "0x9000",
        "0xA000",
        "--out",
        ring.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let f32s = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let (a, b) = (tmp("run-a"), tmp("run-b"));
    std::fs::write(&a, f32s(&[1.0, 2.0, 3.0, 4.0])).unwrap();
    std::fs::write(&b, f32s(&[0.5, 0.25, -3.0, 100.0])).unwrap();
    let (d1, d2) = (tmp("run-d1"), tmp("run-d2"));
    let load_a = format!("0x1000={}", a.display());
    let load_b = format!("0x2000={}", b.display());
    let dump1 = format!("0x9000:16={}", d1.display());
    let dump2 = format!("0xA000:16={}", d2.display());
    let v =
        ok(&["run", ring.to_str().unwrap(), "--load", &load_a, &load_b, "--dump", &dump1, "--dump", &dump2, "--json"]);
    assert_eq!(v["packets"], 1);
    assert_eq!(v["queues"][0]["state"], "idle");
    assert_eq!(v["queues"][0]["semaphore"], 1);
    let want = f32s(&[1.5, 2.25, 0.0, 104.0]);
    assert_eq!(std::fs::read(&d1).unwrap(), want);
    assert_eq!(std::fs::read(&d2).unwrap(), want, "replicated");
}

#[test]
fn run_reports_a_faulted_queue() {
    let ring = tmp("fault.ring");
    assert_eq!(
        cce(&[
            "build",
            "--arch",
            "3",
            "--op",
            "add",
            "--in",
            "fp32",
            "--accum",
            "fp32",
            "--out",
            "fp32",
            "--elems",
            "4",
            "--src",
            "0x1000",
            "--dst",
            "0x9000",
            "--out",
            ring.to_str().unwrap()
        ])
        .status
        .code(),
        Some(0)
    );
    let a = tmp("fault-a");
    std::fs::write(&a, [0u8; 16]).unwrap();
    let load = format!("0x1000={}", a.display());
    // The destination is not mapped: the packet faults, the queue stops, exit 1.
    let out = cce(&["run", ring.to_str().unwrap(), "--load", &load, "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["queues"][0]["state"], "faulted");
    assert!(v["queues"][0]["fault"].as_str().unwrap().contains("outside every memory region"));
    // Bad arguments are input errors.
    bad(&["run", ring.to_str().unwrap(), "--load", "nonsense"]);
    bad(&["run", ring.to_str().unwrap(), "--dump", "0x9000=x"]);
    bad(&["run", "/nonexistent.ring"]);
}
