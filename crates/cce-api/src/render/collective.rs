//! The collectives' JSON and text: a run (`cce allreduce --json` and its one line), a sweep row,
//! `--explain`, the MPI report's shared keys, and the demo.

use cce_collectives::collective::{Algo, Collective, Compress, Config};
use cce_collectives::demo::{DemoAllreduce, Example};
use cce_collectives::metrics::{self, Check, Nonfinite};
use serde_json::{Value, json};

use crate::collective::{AllreduceResult, DEMO_RANKS, Explanation, demo_failures};

/// What a candidate whose model stopped early shows beside the time it had reached.
const STOPPED: &str = "stopped: cannot win (the time it had reached, a lower bound)";

/// Why a candidate cannot run, as the CLI words it: the parameters it names as flags.
fn refusal(why: &str) -> String {
    crate::error::spell_parameters(why, super::flag)
}

impl Explanation {
    /// The `candidates` array of the JSON: per algorithm its model time and counts, or why it
    /// cannot run (`model_seconds` null).
    pub fn candidates_json(&self) -> Value {
        Value::Array(
            self.candidates
                .iter()
                .map(|c| {
                    let mut v = match &c.model {
                        Ok(m) if m.stopped => json!({"algo": c.algo.name(), "model_seconds": null,
                            "at_least_seconds": m.seconds, "stopped": STOPPED}),
                        Ok(m) => json!({"algo": c.algo.name(), "model_seconds": m.seconds,
                            "steps": m.steps.first().map_or(0, Vec::len), "packets": m.packet_count,
                            "descriptors": m.descriptors, "busiest_link_bytes": m.busiest_link_bytes,
                            "busiest_engine_bytes": m.busiest_engine_bytes}),
                        Err(why) => json!({"algo": c.algo.name(), "model_seconds": null, "refused": refusal(why)}),
                    };
                    if c.algo == Algo::Hier {
                        v["intra"] = json!(c.hier.intra.name());
                        v["inter"] = json!(c.hier.inter.name());
                        v["label"] = json!(c.label());
                    }
                    if let (Algo::File, Some(u)) = (c.algo, &self.config.user) {
                        v["algorithm_name"] = json!(u.schedule.program.name);
                    }
                    if c.channels > 1 {
                        v["channels"] = json!(c.channels);
                        v["label"] = json!(c.label());
                    }
                    v
                })
                .collect(),
        )
    }

    /// The object `cce allreduce --explain --json` prints.
    pub fn to_json(&self) -> Value {
        let cfg = &self.config;
        let m = &cfg.model;
        let mut v = json!({
            "algo": cfg.algo.name(), "ranks": cfg.ranks, "elems": cfg.elems, "dtype": cfg.dtype.name(),
            "bytes_per_rank": cfg.elems * cfg.dtype.bytes() as u64, "arch": cfg.arch,
            "instance": m.instance.name(),
            "compared": self.compared,
            "candidates": self.candidates_json(),
            "parameters": m.parameters().iter().map(|p| json!({"name": p.name, "flag": super::flag(&p.option()), "value": p.value,
                "unit": p.unit, "tag": p.tag, "source": p.source})).collect::<Vec<_>>(),
        });
        if cfg.user.is_some() {
            v["auto"] = json!(self.auto.name());
            add_file_keys(&mut v, cfg);
        }
        if cfg.algo == Algo::Hier {
            add_hier_keys(&mut v, cfg);
        }
        add_channel_keys(&mut v, cfg);
        v
    }

