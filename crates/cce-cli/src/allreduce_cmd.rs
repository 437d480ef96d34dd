//! `cce allreduce` and `cce demo`.

use std::time::Duration;

use cce_collectives::allreduce::{self, Algo, Collective, Config, RedOp, TimeModel};
use cce_collectives::metrics;
use cce_host::Rounding;
use serde_json::json;

use crate::args::{AllreduceArgs, DemoArgs};
use crate::error::CliError;
use crate::ring_cmd::write_atomic;

fn input(m: impl Into<String>) -> CliError {
    CliError::Input(m.into())
}

fn config(a: &AllreduceArgs, elems: u64) -> Result<Config, CliError> {
    let algo = Algo::from_name(&a.algo)
        .ok_or_else(|| input(format!("--algo '{}': expected ring, ring-2r2w, kangaring or mesh", a.algo)))?;
    let op = RedOp::from_name(&a.op).ok_or_else(|| input(format!("--op '{}': expected add, min, max or avg", a.op)))?;
    let ranks = usize::try_from(a.ranks).map_err(|_| input("--ranks out of range"))?;
    let mut cfg = Config::new(ranks, algo, op, a.dtype, elems);
    if let Some(acc) = a.accum {
        cfg.accum = acc;
    }
    cfg.arch = a.arch as u32;
    cfg.model = TimeModel::defaults(cfg.arch);
    cfg.rounding = match a.rounding.as_str() {
        "rne" => Rounding::Rne,
        "sr" => Rounding::Stochastic { seed: a.seed as u32 },
        other => return Err(input(format!("--rounding '{other}': expected rne or sr"))),
    };
    cfg.collective = match a.collective.as_str() {
        "allreduce" | "all-reduce" => Collective::AllReduce,
        "reduce-scatter" => Collective::ReduceScatter,
        "all-gather" => Collective::AllGather,
        other => {
            return Err(input(format!("--collective '{other}': expected allreduce, reduce-scatter or all-gather")));
        }
    };
    cfg.fail = a.fail_rank.zip(a.fail_step).map(|(k, s)| (k as usize, s as usize));
    cfg.timeout = Duration::from_secs(a.timeout.max(1));
    let positive = |v: Option<f64>, name: &str| -> Result<Option<f64>, CliError> {
        match v {
            Some(x) if !(x.is_finite() && x > 0.0) => Err(input(format!("--{name} must be a positive number"))),
            v => Ok(v),
        }
    };
    if let Some(v) = positive(a.alpha_ns, "alpha-ns")? {
        cfg.model.per_descriptor = v * 1e-9;
    }
    if let Some(v) = positive(a.dma_gbps, "dma-gbps")? {
        cfg.model.dma_bytes_per_sec = v * 1e9;
    }
    if let Some(v) = positive(a.link_gbps, "link-gbps")? {
        cfg.model.link_bytes_per_sec = v * 1e9;
    }
    if let Some(v) = positive(a.cce_rate, "cce-rate")? {
        cfg.model.cce_rate = v;
    }
    if let Some(v) = positive(a.latency_us, "latency-us")? {
        cfg.model.step_latency = v * 1e-6;
    }
    Ok(cfg)
}

fn read_inputs(cfg: &Config, dir: &std::path::Path) -> Result<Vec<Vec<u8>>, CliError> {
    let want = cfg.elems * cfg.dtype.bytes() as u64;
    (0..cfg.ranks)
        .map(|r| {
            let p = dir.join(format!("rank{r}.bin"));
            let io = |source| CliError::Io { path: p.display().to_string(), source };
            let len = std::fs::metadata(&p).map_err(io)?.len();
            if len != want {
                return Err(input(format!(
                    "{}: {len} bytes, expected {want} ({} elements of {})",
                    p.display(),
                    cfg.elems,
                    cfg.dtype.name()
                )));
            }
            std::fs::read(&p).map_err(io)
        })
        .collect()
}

fn spinner(msg: String) -> indicatif::ProgressBar {
    let pb = indicatif::ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::stderr());
    pb.set_style(
        indicatif::ProgressStyle::with_template("{spinner} {msg} {elapsed}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
    );
    pb.set_message(msg);
    pb.enable_steady_tick(Duration::from_millis(100));
    pb
}

/// An ulp error for a table: fixed-point while readable, else scientific (an error at an exact
/// value of 0 is counted in the dtype's smallest subnormal spacing, so it can be ~1e37).
fn ulps(x: f64) -> String {
    if x < 1e5 { format!("{x:.3}") } else { format!("{x:.3e}") }
}

