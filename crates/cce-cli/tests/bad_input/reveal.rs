//! Matrix rows for `cce reveal` (see `bad_input.rs`): shapes it has no masks for (an integer
//! dtype, 65 ranks, fewer elements than pairs of ranks), a `--run` without `{in}` or `{out}`,
//! black boxes that fail (a non-zero exit, no files, files of the wrong size, a time-out), a
//! `--plan` into a directory that holds files, a plan replayed with other inputs or without
//! run 1's outputs, and `--plot` into a missing directory: each refused with exit 2. Two rows
//! run and end not revealed (exit 1, the reason on stderr): an echo, and a plan that wants run 2.

use std::path::Path;

use crate::common::tmp;
use crate::{Row, leak, sv};

/// Messages no command line can produce, with the reason (matched as template prefixes).
pub(crate) const UNREACHABLE: &[(&str, &str)] = &[
    (
        "{dtype} at {ranks} ranks: {why}",
        "fp32, bf16 and fp16 (the dtypes past the dtype check) have masks at every rank count 2..=64 \
         (fp16's units subnormal past 18 ranks); mask.rs's tests make them all",
    ),
    (
        "the reveal of {} ranks x {} elements of {} needs about {bytes} bytes",
        "the rank count is refused past 64 first, and 64 ranks x the elements the budget allows \
         would be refused by --elems' own parser or take minutes to make; tests/reveal.rs (cce-api) reaches it",
    ),
    ("{} elements: too many", "usize holds every u64 on the 64-bit targets cce is built for"),
    ("cannot make {}", "the scratch directory was just made by cce; --plan's parent missing is the io error row"),
    ("cannot write {}", "as above: writes into directories cce just made"),
    ("no listed orders", "the splitting runs are asked for only after the listed orders are set (Reveal::start_hypo)"),
    ("no reason given", "a reveal that is not revealed always carries its reason (Reveal::result)"),
    ("give --run 'CMD', --plan DIR, or --input-dir DIR --observed OUT", "clap requires one of them first"),
];

fn s(p: &Path) -> String {
    p.display().to_string()
}

/// `cce reveal --run CMD --ranks 4 --elems 64 --dtype bf16`, then `extra`.
fn run(cmd: &str, extra: &[&str]) -> Vec<String> {
    let mut x = sv(&["reveal", "--run", cmd, "--ranks", "4", "--elems", "64", "--dtype", "bf16"]);
    x.extend(sv(extra));
    x
}

/// The rows of shapes and commands.
fn shape_rows(all: &mut Vec<Row>) {
    let ok = "cp {in}/rank0.bin {out}/ ; cp {in}/rank1.bin {in}/rank2.bin {in}/rank3.bin {out}/";
    let set = |flag: &str, value: &str| {
        let mut x = run(ok, &[]);
        let i = x.iter().position(|a| a == flag).unwrap();
        x[i + 1] = value.to_string();
        x
    };
    all.extend([
        (set("--dtype", "i32"), "--dtype i32: reveal takes fp32, bf16 or fp16", 2),
        (set("--ranks", "65"), "65 ranks: reveal takes 2 to 64 ranks", 2),
        (set("--ranks", "1"), "1 ranks: reveal takes 2 to 64 ranks", 2),
        (set("--elems", "0"), "0 elements: a reveal of 4 ranks needs at least 1", 2),
        (run("cat {in}/rank0.bin", &[]), "--run 'cat {in}/rank0.bin': the command must name {in} and {out}", 2),
        (run("ls {out}", &[]), "must name {in} and {out}", 2),
    ]);
}

/// The rows of black boxes that fail: each names the run and the command.
fn black_box_rows(all: &mut Vec<Row>) {
    let fails = "echo first line >&2; echo the last line >&2; exit 3 # {in} {out}";
    let wrong_size = "for r in 0 1 2 3; do printf ab > {out}/rank$r.bin; done # {in}";
    let three = "cp {in}/rank0.bin {in}/rank1.bin {in}/rank2.bin {out}/";
    all.extend([
        (run(fails, &[]), "run 1: `echo first line >&2; echo the last line >&2; exit 3 # ", 2),
        (run(fails, &[]), "` failed (exit status: 3): the last line", 2),
        (run("true {in} {out}", &[]), "run 1: `true ", 2),
        (run("true {in} {out}", &[]), "/run1/out/rank0.bin", 2),
        (run(three, &[]), "/run1/out/rank3.bin", 2),
        (run(wrong_size, &[]), "/rank0.bin with 2 bytes; the inputs hold 128", 2),
        (run("sleep 5 # {in} {out}", &["--timeout", "1"]), "run 1: `sleep 5 # ", 2),
        (run("sleep 5 # {in} {out}", &["--timeout", "1"]), "` did not finish within 1 s", 2),
    ]);
}

