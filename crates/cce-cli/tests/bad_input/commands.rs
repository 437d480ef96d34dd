//! Matrix rows for the command-line and request rules (see `bad_input.rs`).

use std::path::PathBuf;

use crate::common::tmp;
use crate::{Files, Row, build_args, reduce_args, set, sv};

/// Messages no command line can produce, with the reason (matched as template prefixes).
pub(crate) const UNREACHABLE: &[(&str, &str)] = &[
    (
        "the kernel alone: ",
        "`cce bench reduce` times the numerics kernel on the sources and spec the engine has just \
         reduced; reduce_with refuses only shapes the bench's size check refuses first",
    ),
    (
        "{name}: the kernel alone gave other bytes than the engine",
        "a consistency check of `cce bench reduce` (the kernel's spec restated against the \
         engine's resolution); bench_cmd.rs's unit test runs it on both thread counts",
    ),
    // MPI (feature `mpi`, which this matrix's build lacks; tests/mpi.rs runs them under mpirun)
    (
        "started by an MPI launcher, but this cce was built without MPI",
        "needs an MPI launcher's environment (OMPI_COMM_WORLD_SIZE); allreduce_cli.rs's \
         `under_an_mpi_launcher_without_the_feature_is_refused` sets it",
    ),
    (
        "under an MPI launcher only `cce bench allreduce` runs",
        "needs an MPI launcher's environment; allreduce_cli.rs's \
         `under_an_mpi_launcher_without_the_feature_is_refused` sets it",
    ),
    ("--sweep does not run under MPI", "needs an MPI launcher's environment: tests/mpi.rs (`mpi_refusals`)"),
    ("--compress does not run under MPI yet", "needs an MPI launcher's environment: tests/mpi.rs (`mpi_refusals`)"),
    ("{processes} processes for {} ranks", "feature `mpi` only: tests/mpi.rs (`mpi_refusals`)"),
    ("rank {q}'s input has {} bytes", "feature `mpi` only: tests/mpi.rs (`mpi_refusals`)"),
    ("MPI was initialised already", "with_mpi runs once per process, before anything else initialises MPI"),
    (
        "cannot watch for the launcher's stop",
        "signal-hook refuses only SIGKILL / SIGSTOP or a failed pipe; SIGTERM on Linux is accepted",
    ),
    (
        "the MPI library gives thread support",
        "Open MPI as Debian builds it gives MPI_THREAD_MULTIPLE; another MPI library might not",
    ),
    (
        "{groups} blocks for {} ranks",
        "run_partitioned has no command line; tests/partition.rs (cce-collectives) checks the refusal",
    ),
    // cce-cli
    (
        "bench JSON: ",
        "serialises a bench report, whose fields are numbers, strings and lists, which serde_json cannot fail on; no input reaches it",
    ),
    // cce-api
    (
        "svg plot: ",
        "plotters' SVG backend draws into a String, which cannot fail, and its text layout without a font \
         feature never errs; tests/plot.rs (cce-api) draws degenerate and random charts",
    ),
    (
        "a chart takes at most {MAX_SERIES} series, got {}",
        "the CLI's charts have a few series (`cce report numerics` 3, a sweep plot 2 per algorithm); tests/plot.rs \
         (cce-api) checks the refusal",
    ),
    (
        "no algorithm can run this configuration",
        "ring runs every configuration the model's checks pass (check_model), which choose calls first",
    ),
    (
        "demo checks failed: ",
        "only when the engine disagrees with the independent computation or the ranks disagree: a model bug, \
         never an input (and `cce demo` prints its examples on stdout before any check)",
    ),
    ("--ranks out of range", "--ranks is parsed as a u64, and usize is 64 bits on every target the project builds"),
    (
        "{encoder} takes {want} words, got {}",
        "only decode_words (the library's words entry point) counts words; `cce decode` takes hex, which \
         parse_hex_bytes refuses at the wrong length (\"expected 32 hex digits\")",
    ),
    (
        "load {index} at 0x{addr:x}: {problem}",
        "`cce run` renders a refused load with its --load argument (\"--load ADDR=FILE: region … overlaps … \
         (--load …)\") or file (\"--load FILE: the file is empty\")",
    ),
    (
        "nothing to load (0 bytes)",
        "a refused load's reason: `cce run` names the file instead (\"--load FILE: the file is empty\")",
    ),
    (
        "dump {index} at 0x{addr:x}: {error}",
        "`cce run` renders a refused dump with its file (\"--dump FILE: … exceed the budget …\")",
    ),
    // cce-collectives
    (
        "need {} inputs of ",
        "the CLI passes exactly --ranks inputs of --elems elements (a run, or a story over arrays, which only \
         Python's cce.element gives): generated, or read after read_inputs refused every rank{r}.bin of another length",
    ),
    (
        "rank {rank}'s input element {element}: ",
        "a story reads --input-dir's files element by element after checking each file's length, so only a file \
         that shrinks between the check and the read (or a failing disk) gets here",
    ),
    (
        "a buffer of {} bytes exceeds the model's {STRIDE}-byte slot",
        "ReduceJob::budget is PagedMemory::DEFAULT_BUDGET (16 GiB) = STRIDE and is checked first, so a buffer over \
         the slot is refused as over budget",
    ),
    (
        "sources differ in length: source 0 has {first} bytes, source {index} has {len} bytes",
        "`cce reduce` renders this error with the files' names (\"sources differ in length: a.bf16 has …\"); the \
         collectives pass equal-length rank buffers",
    ),
    (
        "{} outputs for {} destinations",
        "only run_reduce_into (the Python package) passes output buffers, and it allocates one per destination",
    ),
    (
        "output {k} has {} bytes, expected {out_len}",
        "only run_reduce_into (the Python package) passes output buffers, each allocated at elements x out size",
    ),
    // cce-engine
    (
        "region 0x{base:x} is read-only",
        "only HostMemory raises it, for a write into the caller's borrowed buffer; the reduce path maps sources \
         borrowed and writes only its owned destinations, and `cce run` uses PagedMemory",
    ),
    (
        "region 0x{base:x}+{len} is empty",
        "`cce run` refuses an empty --load file (\"the file is empty\") and a --dump of length 0 before mapping",
    ),
    // cce-host
    (
        "a reduce needs at least one ",
        "`cce build` and `cce reduce` require --src and --dst (clap names a missing one: \"missing --src\"), and \
         the collectives pass a source and a destination per rank",
    ),
    (
        "sdma_scale_dtype == al_sdma_m2m_meta_ctrl_data_type_fp32",
        "the CLI builds every FMA cce_info through ReduceRequest::with_fma_scales, which sets the scale dtype to fp32",
    ),
    (
        "cce_info.{field} is {info} but {given} addresses were given",
        "the CLI builds cce_info (with_fma_scales / with_min_max_constant) from the same address lists it passes",
    ),
    // cce-numerics: the CLI and the engine check these before the numerics do.
    (
        "source count {0} is outside 1..=32",
        "convert passes one source, and the engine only runs parsed packets (1..=32 sources, the packet parser \
         refuses more)",
    ),
    ("output count is 0", "convert and the engine always pass exactly one output"),
    (
        "{role} {index} has {len} bytes, not a multiple",
        "convert refuses a ragged input with its own message first, and the engine slices whole elements",
    ),
    ("source {index} has {len} bytes but source 0 has", "the engine passes every source the same number of elements"),
    (
        "output {index} has {len} bytes, expected",
        "convert allocates the output and the engine slices it at elements × out size",
    ),
    (
        "fma has {operand_sets} per-source operand sets",
        "the engine builds one FMA operand set per source of the packet",
    ),
    (
        "fma operand selector {0} is not one of",
        "the engine maps a bad selector to its own fault \"FMA operand selector 3 names no operand\" \
         (FaultReason::Selector)",
    ),
    (
        "element index {first} + {count} elements overflows u64",
        "the engine's first index is the destination address / out size, and that destination range was checked \
         not to overflow 64 bits",
    ),
    ("thread count {0} is invalid", "convert, reduce and run refuse --threads 0 themselves; the engine never passes 0"),
    (
        "an accumulate",
        "AccumType::from_sdma is called only by the engine, which replaces the error by its own \
         \"dtype … cannot be the accum dtype\"",
    ),
];

