//! One element's story as `cce allreduce --element` prints it (text, and the JSON object under
//! the contract key `element`), and the demo's forensics made of two stories.
//!
//! Bits are hex strings as wide as their dtype (`"0x3f80"`); values are numbers (a NaN or an
//! infinity is `null`); a rounding is `{"mode": "exact"}`, `{"mode": "rne", "up": …}` or
//! `{"mode": "sr", "random": …, "p_up": …, "up": …}`.

use std::fmt::Write;

use cce_collectives::collective::{Config, Quantised, StepKind, Story, StoryOperand, StoryStep};
use cce_collectives::demo::Forensics;
use cce_format::SdmaDtype;
use cce_numerics::trace::{HowRounded, Traced, TracedStep};
use serde_json::{Value, json};

use crate::collective::{ElementStory, algo_label};

/// Bits as a hex string `size` bytes wide.
fn hex(bits: u64, size: u8) -> String {
    format!("0x{bits:0width$x}", width = 2 * usize::from(size.clamp(1, 8)))
}

fn traced(t: &Traced, dtype: SdmaDtype) -> Value {
    json!({ "bits": hex(t.bits, dtype.bytes()), "value": t.value })
}

fn rounding(h: &HowRounded) -> Value {
    match *h {
        HowRounded::Exact => json!({ "mode": "exact" }),
        HowRounded::Nearest { up } => json!({ "mode": "rne", "up": up }),
        HowRounded::Stochastic { random, p_up, up } => {
            json!({ "mode": "sr", "random": format!("0x{random:08x}"), "p_up": p_up, "up": up })
        }
    }
}

/// An order in a step's JSON: whole, or with `short` as a step's text line shows it
/// ([`operand_expr`]).
fn order(e: &cce_collectives::collective::Expr, short: bool) -> String {
    if short { operand_expr(e) } else { e.to_string() }
}

fn operand(o: &StoryOperand, cfg: &Config, short: bool) -> Value {
    json!({
        "rank": o.rank, "address": format!("0x{:x}", o.address), "expr": order(&o.expr, short),
        "bits": hex(o.value.bits, cfg.dtype.bytes()), "value": o.value.value,
        "widened": traced(&o.widened, cfg.accum), "widening": rounding(&o.widening),
    })
}

fn accumulate(a: &TracedStep, cfg: &Config) -> Value {
    json!({
        "source": a.source, "exact": a.exact, "rounded": traced(&a.rounded, cfg.accum),
        "rounding": rounding(&a.rounding),
    })
}

fn quantised(q: &Quantised) -> Value {
    json!({
        "block": [q.block.0, q.block.1], "amax": q.amax, "scale_exponent": q.scale_exponent,
        "scale_byte": q.scale_exponent + cce_numerics::gce::SCALE_BIAS, "code": format!("0x{:02x}", q.code),
        "expanded": q.expanded, "codec": "MODEL",
    })
}

fn step(s: &StoryStep, cfg: &Config, short: bool) -> Value {
    let packet = s.packet.as_ref().map(|p| {
        json!({
            "queue": p.queue, "packet": p.packet, "tx_descriptor": p.tx_descriptor, "rx_descriptor": p.rx_descriptor,
            "op": p.op, "elems": p.elems, "element": p.element,
            "sources": p.sources.iter().map(|a| format!("0x{a:x}")).collect::<Vec<_>>(),
            "dests": p.dests.iter().map(|a| format!("0x{a:x}")).collect::<Vec<_>>(),
        })
    });
    json!({
        "rank": s.rank, "step": s.step, "kind": s.kind.name(), "packet": packet,
        "dests": s.dests.iter().map(|a| format!("0x{a:x}")).collect::<Vec<_>>(),
        "expr": order(&s.expr, short),
        "operands": s.operands.iter().map(|o| operand(o, cfg, short)).collect::<Vec<_>>(),
        "accumulate": s.accumulate.iter().map(|a| accumulate(a, cfg)).collect::<Vec<_>>(),
        "exact": s.exact, "rounded": traced(&s.rounded, cfg.dtype), "rounding": rounding(&s.rounding),
        "reference": s.reference, "error": s.error,
        "gce": s.gce.as_ref().map(quantised),
    })
}

/// A story's object (the value of the key `element`).
pub fn story_json(s: &Story, cfg: &Config) -> Value {
    story_json_with(s, cfg, false)
}

