//! All-reduce (and reduce-scatter / all-gather on their own) over R ranks, lowered to CCE
//! packets by `cce-host` and executed by one `cce-engine` per rank, concurrently, synchronised
//! only through the queues' completion semaphores.
//!
//! ## Buffers (MODEL)
//! Rank `r` holds, each chunk its own region in one [`SharedMemory`](cce_engine::memory::SharedMemory): `IN(r)` the input,
//! `P(r, c)` reduce-scatter partials (for `rdh`, one per round and chunk: slot below R), `W(r, c)` the output (the final chunk and everything the
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
//! - `ring` and `ring-2r2w` with `--channels C` > 1 (docs/MODEL.md C29; nodes of Y =
//!   [`TimeModel::ranks_per_node`] ranks, Y = R on one node, a last short node of y ranks turning
//!   mod y): chunk c is cut into C pieces, piece k its elements `[⌊kL/C⌋, ⌊(k+1)L/C⌋)` (L its
//!   length), and piece k of every chunk runs round channel k's ring, all channels in the same
//!   steps (a rank's step t does channel 0's work, then channel 1's, …, and waits for every
//!   channel's predecessor). Channel k's ring visits, in every node, the local ranks from
//!   s = ⌊kY/C⌋ on: its position i (node n, local j) is rank g(i) = nY + (j + s) mod y_n (y_n the
//!   node's ranks: Y, or a short last node's count; chunks and slots below are the collective's
//!   chunks, not a ring's positions). Position i
//!   does at step s what rank i does in the ring above, on piece k of chunk `g(i − s − 2) + 1`
//!   — so piece k of chunk c is the sum from rank g(p), p = g⁻¹(c − 1) + 1, round the ring:
//!   `((IN_g(p) + IN_g(p+1)) + IN_g(p+2)) + … + IN_g(p−1)`, rounded after each `+`, and rank q
//!   owns chunk q + 1 (all its pieces) after the reduce-scatter, as in one channel. Partials of
//!   piece k of chunk c take scratch slot cC + k; outputs are `W(r, c)` at the piece's offset.
//!   On one node every channel's ring is the one ring turned, so every sum keeps the one
//!   channel's order (RNE bits equal; SR's differ, its bits following the addresses); over nodes
//!   a sum starts elsewhere where its chunk's predecessor ends a node's turn.
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
//! - `rdh` (recursive halving, then recursive doubling; R a power of two, others refused):
//!   reduce-scatter round k of log2 R, d = 2^k (the nearest partner first, with the most
//!   data), pairs rank r with r ^ d; r keeps the chunks of its set (c ≡ r mod 2d) and reduces
//!   each from `[v(r & !d, c), v(r | d, c)]` (the rank with bit d clear first) into its own
//!   partial of round k, `P(r, R − (R >> k) + (c >> (k+1)))` (the last round writes `W(r, r)`);
//!   `v(x, c)` is `IN(x)[c]` at round 0 and x's partial of round k − 1 after. Every chunk gets
//!   the same tree: `v_x = IN_x`; for d = 1, 2, 4, …, R/2, `v_x = v_(x+d) = v_x + v_(x+d)` for
//!   every x with bit d clear, rounded after each `+`; the result is v_0. Rank r ends with
//!   chunk r. All-gather round j, d = R >> (j+1): rank r copies the chunks its partner r ^ d
//!   holds (those ≡ r ^ d mod 2d), so the largest copies go to the nearest partner last.
//! - `ring` with `--compress gce` (docs/MODEL.md G6–G7; nodes of [`TimeModel::ranks_per_node`]
//!   ranks): the ring's order, but a value crossing into the next node is quantized on the way,
//!   `v ↦ dt(expand(compress(v)))` (the sender's reduce rounded to the buffer dtype, then
//!   compressed, in one EXT combo; at step 0 the sender compresses its input), and every final
//!   chunk is quantized once by its owner, which sends the compressed bytes round the
//!   all-gather; every rank expands the same bytes. Buffers `C(r, c)` and `CW(r, c)` hold the
//!   compressed chunks; the expanded value lands in `RECV(r, c)` before the reduce.
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
//! - `size`: how many steps and work items a built-in schedule has, before it is made;
//! - `budget`: the shape rules and the memory ([`check`], [`memory_need`]) before anything runs,
//!   and what a check returns: a [`Checked`] run, the one thing [`run`] executes;
//! - `model`: the time model's parameters, calibrated per instance type ([`TimeModel`]);
//! - `timeline`: the rings' packets timed with them ([`model`], [`Timeline`]);
//! - `choose`: every algorithm's model time and the fastest (`--algo auto`, [`choose`]);
//! - `hops`: the bytes over node boundaries, what `--compress gce` saves ([`hop_report`]);
//! - `transport`: how a rank waits for its peers' semaphores and publishes its own (in one
//!   memory: atomics), with hooks before and after each step for a transport that moves bytes;
//! - `partition`: the ranks split over several memories, the data crossing between them as
//!   messages planned from the schedule ([`run_partitioned`]);
//! - `rank`: one rank, its engine fed step by step;
//! - `tasks`: the ranks run as tasks on a pool of workers, each step when its dependencies are met;
//! - `story`: one element's story, from the schedule for that element alone ([`story`]).

