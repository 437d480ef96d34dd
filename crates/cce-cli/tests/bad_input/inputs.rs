//! Matrix rows for `cce allreduce --input-dir` (rank{r}.bin or rank{r}.npy), `--element` and
//! `--rank` out of range (negative ones included), and `.npy` headers the reader refuses.

use crate::common::npy_v1 as npy;
use crate::{Row, dir, leak, sv};

/// `cce allreduce` of 4 bf16 ranks of ring, then `extra`.
fn ar(extra: &[&str]) -> Vec<String> {
    let mut v = sv(&["allreduce", "--ranks", "4", "--algo", "ring", "--op", "add", "--dtype", "bf16"]);
    v.extend(sv(extra));
    v
}

pub(crate) fn rows(all: &mut Vec<Row>) {
    let three = dir("i-three", &[0, 1, 2].map(|r| (leak(format!("rank{r}.bin")), vec![0u8; 128])));
    let huge = {
        let mut b = b"\x93NUMPY\x02\x00".to_vec();
        b.extend(0x0200_0000u32.to_le_bytes());
        dir("i-huge", &[("rank0.npy", b)])
    };
    let order = dir("i-order", &[("rank0.npy", npy("{'descr': '<V2', 'shape': (64,), }", &[0; 128]))]);
    let shape =
        dir("i-shape", &[("rank0.npy", npy("{'descr': '<V2', 'fortran_order': False, 'shape': (8, x), }", &[0; 128]))]);
    let e64 = ["--elems", "64"];
    let rows: Vec<(Vec<String>, &'static str)> = vec![
        (
            ar(&[&e64[..], &["--element", "-1"]].concat()),
            "--element -1 is before the run's 64 elements per rank (0..=63)",
        ),
        (ar(&[&e64[..], &["--element", "0", "--rank", "-1"]].concat()), "--rank -1: the run has ranks 0..=3"),
        (ar(&["--input-dir", &three]), "rank3.bin (or .npy) is missing: the run has 4 ranks"),
        (ar(&["--input-dir", &three, "--element", "0"]), "rank3.bin (or .npy) is missing: the run has 4 ranks"),
        (
            sv(&["allreduce", "--nodes", "2", "--ranks-per-node", "2", "--algo", "ring", "--op", "add"])
                .into_iter()
                .chain(sv(&["--dtype", "bf16", "--input-dir", &three, "--element", "0"]))
                .collect(),
            "need 4 input files, one per rank",
        ),
        (ar(&["--input-dir", &huge]), "a .npy header of 33554432 bytes (at most 1048576 are read)"),
        (ar(&["--input-dir", &order]), "a .npy header without fortran_order True or False"),
        (ar(&["--input-dir", &shape]), "the .npy shape (8, x) is not a tuple of sizes"),
    ];
    all.extend(rows.into_iter().map(|(a, w)| (a, w, 2)));
}
