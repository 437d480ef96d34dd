//! Reports as the CLI prints them: `cce report numerics`'s JSON object and chart, from the
//! [`Report`] [`NumericsReport::run`](crate::collective::NumericsReport::run) returns.
//!
//! The JSON: `report`, `elems`, `seed`, `inputs`, `algo`, `op`, `accum`, `measure` (what the
//! numbers are, [`MEASURE`]) and `rows`, one per R: `ranks`, then `bf16_rne`, `bf16_sr`, `fp32`
//! (the mean error), `bias` and `max` (each an object with the same three keys: the signed mean
//! and the largest error). With `--max-ranks` above 64, `max_ranks` and `curves` besides (see
//! `curve_json`).

use cce_collectives::model_report::ModelReport;
use cce_collectives::numerics_report::{self as nr, MEASURE};
use cce_collectives::numerics_scale::Curve;

use crate::collective::{Report, Series};
use serde_json::{Value, json};

#[cfg(feature = "plot")]
use crate::plot::{self, Chart, Scale};

/// The object `cce report numerics --json` prints.
pub fn numerics_json(r: &Report) -> Value {
    let p = &r.params;
    let per = |row: &nr::Row, f: fn(&nr::Measured) -> f64| -> serde_json::Map<String, Value> {
        Series::ALL.iter().map(|&s| (s.key().to_string(), json!(f(row.get(s))))).collect()
    };
    let rows: Vec<Value> = r
        .rows
        .iter()
        .map(|row| {
            let mut o = serde_json::Map::new();
            o.insert("ranks".into(), json!(row.ranks));
            o.extend(per(row, |m| m.mean_rel));
            o.insert("bias".into(), Value::Object(per(row, |m| m.bias)));
            o.insert("max".into(), Value::Object(per(row, |m| m.max_rel)));
            Value::Object(o)
        })
        .collect();
    let mut v = json!({
        "report": "numerics", "elems": p.elems, "seed": p.seed, "inputs": p.inputs.name(),
        "algo": "ring", "op": cce_collectives::collective::RedOp::Add.name(), "accum": "fp32", "measure": MEASURE, "rows": rows,
    });
    if !r.curves.is_empty() {
        v["max_ranks"] = json!(p.max_ranks);
        v["curves"] = Value::Array(r.curves.iter().map(curve_json).collect());
    }
    v
}

/// One order's curve: `algo`, `points` (per R: each series' mean error, max and mean ULPs,
/// `wrong`, `ranks_identical`, and the order's roundings per element), `skipped` (R and why),
/// and `fit` per series (`exponent`, `coefficient`, `points`; null below two points). MODEL
/// (docs/MODEL.md H6).
fn curve_json(c: &Curve) -> Value {
    let points: Vec<Value> = c
        .points
        .iter()
        .map(|(r, ms)| {
            let mut o = serde_json::Map::new();
            o.insert("ranks".into(), json!(r));
            o.insert("roundings".into(), json!(c.order.roundings(*r)));
            for (s, m) in Series::ALL.iter().zip(ms) {
                o.insert(
                    s.key().into(),
                    json!({"mean": m.mean_rel, "max": m.max_rel, "bias": m.bias, "max_ulp": m.max_ulp,
                        "mean_ulp": m.mean_ulp, "wrong": m.wrong, "ranks_identical": m.ranks_identical}),
                );
            }
            Value::Object(o)
        })
        .collect();
    let fits: serde_json::Map<String, Value> = Series::ALL
        .iter()
        .zip(&c.fits)
        .map(|(s, f)| {
            let v = f.map_or(
                Value::Null,
                |f| json!({"exponent": f.exponent, "coefficient": f.coefficient, "points": f.points}),
            );
            (s.key().to_string(), v)
        })
        .collect();
    json!({
        "algo": c.order.label(), "points": points,
        "skipped": c.skipped.iter().map(|(r, why)| json!({"ranks": r, "why": why})).collect::<Vec<_>>(),
        "fit": fits, "tag": "MODEL",
    })
}

