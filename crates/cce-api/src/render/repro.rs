//! `cce repro`'s JSON, text and heatmap.
//!
//! The JSON keys `configs`, `classes` ([[config index…]]), `pairs` ([{`a`, `b`, `differ`,
//! `first`: {`element`, `rank`, `a`, `b`, `ulps`, `story_a`, `story_b`}}]), `invariant` ({axis: [algorithms]}) and
//! `env` are the contract of issue 44; the others extend it. A config that asked for or ran
//! the flat ring of several channels adds `channels` (those asked for) and `label` (what ran,
//! `ring(C channels)`), as `cce allreduce --json` does; one channel adds neither. A value is `{"hex", "value"}`:
//! its bits and its decimal value (text when not finite).

use std::fmt::Write as _;

#[cfg(feature = "plot")]
use plotters::prelude::*;
use serde_json::{Value, json};

#[cfg(feature = "plot")]
use super::plot::{clean, palette, plot_error};
#[cfg(feature = "plot")]
use crate::error::ApiError;
use crate::repro::{
    Axis, FirstDifference, InputsUsed, Pair, Repro, RunConfig, Separation, Skipped, Verdict, separation_words,
    story_words,
};

/// A number as JSON: itself when finite, else its text.
fn number(x: f64) -> Value {
    if x.is_finite() { json!(x) } else { json!(x.to_string()) }
}

/// Bits as hex of the dtype's width.
fn hex(bits: u64, bytes: usize) -> String {
    format!("0x{bits:0width$x}", width = bytes * 2)
}

/// The value of `bits` in the first difference's dtype (`None` for a dtype without values).
fn value_of(f: &FirstDifference, bits: u64) -> Option<f64> {
    cce_numerics::NumType::from_sdma(f.dtype).ok().and_then(|t| cce_forensics::repro::bits::value_of(t, bits))
}

fn value_json(f: &FirstDifference, bits: u64) -> Value {
    let bytes = usize::from(f.dtype.bytes().max(1));
    let v = value_of(f, bits);
    json!({"hex": hex(bits, bytes), "value": v.map_or(Value::Null, number)})
}

fn value_text(f: &FirstDifference, bits: u64) -> String {
    let bytes = usize::from(f.dtype.bytes().max(1));
    match value_of(f, bits) {
        Some(v) => format!("{} ({v})", hex(bits, bytes)),
        None => hex(bits, bytes),
    }
}

/// The first difference's two reductions side by side (each configuration's order, bits and
/// value), and the difference in words.
fn side_by_side(f: &FirstDifference, p: &Pair) -> String {
    let bytes = usize::from(f.dtype.bytes().max(1));
    let (sa, sb) = (&f.story_a.story, &f.story_b.story);
    let width = [sa, sb].iter().map(|s| s.expr.to_string().len()).max().unwrap_or(0);
    let label = |i: usize| format!("config {i}");
    let mut t = String::new();
    for (i, s) in [(p.b, sb), (p.a, sa)] {
        let _ = writeln!(
            t,
            "    {:<10} {:<width$}  {} = {}",
            label(i),
            s.expr.to_string(),
            hex(s.output.bits, bytes),
            s.output.value
        );
    }
    let _ = writeln!(t, "    exact {}", sa.reference);
    if let Some(w) = story_words(p) {
        let _ = writeln!(t, "    {w}");
    }
    t
}

fn config_json(i: usize, c: &RunConfig, r: &Repro) -> Value {
    let k = &c.config;
    let e = &r.classes[c.class].errors;
    let mut v = json!({
        "index": i, "ranks": k.ranks, "algo": k.value(Axis::Algo), "ran": c.ran, "elems": k.elems,
        "dtype": k.dtype.name(), "accum": k.accum.map(|a| a.name()), "rounding": k.rounding.name(),
        "seed": k.seed, "arch": k.arch, "compress": k.compress.name(), "ranks_per_node": k.ranks_per_node,
        "class": c.class, "ranks_agree": c.ranks_agree, "max_abs_err": number(e.max_abs_err),
        "max_ulp_err": number(e.max_ulp_err), "seconds": c.seconds,
    });
    // As `cce allreduce --json` adds them: only for a ring of several channels.
    if k.channels > 1 || c.channels > 1 {
        v["channels"] = json!(k.channels);
        v["label"] = json!(c.label);
    }
    v
}

fn separation_json(s: &Separation) -> Value {
    json!({"axis": s.axis.name(), "a": s.a, "b": s.b, "alone": s.alone})
}

