//! `cce algo`'s size: with no `--elems`, one the file's executor would select (a multiple of
//! `nchunksperloop` within `minBytes` / `maxBytes`), shown in the text and the JSON; a size
//! outside the file's range only with `--any-size`, and then named as one the executor would not
//! run. On msccl-scheduler's published schedules (tests/fixtures/msccl-scheduler, MIT; see
//! docs/SOURCES.md), whose ranges exclude 1 Mi elements, and on the project's own schedules
//! (`scripts/msccl_gen.py`) given the ranges of other published ones.

mod common;

use std::path::PathBuf;
use std::process::Command;

use common::{bad, cce, ok, tmp};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/msccl-scheduler");

/// The generator's schedule `args`, with its `minBytes` / `maxBytes` set, in a file named `name`.
fn gen_with_range(name: &str, args: &[&str], min: u64, max: u64) -> PathBuf {
    let path = tmp(name);
    let out = Command::new("python3")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/msccl_gen.py"))
        .args(args)
        .args(["-o", path.to_str().unwrap()])
        .output()
        .expect("python3 runs scripts/msccl_gen.py");
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    let xml = std::fs::read_to_string(&path).unwrap();
    let ranged = xml.replacen("minBytes=\"0\" maxBytes=\"0\"", &format!("minBytes=\"{min}\" maxBytes=\"{max}\""), 1);
    assert_ne!(xml, ranged, "the generator writes minBytes and maxBytes");
    std::fs::write(&path, ranged).unwrap();
    path
}

