//! `cce identify`'s answer and `--make-probe`'s summary, as JSON and text.
//!
//! JSON keys (a contract: extended, never renamed): `verdict` (`explained`, `fragmented` or
//! `unexplained`), `verdict_reason`, `answer` (the best candidate's name when the verdict is
//! `explained`, else null), `candidates` [{`name`, `algo`, `file`, `accum`, `aliases`, `expr`
//! (element 0's, in chunk 0), `leaves`, `matched`, `total`, `consistent`, `undecided`}],
//! `best` (the top of the ranking: the answer only when the verdict is `explained`), `map`
//! [{`first`, `last`, `expr`, `leaves`, `candidate`, `explained`, `unexplained`, `suspects`}],
//! `map_segments` (changes of candidate plus one), `unexplained` and `suspects` {`count`,
//! `first`}, `separating`, and beside them `elements`, `ranks`, `dtype`, `rounding`,
//! `observed_ranks`, `total`, `nonfinite`, `ranks_disagree`, `element_candidates`,
//! `reachable_bound`. The text lists at most 32 map ranges, with the count of the rest.

use std::fmt::Write;

use cce_forensics::{Listed, Ranked, Rounding};
use cce_numerics::order::Order;
use serde_json::{Value, json};

use crate::identify::{Identified, ProbeFiles};

fn expr(o: Option<&Order>) -> (Value, Value) {
    match o {
        Some(o) => (json!(o.to_string()), json!(o.leaves())),
        None => (Value::Null, Value::Null),
    }
}

fn listed(l: &Listed) -> Value {
    json!({"count": l.count, "first": l.first})
}

fn candidate(c: &Ranked) -> Value {
    let (e, leaves) = expr(c.expr.as_ref());
    json!({
        "name": c.name,
        "algo": c.algo,
        "file": c.file,
        "accum": c.accum.iter().map(|a| a.name()).collect::<Vec<_>>(),
        "aliases": c.aliases,
        "expr": e,
        "leaves": leaves,
        "matched": c.matched,
        "total": c.total,
        "consistent": c.consistent,
        "undecided": c.undecided,
    })
}

/// The most map ranges the text lists (the JSON lists all).
const MAP_SHOWN: usize = 32;

/// What a candidate without an order (a user schedule of more chunks than the element story
/// tells orders for) reads as.
const ORDER_PENDING: &str = "order: not told (more chunks than stories are told for)";

impl Identified {
    /// The object `cce identify --json` prints.
    pub fn to_json(&self) -> Value {
        let r = &self.report;
        let map: Vec<Value> = r
            .map
            .iter()
            .map(|m| {
                let (e, leaves) = expr(m.expr.as_ref());
                json!({
                    "first": m.first,
                    "last": m.last,
                    "expr": e,
                    "leaves": leaves,
                    "candidate": r.candidates[m.candidate].name,
                    "explained": m.explained,
                    "unexplained": m.unexplained,
                    "suspects": m.suspects,
                })
            })
            .collect();
        json!({
            "verdict": r.verdict.name(),
            "verdict_reason": r.verdict_reason,
            "answer": r.answer().map(|b| r.candidates[b].name.clone()),
            "elements": r.elements,
            "ranks": r.ranks,
            "dtype": r.dtype.name(),
            "rounding": rounding_name(r.rounding),
            "observed_ranks": r.observed_ranks,
            "total": r.total,
            "candidates": r.candidates.iter().map(candidate).collect::<Vec<_>>(),
            "best": r.best.map(|b| r.candidates[b].name.clone()),
            "map": map,
            "map_segments": r.segments,
            "unexplained": listed(&r.unexplained),
            "suspects": listed(&r.suspects),
            "separating": r.separating,
            "nonfinite": listed(&r.nonfinite),
            "ranks_disagree": listed(&r.ranks_disagree),
            "element_candidates": r.element_candidates,
            "reachable_bound": cce_forensics::eval::MAX_REACHABLE,
        })
    }

