//! Matrix rows for `cce repro` (see `bad_input.rs`): lists, the size of the space, input
//! directories, the memory bound, a heatmap too large; every one refused before anything runs.

use crate::common::npy_v1;
use crate::{Row, dir, leak, sv};

/// Messages no command line can produce, with the reason (matched as template prefixes).
pub(crate) const UNREACHABLE: &[(&str, &str)] = &[
    (
        "--{}: the list is empty",
        "every list flag of `cce repro` is required or has a default, and clap refuses an empty value by its \
         parser; tests/python/test_repro.py passes cce.repro an empty list",
    ),
    (
        "rank {r}'s input holds {} bytes, rank 0's {len}",
        "the CLI refuses rank files of different lengths by their sizes before reading (\"every rank's input must \
         hold as many\"); tests/python/test_repro.py passes cce.repro arrays of different lengths",
    ),
    (
        "the inputs hold {} ranks of {len} bytes: the plan needs",
        "both fronts take the plan's shape from the inputs they then pass (the CLI reads what the plan needs, \
         Python passes the arrays it measured); only a direct caller of the library can pass others",
    ),
];

/// `cce repro` over 4 bf16 ranks of ring with `extra` after it.
fn repro(extra: &[&str]) -> Vec<String> {
    let mut v = sv(&["repro", "--ranks", "4", "--algo", "ring", "--dtype", "bf16"]);
    v.extend(sv(extra));
    v
}

/// An .npy file's bytes: a version 1 header with `descr` and `shape`, then `data`.
fn npy(descr: &str, shape: &str, data: &[u8]) -> Vec<u8> {
    npy_v1(&format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}"), data)
}

pub(crate) fn rows(all: &mut Vec<Row>) {
    let four = dir("r-four", &[0, 1, 2, 3].map(|r| (leak(format!("rank{r}.bin")), vec![0u8; 128])));
    let ragged = dir("r-ragged", &[("rank0.bin", vec![0u8; 128]), ("rank1.bin", vec![0u8; 64])]);
    let odd = dir("r-odd", &[("rank0.bin", vec![0u8; 7])]);
    let empty = dir("r-empty", &[]);
    let f4 = dir("r-npy-f4", &[("rank0.npy", npy("<f4", "(16,)", &[0u8; 64]))]);
    let short = dir("r-npy-short", &[("rank0.npy", npy("<V2", "(16,)", &[0u8; 30]))]);
    let magic = dir("r-npy-magic", &[("rank0.npy", b"NUMPY but not quite".to_vec())]);
    // rank1 missing, rank2 there: named, not read as a 1-rank directory.
    let gap = dir("r-gap", &[("rank0.bin", vec![0u8; 128]), ("rank2.bin", vec![0u8; 128])]);
    let allgather = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/msccl-scheduler/ncv4-ag_hier_4_LL.xml");
    let v = sv;
    let rows: Vec<(Vec<String>, &'static str)> = vec![
        (repro(&["--elems", "8:4"]), "--elems '8:4': an empty sweep (MIN must be positive and at most MAX)"),
        (repro(&["--elems", "64:x"]), "--elems '64:x': 'x' is not a number"),
        (
            repro(&["--elems", "64", "--algo", "mesh,foo"]),
            "--algo 'foo': expected ring, ring-2r2w, kangaring, mesh, rdh, hier, hier(INTRA/INTER) or auto",
        ),
        (
            repro(&["--elems", "64", "--rounding", "rne,sr", "--seed", "5000000000"]),
            "stochastic rounding's seed is 32 bits",
        ),
        (repro(&["--elems", "64", "--seed", "1,2"]), "--seed lists several seeds, but no --rounding is sr"),
        (
            v(&[
                "repro",
                "--ranks",
                "2,3,4,5,6,7,8",
                "--algo",
                "ring,mesh,rdh,kangaring,auto",
                "--elems",
                "1:4096",
                "--dtype",
                "bf16,fp32",
                "--arch",
                "3,4",
            ]),
            "the lists make more than 1024 configurations",
        ),
        (
            v(&[
                "repro",
                "--ranks",
                "2,4,8",
                "--algo",
                "ring,mesh,kangaring",
                "--elems",
                "1:65536",
                "--dtype",
                "bf16,fp32",
                "--plot",
                "r.svg",
            ]),
            "--plot: 306 configurations; the heatmap draws at most 256",
        ),
        (
            v(&["repro", "--ranks", "4097", "--algo", "ring", "--elems", "64", "--dtype", "bf16"]),
            "configuration (ranks 4097, dtype bf16, algo ring, elems 64",
        ),
        (
            v(&["repro", "--ranks", "3", "--algo", "rdh", "--elems", "64", "--dtype", "bf16"]),
            "no configuration of the lists can run (rdh pairs ranks",
        ),
        (
            v(&["repro", "--ranks", "4", "--algo", "mesh", "--elems", "64", "--dtype", "bf16", "--compress", "gce"]),
            "--compress gce runs the ring all-reduce only",
        ),
        (
            repro(&["--elems", "65536", "--budget", "1750000"]),
            "bytes with the reference output and inputs repro holds beside the run, over the budget of 1750000",
        ),
        (repro(&["--elems", "16", "--algo-file", allgather]), "a allgather schedule; repro compares all-reduces"),
        (repro(&["--input-dir", &four, "--ranks", "8"]), "--ranks 8: the inputs hold 4 ranks"),
        (repro(&["--input-dir", &four, "--elems", "128"]), "--elems 128: the inputs hold 64 elements per rank"),
        (repro(&["--input-dir", &four, "--dtype", "bf16,fp16"]), "--dtype: given inputs are of one dtype"),
        (
            repro(&["--input-dir", &ragged]),
            leak(format!(
                "{ragged}/rank1.bin: 32 elements, {ragged}/rank0.bin: 64: every rank's input must hold as many"
            )),
        ),
        (repro(&["--input-dir", &odd]), "7 bytes, not a multiple of the bf16 element size 2"),
        (repro(&["--input-dir", &empty]), "no rank0.bin or rank0.npy"),
        (
            repro(&["--input-dir", &f4]),
            ".npy dtype '<f4': expected little-endian items of 2 bytes, of kind f or V (bf16)",
        ),
        (repro(&["--input-dir", &short]), "its shape (16,) needs 32 data bytes, the file has 30"),
        (repro(&["--input-dir", &magic]), "not a .npy file (no \\x93NUMPY magic)"),
        (repro(&["--input-dir", &gap]), "rank1.bin (or .npy) is missing, and "),
    ];
    all.extend(rows.into_iter().map(|(a, w)| (a, w, 2)));
}
