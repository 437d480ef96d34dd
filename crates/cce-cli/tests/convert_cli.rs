//! `cce convert`: round trips, refusals, SR determinism across threads. The conversions
//! themselves are checked against ml_dtypes in cce-numerics' tests.

mod common;

use common::{bad, cce, tmp};

#[test]
fn widening_then_narrowing_is_identity() {
    // Every finite bf16 pattern: bf16 -> fp32 is exact, fp32 -> bf16 gives it back.
    let all: Vec<u8> = (0..=u16::MAX).filter(|b| b >> 7 & 0xFF != 0xFF).flat_map(|b| b.to_le_bytes()).collect();
    let (a, w, n) = (tmp("cv-a"), tmp("cv-w"), tmp("cv-n"));
    std::fs::write(&a, &all).unwrap();
    for (from, to, i, o) in [("bf16", "fp32", &a, &w), ("fp32", "bf16", &w, &n)] {
        let out = cce(&[
            "convert",
            "--from",
            from,
            "--to",
            to,
            "--input",
            i.to_str().unwrap(),
            "--output",
            o.to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    }
    assert_eq!(std::fs::read(&w).unwrap().len(), all.len() * 2);
    assert_eq!(std::fs::read(&n).unwrap(), all);
}

#[test]
fn refusals_and_sr_threads() {
    let a = tmp("cv-odd");
    std::fs::write(&a, [0u8; 7]).unwrap();
    let o = tmp("cv-never");
    let _ = std::fs::remove_file(&o);
    let (a, os) = (a.to_str().unwrap(), o.to_str().unwrap());
    assert!(bad(&["convert", "--from", "fp32", "--to", "bf16", "--input", a, "--output", os]).contains("multiple"));
    assert!(bad(&["convert", "--from", "fp32r", "--to", "bf16", "--input", a, "--output", os]).contains("fp32r"));
    assert!(bad(&["convert", "--from", "bf17", "--to", "bf16", "--input", a, "--output", os]).contains("bf17"));
    assert!(
        bad(&["convert", "--from", "u8", "--to", "bf16", "--input", "/nonexistent", "--output", os])
            .contains("nonexistent")
    );
    assert!(!o.exists());
    let big = tmp("cv-big");
    let data: Vec<u8> = (0..400_000u32).flat_map(|i| (1.0f32 + i as f32 * 1e-7).to_le_bytes()).collect();
    std::fs::write(&big, data).unwrap();
    let mut outs = Vec::new();
    for t in ["1", "2"] {
        let o = tmp(&format!("cv-sr{t}"));
        let out = cce(&[
            "convert",
            "--from",
            "fp32",
            "--to",
            "fp8e4",
            "--rounding",
            "sr",
            "--seed",
            "5",
            "--threads",
            t,
            "--input",
            big.to_str().unwrap(),
            "--output",
            o.to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(0));
        outs.push(std::fs::read(&o).unwrap());
    }
    assert_eq!(outs[0], outs[1]);
}

#[test]
fn gen_streams_every_block_in_order_and_leaves_devices_alone() {
    // 3 Mi + 5 i32 elements of the ramp: many of the writer's blocks and a short last one;
    // element i must hold i.
    let n = (3 << 20) + 5;
    let f = tmp("gen-ramp");
    let out = cce(&["gen", "--dtype", "i32", "--elems", &n.to_string(), "--values", "ramp", "-o", f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let bytes = std::fs::read(&f).unwrap();
    assert_eq!(bytes.len(), 4 * n);
    for (i, c) in bytes.chunks_exact(4).enumerate() {
        assert_eq!(i32::from_le_bytes([c[0], c[1], c[2], c[3]]), i as i32, "element {i}");
    }
    // A device is written, never renamed over: /dev/null stays what it was.
    let was_file = std::fs::metadata("/dev/null").is_ok_and(|m| m.is_file());
    let out = cce(&["gen", "--dtype", "bf16", "--elems", "1000", "-o", "/dev/null"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    if !was_file {
        assert!(!std::fs::metadata("/dev/null").unwrap().is_file(), "/dev/null was replaced by a file");
    }
}
