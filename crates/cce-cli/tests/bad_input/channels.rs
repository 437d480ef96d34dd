//! Rows of the bad-input matrix for the flat ring's channels (`--channels C`, docs/MODEL.md
//! C29): out of 1..=32, on an algorithm other than the flat ring, with `--compress gce` — in
//! `cce allreduce` (a run, `--element`, `--trace`), `cce repro` and `cce identify`.

use crate::common::files_dir;
use crate::{Row, sv};

fn ar(args: &[&str]) -> Vec<String> {
    sv(&[&["allreduce", "--op", "add", "--dtype", "bf16", "--elems", "64"], args].concat())
}

fn repro(args: &[&str]) -> Vec<String> {
    sv(&[&["repro", "--ranks", "8", "--dtype", "bf16", "--elems", "64"], args].concat())
}

pub(crate) fn rows(all: &mut Vec<Row>) {
    // Four ranks' bf16 inputs of 16 elements, and rank 0's output, for identify.
    let ranks: Vec<(String, Vec<u8>)> = (0..4).map(|r| (format!("rank{r}.bin"), vec![0x3f; 32])).collect();
    let ins = files_dir("m-ch-in", &ranks).display().to_string();
    let out = files_dir("m-ch-out", &[("rank0.bin", vec![0x3f; 32])]).join("rank0.bin").display().to_string();
    let identify =
        |c: &str| sv(&["identify", "--input-dir", &ins, "--observed", &out, "--dtype", "bf16", "--channels", c]);
    let trace = crate::common::tmp("m-ch-trace.json").display().to_string();
    let rows: Vec<(Vec<String>, &'static str)> = vec![
        (ar(&["--algo", "ring", "--ranks", "8", "--channels", "33"]), "--channels 33: between 1 and 32"),
        (ar(&["--algo", "ring-2r2w", "--ranks", "8", "--channels", "0"]), "--channels 0: between 1 and 32"),
        (
            ar(&["--algo", "ring", "--ranks", "8", "--channels", "0x100000000"]),
            "--channels 4294967296: between 1 and 32",
        ),
        (
            ar(&["--algo", "mesh", "--ranks", "8", "--channels", "2"]),
            "--channels 2 splits the flat ring into ring cycles: --algo ring or ring-2r2w, not mesh",
        ),
        (
            ar(&["--algo", "kangaring", "--ranks", "8", "--channels", "2", "--element", "3"]),
            "--channels 2 splits the flat ring into ring cycles: --algo ring or ring-2r2w, not kangaring",
        ),
        (
            ar(&["--algo", "rdh", "--ranks", "8", "--channels", "2", "--trace", &trace]),
            "--channels 2 splits the flat ring into ring cycles: --algo ring or ring-2r2w, not rdh",
        ),
        (
            ar(&["--algo", "hier", "--nodes", "2", "--ranks-per-node", "4", "--channels", "2"]),
            "--channels 2 splits the flat ring into ring cycles: --algo ring or ring-2r2w, not hier(ring/ring)",
        ),
        (
            ar(&["--algo", "ring", "--ranks", "8", "--ranks-per-node", "4", "--channels", "2", "--compress", "gce"]),
            "--channels 2: --compress gce runs the ring of one channel",
        ),
        (repro(&["--algo", "ring", "--channels", "1,33"]), "--channels 33: between 1 and 32"),
        (
            repro(&["--algo", "mesh,kangaring", "--channels", "2"]),
            "no configuration of the lists can run (--channels 2 splits the flat ring into ring cycles: --algo ring or ring-2r2w, not mesh)",
        ),
        (
            repro(&["--algo", "ring", "--ranks-per-node", "4", "--channels", "2", "--compress", "gce"]),
            "no configuration of the lists can run (--channels 2: --compress gce runs the ring of one channel)",
        ),
        (identify("33"), "--channels 33: between 1 and 32"),
        (identify("0"), "--channels 0: between 1 and 32"),
    ];
    all.extend(rows.into_iter().map(|(args, want)| (args, want, 2)));
}