pub(crate) fn allreduce(a: &AllreduceArgs) -> Result<(), CliError> {
    if let Some(sweep) = &a.sweep {
        return sweep_rows(a, sweep);
    }
    let elems = if let Some(dir) = &a.input_dir {
        // Without --elems, the element count follows rank0.bin (its length only: nothing is read).
        match a.elems {
            Some(e) => e,
            None => {
                let p = dir.join("rank0.bin");
                let len = std::fs::metadata(&p)
                    .map_err(|source| CliError::Io { path: p.display().to_string(), source })?
                    .len();
                len / a.dtype.bytes().max(1) as u64
            }
        }
    } else {
        a.elems.ok_or_else(|| input("--elems is required without --input-dir"))?
    };
    let cfg = config(a, elems)?;
    // The whole configuration, the memory budget included, before any input is generated or read.
    let need = allreduce::check(&cfg)?;
    let inputs = match &a.input_dir {
        Some(d) => read_inputs(&cfg, d)?,
        None => metrics::generate(&cfg, a.seed),
    };
    let pb = spinner(format!("{} over {} ranks", cfg.algo.name(), cfg.ranks));
    let outcome = allreduce::run(&cfg, &inputs);
    pb.finish_and_clear();
    let o = outcome?;
    let m = metrics::measure(&cfg, &inputs, &o.outputs);
    if let Some(dir) = &a.output_dir {
        std::fs::create_dir_all(dir).map_err(|source| CliError::Io { path: dir.display().to_string(), source })?;
        for (r, out) in o.outputs.iter().enumerate() {
            write_atomic(&dir.join(format!("rank{r}.bin")), out)?;
        }
    }
    let (algbw, busbw) = metrics::bandwidths(&cfg, o.seconds);
    if a.json {
        let v = json!({
            "ranks_identical": m.ranks_identical, "max_abs_err": m.max_abs_err, "max_rel_err": m.max_rel_err,
            "max_ulp_err": m.max_ulp_err, "mean_ulp_err": m.mean_ulp_err,
            "packets": o.packets(), "descriptors": o.descriptors(), "bytes_moved": o.bytes_moved(),
            "seconds": o.seconds, "model_seconds": o.model_seconds, "algbw_gbps": algbw, "busbw_gbps": busbw,
            "wrong": m.wrong, "steps": o.steps, "memory_bytes": need.total(),
            "per_rank": o.ranks.iter().map(|r| json!({"packets": r.packets, "descriptors": r.descriptors, "bytes_read": r.bytes_read, "bytes_written": r.bytes_written})).collect::<Vec<_>>(),
            "per_link": o.links.iter().map(|((f, t), b)| json!({"from": f, "to": t, "bytes": b})).collect::<Vec<_>>(),
        });
        crate::print_json(&v);
    } else {
        // One line (the README shows it so): the run, then how good its result is.
        let quality = if cfg.collective == Collective::AllReduce {
            format!(
                "#wrong {} (elements outside the sequential-rounding error bound), max ulp err {} (mean {}) of {}, max abs err {:.3e}, max rel err {:.3e} (of the largest exact magnitude)",
                m.wrong,
                ulps(m.max_ulp_err),
                ulps(m.mean_ulp_err),
                cfg.dtype.name(),
                m.max_abs_err,
                m.max_rel_err,
            )
        } else {
            "partial results not compared with an exact value".to_string()
        };
        crate::output::outln!(
            "{} {} x {} {} on {} ranks: {:.4} s (model {:.6} s), algbw {:.2} GB/s, busbw {:.2} GB/s, {} packets, {} descriptors, {} bytes moved, {quality}, ranks identical: {}",
            cfg.algo.name(),
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
            m.ranks_identical,
        );
    }
    Ok(())
}

/// The distinct element counts of a `MIN:MAX` byte sweep, doubling from MIN: a size below one
/// element counts as one element, and sizes that round to the same count run once.
fn sweep_counts(sweep: &str, elem_bytes: u64) -> Result<Vec<u64>, CliError> {
    let (lo, hi) = sweep.split_once(':').ok_or_else(|| input(format!("--sweep '{sweep}': expected MIN:MAX bytes")))?;
    let lo = crate::values::parse_u64(lo).map_err(input)?;
    let hi = crate::values::parse_u64(hi).map_err(input)?;
    if lo == 0 || lo > hi {
        return Err(input("--sweep: MIN must be positive and at most MAX"));
    }
    let mut counts: Vec<u64> = Vec::new();
    let mut s = lo;
    loop {
        let count = (s / elem_bytes.max(1)).max(1);
        // Doubling sizes give non-decreasing counts: a repeat is the previous one.
        if counts.last() != Some(&count) {
            counts.push(count);
        }
        match s.checked_mul(2) {
            Some(next) if next <= hi => s = next,
            _ => break,
        }
    }
    Ok(counts)
}

