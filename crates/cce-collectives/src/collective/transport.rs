//! The transport seam: how a rank learns that a peer's packets are done and tells its own, and
//! how the first failure stops everyone. Every question a rank asks here is answered at once
//! (nothing blocks): the ranks are tasks ([`super::tasks`]), and a rank that is not ready yet
//! gives its worker back until a peer's post or a message wakes it. A rank's engine reads and writes its peers' buffers
//! at their model addresses; with [`InProcess`] every rank's buffers sit in one shared memory,
//! so only the semaphores travel. A transport between processes would also move the bytes a
//! step reads from, or writes into, another process's memory before the semaphore that
//! publishes them (the engine still executes only ring bytes).

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Why a rank stopped waiting.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Stop {
    /// Another rank failed first (its failure is the one reported).
    Aborted,
    /// The deadline passed.
    TimedOut,
}

/// Waits on `bell` with `lock` until `ready` gives a value, `aborted` says stop, or `deadline`
/// passes; it looks again at least every 20 ms (a wake-up can be missed between a check and the
/// wait).
pub(super) fn wait_until<T, R>(
    lock: &Mutex<T>,
    bell: &Condvar,
    deadline: Instant,
    aborted: &dyn Fn() -> bool,
    mut ready: impl FnMut(&mut T) -> Option<R>,
) -> Result<R, Stop> {
    let mut g = lock.lock().unwrap_or_else(PoisonError::into_inner);
    loop {
        if let Some(r) = ready(&mut g) {
            return Ok(r);
        }
        if aborted() {
            return Err(Stop::Aborted);
        }
        let now = Instant::now();
        if now >= deadline {
            return Err(Stop::TimedOut);
        }
        g = bell
            .wait_timeout(g, (deadline - now).min(Duration::from_millis(20)))
            .map(|r| r.0)
            .unwrap_or_else(|e| e.into_inner().0);
    }
}

/// What every rank shares with its peers.
pub(super) trait Transport: Sync {
    /// Whether `peer`'s completion semaphore has reached `packets` (the packets of its steps
    /// through the one waited for).
    fn reached(&self, peer: usize, packets: i64) -> bool;
    /// Publishes `rank`'s completion semaphore after a step.
    fn post(&self, rank: usize, semaphore: i64);
    /// Records `rank`'s failure at `step` (the first one wins) and wakes every waiter.
    fn fail(&self, rank: usize, step: usize, reason: String);
    /// Whether some rank failed.
    fn aborted(&self) -> bool;
    /// The first failure: (rank, step, reason).
    fn failure(&self) -> Option<(usize, usize, String)>;
    /// Whether `rank` waits for `peer`'s semaphore itself; a transport that moves the data a
    /// step needs (and so knows when it is there) says no for peers in another memory.
    fn waits_for(&self, _rank: usize, _peer: usize) -> bool {
        true
    }
    /// Whether what `rank`'s `step` reads from another memory has all arrived (one shared
    /// memory: nothing to wait for).
    fn arrived(&self, _rank: usize, _step: usize) -> bool {
        true
    }
    /// Before `rank` runs `step` (its semaphores reached, its data [`Self::arrived`]): maps what
    /// the step reads from another memory. One shared memory: nothing to bring.
    fn bring_in(&self, _rank: usize, _step: usize) -> Result<(), String> {
        Ok(())
    }
    /// After `rank` ran `step`, before its semaphore is posted: sends what other memories read
    /// or keep of what the step wrote. One shared memory: nothing to send.
    fn after_step(&self, _rank: usize, _step: usize) -> Result<(), String> {
        Ok(())
    }
    /// Tells whoever reports a stopped job that `rank` waits before `step` for its messages
    /// (`blocked`), or runs the step (not `blocked`).
    fn waiting(&self, _rank: usize, _step: usize, _blocked: bool) {}
}

/// Ranks of one process over one shared memory: semaphores are atomics.
pub(super) struct InProcess {
    sems: Vec<AtomicI64>,
    failed: Mutex<Option<(usize, usize, String)>>,
    abort: AtomicBool,
}

impl InProcess {
    /// Semaphores at 0 for `ranks` ranks.
    pub(super) fn new(ranks: usize) -> Self {
        InProcess {
            sems: (0..ranks).map(|_| AtomicI64::new(0)).collect(),
            failed: Mutex::new(None),
            abort: AtomicBool::new(false),
        }
    }
}

impl Transport for InProcess {
    fn reached(&self, peer: usize, packets: i64) -> bool {
        self.sems[peer].load(Ordering::SeqCst) >= packets
    }

    fn post(&self, rank: usize, semaphore: i64) {
        self.sems[rank].store(semaphore, Ordering::SeqCst);
    }

    fn fail(&self, rank: usize, step: usize, reason: String) {
        let mut f = self.failed.lock().unwrap_or_else(PoisonError::into_inner);
        if f.is_none() {
            *f = Some((rank, step, reason));
        }
        self.abort.store(true, Ordering::SeqCst);
    }

    fn aborted(&self) -> bool {
        self.abort.load(Ordering::SeqCst)
    }

    fn failure(&self) -> Option<(usize, usize, String)> {
        self.failed.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }
}