mod budget;
mod buffers;
mod choose;
mod config;
mod group;
mod hier;
mod hops;
mod lifetimes;
pub(crate) mod lowered;
mod model;
#[cfg(feature = "mpi")]
mod mpi;
mod partition;
mod prepared;
mod program;
mod rank;
mod schedule;
mod size;
mod slice;
mod story;
mod symmetry;
mod tasks;
pub mod threads;
mod timeline;
mod transport;
mod user;

pub use budget::{Bytes, Checked, MemoryNeed, check, check_chosen, estimate, memory_need};
pub use choose::{Candidate, auto_channels, choose, choose_every, spans_nodes};
pub use config::{
    Algo, Collective, CollectiveError, Compress, Config, FALLBACK_BUDGET, Hier, Inter, MAX_CHANNELS, MAX_RANKS,
    MESH_MAX_RANKS, MIN_RANKS, Outcome, RankCounts, RedOp, UserAlgo, default_budget,
};
pub use hops::{HopBytes, hop_bytes, hop_report};
pub use model::{FITTED, Fitted, Instance, Parameter, TimeModel};
#[cfg(feature = "mpi")]
pub use mpi::{MpiReport, MpiRun, abort_job, gather_u64, report as mpi_report, run_mpi, with_mpi};
pub use partition::{Partitioned, run_partitioned};
pub use size::{RANK_BYTES, STEP_BYTES, ScheduleSize, WORK_BYTES, schedule_size};
pub use story::{
    Difference, Expr, MAX_ORDER_CHUNKS, PacketRef, Quantised, StepKind, Story, StoryError, StoryOperand, StoryStep,
    differences, orders, story,
};
pub use timeline::{MAX_TRACE_PACKETS, PacketSpan, StepSpan, Timeline, WorkSpan};

use std::borrow::Cow;
use std::cell::Cell;

use transport::InProcess;

/// How many checks and time models ran on this thread (see [`calls`]).
#[doc(hidden)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Calls {
    /// [`check`] calls.
    pub checks: u64,
    /// Time models of a configuration (timelines: [`model`], a run's own, [`hop_report`]'s).
    pub models: u64,
}

thread_local! {
    static CALLS: Cell<Calls> = const { Cell::new(Calls { checks: 0, models: 0 }) };
}

/// The checks and time models this thread has run so far: what tests count to prove a run is
/// checked once and `auto` models each candidate once. Both run on the caller's thread.
#[doc(hidden)]
pub fn calls() -> Calls {
    CALLS.with(Cell::get)
}

fn count(f: impl FnOnce(&mut Calls)) {
    CALLS.with(|c| {
        let mut n = c.get();
        f(&mut n);
        c.set(n);
    });
}

/// Counts one [`check`].
fn count_check() {
    count(|c| c.checks += 1);
}

/// The time model of `cfg` over `steps` (every timeline is made here, and counted); with
/// `sym`, `steps` are node 0's ranks' alone, standing for every node's.
fn time_model(
    cfg: &Config,
    l: &buffers::Layout,
    steps: &dyn schedule::StepSource,
    detail: bool,
    sym: Option<symmetry::Symmetry>,
) -> Result<Timeline, CollectiveError> {
    count(|c| c.models += 1);
    timeline::timeline(cfg, l, steps, detail, (sym, None))
}

/// The model's timeline of `cfg` without running it: every rank's schedule planned into its
/// packets and timed (docs/MODEL.md C6), each packet and work item listed when `detail`
/// (refused above [`MAX_TRACE_PACKETS`]). Checks the shape rules, not the memory budget, so a
/// configuration too large for this machine can still be modelled.
///
/// A configuration symmetric over its nodes (docs/MODEL.md C27) is walked over node 0's ranks alone
/// when `detail` is not asked for: the same figures, bit for bit, at a node's cost.
pub fn model(cfg: &Config, detail: bool) -> Result<Timeline, CollectiveError> {
    if detail {
        budget::check_model(cfg)?;
        let low = lowered::Lowered::new(cfg);
        return time_model(cfg, &low.l, &low.steps, true, None);
    }
    model_below(cfg, None)
}