/// The paths the rows use, as strings (the scratch files written by [`paths`]); each group of
/// rows takes its own copy of the ones it names.
#[derive(Clone)]
struct Paths {
    a: String,
    ring: String,
    out: String,
    dir: String,
    odd: String,
    sparse: String,
    /// An empty file.
    empty: String,
    /// An all-reduce input directory whose rank1.bin is short.
    ranks_dir: String,
}

/// The fixtures' paths, and the empty file and the short all-reduce input directory written.
fn paths(f: &Files) -> Paths {
    let s = |p: &PathBuf| p.display().to_string();
    let (a, ring, out, dir) = (s(&f.a), s(&f.ring), s(&f.out), s(&f.dir));
    let (odd, sparse) = (s(&f.odd), s(&f.sparse));
    // An empty file, and an all-reduce input directory whose rank1.bin is short.
    let empty = tmp("c-empty.bin");
    std::fs::write(&empty, b"").unwrap();
    let empty = s(&empty);
    let ranks_dir = tmp("c-ranks");
    std::fs::create_dir_all(&ranks_dir).unwrap();
    std::fs::write(ranks_dir.join("rank0.bin"), [0u8; 32]).unwrap();
    std::fs::write(ranks_dir.join("rank1.bin"), [0u8; 16]).unwrap();
    let ranks_dir = s(&ranks_dir);
    Paths { a, ring, out, dir, odd, sparse, empty, ranks_dir }
}