    /// The text `cce allreduce --explain` prints: the parameters, every algorithm, the choice.
    pub fn to_text(&self) -> String {
        use std::fmt::Write;
        let cfg = &self.config;
        let mut t = String::new();
        let _ = writeln!(
            t,
            "time model for {} ranks x {} {} ({} bytes per rank), {} (arch {}):",
            cfg.ranks,
            cfg.elems,
            cfg.dtype.name(),
            cfg.elems * cfg.dtype.bytes() as u64,
            cfg.model.instance.name(),
            cfg.arch
        );
        for p in cfg.model.parameters() {
            let _ = writeln!(
                t,
                "  {:<16} {:>10} {:<34} {:<5} {} ({})",
                p.name,
                fmt_value(p.value),
                p.unit,
                p.tag,
                p.source,
                super::flag(&p.option())
            );
        }
        // The algorithm column fits a hierarchy's label when one is listed.
        let wide = if self.candidates.iter().any(|c| c.algo == Algo::Hier) {
            30
        } else if self.candidates.iter().any(|c| c.channels > 1) {
            20
        } else {
            10
        };
        let _ = writeln!(
            t,
            "{:<wide$} {:>12} {:>6} {:>9} {:>12} {:>14} {:>14}",
            "algorithm", "model (us)", "steps", "packets", "descriptors", "busiest link", "busiest engine"
        );
        for c in &self.candidates {
            match &c.model {
                Ok(m) if m.stopped => {
                    let at_least = format!(">{:.3}", m.seconds * 1e6);
                    let _ = writeln!(t, "{:<wide$} {at_least:>12} {STOPPED}", c.label());
                }
                Ok(m) => {
                    let mark = match (c.is(cfg), cfg.algo) {
                        (true, Algo::File) => "  <- runs",
                        (true, _) => "  <- chosen",
                        (false, _) if c.algo == self.auto && cfg.algo == Algo::File => "  <- auto",
                        _ => "",
                    };
                    let _ = writeln!(
                        t,
                        "{:<wide$} {:>12.3} {:>6} {:>9} {:>12} {:>14} {:>14}{mark}",
                        c.label(),
                        m.seconds * 1e6,
                        m.steps.first().map_or(0, Vec::len),
                        m.packet_count,
                        m.descriptors,
                        m.busiest_link_bytes,
                        m.busiest_engine_bytes
                    );
                }
                Err(why) => {
                    let _ = writeln!(t, "{:<wide$} {:>12} refused: {}", c.label(), "-", refusal(why));
                }
            }
        }
        match &cfg.user {
            Some(u) => {
                let _ = writeln!(
                    t,
                    "file: {} ({}); auto would choose {} among cce's own: the least model time (busiest link, engine: the most bytes one carries)",
                    u.schedule.program.name,
                    u.file,
                    self.auto_label()
                );
            }
            None if !self.compared => {
                let _ = writeln!(
                    t,
                    "modelled: {} alone, as {} names it ({} auto models and compares every algorithm)",
                    self.auto_label(),
                    super::flag("algo"),
                    super::flag("algo")
                );
            }
            None => {
                let _ = writeln!(
                    t,
                    "auto chooses {}: the least model time (busiest link, engine: the most bytes one carries)",
                    self.auto_label()
                );
            }
        }
        t
    }
}

/// The `nonfinite` key: `{count, first}`, as `cce identify` lists its elements.
pub fn nonfinite_json(n: &Nonfinite) -> Value {
    json!({"count": n.count, "first": n.first})
}

/// The line that names the elements with a NaN or an infinity among their inputs (empty when
/// there are none).
pub fn nonfinite_text(n: &Nonfinite) -> String {
    if n.count == 0 {
        return String::new();
    }
    let first: Vec<String> = n.first.iter().map(u64::to_string).collect();
    format!(
        "{} elements have a NaN or an infinity among their inputs: every order gives a NaN or an infinity there, so they are in no count (first: {})\n",
        n.count,
        first.join(", ")
    )
}

/// The `check` key of a result's JSON, and null for every error key when nothing was checked
/// (`check` none), for the single-process and the MPI results alike.
pub fn add_check_keys(v: &mut Value, check: Check) {
    if check == Check::None {
        // Not measured: null, never a number that looks like a result.
        for k in ["ranks_identical", "max_abs_err", "max_rel_err", "max_ulp_err", "mean_ulp_err", "wrong", "nonfinite"]
        {
            v[k] = Value::Null;
        }
    }
    v["check"] = json!(check.name());
}

/// The keys a run of a user's schedule adds to its JSON (docs/MODEL.md X1): the file, its
/// name, collective, protocol, channels, chunks, whether it ran in place, and its `<step>`
/// count (`steps` stays the steps per rank).
pub fn add_file_keys(v: &mut Value, cfg: &Config) {
    let Some(u) = &cfg.user else { return };
    let p = &u.schedule.program;
    v["algorithm_file"] = json!(u.file);
    v["algorithm_name"] = json!(p.name);
    v["coll"] = json!(p.coll.name());
    v["proto"] = json!(p.proto);
    v["nchannels"] = json!(p.nchannels);
    v["nchunksperloop"] = json!(p.nchunks);
    v["in_place"] = json!(p.in_place);
    v["algorithm_steps"] = json!(p.step_counts.iter().sum::<usize>());
}

