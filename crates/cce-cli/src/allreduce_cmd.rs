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

pub(crate) fn allreduce(a: &AllreduceArgs) -> Result<(), CliError> {
    if let Some(sweep) = &a.sweep {
        return sweep_rows(a, sweep);
    }
    let elems = if let Some(dir) = &a.input_dir {
        // Without --elems, the element count follows rank0.bin.
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
    let inputs = match &a.input_dir {
        Some(d) => read_inputs(&cfg, d)?,
        None => {
            let bytes = cfg.elems.saturating_mul(cfg.dtype.bytes() as u64).saturating_mul(cfg.ranks as u64);
            if bytes > cfg.budget {
                return Err(input(format!("{bytes} bytes of inputs exceed the {}-byte budget", cfg.budget)));
            }
            metrics::generate(&cfg, a.seed)
        }
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
    let v = json!({
        "ranks_identical": m.ranks_identical, "max_abs_err": m.max_abs_err, "max_rel_err": m.max_rel_err,
        "packets": o.packets(), "descriptors": o.descriptors(), "bytes_moved": o.bytes_moved(),
        "seconds": o.seconds, "model_seconds": o.model_seconds, "algbw_gbps": algbw, "busbw_gbps": busbw,
        "wrong": m.wrong, "steps": o.steps,
        "per_rank": o.ranks.iter().map(|r| json!({"packets": r.packets, "descriptors": r.descriptors, "bytes_read": r.bytes_read, "bytes_written": r.bytes_written})).collect::<Vec<_>>(),
        "per_link": o.links.iter().map(|((f, t), b)| json!({"from": f, "to": t, "bytes": b})).collect::<Vec<_>>(),
    });
    if a.json {
        crate::print_json(&v);
    } else {
        println!(
            "{} {} x {} {} on {} ranks: {:.4} s (model {:.6} s), algbw {:.2} GB/s, busbw {:.2} GB/s, {} packets, {} descriptors, {} bytes moved, max abs err {:.3e}, ranks identical: {}",
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
            m.max_abs_err,
            m.ranks_identical
        );
    }
    Ok(())
}

fn sweep_rows(a: &AllreduceArgs, sweep: &str) -> Result<(), CliError> {
    let (lo, hi) = sweep.split_once(':').ok_or_else(|| input(format!("--sweep '{sweep}': expected MIN:MAX bytes")))?;
    let lo = crate::values::parse_u64(lo).map_err(input)?;
    let hi = crate::values::parse_u64(hi).map_err(input)?;
    let size = a.dtype.bytes().max(1) as u64;
    if lo == 0 || lo > hi {
        return Err(input("--sweep: MIN must be positive and at most MAX"));
    }
    let mut sizes = Vec::new();
    let mut s = lo;
    while s <= hi {
        sizes.push(s);
        s = s.saturating_mul(2);
        if s == u64::MAX {
            break;
        }
    }
    let pb =
        indicatif::ProgressBar::with_draw_target(Some(sizes.len() as u64), indicatif::ProgressDrawTarget::stderr());
    let mut rows = Vec::new();
    if !a.json {
        println!(
            "{:>12} {:>12} {:>6} {:>6} {:>11} {:>9} {:>9} {:>7} {:>11} {:>9} {:>9}",
            "size", "count", "type", "redop", "time(us)", "algbw", "busbw", "#wrong", "model(us)", "algbw", "busbw"
        );
    }
    for bytes in sizes {
        let count = (bytes / size).max(1);
        let cfg = config(a, count)?;
        let inputs = metrics::generate(&cfg, a.seed);
        let o = allreduce::run(&cfg, &inputs)?;
        let m = metrics::measure(&cfg, &inputs, &o.outputs);
        let (alg, bus) = metrics::bandwidths(&cfg, o.seconds);
        let (malg, mbus) = metrics::bandwidths(&cfg, o.model_seconds);
        pb.inc(1);
        if a.json {
            rows.push(json!({"size": count * size, "count": count, "type": cfg.dtype.name(), "redop": cfg.op.name(),
                "time_us": o.seconds * 1e6, "algbw_gbps": alg, "busbw_gbps": bus, "wrong": m.wrong,
                "model_us": o.model_seconds * 1e6, "model_algbw_gbps": malg, "model_busbw_gbps": mbus}));
        } else {
            pb.suspend(|| {
                println!(
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
    // Bad sizes are refused before any output.
    cce_collectives::demo::check_allreduce(ranks, a.elems)?;
    let mut failures = Vec::new();
    for ex in cce_collectives::demo::examples()? {
        println!("== {}", ex.title);
        let bytes = ex.rings.to_file_bytes(0, 3);
        let file = cce_format::ringfile::RingFile::parse(&bytes)?;
        print!("{}", crate::ring_cmd::listing(&file));
        if ex.mismatches == 0 {
            println!("engine result: all {} elements equal the independent computation\n", ex.elems);
        } else {
            println!(
                "engine result: {} of {} elements DIFFER from the independent computation\n",
                ex.mismatches, ex.elems
            );
            failures.push(ex.title.to_string());
        }
    }
    println!("== all-reduce: {ranks} ranks x {} bf16 elements (fp32 accumulate), every algorithm", a.elems);
    let pb = spinner(String::new());
    let rows =
        cce_collectives::demo::allreduce_rows(ranks, a.elems, |algo| pb.set_message(format!("{} ...", algo.name())));
    pb.finish_and_clear();
    let rows = rows?;
    println!(
        "{:<10} {:>9} {:>12} {:>12} {:>14} {:>10} {:>7} {:>6}",
        "algorithm", "seconds", "model (s)", "descriptors", "bytes", "max err", "ranks=", "wrong"
    );
    for r in &rows {
        println!(
            "{:<10} {:>9.3} {:>12.6} {:>12} {:>14} {:>10.3e} {:>7} {:>6}",
            r.algo.name(),
            r.seconds,
            r.model_seconds,
            r.descriptors,
            r.bytes,
            r.max_abs_err,
            r.ranks_identical,
            r.wrong
        );
        if !r.ranks_identical || r.wrong != 0 {
            failures.push(format!("all-reduce {}", r.algo.name()));
        }
    }
    if failures.is_empty() {
        println!("\ndemo: every check passed");
        Ok(())
    } else {
        Err(CliError::Failed(format!("demo checks failed: {}", failures.join(", "))))
    }
}