/// `base`, then `extra`.
fn with(base: &[&str], extra: &[&str]) -> Vec<String> {
    let mut x = sv(base);
    x.extend(sv(extra));
    x
}

/// A two-rank ring all-reduce of bf16 adds, without its size.
const AR_BASE: [&str; 9] = ["allreduce", "--ranks", "2", "--algo", "ring", "--op", "add", "--dtype", "bf16"];

/// [`AR_BASE`], then `extra`.
fn allreduce(extra: &[&str]) -> Vec<String> {
    with(&AR_BASE, extra)
}

/// [`AR_BASE`] of 8 elements, then `extra`.
fn ar8(extra: &[&str]) -> Vec<String> {
    with(&AR_BASE, &[&["--elems", "8"], extra].concat())
}

pub(crate) fn rows(f: &Files) -> Vec<Row> {
    let p = paths(f);
    let mut rows = flag_rows(&p);
    rows.extend(dispatcher_rows(&p));
    rows.extend(reduce_rows(&p));
    rows.extend(run_rows(&p));
    rows.extend(convert_bench_report_rows(&p));
    rows.extend(allreduce_rows(&p));
    rows.extend(compress_rows());
    rows.extend(element_rows());
    rows.extend(value_rows());
    rows
}

/// `cce value`: the dtype, and a value that does not read in it.
fn value_rows() -> Vec<Row> {
    let value = |dtype: &str, v: &str| sv(&["value", "--dtype", dtype, "--value", v]);
    vec![
        (sv(&["value", "--dtype", "bf16"]), "missing <VALUE>", 2),
        (value("fp64", "1"), "--dtype 'fp64': expected one of u8, i8, u16, i16, u32, i32, u64, i64, fp16, bf16", 2),
        (
            value("fp32r", "1"),
            "--dtype 'fp32r': sdma dtype fp32r (value 11) is not valid as an input or output dtype",
            2,
        ),
        (value("bf16", "0xzz"), "--value '0xzz': expected 0x and hex digits (the bits of bf16)", 2),
        (value("u8", "0x100"), "--value '0x100' is wider than u8's 8 bits (at most 0xff)", 2),
        (
            value("bf16", "one"),
            "--value 'one': expected a decimal number, inf, -inf, nan, or 0x and the bits of bf16",
            2,
        ),
        (value("i8", "-129"), "--value '-129': expected an integer in -128..=127 (a i8), or 0x and its bits", 2),
    ]
}

/// `--element` and `--rank`: out of range, a reduce-scatter rank that does not hold it, a rank
/// without an element.
fn element_rows() -> Vec<Row> {
    let ar = |extra: &[&str]| {
        with(
            &["allreduce", "--ranks", "4", "--algo", "ring", "--op", "add", "--dtype", "bf16", "--elems", "100"],
            extra,
        )
    };
    vec![
        (ar(&["--element", "100"]), "--element 100 is past the run's 100 elements per rank (0..=99)", 2),
        (ar(&["--element", "5", "--rank", "4"]), "--rank 4: the run has ranks 0..=3", 2),
        (
            ar(&["--element", "0", "--rank", "0", "--collective", "reduce-scatter"]),
            "--rank 0 does not hold element 0 after a reduce-scatter (its elements are 25..50): rank 3 does",
            2,
        ),
        (ar(&["--rank", "1"]), "missing --element", 2),
    ]
}

