//! `cce build` and `cce disasm`: request → ring bytes, and ring bytes → a listing.

use std::io::Write;
use std::path::Path;

use cce_format::descriptor::{DEFAULT_FMA_SELECTORS, FmaOperand};
use cce_format::layout::{self, Layout};
use cce_format::limits::PrioCaps;
use cce_format::packet::{self, DescKind, Found, Packet, PacketOp, RingGeometry};
use cce_format::ringfile::{QueueRings, RingFile, words_at};
use cce_format::{KbinOp, SdmaDtype};
use cce_host::{MinMaxConstant, ReduceRequest, Rounding, plan};
use serde_json::{Value, json};

use crate::args::{BuildArgs, DisasmArgs};
use crate::error::CliError;
use crate::render;
use crate::values;

fn input(msg: impl Into<String>) -> CliError {
    CliError::Input(msg.into())
}

/// Splits `--out` values into the output dtype and the file (a value naming a dtype is the
/// dtype; anything else is the file).
fn out_dtype_and_file(a: &BuildArgs) -> Result<(SdmaDtype, Option<std::path::PathBuf>), CliError> {
    let mut dtype = a.out_dtype;
    let mut file = a.output.clone();
    for v in &a.out {
        match values::parse_sdma_dtype(v) {
            Ok(d) if dtype.is_none() => dtype = Some(d),
            _ if file.is_none() => file = Some(v.into()),
            _ => {
                return Err(input(format!("--out '{v}': the output dtype and the output file are both given already")));
            }
        }
    }
    Ok((dtype.ok_or_else(|| input("the output dtype is required: --out D (or --out-dtype D)"))?, file))
}

fn selectors(text: &str) -> Result<[FmaOperand; 3], CliError> {
    let parts: Vec<_> = text.split(',').map(str::trim).collect();
    let one = |s: &str| match s {
        "stored" | "0" => Ok(FmaOperand::Stored),
        "input" | "1" => Ok(FmaOperand::Input),
        "scale" | "2" => Ok(FmaOperand::Scale),
        _ => Err(input(format!("--selectors: '{s}' is not stored, input or scale"))),
    };
    match parts.as_slice() {
        [a, b, c] => Ok([one(a)?, one(b)?, one(c)?]),
        _ => Err(input("--selectors takes three operands a,b,c")),
    }
}

/// The request the flags describe.
fn request(a: &BuildArgs, out_dt: SdmaDtype) -> Result<ReduceRequest, CliError> {
    let op = KbinOp::from_name(&a.op)
        .filter(|o| !matches!(o, KbinOp::Invalid | KbinOp::Num))
        .ok_or_else(|| input(format!("--op '{}': expected add, fma, min, max, copy or transpose", a.op)))?;
    let arch = u32::try_from(a.arch).map_err(|_| input(format!("--arch {} is out of range", a.arch)))?;
    let prio = u32::try_from(a.prio).unwrap_or(u32::MAX);
    let mut req = ReduceRequest::new(op.value(), a.src.clone(), a.dst.clone(), a.elems, a.in_dt, a.accum, out_dt, arch);
    req.prio = prio;
    if let Some(cap) = a.cap {
        req.caps = PrioCaps::default().with_cap(prio, cap as u32);
    }
    req.rounding = match values::rounding_seed(&a.opts.rounding, a.opts.seed).map_err(input)? {
        None => Rounding::Rne,
        Some(seed) => Rounding::Stochastic { seed: seed as u32 },
    };
    req.selectors = match &a.selectors {
        Some(s) => selectors(s)?,
        None => DEFAULT_FMA_SELECTORS,
    };
    let n = req.srcs.len();
    if !a.opts.scale.is_empty() && op != KbinOp::Fma {
        return Err(input("--scale is for --op fma only"));
    }
    if a.opts.constant.is_some() && !matches!(op, KbinOp::Min | KbinOp::Max) {
        return Err(CliError::Host(cce_host::HostError::ConstantNotMinMax));
    }
    if a.no_cce_info {
        return Ok(req);
    }
    match op {
        KbinOp::Fma => {
            let scales = match a.opts.scale.len() {
                0 => vec![1.0; n],
                1 => vec![a.opts.scale[0]; n],
                k if k == n => a.opts.scale.clone(),
                k => return Err(input(format!("--scale: {k} scales for {n} sources (give one, or one per source)"))),
            };
            if n <= 32 {
                req = req.with_fma_scales(&scales)?;
            }
        }
        KbinOp::Min | KbinOp::Max => {
            if let Some(text) = &a.opts.constant {
                let c = MinMaxConstant::parse(text, a.opts.const_dtype.unwrap_or(a.in_dt))?;
                req = req.with_min_max_constant(c);
            }
        }
        _ => {}
    }
    Ok(req)
}