/// [`model`] without detail, stopped ([`Timeline::stopped`]) once its time is sure to exceed
/// `bound`. A built-in algorithm's steps are made one step index at a time as the walk reaches
/// them ([`schedule::Streamed`]), so the walk holds one index's steps, not every rank's lists.
fn model_below(cfg: &Config, bound: Option<f64>) -> Result<Timeline, CollectiveError> {
    budget::check_model(cfg)?;
    count(|c| c.models += 1);
    let sym = symmetry::Symmetry::of(cfg);
    if cfg.algo == Algo::File {
        let low = lowered::Lowered::new(cfg);
        return timeline::timeline(cfg, &low.l, &low.steps, false, (sym, bound));
    }
    let l = lowered::layout(cfg);
    timeline::timeline(cfg, &l, &schedule::Streamed::new(cfg, &l), false, (sym, bound))
}

/// The timeline a trace draws (`--trace`): every packet and work item listed when there are
/// at most [`MAX_TRACE_PACKETS`] packets, else each rank's steps only (the timeline's `packets`
/// empty: a trace of thousands of ranks shows their steps, docs/MODEL.md C17), refused above
/// [`MAX_TRACE_STEPS`] steps. Checks the shape rules, not the memory budget.
pub fn trace(cfg: &Config) -> Result<Timeline, CollectiveError> {
    budget::check_model(cfg)?;
    let low = lowered::Lowered::new(cfg);
    let steps: u64 = low.steps.iter().map(|s| s.len() as u64).sum();
    let plain = time_model(cfg, &low.l, &low.steps, false, None)?;
    if plain.packet_count <= MAX_TRACE_PACKETS {
        return time_model(cfg, &low.l, &low.steps, true, None);
    }
    if steps > MAX_TRACE_STEPS {
        return Err(CollectiveError::Config(format!(
            "the trace would hold {} packets, {steps} steps drawn alone: at most {MAX_TRACE_STEPS} steps (use fewer ranks)",
            plain.packet_count
        )));
    }
    Ok(plain)
}

/// Most steps (over all ranks) a trace draws when it draws steps alone.
pub const MAX_TRACE_STEPS: u64 = 500_000;

/// Every rank's rings for `cfg`, as one queue each would hold them (what `cce algo --lower`
/// dumps): the schedule planned by cce-host, nothing run. Checks the shape rules and the
/// address slots, not the memory budget.
pub fn rings(cfg: &Config) -> Result<Vec<cce_host::Rings>, CollectiveError> {
    budget::check_model(cfg)?;
    let low = lowered::Lowered::new(cfg);
    low.steps.iter().enumerate().map(|(q, st)| program::build(cfg, q, st).map(|p| p.rings)).collect()
}

/// The shape rules alone (tests).
#[cfg(test)]
pub(crate) fn budget_shape(cfg: &Config) -> Result<(), CollectiveError> {
    budget::check_model(cfg)
}

/// A rank's input: owned (moved into the model) or borrowed (read in place).
pub type Input<'m> = Cow<'m, [u8]>;

/// Runs a [`Checked`] collective over `inputs` (one buffer per rank, `elems · dtype` bytes
/// each; for an all-gather alone, each rank's own chunk is taken from its buffer), checking
/// nothing again. An owned input is moved in as its rank's `IN` buffer (not copied), a
/// borrowed one read in place (the engines never write `IN`); both are handed back, unchanged,
/// with the outcome. The model then holds, per rank, its input, its output buffer and at most
/// two steps' scratch buffers (docs/MODEL.md C12), and the outputs take the place of the
/// output buffers chunk by chunk.
pub fn run<'m>(checked: &Checked, inputs: Vec<Input<'m>>) -> Result<(Outcome, Vec<Input<'m>>), CollectiveError> {
    let boxes = [partition::Mailbox::default()];
    let net = InProcess::new(checked.config().ranks);
    let inputs = inputs.into_iter().map(Some).collect();
    let job = partition::BlocksJob {
        checked,
        groups: 1,
        local: &|_| true,
        inputs,
        hand_back: true,
        wire: &partition::Local,
        boxes: &boxes,
        net: &net,
    };
    let r = partition::run_blocks(job)?;
    Ok((r.outcome, r.inputs))
}

/// Owned inputs, to [`run`] without a copy: `inputs.into_iter().map(Cow::Owned)`.
pub fn owned(inputs: Vec<Vec<u8>>) -> Vec<Input<'static>> {
    inputs.into_iter().map(Cow::Owned).collect()
}

/// Borrowed inputs, to [`run`] reading them in place.
pub fn borrowed<'m>(inputs: &[&'m [u8]]) -> Vec<Input<'m>> {
    inputs.iter().map(|&i| Cow::Borrowed(i)).collect()
}
