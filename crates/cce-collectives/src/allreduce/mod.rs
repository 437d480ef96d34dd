//! All-reduce (and reduce-scatter / all-gather on their own) over R ranks, lowered to CCE
//! packets by `cce-host` and executed by one `cce-engine` per rank, concurrently, synchronised
//! only through the queues' completion semaphores.
//!
//! ## Buffers (MODEL)
//! Rank `r` holds, each chunk its own region in one [`SharedMemory`]: `IN(r)` the input,
//! `P(r, c)` reduce-scatter partials, `W(r, c)` the output (the final chunk and everything the
//! all-gather brings), `RECV(r, c)` the partials a ring-2R2W neighbour writes. Each region is
//! written once, so no step overwrites a buffer another rank may still read. Elements are split
//! into R chunks, chunk `c` = elements `[c·N/R, (c+1)·N/R)`.
//!
//! ## Reduction order (what an independent reference must follow)
//! Every reduce packet accumulates its sources in the order listed, in the accumulate dtype, and
//! rounds once to the buffer dtype (so partials are rounded at every step). Indices mod R.
//! - `ring` (RING_2R1W): step s of R−1, rank r reduces chunk c = r−s−1:
//!   `[s = 0 ? IN(r−1)[c] : P(r−1, c), IN(r)[c]] → P(r, c)` (the last step writes `W(r, c)`).
//!   Chunk c = ((IN_c + IN_{c+1}) + IN_{c+2}) + … + IN_{c−1}, rounded after each `+`. Then R−1
//!   all-gather copy steps: rank r copies `W(r−1, r−s) → W(r, r−s)`.
//! - `ring-2r2w` (RING_2R2W, arch ≥ 3): as `ring`, but each reduce also writes the next rank's
//!   `RECV(r+1, c)` (replication), which that rank reads locally; the last step writes
//!   `W(r, c)` and `W(r+1, c)`, so R−2 all-gather steps remain. Same order as `ring`.
//! - `kangaring` (KANGARING_NR1W): 3-source steps, rank r at step s reduces chunk c = r−2−2s:
//!   `[s = 0 ? IN(r−2)[c] : P(r−2, c), IN(r−1)[c], IN(r)[c]]`; with R even the last step is
//!   `[P(r−1, c), IN(r)[c]]` for c = r−1−2s. Chunk c = ((IN_c + IN_{c+1} + IN_{c+2}) + IN_{c+3} +
//!   IN_{c+4}) + …, rounded after each step (not each `+`). All-gather 1R2W: at step s rank r
//!   forwards chunk k = r+1−2s from `W(r, k)` to `W(r+1, k)` and `W(r+2, k)` (one destination
//!   on a last step that would reach the chunk's owner) — a one-source ADD with replication on
//!   arch ≥ 3, two copies on arch 2.
//! - `mesh`: rank r reduces chunk r from all ranks in one R-source packet,
//!   `[IN(0)[r], IN(1)[r], …, IN(R−1)[r]] → W(r, r)` (R ≤ [`MESH_MAX_RANKS`] = 32); then
//!   copies every other `W(q, q)`.
//! - `avg` is FMA with scale fl32(1/R) on every input and 1 on every partial:
//!   Σ fl32(1/R)·x_i in the same order, not (Σ x_i)/R.
//!
//! ## Parts
//! - `config`: what to run ([`Config`], [`Algo`], [`RedOp`], [`Collective`]), what it produced
//!   ([`Outcome`]) and why it failed ([`CollectiveError`]);
//! - `layout`: the buffer map above, address by address;
//! - `schedule`: which rank reads and writes what in which step, and what it waits for — pure,
//!   with tests of the order above and of every read waiting for its writer;
//! - `lifetimes`: when each scratch buffer is mapped and unmapped, and the back pressure that
//!   keeps two steps of them per rank;
//! - `program`: each rank's steps planned by `cce-host` and laid out on its rings;
//! - `budget`: the shape rules and the memory ([`check`], [`memory_need`]) before anything runs;
//! - `model`: the alpha-beta time model ([`TimeModel`]);
//! - `transport`: how a rank waits for its peers' semaphores and publishes its own (in one
//!   memory: atomics), with hooks before and after each step for a transport that moves bytes;
//! - `partition`: the ranks split over several memories, the data crossing between them as
//!   messages planned from the schedule ([`run_partitioned`]);
//! - `rank`: one rank's thread, its engine fed step by step.

mod budget;
mod config;
mod layout;
mod lifetimes;
mod model;
#[cfg(feature = "mpi")]
mod mpi;
mod partition;
mod program;
mod rank;
mod schedule;
mod transport;

use std::collections::BTreeMap;
use std::sync::atomic::AtomicUsize;
use std::time::Instant;

use cce_engine::memory::SharedMemory;
use cce_engine::{Memory, RunReport};

pub use budget::{Bytes, MemoryNeed, check, memory_need};
pub use config::{
    Algo, Collective, CollectiveError, Config, FALLBACK_BUDGET, MAX_RANKS, MESH_MAX_RANKS, MIN_RANKS, Outcome,
    RankCounts, RedOp, default_budget,
};
pub use model::TimeModel;
#[cfg(feature = "mpi")]
pub use mpi::{MpiRun, abort_job, gather_u64, run_mpi, with_mpi};
pub use partition::{Partitioned, run_partitioned};

use budget::scheduled;
use layout::{Layout, RING_OFF};
use model::account;
use program::build;
use rank::{RANK_STACK, rank_main};
use transport::{InProcess, Transport};

