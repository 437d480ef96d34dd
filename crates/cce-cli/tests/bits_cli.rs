//! The bit commands' CLI contract: JSON shapes, exit codes, one-line errors, no panics.

mod common;

use common::{bad, cce, ok};

#[test]
fn encode_fma_meta_ctrl() {
    let v = ok(&[
        "encode",
        "fma-meta-ctrl",
        "--sub",
        "1",
        "--in-dt",
        "bf16",
        "--scale-dt",
        "fp32",
        "--accum-dt",
        "10",
        "--f4",
        "1",
        "--f5",
        "1",
        "--f6",
        "1",
    ]);
    assert_eq!(v["encoder"], "fma-meta-ctrl");
    assert_eq!(v["words"], serde_json::json!([0x021A_A6D1u32]));
    assert_eq!(v["bytes_hex"], "d1a61a02");
}

#[test]
fn encode_min_max_meta_ctrl_drops_out_dt_without_use_const() {
    let with = ok(&[
        "encode",
        "min-max-meta-ctrl",
        "--sub",
        "2",
        "--const-dt",
        "3",
        "--in-dt",
        "bf16",
        "--out-dt",
        "bf16",
        "--accum-dt",
        "fp32",
        "--notif",
        "1",
        "--use-const",
        "1",
        "--last",
        "1",
    ]);
    assert_eq!(with["words"][0], 0x023A_66B2u32);
    let without = ok(&[
        "encode",
        "min-max-meta-ctrl",
        "--sub",
        "2",
        "--const-dt",
        "3",
        "--in-dt",
        "bf16",
        "--out-dt",
        "bf16",
        "--accum-dt",
        "fp32",
        "--notif",
        "1",
        "--last",
        "1",
    ]);
    assert_eq!(without["words"][0], 0x023A_0692u32);
}

#[test]
fn encode_every_meta_ctrl_encoder() {
    assert_eq!(
        ok(&["encode", "add-meta-ctrl", "--out-dt", "bf16", "--accum-dt", "fp32", "--last", "1"])["words"][0],
        0x020A_6080u32
    );
    assert_eq!(
        ok(&[
            "encode",
            "gradient-meta-ctrl",
            "--sub",
            "5",
            "--in-dt",
            "bf16",
            "--scale-dt",
            "fp32",
            "--accum-dt",
            "fp32",
            "--wrbar",
            "1",
            "--last",
            "1"
        ])["words"][0],
        0x025A_A6C5u32
    );
    assert_eq!(
        ok(&["encode", "ext-meta-ctrl", "--sub", "3", "--mid-dt", "bf16", "--accum-dt", "fp32"])["words"][0],
        0x024A_6003u32
    );
    assert_eq!(ok(&["encode", "replication-meta-ctrl", "--mode", "1"])["words"][0], 0x24A0_0000u32);
}

#[test]
fn encode_fma_descriptor_of_example_9_2() {
    let v = ok(&["encode", "fma-descriptor", "--a-sel", "1", "--b-sel", "2", "--c-sel", "0", "--scale", "0.5"]);
    assert_eq!(v["words"], serde_json::json!([0x0080_0000u32, 0x0210_0000u32, 0x0900_0000u32, 0x3F00_0000u32]));
    assert_eq!(v["bytes_hex"], "000080000000100200000009".to_string() + "0000003f");
    // Negative scales parse; names work for selectors.
    let v = ok(&[
        "encode",
        "fma-descriptor",
        "--scale",
        "-1.5",
        "--a-sel",
        "input",
        "--b-sel",
        "scale",
        "--meta-idx",
        "0x12",
        "--wb",
        "0x345",
        "--sema",
        "0xABCDEF",
        "--a8",
        "5",
        "--sub",
        "3",
        "--a10",
        "1",
    ]);
    assert_eq!(v["words"], serde_json::json!([0x1280_0345u32, 0xA610_0003u32, 0x09AB_CDEFu32, 0xBFC0_0000u32]));
}

#[test]
fn encode_min_max_and_seed_init_descriptors() {
    let v = ok(&[
        "encode",
        "min-max-descriptor",
        "--meta-idx",
        "1",
        "--constant",
        "0x7F7FFFFF",
        "--length",
        "2048",
        "--use-const",
        "1",
        "--const-dt",
        "6",
    ]);
    assert_eq!(v["words"], serde_json::json!([0x0180_0000u32, 0x0660_0000u32, 0x0200_0800u32, 0x7F7F_FFFFu32]));
    let v = ok(&["encode", "seed-init-descriptor", "--seed-en", "1"]);
    assert_eq!(v["words"], serde_json::json!([0x0080_0000u32, 0x0600_0000u32, 0, 0]));
}

