//! The CLI's one output convention: text for humans by default; with `--json`, exactly one
//! JSON object on one line of stdout, written with `", "` and `": "` separators (the layout of
//! Python's `json.dumps`), keys in the order the command builds them (a typed result's: its
//! fields' order).

use std::io::Write;

use serde::Serialize;

/// `println!` that never panics: a closed stdout (`cce … | head`) ends the output quietly.
macro_rules! outln {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($t)*);
    }};
}

/// `print!` that never panics (see [`outln`]).
macro_rules! out {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout(), $($t)*);
    }};
}

pub(crate) use {out, outln};

/// The separators of [`print_json`]: `", "` between items, `": "` after a key, no newlines.
struct Spaced;

impl serde_json::ser::Formatter for Spaced {
    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> std::io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> std::io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        w.write_all(b": ")
    }
}

/// `v` as one line of JSON in the CLI's layout.
pub(crate) fn json_line<T: Serialize + ?Sized>(v: &T) -> String {
    let mut buf = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut buf, Spaced);
    // Serialising a Value or a typed result into memory cannot fail: their keys are strings.
    let _ = v.serialize(&mut ser);
    String::from_utf8(buf).unwrap_or_default()
}

/// Prints one JSON object on one line of stdout.
pub(crate) fn print_json<T: Serialize + ?Sized>(v: &T) {
    outln!("{}", json_line(v));
}

/// Prints `v` as JSON when `json` is set, else the text `text` renders from it.
pub(crate) fn emit<T: Serialize>(v: &T, json: bool, text: impl FnOnce(&T) -> String) {
    if json {
        print_json(v);
    } else {
        out!("{}", text(v));
    }
}

/// Where progress is drawn: stderr, which indicatif draws on only when it is a terminal — and
/// nowhere beside `--json`, whose readers are programs.
pub(crate) fn progress_target(json: bool) -> indicatif::ProgressDrawTarget {
    if json { indicatif::ProgressDrawTarget::hidden() } else { indicatif::ProgressDrawTarget::stderr() }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    #[test]
    fn one_line_with_python_separators() {
        let v = serde_json::json!({"a": [1, 2], "b": {"c": "x y", "d": null}});
        assert_eq!(json_line(&v), r#"{"a": [1, 2], "b": {"c": "x y", "d": null}}"#);
        let back: Value = serde_json::from_str(&json_line(&v)).unwrap();
        assert_eq!(back, v);
    }
}
