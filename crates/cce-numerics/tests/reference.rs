//! The independent oracle: numpy + ml_dtypes, through `scripts/numerics_ref.py`.
//!
//! The script's vectors are generated once into a directory under cargo's target directory
//! (`CARGO_TARGET_TMPDIR`), keyed by the script's hash. If python3, numpy or ml_dtypes is missing
//! the tests fail (they never skip) and name `scripts/test`, which installs them.

use cce_numerics::{Exec, Isa, NumType, Op, ReduceSpec, Rounding, Scalar, reduce, reduce_with};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

fn ref_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/numerics_ref.py");
        let text = std::fs::read(&script).unwrap_or_else(|e| panic!("cannot read {}: {e}", script.display()));
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in &text {
            h = (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3);
        }
        let base = Path::new(env!("CARGO_TARGET_TMPDIR"));
        let dir = base.join(format!("cce-numerics-ref-{h:016x}"));
        if dir.join("manifest.json").exists() {
            return dir;
        }
        let tmp = base.join(format!("cce-numerics-ref-{h:016x}.tmp{}", std::process::id()));
        let out = std::process::Command::new("python3").arg(&script).arg(&tmp).output();
        match out {
            Ok(o) if o.status.success() => {}
            Ok(o) => panic!(
                "numerics_ref.py failed ({}): {}\nthe reference needs python3 with numpy and ml_dtypes: \
                 run scripts/test (it installs them into .venv)",
                o.status,
                String::from_utf8_lossy(&o.stderr)
            ),
            Err(e) => panic!(
                "cannot run python3 ({e}); the reference needs python3 with numpy and ml_dtypes: run scripts/test"
            ),
        }
        if std::fs::rename(&tmp, &dir).is_err() {
            // Another process won the race; use its copy.
            let _ = std::fs::remove_dir_all(&tmp);
        }
        assert!(dir.join("manifest.json").exists(), "reference vectors missing in {}", dir.display());
        dir
    })
}

fn manifest() -> &'static serde_json::Value {
    static M: OnceLock<serde_json::Value> = OnceLock::new();
    M.get_or_init(|| {
        let text = std::fs::read_to_string(ref_dir().join("manifest.json")).expect("manifest");
        serde_json::from_str(&text).expect("manifest json")
    })
}

fn read(name: &str) -> Vec<u8> {
    std::fs::read(ref_dir().join(name)).unwrap_or_else(|e| panic!("cannot read {name}: {e}"))
}

fn ty(name: &str) -> NumType {
    NumType::from_name(name).unwrap_or_else(|e| panic!("{e}"))
}

const FLOATS: [&str; 6] = ["bf16", "fp16", "fp8e3", "fp8e4", "fp8e5", "fp8e4fn"];

/// (is NaN, sign, bits) of a float element.
fn elem(t: NumType, b: &[u8], j: usize) -> u64 {
    let sz = t.size();
    let mut a = [0u8; 8];
    a[..sz].copy_from_slice(&b[j * sz..j * sz + sz]);
    u64::from_le_bytes(a)
}

fn is_nan(t: NumType, raw: u64) -> bool {
    match t.float_format() {
        Some(f) => f.is_nan_mag(raw as u32 & (f.sign_bit() - 1)),
        None => false,
    }
}

fn is_zero(t: NumType, raw: u64) -> bool {
    match t.float_format() {
        Some(f) => raw as u32 & (f.sign_bit() - 1) == 0,
        None => false,
    }
}

/// Compares two arrays of `t`: NaN by class, zeros by value when `zero_by_value`, else bits.
fn mismatches(t: NumType, ours: &[u8], theirs: &[u8], inputs: Option<&[u32]>, zero_by_value: bool) -> usize {
    assert_eq!(ours.len(), theirs.len());
    let n = ours.len() / t.size();
    let mut bad = 0;
    for j in 0..n {
        let (a, b) = (elem(t, ours, j), elem(t, theirs, j));
        let ok = if is_nan(t, b) {
            is_nan(t, a)
        } else if zero_by_value && is_zero(t, b) {
            is_zero(t, a)
        } else {
            a == b
        };
        if !ok {
            if bad < 8 {
                let input = inputs.map(|i| format!(" input f32 {:#010x}", i[j])).unwrap_or_default();
                eprintln!("{t}: element {j}: ours {a:#x} reference {b:#x}{input}");
            }
            bad += 1;
        }
    }
    bad
}

#[test]
fn decode_every_pattern() {
    for name in FLOATS {
        let t = ty(name);
        let want = read(&format!("decode_{name}.bin"));
        let n = 1usize << (8 * t.size());
        let input: Vec<u8> = (0..n).flat_map(|p| (p as u64).to_le_bytes()[..t.size()].to_vec()).collect();
        let ours = cce_numerics::convert_to_vec(t, NumType::F32, &input, Rounding::Rne, false).unwrap();
        let bad = mismatches(NumType::F32, &ours, &want, None, false);
        assert_eq!(bad, 0, "{name}: {bad} of {n} patterns decode differently from ml_dtypes");
        // NaN signs are kept too.
        for p in 0..n {
            let (a, b) = (elem(NumType::F32, &ours, p), elem(NumType::F32, &want, p));
            assert_eq!(a >> 31, b >> 31, "{name} pattern {p:#x}: sign");
            // The f64 decoder agrees with the f32 one.
            let d = cce_numerics::float::decode(t.float_format().unwrap(), p as u32);
            assert!(d.is_nan() && is_nan(NumType::F32, a) || (d as f32).to_bits() as u64 == a, "{name} {p:#x}");
        }
    }
}

