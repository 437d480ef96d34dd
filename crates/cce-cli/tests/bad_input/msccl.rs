//! Matrix rows for users' MSCCL XML schedules (see `bad_input.rs`): `cce algo` and `cce
//! allreduce --algo-file` over copies of `examples/msccl/ring-allreduce-4.xml` with one defect
//! each, and flags that disagree with a file. Every row is a refusal (exit 2) naming where.

use crate::common::tmp;
use crate::{Files, Row, leak, sv};

/// Messages no command line can produce, with the reason (matched as template prefixes).
pub(crate) const UNREACHABLE: &[(&str, &str)] = &[
    (
        "a dependency cycle",
        "Kahn's algorithm leaves a transmission unordered only when it has an unordered predecessor, so the \
         cycle search always starts",
    ),
    (
        "is part of a dependency cycle",
        "every unordered transmission has an unordered predecessor, so the backward walk always closes a cycle",
    ),
    ("cce algo needs a file", "cce algo builds its configuration from the file (cce_api::algo::config)"),
];

/// The ring of four ranks, as the example file holds it.
fn ring() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/msccl/ring-allreduce-4.xml"))
        .expect("examples/msccl/ring-allreduce-4.xml")
}

/// Rank 0's thread block, its steps replaced by `steps` (each `<step>` line without `s`, which
/// is numbered here), and one more thread block `extra` of rank 0 when given.
fn rank0(steps: &[&str], extra: Option<(&str, &[&str])>) -> String {
    let text = ring();
    let start = text.find("    <tb id=\"0\" send=\"1\"").expect("rank 0's tb");
    let end = start + text[start..].find("    </tb>\n").expect("its end") + "    </tb>\n".len();
    let numbered = |steps: &[&str]| -> String {
        steps.iter().enumerate().map(|(k, s)| format!("      <step s=\"{k}\" {s} />\n")).collect()
    };
    let mut tb = format!("    <tb id=\"0\" send=\"1\" recv=\"3\" chan=\"0\">\n{}    </tb>\n", numbered(steps));
    if let Some((head, more)) = extra {
        tb.push_str(&format!("    <tb id=\"1\" {head}>\n{}    </tb>\n", numbered(more)));
    }
    format!("{}{tb}{}", &text[..start], &text[end..])
}

/// A step's attributes after `s`.
fn st(t: &str, src: (&str, i64), dst: (&str, i64), cnt: i64, dep: (i64, i64), hasdep: i64) -> String {
    format!(
        "type=\"{t}\" srcbuf=\"{}\" srcoff=\"{}\" dstbuf=\"{}\" dstoff=\"{}\" cnt=\"{cnt}\" depid=\"{}\" deps=\"{}\" hasdep=\"{hasdep}\"",
        src.0, src.1, dst.0, dst.1, dep.0, dep.1
    )
}

/// Rank 0's steps as the example has them.
fn ring0() -> Vec<String> {
    let none = ("o", -1);
    vec![
        st("s", ("i", 3), none, 1, (-1, -1), 0),
        st("rrs", ("i", 2), none, 1, (-1, -1), 0),
        st("rrs", ("i", 1), none, 1, (-1, -1), 0),
        st("rrcs", ("i", 0), ("o", 0), 1, (-1, -1), 0),
        st("rcs", ("i", -1), ("o", 3), 1, (-1, -1), 0),
        st("rcs", ("i", -1), ("o", 2), 1, (-1, -1), 0),
        st("r", ("i", -1), ("o", 1), 1, (-1, -1), 0),
    ]
}

/// The users' files, written as `m-msccl-<n>.xml` in turn.
#[derive(Default)]
struct XmlFiles {
    written: usize,
}

impl XmlFiles {
    /// Writes `text` to the next file; its path.
    fn write(&mut self, text: String) -> String {
        self.written += 1;
        let p = tmp(&format!("m-msccl-{}.xml", self.written));
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    }
}

pub(crate) fn rows(f: &Files, all: &mut Vec<Row>) {
    let mut files = XmlFiles::default();
    let base = ring0();
    for (text, want) in one_block_cases(&base).into_iter().chain(two_block_cases(&base)) {
        let p = files.write(text);
        all.push((sv(&["algo", &p]), want, 2));
    }
    algo_file_rows(f, &mut files, all);
}

