//! GCE through the CLI: `cce build --op gce-compress | gce-decompress` (and a reduce with
//! `--header`, the EXT + GCE combo) run by `cce run` from ring bytes. The payload and the scale
//! tables equal scripts/gce_ref.py's (numpy + ml_dtypes, written from the codec's spec) for the
//! same values; a faulting GCE packet leaves its destination and header untouched.

mod common;

use std::process::Command;

use common::{cce, tmp};

const N: usize = 5000;
const PER_PACKET: usize = 2048;
const STRIDE: usize = 96; // 32 + 2048 / 32 scales, rounded up to 16

fn bf16(x: f32) -> [u8; 2] {
    let b = x.to_bits();
    (((b + 0x7FFF + ((b >> 16) & 1)) >> 16) as u16).to_le_bytes()
}

fn write(name: &str, bytes: &[u8]) -> String {
    let p = tmp(name);
    std::fs::write(&p, bytes).unwrap();
    p.display().to_string()
}

fn build(name: &str, args: &str) -> String {
    let p = tmp(name);
    let mut argv = vec!["build", "--arch", "3"];
    argv.extend(args.split_whitespace());
    argv.extend(["-o", p.to_str().unwrap()]);
    let o = cce(&argv);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    p.display().to_string()
}

fn run(args: &[String]) -> (Option<i32>, String) {
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = cce(&argv);
    (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned())
}

fn s(x: &str) -> String {
    x.to_string()
}

/// Runs scripts/gce_ref.py on one packet's f32 values; its (scales, payload, decoded f32).
fn reference(name: &str, values: &[f32]) -> (Vec<u8>, Vec<u8>, Vec<f32>) {
    references(name, &[values]).remove(0)
}

