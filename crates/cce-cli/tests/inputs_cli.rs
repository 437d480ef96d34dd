//! Inputs a user brings to `cce allreduce` and `cce repro`: NaN and infinities are listed as
//! non-finite elements, never counted as wrong; `.npy` rank files are read by both commands
//! (so `--element` tells the story of the inputs `repro` compared); a missing rank is named.

mod common;

use std::path::{Path, PathBuf};

use common::{bad, cce, ok, tmp};

const RANKS: usize = 4;
const ELEMS: usize = 64;

/// Rank r's fp32 inputs: small multiples of 1/8 (every partial sum is exact), with a NaN at
/// rank 1 element 5, +inf at rank 2 element 40, and +inf and −inf at ranks 0 and 3 element 63.
fn inputs() -> Vec<Vec<f32>> {
    (0..RANKS)
        .map(|r| {
            let mut v: Vec<f32> = (0..ELEMS).map(|i| ((i * 7 + r * 3) % 17) as f32 / 8.0 - 1.0).collect();
            match r {
                0 => v[63] = f32::INFINITY,
                1 => v[5] = f32::NAN,
                2 => v[40] = f32::INFINITY,
                _ => v[63] = f32::NEG_INFINITY,
            }
            v
        })
        .collect()
}

fn bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// A version 1 `.npy` of fp32 `data`.
fn npy(data: &[f32]) -> Vec<u8> {
    common::npy_v1(&format!("{{'descr': '<f4', 'fortran_order': False, 'shape': ({},), }}", data.len()), &bytes(data))
}

/// A fresh directory holding `files` (name, bytes).
fn dir(name: &str, files: &[(String, Vec<u8>)]) -> PathBuf {
    common::files_dir(name, files)
}

/// The inputs as `name/rank{r}.bin` (each test its own directory: the tests run at once).
fn bin_dir(name: &str) -> PathBuf {
    let files: Vec<_> = inputs().iter().enumerate().map(|(r, v)| (format!("rank{r}.bin"), bytes(v))).collect();
    dir(name, &files)
}

