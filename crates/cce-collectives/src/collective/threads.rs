//! Rank threads kept from one run to the next.
//!
//! A run's rank threads wait on one another (a step starts when its peers' semaphores say so),
//! so every rank needs a thread of its own for the whole run: a run borrows a whole pool of at
//! least as many threads as it has ranks, and a run that starts while another holds a pool
//! gets a pool of its own. Pools are kept after use (at most [`KEPT`]), so a process that runs
//! many collectives — a framework's backend, a Python loop — starts no thread after its first:
//! making and joining a run's threads cost a fifth of a small all-reduce's overhead here
//! (docs/MODEL.md C20). A process forked from one that kept pools (Python's `multiprocessing`)
//! has none of their threads: a pool is only used by the process that built it, and the
//! child's copies are forgotten, never waited for.

use std::sync::{Mutex, PoisonError};

use rayon::{ThreadPool, ThreadPoolBuildError, ThreadPoolBuilder};

use super::rank::RANK_STACK;

/// Most pools kept between runs (runs at once beyond it build pools that are dropped after).
pub const KEPT: usize = 4;

/// Kept pools, each with the id of the process that built it.
static POOLS: Mutex<Vec<(u32, ThreadPool)>> = Mutex::new(Vec::new());

/// Runs `f` with a pool of at least `threads` threads that no other run uses meanwhile: the
/// smallest kept one that is large enough, or a new one (threads named `rankN`, each with
/// a rank's stack). The pool is kept for the next run afterwards.
pub fn with_pool<R>(threads: usize, f: impl FnOnce(&ThreadPool) -> R) -> Result<R, ThreadPoolBuildError> {
    let threads = threads.max(1);
    let me = std::process::id();
    let kept = {
        let mut pools = POOLS.lock().unwrap_or_else(PoisonError::into_inner);
        // A forked child's copies of its parent's pools have no threads behind them.
        let (mine, stale): (Vec<_>, Vec<_>) = std::mem::take(&mut *pools).into_iter().partition(|(pid, _)| *pid == me);
        *pools = mine;
        std::mem::forget(stale);
        let best = pools
            .iter()
            .enumerate()
            .filter(|(_, (_, p))| p.current_num_threads() >= threads)
            .min_by_key(|(_, (_, p))| p.current_num_threads())
            .map(|(i, _)| i);
        best.map(|i| pools.swap_remove(i).1)
    };
    let pool = match kept {
        Some(p) => p,
        None => ThreadPoolBuilder::new()
            .num_threads(threads)
            .stack_size(RANK_STACK)
            .thread_name(|i| format!("rank{i}"))
            .build()?,
    };
    let r = f(&pool);
    let mut pools = POOLS.lock().unwrap_or_else(PoisonError::into_inner);
    if pools.len() < KEPT {
        pools.push((me, pool));
    }
    Ok(r)
}