fn pair_json(p: &Pair) -> Value {
    let first = p.first.as_ref().map_or(Value::Null, |f| {
        json!({
            "element": f.element, "rank": f.rank, "a": value_json(f, f.a), "b": value_json(f, f.b), "ulps": f.ulps,
            "story_a": f.story_a.to_json()["element"], "story_b": f.story_b.to_json()["element"],
        })
    });
    json!({
        "a": p.a, "b": p.b, "differ": p.diff.differ, "first": first, "class_a": p.class_a, "class_b": p.class_b,
        "compared": p.diff.compared, "differ_positions": p.diff.positions,
        "separated_by": p.separated_by.iter().map(separation_json).collect::<Vec<_>>(),
        "words": separation_words(&p.separated_by),
        "story_words": story_words(p),
    })
}

fn verdict_json(v: &Verdict) -> Value {
    json!({"algo": v.algo, "axis": v.axis.name(), "invariant": v.invariant(), "pairs": v.pairs,
        "witness": v.witness.map(|(a, b)| json!({"a": a, "b": b}))})
}

fn skipped_json(s: &Skipped) -> Value {
    let mut v = serde_json::Map::new();
    for a in Axis::ALL {
        v.insert(a.name().replace('-', "_"), json!(s.config.value(a)));
    }
    v.insert("reason".into(), json!(crate::error::spell_parameters(&s.reason, super::flag)));
    Value::Object(v)
}

/// Per judged swept axis, the algorithms invariant over it.
fn invariant_json(r: &Repro) -> Value {
    let mut m = serde_json::Map::new();
    for &axis in r.swept.iter().filter(|a| a.judged()) {
        let algos: Vec<&str> =
            r.verdicts.iter().filter(|v| v.axis == axis && v.invariant()).map(|v| v.algo.as_str()).collect();
        m.insert(axis.name().into(), json!(algos));
    }
    Value::Object(m)
}

impl Repro {
    /// The algorithms with a verdict over at least one axis and invariant over every one.
    pub fn invariant_over_all(&self) -> Vec<&str> {
        let mut algos: Vec<&str> = Vec::new();
        for v in &self.verdicts {
            if !algos.contains(&v.algo.as_str()) {
                algos.push(&v.algo);
            }
        }
        algos.retain(|a| self.verdicts.iter().filter(|v| v.algo == *a).all(Verdict::invariant));
        algos
    }

    /// Words on what was and was not compared bit for bit.
    pub fn notes(&self) -> Vec<String> {
        let mut notes =
            vec!["runs of different sizes are compared on the elements both have (batch invariance)".to_string()];
        let groups =
            self.configs.iter().map(|c| (c.config.ranks, c.config.dtype)).collect::<std::collections::BTreeSet<_>>();
        if groups.len() > 1 {
            notes.push(
                "configurations of different rank counts or dtypes run on different inputs: they are compared by their errors against the exact reduction, not bit for bit"
                    .into(),
            );
        }
        notes
    }

    /// The object `cce repro --json` prints.
    pub fn to_json(&self) -> Value {
        let inputs = match self.inputs {
            InputsUsed::Generated { seed } => json!({"generated": true, "seed": seed}),
            InputsUsed::Given(g) => json!({"generated": false, "ranks": g.ranks, "elems": g.elems}),
        };
        json!({
            "configs": self.configs.iter().enumerate().map(|(i, c)| config_json(i, c, self)).collect::<Vec<_>>(),
            "classes": self.classes.iter().map(|c| c.members.clone()).collect::<Vec<_>>(),
            "pairs": self.pairs.iter().map(pair_json).collect::<Vec<_>>(),
            "invariant": invariant_json(self),
            "env": self.env,
            "class_errors": self.classes.iter().enumerate().map(|(k, c)| json!({"class": k,
                "max_abs_err": number(c.errors.max_abs_err), "max_rel_err": number(c.errors.max_rel_err),
                "max_ulp_err": number(c.errors.max_ulp_err), "mean_ulp_err": number(c.errors.mean_ulp_err),
                "wrong": c.errors.wrong,
                "nonfinite": super::collective::nonfinite_json(&c.errors.nonfinite)})).collect::<Vec<_>>(),
            "invariant_over_all": self.invariant_over_all(),
            "verdicts": self.verdicts.iter().map(verdict_json).collect::<Vec<_>>(),
            "swept": self.swept.iter().map(|a| a.name()).collect::<Vec<_>>(),
            "skipped": self.skipped.iter().map(skipped_json).collect::<Vec<_>>(),
            "inputs": inputs,
            "all_pairs": self.all_pairs,
            "reruns": self.reruns,
            "notes": self.notes(),
        })
    }