/// The chart: the error of each series against R, log-log (R in powers of 2); with curves,
/// every order's bf16 series (SR dashed) and the fp32 baseline of the ring.
#[cfg(feature = "plot")]
pub fn numerics_chart(r: &Report) -> Chart {
    if !r.curves.is_empty() {
        return curves_chart(r);
    }
    let series = Series::ALL
        .iter()
        .map(|&s| plot::Series {
            name: s.label().to_string(),
            points: r.rows.iter().map(|row| (row.ranks as f64, row.get(s).mean_rel)).collect(),
            dashed: false,
        })
        .collect();
    error_chart(format!("ring all-reduce error vs ranks ({})", inputs_of(r)), series)
}

/// The report's inputs and size, as a chart's title says them.
#[cfg(feature = "plot")]
fn inputs_of(r: &Report) -> String {
    format!("{} inputs, {} elements per rank", r.params.inputs.name(), r.params.elems)
}

/// A chart of the mean error against R, log-log.
#[cfg(feature = "plot")]
fn error_chart(title: String, series: Vec<plot::Series>) -> Chart {
    Chart {
        title,
        x_label: "ranks R".into(),
        y_label: "mean |error| / sum |x|".into(),
        x_scale: Scale::Log2,
        y_scale: Scale::Log10,
        series,
        marks: Vec::new(),
    }
}

/// The chart of every order's curve.
#[cfg(feature = "plot")]
fn curves_chart(r: &Report) -> Chart {
    let mut series = Vec::new();
    for c in &r.curves {
        for (i, s) in Series::ALL.iter().enumerate() {
            if *s == Series::Fp32 && c.order != cce_collectives::numerics_scale::Order::Ring {
                continue;
            }
            series.push(plot::Series {
                name: format!("{}, {}", c.order.label(), s.label()),
                points: c.points.iter().map(|(rk, ms)| (*rk as f64, ms[i].mean_rel)).collect(),
                dashed: *s == Series::Bf16Sr,
            });
        }
    }
    error_chart(format!("all-reduce error vs ranks, to {} ({})", r.params.max_ranks, inputs_of(r)), series)
}

/// The table `cce report numerics` prints: the run's parameters, what the numbers are, then per
/// R the mean error of each series and the two bf16 biases.
pub fn numerics_text(r: &Report) -> String {
    use std::fmt::Write;
    let p = &r.params;
    let mut s = format!(
        "numerics: ring all-reduce, op add, fp32 accumulate, {} elements per rank, {} inputs (seed {})\n",
        p.elems,
        p.inputs.name(),
        p.seed
    );
    let _ = writeln!(s, "error: {MEASURE}; bias: the same, signed\n");
    let _ = writeln!(
        s,
        "{:>5} {:>11} {:>11} {:>11}   {:>11} {:>11}",
        "ranks", "bf16 RNE", "bf16 SR", "fp32", "RNE bias", "SR bias"
    );
    for row in &r.rows {
        let m = |series| row.get(series);
        let _ = writeln!(
            s,
            "{:>5} {:>11.3e} {:>11.3e} {:>11.3e}   {:>11.3e} {:>11.3e}",
            row.ranks,
            m(Series::Bf16Rne).mean_rel,
            m(Series::Bf16Sr).mean_rel,
            m(Series::Fp32).mean_rel,
            m(Series::Bf16Rne).bias,
            m(Series::Bf16Sr).bias
        );
    }
    for c in &r.curves {
        curve_text(&mut s, c);
    }
    s
}

/// One order's curve as text: per R its roundings and each series' mean error and max ULPs,
/// the skipped R, and the fitted laws (MODEL).
fn curve_text(s: &mut String, c: &Curve) {
    use std::fmt::Write;
    let _ = writeln!(s, "\n{} (MODEL: fitted error ~ a R^b over R >= 8)", c.order.label());
    let _ = writeln!(
        s,
        "{:>5} {:>9} {:>11} {:>11} {:>11} {:>9} {:>9}",
        "ranks", "roundings", "bf16 RNE", "bf16 SR", "fp32", "RNE ulp", "SR ulp"
    );
    for (r, m) in &c.points {
        let _ = writeln!(
            s,
            "{:>5} {:>9} {:>11.3e} {:>11.3e} {:>11.3e} {:>9.3} {:>9.3}",
            r,
            c.order.roundings(*r),
            m[0].mean_rel,
            m[1].mean_rel,
            m[2].mean_rel,
            m[0].max_ulp,
            m[1].max_ulp
        );
    }
    for (r, why) in &c.skipped {
        let _ = writeln!(s, "{r:>5} skipped: {why}");
    }
    for (series, f) in Series::ALL.iter().zip(&c.fits) {
        if let Some(f) = f {
            let _ = writeln!(s, "  {}: error ~ {:.3e} R^{:.3}", series.label(), f.coefficient, f.exponent);
        }
    }
}