#[test]
fn out_of_range_fields_name_field_and_range() {
    let e = bad(&["encode", "fma-meta-ctrl", "--sub", "8"]);
    assert!(e.contains("--sub") && e.contains("0..=7"), "{e}");
    let e = bad(&["encode", "fma-descriptor", "--sema", "0x1000000"]);
    assert!(e.contains("--sema") && e.contains("24 bits"), "{e}");
    let e = bad(&["encode", "fma-descriptor", "--wb", "0x800000"]);
    assert!(e.contains("--wb") && e.contains("23 bits"), "{e}");
    let e = bad(&["encode", "min-max-meta-ctrl", "--const-dt", "fp32"]);
    assert!(e.contains("--const-dt") && e.contains("0..=7"), "{e}");
    let e = bad(&["encode", "add-meta-ctrl", "--last", "2"]);
    assert!(e.contains("--last") && e.contains("0..=1"), "{e}");
    bad(&["encode", "fma-meta-ctrl", "--in-dt", "bfloat16"]);
    bad(&["encode", "fma-meta-ctrl", "--in-dt", "16"]);
    bad(&["encode", "fma-meta-ctrl", "--sub", "0xZZ"]);
    bad(&["encode", "fma-meta-ctrl", "--nonsense", "1"]);
    bad(&["encode", "fma-descriptor", "--scale", "half"]);
    let e = bad(&["encode", "no-such-encoder"]);
    assert!(e.contains("unknown encoder"), "{e}");
}

#[test]
fn decode_fields_with_tags() {
    let v = ok(&["decode", "fma-descriptor", "000080000000100200000009", "0000003f"]);
    assert_eq!(v["exact"], true);
    assert_eq!(v["fields"]["a-sel"]["operand"], "input");
    assert_eq!(v["fields"]["b-sel"]["operand"], "scale");
    assert_eq!(v["fields"]["c-sel"]["operand"], "stored");
    assert_eq!(v["fields"]["scale"]["float"], 0.5);
    assert_eq!(v["fields"]["scale"]["tag"], "HIGH");
    assert_eq!(v["fields"]["a8"]["tag"], "LOW");
    assert_eq!(v["fields"]["more"]["tag"], "MODEL");
    let v = ok(&["decode", "add-meta-ctrl", "0x020A6080"]);
    assert_eq!(v["fields"]["out-dt"]["dtype"], "bf16");
    assert_eq!(v["fields"]["last"]["value"], 1);
    // A word the encoder cannot have produced is shown, not refused.
    let v = ok(&["decode", "add-meta-ctrl", "0xFFFFFFFF"]);
    assert_eq!(v["exact"], false);
    assert!(v["unexplained_bits"][0].as_u64().unwrap() != 0);
}

#[test]
fn decode_round_trips_encode_for_every_encoder() {
    // Every input field set to 1 (valid for every kind: flags, dtypes, selectors, the scale).
    for layout in cce_format::codec::layouts() {
        let mut args = vec!["encode".to_string(), layout.name.to_string()];
        for f in layout.fields.iter().filter(|f| f.is_input()) {
            args.push(format!("--{}", f.name));
            args.push("1".to_string());
        }
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let e = ok(&argv);
        let d = ok(&["decode", layout.name, e["bytes_hex"].as_str().unwrap()]);
        assert_eq!(d["exact"], true, "{}: {d}", layout.name);
        assert_eq!(d["words"], e["words"], "{}", layout.name);
        for f in layout.fields.iter().filter(|f| f.is_input()) {
            let v = &d["fields"][f.name];
            if f.kind == cce_format::layout::FieldKind::F32Bits {
                assert_eq!(v["float"], 1.0, "{}.{}", layout.name, f.name);
            } else if f.kind == cce_format::layout::FieldKind::Pattern {
                assert_eq!(v["set"], true, "{}.{}", layout.name, f.name);
            } else {
                assert_eq!(v["value"], 1, "{}.{}", layout.name, f.name);
            }
        }
    }
}

