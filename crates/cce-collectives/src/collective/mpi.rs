//! The ranks over MPI processes (feature `mpi`): process k of P holds block k of the
//! partitioned run ([`super::partition`]), its ranks' memory only; every message of the plan to
//! another block is an MPI message to that process, received by one thread per process into
//! the block's mailbox. The engine still executes only ring bytes; MPI only moves memory.
//!
//! A failure anywhere (an injected one, a fault, a timeout waiting for a peer) prints
//! `cce: rank K failed at step S: …` on that process's stderr and aborts the MPI job, so every
//! process ends, non-zero, at once. A killed process ends the job through `mpirun`, which stops
//! the others with SIGTERM: each prints what its ranks were waiting for —
//! `cce: process 2 (ranks 4-5) stopped by the launcher: rank 4 waited at step 3 for rank 3
//! (process 1); rank 5 ran step 3` — so the lost rank is named, and exits 1.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

use super::budget::Checked;
use super::config::{CollectiveError, Config, Outcome};
use super::partition::{
    BlocksJob, BlocksRun, Key, Mailbox, Partitioned, Payload, Wire, block_of, incoming, run_blocks,
};
use super::transport::InProcess;

const TAG_DATA: i32 = 11;

/// What one process of an MPI run did.
#[derive(Clone, Debug)]
pub struct MpiRun {
    /// Processes in the job.
    pub processes: usize,
    /// This process's index.
    pub process: usize,
    /// Its ranks, in order.
    pub ranks: Vec<usize>,
    /// The outcome, with outputs for this process's ranks only (others empty).
    pub outcome: Outcome,
    /// Bytes this process sent to others.
    pub bytes_sent: u64,
    /// The most bytes its memory held at once.
    pub peak_bytes: u64,
}

fn world() -> SimpleCommunicator {
    SimpleCommunicator::world()
}

/// Messages to other processes: `[key kind u8][rank u64][step u64][ranges u64]` then per
/// range `[address u64][bytes u64][bytes…]`, little-endian.
fn encode(key: Key, payload: &[(u64, Vec<u8>)]) -> Vec<u8> {
    let (kind, q, s) = match key {
        Key::Step(q, s) => (0u8, q as u64, s as u64),
        Key::Final => (1, 0, 0),
    };
    let mut out = vec![kind];
    for v in [q, s, payload.len() as u64] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    for (a, b) in payload {
        out.extend_from_slice(&a.to_le_bytes());
        out.extend_from_slice(&(b.len() as u64).to_le_bytes());
        out.extend_from_slice(b);
    }
    out
}

/// The message's key and payload. A message of one range becomes its payload in place (the
/// header shifted out): no second buffer of the message's size exists at any moment, which the
/// per-process memory goal counts.
fn decode(mut b: Vec<u8>) -> Option<(Key, Payload)> {
    let u = |b: &[u8], at: usize| b.get(at..at + 8).map(|x| u64::from_le_bytes(x.try_into().unwrap_or_default()));
    let key = match b.first()? {
        0 => Key::Step(u(&b, 1)? as usize, u(&b, 9)? as usize),
        1 => Key::Final,
        _ => return None,
    };
    let n = u(&b, 17)? as usize;
    let mut at = 25;
    if n == 1 {
        let (a, len) = (u(&b, at)?, u(&b, at + 8)? as usize);
        at += 16;
        if at.checked_add(len)? != b.len() {
            return None;
        }
        b.drain(..at);
        return Some((key, vec![(a, b)]));
    }
    let mut payload = Vec::with_capacity(n.min(1 << 16));
    for _ in 0..n {
        let (a, len) = (u(&b, at)?, u(&b, at + 8)? as usize);
        at += 16;
        payload.push((a, b.get(at..at.checked_add(len)?)?.to_vec()));
        at += len;
    }
    Some((key, payload))
}

struct MpiWire {
    me: usize,
    sent: AtomicU64,
}

impl Wire for MpiWire {
    fn deliver(&self, boxes: &[Mailbox], to: usize, key: Key, payload: Payload) -> Result<(), String> {
        if to == self.me {
            boxes[to].put(key, payload);
            return Ok(());
        }
        let bytes = encode(key, &payload);
        // The payload's copy is in `bytes`: let it go before the send, which waits for the
        // receiver and would otherwise hold two copies of the message all that time.
        drop(payload);
        self.sent.fetch_add(bytes.len() as u64, Ordering::Relaxed);
        world().process_at_rank(to as i32).send_with_tag(&bytes[..], TAG_DATA);
        Ok(())
    }