/// (file text, expected message) of the file's form, its attributes and rank 0's one thread
/// block (`base`, the example's steps) edited.
fn one_block_cases(base: &[String]) -> Vec<(String, &'static str)> {
    let edit = |k: usize, s: String| -> Vec<String> {
        let mut v = base.to_vec();
        v[k] = s;
        v
    };
    let refs = |v: &[String]| -> Vec<String> { v.to_vec() };
    let with = |v: Vec<String>| rank0(&v.iter().map(String::as_str).collect::<Vec<_>>(), None);
    let text = ring();
    vec![
        (text.replacen("<gpu id=\"0\"", "<gpu id=\"0\"><!--", 1), "not well-formed XML"),
        (text.replace("<algo ", "<algorithm ").replace("</algo>", "</algorithm>"), "the root element is <algorithm>"),
        (
            text.replacen("coll=\"allreduce\"", "coll=\"alltoall\"", 1),
            "cce runs allreduce, reducescatter and allgather",
        ),
        (text.replacen("proto=\"Simple\"", "proto=\"Fast\"", 1), "the executor knows Simple, LL and LL128"),
        (text.replacen("inplace=\"0\"", "inplace=\"2\"", 1), "inplace=\"2\": 0 or 1"),
        (
            text.replacen("<step s=\"1\"", "<stpe s=\"1\"", 1).replacen("</step>", "</stpe>", 0),
            "unknown element <stpe> in <tb>",
        ),
        (text.replacen("type=\"rrs\"", "type=\"rrx\"", 1), "unknown step type \"rrx\""),
        (text.replacen("srcbuf=\"i\"", "srcbuf=\"x\"", 1), "srcbuf=\"x\": expected i, o or s"),
        (text.replacen(" cnt=\"1\"", "", 1), "<step> lacks the attribute cnt"),
        (text.replacen("cnt=\"1\"", "cnt=\"1.0\"", 1), "cnt=\"1.0\" is not a decimal integer"),
        (text.replacen("cnt=\"1\"", "cnt=\"99999999999999999999\"", 1), "is out of range"),
        (text.replacen("<tb id=\"0\" send=\"1\"", "<tb id=\"0\" send=\"0\"", 1), "send 0 is the rank itself"),
        (
            text.replacen("<tb id=\"0\" send=\"1\" recv=\"3\"", "<tb id=\"0\" send=\"1\" recv=\"7\"", 1),
            "recv 7: -1 or a rank 0 to 3",
        ),
        (
            with(edit(1, st("rrs", ("i", 2), ("o", -1), 1, (-1, -1), 0).replace("cnt=\"1\"", "cnt=\"2\""))),
            "but rank 0 tb 0 step 1 (rrs) sends 2",
        ),
        (
            with(refs(&base[..6])),
            "sends message 5 of link 3->0 channel 0, but rank 0 receives only 5 on it: an unmatched send",
        ),
        (with(refs(&base[1..])), "receives message 5 of link 0->1 channel 0, but rank 0 sends only 5 on it"),
        (
            with(edit(1, st("rrs", ("i", 2), ("o", -1), 1, (0, 5), 0))),
            "no transmission of tb 0 at or after step 5 sets a flag",
        ),
        (
            with(
                edit(1, st("rrs", ("i", 2), ("o", -1), 1, (0, 5), 0))
                    .into_iter()
                    .enumerate()
                    .map(|(k, s)| if k == 5 { s.replace("hasdep=\"0\"", "hasdep=\"1\"") } else { s })
                    .collect(),
            ),
            "deadlock, a cycle of waits and receives",
        ),
        (
            with(edit(
                2,
                st("rrs", ("i", 1), ("o", -1), 1, (-1, -1), 0).replace("i\" srcoff=\"1\"", "i\" srcoff=\"2\""),
            )),
            "the allreduce is wrong",
        ),
    ]
}

