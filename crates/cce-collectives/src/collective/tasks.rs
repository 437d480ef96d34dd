//! Ranks as tasks: a fixed pool of workers (one per core) runs every rank's steps as their
//! dependencies are met, so a run of 4096 ranks needs no thread per rank — a rank between
//! steps is its engine, its counts and its place in a queue.
//!
//! ## How a rank is woken (MODEL, docs/MODEL.md C25)
//! Each rank has a state: idle, queued, running, or running-and-woken. A worker takes a queued
//! rank and runs its steps for as long as the next one is ready ([`RankRun::ready`], which never
//! waits). When a rank posts its semaphore after a step, every rank whose steps wait for it is
//! woken: an idle one is queued, a running one is marked to look again before it goes idle —
//! so a post that lands while a rank is deciding it is not ready is never lost. Data from
//! another process (MPI) arrives on its own thread: a rank that waits for data is looked at
//! again every [`DATA_POLL`]. A run in which nothing is running and nothing has progressed for
//! the configuration's timeout fails, naming what the lowest unfinished rank waits for.
//!
//! ## Guarantees
//! - A rank's steps run in order, one at a time, on any worker; its engine is only touched by
//!   the worker running it.
//! - The first failure (a fault, `--fail-rank`, a timeout, a panic in a step) is recorded in the
//!   transport and every worker stops taking steps.

use std::collections::{BTreeSet, VecDeque};
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use cce_engine::memory::SharedMemory;

use super::rank::{Blocked, RankEnd, RankRun, RankShared};
use super::threads;
use super::transport::Transport;

/// How often a rank waiting for data from another process is looked at again.
pub(super) const DATA_POLL: Duration = Duration::from_millis(2);

const IDLE: u8 = 0;
const QUEUED: u8 = 1;
const RUNNING: u8 = 2;
const WOKEN: u8 = 3;

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The run's shared state: each local rank's task, state and end, who waits for whom, the
/// queue of ranks to look at, and the progress clock.
struct Pool<'s, 'a, 'm, T> {
    shared: &'s RankShared<'a, T>,
    /// The local ranks (global numbers), in order.
    mine: &'s [usize],
    runs: Vec<Mutex<Option<RankRun<'m>>>>,
    states: Vec<AtomicU8>,
    ends: Vec<Mutex<Option<RankEnd>>>,
    /// Per global rank: the local ranks some step of which waits for it.
    dependents: Vec<Vec<usize>>,
    queue: Mutex<VecDeque<usize>>,
    bell: Condvar,
    waiting_for_data: Mutex<BTreeSet<usize>>,
    finished: AtomicUsize,
    running: AtomicUsize,
    progress: Mutex<Instant>,
}