/// A hierarchy's keys (docs/MODEL.md H1): its two algorithms, `label` (`hier(intra/inter)`),
/// and its nodes and ranks per node.
pub fn add_hier_keys(v: &mut Value, cfg: &Config) {
    v["intra"] = json!(cfg.hier.intra.name());
    v["inter"] = json!(cfg.hier.inter.name());
    v["label"] = json!(cfg.hier.label());
    v["nodes"] = json!(cfg.nodes());
    v["ranks_per_node"] = json!(cfg.model.ranks_per_node);
}

/// A ring of several channels' keys (docs/MODEL.md C29): `channels` and `label`
/// (`ring(C channels)`); nothing for one channel.
pub fn add_channel_keys(v: &mut Value, cfg: &Config) {
    if cfg.channels > 1 {
        v["channels"] = json!(cfg.channels);
        v["label"] = json!(cfg.label());
    }
}

/// A parameter's value: an integer as one, else three significant decimals.
fn fmt_value(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e12 { format!("{v:.0}") } else { format!("{v:.3}") }
}

impl AllreduceResult {
    /// The object `cce allreduce --json` prints.
    pub fn to_json(&self) -> Value {
        let (o, m) = (&self.outcome, &self.metrics);
        let (algbw, busbw) = self.bandwidths();
        let mut v = json!({
            "ranks_identical": m.ranks_identical, "max_abs_err": m.max_abs_err, "max_rel_err": m.max_rel_err,
            "max_ulp_err": m.max_ulp_err, "mean_ulp_err": m.mean_ulp_err,
            "packets": o.packets(), "descriptors": o.descriptors(), "bytes_moved": o.bytes_moved(),
            "seconds": o.seconds, "model_seconds": o.model_seconds, "algbw_gbps": algbw, "busbw_gbps": busbw,
            "wrong": m.wrong, "nonfinite": nonfinite_json(&m.nonfinite), "steps": o.steps, "memory_bytes": self.memory_bytes,
            "model_peak_bytes": o.model_peak_bytes,
            "per_rank": o.ranks.iter().map(|r| json!({"packets": r.packets, "descriptors": r.descriptors, "bytes_read": r.bytes_read, "bytes_written": r.bytes_written})).collect::<Vec<_>>(),
            "per_link": o.links.iter().map(|((f, t), b)| json!({"from": f, "to": t, "bytes": b})).collect::<Vec<_>>(),
        });
        // Keys after the original ones, so their order stays the contract's.
        v["algo"] = json!(self.config.algo.name());
        add_check_keys(&mut v, self.check);
        add_file_keys(&mut v, &self.config);
        if self.config.algo == Algo::Hier {
            add_hier_keys(&mut v, &self.config);
        }
        add_channel_keys(&mut v, &self.config);
        if let Some(e) = &self.candidates {
            v["candidates"] = e.candidates_json();
        }
        if let Some(h) = &self.hops {
            let cfg = &self.config;
            v["compress"] = json!(cfg.compress.name());
            v["codec"] = json!(
                "MODEL: the project's GCE codec, block-scaled fp8 e5m2 with an E8M0 scale per 32 elements (docs/MODEL.md \"GCE\")"
            );
            v["nodes"] = json!(cfg.nodes());
            v["ranks_per_node"] = json!(cfg.model.ranks_per_node);
            v["hop_bytes"] = json!(h.compressed);
            v["hop_bytes_uncompressed"] = json!(h.uncompressed);
            v["hop_bytes_ratio"] = json!(h.ratio());
            v["uncompressed_model_seconds"] = json!(h.uncompressed_model_seconds);
        }
        v
    }

