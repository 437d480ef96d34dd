//! Reports as the CLI prints them: `cce report numerics`'s JSON object and chart, from the
//! [`Report`] [`NumericsReport::run`](crate::collective::NumericsReport::run) returns.
//!
//! The JSON: `report`, `elems`, `seed`, `inputs`, `algo`, `op`, `accum`, `measure` (what the
//! numbers are, [`MEASURE`]) and `rows`, one per R: `ranks`, then `bf16_rne`, `bf16_sr`, `fp32`
//! (the mean error), `bias` and `max` (each an object with the same three keys: the signed mean
//! and the largest error).

use cce_collectives::numerics_report::{self as nr, MEASURE};

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
    json!({
        "report": "numerics", "elems": p.elems, "seed": p.seed, "inputs": p.inputs.name(),
        "algo": "ring", "op": cce_collectives::collective::RedOp::Add.name(), "accum": "fp32", "measure": MEASURE, "rows": rows,
    })
}

/// The chart: the error of each series against R, log-log (R in powers of 2).
#[cfg(feature = "plot")]
pub fn numerics_chart(r: &Report) -> Chart {
    let series = Series::ALL
        .iter()
        .map(|&s| plot::Series {
            name: s.label().to_string(),
            points: r.rows.iter().map(|row| (row.ranks as f64, row.get(s).mean_rel)).collect(),
            dashed: false,
        })
        .collect();
    Chart {
        title: format!(
            "ring all-reduce error vs ranks ({} inputs, {} elements per rank)",
            r.params.inputs.name(),
            r.params.elems
        ),
        x_label: "ranks R".into(),
        y_label: "mean |error| / sum |x|".into(),
        x_scale: Scale::Log2,
        y_scale: Scale::Log10,
        series,
        marks: Vec::new(),
    }
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
    s
}
