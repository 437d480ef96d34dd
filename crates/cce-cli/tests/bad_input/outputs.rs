//! Matrix rows for output paths refused before any work (issue 52: never surprised): a file
//! where a directory goes, a directory where a file goes, a parent that is missing — for
//! `cce allreduce --output-dir / --trace / --plot`, `cce report numerics --plot` and
//! `cce repro --plot`.

use crate::common::tmp;
use crate::{Row, sv};

pub(crate) fn rows(all: &mut Vec<Row>) {
    let root = tmp("o-paths");
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("a-dir")).unwrap();
    std::fs::write(root.join("a-file"), b"x").unwrap();
    let p = |name: &str| root.join(name).display().to_string();
    let (file, dir, missing) = (p("a-file"), p("a-dir"), p("no-such-dir/out.json"));
    let ar = |extra: &[&str]| {
        let mut v = sv(&["allreduce", "--ranks", "4", "--algo", "ring", "--op", "add", "--dtype", "bf16"]);
        v.extend(sv(&["--elems", "64"]));
        v.extend(sv(extra));
        v
    };
    let rows: Vec<(Vec<String>, String)> = vec![
        (ar(&["--output-dir", &file]), format!("--output-dir {file}: a file, not a directory")),
        (ar(&["--trace", &dir]), format!("--trace {dir}: a directory, not a file")),
        (ar(&["--trace", &missing]), format!("--trace {missing}: No such file or directory")),
        (
            sv(&["report", "numerics", "--max-ranks", "8", "--plot", &missing]),
            format!("--plot {missing}: No such file or directory"),
        ),
        (
            sv(&["repro", "--ranks", "4", "--algo", "ring,mesh", "--dtype", "bf16", "--elems", "64", "--plot", &dir]),
            format!("--plot {dir}: a directory, not a file"),
        ),
    ];
    all.extend(rows.into_iter().map(|(a, w)| (a, crate::leak(w), 2)));
}
