//! A group of ranks that runs one stage of a collective, and where that stage's buffers are
//! (MODEL, docs/MODEL.md H1–H4). A flat algorithm is one group of every rank over the R
//! chunks; a hierarchy runs the same algorithms over groups of fewer ranks:
//!
//! - **intra-node** — the Y ranks of node n (ranks nY … nY+Y−1) over Y *blocks*, block b
//!   being the X fine chunks bX … bX+X−1 (so block b is elements [b·N/Y, (b+1)·N/Y));
//! - **inter-node** — the X ranks with local index i (ranks i, Y+i, 2Y+i, …) over the X fine
//!   chunks of the block that rank i's intra-node reduce-scatter left it.
//!
//! Each group numbers its members 0…n−1 (the node order, or the local order), and the
//! algorithms address buffers only through a group: its chunk `c` is a run of fine chunks (the
//! layout's chunks), and its partials take scratch slots of their own — an intra-node stage the
//! slots below R (slot k of the group at kX), an inter-node stage the slots from R (the block's
//! fine chunks). The intra-node reduce-scatter of a hierarchy ends in `T(q)` (the receive slot
//! R − 1), which the inter-node stage reads as its input; an inter-node stage's results go to the
//! output `W`.
//!
//! A flat ring of C channels (docs/MODEL.md C29) runs C groups of every rank at once, one per
//! channel:
//!
//! - **channel k** — member i (in node n = ⌊i/Y⌋, local j = i mod Y) is rank nY + (j + s) mod
//!   y_n, s = ⌊kY/C⌋ and y_n the ranks of node n (Y = R on one node), so the ring crosses from
//!   node n into n + 1 between local ranks s − 1 and s — another pair of chips for each
//!   channel. Its chunk c is piece k of the collective's chunk g(c − 1) + 1 (g: member →
//!   rank), so member i owns, after the reduce-scatter, piece k of chunk g(i) + 1, as rank
//!   g(i) owns chunk g(i) + 1 in the ring of one channel. Piece k of a chunk of L elements is
//!   its elements [⌊kL/C⌋, ⌊(k+1)L/C⌋); the partials of piece k of the collective's chunk f take
//!   scratch slot f·C + k.

use super::buffers::Layout;
use super::config::Algo;

/// Which stage a group runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Stage {
    /// Every rank, over the R chunks.
    Flat,
    /// The ranks of one node, over blocks of `x` fine chunks (X nodes).
    Intra { x: usize },
    /// The ranks of one local index, one in each of `x` nodes, over the fine chunks of `block`.
    Inter { block: usize, x: usize },
    /// Channel `k` of `channels` of the flat ring, over piece k of every chunk, its members in
    /// nodes of `y` ranks turned by `shift` = ⌊k·y/channels⌋.
    Channel { k: usize, channels: usize, y: usize, shift: usize },
}

/// A group of ranks running one algorithm's stage over its chunks. Its members' global ranks
/// are evenly spaced (`first`, `first + spread`, …), so a group costs nothing to make.
#[derive(Clone, Debug)]
pub(super) struct Group<'a> {
    pub(super) l: &'a Layout,
    /// Global rank of member 0.
    first: usize,
    /// Global ranks between consecutive members.
    spread: usize,
    /// Members.
    n: usize,
    /// The algorithm the group runs.
    pub(super) algo: Algo,
    pub(super) stage: Stage,
    /// The FMA scale of an input (`avg`: 1/R on the collective's inputs, 1 on a stage's input
    /// that is already a partial).
    pub(super) input_scale: f32,
}

impl<'a> Group<'a> {
    /// Every rank of `l`, running `algo` over the R chunks.
    pub(super) fn flat(l: &'a Layout, algo: Algo) -> Self {
        Group { l, first: 0, spread: 1, n: l.r, algo, stage: Stage::Flat, input_scale: 1.0 / l.r as f32 }
    }

    /// The `y` ranks of node `node` (of `l.r / y`), running `algo` over their blocks.
    pub(super) fn intra(l: &'a Layout, algo: Algo, node: usize, y: usize) -> Self {
        let x = l.r / y;
        let input_scale = 1.0 / l.r as f32;
        Group { l, first: node * y, spread: 1, n: y, algo, stage: Stage::Intra { x }, input_scale }
    }

