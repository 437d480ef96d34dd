//! The GCE model codec against its independent reference, `scripts/gce_ref.py` (numpy +
//! ml_dtypes, written from the codec's specification): for blocks of every kind and every block
//! size, the scale bytes and the payload must be equal byte for byte and the decompressed
//! values bit for bit; and every e5m2 code under every scale byte must decode the same.
//!
//! The script runs once over a directory under `CARGO_TARGET_TMPDIR`. If python3, numpy or
//! ml_dtypes is missing the test fails (it never skips) and names `scripts/test`, which
//! installs them.

use cce_numerics::gce;
use std::path::{Path, PathBuf};

mod common;
use common::{NAN_AND_INF, Rng, sprinkled};

/// Blocks of every kind, as (name, values). Most have 1000 values, so the last block is
/// ragged for every block size but 1.
fn kinds() -> Vec<(String, Vec<f32>)> {
    let mut r = Rng(0x0FC3_5EED);
    let mut k: Vec<(String, Vec<f32>)> = Vec::new();
    for mag in [1e-30f32, 1e-25, 1e-15, 1e-5, 1e-1, 1.0, 7.0, 1e5, 1e15, 1e25, 1e30] {
        k.push((format!("uniform-{mag:e}"), (0..1000).map(|_| r.unit() * mag).collect()));
    }
    // Magnitudes spread over every binade: each block's amax lands anywhere.
    k.push(("finite-bits".into(), (0..1000).map(|_| f32::from_bits(r.bits() & 0xFF7F_FFFF)).collect()));
    // Every pattern, NaN payloads and infinities included.
    k.push(("any-bits".into(), (0..4000).map(|_| f32::from_bits(r.bits())).collect()));
    for (i, c) in [3.0f32, -1.75, 1.75, f32::from_bits(0x3FE0_0001), 57344.0, -65536.0, 1e-40, f32::MAX, 1e-10]
        .into_iter()
        .enumerate()
    {
        k.push((format!("constant-{i}"), vec![c; 1000]));
    }
    k.push(("zeros".into(), vec![0.0; 1000]));
    k.push(("signed-zeros".into(), (0..1000).map(|i| if i % 3 == 1 { -0.0 } else { 0.0 }).collect()));
    k.push(("subnormals".into(), (0..1000).map(|_| f32::from_bits(r.bits() & 0x807F_FFFF)).collect()));
    k.push(("tiny-subnormals".into(), (0..1000).map(|_| f32::from_bits(r.bits() & 0x8000_003F)).collect()));
    k.push((
        "subnormals-and-zeros".into(),
        (0..1000).map(|i| f32::from_bits((r.bits() & 0x807F_FFFF) * (i % 2))).collect(),
    ));
    let mix: Vec<f32> = (0..1000).map(|_| r.unit() * 1e3).collect();
    k.push(("nan-inf-mix".into(), sprinkled(mix, 11, 53)));
    k.push(("only-nan-inf".into(), (0..1000).map(|i| NAN_AND_INF[i % NAN_AND_INF.len()]).collect()));
    k.push((
        "near-f32-max".into(),
        (0..1000).map(|_| f32::from_bits(0x7F60_0000 + (r.bits() & 0x1F_FFFF) + (r.bits() & 0x8000_0000))).collect(),
    ));
    k.push((
        "f32-max-and-small".into(),
        (0..1000).map(|i| if i % 5 == 0 { f32::MAX } else { r.unit() * 1e30 }).collect(),
    ));
    // Exact e5m2 ties after scaling by the block's 2^−E (amax 57344 gives E = 0).
    // 2^-17, 3 · 2^-17 and -5 · 2^-17 are subnormal ties (e5m2's quantum is 2^-16).
    let sub_ties = [0x3700_0000, 0x37C0_0000, 0xB820_0000].map(f32::from_bits);
    let ties = [57344.0f32, 1.125, 1.375, -2.5, 3.5, sub_ties[0], sub_ties[1], sub_ties[2], 28673.0];
    k.push(("ties".into(), (0..1000).map(|i| ties[i % ties.len()]).collect()));
    k.push(("one-value".into(), vec![-0.3]));
    k
}

const BLOCKS: [usize; 7] = [1, 7, 32, 64, 128, 256, 1024];

struct Case {
    name: String,
    block: usize,
    values: Vec<f32>,
}