/// The rows of build's flags, the missing and mistyped flags, and the flags of gen and encode.
fn flag_rows(p: &Paths) -> Vec<Row> {
    let Paths { out, .. } = p.clone();
    let build = |extra: &[&str]| build_args(&out, extra);
    vec![
        // build: flags.
        (build(&["--op", "add", "--out", "x"]), "the output dtype and the output file are both given already", 2),
        (
            // `--out FILE` alone: clap sees --out, the dtype is still missing.
            with(
                &["build", "--op", "add", "--in", "bf16", "--accum", "fp32", "--out", &out],
                &["--elems", "8", "--src", "0", "--dst", "0x100"],
            ),
            "the output dtype is required",
            2,
        ),
        // Missing flags: every one named, in one line.
        (sv(&["build"]), "missing --op, --in, --accum, --elems, --src, --dst, --out", 2),
        (sv(&["reduce"]), "missing --op, --in, --accum, --out, --src, --dst", 2),
        (sv(&["convert"]), "missing --from, --to, --input, --output", 2),
        (sv(&["encode"]), "missing <ENCODER>", 2),
        (sv(&["decode"]), "missing <ENCODER>, <HEX>...", 2),
        (sv(&["disasm"]), "missing the rings: a ring dump file, or --tx, --rx and --ring-size", 2),
        (sv(&["run"]), "missing the rings: a ring dump file, or --tx, --rx and --ring-size", 2),
        (sv(&["gen"]), "missing --dtype, --elems, --output", 2),
        // Mistyped names keep clap's suggestion.
        (sv(&["biuld"]), "unrecognized subcommand 'biuld'; did you mean 'build'?", 2),
        (build(&["--arhc", "3"]), "unexpected argument '--arhc' found; did you mean '--arch'?", 2),
        // cce gen.
        (
            sv(&["gen", "--dtype", "bf16", "--elems", "4", "--values", "sine", "-o", &out]),
            "--values 'sine': expected uniform, ramp or bits",
            2,
        ),
        (sv(&["gen", "--dtype", "u64", "--elems", "0x100000000", "-o", &out]), "exceed the 17179869184-byte budget", 2),
        (sv(&["gen", "--dtype", "fp32r", "--elems", "4", "-o", &out]), "not valid as an input or output dtype", 2),
        (
            build(&["--op", "fma", "--selectors", "input,scale,nothing"]),
            "--selectors: 'nothing' is not stored, input or scale",
            2,
        ),
        (build(&["--op", "fma", "--selectors", "input,scale"]), "--selectors takes three operands a,b,c", 2),
        (build(&["--op", "sub"]), "--op 'sub': expected add, fma, min, max, copy or transpose", 2),
        (set(build(&["--op", "add"]), "--arch", &["0x100000000"]), "--arch 4294967296 is out of range", 2),
        (
            build(&["--op", "fma", "--src", "0x2000", "0x3000", "--scale", "1", "2"]),
            "--scale: 2 scales for 3 sources",
            2,
        ),
        (build(&["--op", "add", "--seed", "5"]), "--seed is for --rounding sr", 2),
        (build(&["--op", "add", "--rounding", "rtz"]), "--rounding 'rtz': expected rne or sr", 2),
        (
            sv(&["encode", "min-max-meta-ctrl", "--const-dt", "fp32"]),
            "dtype fp32 (value 10) does not fit this 3-bit field (0..=7)",
            2,
        ),
    ]
}