#[test]
fn decode_meta_ctrl_lists_every_reading() {
    let v = ok(&["decode", "meta-ctrl", "0x02100000"]);
    assert_eq!(v["ambiguous"], true);
    let names: Vec<_> =
        v["readings"].as_array().unwrap().iter().map(|r| r["encoder"].as_str().unwrap().to_string()).collect();
    assert_eq!(names, ["fma-meta-ctrl", "min-max-meta-ctrl"]);
    assert!(v["readings"].as_array().unwrap().iter().all(|r| r["tag"] == "LOW"));
    let v = ok(&["decode", "meta-ctrl", "8060 0a02"]);
    assert_eq!(v["ambiguous"], false);
    assert_eq!(v["readings"][0]["encoder"], "add-meta-ctrl");
    assert_eq!(v["readings"][0]["tag"], "HIGH");
}

#[test]
fn decode_bad_hex_is_refused() {
    bad(&["decode", "fma-descriptor", "00"]);
    bad(&["decode", "fma-descriptor", "zz00800000001002000000090000003f"]);
    bad(&["decode", "add-meta-ctrl", "0x1FFFFFFFF"]);
    bad(&["decode", "cce-info", "00"]);
    bad(&["decode", "nope", "00"]);
}

#[test]
fn decode_cce_info_shows_both_union_arms() {
    let mut bytes = [0u8; 140];
    bytes[0] = 2;
    bytes[4..8].copy_from_slice(&5u32.to_le_bytes());
    bytes[8..12].copy_from_slice(&0.5f32.to_le_bytes());
    bytes[136] = 1;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let v = ok(&["decode", "cce-info", &hex]);
    assert_eq!(v["num_sources"], 2);
    assert_eq!(v["num_dests"], 1);
    assert_eq!(v["fma_info"]["scale_dtype_sdma"], "fp32");
    assert_eq!(v["fma_info"]["scale"][0], 0.5);
    assert_eq!(v["min_max_info"]["constant_dtype"], 0x3F00_0000u32);
    assert_eq!(v["min_max_info"]["use_constant"], true);
}

#[test]
fn tables_contract() {
    let v = ok(&["tables"]);
    let ops = v["ops"].as_array().unwrap();
    assert_eq!(ops.len(), 4);
    assert_eq!((ops[0]["kbin"].as_u64(), ops[0]["sdma"].as_u64()), (Some(1), Some(1)));
    assert_eq!((ops[1]["kbin"].as_u64(), ops[1]["sdma"].as_u64()), (Some(2), Some(0)));
    assert_eq!((ops[2]["kbin"].as_u64(), ops[2]["sdma"].as_u64()), (Some(3), Some(3)));
    assert_eq!((ops[3]["kbin"].as_u64(), ops[3]["sdma"].as_u64()), (Some(4), Some(2)));
    let dtypes = v["dtypes"].as_array().unwrap();
    assert_eq!(dtypes.len(), 16);
    assert_eq!(
        dtypes[10],
        serde_json::json!({"sdma": 10, "name": "fp32", "bytes": 4, "kbin_bytes": 4, "tag": "HIGH", "bytes_tag": "HIGH"})
    );
    assert_eq!(dtypes[11]["bytes"], 0);
    let kd = v["kbin_dtypes"].as_array().unwrap();
    assert_eq!(kd.len(), 15);
    assert_eq!((kd[4]["kbin"].as_u64(), kd[4]["sdma"].as_u64()), (Some(5), Some(10)));
    let archs = v["archs"].as_array().unwrap();
    assert_eq!(archs[0], serde_json::json!({"arch": 2, "max_cce_elements": 1024, "replication": false, "tag": "HIGH"}));
    assert_eq!(archs[1]["max_cce_elements"], 2048);
    assert_eq!(archs[2]["replication"], true);
}