/// Writes `bytes` to `path` through a temporary file and a rename, so a failure never leaves
/// a half-written file.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    let io = |source| CliError::Io { path: path.display().to_string(), source };
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp-{}", std::process::id()));
    let tmp = std::path::PathBuf::from(tmp);
    let result = std::fs::File::create(&tmp).and_then(|mut f| f.write_all(bytes).and_then(|()| f.sync_all()));
    if let Err(e) = result.and_then(|()| std::fs::rename(&tmp, path)) {
        let _ = std::fs::remove_file(&tmp);
        return Err(io(e));
    }
    Ok(())
}

pub(crate) fn build(a: &BuildArgs) -> Result<(), CliError> {
    let (out_dt, file) = out_dtype_and_file(a)?;
    let req = request(a, out_dt)?;
    let program = plan(&req)?;
    let rings = program.to_rings(a.ring_size)?;
    let queue = rings.queue(a.queue as u32);
    if let Some(path) = &file {
        write_atomic(path, &rings.to_file_bytes(a.queue as u32, req.arch))?;
    }
    if a.json {
        let mut v = queue_json(&queue);
        if let Value::Object(o) = &mut v {
            o.insert("file".into(), json!(file.as_ref().map(|p| p.display().to_string())));
        }
        crate::print_json(&v);
    } else {
        crate::output::outln!(
            "{} packets, {} tx + {} rx descriptors, ring {} descriptors (phase {}), doorbells rx {} then tx {}{}",
            rings.packets,
            rings.tx_doorbell(),
            rings.rx_doorbell(),
            rings.ring_size,
            rings.initial_phase,
            rings.rx_doorbell(),
            rings.tx_doorbell(),
            file.map(|p| format!("; wrote {}", p.display())).unwrap_or_default()
        );
    }
    Ok(())
}

fn ring_words(bytes: &[u8]) -> Vec<[u32; 4]> {
    (0..bytes.len() / 16).filter_map(|i| words_at(bytes, i)).collect()
}

fn op_name(op: PacketOp) -> &'static str {
    match op {
        PacketOp::Copy => "copy",
        PacketOp::Cce(o) => o.name(),
    }
}

fn packet_json(p: &Packet) -> Value {
    json!({
        "op": op_name(p.op),
        "in": p.in_dt.name(), "accum": p.accum_dt.name(), "out": p.out_dt.name(),
        "elems": p.elems,
        "sources": p.sources.iter().map(|s| json!({
            "addr": s.addr,
            "fma": s.fma.map(|f| json!({"a": f.a.name(), "b": f.b.name(), "c": f.c.name(), "scale": f32::from_bits(f.scale_bits).to_string()})),
        })).collect::<Vec<_>>(),
        "dests": p.dests,
        "clamp": p.clamp.map(|c| json!({"const_dt": c.const_dt.get(), "bits": c.bits})),
        "seed": p.seed,
    })
}

/// The layout to show a descriptor's meta-control word with, by op.
fn meta_layout(op: PacketOp) -> Option<&'static Layout> {
    use cce_format::SdmaCceType::*;
    match op {
        PacketOp::Copy => None,
        PacketOp::Cce(Fma) => Some(&layout::FMA_META_CTRL),
        PacketOp::Cce(Min | Max) => Some(&layout::MIN_MAX_META_CTRL),
        PacketOp::Cce(_) => Some(&layout::ADD_META_CTRL),
    }
}