/// (file text, expected message) of the rules between thread blocks: rank 0 (its steps `base`)
/// gets a second one.
fn two_block_cases(base: &[String]) -> Vec<(String, &'static str)> {
    let none = ("o", -1);
    let with_tb = |head: &str, more: Vec<String>| {
        rank0(
            &base.iter().map(String::as_str).collect::<Vec<_>>(),
            Some((head, &more.iter().map(String::as_str).collect::<Vec<_>>())),
        )
    };
    let idle = "send=\"-1\" recv=\"-1\" chan=\"0\"";
    vec![
        // A second writer of o[1] (rank 0's last receive writes it) with nothing ordering the two.
        (with_tb(idle, vec![st("cpy", ("i", 1), ("o", 1), 1, (-1, -1), 0)]), "a data race on rank 0"),
        (
            with_tb("send=\"-1\" recv=\"-1\" chan=\"0\"", vec![st("cpy", ("o", 0), ("o", 1), 3, (-1, -1), 0)]),
            "overlaps dst o[1..4) at another offset",
        ),
        (
            with_tb(idle, vec![st("cpy", ("s", 0), ("s", 1), 1, (-1, -1), 0)]).replacen(
                "s_chunks=\"0\"",
                "s_chunks=\"2\"",
                1,
            ),
            "reads s[0], which nothing writes before it",
        ),
        (
            with_tb(
                idle,
                vec![st("nop", ("i", -1), none, 0, (0, 6), 0), st("cpy", ("i", 0), ("i", 0), 1, (-1, -1), 0)],
            ),
            "nop dependencies before this step need it to carry a dependency of its own",
        ),
        (
            with_tb(
                idle,
                vec![st("re", ("i", 1), ("o", 0), 1, (0, 3), 0), st("re", ("i", 2), ("o", 0), 2, (-1, -1), 0)],
            ),
            "this re joins the reduction of steps 0-0",
        ),
    ]
}

/// The refusals through `cce allreduce --algo-file`, a file too large and one beyond the
/// checks' limits.
fn algo_file_rows(f: &Files, files: &mut XmlFiles, all: &mut Vec<Row>) {
    let text = ring();
    // The same refusals through `cce allreduce --algo-file`, and flags that disagree.
    let good = files.write(text.clone());
    let run = |more: &[&str]| -> Vec<String> {
        let mut v = sv(&["allreduce", "--algo-file", &good, "--dtype", "bf16"]);
        v.extend(more.iter().map(|s| s.to_string()));
        v
    };
    all.push((run(&["--op", "add", "--elems", "4096", "--ranks", "8"]), "is an algorithm for 4 ranks (ngpus)", 2));
    all.push((
        run(&["--op", "add", "--elems", "4096", "--collective", "all-gather"]),
        "is a allreduce schedule (its coll)",
        2,
    ));
    all.push((run(&["--op", "add", "--elems", "4097"]), "a positive multiple of nchunksperloop = 4", 2));
    all.push((run(&["--op", "avg", "--elems", "4096"]), "avg is not an MSCCL reduction", 2));
    let small = files.write(text.replacen("maxBytes=\"0\"", "maxBytes=\"1000\"", 1));
    all.push((
        sv(&["allreduce", "--algo-file", &small, "--op", "add", "--dtype", "bf16", "--elems", "4096"]),
        "8192 bytes per rank: the file's algorithm is for minBytes 0 to maxBytes 1000",
        2,
    ));
    all.push((
        sv(&["allreduce", "--algo-file", &small, "--op", "add", "--dtype", "bf16", "--sweep", "4096:65536"]),
        "no size fits",
        2,
    ));
    // `cce algo`: a given size outside minBytes / maxBytes, and a file no size fits.
    all.push((
        sv(&["algo", &small, "--elems", "4096"]),
        "8192 bytes per rank: the file's algorithm is for minBytes 0 to maxBytes 1000 (the executor would not select it); --any-size lowers it all the same",
        2,
    ));
    let none_fits = files.write(text.replacen("maxBytes=\"0\"", "maxBytes=\"1\"", 1));
    all.push((
        sv(&["algo", &none_fits]),
        "no size fits the file's minBytes 0 to maxBytes 1 in multiples of nchunksperloop",
        2,
    ));
    let sparse = f.sparse.to_str().unwrap();
    all.push((sv(&["algo", sparse]), leak(format!("{sparse}: 68719476736 bytes, more than the 67108864")), 2));
    // Beyond the checks' limits.
    let many_steps = format!(
        "<algo name=\"x\" proto=\"Simple\" nchannels=\"1\" nchunksperloop=\"2\" ngpus=\"2\" coll=\"allreduce\" inplace=\"0\"><gpu id=\"0\" i_chunks=\"2\" o_chunks=\"2\" s_chunks=\"0\"><tb id=\"0\" send=\"-1\" recv=\"-1\" chan=\"0\">{}</tb></gpu></algo>",
        "<step/>".repeat((1 << 18) + 1)
    );
    all.push((sv(&["algo", &files.write(many_steps)]), "more than 262144 steps", 2));
}