fn npy_dir() -> PathBuf {
    let files: Vec<_> = inputs().iter().enumerate().map(|(r, v)| (format!("rank{r}.npy"), npy(v))).collect();
    dir("in-npy", &files)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn allreduce(d: &Path, extra: &[&str]) -> Vec<String> {
    let mut v: Vec<String> =
        ["allreduce", "--ranks", "4", "--algo", "ring", "--op", "add", "--dtype", "fp32"].map(String::from).to_vec();
    v.extend(["--input-dir".to_string(), s(d).to_string()]);
    v.extend(extra.iter().map(|x| x.to_string()));
    v
}

fn run(args: &[String]) -> serde_json::Value {
    ok(&args.iter().map(String::as_str).collect::<Vec<_>>())
}

#[test]
fn nan_and_infinite_inputs_are_listed_not_wrong() {
    let d = bin_dir("in-bin-nonfinite");
    let v = run(&allreduce(&d, &[]));
    assert_eq!(v["wrong"], 0, "{v}");
    assert_eq!(v["nonfinite"], serde_json::json!({"count": 3, "first": [5, 40, 63]}));
    assert_eq!(v["ranks_identical"], true);
    // The other 61 elements are exact sums of eighths: no error at all.
    assert_eq!(v["max_abs_err"], 0.0);

    let text = cce(&allreduce(&d, &[]).iter().map(String::as_str).collect::<Vec<_>>());
    let out = String::from_utf8_lossy(&text.stdout);
    assert!(out.contains("#wrong 0 "), "{out}");
    assert!(out.contains("3 elements have a NaN or an infinity among their inputs"), "{out}");
    assert!(out.contains("(first: 5, 40, 63)"), "{out}");

    // repro: the same elements, in every class.
    let v =
        run(&["repro", "--ranks", "4", "--algo", "ring,mesh", "--dtype", "fp32", "--input-dir", s(&d)]
            .map(String::from));
    let classes = v["class_errors"].as_array().unwrap();
    assert!(!classes.is_empty());
    for c in classes {
        assert_eq!(c["wrong"], 0, "{c}");
        assert_eq!(c["nonfinite"], serde_json::json!({"count": 3, "first": [5, 40, 63]}), "{c}");
    }
}

#[test]
fn finite_inputs_list_nothing() {
    let mut ins = inputs();
    ins[0][63] = 0.5;
    ins[1][5] = 0.5;
    ins[2][40] = 0.5;
    ins[3][63] = 0.5;
    let files: Vec<_> = ins.iter().enumerate().map(|(r, v)| (format!("rank{r}.bin"), bytes(v))).collect();
    let d = dir("in-finite", &files);
    let v = run(&allreduce(&d, &[]));
    assert_eq!(v["nonfinite"], serde_json::json!({"count": 0, "first": []}));
    assert_eq!(v["wrong"], 0);
}

#[test]
fn npy_inputs_run_as_the_same_bin_inputs() {
    let (b, n) = (bin_dir("in-bin-npy"), npy_dir());
    let from_bin = run(&allreduce(&b, &["--output-dir", s(&tmp("out-bin"))]));
    let from_npy = run(&allreduce(&n, &["--output-dir", s(&tmp("out-npy"))]));
    for k in ["wrong", "nonfinite", "max_ulp_err", "ranks_identical"] {
        assert_eq!(from_bin[k], from_npy[k], "{k}");
    }
    for r in 0..RANKS {
        let a = std::fs::read(tmp("out-bin").join(format!("rank{r}.bin"))).unwrap();
        assert_eq!(a, std::fs::read(tmp("out-npy").join(format!("rank{r}.bin"))).unwrap(), "rank {r}");
        assert_eq!(a.len(), ELEMS * 4);
    }
    // Element 9's story reads the .npy's data, not its header: the same operands as the .bin's.
    let story_bin = run(&allreduce(&b, &["--element", "9", "--rank", "2"]));
    let story_npy = run(&allreduce(&n, &["--element", "9", "--rank", "2"]));
    assert_eq!(story_bin, story_npy);
    let leaf = ((9 * 7) % 17) as f64 / 8.0 - 1.0;
    assert!(story_npy.to_string().contains(&format!("{leaf}")), "rank 0's element 9 is {leaf}: {story_npy}");
}

#[test]
fn element_and_rank_out_of_range_name_the_range() {
    let base = ["allreduce", "--ranks", "4", "--algo", "ring", "--op", "add", "--dtype", "bf16", "--elems", "64"];
    let with = |extra: &[&str]| {
        let mut v = base.to_vec();
        v.extend(extra);
        bad(&v)
    };
    assert!(with(&["--element", "-1"]).contains("--element -1 is before the run's 64 elements per rank (0..=63)"));
    assert!(with(&["--element", "64"]).contains("--element 64 is past the run's 64 elements per rank (0..=63)"));
    assert!(with(&["--element", "3", "--rank", "9"]).contains("--rank 9: the run has ranks 0..=3"));
    assert!(with(&["--element", "3", "--rank", "-2"]).contains("--rank -2: the run has ranks 0..=3"));
}

#[test]
fn a_missing_rank_is_named_by_repro_and_allreduce() {
    let files: Vec<_> = [0, 1, 3].iter().map(|&r| (format!("rank{r}.bin"), bytes(&inputs()[r]))).collect::<Vec<_>>();
    let d = dir("in-gap", &files);
    let e = bad(&["repro", "--ranks", "3", "--algo", "ring", "--dtype", "fp32", "--input-dir", s(&d)]);
    assert!(e.contains("rank2.bin (or .npy) is missing, and "), "{e}");
    let e = bad(&allreduce(&d, &[]).iter().map(String::as_str).collect::<Vec<_>>());
    assert!(e.contains("rank2.bin (or .npy) is missing, and "), "{e}");
    // Fewer files than --ranks: named with the rank count.
    let two = dir("in-two", &files[..2]);
    let e = bad(&allreduce(&two, &[]).iter().map(String::as_str).collect::<Vec<_>>());
    assert!(e.contains("rank2.bin (or .npy) is missing: the run has 4 ranks"), "{e}");
}

/// A flat ring's story over many ranks: each step's line shows a long operand order by its leaf
/// count, so the text grows with the ranks, not their square; the JSON keeps
/// every order whole.
#[test]
fn a_long_story_elides_long_operand_orders_in_its_text() {
    let line = "allreduce --ranks 512 --algo ring --op add --dtype bf16 --elems 512 --element 3";
    let out = cce(&line.split_whitespace().collect::<Vec<_>>());
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    let steps: Vec<&str> = text.lines().filter(|l| l.starts_with("  rank ")).collect();
    // 511 reduces round the ring, then 510 copies from the chunk's owner on to rank 0.
    assert_eq!(steps.len(), 511 + 510, "one line per step that touches the element");
    assert!(steps.iter().all(|l| l.len() < 400), "every step's line is short");
    let last = steps.last().unwrap();
    assert!(last.contains("(order of 512 leaves)"), "{last}");
    let v = ok(&line.split_whitespace().collect::<Vec<_>>());
    let whole =
        v["element"]["steps"].as_array().unwrap().last().unwrap()["operands"][0]["expr"].as_str().unwrap().to_string();
    assert_eq!(whole.matches('+').count(), 511, "the JSON's order is whole: {}", &whole[..80]);
}