impl<T: Transport> Pool<'_, '_, '_, T> {
    /// Wakes local rank `i`: queued when idle, told to look again when running.
    fn wake(&self, i: usize) {
        let s = &self.states[i];
        loop {
            match s.load(Ordering::Acquire) {
                IDLE => {
                    if s.compare_exchange(IDLE, QUEUED, Ordering::AcqRel, Ordering::Acquire).is_ok() {
                        lock(&self.queue).push_back(i);
                        self.bell.notify_one();
                        return;
                    }
                }
                RUNNING => {
                    if s.compare_exchange(RUNNING, WOKEN, Ordering::AcqRel, Ordering::Acquire).is_ok() {
                        return;
                    }
                }
                _ => return,
            }
        }
    }

    fn stopped(&self) -> bool {
        self.shared.net.aborted() || self.finished.load(Ordering::Acquire) == self.mine.len()
    }

    /// One worker: takes queued ranks until every local rank is done or a rank failed.
    fn work(&self) {
        loop {
            if self.stopped() {
                self.bell.notify_all();
                return;
            }
            let next = {
                let mut q = lock(&self.queue);
                match q.pop_front() {
                    Some(i) => Some(i),
                    None => {
                        let (mut q, _) = self.bell.wait_timeout(q, DATA_POLL).unwrap_or_else(PoisonError::into_inner);
                        q.pop_front()
                    }
                }
            };
            match next {
                Some(i) => self.drive(i),
                None => self.idle(),
            }
        }
    }

    /// Nothing queued: looks again at the ranks waiting for data, and fails the run when nothing
    /// has run or progressed for the timeout.
    fn idle(&self) {
        let waiting: Vec<usize> = std::mem::take(&mut *lock(&self.waiting_for_data)).into_iter().collect();
        for i in waiting {
            self.wake(i);
        }
        let quiet = lock(&self.progress).elapsed();
        if quiet < self.shared.cfg.timeout || self.running.load(Ordering::Acquire) > 0 || self.stopped() {
            return;
        }
        // The lowest unfinished rank, and what it waits for.
        for (i, &q) in self.mine.iter().enumerate() {
            let Ok(slot) = self.runs[i].try_lock() else { continue };
            let Some(run) = slot.as_ref() else { continue };
            let reason = match run.ready(self.shared) {
                Err(Blocked::Peer(p, t)) => format!("timed out waiting for rank {p} step {t}"),
                Err(Blocked::Data) => "timed out waiting for data from another memory".into(),
                Ok(()) => continue,
            };
            self.shared.net.fail(q, run.next(), reason);
            return;
        }
    }

    /// Runs local rank `i`'s steps while they are ready, then lets it go idle (or looks again
    /// when it was woken meanwhile).
    fn drive(&self, i: usize) {
        self.states[i].store(RUNNING, Ordering::Release);
        loop {
            self.advance(i);
            if self.states[i].compare_exchange(RUNNING, IDLE, Ordering::AcqRel, Ordering::Acquire).is_ok() {
                return;
            }
            self.states[i].store(RUNNING, Ordering::Release);
        }
    }

    /// Local rank `i`'s steps, for as long as the next one is ready.
    fn advance(&self, i: usize) {
        let (shared, q) = (self.shared, self.mine[i]);
        let mut slot = lock(&self.runs[i]);
        let Some(run) = slot.as_mut() else { return };
        loop {
            if run.done(shared) {
                let end = slot.take().map(RankRun::end);
                *lock(&self.ends[i]) = end.map(Ok);
                self.finished.fetch_add(1, Ordering::AcqRel);
                self.bell.notify_all();
                return;
            }
            if shared.net.aborted() {
                return;
            }
            let s = run.next();
            match run.ready(shared) {
                Err(Blocked::Data) => {
                    shared.net.waiting(q, s, true);
                    lock(&self.waiting_for_data).insert(i);
                    return;
                }
                Err(Blocked::Peer(..)) => return,
                Ok(()) => {}
            }
            shared.net.waiting(q, s, false);
            self.running.fetch_add(1, Ordering::AcqRel);
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run.step(shared)));
            self.running.fetch_sub(1, Ordering::AcqRel);
            match r {
                Ok(Ok(())) => {
                    *lock(&self.progress) = Instant::now();
                    for &d in &self.dependents[q] {
                        self.wake(d);
                    }
                }
                Ok(Err(reason)) => return shared.net.fail(q, s, reason),
                Err(_) => return shared.net.fail(q, s, "the step panicked".into()),
            }
        }
    }
}

/// Runs the ranks `mine` (global numbers, each rank's memory from `mem_of`) on a pool of
/// workers, one per core (at most one per rank). Returns their ends in the order of `mine`;
/// a rank that failed or never finished ends as `Err` (the failure is in the transport).
pub(super) fn run_ranks<'m, T: Transport>(
    shared: &RankShared<'_, T>,
    mine: &[usize],
    mem_of: impl Fn(usize) -> SharedMemory<'m>,
) -> Result<Vec<RankEnd>, String> {
    let ranks = shared.steps.len();
    let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); ranks];
    for (i, &q) in mine.iter().enumerate() {
        let peers: BTreeSet<usize> = shared.steps[q].iter().flat_map(|s| s.deps.iter().map(|d| d.0)).collect();
        for p in peers.into_iter().filter(|&p| p != q) {
            dependents[p].push(i);
        }
    }
    let mut runs = Vec::with_capacity(mine.len());
    for &q in mine {
        match RankRun::start(shared, q, mem_of(q)) {
            Ok(r) => runs.push(Mutex::new(Some(r))),
            Err(e) => {
                shared.net.fail(q, 0, e);
                runs.push(Mutex::new(None));
            }
        }
    }
    let pool = Pool {
        shared,
        mine,
        runs,
        states: mine.iter().map(|_| AtomicU8::new(QUEUED)).collect(),
        ends: mine.iter().map(|_| Mutex::new(None)).collect(),
        dependents,
        queue: Mutex::new((0..mine.len()).collect()),
        bell: Condvar::new(),
        waiting_for_data: Mutex::new(BTreeSet::new()),
        finished: AtomicUsize::new(0),
        running: AtomicUsize::new(0),
        progress: Mutex::new(Instant::now()),
    };
    let workers = std::thread::available_parallelism().map_or(1, usize::from).min(mine.len()).max(1);
    threads::with_pool(workers, |tp| {
        tp.scope(|s| {
            for _ in 0..workers {
                let pool = &pool;
                s.spawn(move |_| pool.work());
            }
        });
    })
    .map_err(|e| format!("no threads for the ranks: {e}"))?;
    Ok(pool
        .ends
        .into_iter()
        .map(|e| e.into_inner().unwrap_or_else(PoisonError::into_inner).unwrap_or(Err(())))
        .collect())
}