    /// The ranks of local index `i` in every node of `y` ranks, running `algo` over the fine
    /// chunks of `block`.
    pub(super) fn inter(l: &'a Layout, algo: Algo, i: usize, y: usize, block: usize) -> Self {
        let x = l.r / y;
        Group { l, first: i, spread: y, n: x, algo, stage: Stage::Inter { block, x }, input_scale: 1.0 }
    }

    /// Every rank of `l` as channel `k` of `channels` of `algo`'s flat ring, in nodes of `y`
    /// ranks (module docs).
    pub(super) fn channel(l: &'a Layout, algo: Algo, k: usize, channels: usize, y: usize) -> Self {
        let y = y.clamp(1, l.r);
        let stage = Stage::Channel { k, channels, y, shift: k * y / channels };
        Group { stage, ..Group::flat(l, algo) }
    }

    /// The same group over another layout of as many ranks (its chunks of other lengths).
    pub(super) fn over<'b>(&self, l: &'b Layout) -> Group<'b> {
        Group { l, ..self.clone() }
    }

    /// Members.
    pub(super) fn n(&self) -> usize {
        self.n
    }
    /// Global rank of member `i`.
    pub(super) fn g(&self, i: usize) -> usize {
        match self.stage {
            Stage::Channel { y, shift, .. } => {
                let (node, y_n) = self.node_of(i, y);
                node + (i - node + shift) % y_n
            }
            _ => self.first + i * self.spread,
        }
    }
    /// The member whose global rank is `q`, if `q` is one.
    pub(super) fn member(&self, q: usize) -> Option<usize> {
        if let Stage::Channel { y, shift, .. } = self.stage {
            if q >= self.n {
                return None;
            }
            let (node, y_n) = self.node_of(q, y);
            return Some(node + (q - node + y_n - shift % y_n) % y_n);
        }
        let d = q.checked_sub(self.first)?;
        (d % self.spread == 0 && d / self.spread < self.n).then_some(d / self.spread)
    }
    /// The first rank of the node of nodes of `y` that holds rank (or member) `i`, and its
    /// ranks (the last node may be short).
    fn node_of(&self, i: usize, y: usize) -> (usize, usize) {
        let first = i / y * y;
        (first, y.min(self.n - first))
    }
    /// A channel's collective chunk of its chunk `c`: piece k of chunk g(c − 1) + 1 (module
    /// docs); any other group's chunk is itself.
    fn chunk(&self, c: usize) -> usize {
        match self.stage {
            Stage::Channel { .. } => (self.g(self.m(c as i64 - 1)) + 1) % self.n,
            _ => c,
        }
    }
    /// A channel's piece of its chunk `c`: (elements of the chunk before it, its elements).
    fn piece(&self, c: usize) -> (u64, u64) {
        let Stage::Channel { k, channels, .. } = self.stage else { return (0, self.len_whole(c)) };
        let whole = self.l.len(self.chunk(c)) as u128;
        let at = |k: usize| (whole * k as u128 / channels as u128) as u64;
        (at(k), at(k + 1) - at(k))
    }
    /// Elements of group chunk `c`'s fine chunks, whole.
    fn len_whole(&self, c: usize) -> u64 {
        let (f, k) = self.fine(c);
        self.l.start(f + k) - self.l.start(f)
    }
    /// The channel `(k, channels)` a channel's group runs.
    pub(super) fn lane(&self) -> Option<(usize, usize)> {
        match self.stage {
            Stage::Channel { k, channels, .. } => Some((k, channels)),
            _ => None,
        }
    }
    /// The group chunk that carries element `e` of fine chunk `f`: [`Self::chunk_of`], and for
    /// a channel only when `e` lies in its piece.
    pub(super) fn carrying(&self, f: usize, e: u64) -> Option<usize> {
        let c = self.chunk_of(f)?;
        let (off, len) = self.piece(c);
        let first = self.l.start(f) + off;
        (self.lane().is_none() || (first..first + len).contains(&e)).then_some(c)
    }
    /// Member `x` mod n.
    pub(super) fn m(&self, x: i64) -> usize {
        x.rem_euclid(self.n() as i64) as usize
    }
    /// The fine chunks of group chunk `c`: (first, how many).
    fn fine(&self, c: usize) -> (usize, usize) {
        if let Stage::Channel { .. } = self.stage {
            return (self.chunk(c), 1);
        }
        let (off, w) = self.span();
        (off + c * w, w)
    }
    /// The group's chunks in the layout's: chunk `c` is the `w` fine chunks from `off + c·w`,
    /// as `(off, w)`.
    pub(super) fn span(&self) -> (usize, usize) {
        match self.stage {
            Stage::Flat | Stage::Channel { .. } => (0, 1),
            Stage::Intra { x } => (0, x),
            Stage::Inter { block, x } => (block * x, 1),
        }
    }
    /// The group chunk that holds fine chunk `f`, if the group's chunks do.
    pub(super) fn chunk_of(&self, f: usize) -> Option<usize> {
        if let Stage::Channel { .. } = self.stage {
            // f = g(c − 1) + 1.
            let before = self.member(self.l.m(f as i64 - 1))?;
            return Some(self.m(before as i64 + 1));
        }
        let (off, w) = self.span();
        let c = f.checked_sub(off)? / w;
        (c < self.n).then_some(c)
    }
    /// Elements of group chunk `c`.
    pub(super) fn len(&self, c: usize) -> u64 {
        self.piece(c).1
    }
    /// Bytes of group chunk `c`.
    pub(super) fn bytes(&self, c: usize) -> u64 {
        self.len(c) * self.l.size
    }
    /// Member `i`'s input of chunk `c`: `IN`, or (inter-node) the intra-node result `T`.
    pub(super) fn input(&self, i: usize, c: usize) -> u64 {
        let (f, _) = self.fine(c);
        match self.stage {
            Stage::Inter { block, x } => {
                self.l.t(self.g(i)) + (self.l.start(f) - self.l.start(block * x)) * self.l.size
            }
            _ => self.l.input(self.g(i), f) + self.piece(c).0 * self.l.size,
        }
    }
    /// Member `i`'s partial in the group's scratch slot `slot` (below n).
    pub(super) fn p(&self, i: usize, slot: usize) -> u64 {
        self.l.p(self.g(i), self.slot(slot))
    }
    /// Member `i`'s receive buffer of chunk `c`.
    pub(super) fn recv(&self, i: usize, c: usize) -> u64 {
        self.l.recv(self.g(i), self.slot(c))
    }
    fn slot(&self, slot: usize) -> usize {
        match self.stage {
            Stage::Flat => slot,
            Stage::Intra { x } => slot * x,
            Stage::Inter { block, x } => self.l.r + block * x + slot,
            Stage::Channel { k, channels, .. } => self.chunk(slot) * channels + k,
        }
    }
    /// Member `i`'s compressed buffer of chunk `c` for the hop after it (GCE).
    pub(super) fn c(&self, i: usize, c: usize) -> u64 {
        self.l.c(self.g(i), self.slot(c))
    }
    /// Member `i`'s copy of final chunk `c` in its owner's compressed form (GCE).
    pub(super) fn cw(&self, i: usize, c: usize) -> u64 {
        self.l.cw(self.g(i), self.slot(c))
    }
    /// Member `i`'s output of chunk `c` (a block's fine chunks lie back to back in `W`).
    pub(super) fn w(&self, i: usize, c: usize) -> u64 {
        self.l.w(self.g(i), self.fine(c).0) + self.piece(c).0 * self.l.size
    }
    /// Where member `i`'s reduce-scatter puts its final chunk `c`: the output, or (a
    /// hierarchy's intra-node stage) `T`.
    pub(super) fn result(&self, i: usize, c: usize) -> u64 {
        match self.stage {
            Stage::Intra { .. } => self.l.t(self.g(i)),
            _ => self.w(i, c),
        }
    }
    /// Whether ring-2R2W's last reduce also writes the next member's output (only where its
    /// result is the output of the whole collective).
    pub(super) fn replicates_result(&self) -> bool {
        matches!(self.stage, Stage::Flat | Stage::Channel { .. })
    }
}

/// The chunk each of `n` members owns after `algo`'s reduce-scatter: its own for mesh and
/// RDH, the next one for the rings.
pub(super) fn owners(algo: Algo, n: usize) -> Vec<usize> {
    (0..n).map(|q| owner(algo, n, q)).collect()
}

/// The chunk member `q` of `n` owns after `algo`'s reduce-scatter ([`owners`]).
pub(super) fn owner(algo: Algo, n: usize, q: usize) -> usize {
    match algo {
        Algo::Mesh | Algo::Rdh => q,
        _ => (q + 1) % n,
    }
}

/// The member of `n` that owns chunk `c` after `algo`'s reduce-scatter: [`owner`] inverted.
pub(super) fn owner_of(algo: Algo, n: usize, c: usize) -> usize {
    match algo {
        Algo::Mesh | Algo::Rdh => c,
        _ => (c + n - 1) % n,
    }
}