/// `cce report model`: every public measured point beside the time model's figure.
///
/// The JSON: `report` ("model"), `points` [{`source`, `table`, `collective`, `instance`,
/// `ranks`, `nodes`, `bytes` (per rank), `dtype`, `measured_us`, `model_us` (null when not
/// modelled, with `refused`), `ratio` (model / measured), `algorithm`, `held_out`, `note`}],
/// `constants` [{`instance`, `name`, `value`, `unit`, `tag`, `source`}] and `summary`
/// (`held_out` and `fitted`: the count modelled, within 1.5×, within 25 %, and the median
/// ratio), and `claims` [{`source`, `version`, `claim`, `instance`, `ranks`, `nodes`, `sizes`,
/// `change_percent` (claimed), `compares`, `model_change_percent` (null when not modelled),
/// `modelled` (what was, or why not)}].
pub fn model_json(r: &ModelReport) -> Value {
    let points: Vec<Value> = r
        .points
        .iter()
        .map(|p| {
            let m = p.point;
            let mut v = json!({"source": m.source, "table": m.table, "collective": m.collective,
                "instance": m.instance, "ranks": m.ranks, "nodes": m.nodes, "bytes": m.bytes, "dtype": m.dtype,
                "measured_us": m.measured_us, "model_us": p.model_us.as_ref().ok(), "ratio": p.ratio(),
                "algorithm": p.algorithm, "held_out": p.held_out, "note": p.note});
            if let Err(why) = &p.model_us {
                v["refused"] = json!(why);
            }
            if let Some((algo, timed)) = &p.alternative {
                let (us, refused) = match timed {
                    Ok(us) => (Some(*us), None),
                    Err(why) => (None, Some(why)),
                };
                v["alternative"] = json!({"algorithm": algo, "model_us": us,
                    "ratio": us.map(|u| u / m.measured_us), "refused": refused});
            }
            v
        })
        .collect();
    let constants: Vec<Value> = r
        .constants
        .iter()
        .map(|c| {
            let p = &c.parameter;
            json!({"instance": c.instance.name(), "name": p.name, "value": p.value, "unit": p.unit,
                "tag": p.tag, "source": p.source})
        })
        .collect();
    let claims: Vec<Value> = r
        .claims
        .iter()
        .map(|c| {
            let k = c.claim;
            json!({"source": k.source, "version": k.version, "claim": k.claim, "instance": k.instance,
                "ranks": k.ranks, "nodes": k.nodes, "sizes": k.sizes, "change_percent": k.change_percent,
                "compares": k.compares, "model_change_percent": c.model_change_percent, "modelled": c.modelled})
        })
        .collect();
    json!({"report": "model", "points": points, "claims": claims, "constants": constants,
        "summary": {"held_out": summary_json(&r.ratios(true)), "fitted": summary_json(&r.ratios(false))}})
}

/// The chart of `cce report model --plot`: per table of Trn1 all-reduces and all-gathers (the
/// tables whose instance is stated), its measured times (solid) and the model's (dashed)
/// against the bytes per rank, log-log.
#[cfg(feature = "plot")]
pub fn model_chart(r: &ModelReport) -> Chart {
    let mut tables: Vec<&str> = Vec::new();
    for p in r.points.iter().filter(|p| p.model_us.is_ok() && p.point.instance == "trn1") {
        if !tables.contains(&p.point.table) {
            tables.push(p.point.table);
        }
    }
    let mut series = Vec::new();
    for t in tables {
        let pts: Vec<_> = r.points.iter().filter(|p| p.point.table == t && p.model_us.is_ok()).collect();
        let held = if pts.iter().any(|p| p.held_out) { ", held out" } else { "" };
        let first = pts[0].point;
        let name = format!("{t} ({} ranks, {} nodes{held})", first.ranks, first.nodes);
        series.push(plot::Series {
            name: format!("{name}: measured"),
            points: pts.iter().map(|p| (p.point.bytes.max(1) as f64, p.point.measured_us)).collect(),
            dashed: false,
        });
        series.push(plot::Series {
            name: format!("{name}: model"),
            points: pts
                .iter()
                .filter_map(|p| p.model_us.as_ref().ok().map(|m| (p.point.bytes.max(1) as f64, *m)))
                .collect(),
            dashed: true,
        });
    }
    Chart {
        title: "Trn1 collectives: Neuron's measured times and the model's".into(),
        x_label: "bytes per rank".into(),
        y_label: "time (us)".into(),
        x_scale: Scale::Log2,
        y_scale: Scale::Log10,
        series,
        marks: Vec::new(),
    }
}