/// The rows of plans: a directory that holds files, a replay with other inputs, no outputs.
fn plan_rows(all: &mut Vec<Row>) {
    let full = tmp("m-rv-full");
    std::fs::create_dir_all(&full).unwrap();
    std::fs::write(full.join("notes.txt"), b"keep").unwrap();
    let plan = tmp("m-rv-plan");
    let _ = std::fs::remove_dir_all(&plan);
    let o = crate::common::cce(&["reveal", "--plan", &s(&plan), "--ranks", "4", "--elems", "64", "--dtype", "bf16"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    // Run 1's outputs (any bytes of the right size), beside no outputs at all.
    let observed = tmp("m-rv-observed");
    std::fs::create_dir_all(observed.join("run1")).unwrap();
    for r in 0..4 {
        std::fs::write(observed.join(format!("run1/rank{r}.bin")), [0u8; 128]).unwrap();
    }
    let short = tmp("m-rv-short");
    std::fs::create_dir_all(short.join("run1")).unwrap();
    for r in 0..4 {
        std::fs::write(short.join(format!("run1/rank{r}.bin")), [0u8; 100]).unwrap();
    }
    let none = tmp("m-rv-none");
    std::fs::create_dir_all(&none).unwrap();
    let replay = |observed: &Path, elems: &str| {
        sv(&[
            "reveal",
            "--input-dir",
            &s(&plan),
            "--observed",
            &s(observed),
            "--ranks",
            "4",
            "--elems",
            elems,
            "--dtype",
            "bf16",
        ])
    };
    let p = |dir: &Path, extra: &[&str]| {
        let mut x = sv(&["reveal", "--plan", &s(dir), "--ranks", "4", "--elems", "64", "--dtype", "bf16"]);
        x.extend(sv(extra));
        x
    };
    all.extend(
        [
            (p(&full, &[]), leak(format!("{}: not empty (1 entries): --plan writes into an empty", s(&full)))),
            (p(&full, &["--json"]), "or give --force"),
            (
                replay(&observed, "65"),
                leak(format!("{}: not the input this reveal asks for in run 1", s(&plan.join("run1/rank0.bin")))),
            ),
            (replay(&none, "64"), leak(format!("{}: no outputs of run 1", s(&none.join("run1"))))),
            (
                replay(&short, "64"),
                leak(format!("{}: run 1's outputs: {}", s(&short), s(&short.join("run1/rank0.bin")))),
            ),
            (replay(&short, "64"), "with 100 bytes; the inputs hold 128"),
        ]
        .into_iter()
        .map(|(args, want)| (args, want, 2)),
    );
}

/// The rows of `--plot`: a path that cannot be written, refused before any run.
fn plot_rows(all: &mut Vec<Row>) {
    let missing = tmp("m-rv-no-dir").join("t.svg");
    let ok = "cp {in}/rank0.bin {in}/rank1.bin {in}/rank2.bin {in}/rank3.bin {out}/";
    all.extend([
        (run(ok, &["--plot", &s(&missing)]), leak(format!("{}: No such file or directory", s(&missing))), 2),
        (run(ok, &["--plot", &s(&tmp("m-dir"))]), "m-dir: a directory, not a file", 2),
        (
            sv(&[
                "reveal",
                "--plan",
                &s(&tmp("m-rv-plot-plan")),
                "--ranks",
                "4",
                "--elems",
                "64",
                "--dtype",
                "bf16",
                "--plot",
                "t.svg",
            ]),
            "--plot",
            2,
        ),
    ]);
}

/// The rows that run and end not revealed (exit 1, the reason on stderr): a black box that
/// echoes its inputs (no counts), and a plan replayed after run 1 (it wants run 2).
fn not_revealed_rows(all: &mut Vec<Row>) {
    let echo = "cp {in}/rank0.bin {in}/rank1.bin {in}/rank2.bin {in}/rank3.bin {out}/";
    all.push((run(echo, &[]), "not revealed: run 1, element 0 of rank 0: the output is no count", 1));
    let plan = tmp("m-rv-plan2");
    let observed = tmp("m-rv-observed2");
    let _ = std::fs::remove_dir_all(&plan);
    let _ = std::fs::remove_dir_all(&observed);
    let shape = ["--ranks", "4", "--elems", "64", "--dtype", "bf16"];
    let o = crate::common::cce(&[&["reveal", "--plan", &s(&plan)][..], &shape].concat());
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let (inputs, outputs) = (s(&plan.join("run1")), s(&observed.join("run1")));
    let ring = ["allreduce", "--algo", "ring", "--op", "add", "--input-dir", &inputs, "--output-dir", &outputs];
    let o = crate::common::cce(&[&ring[..], &shape].concat());
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let mut replay = sv(&["reveal", "--input-dir", &s(&plan), "--observed", &s(&observed)]);
    replay.extend(sv(&shape));
    all.push((replay, leak(format!("the reveal wants run 2: its inputs are in {}", s(&plan.join("run2")))), 1));
}

/// Every row of `cce reveal`.
pub(crate) fn rows(all: &mut Vec<Row>) {
    shape_rows(all);
    black_box_rows(all);
    plan_rows(all);
    plot_rows(all);
    not_revealed_rows(all);
}
