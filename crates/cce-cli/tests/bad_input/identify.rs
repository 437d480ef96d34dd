//! Matrix rows for `cce identify` (see `bad_input.rs`): rank files missing, doubled, of
//! different lengths or not whole elements, malformed `.npy` headers, an observed output of the
//! wrong length or rank, dtypes it cannot identify in, probes it cannot make, sizes over the
//! budget. Every row is refused with exit 2.

use std::path::{Path, PathBuf};

use crate::common::tmp;
use crate::{Row, leak, sv};

/// Messages no command line can produce, with the reason (matched as template prefixes).
pub(crate) const UNREACHABLE: &[(&str, &str)] = &[
    ("missing --input-dir, --observed", "clap requires both unless --make-probe is given"),
    ("missing --ranks, --elems", "clap requires both with --make-probe"),
    (
        "rank {rank}'s input has {len} bytes, not a multiple",
        "the CLI reads each rank file as whole elements first, naming its path; cce.identify reaches it",
    ),
    (
        "rank {rank}'s input has {len} bytes, rank 0's",
        "the CLI compares the rank files' lengths first, naming both paths; cce.identify reaches it",
    ),
    (
        "the observed output of rank {rank} has {len} bytes",
        "the CLI compares each observed file with the inputs first, naming its path; cce.identify reaches it",
    ),
    ("no observed output", "the CLI always gives one: a file, or a directory with rank0 (else its own refusal)"),
    (
        "observed rank {0} is given twice",
        "a directory's rank files are each one rank (a doubled rank is refused first)",
    ),
    (
        "candidate {name}: {got} outputs",
        "cce's algorithms give one output per rank of the inputs' length; tests/identify.rs (cce-api) runs them",
    ),
    ("--accum {}: no SDMA dtype", "every accumulate dtype the CLI names is an SDMA dtype"),
    (
        "--ranks {r}: {} inputs are given",
        "the CLI checks --ranks against the rank files first, naming them; cce.identify(ranks=…) reaches it",
    ),
    (
        "candidate {0}: its segments must start",
        "the rings' segments are made by cce-forensics from their layouts, always from element 0 and ascending",
    ),
    (
        "order: ",
        "Order::parse (cce-numerics' order grammar) is read by no command yet: identify prints orders, it never \
         reads one; order.rs's unit tests check each refusal",
    ),
];

fn write(dir: &Path, name: &str, bytes: &[u8]) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join(name), bytes).unwrap();
}

/// A directory of `ranks` bf16 rank files of `elems` elements each.
fn ranks_dir(name: &str, ranks: usize, elems: usize) -> PathBuf {
    let d = tmp(name);
    let _ = std::fs::remove_dir_all(&d);
    for r in 0..ranks {
        let bytes: Vec<u8> = (0..elems).flat_map(|i| (0x3f80u16 + (r * 7 + i) as u16 % 64).to_le_bytes()).collect();
        write(&d, &format!("rank{r}.bin"), &bytes);
    }
    d
}

/// A `.npy` file's bytes: format version `v`, header `dict`, then `data`.
fn npy(v: u8, dict: &str, data: &[u8]) -> Vec<u8> {
    let mut b = b"\x93NUMPY".to_vec();
    b.extend([v, 0]);
    b.extend((dict.len() as u16).to_le_bytes());
    b.extend(dict.as_bytes());
    b.extend(data);
    b
}

fn s(p: &Path) -> String {
    p.display().to_string()
}

/// `cce identify --input-dir <dir> --observed <observed> --dtype bf16`, then `extra`.
fn id(dir: &Path, observed: &Path, extra: &[&str]) -> Vec<String> {
    let mut x = sv(&["identify", "--input-dir", &s(dir), "--observed", &s(observed), "--dtype", "bf16"]);
    x.extend(sv(extra));
    x
}

/// The rows of rank files and observed outputs.
fn file_rows(all: &mut Vec<Row>) {
    let good = ranks_dir("m-id-good", 4, 16);
    let out = good.join("rank0.bin");
    let empty = tmp("m-id-empty");
    std::fs::create_dir_all(&empty).unwrap();
    let gap = ranks_dir("m-id-gap", 3, 16);
    std::fs::rename(gap.join("rank1.bin"), gap.join("rank5.bin")).unwrap();
    let twice = ranks_dir("m-id-twice", 2, 16);
    write(&twice, "rank1.npy", &npy(1, "{'descr': '<u2', 'fortran_order': False, 'shape': (16,), }", &[0; 32]));
    let short = ranks_dir("m-id-short", 3, 16);
    write(&short, "rank2.bin", &[0; 16]);
    let odd = ranks_dir("m-id-odd", 2, 16);
    write(&odd, "rank1.bin", &[0; 31]);
    let one = ranks_dir("m-id-one", 1, 16);
    let zero = ranks_dir("m-id-zero", 2, 0);
    let wrong_len = tmp("m-id-out7.bin");
    std::fs::write(&wrong_len, [0u8; 14]).unwrap();
    let many = ranks_dir("m-id-many", 5, 16);
    // Stale rank files of an 8-rank probe beside a 4-rank run's.
    let stale = ranks_dir("m-id-stale", 8, 16);
    let v = |d: &Path, o: &Path, e: &[&str]| id(d, o, e);
    all.extend([
        (v(&empty, &out, &[]), leak(format!("{}: no rank0.bin or rank0.npy", s(&empty))), 2),
        (v(&gap, &out, &[]), "rank1.bin (or .npy) is missing, and ", 2),
        (v(&twice, &out, &[]), "rank 1 given twice", 2),
        (v(&short, &out, &[]), "every rank holds the same element count", 2),
        (v(&odd, &out, &[]), "31 bytes, not a multiple of the bf16 element size 2", 2),
        (v(&one, &out, &[]), "1 ranks: identify takes 2 to 64 ranks", 2),
        (v(&zero, &zero.join("rank0.bin"), &[]), "the inputs hold no elements", 2),
        (v(&good, &wrong_len, &[]), leak(format!("{}: 14 bytes of elements, the inputs hold 32", s(&wrong_len))), 2),
        (v(&good, &out, &["--observed-rank", "9"]), "observed rank 9: the inputs are of 4 ranks", 2),
        (v(&good, &good, &["--observed-rank", "1"]), "--observed-rank is for one file", 2),
        (v(&good, &many, &[]), "5 ranks' outputs, the inputs are of 4 ranks", 2),
        (v(&good, &tmp("m-id-nothing.bin"), &[]), "m-id-nothing.bin", 2),
        (
            v(&stale, &stale.join("rank0.bin"), &["--ranks", "4"]),
            "8 rank files, --ranks 4: rank files beyond rank 3 (rank4.bin, rank5.bin, rank6.bin, …)",
            2,
        ),
        (v(&good, &out, &["--ranks", "5"]), "rank4.bin (or .npy) is missing: --ranks 5 needs ranks 0..=4", 2),
        (v(&good, &out, &["--ranks", "1"]), "--ranks 1: identify takes 2 to 64 ranks", 2),
    ]);
}