/// The rows of build: the host's dispatcher rules.
fn dispatcher_rows(p: &Paths) -> Vec<Row> {
    let Paths { out, .. } = p.clone();
    let build = |extra: &[&str]| build_args(&out, extra);
    // A build with every flag given here (no default source, destination or output dtype).
    let build_bare = |extra: &[&str]| with(&["build", "--arch", "3", "--op", "add", "--in", "bf16", "-o", &out], extra);
    // With the base row's source, 33 sources; with 61 destinations, more than an arch-3 packet takes.
    let many: Vec<String> = (1..=32).map(|i| format!("0x{:x}", i * 0x10000)).collect();
    let src_more: Vec<&str> = many.iter().map(String::as_str).collect();
    let dst61: Vec<String> = (0..61).map(|i| format!("0x{:x}", 0x100_0000 + i * 0x10000)).collect();
    let dst61: Vec<&str> = dst61.iter().map(String::as_str).collect();
    vec![
        // build: the host's dispatcher rules.
        (build(&[&["--op", "add", "--src"], &src_more[..]].concat()), "33 sources: a CCE packet takes at most 32", 2),
        (build(&[&["--op", "add", "--dst"], &dst61[..]].concat()), "CCE concatenation not supported", 2),
        (
            build_bare(&["--accum", "fp32", "--out-dtype", "bf16", "--elems", "0", "--src", "0", "--dst", "0x100"]),
            "a reduce needs at least one element",
            2,
        ),
        (
            build_bare(&["--accum", "fp32", "--out-dtype", "0", "--elems", "8", "--src", "0", "--dst", "0x100"]),
            "out dtype invalid cannot be used here (it has no byte size)",
            2,
        ),
        (
            build_bare(&["--accum", "0", "--out-dtype", "bf16", "--elems", "8", "--src", "0", "--dst", "0x100"]),
            "accum dtype invalid cannot be used here (it names no type)",
            2,
        ),
        (build(&["--op", "add", "--const", "1"]), "a clamp constant is for MIN and MAX only", 2),
    ]
}

/// The rows of reduce, and demo's sizes.
fn reduce_rows(p: &Paths) -> Vec<Row> {
    let Paths { a, out, dir, .. } = p.clone();
    let reduce = |extra: &[&str]| reduce_args(&out, extra);
    vec![
        // reduce.
        (reduce(&["--op", "sub", "--src", &a]), "--op 'sub': expected add, fma, min or max", 2),
        (reduce(&["--op", "add", "--src", &dir]), "m-dir: not a regular file", 2),
        (reduce(&["--op", "add", "--threads", "0", "--src", &a]), "--threads must be at least 1", 2),
        (
            reduce(&["--op", "fma", "--src", &a, &a, &a, "--scale", "1", "2"]),
            "cce: 2 scales for 3 sources (give one, or one per source)",
            2,
        ),
        (
            sv(&["reduce", "--op", "fma", "--in", "i32", "--accum", "i32", "--out", "i32", "--src", &a, "--dst", &out]),
            "unsupported combination: fma needs a floating-point accumulate dtype",
            2,
        ),
        // demo refuses a bad size before printing anything.
        (sv(&["demo", "--elems", "0"]), "elements per rank must be positive", 2),
        (sv(&["demo", "--elems", "0x100000000000"]), "budget", 2),
        // A budget large enough to let a size through that the model's address slots cannot hold.
        (
            sv(&[
                "allreduce",
                "--ranks",
                "2",
                "--algo",
                "ring",
                "--op",
                "add",
                "--dtype",
                "fp32",
                "--elems",
                "1099511627776",
                "--budget",
                "4611686018427387904",
            ]),
            "4398046511104 bytes per rank exceed the model's buffer slots",
            2,
        ),
    ]
}