    /// One row of `cce allreduce --sweep --json` (nccl-tests' columns, measured and modelled).
    pub fn sweep_row(&self) -> Value {
        let (cfg, o) = (&self.config, &self.outcome);
        let (alg, bus) = self.bandwidths();
        let (malg, mbus) = metrics::bandwidths(cfg, o.model_seconds);
        json!({"size": cfg.elems * cfg.dtype.bytes() as u64, "count": cfg.elems, "type": cfg.dtype.name(), "redop": cfg.op.name(),
            "time_us": o.seconds * 1e6, "algbw_gbps": alg, "busbw_gbps": bus,
            "wrong": (self.check == Check::Exact).then_some(self.metrics.wrong),
            "max_ulp_err": (self.check == Check::Exact).then_some(self.metrics.max_ulp_err),
            "model_us": o.model_seconds * 1e6, "model_algbw_gbps": malg, "model_busbw_gbps": mbus})
    }
}

/// The object `cce allreduce --sweep --json` prints: `{"rows": [...]}`, one
/// [`AllreduceResult::sweep_row`] per size.
pub fn sweep_json(rows: Vec<Value>) -> Value {
    json!({ "rows": rows })
}

/// The object `cce demo --json` prints: the examples, every all-reduce row of `elems`
/// elements per rank, whether every check passed.
pub fn demo_json(examples: &[Example], run: &DemoAllreduce, elems: u64) -> Value {
    let rows = &run.rows;
    let failures = demo_failures(examples, rows);
    json!({
        "examples": examples.iter().map(|ex| json!({
            "title": ex.title, "elems": ex.elems, "mismatches": ex.mismatches, "packets": ex.rings.packets,
            "tx_descriptors": ex.rings.tx_doorbell(), "rx_descriptors": ex.rings.rx_doorbell(),
        })).collect::<Vec<_>>(),
        "allreduce": {
            "ranks": DEMO_RANKS, "elems": elems, "dtype": "bf16", "accum": "fp32", "op": cce_collectives::collective::RedOp::Add.name(),
            "rows": rows.iter().map(|r| json!({
                "algo": r.algo.name(), "seconds": r.seconds, "model_seconds": r.model_seconds,
                "descriptors": r.descriptors, "bytes_moved": r.bytes, "max_abs_err": r.max_abs_err,
                "max_rel_err": r.max_rel_err, "max_ulp_err": r.max_ulp_err, "mean_ulp_err": r.mean_ulp_err,
                "ranks_identical": r.ranks_identical, "wrong": r.wrong,
            })).collect::<Vec<_>>(),
        },
        "forensics": run.forensics.as_ref().map(super::story::forensics_json),
        "passed": failures.is_empty(),
        "failures": failures,
    })
}

/// An ulp error for a table: fixed-point while readable, else scientific (an error at an exact
/// value of 0 is counted in the dtype's smallest subnormal spacing, so it can be ~1e37).
fn ulps(x: f64) -> String {
    if x < 1e5 { format!("{x:.3}") } else { format!("{x:.3e}") }
}

impl AllreduceResult {
    /// The run as `cce allreduce` prints it (docs/collectives.md and docs/msccl.md show it): one
    /// line, the run then how good its result is; with `--compress gce` a second line for the
    /// node boundaries.
    pub fn to_text(&self) -> String {
        let (cfg, o, m) = (&self.config, &self.outcome, &self.metrics);
        let (algbw, busbw) = self.bandwidths();
        let quality = if self.check == Check::None {
            format!("not checked ({} none)", super::flag("check"))
        } else if cfg.collective == Collective::AllReduce {
            format!(
                "#wrong {} (elements outside the {} error bound), max ulp err {} (mean {}) of {}, max abs err {:.3e}, max rel err {:.3e} (of the largest exact magnitude)",
                m.wrong,
                if cfg.compress == Compress::Gce { "GCE" } else { "sequential-rounding" },
                ulps(m.max_ulp_err),
                ulps(m.mean_ulp_err),
                cfg.dtype.name(),
                m.max_abs_err,
                m.max_rel_err,
            )
        } else {
            "partial results not compared with an exact value".to_string()
        };
        let mut s = format!(
            "{} {} x {} {} on {} ranks: {:.4} s (model {:.6} s), algbw {:.2} GB/s, busbw {:.2} GB/s, {} packets, {} descriptors, {} bytes moved, {quality}, ranks identical: {}\n",
            crate::collective::algo_label(cfg),
            cfg.elems,
            cfg.dtype.name(),
            cfg.op.name(),
            cfg.ranks,
            o.seconds,
            o.model_seconds,
            algbw,
            busbw,
            o.packets(),
            o.descriptors(),
            o.bytes_moved(),
            if self.check == Check::None { "not checked".to_string() } else { m.ranks_identical.to_string() },
        );
        if self.check != Check::None {
            s += &nonfinite_text(&m.nonfinite);
        }
        if let Some(h) = &self.hops {
            s += &format!(
                "gce (MODEL codec) over {} nodes of {} ranks: {} bytes crossed the node boundaries, {} uncompressed (ratio {:.3}); model {:.6} s uncompressed\n",
                cfg.nodes(),
                cfg.model.ranks_per_node,
                h.compressed,
                h.uncompressed,
                h.ratio(),
                h.uncompressed_model_seconds,
            );
        }
        s
    }