    /// The text `cce identify` prints.
    pub fn to_text(&self) -> String {
        let r = &self.report;
        let sr = r.rounding == Rounding::Sr;
        let mut t = String::new();
        let _ = writeln!(t, "verdict: {} — {}", r.verdict.name(), r.verdict_reason);
        let observed: Vec<String> = r.observed_ranks.iter().map(|x| x.to_string()).collect();
        let how = if sr { "stochastic rounding: consistency" } else { "RNE: bit for bit" };
        let _ = writeln!(
            t,
            "identify: {} elements of {} on {} ranks, observed rank {} ({how})",
            r.elements,
            r.dtype,
            r.ranks,
            observed.join(", ")
        );
        let _ = writeln!(t, "{}", best_line(self));
        let _ = writeln!(t, "\ncandidates ({} elements compared):", r.total);
        let head = if sr { "consistent  matched" } else { "   matched" };
        let _ = writeln!(t, "  {head}  candidate  [order of element 0]");
        for c in &r.candidates {
            let order = c.expr.as_ref().map_or(ORDER_PENDING.to_string(), Order::to_string);
            let counts = match (sr, c.consistent) {
                (true, Some(k)) => format!("{k:>10}  {:>7}", c.matched),
                (true, None) => format!("{:>10}  {:>7}", "-", c.matched),
                (false, _) => format!("{:>10}", c.matched),
            };
            let aliases = if c.aliases.is_empty() { String::new() } else { format!(" (= {})", c.aliases.join(", ")) };
            let _ = writeln!(t, "  {counts}  {}{aliases}  [{}]", c.name, short(&order));
        }
        let _ = writeln!(
            t,
            "\nmap ({} ranges, {} changes of candidate; element ranges → the candidate that explains them):",
            r.map.len(),
            r.segments.saturating_sub(1)
        );
        for m in r.map.iter().take(MAP_SHOWN) {
            let order = m.expr.as_ref().map_or(ORDER_PENDING.to_string(), Order::to_string);
            let mut gaps = String::new();
            if m.unexplained > 0 {
                let _ = write!(gaps, ", {} unexplained inside", m.unexplained);
            }
            if m.suspects > 0 {
                let _ = write!(gaps, ", {} suspects inside", m.suspects);
            }
            let _ = writeln!(
                t,
                "  {}..={}: {}{gaps}  [{}]",
                m.first,
                m.last,
                r.candidates[m.candidate].name,
                short(&order)
            );
        }
        if r.map.len() > MAP_SHOWN {
            let _ = writeln!(
                t,
                "  … and {} more ranges ({} lists them all)",
                r.map.len() - MAP_SHOWN,
                crate::render::flag("json")
            );
        }
        t.push_str(&tail_lines(self));
        t.trim_end().to_string()
    }
}

/// An order, cut to a line.
fn short(s: &str) -> String {
    if s.len() <= 72 { s.to_string() } else { format!("{}…", &s[..72]) }
}

fn rounding_name(r: Rounding) -> &'static str {
    match r {
        Rounding::Rne => "rne",
        Rounding::Sr => "sr",
    }
}

/// The answer (`best:`, only with an `explained` verdict; else `closest:`, not the answer)
/// and what separates it from the next.
fn best_line(id: &Identified) -> String {
    let r = &id.report;
    let Some(b) = r.best.map(|b| &r.candidates[b]) else {
        return "closest: none — no candidate explains any element".to_string();
    };
    let explained = b.consistent.unwrap_or(b.matched);
    let verb = if b.consistent.is_some() { "consistent with" } else { "matches" };
    let head = if r.answer().is_some() { "best:" } else { "closest (not the answer, see the verdict):" };
    let mut line = format!("{head} {} — {verb} {explained} of {} elements", b.name, r.total);
    if let (Some(sep), Some(next)) = (r.separating, r.candidates.get(1)) {
        if sep == 0 {
            let _ = write!(line, "; these inputs cannot tell it from {} (no element separates them)", next.name);
        } else {
            let _ = write!(line, "; {sep} elements separate it from the next, {}", next.name);
        }
    }
    line
}

/// The unexplained, non-finite and disagreeing elements.
fn tail_lines(id: &Identified) -> String {
    let r = &id.report;
    let mut t = String::new();
    let list = |l: &Listed| l.first.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", ");
    let _ = writeln!(t, "\nunexplained: {} elements", r.unexplained.count);
    if r.unexplained.count > 0 {
        let _ = writeln!(t, "  first: {}", list(&r.unexplained));
    }
    let _ =
        writeln!(t, "suspects (only another order explains them inside their range): {} elements", r.suspects.count);
    if r.suspects.count > 0 {
        let _ = writeln!(t, "  first: {}", list(&r.suspects));
    }
    if r.nonfinite.count > 0 {
        let _ = writeln!(
            t,
            "{} elements have a NaN or an infinity among their inputs: every order gives a NaN or an infinity there, so they cannot separate anything and are in no count (first: {})",
            r.nonfinite.count,
            list(&r.nonfinite)
        );
    }
    if r.ranks_disagree.count > 0 {
        let _ = writeln!(
            t,
            "{} elements differ between the observed ranks (first: {})",
            r.ranks_disagree.count,
            list(&r.ranks_disagree)
        );
    }
    t
}

impl ProbeFiles {
    /// The object `cce identify --make-probe --json` prints (`dir`: where the files went).
    pub fn to_json(&self, dir: &str) -> Value {
        json!({
            "dir": dir,
            "ranks": self.ranks,
            "elems": self.elems,
            "dtype": self.dtype.name(),
            "period": self.period,
            "orders": self.orders,
            "files": (0..self.ranks).map(|r| format!("rank{r}.bin")).collect::<Vec<_>>(),
        })
    }

    /// The line `cce identify --make-probe` prints.
    pub fn to_text(&self, dir: &str) -> String {
        format!(
            "probe: {} ranks x {} {} elements in {dir}/rank{{0..{}}}.bin; any {} consecutive elements tell every pair of the {} merged family orders apart; see {dir}/README.md",
            self.ranks,
            self.elems,
            self.dtype.name(),
            self.ranks - 1,
            self.period,
            self.orders
        )
    }

    /// The README written beside the probe: how to run it on a Trainium instance.
    pub fn readme(&self) -> String {
        crate::render::identify_readme::readme(self)
    }
}
