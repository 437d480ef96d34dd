//! `cce reveal`'s answer as JSON and text, and a plan's README.
//!
//! JSON keys (a contract: extended, never renamed): `revealed` (bool), `reason` (when not
//! revealed, else null), `runs`, `ranks`, `elems`, `dtype`, `classes` [{`first`, `last`
//! (inclusive), `rank` (only where the ranks' outputs differ), `expr` (the order grammar),
//! `leaves`, `accum`, `equals` (a family order's name, or null)}], and `next_run` ({`run`,
//! `inputs`}: where a plan's next inputs were written, or null), `seconds` and
//! `black_box_seconds` (the whole reveal's wall time and its black box's runs' share; null for a
//! plan). The text lists at most 32
//! classes, with the count of the rest.

use std::fmt::Write;

use serde_json::{Value, json};

use crate::render::flag;
use crate::reveal::{RevealAnswer, RevealParams};

/// The most classes the text lists (the JSON lists all).
const CLASSES_SHOWN: usize = 32;

impl RevealAnswer {
    /// The object `cce reveal --json` prints.
    pub fn to_json(&self) -> Value {
        let r = &self.revealed;
        let classes: Vec<Value> = r
            .classes
            .iter()
            .map(|c| {
                let mut v = json!({"first": c.first, "last": c.last});
                if let Some(rank) = c.rank {
                    v["rank"] = json!(rank);
                }
                v["expr"] = json!(c.order.to_string());
                v["leaves"] = json!(c.order.leaves());
                v["accum"] = json!(c.accum.name());
                v["equals"] = json!(c.equals);
                v
            })
            .collect();
        json!({
            "revealed": r.revealed,
            "reason": r.reason,
            "runs": r.runs,
            "ranks": r.ranks,
            "elems": r.elems,
            "dtype": r.dtype.name(),
            "classes": classes,
            "next_run": self.next_run.as_ref().map(|(k, d)| json!({"run": k, "inputs": d.display().to_string()})),
            "seconds": self.seconds.map(|s| s.0),
            "black_box_seconds": self.seconds.map(|s| s.1),
        })
    }

    /// `R ranks x N dtype elements, K runs of the black box`, with `times` for the `x`.
    pub(crate) fn headline(&self, times: &str) -> String {
        let r = &self.revealed;
        let plural = if r.runs == 1 { "" } else { "s" };
        format!(
            "{} ranks {times} {} {} elements, {} run{plural} of the black box",
            r.ranks,
            r.elems,
            r.dtype.name(),
            r.runs
        )
    }

    /// The text `cce reveal` prints.
    pub fn to_text(&self) -> String {
        let r = &self.revealed;
        let mut s = format!("reveal: {}\n", self.headline("x"));
        if let Some((k, dir)) = &self.next_run {
            let _ = writeln!(
                s,
                "wants run {k}: its inputs are in {}/rank{{r}}.bin; run them as run 1 was, put the outputs in run{k}/ beside run 1's, and call this again",
                dir.display()
            );
            return s;
        }
        if !r.revealed {
            let _ = writeln!(s, "not revealed: {}", r.reason.as_deref().unwrap_or("no reason given"));
            return s;
        }
        let _ = writeln!(
            s,
            "revealed: {} class{} of elements, each checked on random inputs",
            r.classes.len(),
            if r.classes.len() == 1 { "" } else { "es" }
        );
        for c in r.classes.iter().take(CLASSES_SHOWN) {
            let rank = c.rank.map_or(String::new(), |r| format!("rank {r} "));
            let equals = c.equals.as_ref().map_or(String::new(), |e| format!("  = {e}"));
            let _ = writeln!(s, "  {rank}{}..={}: {}  accumulate {}{equals}", c.first, c.last, c.order, c.accum.name());
        }
        if r.classes.len() > CLASSES_SHOWN {
            let _ = writeln!(s, "  … {} more classes ({} lists all)", r.classes.len() - CLASSES_SHOWN, flag("json"));
        }
        s
    }
}

/// A plan's README: what to run and how to hand the outputs back.
pub(crate) fn reveal_readme(p: &RevealParams) -> String {
    let last = p.ranks.saturating_sub(1);
    format!(
        "# A reveal plan: {ranks} ranks x {elems} elements of {dtype}\n\n\
         `run1/rank{{r}}.bin` (r = 0..={last}) holds rank r's input of run 1: {elems} little-endian\n\
         {dtype} elements. Run the all-reduce (sum) you want to reveal on them, once, and write\n\
         rank r's output, the same shape, to `OUT/run1/rank{{r}}.bin`. Then:\n\n\
         ```sh\n\
         cce reveal {input_dir} THIS_DIR {observed} OUT {ranks_flag} {ranks} {elems_flag} {elems} {dtype_flag} {dtype}\n\
         ```\n\n\
         The inputs of the next run depend on what run 1 showed: that command writes them to\n\
         `run2/` here and says so; run them the same way into `OUT/run2/` and call it again, until it\n\
         answers (three runs when every rank's output is the same). Keep the inputs as they are:\n\
         the command makes every run's inputs again and refuses files that differ.\n\n\
         The inputs are masks (+M at one rank, -M at another, small units elsewhere): keep the\n\
         rounding at round-to-nearest-even (stochastic rounding moves them).\n",
        ranks = p.ranks,
        elems = p.elems,
        dtype = p.dtype.name(),
        input_dir = flag("input-dir"),
        observed = flag("observed"),
        ranks_flag = flag("ranks"),
        elems_flag = flag("elems"),
        dtype_flag = flag("dtype"),
    )
}