fn narrow_check(name: &str, input: &[u32], want_file: &str, generic_every: usize) {
    let t = ty(name);
    let bytes: Vec<u8> = input.iter().flat_map(|x| x.to_le_bytes()).collect();
    let want = read(want_file);
    let ours = cce_numerics::convert_to_vec(NumType::F32, t, &bytes, Rounding::Rne, false).unwrap();
    let bad = mismatches(t, &ours, &want, Some(input), false);
    assert_eq!(bad, 0, "f32 -> {name} ({want_file}): {bad} of {} mismatches vs ml_dtypes", input.len());
    // The generic path (a one-source MIN is a plain conversion) on a subset.
    let sub_in: Vec<u32> = input.iter().step_by(generic_every).copied().collect();
    let sub_bytes: Vec<u8> = sub_in.iter().flat_map(|x| x.to_le_bytes()).collect();
    let sub_want: Vec<u8> = want.chunks(t.size()).step_by(generic_every).flatten().copied().collect();
    let spec = ReduceSpec::add(NumType::F32, NumType::F32, t).with_op(Op::Min { clamp: None });
    let mut out = vec![0u8; sub_in.len() * t.size()];
    reduce(&spec, &[&sub_bytes], &mut [&mut out], 0).unwrap();
    let bad = mismatches(t, &out, &sub_want, Some(&sub_in), false);
    assert_eq!(bad, 0, "generic f32 -> {name} ({want_file}): {bad} mismatches");
}

#[test]
fn narrow_every_251st_f32() {
    let m = manifest();
    let stride = m["stride"].as_u64().unwrap();
    let count = m["stride_count"].as_u64().unwrap() as usize;
    let input: Vec<u32> = (0..count as u64).map(|i| (i * stride) as u32).collect();
    for name in FLOATS {
        narrow_check(name, &input, &format!("narrow_stride_{name}.bin"), 16);
    }
}

fn extra_inputs() -> Vec<u32> {
    read("extra_in.bin").chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect()
}

#[test]
fn narrow_specials_ties_and_overflow_edges() {
    let input = extra_inputs();
    assert!(input.len() > 100_000, "the extra set holds every tie of every format");
    for name in FLOATS {
        narrow_check(name, &input, &format!("narrow_extra_{name}.bin"), 1);
    }
}

#[test]
fn f32_to_int_round_half_even_saturate_nan_zero() {
    let input = extra_inputs();
    let bytes: Vec<u8> = input.iter().flat_map(|x| x.to_le_bytes()).collect();
    for name in ["u8", "i8", "u16", "i16", "u32", "i32", "u64", "i64"] {
        let t = ty(name);
        let want = read(&format!("toint_extra_{name}.bin"));
        let ours = cce_numerics::convert_to_vec(NumType::F32, t, &bytes, Rounding::Rne, false).unwrap();
        let bad = mismatches(t, &ours, &want, Some(&input), false);
        assert_eq!(bad, 0, "f32 -> {name}: {bad} mismatches");
    }
}

#[test]
fn reductions_match_numpy_in_source_order() {
    let cases = manifest()["reduce"].as_array().unwrap();
    assert!(cases.len() >= 20);
    for c in cases {
        let name = c["name"].as_str().unwrap();
        let (tin, tacc, tout) =
            (ty(c["in"].as_str().unwrap()), ty(c["acc"].as_str().unwrap()), ty(c["out"].as_str().unwrap()));
        let clamp = match &c["clamp"] {
            serde_json::Value::Null => None,
            v if tacc.is_float() => Some(Scalar::F64(v.as_f64().unwrap())),
            v => Some(Scalar::I64(v.as_i64().unwrap())),
        };
        let op = match c["op"].as_str().unwrap() {
            "add" => Op::Add,
            "min" => Op::Min { clamp },
            _ => Op::Max { clamp },
        };
        let is_minmax = !matches!(op, Op::Add);
        let spec = ReduceSpec::add(tin, tacc, tout).with_op(op);
        let srcs: Vec<Vec<u8>> = c["sources"].as_array().unwrap().iter().map(|f| read(f.as_str().unwrap())).collect();
        let refs: Vec<&[u8]> = srcs.iter().map(|v| &v[..]).collect();
        let want = read(c["output"].as_str().unwrap());
        let mut a = vec![0u8; want.len()];
        let mut b = vec![0u8; want.len()];
        reduce(&spec, &refs, &mut [&mut a], 0).unwrap();
        // numpy's minimum/maximum keep the first of two equal zeros; the model orders -0 < +0
        // (tested on its own in src), so zeros compare by value here.
        let bad = mismatches(tout, &a, &want, None, is_minmax);
        assert_eq!(bad, 0, "{name}: {bad} mismatches vs numpy");
        reduce_with(&spec, &refs, &mut [&mut b], 0, &Exec { threads: 2, chunk_elements: 777, max_isa: Isa::Portable })
            .unwrap();
        assert_eq!(a, b, "{name}: 2 threads / chunks of 777 / portable code changed the bits");
    }
}