    fn failed(&self, rank: usize, step: usize, reason: &str) {
        eprintln!("cce: rank {rank} failed at step {step}: {reason} (process {})", self.me);
        world().abort(1)
    }

    fn waiting(&self, rank: usize, step: usize, from: &[usize]) {
        waits().by_rank.insert(rank, (step, from.to_vec()));
    }
}

/// What this process's ranks wait for, for the report of a launcher's stop.
struct Waits {
    /// (ranks, processes, this process) of the run, once it started.
    job: Option<(usize, usize, usize)>,
    /// Whether this process's ranks finished their steps (the job then combines its report).
    finished: bool,
    /// Per rank that reached a step: the step and the ranks whose messages it waits for before
    /// it (none: it runs the step).
    by_rank: BTreeMap<usize, (usize, Vec<usize>)>,
}

/// How long a stopped process lets its running ranks reach a wait before it reports.
const SETTLE: Duration = Duration::from_millis(400);

static WAITS: Mutex<Waits> = Mutex::new(Waits { job: None, finished: false, by_rank: BTreeMap::new() });

fn waits() -> std::sync::MutexGuard<'static, Waits> {
    WAITS.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The line a process prints when the launcher stops it (SIGTERM): its ranks and what each
/// waited for, naming the ranks (and their processes) whose messages never came.
fn stopped_line(w: &Waits) -> String {
    let Some((ranks, processes, me)) = w.job else {
        return format!("cce: process {} stopped by the launcher before its ranks started", world().rank());
    };
    let mine: Vec<usize> = (0..ranks).filter(|&q| block_of(q, ranks, processes) == me).collect();
    let span = match (mine.first(), mine.last()) {
        (Some(a), Some(b)) if a != b => format!("ranks {a}-{b}"),
        (Some(a), _) => format!("rank {a}"),
        _ => "no ranks".into(),
    };
    let states: Vec<String> = w
        .by_rank
        .iter()
        .map(|(q, (step, from))| {
            if from.is_empty() {
                return format!("rank {q} ran step {step}");
            }
            let from: Vec<String> =
                from.iter().map(|&f| format!("rank {f} (process {})", block_of(f, ranks, processes))).collect();
            format!("rank {q} waited at step {step} for {}", from.join(", "))
        })
        .collect();
    if w.finished {
        format!("cce: process {me} ({span}) stopped by the launcher after its ranks' last step, in the job's report")
    } else if states.is_empty() {
        format!("cce: process {me} ({span}) stopped by the launcher before its ranks' first step")
    } else {
        format!("cce: process {me} ({span}) stopped by the launcher: {}", states.join("; "))
    }
}

/// Whether some rank of this process waits for another's messages.
fn someone_waits(w: &Waits) -> bool {
    w.by_rank.values().any(|(_, from)| !from.is_empty())
}

/// Reports the launcher's stop of this process (SIGTERM: `mpirun` lost another process) with
/// [`stopped_line`] and exits 1; the thread that watches for it runs for the process's life.
/// Ranks still running when the stop comes block on the lost messages within a step, so it
/// gives them up to [`SETTLE`] (Open MPI's SIGKILL follows its SIGTERM after 1 s).
fn watch_for_stop() -> Result<(), CollectiveError> {
    use signal_hook::consts::SIGTERM;
    let mut signals = signal_hook::iterator::Signals::new([SIGTERM])
        .map_err(|e| CollectiveError::Config(format!("cannot watch for the launcher's stop: {e}")))?;
    std::thread::spawn(move || {
        if signals.forever().next().is_some() {
            let t = std::time::Instant::now();
            let settled = |w: &Waits| someone_waits(w) || w.job.is_none() || w.finished;
            while !settled(&waits()) && t.elapsed() < SETTLE {
                std::thread::sleep(Duration::from_millis(10));
            }
            eprintln!("{}", stopped_line(&waits()));
            std::process::exit(1);
        }
    });
    Ok(())
}