/// The rows of run and disasm: dumps, loads, raw rings.
fn run_rows(p: &Paths) -> Vec<Row> {
    let Paths { a, ring, out, odd, sparse, empty, .. } = p.clone();
    let dump_bad = format!("0x2000={out}");
    let dump_zero = format!("0x2000:0={out}");
    let load_empty = format!("0x1000={empty}");
    vec![
        // run.
        (sv(&["run", &ring, "--dump", &dump_bad]), "expected ADDR:LEN=FILE", 2),
        (sv(&["run", &ring, "--dump", &dump_zero]), "the length must be positive", 2),
        (sv(&["run", &ring, "--load", &load_empty]), "c-empty.bin: the file is empty", 2),
        // run / disasm with raw ring memory (a: 4 descriptors, odd: 7 bytes, sparse: 64 GiB).
        (sv(&["run", &ring, "--tx", &a, "--rx", &a, "--ring-size", "32"]), "give a ring dump or raw rings", 2),
        // --arch names a capture's arch (1..=4); a dump says its own.
        (
            sv(&["run", "--tx", &a, "--rx", &a, "--ring-size", "32", "--arch", "9"]),
            "--arch 9: raw rings are from arch 1, 2, 3 or 4",
            2,
        ),
        (sv(&["disasm", &ring, "--arch", "2"]), "--arch is for raw rings", 2),
        (
            sv(&["run", "--tx", &a, "--ring-size", "32"]),
            "raw rings come as one --tx, --rx and --ring-size per queue: got 1 --tx, 0 --rx, 1 --ring-size",
            2,
        ),
        (
            sv(&["disasm", "--tx", &a, "--rx", &a, "--ring-size", "32", "--phase", "1", "--phase", "2"]),
            "--phase is given 2 times for 1 queue(s): give it once per queue or not at all",
            2,
        ),
        (
            sv(&["run", "--tx", &odd, "--rx", &a, "--ring-size", "32"]),
            "queue 0: the tx ring has 7 bytes, not a whole number of 16-byte descriptors",
            2,
        ),
        (
            sv(&["run", "--tx", &a, "--rx", &sparse, "--ring-size", "32"]),
            "queue 0: the rx ring holds 4294967296 descriptors, more than its 32 slots",
            2,
        ),
        (
            sv(&["run", "--tx", &a, "--rx", &a, "--ring-size", "32", "--tx-tail", "5"]),
            "queue 0: tx tail 5 is past the end of the tx ring (4 descriptors given)",
            2,
        ),
        (
            sv(&["disasm", "--tx", &a, "--rx", &a, "--ring-size", "40"]),
            "queue 0: ring size 40 is not a multiple of 16 of at least 32 descriptors",
            2,
        ),
        (
            sv(&["run", "--tx", &a, "--rx", &a, "--ring-size", "32", "--phase", "4"]),
            "queue 0: phase 4 is not a ring id (0..=3)",
            2,
        ),
        (
            sv(&[&["run"][..], &[&["--tx", a.as_str(), "--rx", a.as_str(), "--ring-size", "32"][..]; 17].concat()]
                .concat()),
            "queue 16: queue ids must be unique and below 16",
            2,
        ),
    ]
}

/// The rows of convert, bench and report.
fn convert_bench_report_rows(p: &Paths) -> Vec<Row> {
    let Paths { a, out, .. } = p.clone();
    let convert = |extra: &[&str]| with(&["convert", "--input", &a, "--output", &out], extra);
    vec![
        // convert.
        (convert(&["--from", "fp32", "--to", "bf16", "--threads", "0"]), "--threads must be at least 1", 2),
        (
            convert(&["--from", "fp32r", "--to", "bf16"]),
            "sdma dtype fp32r (value 11) is not valid as an input or output dtype",
            2,
        ),
        // bench: refused before anything runs.
        (
            sv(&["bench", "everything"]),
            "unknown benchmark 'everything' (expected one of: numerics encode reduce allreduce)",
            2,
        ),
        // report.
        (sv(&["report", "everything"]), "unknown report 'everything' (expected one of: numerics model)", 2),
        (sv(&["report", "numerics", "--inputs", "gaussian"]), "--inputs 'gaussian': expected correlated or uniform", 2),
        (
            sv(&["report", "numerics", "--elems", "0"]),
            "--elems 0: the numerics report takes 1..=1048576 elements per rank",
            2,
        ),
    ]
}