    /// The header of `cce allreduce --sweep`'s table (nccl-tests' columns, measured then
    /// modelled).
    pub fn sweep_header() -> String {
        format!(
            "{:>12} {:>12} {:>6} {:>6} {:>11} {:>9} {:>9} {:>7} {:>11} {:>9} {:>9}\n",
            "size", "count", "type", "redop", "time(us)", "algbw", "busbw", "#wrong", "model(us)", "algbw", "busbw"
        )
    }

    /// This run's row of `cce allreduce --sweep`'s table.
    pub fn sweep_text_row(&self) -> String {
        let (cfg, o) = (&self.config, &self.outcome);
        let (alg, bus) = self.bandwidths();
        let (malg, mbus) = metrics::bandwidths(cfg, o.model_seconds);
        format!(
            "{:>12} {:>12} {:>6} {:>6} {:>11.1} {:>9.2} {:>9.2} {:>7} {:>11.2} {:>9.2} {:>9.2}\n",
            cfg.elems * cfg.dtype.bytes().max(1) as u64,
            cfg.elems,
            cfg.dtype.name(),
            cfg.op.name(),
            o.seconds * 1e6,
            alg,
            bus,
            if self.check == Check::None { "-".to_string() } else { self.metrics.wrong.to_string() },
            o.model_seconds * 1e6,
            malg,
            mbus
        )
    }
}

/// `cce demo`'s text for one worked example: its title, its rings' listing, and whether the
/// engine's result equals the independent computation.
pub fn example_text(ex: &Example) -> String {
    let verdict = if ex.mismatches == 0 {
        format!("engine result: all {} elements equal the independent computation\n", ex.elems)
    } else {
        format!("engine result: {} of {} elements DIFFER from the independent computation\n", ex.mismatches, ex.elems)
    };
    format!("== {}\n{}{verdict}\n", ex.title, crate::collective::example_listing(ex).to_text())
}

/// The heading of `cce demo`'s all-reduce part.
pub fn demo_allreduce_heading(elems: u64) -> String {
    format!("== all-reduce: {DEMO_RANKS} ranks x {elems} bf16 elements (fp32 accumulate), every algorithm\n")
}

/// `cce demo`'s all-reduce table, the forensics of two algorithms that disagree, and the
/// closing line when every check passed.
pub fn demo_rows_text(run: &DemoAllreduce, passed: bool) -> String {
    let rows = &run.rows;
    use std::fmt::Write;
    let mut s = format!(
        "{:<10} {:>9} {:>12} {:>12} {:>14} {:>10} {:>9} {:>9} {:>7} {:>6}\n",
        "algorithm",
        "seconds",
        "model (s)",
        "descriptors",
        "bytes",
        "max err",
        "max ulp",
        "mean ulp",
        "ranks=",
        "wrong"
    );
    for r in rows {
        let _ = writeln!(
            s,
            "{:<10} {:>9.3} {:>12.6} {:>12} {:>14} {:>10.3e} {:>9} {:>9} {:>7} {:>6}",
            r.algo.name(),
            r.seconds,
            r.model_seconds,
            r.descriptors,
            r.bytes,
            r.max_abs_err,
            ulps(r.max_ulp_err),
            ulps(r.mean_ulp_err),
            r.ranks_identical,
            r.wrong
        );
    }
    if let Some(f) = &run.forensics {
        s += &super::story::forensics_text(f);
    }
    if passed {
        s += "\ndemo: every check passed\n";
    }
    s
}