/// One descriptor as JSON: kind, words, meta_ctrl and fields.
fn desc_json(index: usize, w: [u32; 4], kind: Option<DescKind>, op: Option<PacketOp>) -> Value {
    let kinds = match kind {
        Some(k) => vec![k],
        None if w[0] & packet::META_BIT == 0 => vec![DescKind::M2sData],
        None => packet::tx_kinds(w),
    };
    let layout = kinds.first().and_then(|k| k.layout());
    let meta = (kinds.first() == Some(&DescKind::M2sData)).then_some(w[1]);
    json!({
        "index": index,
        "kind": kinds.first().map_or("unknown", |k| k.name()),
        "other_kinds": kinds.iter().skip(1).map(|k| k.name()).collect::<Vec<_>>(),
        "words": w,
        "meta_ctrl": meta,
        "fields": layout.map_or(Value::Null, |l| render::fields_map(l, &w)),
        "meta_fields": meta.zip(op.and_then(meta_layout)).map_or(Value::Null, |(m, l)| render::fields_map(l, &[m])),
    })
}

/// A queue's descriptors and packets as JSON.
fn queue_json(q: &QueueRings<'_>) -> Value {
    let (tx, rx) = (ring_words(q.tx), ring_words(q.rx));
    let geo = RingGeometry { ring_size: q.ring_size, initial_phase: q.initial_phase };
    let mut packets = Vec::new();
    let mut tx_out = Vec::new();
    let mut rx_out = Vec::new();
    let mut fault = Value::Null;
    let (mut t, mut r) = (0, 0);
    for step in packet::walk(&tx, &rx, geo) {
        match step {
            Ok(Found { parsed, tx_start, rx_start }) => {
                for (i, k) in parsed.tx_kinds.iter().enumerate() {
                    tx_out.push(desc_json(tx_start + i, tx[tx_start + i], Some(*k), Some(parsed.packet.op)));
                }
                for j in 0..parsed.rx_used {
                    rx_out.push(desc_json(rx_start + j, rx[rx_start + j], Some(DescKind::S2mData), None));
                }
                t = tx_start + parsed.tx_kinds.len();
                r = rx_start + parsed.rx_used;
                packets.push(packet_json(&parsed.packet));
            }
            Err(f) => {
                fault = json!({"tx": f.tx_start, "rx": f.rx_start, "error": f.error.to_string()});
                break;
            }
        }
    }
    tx_out.extend((t..tx.len()).map(|i| desc_json(i, tx[i], None, None)));
    rx_out.extend((r..rx.len()).map(|j| desc_json(j, rx[j], Some(DescKind::S2mData), None)));
    json!({
        "queue": q.queue, "ring_size": q.ring_size, "initial_phase": q.initial_phase,
        "doorbell": {"rx": q.rx_doorbell, "tx": q.tx_doorbell},
        "packets": packets.len(), "packet_list": packets,
        "tx": tx_out, "rx": rx_out, "fault": fault,
    })
}

fn line(ring: &str, index: usize, w: [u32; 4], kind: &str, text: &str) -> String {
    format!("  {ring} {index:>6}  {:08x} {:08x} {:08x} {:08x}  {kind:<12} {text}", w[0], w[1], w[2], w[3])
}

fn desc_text(w: [u32; 4], kind: DescKind, op: Option<PacketOp>) -> String {
    let Some(l) = kind.layout() else { return "(bad)".into() };
    let skip: &[&str] = if matches!(kind, DescKind::M2sData | DescKind::S2mData) {
        &["meta-ctrl", "buf-ptr-lo", "buf-ptr-hi", "buf1-ptr-lo", "buf1-ptr-hi", "buf2-ptr-lo", "length"]
    } else {
        &[]
    };
    let mut s = render::fields_text(l, &w, skip);
    match kind {
        DescKind::M2sData => {
            let len = cce_format::descriptor::M2sDataDescriptor::parse_len(w[0]);
            s = format!("{s} len={len} src=0x{:x}", (w[3] as u64) << 32 | w[2] as u64);
            let meta = op
                .and_then(meta_layout)
                .map(|ml| format!(" meta=0x{:08x}({})", w[1], render::fields_text(ml, &[w[1]], &[])));
            s.push_str(&meta.unwrap_or_else(|| format!(" meta=0x{:08x}", w[1])));
        }
        DescKind::S2mData => {
            let len = cce_format::descriptor::M2sDataDescriptor::parse_len(w[0]);
            let out = packet::RX_OUT_DT.get(&w);
            s = format!("{s} len={len} dst=0x{:x}", (w[3] as u64) << 32 | w[2] as u64);
            if out != 0 {
                s.push_str(&format!(" out-dt={}[MODEL]", SdmaDtype::from_nibble(out).name()));
            }
        }
        _ => {}
    }
    s.trim().to_string()
}

