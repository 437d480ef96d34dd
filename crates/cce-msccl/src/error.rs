//! The one error of the crate: where in the file, and which rule.

use std::fmt;

/// Where a problem is: as much of rank, thread block, step and source line as is known.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Where {
    /// The `gpu` id.
    pub rank: Option<usize>,
    /// The `tb` id.
    pub tb: Option<usize>,
    /// The step's position in its thread block (its `s`).
    pub step: Option<usize>,
    /// The 1-based line of the element in the file.
    pub line: Option<u32>,
}

impl Where {
    /// A step of a thread block of a rank, at a line.
    pub fn step(rank: usize, tb: usize, step: usize, line: u32) -> Where {
        Where { rank: Some(rank), tb: Some(tb), step: Some(step), line: Some(line) }
    }
    /// A thread block of a rank, at a line.
    pub fn tb(rank: usize, tb: usize, line: u32) -> Where {
        Where { rank: Some(rank), tb: Some(tb), step: None, line: Some(line) }
    }
    /// A rank's `gpu` element, at a line.
    pub fn rank(rank: usize, line: u32) -> Where {
        Where { rank: Some(rank), line: Some(line), ..Where::default() }
    }
    /// A line only.
    pub fn line(line: u32) -> Where {
        Where { line: Some(line), ..Where::default() }
    }
}

impl fmt::Display for Where {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if let Some(r) = self.rank {
            parts.push(format!("rank {r}"));
        }
        if let Some(t) = self.tb {
            parts.push(format!("tb {t}"));
        }
        if let Some(s) = self.step {
            parts.push(format!("step {s}"));
        }
        let head = parts.join(" ");
        match (head.is_empty(), self.line) {
            (true, Some(l)) => write!(f, "line {l}"),
            (false, Some(l)) => write!(f, "{head} (line {l})"),
            (_, None) => f.write_str(&head),
        }
    }
}

/// Why a file is refused: where, and the rule it breaks, in one line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct MscclError {
    /// Where.
    pub at: Where,
    /// The rule, in words.
    pub rule: String,
}

impl MscclError {
    /// An error at `at`.
    pub fn new(at: Where, rule: impl Into<String>) -> MscclError {
        MscclError { at, rule: rule.into() }
    }
}

impl fmt::Display for MscclError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = self.at.to_string();
        if at.is_empty() { f.write_str(&self.rule) } else { write!(f, "{at}: {}", self.rule) }
    }
}