/// Runs a checked configuration as this process's block of an MPI job of `world().size()`
/// processes (at most one per rank), making its ranks' inputs with `input(rank)`. Call it once
/// per process, between MPI's initialisation and its end.
pub fn run_mpi(checked: &Checked, input: &dyn Fn(usize) -> Vec<u8>) -> Result<MpiRun, CollectiveError> {
    let cfg = checked.config();
    let w = world();
    let (processes, me) = (w.size() as usize, w.rank() as usize);
    if processes > cfg.ranks {
        return Err(CollectiveError::Config(format!(
            "{processes} processes for {} ranks: at most one per rank",
            cfg.ranks
        )));
    }
    let mine: Vec<usize> = (0..cfg.ranks).filter(|&q| block_of(q, cfg.ranks, processes) == me).collect();
    let inputs: Vec<Option<Vec<u8>>> = (0..cfg.ranks).map(|q| mine.contains(&q).then(|| input(q))).collect();
    let bytes = cfg.elems * cfg.dtype.bytes() as u64;
    if let Some((q, i)) =
        inputs.iter().enumerate().find_map(|(q, i)| i.as_ref().filter(|i| i.len() as u64 != bytes).map(|i| (q, i)))
    {
        return Err(CollectiveError::Config(format!("rank {q}'s input has {} bytes, expected {bytes}", i.len())));
    }
    let boxes: Vec<Mailbox> = (0..processes).map(|_| Mailbox::default()).collect();
    let net = InProcess::new(cfg.ranks);
    let wire = MpiWire { me, sent: AtomicU64::new(0) };
    waits().job = Some((cfg.ranks, processes, me));
    let expected = incoming(cfg, processes, me);
    let received = AtomicUsize::new(0);
    let run: Result<BlocksRun, CollectiveError> = std::thread::scope(|scope| {
        // One receiver: every message for this block, filed by key, until all have come.
        scope.spawn(|| {
            let w = world();
            while received.load(Ordering::Relaxed) < expected {
                match w.any_process().immediate_probe_with_tag(TAG_DATA) {
                    Some(status) => {
                        let (bytes, _) = w.process_at_rank(status.source_rank()).receive_vec_with_tag::<u8>(TAG_DATA);
                        match decode(bytes) {
                            Some((key, payload)) => boxes[me].put(key, payload),
                            None => wire.failed(0, 0, "an undecodable message from another process"),
                        }
                        received.fetch_add(1, Ordering::Relaxed);
                    }
                    None => std::thread::sleep(Duration::from_micros(200)),
                }
            }
        });
        let inputs = inputs.into_iter().map(|i| i.map(std::borrow::Cow::Owned)).collect();
        let local = |g| g == me;
        run_blocks(BlocksJob {
            checked,
            groups: processes,
            local: &local,
            inputs,
            hand_back: false,
            wire: &wire,
            boxes: &boxes,
            net: &net,
        })
    });
    waits().finished = true;
    let run = match run {
        Ok(r) => r,
        // A failure the ranks did not report themselves (a refused region, a missing output).
        Err(e) => abort_job(&e.to_string()),
    };
    let Partitioned { peak_bytes, .. } = run.report;
    Ok(MpiRun {
        processes,
        process: me,
        ranks: mine,
        outcome: run.outcome,
        bytes_sent: wire.sent.load(Ordering::Relaxed),
        peak_bytes: peak_bytes.get(me).copied().unwrap_or(0),
    })
}

/// Runs `f` between MPI's initialisation (with thread support for every rank thread) and its
/// end. Refused when MPI cannot give that support or was initialised already.
pub fn with_mpi<T>(f: impl FnOnce() -> T) -> Result<T, CollectiveError> {
    let (universe, threading) = mpi::initialize_with_threading(mpi::Threading::Multiple)
        .ok_or_else(|| CollectiveError::Config("MPI was initialised already".into()))?;
    if threading != mpi::Threading::Multiple {
        return Err(CollectiveError::Config(format!(
            "the MPI library gives thread support {threading:?}; cce's rank threads need Multiple"
        )));
    }
    watch_for_stop()?;
    let out = f();
    drop(universe);
    Ok(out)
}

/// Every process's `values` on process 0 (`None` on the others).
pub fn gather_u64(values: &[u64]) -> Option<Vec<Vec<u64>>> {
    let w = world();
    let n = values.len();
    let root = w.process_at_rank(0);
    if w.rank() == 0 {
        let mut all = vec![0u64; n * w.size() as usize];
        root.gather_into_root(values, &mut all[..]);
        Some(all.chunks(n.max(1)).map(<[u64]>::to_vec).collect())
    } else {
        root.gather_into(values);
        None
    }
}

/// Prints `cce: {message} (process k)` on stderr and ends the whole MPI job with exit code 1:
/// a process that stops on its own would leave the others waiting for its messages.
pub fn abort_job(message: &str) -> ! {
    let w = world();
    eprintln!("cce: {message} (process {})", w.rank());
    w.abort(1)
}

