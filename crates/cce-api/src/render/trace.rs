//! A run's Chrome trace-event JSON (`cce allreduce --trace FILE`; Perfetto and
//! chrome://tracing open it), from the model's [`Timeline`] and the run's measured steps.
//!
//! ## Guarantees
//! - One process per rank (`pid` = rank, named `rank R`), one track per DMA engine (`tid` =
//!   engine) and one more, `measured steps`, with the step slices measured on this machine.
//! - One complete slice (`ph: "X"`, `cat: "packet"`) per packet of every rank's rings, at its
//!   model start and duration in microseconds; `args` hold its step, work item, descriptors and
//!   bytes, and the measured start and length of the step that ran it. For a user's MSCCL
//!   schedule a slice is named by its step's type (`rrs`, `re`, …) and `args.msccl` names the
//!   file's step (`rank 1 tb 0 step 3 (rrs)`).
//! - A flow (`ph: "s"` → `ph: "f"`, `cat: "flow"`) from the last packet of each work item that
//!   writes a buffer to the first packet of every work item that reads it; the model orders a
//!   reader after its writer, so every flow starts before it ends.
//! - A process `links` (`pid` = ranks) with one counter per pair of ranks that exchange bytes:
//!   the bytes in flight between them (a work item's bytes from its first packet's start to its
//!   last packet's end).
//! - Above [`MAX_TRACE_PACKETS`](cce_collectives::collective::MAX_TRACE_PACKETS) packets (a
//!   flat ring of hundreds of ranks) the timeline holds steps only: each rank gets one track,
//!   `model steps`, with a slice per step at its model start (its hop latency and body in
//!   `args`), and no packet, flow or link events; `otherData.aggregated` says `"steps"`.

use std::collections::BTreeMap;

use cce_collectives::collective::{Config, Timeline};
use serde_json::{Value, json};

fn us(seconds: f64) -> f64 {
    seconds * 1e6
}