    /// The text `cce repro` prints.
    pub fn to_text(&self) -> String {
        let mut t = String::new();
        let inputs = match self.inputs {
            InputsUsed::Generated { seed } => format!("inputs generated from seed {seed}"),
            InputsUsed::Given(g) => format!("inputs given: {} ranks x {} elements", g.ranks, g.elems),
        };
        let _ = writeln!(t, "{} configurations, {} classes; {inputs}", self.configs.len(), self.classes.len());
        self.configs_text(&mut t);
        self.classes_text(&mut t);
        self.pairs_text(&mut t);
        self.verdicts_text(&mut t);
        for s in &self.skipped {
            let why = crate::error::spell_parameters(&s.reason, super::flag);
            let _ = writeln!(t, "skipped ({}): {why}", s.config.describe());
        }
        for n in self.notes() {
            let _ = writeln!(t, "note: {n}");
        }
        let e = &self.env;
        let _ = writeln!(
            t,
            "environment: cce {} (commit {}), {}, {} threads, {}",
            e.version,
            e.commit.unwrap_or("unknown"),
            e.cpu.as_deref().unwrap_or("CPU unknown"),
            e.threads,
            e.isa
        );
        t
    }

    fn configs_text(&self, t: &mut String) {
        // The columns: every swept axis, then the class.
        let axes: Vec<Axis> = Axis::ALL.into_iter().filter(|a| self.swept.contains(a) || *a == Axis::Algo).collect();
        let _ = write!(t, "{:>4}", "#");
        for a in &axes {
            let _ = write!(t, " {:>10}", a.name());
        }
        let _ = writeln!(t, " {:>6} {:>11} {:>10}", "class", "ranks agree", "seconds");
        for (i, c) in self.configs.iter().enumerate() {
            let _ = write!(t, "{i:>4}");
            for &a in &axes {
                let mut v = c.config.value(a);
                if a == Axis::Algo && v == "auto" {
                    // auto's choice; a ring of several channels as labelled.
                    v = format!("auto:{}", if c.channels > 1 { c.label.as_str() } else { c.ran });
                }
                let _ = write!(t, " {v:>10}");
            }
            let agree = if c.ranks_agree { "yes" } else { "NO" };
            let _ = writeln!(t, " {:>6} {agree:>11} {:>10.3}", c.class, c.seconds);
        }
    }

    fn classes_text(&self, t: &mut String) {
        let _ = writeln!(t, "classes (bit-identical outputs: every rank, every element):");
        for (k, c) in self.classes.iter().enumerate() {
            let members: Vec<String> = c.members.iter().map(ToString::to_string).collect();
            let _ = writeln!(
                t,
                "  class {k}: configs {}; max abs err {:.6e}, max ulp err {:.3}, wrong {}",
                members.join(", "),
                c.errors.max_abs_err,
                c.errors.max_ulp_err,
                c.errors.wrong
            );
            let nonfinite = super::collective::nonfinite_text(&c.errors.nonfinite);
            if !nonfinite.is_empty() {
                let _ = write!(t, "    {nonfinite}");
            }
        }
    }

    fn pairs_text(&self, t: &mut String) {
        if !self.pairs.is_empty() {
            let which = if self.all_pairs { "every pair of classes" } else { "each class against the first" };
            let _ = writeln!(t, "{which} of its inputs:");
        }
        for p in &self.pairs {
            let _ = write!(
                t,
                "  class {} (config {}) vs class {} (config {}): {} of {} elements differ",
                p.class_b, p.b, p.class_a, p.a, p.diff.differ, p.diff.compared
            );
            if let Some(f) = &p.first {
                let ulps = f.ulps.map_or_else(|| "NaN".to_string(), |u| u.to_string());
                let _ = write!(
                    t,
                    "; first at element {}, rank {}: {} vs {}, {ulps} ulp",
                    f.element,
                    f.rank,
                    value_text(f, f.b),
                    value_text(f, f.a)
                );
            }
            let _ = writeln!(t, "; separated by {}", separation_words(&p.separated_by));
            if let Some(f) = &p.first {
                t.push_str(&side_by_side(f, p));
            }
        }
    }