/// [`story_json`], with `short` every step's and operand's order as the text shows it.
fn story_json_with(s: &Story, cfg: &Config, short: bool) -> Value {
    json!({
        "index": s.index, "rank": s.rank, "every_rank": s.every_rank, "chunk": s.chunk,
        "expr": s.expr.to_string(), "leaves": s.leaves,
        "steps": s.steps.iter().map(|x| step(x, cfg, short)).collect::<Vec<_>>(),
        "output": traced(&s.output, cfg.dtype), "reference": s.reference, "error": s.error,
        "algo": algo_label(cfg), "collective": cfg.collective.name(), "ranks": cfg.ranks, "elems": cfg.elems,
        "op": cfg.op.name(), "dtype": cfg.dtype.name(), "accum": cfg.accum.name(),
        "rounding": match cfg.rounding {
            cce_host::Rounding::Rne => json!({ "mode": "rne" }),
            cce_host::Rounding::Stochastic { seed } => json!({ "mode": "sr", "seed": seed }),
        },
        "compress": cfg.compress.name(),
    })
}

impl ElementStory {
    /// `cce allreduce --element --json`'s object: `{"element": {...}}`.
    pub fn to_json(&self) -> Value {
        json!({ "element": story_json(&self.story, &self.config) })
    }

    /// [`to_json`](Self::to_json)'s object with every step's and operand's order of more than
    /// 16 leaves written as the text line writes it, `(order of N leaves)` (the element's own
    /// order stays whole): its size grows with the ranks, not their square — a 4096-rank
    /// ring's story is megabytes instead of 340 MB. What the page draws (docs/web.md).
    pub fn to_json_short(&self) -> Value {
        json!({ "element": story_json_with(&self.story, &self.config, true) })
    }

    /// `cce allreduce --element`'s text.
    pub fn to_text(&self) -> String {
        story_text(&self.story, &self.config)
    }
}

/// A value for text: up to 9 significant digits.
fn num(x: f64) -> String {
    if x == 0.0 || (1e-4..1e7).contains(&x.abs()) {
        let s = format!("{x:.9}");
        let s = s.trim_end_matches('0').trim_end_matches('.');
        s.to_string()
    } else {
        format!("{x:.6e}")
    }
}

fn rounding_text(h: &HowRounded) -> String {
    match *h {
        HowRounded::Exact => "exact".into(),
        HowRounded::Nearest { up } => format!("rne {}", if up { "up" } else { "down" }),
        HowRounded::Stochastic { random, p_up, up } => {
            format!("sr random 0x{random:08x}, P(up) {p_up:.4}: {}", if up { "up" } else { "down" })
        }
    }
}

fn step_text(s: &StoryStep, cfg: &Config) -> String {
    let size = cfg.dtype.bytes();
    let at = match s.step {
        Some(t) => format!("rank {} step {}", s.rank, t),
        None => format!("rank {} before the run", s.rank),
    };
    let packet = s.packet.as_ref().map_or(String::new(), |p| {
        let unit = if s.kind == StepKind::Copy { "bytes, byte" } else { "elems, element" };
        let (many, one) = unit.split_once(", ").unwrap_or((unit, ""));
        format!(
            " packet {} (tx desc {}, rx desc {}, {} {} {many}, {one} {})",
            p.packet, p.tx_descriptor, p.rx_descriptor, p.op, p.elems, p.element
        )
    });
    let ops = s
        .operands
        .iter()
        .map(|o| format!("{} [{}] {}", operand_expr(&o.expr), hex(o.value.bits, size), num(o.value.value)))
        .collect::<Vec<_>>()
        .join(" + ");
    let mut line = format!("  {at} {}{packet}: {ops}", s.kind.name());
    match s.kind {
        StepKind::Reduce | StepKind::Compress => {
            let _ = write!(
                line,
                " = {} (accumulator) -> {} {} ({}), error {}",
                num(s.exact),
                hex(s.rounded.bits, size),
                num(s.rounded.value),
                rounding_text(&s.rounding),
                num(s.error)
            );
        }
        StepKind::Expand => {
            let _ = write!(
                line,
                " -> {} {} ({})",
                hex(s.rounded.bits, size),
                num(s.rounded.value),
                rounding_text(&s.rounding)
            );
        }
        StepKind::Copy | StepKind::Preload => {}
    }
    // Combines that rounded in the accumulate dtype (one narrower than fp32, or an FMA).
    if s.accumulate.iter().any(|a| a.rounding != HowRounded::Exact) {
        let acc = s
            .accumulate
            .iter()
            .map(|a| {
                let src = a.source.map_or("clamp".to_string(), |i| format!("+op{i}"));
                format!("{src} -> {} ({})", num(a.rounded.value), rounding_text(&a.rounding))
            })
            .collect::<Vec<_>>()
            .join(", ");
        let _ = write!(line, "\n    accumulate in {}: {acc}", cfg.accum.name());
    }
    if let Some(q) = &s.gce {
        let _ = write!(
            line,
            "\n    gce (MODEL codec): block {}..={}, amax {}, scale 2^{}, code 0x{:02x} -> {}, error {}",
            q.block.0,
            q.block.1,
            num(f64::from(q.amax)),
            q.scale_exponent,
            q.code,
            num(f64::from(q.expanded)),
            num(s.error)
        );
    }
    line
}

