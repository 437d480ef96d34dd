//! `cce algo FILE.xml`: a user's MSCCL XML schedule checked ([`crate::collective::load_algorithm`])
//! and summarised — ranks, collective, steps per type, links, fused reductions, how its
//! messages are read — then lowered for one size: the packets and descriptors its ranks' rings
//! hold and the time model's estimate; and, for `--lower DIR`, every rank's ring dump.
//!
//! ## Guarantees
//! - Nothing runs and nothing large is allocated before the configuration is checked (the
//!   shape rules, the element count against the file, the address slots).
//! - The JSON keys are the command's contract, in their order.

use std::fmt::Write;
use std::sync::Arc;

use cce_collectives::allreduce::{self, Config, RedOp, UserAlgo};
use cce_format::SdmaDtype;
use cce_format::ringfile::RingFile;
use cce_msccl::Summary;
use serde_json::{Value, json};

use crate::error::ApiError;

/// Elements per rank `cce algo` lowers for when none are given: the first multiple of the
/// file's `nchunksperloop` from 1 Mi.
pub const DEFAULT_ELEMS: u64 = 1 << 20;

/// What `cce algo` reports.
#[derive(Clone, Debug, PartialEq)]
pub struct AlgoReport {
    /// The configuration it was lowered for (add; the given dtype, arch and size).
    pub config: Config,
    /// The schedule's summary.
    pub summary: Summary,
    /// Packets over every rank's rings.
    pub packets: u64,
    /// Descriptors (tx + rx) over every rank's rings.
    pub descriptors: u64,
    /// One-chunk reduces and copies the schedule lowers to.
    pub reduces: u64,
    /// One-chunk copies.
    pub copies: u64,
    /// The time model's estimate, seconds.
    pub model_seconds: f64,
}

/// The configuration `cce algo` lowers `user` for: add, `dtype`, `arch`, `elems` per rank
/// (default: the first multiple of `nchunksperloop` from [`DEFAULT_ELEMS`]).
pub fn config(user: &Arc<UserAlgo>, elems: Option<u64>, dtype: SdmaDtype, arch: u64) -> Result<Config, ApiError> {
    let n = user.schedule.program.nchunks;
    let elems = elems.unwrap_or(DEFAULT_ELEMS.div_ceil(n) * n);
    let mut cfg = Config::from_user(user.clone(), RedOp::Add, dtype, elems);
    cfg.arch = crate::build::fit32("--arch <ARCH>", arch)?;
    cfg.model = allreduce::TimeModel::defaults(cfg.arch);
    if !dtype.is_float() {
        cfg.accum = dtype;
    }
    Ok(cfg)
}

/// Checks and summarises `user`, lowered for `cfg` ([`config`]).
pub fn report(cfg: &Config) -> Result<AlgoReport, ApiError> {
    let user = cfg.user.as_ref().ok_or_else(|| ApiError::Input("cce algo needs a file".into()))?;
    let timeline = allreduce::model(cfg, false)?;
    let works = user.schedule.plan.steps.iter().flatten().flat_map(|s| &s.works);
    let reduces = works.clone().filter(|w| w.op == cce_msccl::Op::Reduce).count() as u64;
    let copies = works.count() as u64 - reduces;
    Ok(AlgoReport {
        config: cfg.clone(),
        summary: user.schedule.summary(),
        packets: timeline.packet_count,
        descriptors: timeline.descriptors,
        reduces,
        copies,
        model_seconds: timeline.seconds,
    })
}

/// Every rank's ring dump (`cce disasm` reads them): rank `q`'s queue 0 as it would hold
/// the schedule lowered for `cfg`.
pub fn lower(cfg: &Config) -> Result<Vec<Vec<u8>>, ApiError> {
    let rings = allreduce::rings(cfg)?;
    Ok(rings.iter().map(|r| RingFile { arch: cfg.arch, queues: vec![r.queue(0)] }.to_bytes()).collect())
}

impl AlgoReport {
    fn user(&self) -> Option<&UserAlgo> {
        self.config.user.as_deref()
    }

    /// The object `cce algo --json` prints.
    pub fn to_json(&self) -> Value {
        let s = &self.summary;
        let cfg = &self.config;
        let mut v = json!({});
        crate::collective::add_file_keys(&mut v, cfg);
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
        v
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
        t
    }
}