    fn verdicts_text(&self, t: &mut String) {
        for &axis in self.swept.iter().filter(|a| a.judged()) {
            let mine: Vec<String> = self
                .verdicts
                .iter()
                .filter(|v| v.axis == axis)
                .map(|v| match v.witness {
                    None => format!("{} yes", v.algo),
                    Some((a, b)) => format!("{} no (configs {a} vs {b})", v.algo),
                })
                .collect();
            if !mine.is_empty() {
                let _ = writeln!(t, "invariant over {}: {}", axis.name(), mine.join(", "));
            }
        }
        if self.swept.iter().any(|a| a.judged()) {
            let all = self.invariant_over_all();
            let all = if all.is_empty() { "none".to_string() } else { all.join(", ") };
            let _ = writeln!(t, "invariant over everything asked: {all}");
        }
    }

    /// The matrix as an SVG heatmap: a cell per pair of configurations, in its class's colour
    /// when both are in one class, grey when they ran on the same inputs and differ, white
    /// when their inputs differ (not compared).
    #[cfg(feature = "plot")]
    pub fn heatmap_svg(&self) -> Result<String, ApiError> {
        let n = self.configs.len();
        crate::repro::check_plot(n)?;
        let cell = (560 / n.max(1)).clamp(2, 40) as i32;
        let (left, top) = (60, 50);
        let side = cell * n as i32;
        let legend = (self.classes.len().min(24) as i32 + 3) * 18;
        let (w, h) = ((left + side + 220).max(400) as u32, (top + side.max(legend) + 40) as u32);
        let colours = palette(self.classes.len());
        let mut doc = String::new();
        {
            let root = SVGBackend::with_string(&mut doc, (w, h)).into_drawing_area();
            root.fill(&WHITE).map_err(plot_error)?;
            let title = format!("bit-identity of {n} configurations: {} classes", self.classes.len());
            root.draw(&Text::new(clean(&title), (left, 15), ("sans-serif", 16))).map_err(plot_error)?;
            let same_inputs =
                |a: &RunConfig, b: &RunConfig| a.config.ranks == b.config.ranks && a.config.dtype == b.config.dtype;
            for (i, a) in self.configs.iter().enumerate() {
                for (j, b) in self.configs.iter().enumerate() {
                    let fill = if a.class == b.class {
                        let (r, g, bl) = colours[a.class];
                        RGBColor(r, g, bl)
                    } else if same_inputs(a, b) {
                        RGBColor(0xD0, 0xD0, 0xD0)
                    } else {
                        RGBColor(0xFF, 0xFF, 0xFF)
                    };
                    let (x, y) = (left + j as i32 * cell, top + i as i32 * cell);
                    root.draw(&Rectangle::new([(x, y), (x + cell, y + cell)], fill.filled())).map_err(plot_error)?;
                }
                if cell >= 10 {
                    let y = top + i as i32 * cell + cell / 2 - 5;
                    root.draw(&Text::new(i.to_string(), (left - 30, y), ("sans-serif", 10))).map_err(plot_error)?;
                    let x = left + i as i32 * cell + 1;
                    root.draw(&Text::new(i.to_string(), (x, top - 14), ("sans-serif", 10))).map_err(plot_error)?;
                }
            }
            let lx = left + side + 20;
            let mut entries: Vec<(String, RGBColor)> = colours
                .iter()
                .enumerate()
                .take(24)
                .map(|(k, &(r, g, b))| {
                    (format!("class {k} ({} configs)", self.classes[k].members.len()), RGBColor(r, g, b))
                })
                .collect();
            entries.push(("same inputs, bits differ".into(), RGBColor(0xD0, 0xD0, 0xD0)));
            entries.push(("different inputs (errors only)".into(), RGBColor(0xFF, 0xFF, 0xFF)));
            for (k, (label, colour)) in entries.iter().enumerate() {
                let y = top + k as i32 * 18;
                root.draw(&Rectangle::new([(lx, y), (lx + 12, y + 12)], colour.filled())).map_err(plot_error)?;
                root.draw(&Rectangle::new([(lx, y), (lx + 12, y + 12)], BLACK.stroke_width(1))).map_err(plot_error)?;
                root.draw(&Text::new(clean(label), (lx + 18, y), ("sans-serif", 12))).map_err(plot_error)?;
            }
            root.present().map_err(plot_error)?;
        }
        Ok(doc)
    }
}