#[test]
fn tables_show_study_section_8() {
    let v = ok(&["tables"]);
    let types = v["reduction_types"].as_array().unwrap();
    let want = [(0, "RING_2R1W", "ring"), (1, "RING_2R2W", "ring-2r2w"), (2, "KANGARING_NR1W", "kangaring")];
    assert_eq!(types.len(), want.len());
    for (row, (value, name, algorithm)) in types.iter().zip(want) {
        assert_eq!(*row, serde_json::json!({"value": value, "name": name, "algorithm": algorithm, "tag": "HIGH"}));
    }
    // Each is an algorithm `cce allreduce --algo` runs.
    let e = ok(&[
        "allreduce",
        "--ranks",
        "4",
        "--algo",
        "auto",
        "--op",
        "add",
        "--dtype",
        "bf16",
        "--elems",
        "4096",
        "--explain",
    ]);
    let names: Vec<&str> = e["candidates"].as_array().unwrap().iter().map(|c| c["algo"].as_str().unwrap()).collect();
    for (_, _, algorithm) in want {
        assert!(names.contains(&algorithm), "{algorithm}: {names:?}");
    }
    let codes = v["collective_codes"].as_array().unwrap();
    assert_eq!(
        codes,
        &[
            serde_json::json!({"field": "op", "name": "ADD", "value": 4, "sdma": 0, "sdma_name": "add", "tag": "MED"}),
            serde_json::json!({"field": "dtype", "name": "FP32", "value": 10, "sdma": 10, "sdma_name": "fp32", "tag": "MED"}),
        ]
    );
    // The text shows both, tagged; the keys before them are unchanged, in their order.
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "ops",
            "kbin_ops",
            "sdma_ops",
            "dtypes",
            "kbin_dtypes",
            "archs",
            "prio_caps",
            "max_sources",
            "fma_operands",
            "fma_default_selectors",
            "reduction_types",
            "collective_codes"
        ]
    );
    let text = String::from_utf8(cce(&["tables"]).stdout).unwrap();
    for line in [
        "reduction_type_t -> algorithm (study §8)",
        "  0      RING_2R1W       ring       HIGH",
        "  1      RING_2R2W       ring-2r2w  HIGH",
        "  2      KANGARING_NR1W  kangaring  HIGH",
        "PSEUDO_TRIGGER_COLLECTIVE -> SDMA_CCETYPE_ADD reduce packets (study §8)",
        "  op     ADD   0x04   0     add        MED",
        "  dtype  FP32  0x0a   10    fp32       MED",
    ] {
        assert!(text.lines().any(|l| l == line), "{line:?} in:\n{text}");
    }
}

#[test]
fn packet_size_contract() {
    assert_eq!(ok(&["packet-size", "--dtype", "bf16", "--elems", "1000", "--prio", "0"])["bytes"], 1984);
    assert_eq!(ok(&["packet-size", "--dtype", "fp32", "--elems", "100000", "--prio", "1"])["bytes"], 65536);
    assert_eq!(
        ok(&["packet-size", "--dtype", "fp32", "--elems", "100000", "--prio", "1", "--cap", "0"])["bytes"],
        400000
    );
    assert_eq!(ok(&["packet-size", "--dtype", "10", "--elems", "0x10", "--prio", "4", "--cap", "1000"])["bytes"], 64);
    let e = bad(&["packet-size", "--dtype", "fp32r", "--elems", "10", "--prio", "0"]);
    assert!(e.contains("fp32r"), "{e}");
    let e = bad(&["packet-size", "--dtype", "bf16", "--elems", "10", "--prio", "5", "--cap", "64"]);
    assert!(e.contains("priority"), "{e}");
    bad(&["packet-size", "--dtype", "bf16", "--elems", "-1", "--prio", "0"]);
}

#[test]
fn dtype_gate_contract() {
    assert_eq!(ok(&["dtype-gate", "--in", "bf16", "--out", "fp8e4"])["valid"], true);
    assert_eq!(ok(&["dtype-gate", "--in", "bf16", "--out", "fp32"])["valid"], false);
    assert_eq!(ok(&["dtype-gate", "--in", "bf16", "--out", "fp32", "--no-compute"])["valid"], true);
    assert_eq!(ok(&["dtype-gate", "--in", "i32", "--out", "fp32r"])["valid"], true);
    bad(&["dtype-gate", "--in", "bf17", "--out", "fp32"]);
}

#[test]
fn help_exits_zero() {
    for args in [&["--help"][..], &["encode", "--help"], &["encode", "fma-descriptor", "--help"], &["--version"]] {
        let out = cce(args);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        assert!(!out.stdout.is_empty());
    }
    // No sub-command at all is a usage error.
    assert_eq!(cce(&[]).status.code(), Some(2));
}

#[test]
fn a_closed_stdout_is_not_a_panic() {
    use std::process::{Command, Stdio};
    // The reader goes away before cce writes (`cce tables | head -0`): the write fails with
    // EPIPE, which must end the output quietly, never as a panic (exit 101).
    let mut child = Command::new(env!("CARGO_BIN_EXE_cce"))
        .arg("tables")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run cce");
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("wait for cce");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(101), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}