/// The rows of malformed `.npy` files.
fn npy_rows(all: &mut Vec<Row>) {
    let cases: [(&str, Vec<u8>, &'static str); 6] = [
        ("magic", b"NOTNUMPY..........".to_vec(), "not a .npy file"),
        ("version", npy(7, "{}", &[]), ".npy format version 7 (1 to 3 are read)"),
        ("truncated", npy(1, "{'descr'", &[])[..12].to_vec(), "truncated .npy header"),
        ("nodescr", npy(1, "{'shape': (16,), }", &[0; 32]), "a .npy header without a descr"),
        (
            "big",
            npy(1, "{'descr': '>f2', 'fortran_order': False, 'shape': (16,), }", &[0; 32]),
            ".npy dtype '>f2': expected little-endian items of 2 bytes",
        ),
        (
            "fortran",
            npy(1, "{'descr': '<f2', 'fortran_order': True, 'shape': (4, 4), }", &[0; 32]),
            ".npy in Fortran order",
        ),
    ];
    for (name, bytes, want) in cases {
        let d = ranks_dir(&format!("m-id-npy-{name}"), 1, 16);
        let mut bytes = bytes;
        if name == "truncated" {
            // The header claims more bytes than the file has.
            bytes[8] = 200;
        }
        write(&d, "rank1.npy", &bytes);
        all.push((id(&d, &d.join("rank0.bin"), &[]), want, 2));
    }
}

/// The rows of dtypes, schedules, probes and budgets.
fn rule_rows(all: &mut Vec<Row>) {
    let good = ranks_dir("m-id-rules", 4, 16);
    let out = good.join("rank0.bin");
    let sparse = tmp("m-id-sparse");
    let _ = std::fs::remove_dir_all(&sparse);
    std::fs::create_dir_all(&sparse).unwrap();
    for r in 0..2 {
        let f = std::fs::File::create(sparse.join(format!("rank{r}.bin"))).unwrap();
        f.set_len(64 << 30).unwrap();
    }
    let ring4 = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/msccl/ring-allreduce-4.xml");
    let three = ranks_dir("m-id-three", 3, 16);
    let probe = s(&tmp("m-id-probe"));
    let full = ranks_dir("m-id-probe-full", 2, 4);
    let p = |extra: &[&str]| {
        let mut x = sv(&["identify", "--make-probe", &probe]);
        x.extend(sv(extra));
        x
    };
    all.extend([
        (
            set_dtype(id(&good, &out, &[]), "i16"),
            "--dtype i16: integer sums do not depend on the order (nothing to identify)",
            2,
        ),
        (id(&good, &out, &["--accum", "fp8e4"]), "--accum fp8e4: the orders are evaluated", 2),
        (id(&good, &out, &["--rounding", "up"]), "--rounding 'up': expected rne or sr", 2),
        (
            id(&three, &three.join("rank0.bin"), &["--algo-file", ring4]),
            "for 4 ranks (ngpus), the inputs are an all-reduce of 3 ranks",
            2,
        ),
        (id(&sparse, &sparse.join("rank0.bin"), &[]), "the identification needs ", 2),
        (p(&["--ranks", "4", "--elems", "64", "--dtype", "fp8e3"]), "probe: fp8e3 cannot hold a cancelling pair", 2),
        (p(&["--ranks", "1", "--elems", "64", "--dtype", "bf16"]), "1 ranks: identify takes 2 to 64 ranks", 2),
        (p(&["--ranks", "4", "--elems", "0", "--dtype", "bf16"]), "the inputs hold no elements", 2),
        (p(&["--ranks", "64", "--elems", "0x100000000000", "--dtype", "bf16"]), "the probe needs ", 2),
        (p(&["--ranks", "4", "--elems", "64", "--dtype", "i8"]), "--dtype i8: integer sums", 2),
        (
            sv(&["identify", "--make-probe", &s(&full), "--ranks", "4", "--elems", "64", "--dtype", "bf16"]),
            "not empty (2 entries): --make-probe writes into an empty or new directory (or give --force)",
            2,
        ),
    ]);
}

/// `args` with `--dtype`'s value replaced.
fn set_dtype(args: Vec<String>, dtype: &str) -> Vec<String> {
    crate::set(args, "--dtype", &[dtype])
}

/// Every `cce identify` row.
pub(crate) fn rows(all: &mut Vec<Row>) {
    file_rows(all);
    npy_rows(all);
    rule_rows(all);
}