/// The trace of a run of `cfg`: its model `timeline` (with packets and work items) and each
/// rank's measured `(start, end)` per step (`walls`, seconds; empty where not measured).
pub fn chrome_trace(cfg: &Config, timeline: &Timeline, walls: &[Vec<(f64, f64)>]) -> Value {
    let engines = cfg.model.engines;
    let mut events = Vec::new();
    for q in 0..cfg.ranks {
        events.push(json!({"ph": "M", "name": "process_name", "pid": q, "args": {"name": format!("rank {q}")}}));
        for e in 0..engines {
            events.push(
                json!({"ph": "M", "name": "thread_name", "pid": q, "tid": e, "args": {"name": format!("DMA engine {e}")}}),
            );
        }
        events.push(
            json!({"ph": "M", "name": "thread_name", "pid": q, "tid": engines, "args": {"name": "measured steps"}}),
        );
        for (s, &(a, b)) in walls.get(q).into_iter().flatten().enumerate() {
            events.push(json!({"ph": "X", "cat": "measured", "name": format!("step {s}"), "pid": q, "tid": engines,
                "ts": us(a), "dur": us(b - a)}));
        }
    }
    let aggregated = timeline.packets.is_empty() && timeline.packet_count > 0;
    if aggregated {
        step_slices(cfg, timeline, &mut events);
    }
    let mut seq = vec![0u64; cfg.ranks];
    for p in &timeline.packets {
        let wall = walls.get(p.rank).and_then(|w| w.get(p.step)).copied();
        let k = seq[p.rank];
        seq[p.rank] += 1;
        let mut e = json!({
            "ph": "X", "cat": "packet", "name": if p.cce { "reduce" } else { "copy" },
            "pid": p.rank, "tid": p.engine, "ts": us(p.start), "dur": us(p.seconds),
            "args": {"packet": k, "step": p.step, "work": p.work, "descriptors": p.descriptors,
                "bytes_read": p.bytes_read, "bytes_written": p.bytes_written,
                "measured_step_start_us": wall.map(|w| us(w.0)), "measured_step_us": wall.map(|w| us(w.1 - w.0))},
        });
        // A user's schedule: the file's step the packet comes from, by its type and place.
        if let Some(u) = &cfg.user {
            let s = &u.schedule;
            let origin = s.plan.steps.get(p.rank).and_then(|st| st.get(p.step)).and_then(|st| st.works.get(p.work));
            if let Some(tx) = origin.and_then(|w| s.program.txs.get(w.origin).map(|t| (w.origin, t))) {
                e["name"] = json!(tx.1.kind.name());
                e["args"]["msccl"] = json!(s.program.describe(tx.0));
            }
        }
        events.push(e);
    }
    // Flows: the writer of each buffer to each of its readers.
    let mut writer = BTreeMap::new();
    for (i, w) in timeline.works.iter().enumerate() {
        for &a in &w.writes {
            writer.insert(a, i);
        }
    }
    let mut id = 0u64;
    for w in &timeline.works {
        for a in &w.reads {
            let Some(&from) = writer.get(a) else { continue };
            let (src, dst) = (&timeline.packets[timeline.works[from].packets.1], &timeline.packets[w.packets.0]);
            events
                .push(json!({"ph": "s", "cat": "flow", "name": "buffer", "id": id, "pid": src.rank, "tid": src.engine,
                "ts": us(src.start)}));
            events.push(json!({"ph": "f", "bp": "e", "cat": "flow", "name": "buffer", "id": id, "pid": dst.rank,
                "tid": dst.engine, "ts": us(dst.start)}));
            id += 1;
        }
    }
    // Bytes in flight per pair of ranks.
    let links_pid = cfg.ranks;
    events.push(json!({"ph": "M", "name": "process_name", "pid": links_pid, "args": {"name": "links"}}));
    let mut changes: BTreeMap<(usize, usize), Vec<(f64, i64)>> = BTreeMap::new();
    for w in &timeline.works {
        let (first, last) = (&timeline.packets[w.packets.0], &timeline.packets[w.packets.1]);
        for &(from, to, bytes) in &w.moves {
            let c = changes.entry((from, to)).or_default();
            c.push((first.start, bytes as i64));
            c.push((last.start + last.seconds, -(bytes as i64)));
        }
    }
    for ((from, to), mut c) in changes {
        // Ends before starts at the same instant, so the counter never overstates.
        c.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
        let mut level = 0i64;
        for (t, d) in c {
            level += d;
            events.push(json!({"ph": "C", "name": format!("rank {from} -> rank {to} bytes in flight"),
                "pid": links_pid, "ts": us(t), "args": {"bytes": level}}));
        }
    }
    let mut other = json!({"algo": cfg.algo.name(), "ranks": cfg.ranks, "elems": cfg.elems, "dtype": cfg.dtype.name(),
        "instance": cfg.model.instance.name(), "model_seconds": timeline.seconds});
    crate::render::collective::add_file_keys(&mut other, cfg);
    if aggregated {
        other["aggregated"] = json!("steps");
        other["packets"] = json!(timeline.packet_count);
    }
    json!({
        "traceEvents": events,
        "displayTimeUnit": "ns",
        "otherData": other,
    })
}

/// Each rank's steps on a track of their own, `model steps` (`tid` = engines + 1): a slice per
/// step at its model start, for a timeline without its packets.
fn step_slices(cfg: &Config, timeline: &Timeline, events: &mut Vec<Value>) {
    let tid = cfg.model.engines + 1;
    for (q, spans) in timeline.steps.iter().enumerate() {
        events.push(json!({"ph": "M", "name": "thread_name", "pid": q, "tid": tid, "args": {"name": "model steps"}}));
        for (s, span) in spans.iter().enumerate() {
            events.push(json!({"ph": "X", "cat": "step", "name": format!("step {s}"), "pid": q, "tid": tid,
                "ts": us(span.start), "dur": us(span.latency + span.body),
                "args": {"step": s, "latency_us": us(span.latency), "body_us": us(span.body)}}));
        }
    }
}