/// Count, within 1.5×, within 25 % and the median of some ratios.
fn summary_json(ratios: &[f64]) -> Value {
    let s = RatioSummary::of(ratios);
    json!({"modelled": s.count, "within_1_5x": s.within_1_5x, "within_25_percent": s.within_25, "median_ratio": s.median})
}

/// What a set of model / measured ratios shows.
struct RatioSummary {
    count: usize,
    within_1_5x: usize,
    within_25: usize,
    median: Option<f64>,
}

impl RatioSummary {
    fn of(ratios: &[f64]) -> Self {
        let mut v = ratios.to_vec();
        v.sort_by(f64::total_cmp);
        let median = match v.len() {
            0 => None,
            n if n % 2 == 1 => Some(v[n / 2]),
            n => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
        };
        RatioSummary {
            count: v.len(),
            within_1_5x: v.iter().filter(|&&x| (1.0 / 1.5..=1.5).contains(&x)).count(),
            within_25: v.iter().filter(|&&x| (0.75..=1.25).contains(&x)).count(),
            median,
        }
    }
}

/// The text `cce report model` prints: one line per point, then the summaries.
pub fn model_text(r: &ModelReport) -> String {
    use std::fmt::Write;
    let mut t = String::from(
        "table                   collective  instance ranks nodes  bytes/rank dtype  measured us   model us   ratio  algorithm\n",
    );
    for p in &r.points {
        let m = p.point;
        let (model, ratio) = match (&p.model_us, p.ratio()) {
            (Ok(us), Some(x)) => (format!("{us:.1}"), format!("{x:.3}")),
            _ => ("-".to_string(), "-".to_string()),
        };
        let algo = match (&p.algorithm, &p.model_us) {
            (Some(a), _) => a.clone(),
            (None, Err(why)) => format!("not modelled: {why}"),
            (None, Ok(_)) => String::new(),
        };
        let held = if p.held_out { "  [held out]" } else { "" };
        let algo = match &p.alternative {
            Some((alt, Ok(us))) => format!("{algo} (or {alt}: {us:.1} us, {:.3})", us / m.measured_us),
            _ => algo,
        };
        let _ = writeln!(
            t,
            "{:<23} {:<11} {:<8} {:>5} {:>5} {:>11} {:<5} {:>11.1} {:>10} {:>7}  {algo}{held}",
            m.table, m.collective, m.instance, m.ranks, m.nodes, m.bytes, m.dtype, m.measured_us, model, ratio
        );
    }
    for (name, held) in [("held out (64 ranks, 2 instances)", true), ("the other points", false)] {
        let s = RatioSummary::of(&r.ratios(held));
        let _ = writeln!(
            t,
            "{name}: {} modelled, {} within 1.5x, {} within 25 %, median ratio {}",
            s.count,
            s.within_1_5x,
            s.within_25,
            s.median.map_or("-".to_string(), |m| format!("{m:.3}"))
        );
    }
    t.push_str("claims (release notes and pages; MODEL C28):\n");
    for c in &r.claims {
        let claimed = c.claim.change_percent.map_or("-".to_string(), |x| format!("{x:+.0} %"));
        let model = c.model_change_percent.map_or("-".to_string(), |x| format!("{x:+.0} %"));
        let _ =
            writeln!(t, "  {}: {} (claimed {claimed}; model {model}: {})", c.claim.version, c.claim.claim, c.modelled);
    }
    let _ = writeln!(
        t,
        "ratio = model / measured; the model's constants: the JSON's `constants`, and `cce allreduce {}`",
        super::flag("explain")
    );
    t
}