/// Runs a collective over `inputs` (one buffer per rank, `elems · dtype` bytes each; for an
/// all-gather alone, each rank's own chunk is taken from its buffer). The inputs are copied into
/// the model; [`run_owned`] takes them instead.
pub fn run(cfg: &Config, inputs: &[Vec<u8>]) -> Result<Outcome, CollectiveError> {
    check(cfg)?;
    run_checked(cfg, inputs.to_vec()).map(|(outcome, _)| outcome)
}

/// [`run`] without copying the inputs: each becomes its rank's `IN` buffer as it is, and they
/// are handed back, unchanged, with the outcome. The model then holds, per rank, its input, its
/// output buffer and at most two steps' scratch buffers (docs/MODEL.md C12), and the outputs
/// take the place of the output buffers chunk by chunk.
pub fn run_owned(cfg: &Config, inputs: Vec<Vec<u8>>) -> Result<(Outcome, Vec<Vec<u8>>), CollectiveError> {
    check(cfg)?;
    run_checked(cfg, inputs)
}

#[allow(clippy::needless_range_loop, reason = "rank indices address several parallel tables")]
fn run_checked(cfg: &Config, inputs: Vec<Vec<u8>>) -> Result<(Outcome, Vec<Vec<u8>>), CollectiveError> {
    let size = cfg.dtype.bytes() as u64;
    let bytes = cfg.elems * size;
    if inputs.len() != cfg.ranks || inputs.iter().any(|i| i.len() as u64 != bytes) {
        return Err(CollectiveError::Config(format!("need {} inputs of {bytes} bytes each", cfg.ranks)));
    }
    let l = Layout { r: cfg.ranks, n: cfg.elems, size };
    let (sched, owner) = scheduled(cfg, &l);
    let steps = &sched.steps;
    let nsteps = steps[0].len();
    let programs = steps.iter().enumerate().map(|(q, st)| build(cfg, q, st)).collect::<Result<Vec<_>, _>>()?;
    // Memory: every buffer its own region; the scratch buffers are mapped by the rank threads.
    let mem = SharedMemory::new(cfg.budget.saturating_add(1 << 30));
    for (q, input) in inputs.into_iter().enumerate() {
        mem.add_region_from(l.input(q, 0), input)?;
        for c in 0..cfg.ranks {
            mem.add_region(l.w(q, c), l.chunk_bytes(c))?;
        }
        let rb = programs[q].rings.ring_size as u64 * 16;
        mem.add_region(Layout::base(q) + RING_OFF, rb)?;
        mem.add_region(Layout::base(q) + RING_OFF + rb, rb)?;
        if cfg.collective == Collective::AllGather {
            let c = owner[q];
            let mut own = vec![0u8; (l.len(c) * size) as usize];
            mem.read(l.input(q, c), &mut own)?;
            let mut m = mem.clone();
            m.write(l.w(q, c), &own)?;
        }
    }
    let users_left: BTreeMap<u64, AtomicUsize> =
        sched.life.users.iter().map(|(&a, &n)| (a, AtomicUsize::new(n))).collect();
    let net = InProcess::new(cfg.ranks);
    let t0 = Instant::now();
    let results: Vec<Result<RunReport, ()>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..cfg.ranks)
            .map(|q| {
                let (mem, programs, steps, net, life, left) =
                    (mem.clone(), &programs, steps, &net, &sched.life, &users_left);
                // Large stacks: unoptimised builds of the SIMD kernels use big frames.
                std::thread::Builder::new()
                    .name(format!("rank{q}"))
                    .stack_size(RANK_STACK)
                    .spawn_scoped(scope, move || {
                        rank_main(cfg, q, mem, &programs[q], &steps[q], programs, life, left, net)
                    })
            })
            .collect();
        handles.into_iter().map(|h| h.map_or(Err(()), |h| h.join().unwrap_or(Err(())))).collect()
    });
    let seconds = t0.elapsed().as_secs_f64();
    if let Some((rank, step, reason)) = net.failure() {
        return Err(CollectiveError::RankFailed { rank, step, reason });
    }
    let reports: Vec<RunReport> = results.into_iter().map(|r| r.unwrap_or_default()).collect();
    // Outputs, each chunk's buffer unmapped once copied out.
    let mut outputs = Vec::with_capacity(cfg.ranks);
    for q in 0..cfg.ranks {
        let chunks: Vec<usize> = match cfg.collective {
            Collective::ReduceScatter => vec![owner[q]],
            _ => (0..cfg.ranks).collect(),
        };
        let mut out = Vec::with_capacity(bytes as usize);
        for c in 0..cfg.ranks {
            let chunk = mem.take_region(l.w(q, c)).unwrap_or_default();
            if chunks.contains(&c) {
                out.extend_from_slice(&chunk[..(l.len(c) * size) as usize]);
            }
        }
        outputs.push(out);
    }
    let inputs = (0..cfg.ranks).map(|q| mem.take_region(l.input(q, 0)).unwrap_or_default()).collect();
    let (links, model_seconds) = account(cfg, &l, steps);
    let outcome = Outcome {
        outputs,
        ranks: reports
            .iter()
            .map(|r| RankCounts {
                packets: r.packets,
                descriptors: r.descriptors,
                bytes_read: r.bytes_read,
                bytes_written: r.bytes_written,
            })
            .collect(),
        links,
        steps: nsteps,
        seconds,
        model_seconds,
        model_peak_bytes: mem.peak(),
    };
    Ok((outcome, inputs))
}