fn sweep_rows(a: &AllreduceArgs, sweep: &str) -> Result<(), CliError> {
    let size = a.dtype.bytes().max(1) as u64;
    let counts = sweep_counts(sweep, size)?;
    // Every size's configuration and memory budget, before any size runs.
    let cfgs = counts
        .iter()
        .map(|&count| {
            let cfg = config(a, count)?;
            allreduce::check(&cfg)?;
            Ok(cfg)
        })
        .collect::<Result<Vec<_>, CliError>>()?;
    let pb = indicatif::ProgressBar::with_draw_target(Some(cfgs.len() as u64), indicatif::ProgressDrawTarget::stderr());
    let mut rows = Vec::new();
    if !a.json {
        crate::output::outln!(
            "{:>12} {:>12} {:>6} {:>6} {:>11} {:>9} {:>9} {:>7} {:>11} {:>9} {:>9}",
            "size",
            "count",
            "type",
            "redop",
            "time(us)",
            "algbw",
            "busbw",
            "#wrong",
            "model(us)",
            "algbw",
            "busbw"
        );
    }
    for cfg in cfgs {
        let count = cfg.elems;
        let inputs = metrics::generate(&cfg, a.seed);
        let o = allreduce::run(&cfg, &inputs)?;
        let m = metrics::measure(&cfg, &inputs, &o.outputs);
        let (alg, bus) = metrics::bandwidths(&cfg, o.seconds);
        let (malg, mbus) = metrics::bandwidths(&cfg, o.model_seconds);
        pb.inc(1);
        if a.json {
            rows.push(json!({"size": count * size, "count": count, "type": cfg.dtype.name(), "redop": cfg.op.name(),
                "time_us": o.seconds * 1e6, "algbw_gbps": alg, "busbw_gbps": bus, "wrong": m.wrong,
                "max_ulp_err": m.max_ulp_err,
                "model_us": o.model_seconds * 1e6, "model_algbw_gbps": malg, "model_busbw_gbps": mbus}));
        } else {
            pb.suspend(|| {
                crate::output::outln!(
                    "{:>12} {:>12} {:>6} {:>6} {:>11.1} {:>9.2} {:>9.2} {:>7} {:>11.2} {:>9.2} {:>9.2}",
                    count * size,
                    count,
                    cfg.dtype.name(),
                    cfg.op.name(),
                    o.seconds * 1e6,
                    alg,
                    bus,
                    m.wrong,
                    o.model_seconds * 1e6,
                    malg,
                    mbus
                )
            });
        }
    }
    pb.finish_and_clear();
    if a.json {
        crate::print_json(&json!({"rows": rows}));
    }
    Ok(())
}

pub(crate) fn demo(a: &DemoArgs) -> Result<(), CliError> {
    let ranks = 8;
    // Bad sizes (and a memory budget the all-reduce would exceed) are refused before any output.
    cce_collectives::demo::check_allreduce(ranks, a.elems)?;
    let mut failures = Vec::new();
    let examples = cce_collectives::demo::examples()?;
    for ex in &examples {
        if ex.mismatches != 0 {
            failures.push(ex.title.to_string());
        }
        if a.json {
            continue;
        }
        crate::output::outln!("== {}", ex.title);
        let bytes = ex.rings.to_file_bytes(0, 3);
        let file = cce_format::ringfile::RingFile::parse(&bytes)?;
        crate::output::out!("{}", crate::ring_cmd::listing(&file));
        if ex.mismatches == 0 {
            crate::output::outln!("engine result: all {} elements equal the independent computation\n", ex.elems);
        } else {
            crate::output::outln!(
                "engine result: {} of {} elements DIFFER from the independent computation\n",
                ex.mismatches,
                ex.elems
            );
        }
    }
    if !a.json {
        crate::output::outln!(
            "== all-reduce: {ranks} ranks x {} bf16 elements (fp32 accumulate), every algorithm",
            a.elems
        );
    }
    let pb = spinner(String::new());
    let rows =
        cce_collectives::demo::allreduce_rows(ranks, a.elems, |algo| pb.set_message(format!("{} ...", algo.name())));
    pb.finish_and_clear();
    let rows = rows?;
    for r in &rows {
        if !r.ranks_identical || r.wrong != 0 {
            failures.push(format!("all-reduce {}", r.algo.name()));
        }
    }
    if a.json {
        crate::print_json(&json!({
            "examples": examples.iter().map(|ex| json!({
                "title": ex.title, "elems": ex.elems, "mismatches": ex.mismatches, "packets": ex.rings.packets,
                "tx_descriptors": ex.rings.tx_doorbell(), "rx_descriptors": ex.rings.rx_doorbell(),
            })).collect::<Vec<_>>(),
            "allreduce": {
                "ranks": ranks, "elems": a.elems, "dtype": "bf16", "accum": "fp32", "op": "add",
                "rows": rows.iter().map(|r| json!({
                    "algo": r.algo.name(), "seconds": r.seconds, "model_seconds": r.model_seconds,
                    "descriptors": r.descriptors, "bytes_moved": r.bytes, "max_abs_err": r.max_abs_err,
                    "max_rel_err": r.max_rel_err, "max_ulp_err": r.max_ulp_err, "mean_ulp_err": r.mean_ulp_err,
                    "ranks_identical": r.ranks_identical, "wrong": r.wrong,
                })).collect::<Vec<_>>(),
            },
            "passed": failures.is_empty(),
            "failures": failures,
        }));
    } else {
        crate::output::outln!(
            "{:<10} {:>9} {:>12} {:>12} {:>14} {:>10} {:>9} {:>9} {:>7} {:>6}",
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
        for r in &rows {
            crate::output::outln!(
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
    }
    if failures.is_empty() {
        if !a.json {
            crate::output::outln!("\ndemo: every check passed");
        }
        Ok(())
    } else {
        Err(CliError::Failed(format!("demo checks failed: {}", failures.join(", "))))
    }
}
