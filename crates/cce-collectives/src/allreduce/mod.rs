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
//! - `program`: each rank's steps planned by `cce-host` and laid out on its rings;
//! - `budget`: the shape rules and the memory ([`check`], [`memory_need`]) before anything runs;
//! - `model`: the alpha-beta time model ([`TimeModel`]);
//! - `transport`: how a rank waits for its peers' semaphores and publishes its own (in one
//!   process: atomics over one shared memory);
//! - `rank`: one rank's thread, its engine fed step by step.

mod budget;
mod config;
mod layout;
mod model;
mod program;
mod rank;
mod schedule;
mod transport;

use std::time::Instant;

use cce_engine::memory::SharedMemory;
use cce_engine::{Memory, RunReport};

pub use budget::{Bytes, MemoryNeed, check, memory_need};
pub use config::{
    Algo, Collective, CollectiveError, Config, MAX_RANKS, MESH_MAX_RANKS, MIN_RANKS, Outcome, RankCounts, RedOp,
};
pub use model::TimeModel;

use layout::{Layout, RING_OFF};
use model::account;
use program::build;
use rank::{RANK_STACK, rank_main};
use schedule::schedule;
use transport::{InProcess, Transport};

/// Runs a collective over `inputs` (one buffer per rank, `elems · dtype` bytes each; for an
/// all-gather alone, each rank's own chunk is taken from its buffer).
#[allow(clippy::needless_range_loop, reason = "rank indices address several parallel tables")]
pub fn run(cfg: &Config, inputs: &[Vec<u8>]) -> Result<Outcome, CollectiveError> {
    check(cfg)?;
    let size = cfg.dtype.bytes() as u64;
    let bytes = cfg.elems * size;
    if inputs.len() != cfg.ranks || inputs.iter().any(|i| i.len() as u64 != bytes) {
        return Err(CollectiveError::Config(format!("need {} inputs of {bytes} bytes each", cfg.ranks)));
    }
    let l = Layout { r: cfg.ranks, n: cfg.elems, size };
    let (steps, owner) = schedule(cfg, &l);
    let nsteps = steps[0].len();
    let programs = steps.iter().enumerate().map(|(q, st)| build(cfg, q, st)).collect::<Result<Vec<_>, _>>()?;
    // Memory: every buffer its own region.
    let mem = SharedMemory::new(cfg.budget.saturating_add(1 << 30));
    for q in 0..cfg.ranks {
        mem.add_region(l.input(q, 0), bytes)?;
        let mut m = mem.clone();
        m.write(l.input(q, 0), &inputs[q])?;
        for c in 0..cfg.ranks {
            let cb = (l.len(c) * size).max(1);
            mem.add_region(l.p(q, c), cb)?;
            mem.add_region(l.w(q, c), cb)?;
            if cfg.algo == Algo::Ring2r2w {
                mem.add_region(l.recv(q, c), cb)?;
            }
        }
        let rb = programs[q].rings.ring_size as u64 * 16;
        mem.add_region(Layout::base(q) + RING_OFF, rb)?;
        mem.add_region(Layout::base(q) + RING_OFF + rb, rb)?;
        if cfg.collective == Collective::AllGather {
            let c = owner[q];
            let mut m = mem.clone();
            m.write(l.w(q, c), &inputs[q][(l.start(c) * size) as usize..((l.start(c) + l.len(c)) * size) as usize])?;
        }
    }
    let net = InProcess::new(cfg.ranks);
    let t0 = Instant::now();
    let results: Vec<Result<RunReport, ()>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..cfg.ranks)
            .map(|q| {
                let (mem, programs, steps, net) = (mem.clone(), &programs, &steps, &net);
                // Large stacks: unoptimised builds of the SIMD kernels use big frames.
                std::thread::Builder::new()
                    .name(format!("rank{q}"))
                    .stack_size(RANK_STACK)
                    .spawn_scoped(scope, move || rank_main(cfg, q, mem, &programs[q], &steps[q], programs, net))
            })
            .collect();
        handles.into_iter().map(|h| h.map_or(Err(()), |h| h.join().unwrap_or(Err(())))).collect()
    });
    let seconds = t0.elapsed().as_secs_f64();
    if let Some((rank, step, reason)) = net.failure() {
        return Err(CollectiveError::RankFailed { rank, step, reason });
    }
    let reports: Vec<RunReport> = results.into_iter().map(|r| r.unwrap_or_default()).collect();
    // Outputs.
    let mut outputs = Vec::with_capacity(cfg.ranks);
    for q in 0..cfg.ranks {
        let mut out = vec![0u8; bytes as usize];
        let chunks: Vec<usize> = match cfg.collective {
            Collective::ReduceScatter => vec![owner[q]],
            _ => (0..cfg.ranks).collect(),
        };
        for c in chunks {
            let (a, n) = ((l.start(c) * size) as usize, (l.len(c) * size) as usize);
            if n > 0 {
                mem.read(l.w(q, c), &mut out[a..a + n])?;
            }
        }
        if cfg.collective == Collective::ReduceScatter {
            let c = owner[q];
            out = out[(l.start(c) * size) as usize..((l.start(c) + l.len(c)) * size) as usize].to_vec();
        }
        outputs.push(out);
    }
    let (links, model_seconds) = account(cfg, &l, &steps);
    Ok(Outcome {
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
    })
}
