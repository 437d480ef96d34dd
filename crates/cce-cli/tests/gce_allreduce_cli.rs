//! `cce allreduce --compress gce` (study §9.3, docs/MODEL.md G6–G9): every rank's output equals
//! scripts/allreduce_ref.py's ring with the GCE codec of scripts/gce_ref.py applied where a
//! value crosses into the next node and once at the owner (numpy + ml_dtypes, written from the
//! documented order and codec); the bytes over the node boundaries equal a count made here
//! from the layout rules, at most 0.55 of the uncompressed run's for bf16.

mod common;

use std::process::Command;

use common::{ok, tmp};

/// Deterministic values of many magnitudes (some blocks tiny, some zero) in `dtype`'s bytes.
fn inputs(dir: &std::path::Path, ranks: usize, elems: usize, dtype: &str) {
    std::fs::create_dir_all(dir).unwrap();
    for r in 0..ranks {
        let bytes: Vec<u8> = (0..elems as u32)
            .flat_map(|i| {
                let h = (i ^ (r as u32).wrapping_mul(0x9E37_79B9)).wrapping_mul(2_654_435_761);
                let unit = (h >> 8) as f32 / (1u32 << 24) as f32 * 2.0 - 1.0;
                // Blocks of 32 share a magnitude: 2^-20 .. 2^6, and every 7th block is zero.
                let block = i / 32;
                let scale = if block % 7 == 3 { 0.0 } else { 2f32.powi((block % 27) as i32 - 20) };
                let x = unit * scale;
                match dtype {
                    "bf16" => half::bf16::from_f32(x).to_le_bytes().to_vec(),
                    "fp16" => half::f16::from_f32(x).to_le_bytes().to_vec(),
                    _ => x.to_le_bytes().to_vec(),
                }
            })
            .collect();
        std::fs::write(dir.join(format!("rank{r}.bin")), bytes).unwrap();
    }
}

fn run(ranks: usize, per_node: Option<usize>, dtype: &str, elems: usize) -> serde_json::Value {
    let name = format!("gce-ar-{ranks}-{per_node:?}-{dtype}-{elems}");
    let (din, dout) = (tmp(&format!("{name}-in")), tmp(&format!("{name}-out")));
    inputs(&din, ranks, elems, dtype);
    let ranks_s = ranks.to_string();
    let per_node_s = per_node.map(|k| k.to_string());
    let mut args = vec!["allreduce", "--ranks", &ranks_s, "--algo", "ring", "--op", "add", "--dtype", dtype];
    args.extend(["--compress", "gce", "--input-dir", din.to_str().unwrap(), "--output-dir", dout.to_str().unwrap()]);
    if let Some(k) = &per_node_s {
        args.extend(["--ranks-per-node", k]);
    }
    args.push("--json");
    let v = ok(&args);
    let what = format!("R={ranks} per node {per_node:?} {dtype}");
    assert_eq!(v["ranks_identical"], true, "{what}");
    assert_eq!(v["wrong"], 0, "{what}: every element within the GCE error bound");
    let k = per_node.unwrap_or(ranks.div_ceil(2));
    assert_eq!((v["compress"].as_str(), v["ranks_per_node"].as_u64()), (Some("gce"), Some(k as u64)), "{what}");
    assert!(v["codec"].as_str().is_some_and(|c| c.starts_with("MODEL")), "{what}: the codec's tag");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/allreduce_ref.py");
    let out = Command::new("python3")
        .args([script, "ring", &ranks_s, dtype, din.to_str().unwrap(), dout.to_str().unwrap(), "--gce"])
        .arg(k.to_string())
        .output()
        .expect("python3 is needed (pip install numpy ml_dtypes)");
    assert!(
        out.status.success(),
        "{what}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    v
}

#[test]
fn the_gce_ring_equals_the_reference() {
    for (ranks, per_node, dtype) in [
        (2, None, "bf16"),
        (3, None, "bf16"),
        (5, Some(2), "bf16"),
        (8, None, "bf16"),
        (8, Some(1), "bf16"),
        (8, Some(3), "bf16"),
        (4, None, "fp16"),
        (6, Some(4), "fp32"),
    ] {
        run(ranks, per_node, dtype, 5001);
    }
}

/// The GCE header region of `len` elements: one per 2048-element packet, each 32 bytes and
/// one scale byte per 32 elements, rounded up to 16 (docs/MODEL.md "GCE").
fn headers(len: u64) -> u64 {
    let per = len.min(2048);
    len.div_ceil(2048) * (32 + per.div_ceil(32)).next_multiple_of(16)
}

#[test]
fn the_hop_bytes_are_the_compressed_chunks_and_at_most_0_55_of_bf16() {
    let (ranks, elems) = (8u64, 1u64 << 20);
    let v = run(ranks as usize, None, "bf16", elems as usize);
    // Nodes 0-3 and 4-7: the hops 3 → 4 and 7 → 0 cross. Chunk c's reduce-scatter runs from
    // rank c to its owner c − 1, over every hop but c − 1 → c; the all-gather takes it from the
    // owner to rank c − 2, over every hop but c − 2 → c − 1. So hop x → x+1 carries, compressed,
    // every chunk but x + 1 in the reduce-scatter and every chunk but x + 2 in the all-gather.
    let len = |c: u64| (c + 1) * elems / ranks - c * elems / ranks;
    let (mut packed, mut plain) = (0u64, 0u64);
    for x in [3u64, 7] {
        for c in 0..ranks {
            let crossings = u64::from(c != (x + 1) % ranks) + u64::from(c != (x + 2) % ranks);
            packed += crossings * (headers(len(c)) + len(c));
            plain += crossings * 2 * len(c);
        }
    }
    assert_eq!(v["hop_bytes"].as_u64(), Some(packed));
    assert_eq!(v["hop_bytes_uncompressed"].as_u64(), Some(plain));
    let ratio = v["hop_bytes_ratio"].as_f64().unwrap();
    assert!((ratio - packed as f64 / plain as f64).abs() < 1e-12 && ratio <= 0.55, "ratio {ratio}");
    assert_eq!(v["nodes"], 2);
    for key in ["max_abs_err", "max_rel_err", "model_seconds", "uncompressed_model_seconds"] {
        assert!(v[key].as_f64().is_some_and(f64::is_finite), "{key}");
    }
}
