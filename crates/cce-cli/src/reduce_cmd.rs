//! `cce reduce` (files through the whole path) and `cce run` (a ring dump over loaded memory).

use std::path::{Path, PathBuf};

use cce_collectives::{PathError, ReduceJob, run_reduce};
use cce_engine::feed::run_programs;
use cce_engine::{Engine, EngineConfig, MemError, Memory, PagedMemory, QueueState};
use cce_format::KbinOp;
use cce_format::ringfile::RingFile;
use cce_host::{MinMaxConstant, Rounding};
use serde_json::json;

use crate::args::{ReduceArgs, RunArgs};
use crate::error::CliError;
use crate::ring_cmd::write_atomic;
use crate::values;

fn io(path: &Path) -> impl Fn(std::io::Error) -> CliError + '_ {
    move |source| CliError::Io { path: path.display().to_string(), source }
}

fn file_len(path: &Path) -> Result<u64, CliError> {
    let md = std::fs::metadata(path).map_err(io(path))?;
    if !md.is_file() {
        return Err(CliError::Input(format!("{}: not a regular file", path.display())));
    }
    Ok(md.len())
}

pub(crate) fn reduce(a: &ReduceArgs) -> Result<(), CliError> {
    let op = match a.op.as_str() {
        "add" => KbinOp::Add,
        "fma" => KbinOp::Fma,
        "min" => KbinOp::Min,
        "max" => KbinOp::Max,
        other => return Err(CliError::Input(format!("--op '{other}': expected add, fma, min or max"))),
    };
    let rounding = match values::rounding_seed(&a.opts.rounding, a.opts.seed).map_err(CliError::Input)? {
        None => Rounding::Rne,
        Some(seed) => Rounding::Stochastic { seed: seed as u32 },
    };
    if !a.opts.scale.is_empty() && op != KbinOp::Fma {
        return Err(CliError::Input("--scale is for --op fma only".into()));
    }
    if a.opts.constant.is_some() && !matches!(op, KbinOp::Min | KbinOp::Max) {
        return Err(CliError::Host(cce_host::HostError::ConstantNotMinMax));
    }
    let constant = a
        .opts
        .constant
        .as_deref()
        .map(|t| MinMaxConstant::parse(t, a.opts.const_dtype.unwrap_or(a.in_dt)))
        .transpose()?;
    if a.threads == 0 {
        return Err(CliError::Input("--threads must be at least 1".into()));
    }
    let job = ReduceJob {
        op,
        scales: a.opts.scale.clone(),
        constant,
        rounding,
        arch: a.arch as u32,
        dests: a.dst.len(),
        threads: a.threads as usize,
        ..ReduceJob::add(a.in_dt, a.accum, a.out_dt)
    };
    for (i, d) in a.dst.iter().enumerate() {
        if a.src.iter().chain(&a.dst[..i]).any(|p| same_file(p, d)) {
            return Err(CliError::Input(format!(
                "{}: a destination may not also be a source or another destination",
                d.display()
            )));
        }
    }
    // Sizes first: a request that would exhaust memory is refused before reading anything.
    let lens = a.src.iter().map(|p| file_len(p)).collect::<Result<Vec<_>, _>>()?;
    cce_collectives::single::check_inputs(&job, &lens).map_err(|e| match e {
        // The library counts sources; the files have names.
        PathError::SourceLengths { index, first, len } => CliError::Input(format!(
            "sources differ in length: {} has {first} bytes, {} has {len} bytes",
            a.src[0].display(),
            a.src[index].display()
        )),
        e => e.into(),
    })?;
    let data = a.src.iter().map(|p| std::fs::read(p).map_err(io(p))).collect::<Result<Vec<_>, _>>()?;
    let views: Vec<&[u8]> = data.iter().map(Vec::as_slice).collect();
    let o = run_reduce(&job, &views)?;
    for (path, bytes) in a.dst.iter().zip(&o.outputs) {
        write_atomic(path, bytes)?;
    }
    if a.json {
        crate::print_json(&json!({
            "elements": o.elements, "packets": o.packets, "descriptors": o.descriptors,
            "bytes_read": o.bytes_read, "bytes_written": o.bytes_written, "seconds": o.seconds,
        }));
    } else {
        crate::output::outln!(
            "{} elements, {} packets, {} descriptors, {} bytes read, {} written, {:.3} s",
            o.elements,
            o.packets,
            o.descriptors,
            o.bytes_read,
            o.bytes_written,
            o.seconds
        );
    }
    Ok(())
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

/// `ADDR=FILE`.
fn parse_load(s: &str) -> Result<(u64, PathBuf), CliError> {
    let (addr, file) = s.split_once('=').ok_or_else(|| CliError::Input(format!("--load '{s}': expected ADDR=FILE")))?;
    Ok((values::parse_u64(addr).map_err(|e| CliError::Input(format!("--load: {e}")))?, PathBuf::from(file)))
}

/// `ADDR:LEN=FILE`.
fn parse_dump(s: &str) -> Result<(u64, u64, PathBuf), CliError> {
    let bad = || CliError::Input(format!("--dump '{s}': expected ADDR:LEN=FILE"));
    let (range, file) = s.split_once('=').ok_or_else(bad)?;
    let (addr, len) = range.split_once(':').ok_or_else(bad)?;
    let addr = values::parse_u64(addr).map_err(|e| CliError::Input(format!("--dump: {e}")))?;
    let len = values::parse_u64(len).map_err(|e| CliError::Input(format!("--dump: {e}")))?;
    if len == 0 {
        return Err(CliError::Input(format!("--dump '{s}': the length must be positive")));
    }
    Ok((addr, len, PathBuf::from(file)))
}

pub(crate) fn run(a: &RunArgs) -> Result<(), CliError> {
    let bytes = std::fs::read(&a.ring_file).map_err(io(&a.ring_file))?;
    let file = RingFile::parse(&bytes).map_err(|e| CliError::ring_file(&a.ring_file, e))?;
    let loads = a.load.iter().map(|s| parse_load(s)).collect::<Result<Vec<_>, _>>()?;
    let dumps = a.dump.iter().map(|s| parse_dump(s)).collect::<Result<Vec<_>, _>>()?;
    if a.threads == 0 {
        return Err(CliError::Input("--threads must be at least 1".into()));
    }
    let mut mem = PagedMemory::default();
    // Sizes first, against the budget, before any file is read.
    let mut total = 0u64;
    for (_, p) in &loads {
        total = total.saturating_add(file_len(p)?);
    }
    mem.fits(total).map_err(|e| CliError::Input(e.to_string()))?;
    for (k, (addr, p)) in loads.iter().enumerate() {
        let data = std::fs::read(p).map_err(io(p))?;
        if data.is_empty() {
            return Err(CliError::Input(format!("--load {}: the file is empty", p.display())));
        }
        mem.add_resident_region(*addr, data.len() as u64).map_err(|e| {
            // Name the --load whose region this one overlaps.
            let other = match e {
                MemError::Overlap { other_base, .. } => {
                    a.load[..k].iter().zip(&loads).find(|(_, (b, _))| *b == other_base).map(|(s, _)| s.as_str())
                }
                _ => None,
            };
            let also = other.map_or(String::new(), |s| format!(" (--load {s})"));
            CliError::Input(format!("--load {}: {e}{also}", a.load[k]))
        })?;
        mem.write(*addr, &data).map_err(|e| CliError::Input(e.to_string()))?;
    }
    for (addr, len, p) in &dumps {
        if mem.check(*addr, *len).is_err() {
            mem.add_resident_region(*addr, *len)
                .map_err(|e| CliError::Input(format!("--dump {}: {e}", p.display())))?;
        }
    }
    let mut engine = Engine::new(mem, EngineConfig { threads: a.threads as usize, ..EngineConfig::default() });
    let t = std::time::Instant::now();
    let report = run_programs(&mut engine, &file.queues, &mut |m: &mut PagedMemory, x, l| m.add_region(x, l))
        .map_err(|e| CliError::Input(e.to_string()))?;
    let seconds = t.elapsed().as_secs_f64();
    let mut queues = Vec::new();
    let mut faults = Vec::new();
    for id in engine.queue_ids() {
        let Some(st) = engine.status(id) else { continue };
        if let Some(f) = &st.fault {
            faults.push(f.to_string());
        }
        queues.push(json!({
            "queue": id,
            "state": match st.state { QueueState::Idle => "idle", QueueState::Active => "active", QueueState::Faulted => "faulted", QueueState::Stalled => "stalled" },
            "semaphore": st.semaphore, "packets": st.packets, "tx_done": st.tx_done, "rx_done": st.rx_done,
            "fault": st.fault.as_ref().map(|f| f.to_string()),
        }));
    }
    let mem = engine.memory();
    for (addr, len, p) in &dumps {
        let mut buf = vec![0u8; *len as usize];
        mem.read(*addr, &mut buf).map_err(|e| CliError::Input(format!("--dump {}: {e}", p.display())))?;
        write_atomic(p, &buf)?;
    }
    let v = json!({
        "queues": queues, "packets": report.packets, "descriptors": report.descriptors,
        "bytes_read": report.bytes_read, "bytes_written": report.bytes_written, "seconds": seconds,
    });
    if a.json {
        crate::print_json(&v);
    } else {
        for q in &queues {
            crate::output::outln!(
                "queue {}: {} semaphore {} packets {} tx {} rx {}{}",
                q["queue"],
                q["state"].as_str().unwrap_or("?"),
                q["semaphore"],
                q["packets"],
                q["tx_done"],
                q["rx_done"],
                q["fault"].as_str().map(|f| format!(" fault: {f}")).unwrap_or_default()
            );
        }
    }
    if !faults.is_empty() {
        return Err(CliError::Failed(format!("{} queue(s) faulted: {}", faults.len(), faults.join("; "))));
    }
    Ok(())
}