/// A story as text: the element and where it is, its order, every step, the output.
pub fn story_text(s: &Story, cfg: &Config) -> String {
    let mut out = format!(
        "element {} of rank {}{}: chunk {}, {} {} over {} ranks x {} {} (accumulate {})\n",
        s.index,
        s.rank,
        if s.every_rank { " (every rank holds the same bits)" } else { "" },
        s.chunk,
        algo_label(cfg),
        cfg.collective.name(),
        cfg.ranks,
        cfg.elems,
        cfg.dtype.name(),
        cfg.accum.name()
    );
    let leaves = s.leaves.iter().map(u32::to_string).collect::<Vec<_>>().join(" ");
    let _ = writeln!(out, "expr {}   leaves {leaves}", s.expr);
    for st in &s.steps {
        let _ = writeln!(out, "{}", step_text(st, cfg));
    }
    let _ = writeln!(
        out,
        "output {} = {}; exact {}, error {}",
        hex(s.output.bits, cfg.dtype.bytes()),
        num(s.output.value),
        num(s.reference),
        num(s.error)
    );
    out
}

/// The demo's forensics as a few lines: the element, both reductions side by side, and what
/// split them.
pub fn forensics_text(f: &Forensics) -> String {
    let (cfg_a, cfg_b) = (&f.configs.0, &f.configs.1);
    let size = cfg_a.dtype.bytes();
    let split = f
        .split
        .iter()
        .map(|d| format!("the {}: {} vs {}", parameter_words(d.parameter), d.a, d.b))
        .collect::<Vec<_>>()
        .join("; ");
    let width = [&f.a, &f.b].iter().map(|s| s.expr.to_string().len()).max().unwrap_or(0);
    let row = |label: &str, s: &Story| {
        format!(
            "  {label:<10} {:<width$}  {} = {}\n",
            s.expr.to_string(),
            hex(s.output.bits, size),
            num(s.output.value)
        )
    };
    format!(
        "\n== forensics: why do two algorithms' outputs differ? ({} of {} elements of rank 0 differ)\nelement {} (chunk {} of {}), exact {}:\n{}{}split by {split}\n",
        f.differing,
        cfg_a.elems,
        f.index,
        f.a.chunk,
        algo_label(cfg_a),
        num(f.a.reference),
        row(&algo_label(cfg_a), &f.a),
        row(&algo_label(cfg_b), &f.b),
    )
}

/// A parameter in words.
fn parameter_words(p: &str) -> &str {
    match p {
        "algo" => "algorithm",
        "elems" => "element count",
        "accum" => "accumulate dtype",
        "rounding" => "rounding",
        other => other,
    }
}

/// The demo's forensics as JSON: the element, both stories, what split them.
pub fn forensics_json(f: &Forensics) -> Value {
    let (cfg_a, cfg_b) = (&f.configs.0, &f.configs.1);
    json!({
        "index": f.index, "differing": f.differing,
        "a": story_json(&f.a, cfg_a), "b": story_json(&f.b, cfg_b),
        "split": f.split.iter().map(|d| json!({ "parameter": d.parameter, "a": d.a, "b": d.b })).collect::<Vec<_>>(),
    })
}

/// Most leaves of an operand order a step's text line shows whole; a larger one (a ring's
/// partial over thousands of ranks, which every later step would repeat) shows its leaf count
/// alone, so a story's text grows with the ranks, not their square. The JSON keeps every order,
/// and the story's first line shows the element's whole.
pub const OPERAND_EXPR_LEAVES: usize = 16;

/// An operand's order as a step's text line shows it ([`OPERAND_EXPR_LEAVES`]).
fn operand_expr(e: &cce_collectives::collective::Expr) -> String {
    match e.leaf_count() {
        n if n <= OPERAND_EXPR_LEAVES => e.to_string(),
        n => format!("(order of {n} leaves)"),
    }
}