/// Runs scripts/gce_ref.py once on several packets' values; per packet (scales, payload,
/// decoded f32).
fn references(name: &str, packets: &[&[f32]]) -> Vec<(Vec<u8>, Vec<u8>, Vec<f32>)> {
    let dir = tmp(&format!("ref-{name}"));
    std::fs::create_dir_all(&dir).unwrap();
    let mut manifest = Vec::new();
    for (k, values) in packets.iter().enumerate() {
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        std::fs::write(dir.join(format!("v{k}.f32")), bytes).unwrap();
        manifest.push(format!(r#"{{"name": "v{k}", "kind": "compress", "block": 32}}"#));
    }
    std::fs::write(dir.join("manifest.json"), format!("[{}]", manifest.join(", "))).unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/gce_ref.py");
    let o = Command::new("python3").args([script, dir.to_str().unwrap()]).output().expect("python3 (scripts/test)");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    (0..packets.len())
        .map(|k| {
            let read = |ext: &str| std::fs::read(dir.join(format!("v{k}.{ext}"))).unwrap();
            let decoded = read("decoded").chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect();
            (read("scales"), read("payload"), decoded)
        })
        .collect()
}

#[test]
fn compress_and_decompress_equal_the_reference() {
    // Two bf16 sources: the gradient packet's fused accumulate (fp32), rounded to bf16, then
    // compressed; magnitudes across many binades, zeros and one infinity.
    let val = |i: usize, k: u32| ((i as u32).wrapping_mul(2_654_435_761) ^ k) % 20001;
    let a: Vec<f32> = (0..N).map(|i| (val(i, 7) as f32 / 1000.0 - 10.0) * 2f32.powi((i % 40) as i32 - 20)).collect();
    let mut b: Vec<f32> = (0..N).map(|i| val(i, 99) as f32 / 5000.0 - 2.0).collect();
    b[77] = f32::INFINITY;
    let bytes = |v: &[f32]| v.iter().flat_map(|x| bf16(*x)).collect::<Vec<u8>>();
    let (fa, fb) = (write("a.bin", &bytes(&a)), write("b.bin", &bytes(&b)));
    let c = build(
        "c.ring",
        &format!(
            "--op gce-compress --in bf16 --accum fp32 --out-dtype fp8e5 --elems {N} --src 0x100000 0x200000 --dst 0x300000 --header 0x400000"
        ),
    );
    let (payload, headers) = (tmp("payload.bin"), tmp("headers.bin"));
    let headers_len = N.div_ceil(PER_PACKET) * STRIDE;
    let (code, err) = run(&[
        s("run"),
        c,
        s("--load"),
        format!("0x100000={fa}"),
        s("--load"),
        format!("0x200000={fb}"),
        s("--dump"),
        format!("0x300000:{N}={}", payload.display()),
        s("--dump"),
        format!("0x400000:{headers_len}={}", headers.display()),
    ]);
    assert_eq!(code, Some(0), "{err}");
    let (payload_b, headers_b) = (std::fs::read(&payload).unwrap(), std::fs::read(&headers).unwrap());
    // The values compressed: the fp32 sum of the bf16 sources, rounded to bf16 (the packet's
    // source dtype), independent of the engine.
    let widen = |x: f32| f32::from_bits(u32::from(u16::from_le_bytes(bf16(x))) << 16);
    let mid: Vec<f32> = (0..N).map(|i| widen(widen(a[i]) + widen(b[i]))).collect();
    let mut want_decoded = Vec::new();
    for (k, chunk) in mid.chunks(PER_PACKET).enumerate() {
        let (scales, pay, decoded) = reference(&format!("p{k}"), chunk);
        let h = &headers_b[k * STRIDE..];
        assert_eq!(&h[..4], b"GCE1");
        assert_eq!(u32::from_le_bytes(h[8..12].try_into().unwrap()) as usize, chunk.len());
        assert_eq!(&h[32..32 + scales.len()], &scales[..], "packet {k}: scale table");
        assert_eq!(&payload_b[k * PER_PACKET..k * PER_PACKET + chunk.len()], &pay[..], "packet {k}: payload");
        want_decoded.extend(decoded);
    }
    // Decompress to fp32: the reference's decoded values, bit for bit.
    let d = build(
        "d.ring",
        &format!(
            "--op gce-decompress --in fp8e5 --accum fp32 --out-dtype fp32 --elems {N} --src 0x300000 --dst 0x500000 --header 0x400000"
        ),
    );
    let out = tmp("out.bin");
    let (code, err) = run(&[
        s("run"),
        d,
        s("--load"),
        format!("0x300000={}", payload.display()),
        s("--load"),
        format!("0x400000={}", headers.display()),
        s("--dump"),
        format!("0x500000:{}={}", 4 * N, out.display()),
    ]);
    assert_eq!(code, Some(0), "{err}");
    let got: Vec<u32> =
        std::fs::read(&out).unwrap().chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
    let want: Vec<u32> = want_decoded.iter().map(|v| v.to_bits()).collect();
    assert_eq!(got, want);
    assert_eq!(f32::from_bits(got[77]), f32::INFINITY);
}

#[test]
fn the_ext_combo_compresses_its_reduce() {
    let n = 3000;
    let srcs: Vec<Vec<f32>> =
        (0..3).map(|k| (0..n).map(|i| ((i * 7 + k * 13) % 101) as f32 / 10.0 - 5.0).collect()).collect();
    let files: Vec<String> = srcs
        .iter()
        .enumerate()
        .map(|(k, v)| write(&format!("x{k}.bin"), &v.iter().flat_map(|x| bf16(*x)).collect::<Vec<u8>>()))
        .collect();
    let ring = build(
        "x.ring",
        &format!(
            "--op add --in bf16 --accum fp32 --out-dtype fp32 --elems {n} --src 0x100000 0x200000 0x300000 --dst 0x500000 --header 0x600000"
        ),
    );
    let listing = cce(&["disasm", &ring]);
    let text = String::from_utf8_lossy(&listing.stdout);
    assert!(text.contains("gradient") && text.contains("replication") && text.contains("gce=compress"), "{text}");
    let (payload, headers) = (tmp("x-payload.bin"), tmp("x-headers.bin"));
    let mut args = vec![s("run"), ring];
    for (k, f) in files.iter().enumerate() {
        args.extend([s("--load"), format!("0x{:x}={f}", 0x100000 * (k + 1))]);
    }
    args.extend([s("--dump"), format!("0x500000:{n}={}", payload.display())]);
    args.extend([s("--dump"), format!("0x600000:{}={}", 2 * STRIDE, headers.display())]);
    let (code, err) = run(&args);
    assert_eq!(code, Some(0), "{err}");
    let (payload_b, headers_b) = (std::fs::read(&payload).unwrap(), std::fs::read(&headers).unwrap());
    let widen = |x: f32| f32::from_bits(u32::from(u16::from_le_bytes(bf16(x))) << 16);
    // The fp32 sums in source order (the EXT mid dtype fp32: no rounding before compression).
    let sums: Vec<f32> = (0..n).map(|i| widen(srcs[0][i]) + widen(srcs[1][i]) + widen(srcs[2][i])).collect();
    for (k, chunk) in sums.chunks(PER_PACKET).enumerate() {
        let (scales, pay, _) = reference(&format!("x{k}"), chunk);
        assert_eq!(&headers_b[k * STRIDE + 32..k * STRIDE + 32 + scales.len()], &scales[..]);
        assert_eq!(&payload_b[k * PER_PACKET..k * PER_PACKET + chunk.len()], &pay[..]);
    }
}

#[test]
fn a_faulting_gce_packet_writes_nothing() {
    let n = 64;
    let canary = write("canary.bin", &[0xAB; 4 * 64]);
    let src = write("f-src.bin", &[0x3f; 2 * 64]);
    let payload = write("f-payload.bin", &[0x3c; 64]);
    let compress = build(
        "f-c.ring",
        &format!(
            "--op gce-compress --in bf16 --accum fp32 --out-dtype fp8e5 --elems {n} --src 0x10000 --dst 0x20000 --header 0x30000"
        ),
    );
    let decompress = build(
        "f-d.ring",
        &format!(
            "--op gce-decompress --in fp8e5 --accum fp32 --out-dtype bf16 --elems {n} --src 0x20000 --dst 0x40000 --header 0x30000"
        ),
    );
    // (ring, loads, the destination, the reason): the header unmapped (compress), the header
    // overlapping the destination (compress), a header of zeros (decompress).
    let zeros = write("f-zeros.bin", &[0; 64]);
    let cases: [(&str, Vec<String>, u64, &str); 3] = [
        (
            &compress,
            vec![format!("0x10000={src}"), format!("0x20000={canary}")],
            0x20000,
            "invalid compression header addr 30000",
        ),
        (
            &compress,
            vec![format!("0x10000={src}"), format!("0x20000={canary}"), format!("0x30000={zeros}")],
            0x20000,
            "",
        ),
        (
            &decompress,
            vec![format!("0x20000={payload}"), format!("0x30000={zeros}"), format!("0x40000={canary}")],
            0x40000,
            "Failed to build decompression header: gce header magic is",
        ),
    ];
    for (i, (ring, loads, dst, want)) in cases.into_iter().enumerate() {
        let dump = tmp(&format!("f-dump{i}.bin"));
        let mut args = vec![s("run"), s(ring)];
        for l in loads {
            args.extend([s("--load"), l]);
        }
        args.extend([s("--dump"), format!("0x{dst:x}:256={}", dump.display())]);
        let (code, err) = run(&args);
        if want.is_empty() {
            // The header region mapped and clear: the packet runs (the control case).
            assert_eq!(code, Some(0), "{err}");
            assert_ne!(std::fs::read(&dump).unwrap(), vec![0xAB; 256], "the control case writes its payload");
            continue;
        }
        assert_eq!(code, Some(1), "{err}");
        assert!(err.contains(want), "{err}");
        assert_eq!(std::fs::read(&dump).unwrap(), vec![0xAB; 256], "case {i}: the destination is unchanged");
    }
}

/// A run of 40 GCE packets executes in batches (docs/MODEL.md G5): every packet's payload,
/// header and scale table equal the reference's for its own values; a bad header in the middle
/// of a decompressing run, or a compressing run whose header span ends early, stops the run at
/// that packet — the packets before it written, it and the ones after it untouched. The
/// decompressing case keeps the payload and the output in one region (the engine copies rather
/// than views), the compressing ones use separate regions (views).
#[test]
fn a_long_run_equals_the_reference_and_stops_where_a_header_fails() {
    const PACKETS: usize = 40;
    let n = PACKETS * PER_PACKET;
    let val = |i: usize, k: u32| ((i as u32).wrapping_mul(2_246_822_519) ^ k) % 30011;
    let a: Vec<f32> =
        (0..n).map(|i| (val(i, 3) as f32 / 3000.0 - 5.0) * 2f32.powi((i / 97 % 30) as i32 - 15)).collect();
    let b: Vec<f32> = (0..n).map(|i| val(i, 41) as f32 / 7000.0 - 2.1).collect();
    let bytes = |v: &[f32]| v.iter().flat_map(|x| bf16(*x)).collect::<Vec<u8>>();
    let (fa, fb) = (write("r-a.bin", &bytes(&a)), write("r-b.bin", &bytes(&b)));
    let widen = |x: f32| f32::from_bits(u32::from(u16::from_le_bytes(bf16(x))) << 16);
    let mid: Vec<f32> = (0..n).map(|i| widen(widen(a[i]) + widen(b[i]))).collect();
    let chunks: Vec<&[f32]> = mid.chunks(PER_PACKET).collect();
    let want = references("run", &chunks);
    let compress = build(
        "r-c.ring",
        &format!(
            "--op gce-compress --in bf16 --accum fp32 --out-dtype fp8e5 --elems {n} --src 0x100000 0x200000 --dst 0x300000 --header 0x400000"
        ),
    );
    let canary = write("r-canary.bin", &vec![0xAB; n]);
    // (headers mapped, packets expected to run): all of them, then a span 30 headers long.
    for (mapped, good) in [(PACKETS, PACKETS), (30, 30)] {
        let headers_in = write(&format!("r-h{mapped}.bin"), &vec![0; mapped * STRIDE]);
        let (payload, headers) = (tmp(&format!("r-payload{mapped}.bin")), tmp(&format!("r-headers{mapped}.bin")));
        let (code, err) = run(&[
            s("run"),
            compress.clone(),
            s("--load"),
            format!("0x100000={fa}"),
            s("--load"),
            format!("0x200000={fb}"),
            s("--load"),
            format!("0x300000={canary}"),
            s("--load"),
            format!("0x400000={headers_in}"),
            s("--dump"),
            format!("0x300000:{n}={}", payload.display()),
            s("--dump"),
            format!("0x400000:{}={}", mapped * STRIDE, headers.display()),
        ]);
        if good == PACKETS {
            assert_eq!(code, Some(0), "{err}");
        } else {
            assert_eq!(code, Some(1), "{err}");
            let addr = format!("invalid compression header addr {:x}", 0x400000 + good * STRIDE);
            assert!(err.contains(&addr), "{err}");
        }
        let (payload_b, headers_b) = (std::fs::read(&payload).unwrap(), std::fs::read(&headers).unwrap());
        for (k, (scales, pay, _)) in want.iter().enumerate() {
            let got = &payload_b[k * PER_PACKET..(k + 1) * PER_PACKET];
            if k >= good {
                assert_eq!(got, &vec![0xAB; PER_PACKET][..], "packet {k} after the fault is untouched");
                continue;
            }
            assert_eq!(got, &pay[..], "packet {k}: payload");
            let h = &headers_b[k * STRIDE..(k + 1) * STRIDE];
            assert_eq!(&h[..4], b"GCE1", "packet {k}");
            assert_eq!(u32::from_le_bytes(h[8..12].try_into().unwrap()) as usize, PER_PACKET);
            assert_eq!(&h[32..32 + scales.len()], &scales[..], "packet {k}: scale table");
        }
    }
    // Decompress to fp32 with packet 25's header broken: payload and output in one region.
    let (payload_b, mut headers_b) = (
        std::fs::read(tmp(&format!("r-payload{PACKETS}.bin"))).unwrap(),
        std::fs::read(tmp(&format!("r-headers{PACKETS}.bin"))).unwrap(),
    );
    let bad = 25;
    headers_b[bad * STRIDE] ^= 0x20;
    let mut region = payload_b.clone();
    let out_at = n.next_multiple_of(4096);
    region.resize(out_at + 4 * n, 0xAB);
    let (fr, fh) = (write("r-region.bin", &region), write("r-headers-bad.bin", &headers_b));
    let d = build(
        "r-d.ring",
        &format!(
            "--op gce-decompress --in fp8e5 --accum fp32 --out-dtype fp32 --elems {n} --src 0x1000000 --dst 0x{:x} --header 0x400000",
            0x1000000 + out_at
        ),
    );
    let out = tmp("r-out.bin");
    let (code, err) = run(&[
        s("run"),
        d,
        s("--load"),
        format!("0x1000000={fr}"),
        s("--load"),
        format!("0x400000={fh}"),
        s("--dump"),
        format!("0x{:x}:{}={}", 0x1000000 + out_at, 4 * n, out.display()),
    ]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("Failed to build decompression header: gce header magic is"), "{err}");
    let got = std::fs::read(&out).unwrap();
    for (k, (_, _, decoded)) in want.iter().enumerate() {
        let g = &got[k * 4 * PER_PACKET..(k + 1) * 4 * PER_PACKET];
        if k >= bad {
            assert_eq!(g, &vec![0xAB; 4 * PER_PACKET][..], "packet {k} from the bad header on is untouched");
        } else {
            let bits: Vec<u32> = g.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
            let want: Vec<u32> = decoded.iter().map(|v| v.to_bits()).collect();
            assert_eq!(bits, want, "packet {k}: decoded values");
        }
    }
}