/// `cce algo`'s text.
fn text(args: &[&str]) -> String {
    let out = cce(args);
    assert_eq!(out.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// The keys `cce algo --json` printed before the size keys, in their order, then the size keys.
const KEYS_BEFORE: [&str; 9] =
    ["elems", "dtype", "arch", "chunk_elems", "reduces", "copies", "packets", "descriptors", "model_seconds"];
const SIZE_KEYS: [&str; 5] = ["elems_default", "bytes_per_rank", "min_bytes", "max_bytes", "executor_selects"];

#[test]
fn msccl_schedulers_schedules_lower_at_a_size_they_accept_by_default() {
    // (file, nchunksperloop, the default elements, bytes, minBytes, maxBytes): each range
    // excludes 1 Mi bf16 elements (2 MiB), so the default is the accepted size nearest to it,
    // the largest multiple of nchunksperloop within maxBytes.
    let cases = [
        ("ncv4-ar_tree_12_LL.xml", 24, 308_736, 617_472, 96, 617_472),
        ("ncv4-ag_hier_4_LL.xml", 16, 396_288, 792_576, 64, 792_576),
        ("ndv4-r48ll.xml", 64, 1_039_296, 2_078_592, 266_240, 2_078_719),
    ];
    for (name, n, elems, bytes, min, max) in cases {
        let path = format!("{FIXTURES}/{name}");
        let v = ok(&["algo", &path]);
        assert_eq!(v["checks"], "passed", "{name}");
        assert_eq!(v["nchunksperloop"], n, "{name}");
        assert_eq!(v["elems"], elems, "{name}");
        assert_eq!(
            (&v["elems_default"], &v["bytes_per_rank"], &v["min_bytes"], &v["max_bytes"], &v["executor_selects"]),
            (&true.into(), &bytes.into(), &min.into(), &max.into(), &true.into()),
            "{name}"
        );
        assert_eq!(elems % n, 0, "{name}");
        assert!(bytes <= max && (elems + n) * 2 > max, "{name}: the largest accepted");
        // The size keys come after every key the command printed before, in their order.
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        let tail: Vec<&str> = KEYS_BEFORE.iter().chain(&SIZE_KEYS).copied().collect();
        assert!(keys.ends_with(&tail), "{name}: {keys:?}");
        let t = text(&["algo", &path]);
        assert!(
            t.contains(&format!(
                "\nsize: {bytes} bytes per rank (the default), within the file's minBytes {min} to maxBytes {max}: MSCCL's runtime selects the algorithm at this size\n"
            )),
            "{name}: {t}"
        );
        // The old default, 1 Mi elements, is refused with the rule and the way round it.
        let mi = (1u64 << 20).div_ceil(n) * n;
        let e = bad(&["algo", &path, "--elems", &mi.to_string()]);
        assert!(
            e.contains(&format!(
                "{path}: {} bytes per rank: the file's algorithm is for minBytes {min} to maxBytes {max} (the executor would not select it); --any-size lowers it all the same",
                mi * 2
            )),
            "{name}: {e}"
        );
        let any = ok(&["algo", &path, "--elems", &mi.to_string(), "--any-size"]);
        assert_eq!(
            (&any["elems"], &any["elems_default"], &any["executor_selects"]),
            (&mi.into(), &false.into(), &false.into())
        );
        assert!(
            any["packets"].as_u64().unwrap() >= v["packets"].as_u64().unwrap(),
            "{name}: more elements, no fewer packets"
        );
    }
}

#[test]
fn a_minimum_above_1_mi_elements_gives_the_smallest_accepted_size() {
    // A 4-rank ring for 4 MiB and up (like msccl-scheduler's ndv4 ag-4m / ag-8m ranges).
    let x = gen_with_range("min-4m.xml", &["ring-allreduce", "4"], 4 << 20, 0);
    let x = x.to_str().unwrap();
    let v = ok(&["algo", x]);
    assert_eq!(
        (&v["elems"], &v["bytes_per_rank"], &v["max_bytes"]),
        (&(2u64 << 20).into(), &(4u64 << 20).into(), &serde_json::Value::Null)
    );
    let v = ok(&["algo", x, "--dtype", "fp32"]);
    assert_eq!(v["elems"], 1u64 << 20, "fp32: 1 Mi elements are 4 MiB");
    let t = text(&["algo", x]);
    assert!(t.contains("within the file's minBytes 4194304 to maxBytes no limit"), "{t}");
    // A given size below the range: refused; with --any-size, lowered and named.
    let e = bad(&["algo", x, "--elems", "4096"]);
    assert!(
        e.contains("8192 bytes per rank: the file's algorithm is for minBytes 4194304 to maxBytes no limit"),
        "{e}"
    );
    let t = text(&["algo", x, "--elems", "4096", "--any-size"]);
    assert!(
        t.contains("\nsize: 8192 bytes per rank (given), outside the file's minBytes 4194304 to maxBytes no limit: MSCCL's runtime selects an algorithm by minBytes / maxBytes and would not run this one at this size\n"),
        "{t}"
    );
    // --any-size changes nothing for a size within the range.
    assert_eq!(ok(&["algo", x, "--any-size"]), ok(&["algo", x]));
}

#[test]
fn a_maximum_below_1_mi_elements_gives_the_largest_accepted_size() {
    // 8-rank all-pairs for at most 32 KiB (msccl-scheduler's ndv4 ap-1pass range).
    let x = gen_with_range("max-32k.xml", &["allpairs-allreduce", "8"], 0, 32_768);
    let x = x.to_str().unwrap();
    let v = ok(&["algo", x]);
    assert_eq!((&v["elems"], &v["executor_selects"]), (&16_384.into(), &true.into()));
    // A rank's lowering for it disassembles (the --lower path takes the same size).
    let dir = tmp("max-32k-rings");
    ok(&["algo", x, "--lower", dir.to_str().unwrap()]);
    assert!(dir.join("rank7.ring").exists());
}

#[test]
fn a_file_no_size_fits_is_refused_unless_any_size_is_given() {
    // maxBytes below one bf16 element per chunk: the executor never selects it.
    let x = gen_with_range("max-7.xml", &["ring-allreduce", "4"], 0, 7);
    let x = x.to_str().unwrap();
    let e = bad(&["algo", x]);
    assert!(
        e.contains(&format!("{x}: no size fits the file's minBytes 0 to maxBytes 7 in multiples of nchunksperloop = 4 bf16 elements (the executor would never select it); --elems N --any-size lowers it all the same")),
        "{e}"
    );
    // With --any-size the old default (the first multiple of nchunksperloop from 1 Mi) is lowered.
    let v = ok(&["algo", x, "--any-size"]);
    assert_eq!(
        (&v["elems"], &v["elems_default"], &v["bytes_per_rank"], &v["max_bytes"], &v["executor_selects"]),
        (&(1u64 << 20).into(), &true.into(), &(2u64 << 20).into(), &7.into(), &false.into())
    );
    // A count that is not a multiple of nchunksperloop is refused for that, --any-size or not.
    for more in [&[][..], &["--any-size"]] {
        let e = bad(&[&["algo", x, "--elems", "4097"][..], more].concat());
        assert!(e.contains("a positive multiple of nchunksperloop = 4"), "{e}");
    }
}
