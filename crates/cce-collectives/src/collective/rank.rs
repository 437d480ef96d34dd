//! One rank's thread: its engine over its queue's rings, fed step by step, each step after the
//! dependencies' semaphores say their packets are done (through a [`Transport`]).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use cce_engine::feed::{Feed, feed_all};
use cce_engine::memory::SharedMemory;
use cce_engine::{Engine, EngineConfig, QueueConfig, RunReport};

use super::buffers::Layout;
use super::config::Config;
use super::lifetimes::Lifetimes;
use super::program::RankProgram;
use super::schedule::Step;
use super::transport::{Stop, Transport};

/// A rank's end: the engine's report and each step's measured (start, end), or `Err` when it
/// failed (the failure is in the transport).
pub(super) type RankEnd = Result<(RunReport, Vec<(f64, f64)>), ()>;

/// The queue every rank's program runs on (its number keys stochastic rounding).
pub(super) const RANK_QUEUE: u32 = 0;

/// Stack of a rank thread.
pub(super) const RANK_STACK: usize = 64 << 20;

/// What every rank thread of one run shares: the run, every rank's rings and steps, the
/// scratch lifetimes, the users still to come of each scratch region, the transport and the
/// run's start.
pub(super) struct RankShared<'a, T> {
    /// The run.
    pub(super) cfg: &'a Config,
    /// Every rank's rings (a rank waits on its peers' marks).
    pub(super) programs: &'a [RankProgram],
    /// Every rank's steps.
    pub(super) steps: &'a [Vec<Step>],
    /// The scratch regions' lifetimes.
    pub(super) life: &'a Lifetimes,
    /// Each scratch region's users still to come.
    pub(super) users_left: &'a BTreeMap<u64, AtomicUsize>,
    /// The semaphores, messages and first failure.
    pub(super) net: &'a T,
    /// The run's start, which the steps' times count from.
    pub(super) t0: Instant,
}

/// Runs rank `q`: its engine over its rings in `mem`, step by step; a step starts when every
/// dependency's semaphore (through `shared.net`) has reached the packets of that peer's step.
/// Before a step the scratch buffers it writes are mapped; after it, those it was the last user
/// of are unmapped (`shared.users_left` counts each region's users still to come), before its
/// semaphore is posted. The first failure anywhere (a fault, a timeout, `--fail-rank`) is
/// recorded in the transport and stops the rest. Returns the engine's report and each step's
/// measured (start, end), in seconds since `shared.t0` (a step starts once its dependencies are
/// met).
pub(super) fn rank_main(shared: &RankShared<'_, impl Transport>, q: usize, mem: SharedMemory) -> RankEnd {
    let RankShared { cfg, programs: all, steps, life, users_left, net, t0 } = *shared;
    let (prog, steps) = (&all[q], &steps[q]);
    let scratch = mem.clone();
    let fail = |step: usize, reason: String| {
        net.fail(q, step, reason);
        Err(())
    };
    let ring = prog.rings.ring_size;
    let (tx_ring, rx_ring) = Layout::rings(q, ring);
    let mut engine = Engine::new(mem, EngineConfig { arch: cfg.arch, ..EngineConfig::default() });
    if let Err(e) = engine.add_queue(
        RANK_QUEUE,
        QueueConfig { tx_ring, rx_ring, ring_size: ring, initial_phase: prog.rings.initial_phase },
    ) {
        return fail(0, e.to_string());
    }
    let mut report = RunReport::default();
    let mut walls = Vec::with_capacity(steps.len());
    let mut fed = (0u64, 0u64);
    for (s, step) in steps.iter().enumerate() {
        if cfg.fail == Some((q, s)) {
            return fail(s, "injected failure (the rank stopped)".into());
        }
        // Wait for every dependency's semaphore: the packets of that rank through that step.
        let deadline = Instant::now() + cfg.timeout;
        for &(p, t) in step.deps.iter().filter(|&&(p, _)| net.waits_for(q, p)) {
            match net.wait(p, all[p].marks[t].2 as i64, deadline) {
                Ok(()) => {}
                Err(Stop::Aborted) => return Err(()),
                Err(Stop::TimedOut) => return fail(s, format!("timed out waiting for rank {p} step {t}")),
            }
        }
        match net.before_step(q, s, deadline) {
            Ok(()) => {}
            Err(Stop::Aborted) => return Err(()),
            Err(Stop::TimedOut) => return fail(s, "timed out waiting for data from another memory".into()),
        }
        if net.aborted() {
            return Err(());
        }
        let started = t0.elapsed().as_secs_f64();
        for &(base, bytes) in &life.allocs[q][s] {
            // Every byte is written by the step before any step reads it (schedule tests).
            if let Err(e) = scratch.add_scratch_region(base, bytes) {
                return fail(s, e.to_string());
            }
        }
        let (tx_end, rx_end, _) = prog.marks[s];
        let mut feeds = [Feed {
            queue: RANK_QUEUE,
            tx_ring,
            rx_ring,
            ring_size: ring,
            tx: &prog.rings.tx,
            rx: &prog.rings.rx,
            fed,
            end: (tx_end, rx_end),
        }];
        if let Err(e) = feed_all(&mut engine, &mut feeds, &mut report) {
            return fail(s, e.to_string());
        }
        fed = feeds[0].fed;
        let Some(st) = engine.status(RANK_QUEUE) else { return fail(s, "queue vanished".into()) };
        if let Some(f) = st.fault {
            return fail(s, f.to_string());
        }
        if st.packets != prog.marks[s].2 {
            return fail(s, format!("{} packets done, {} expected", st.packets, prog.marks[s].2));
        }
        if let Err(e) = net.after_step(q, s) {
            return fail(s, e);
        }
        for base in &life.releases[q][s] {
            if users_left.get(base).is_some_and(|n| n.fetch_sub(1, Ordering::AcqRel) == 1) {
                scratch.release_region(*base);
            }
        }
        walls.push((started, t0.elapsed().as_secs_f64()));
        net.post(q, st.semaphore as i64);
    }
    Ok((report, walls))
}
