//! One rank: its engine over its queue's rings, fed step by step. A rank is a task, not a
//! thread ([`super::tasks`] runs it): [`RankRun::ready`] says, without waiting, whether its next
//! step's dependencies are met (their semaphores, through a [`Transport`]), and
//! [`RankRun::step`] runs that step. Between steps a rank holds its engine, its counts and a
//! few hundred bytes, no stack.

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
use super::transport::Transport;

/// A rank's end: the engine's report and each step's measured (start, end), or `Err` when it
/// failed (the failure is in the transport).
pub(super) type RankEnd = Result<(RunReport, Vec<(f64, f64)>), ()>;

/// The queue every rank's program runs on (its number keys stochastic rounding).
pub(super) const RANK_QUEUE: u32 = 0;

/// Stack of a worker that runs ranks' steps.
pub(super) const RANK_STACK: usize = 64 << 20;

/// What every rank of one run shares: the run, every rank's rings and steps, the scratch
/// lifetimes, the users still to come of each scratch region, the transport and the run's
/// start.
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

/// What stops a rank's next step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Blocked {
    /// The semaphore of rank `.0` has not reached its step `.1`.
    Peer(usize, usize),
    /// Data from another memory has not arrived.
    Data,
}

/// One rank between its steps: its engine, its counts so far and its next step.
pub(super) struct RankRun<'m> {
    q: usize,
    engine: Engine<SharedMemory<'m>>,
    scratch: SharedMemory<'m>,
    report: RunReport,
    walls: Vec<(f64, f64)>,
    fed: (u64, u64),
    next: usize,
}

impl<'m> RankRun<'m> {
    /// Rank `q` with its engine over its rings in `mem`, before its first step.
    pub(super) fn start(
        shared: &RankShared<'_, impl Transport>,
        q: usize,
        mem: SharedMemory<'m>,
    ) -> Result<Self, String> {
        let prog = &shared.programs[q];
        let ring = prog.rings.ring_size;
        let (tx_ring, rx_ring) = Layout::rings(q, ring);
        let scratch = mem.clone();
        let mut engine = Engine::new(mem, EngineConfig { arch: shared.cfg.arch, ..EngineConfig::default() });
        engine
            .add_queue(
                RANK_QUEUE,
                QueueConfig { tx_ring, rx_ring, ring_size: ring, initial_phase: prog.rings.initial_phase },
            )
            .map_err(|e| e.to_string())?;
        let steps = shared.steps[q].len();
        Ok(RankRun {
            q,
            engine,
            scratch,
            report: RunReport::default(),
            walls: Vec::with_capacity(steps),
            fed: (0, 0),
            next: 0,
        })
    }

    /// The next step to run (the rank's step count once it is done).
    pub(super) fn next(&self) -> usize {
        self.next
    }

    /// Whether every step ran.
    pub(super) fn done(&self, shared: &RankShared<'_, impl Transport>) -> bool {
        self.next >= shared.steps[self.q].len()
    }

    /// What stops the next step now, if anything: a dependency's semaphore that has not
    /// reached the packets of that peer's step, or data from another memory still to come.
    pub(super) fn ready(&self, shared: &RankShared<'_, impl Transport>) -> Result<(), Blocked> {
        let (q, s) = (self.q, self.next);
        for &(p, t) in &shared.steps[q][s].deps {
            if shared.net.waits_for(q, p) && !shared.net.reached(p, shared.programs[p].marks[t].2 as i64) {
                return Err(Blocked::Peer(p, t));
            }
        }
        if !shared.net.arrived(q, s) {
            return Err(Blocked::Data);
        }
        Ok(())
    }

    /// Runs the next step (its dependencies met: [`Self::ready`]). Before it the scratch
    /// buffers it writes are mapped and what it reads from another memory brought in; after it,
    /// the scratch buffers it was the last user of are unmapped (`shared.users_left` counts
    /// each region's users still to come), then its semaphore is posted. A failure (a fault,
    /// `--fail-rank`) is returned with its reason; the caller records it.
    pub(super) fn step(&mut self, shared: &RankShared<'_, impl Transport>) -> Result<(), String> {
        let RankShared { cfg, programs, life, users_left, net, t0, .. } = *shared;
        let (q, s) = (self.q, self.next);
        let prog = &programs[q];
        if cfg.fail == Some((q, s)) {
            return Err("injected failure (the rank stopped)".into());
        }
        net.bring_in(q, s)?;
        let started = t0.elapsed().as_secs_f64();
        for &(base, bytes) in &life.allocs[q][s] {
            // Every byte is written by the step before any step reads it (schedule tests).
            self.scratch.add_scratch_region(base, bytes).map_err(|e| e.to_string())?;
        }
        let ring = prog.rings.ring_size;
        let (tx_ring, rx_ring) = Layout::rings(q, ring);
        let (tx_end, rx_end, _) = prog.marks[s];
        let mut feeds = [Feed {
            queue: RANK_QUEUE,
            tx_ring,
            rx_ring,
            ring_size: ring,
            tx: &prog.rings.tx,
            rx: &prog.rings.rx,
            fed: self.fed,
            end: (tx_end, rx_end),
        }];
        feed_all(&mut self.engine, &mut feeds, &mut self.report).map_err(|e| e.to_string())?;
        self.fed = feeds[0].fed;
        let st = self.engine.status(RANK_QUEUE).ok_or("queue vanished")?;
        if let Some(f) = st.fault {
            return Err(f.to_string());
        }
        if st.packets != prog.marks[s].2 {
            return Err(format!("{} packets done, {} expected", st.packets, prog.marks[s].2));
        }
        net.after_step(q, s)?;
        for base in &life.releases[q][s] {
            if users_left.get(base).is_some_and(|n| n.fetch_sub(1, Ordering::AcqRel) == 1) {
                self.scratch.release_region(*base);
            }
        }
        self.walls.push((started, t0.elapsed().as_secs_f64()));
        self.next += 1;
        net.post(q, st.semaphore as i64);
        Ok(())
    }

    /// The rank's end: its engine's report and each step's (start, end).
    pub(super) fn end(self) -> (RunReport, Vec<(f64, f64)>) {
        (self.report, self.walls)
    }
}