/// The rows of allreduce.
fn allreduce_rows(p: &Paths) -> Vec<Row> {
    let Paths { out, ranks_dir, .. } = p.clone();
    vec![
        // allreduce.
        (allreduce(&[]), "--elems is required without --input-dir", 2),
        (
            with(
                &["allreduce", "--ranks", "2", "--algo", "tree", "--op", "add", "--dtype", "bf16", "--elems", "8"],
                &[],
            ),
            "--algo 'tree': expected ring, ring-2r2w, kangaring, mesh, rdh, hier, hier(INTRA/INTER) or auto",
            2,
        ),
        (
            with(
                &["allreduce", "--ranks", "2", "--algo", "ring", "--op", "add", "--dtype", "bf16", "--elems", "8"],
                &["--check", "some"],
            ),
            "'some': expected exact or none",
            2,
        ),
        (
            with(
                &["allreduce", "--ranks", "2", "--algo", "ring", "--op", "mul", "--dtype", "bf16", "--elems", "8"],
                &[],
            ),
            "--op 'mul': expected add, min, max or avg",
            2,
        ),
        (ar8(&["--rounding", "rtz"]), "--rounding 'rtz': expected rne or sr", 2),
        (
            ar8(&["--collective", "broadcast"]),
            "--collective 'broadcast': expected allreduce, reduce-scatter or all-gather",
            2,
        ),
        (ar8(&["--alpha-ns", "0"]), "--alpha-ns must be a positive number", 2),
        (ar8(&["--instance", "trn9"]), "--instance 'trn9': expected trn1, trn2 or trn3", 2),
        (ar8(&["--engines", "0"]), "--engines must be 1..=1024", 2),
        (
            allreduce(&["--elems", "4398046511104", "--explain"]),
            "4398046511104 elements of bf16 per rank do not fit the model's buffer slots",
            2,
        ),
        (
            with(
                &["allreduce", "--ranks", "1024", "--algo", "ring", "--op", "add", "--dtype", "bf16"],
                &["--elems", "2048", "--trace", &out],
            ),
            "the trace would hold 2095104 packets, 2095104 steps drawn alone: at most 500000 steps (use fewer ranks)",
            2,
        ),
        (ar8(&["--link-gbps", "inf"]), "--link-gbps must be a positive number", 2),
        (ar8(&["--launch-us=-1"]), "--launch-us must be 0 or more", 2),
        (ar8(&["--step-us", "nan"]), "--step-us must be 0 or more", 2),
        (ar8(&["--dma-share", "1.5"]), "--dma-share must be above 0 and at most 1", 2),
        (ar8(&["--dma-share", "0"]), "--dma-share must be above 0 and at most 1", 2),
        (allreduce(&["--input-dir", &ranks_dir]), "rank1.bin: 16 bytes, expected 32 (16 elements of bf16)", 2),
        (allreduce(&["--sweep", "1024"]), "--sweep '1024': expected MIN:MAX bytes", 2),
        (allreduce(&["--sweep", "2048:1024"]), "--sweep: MIN must be positive and at most MAX", 2),
        (ar8(&["--arch", "7"]), "rank 0 step 0: unsupported arch 7", 2),
        (ar8(&["--fail-rank", "5", "--fail-step", "0"]), "--fail-rank 5 --fail-step 0: ranks 0..2, steps 0..", 2),
        (ar8(&["--fail-rank", "1", "--fail-step", "0"]), "rank 1 failed at step 0: injected failure", 1),
    ]
}

/// The rows of allreduce --compress gce.
fn compress_rows() -> Vec<Row> {
    vec![
        // --compress gce (docs/MODEL.md G6).
        (ar8(&["--compress", "zstd"]), "--compress 'zstd': expected gce or none", 2),
        (
            with(
                &["allreduce", "--ranks", "4", "--algo", "mesh", "--op", "add", "--dtype", "bf16"],
                &["--elems", "64", "--compress", "gce"],
            ),
            "--compress gce runs the ring all-reduce (--algo ring), not mesh",
            2,
        ),
        (
            with(
                &["allreduce", "--ranks", "4", "--algo", "auto", "--op", "add", "--dtype", "bf16"],
                &["--elems", "64", "--compress", "gce"],
            ),
            "--compress gce runs the ring all-reduce: give --algo ring, not auto",
            2,
        ),
        (
            ar8(&["--compress", "gce", "--collective", "reduce-scatter"]),
            "--compress gce runs the whole all-reduce, not a reduce-scatter or all-gather alone",
            2,
        ),
        (
            with(
                &["allreduce", "--ranks", "4", "--algo", "ring", "--op", "add", "--dtype", "i32"],
                &["--elems", "64", "--compress", "gce"],
            ),
            "--compress gce compresses bf16, fp16 or fp32 buffers, not i32",
            2,
        ),
        (
            ar8(&["--compress", "gce", "--arch", "2"]),
            "--compress gce needs the EXT combo packet: arch 3 or 4, not 2",
            2,
        ),
        (
            ar8(&["--compress", "gce", "--ranks-per-node", "2"]),
            "--compress gce compresses the hops between nodes, and 2 ranks of 2 per node are one node: give --ranks-per-node below 2",
            2,
        ),
    ]
}