/// The whole job as process 0 reports it.
#[derive(Clone, Debug, PartialEq)]
pub struct MpiReport {
    /// Every rank's output against the exact reduction, as a single process measures it.
    pub metrics: crate::metrics::Metrics,
    /// The slowest process's seconds.
    pub seconds: f64,
    /// Packets, descriptors and bytes read + written, over every rank.
    pub packets: u64,
    /// See `packets`.
    pub descriptors: u64,
    /// See `packets`.
    pub bytes_moved: u64,
    /// Bytes sent between processes.
    pub bytes_over_mpi: u64,
    /// Each process's model memory at its peak.
    pub process_peak_bytes: Vec<u64>,
}

/// Measures this process's outputs (taken out of `run`) against the exact reduction — every
/// rank's input read from `source` block by block (crate::metrics::measure_parts: constant
/// memory) — and combines every process's measures and counts on process 0 (`None` on the
/// others); a collective call of every process. An input that cannot be read ends the job.
/// With [`crate::metrics::Check::None`] nothing is measured (the metrics stay zero).
pub fn report(
    cfg: &Config,
    run: &mut MpiRun,
    source: &dyn crate::metrics::InputSource,
    check: crate::metrics::Check,
) -> Option<MpiReport> {
    use crate::metrics::{Metrics, check_threads, measure_parts};
    let local: Vec<Vec<u8>> = run.ranks.iter().map(|&q| std::mem::take(&mut run.outcome.outputs[q])).collect();
    let outs: Vec<&[u8]> = local.iter().map(Vec::as_slice).collect();
    // The processes share this host's threads.
    let threads = check_threads().div_ceil(run.processes.max(1));
    let parts = match check {
        crate::metrics::Check::Exact => measure_parts(cfg, source, &outs, threads)
            .unwrap_or_else(|e| abort_job(&format!("the error check could not read an input: {e}"))),
        crate::metrics::Check::None => crate::metrics::MetricParts::default(),
    };
    let first_hash = local.first().map_or(0, |b| cce_format::ringfile::fnv1a64(b));
    let (m, o) = (&parts.metrics, &run.outcome);
    let mine = |f: &dyn Fn(&super::RankCounts) -> u64| -> u64 { run.ranks.iter().map(|&q| f(&o.ranks[q])).sum() };
    let stats = [
        run.bytes_sent,
        run.peak_bytes,
        mine(&|r| r.packets),
        mine(&|r| r.descriptors),
        mine(&|r| r.bytes_read + r.bytes_written),
        (o.seconds * 1e9) as u64,
        m.ranks_identical as u64,
        first_hash,
        m.max_abs_err.to_bits(),
        m.max_ulp_err.to_bits(),
        parts.ulp_sum.to_bits(),
        parts.counted,
        m.wrong,
        parts.max_exact.to_bits(),
    ];
    let all = gather_u64(&stats)?;
    let sum = |i: usize| all.iter().map(|s| s[i]).sum::<u64>();
    let fmax = |i: usize| all.iter().map(|s| f64::from_bits(s[i])).fold(0.0, f64::max);
    let (max_abs, max_exact, counted) = (fmax(8), fmax(13), sum(11));
    let ulp_sum: f64 = all.iter().map(|s| f64::from_bits(s[10])).sum();
    // As measure_exact combines them for one process.
    let metrics = Metrics {
        ranks_identical: all.iter().all(|s| s[6] == 1 && s[7] == all[0][7]),
        max_abs_err: max_abs,
        max_rel_err: if max_abs == 0.0 {
            0.0
        } else if max_exact == 0.0 {
            f64::INFINITY
        } else {
            max_abs / max_exact
        },
        max_ulp_err: fmax(9),
        mean_ulp_err: if counted == 0 { 0.0 } else { ulp_sum / counted as f64 },
        wrong: sum(12),
        // The inputs are every rank's in every process: the same elements everywhere.
        nonfinite: m.nonfinite.clone(),
    };
    Some(MpiReport {
        metrics,
        seconds: all.iter().map(|s| s[5]).max().unwrap_or(0) as f64 / 1e9,
        packets: sum(2),
        descriptors: sum(3),
        bytes_moved: sum(4),
        bytes_over_mpi: sum(0),
        process_peak_bytes: all.iter().map(|s| s[1]).collect(),
    })
}