fn write(path: &Path, bytes: &[u8]) {
    std::fs::write(path, bytes).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

fn run_reference(dir: &Path) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/gce_ref.py");
    match std::process::Command::new("python3").arg(&script).arg(dir).output() {
        Ok(o) if o.status.success() => {}
        Ok(o) => panic!(
            "gce_ref.py failed ({}): {}{}\nthe reference needs python3 with numpy and ml_dtypes: run scripts/test \
             (it installs them into .venv)",
            o.status,
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(e) => {
            panic!("cannot run python3 ({e}); the reference needs python3 with numpy and ml_dtypes: run scripts/test")
        }
    }
}

fn f32_bits(bytes: &[u8]) -> Vec<u32> {
    bytes.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect()
}

fn first_difference<T: PartialEq>(a: &[T], b: &[T]) -> Option<usize> {
    if a.len() != b.len() {
        return Some(a.len().min(b.len()));
    }
    a.iter().zip(b).position(|(x, y)| x != y)
}

#[test]
fn gce_matches_the_reference_byte_for_byte() {
    let dir: PathBuf = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("gce-ref-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();

    let mut cases = Vec::new();
    for (name, values) in kinds() {
        for block in BLOCKS {
            cases.push(Case { name: format!("{name}-b{block}"), block, values: values.clone() });
        }
    }
    // Ragged last blocks: one element, and one short of full.
    let mut r = Rng(99);
    for block in BLOCKS {
        for len in [3 * block + 1, 4 * block - 1] {
            let values = (0..len).map(|_| r.unit() * 1e-3).collect();
            cases.push(Case { name: format!("ragged-{len}-b{block}"), block, values });
        }
    }

    let mut manifest = Vec::new();
    for c in &cases {
        let bytes: Vec<u8> = c.values.iter().flat_map(|x| x.to_le_bytes()).collect();
        write(&dir.join(format!("{}.f32", c.name)), &bytes);
        manifest.push(serde_json::json!({"name": c.name, "kind": "compress", "block": c.block}));
    }
    // Every e5m2 code under every scale byte: block b holds codes 0..=255 with scale byte b.
    let all_codes: Vec<u8> = (0..65_536u32).map(|i| i as u8).collect();
    let all_scales: Vec<u8> = (0..=255u8).collect();
    write(&dir.join("all-codes.payload"), &all_codes);
    write(&dir.join("all-codes.scales"), &all_scales);
    manifest.push(serde_json::json!({"name": "all-codes", "kind": "decode", "block": 256}));
    write(&dir.join("manifest.json"), serde_json::to_string(&manifest).unwrap().as_bytes());

    run_reference(&dir);

    let mut saturated = 0usize;
    for c in &cases {
        let (scales, payload) = gce::compress_to_vec(&c.values, c.block).unwrap();
        let want_scales = read(&dir.join(format!("{}.scales", c.name)));
        let want_payload = read(&dir.join(format!("{}.payload", c.name)));
        if let Some(b) = first_difference(&scales, &want_scales) {
            let block = &c.values[b * c.block..((b + 1) * c.block).min(c.values.len())];
            panic!(
                "{}: scale {b} is {:?}, the reference has {:?} (block amax over {:?})",
                c.name,
                scales.get(b),
                want_scales.get(b),
                &block[..block.len().min(8)]
            );
        }
        if let Some(i) = first_difference(&payload, &want_payload) {
            panic!(
                "{}: element {i} ({:e}, bits {:08x}, scale byte {}) encodes to {:02x?}, the reference has {:02x?}",
                c.name,
                c.values[i],
                c.values[i].to_bits(),
                scales[i / c.block],
                payload.get(i),
                want_payload.get(i)
            );
        }
        let mut out = vec![0f32; c.values.len()];
        gce::decompress(&scales, &payload, c.block, &mut out).unwrap();
        let got: Vec<u32> = out.iter().map(|y| y.to_bits()).collect();
        let want = f32_bits(&read(&dir.join(format!("{}.decoded", c.name))));
        if let Some(i) = first_difference(&got, &want) {
            panic!(
                "{}: element {i} (code {:02x}, scale byte {}) decodes to {:08x?}, the reference has {:08x?}",
                c.name,
                payload[i],
                scales[i / c.block],
                got.get(i),
                want.get(i)
            );
        }
        saturated += out.iter().filter(|y| y.abs() == f32::MAX).count();
    }
    assert!(saturated > 0, "no case reached the decode saturation at f32::MAX");

    let mut out = vec![0f32; all_codes.len()];
    gce::decompress(&all_scales, &all_codes, 256, &mut out).unwrap();
    let want = f32_bits(&read(&dir.join("all-codes.decoded")));
    for (i, (y, w)) in out.iter().zip(&want).enumerate() {
        assert_eq!(y.to_bits(), *w, "code {:02x} with scale byte {}", i % 256, i / 256);
    }
    assert_eq!(want.len(), 65_536);
    let _ = std::fs::remove_dir_all(&dir);
}