pub(crate) fn disasm(a: &DisasmArgs) -> Result<(), CliError> {
    let bytes = std::fs::read(&a.file).map_err(|source| CliError::Io { path: a.file.display().to_string(), source })?;
    let file = RingFile::parse(&bytes).map_err(|e| CliError::ring_file(&a.file, e))?;
    if a.json {
        crate::print_json(&json!({
            "arch": file.arch,
            "queues": file.queues.iter().map(queue_json).collect::<Vec<_>>(),
        }));
        return Ok(());
    }
    crate::output::out!("{}", listing(&file));
    Ok(())
}

/// The objdump-like listing of a ring dump.
pub(crate) fn listing(file: &RingFile<'_>) -> String {
    let mut out = String::new();
    out.push_str(&format!("; cce ring dump v1, arch {}, {} queue(s)\n", file.arch, file.queues.len()));
    for q in &file.queues {
        let (tx, rx) = (ring_words(q.tx), ring_words(q.rx));
        out.push_str(&format!(
            "queue {}: ring {} descriptors, phase {}, tx {} (doorbell {}), rx {} (doorbell {})\n",
            q.queue,
            q.ring_size,
            q.initial_phase,
            tx.len(),
            q.tx_doorbell,
            rx.len(),
            q.rx_doorbell
        ));
        let geo = RingGeometry { ring_size: q.ring_size, initial_phase: q.initial_phase };
        let (mut t, mut r) = (0, 0);
        for (k, step) in packet::walk(&tx, &rx, geo).enumerate() {
            match step {
                Ok(Found { parsed, tx_start, rx_start }) => {
                    let p = &parsed.packet;
                    out.push_str(&format!(
                        " packet {k}: {} in={} accum={} out={} elems={} sources={} dests={}{}{}\n",
                        op_name(p.op),
                        p.in_dt.name(),
                        p.accum_dt.name(),
                        p.out_dt.name(),
                        p.elems,
                        p.sources.len(),
                        p.dests.len(),
                        p.seed.map(|s| format!(" sr-seed={s}")).unwrap_or_default(),
                        p.clamp.map(|c| format!(" clamp=0x{:x}", c.bits)).unwrap_or_default(),
                    ));
                    for (i, kind) in parsed.tx_kinds.iter().enumerate() {
                        let w = tx[tx_start + i];
                        out.push_str(&line("tx", tx_start + i, w, kind.name(), &desc_text(w, *kind, Some(p.op))));
                        out.push('\n');
                    }
                    for j in 0..parsed.rx_used {
                        let w = rx[rx_start + j];
                        out.push_str(&line(
                            "rx",
                            rx_start + j,
                            w,
                            "s2m-data",
                            &desc_text(w, DescKind::S2mData, Some(p.op)),
                        ));
                        out.push('\n');
                    }
                    t = tx_start + parsed.tx_kinds.len();
                    r = rx_start + parsed.rx_used;
                }
                Err(f) => {
                    out.push_str(&format!(" ; fault at tx {} / rx {}: {}\n", f.tx_start, f.rx_start, f.error));
                    break;
                }
            }
        }
        for (i, &w) in tx.iter().enumerate().skip(t) {
            let kinds = packet::tx_kinds(w);
            let names: Vec<_> = kinds.iter().map(|k| k.name()).collect();
            let kind = if names.is_empty() { "(bad)".to_string() } else { names.join("|") };
            let text = kinds.first().map(|k| desc_text(w, *k, None)).unwrap_or_default();
            out.push_str(&line("tx", i, w, &kind, &text));
            out.push('\n');
        }
        for (j, &w) in rx.iter().enumerate().skip(r) {
            out.push_str(&line("rx", j, w, "s2m-data?", &desc_text(w, DescKind::S2mData, None)));
            out.push('\n');
        }
    }
    out
}
