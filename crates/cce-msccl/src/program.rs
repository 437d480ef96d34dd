//! A checked file as the executor would run it: every rank's thread blocks, their
//! transmissions (the executor's grouping of steps, docs/MODEL.md X5) with their waits, and
//! the messages on every link (X6). Built by [`crate::check::check`].

use crate::model::{Coll, Kind};

/// Where data lives on a rank, after the in-place aliasing of docs/MODEL.md X4.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Area {
    /// The input buffer `I`.
    Input,
    /// The output buffer `O`.
    Output,
    /// The scratch buffer `S`.
    Scratch,
    /// The staging buffer `T`: what a send holds that lies nowhere else (an `rrs` result, a
    /// snapshot), one slot per sending transmission.
    Staging,
}

impl Area {
    /// Its letter in messages: `i`, `o`, `s` as the file names buffers, `t` for staging.
    pub fn letter(self) -> &'static str {
        match self {
            Area::Input => "i",
            Area::Output => "o",
            Area::Scratch => "s",
            Area::Staging => "t",
        }
    }
}

/// `cnt` consecutive chunks of a rank's area, starting at `off`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chunks {
    /// The area.
    pub area: Area,
    /// The first chunk.
    pub off: u64,
}

/// A wait on another thread block's step (the file's `depid` / `deps`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wait {
    /// The thread block waited for.
    pub tb: usize,
    /// Its step.
    pub step: usize,
    /// The transmission whose completion meets the wait (X6).
    pub met_by: usize,
}

/// One transmission: a step, or a fused run of `re` steps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tx {
    /// Its rank.
    pub rank: usize,
    /// Its thread block.
    pub tb: usize,
    /// The position of its first step in the thread block.
    pub first: usize,
    /// The position of its last step (a fused reduction's last member).
    pub last: usize,
    /// The line of its first step.
    pub line: u32,
    /// Its type.
    pub kind: Kind,
    /// Chunks per operand.
    pub cnt: u64,
    /// Its sources in order: one for `s rrs rrc rrcs cpy`, one per member of a fused `re`.
    pub srcs: Vec<Chunks>,
    /// Its destination (`r rcs rrc rrcs cpy re`).
    pub dst: Option<Chunks>,
    /// What it waits for before it starts.
    pub waits: Vec<Wait>,
    /// Whether it sets its thread block's flag (its last member's `hasdep`).
    pub hasdep: bool,
    /// The step number the executor's kernel writes into the flag after it (X6): its step
    /// counter, which advances by each wait and each fused member — the last member's
    /// position, unless a nop sits inside a fused reduction (then one less per such nop).
    pub flag: usize,
    /// The message it receives.
    pub recv: Option<usize>,
    /// The message it sends.
    pub send: Option<usize>,
}

/// One message on a link: the `k`-th from `from` to `to` on channel `chan`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Message {
    /// Sending rank.
    pub from: usize,
    /// Receiving rank.
    pub to: usize,
    /// Channel.
    pub chan: usize,
    /// Its place on the link.
    pub k: usize,
    /// The sending transmission.
    pub sender: usize,
    /// The receiving transmission.
    pub receiver: usize,
}

/// A thread block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    /// The peer it sends to.
    pub send: Option<usize>,
    /// The peer it receives from.
    pub recv: Option<usize>,
    /// Its channel.
    pub chan: usize,
    /// Its steps, nops included.
    pub steps: usize,
    /// Its transmissions: indices into [`Program::txs`], in order.
    pub txs: std::ops::Range<usize>,
    /// The line of each step, by position.
    pub lines: Vec<u32>,
    /// The type of each step, by position.
    pub kinds: Vec<Kind>,
}

/// A checked file, as the executor would run it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    /// `name`.
    pub name: String,
    /// `proto`'s name.
    pub proto: &'static str,
    /// `nchannels`.
    pub nchannels: usize,
    /// `nchunksperloop`: chunks per rank buffer (a chunk is elems / this).
    pub nchunks: u64,
    /// Ranks (`ngpus`).
    pub ranks: usize,
    /// The collective.
    pub coll: Coll,
    /// Whether it runs in place (X4).
    pub in_place: bool,
    /// `minBytes`.
    pub min_bytes: u64,
    /// `maxBytes` (0: no limit).
    pub max_bytes: u64,
    /// Per rank: `s_chunks`.
    pub scratch_chunks: Vec<u64>,
    /// Per rank, per thread block id.
    pub blocks: Vec<Vec<Block>>,
    /// Every transmission: rank by rank, thread block by thread block, in order.
    pub txs: Vec<Tx>,
    /// Every message.
    pub messages: Vec<Message>,
    /// `<step>` elements per type, in [`Kind::ALL`] order.
    pub step_counts: [usize; 9],
}

impl Program {
    /// One rank's share of the buffer in chunks (`nchunksperloop / R`; reduce-scatter and
    /// all-gather).
    pub fn share(&self) -> u64 {
        self.nchunks / self.ranks as u64
    }

    /// The chunks of a rank's area (staging: see [`crate::Plan::staging_chunks`]).
    pub fn area_chunks(&self, rank: usize, area: Area) -> u64 {
        match (area, self.coll) {
            (Area::Input, Coll::AllGather) => self.share(),
            (Area::Input, _) => self.nchunks,
            (Area::Output, Coll::ReduceScatter) => self.share(),
            (Area::Output, _) => self.nchunks,
            (Area::Scratch, _) => self.scratch_chunks.get(rank).copied().unwrap_or(0),
            (Area::Staging, _) => 0,
        }
    }

    /// `rank tb T step S (type)` of a transmission, for messages.
    pub fn describe(&self, tx: usize) -> String {
        let t = &self.txs[tx];
        if t.first == t.last {
            format!("rank {} tb {} step {} ({})", t.rank, t.tb, t.first, t.kind.name())
        } else {
            format!("rank {} tb {} steps {}-{} (re x{})", t.rank, t.tb, t.first, t.last, t.srcs.len())
        }
    }

    /// The step's position of a transmission's first member and its line, for errors.
    pub fn at(&self, tx: usize) -> crate::Where {
        let t = &self.txs[tx];
        crate::Where::step(t.rank, t.tb, t.first, t.line)
    }
}
