//! `cce algo`'s report of a user's schedule, as JSON and text.

use cce_collectives::collective::UserAlgo;
use serde_json::{Value, json};
use std::fmt::Write;

use crate::algo::AlgoReport;

impl AlgoReport {
    fn user(&self) -> Option<&UserAlgo> {
        self.config.user.as_deref()
    }

    /// The object `cce algo --json` prints.
    pub fn to_json(&self) -> Value {
        let s = &self.summary;
        let cfg = &self.config;
        let mut v = json!({});
        crate::render::collective::add_file_keys(&mut v, cfg);
        v["ranks"] = json!(cfg.ranks);
        v["checks"] = json!("passed");
        v["steps_by_type"] = Value::Object(s.steps_by_type.iter().map(|(k, n)| ((*k).to_string(), json!(n))).collect());
        v["transmissions"] = json!(s.transmissions);
        v["fused_reductions"] = json!(s.fused_reductions);
        v["max_reduce_sources"] = json!(s.max_reduce_sources);
        v["fused_beyond_executor"] = json!(s.fused_beyond_executor);
        v["max_thread_blocks"] = json!(s.max_thread_blocks);
        v["max_tb_steps"] = json!(s.max_tb_steps);
        v["longest_chain"] = json!(s.longest_chain);
        v["links"] = s
            .links
            .iter()
            .map(|l| json!({"from": l.from, "to": l.to, "chan": l.chan, "messages": l.messages, "chunks": l.chunks}))
            .collect();
        v["messages_in_place"] = json!(s.messages_in_place);
        v["messages_staged"] = json!(s.messages_staged);
        v["messages_snapshot"] = json!(s.messages_snapshot);
        v["elems"] = json!(cfg.elems);
        v["dtype"] = json!(cfg.dtype.name());
        v["arch"] = json!(cfg.arch);
        v["chunk_elems"] = json!(cfg.elems / self.user().map_or(1, |u| u.schedule.program.nchunks));
        v["reduces"] = json!(self.reduces);
        v["copies"] = json!(self.copies);
        v["packets"] = json!(self.packets);
        v["descriptors"] = json!(self.descriptors);
        v["model_seconds"] = json!(self.model_seconds);
        let z = &self.size;
        v["elems_default"] = json!(z.default);
        v["bytes_per_rank"] = json!(z.bytes);
        v["min_bytes"] = json!(z.min_bytes);
        v["max_bytes"] = if z.max_bytes == 0 { Value::Null } else { json!(z.max_bytes) };
        v["executor_selects"] = json!(z.selected);
        v
    }

    /// The line that says which size was lowered for and whether the executor would select
    /// the file's algorithm at it.
    fn size_line(&self) -> String {
        let z = &self.size;
        let max = if z.max_bytes == 0 { "no limit".to_string() } else { z.max_bytes.to_string() };
        let how = if z.default { "the default" } else { "given" };
        if z.selected {
            format!(
                "size: {} bytes per rank ({how}), within the file's minBytes {} to maxBytes {max}: MSCCL's runtime selects the algorithm at this size",
                z.bytes, z.min_bytes
            )
        } else {
            format!(
                "size: {} bytes per rank ({how}), outside the file's minBytes {} to maxBytes {max}: MSCCL's runtime selects an algorithm by minBytes / maxBytes and would not run this one at this size",
                z.bytes, z.min_bytes
            )
        }
    }

    /// The text `cce algo` prints.
    pub fn to_text(&self) -> String {
        let (s, cfg) = (&self.summary, &self.config);
        let Some(u) = self.user() else { return String::new() };
        let p = &u.schedule.program;
        let mut t = String::new();
        let plural = |n: usize, one: &str, many: &str| if n == 1 { one.to_string() } else { many.to_string() };
        let _ = writeln!(
            t,
            "{} ({}): {} over {} ranks, {}, proto {}, {} {}, {} chunks per loop",
            p.name,
            u.file,
            p.coll.name(),
            p.ranks,
            if p.in_place { "in place" } else { "out of place" },
            p.proto,
            p.nchannels,
            plural(p.nchannels, "channel", "channels"),
            p.nchunks
        );
        let _ = writeln!(
            t,
            "checks passed: every send meets its receive in order, no deadlock, no data race, no undefined read, computes the {}",
            p.coll.name()
        );
        let types: Vec<String> = s.steps_by_type.iter().map(|(k, n)| format!("{k} {n}")).collect();
        let _ = writeln!(
            t,
            "steps: {} ({}); {} transmissions; longest chain {} (the steps per rank)",
            s.steps,
            types.join(", "),
            s.transmissions,
            s.longest_chain
        );
        let beyond = if s.fused_beyond_executor > 0 {
            format!(
                "; {} fuse more than the executor's {} (one CCE packet takes 32 sources)",
                s.fused_beyond_executor,
                cce_msccl::EXECUTOR_FUSION
            )
        } else {
            String::new()
        };
        let _ = writeln!(
            t,
            "fused reductions: {} (largest reduce: {} sources){beyond}",
            s.fused_reductions, s.max_reduce_sources
        );
        let _ = writeln!(
            t,
            "thread blocks: at most {} per rank; the longest has {} steps (the executor needs MSCCL_MAX_NUM_STEPS >= {}; 64 by default)",
            s.max_thread_blocks, s.max_tb_steps, s.max_tb_steps
        );
        let _ = writeln!(t, "links: {} used", s.links.len());
        for l in &s.links {
            let _ =
                writeln!(t, "  {} -> {} chan {}: {} messages, {} chunks", l.from, l.to, l.chan, l.messages, l.chunks);
        }
        let _ = writeln!(
            t,
            "messages: {} read where the sender keeps them, {} staged (rrs results), {} snapshots (rewritten before they are read)",
            s.messages_in_place, s.messages_staged, s.messages_snapshot
        );
        let _ = writeln!(
            t,
            "lowered for {} {} elements per rank (arch {}): {} one-chunk reduces and {} copies, {} packets, {} descriptors; model {:.6} s",
            cfg.elems,
            cfg.dtype.name(),
            cfg.arch,
            self.reduces,
            self.copies,
            self.packets,
            self.descriptors,
            self.model_seconds
        );
        let _ = writeln!(t, "{}", self.size_line());
        t
    }
}
