#!/usr/bin/env python3
"""Independent reference for cce's collectives, flat and hierarchical, in numpy + ml_dtypes:
all-reduce, reduce-scatter and all-gather, ADD, RNE or stochastic rounding.

Written from the orders the docs state (crates/cce-collectives/src/collective/mod.rs for the
flat algorithms, hier.rs and group.rs for the hierarchy, docs/MODEL.md H1-H6 and C2 for the
buffers), not from the Rust: every reduce accumulates its sources in order in fp32 and rounds
once to the buffer dtype; stochastic rounding (docs/MODEL.md "Stochastic rounding", E3) draws its
bits from (seed, queue 0, site 0, destination address / element size), so this file lays the
buffers out as the docs do to know each reduce's destination.

Flat, over a group of n members running algorithm A on its chunks (chunk c of the group):
  ring, ring-2r2w  member c+1+s at step s: [s = 0 ? IN(c) : P(c+s, c), IN(c+1+s)] -> P(c+1+s, c)
                   (the last step, member c-1, writes the result)
  kangaring        member c+2+2s at step s: [s = 0 ? IN(c) : P(c+2s, c), IN(c+1+2s), IN(c+2+2s)];
                   with n even a last two-source step [P(c-2, c) (IN(c) when n = 2), IN(c-1)]
  mesh             member c: [IN(0), ..., IN(n-1)] -> result
  rdh (n = 2^L)    round k (d = 2^k): member q = c mod 2d... reduces [v(q & ~d), v(q | d)] into
                   its round-k partial; v(x) = IN(x) at round 0; the last round's member c
                   writes the result
  owner (who holds chunk c after the reduce-scatter): c-1 for the rings, c for mesh and rdh.
Flat rings of C channels (ring, ring-2r2w with --channels C; mod.rs "Reduction order", group.rs;
nodes of Y ranks, Y = R on one node, a last short node of y_n < Y ranks):
  piece k          of a chunk of L elements: its elements [floor(kL/C), floor((k+1)L/C)), maybe
                   none; piece k of every chunk runs round channel k's ring.
  channel k        position i (node n = i // Y, local j = i mod Y) is rank
                   g(i) = nY + (j + s) mod y_n, s = floor(kY/C): the one-channel ring (above)
                   over positions, on pieces — piece k of chunk c is the ring's chunk
                   p = g^-1(c-1) + 1, so its sum is ((IN_g(p) + IN_g(p+1)) + ...) + IN_g(p-1),
                   rounded after each +, and rank c-1 holds all of chunk c, as with one channel.
  buffers          R*C scratch slots per kind; a partial of piece k of chunk c goes to the
                   writer's slot cC + k (ring-2r2w's replica to RECV's), the last reduce to
                   W(c-1, c) + floor(kL/C) elements. The all-gather copies, as with one channel.
  on one node      every channel's ring is the one ring turned, so each piece is summed from the
                   rank one channel starts at: only the addresses (stochastic rounding) differ.
Hierarchy (X nodes of Y ranks, rank q = nY + i; block b = fine chunks bX..bX+X-1):
  all-reduce       every node: A over its Y ranks on the blocks (inputs IN, result in T(owner));
                   every local index i: B over the X ranks nY+i on the X fine chunks of block
                   ob(i) (inputs T, results in W) — or the single-step mesh: every member
                   reduces the whole block from T(0), ..., T(X-1) into its own W; then copies.
  reduce-scatter   the same first two stages: rank q ends with fine chunk ob(i)X + oB(n).
  all-gather       copies only: rank q's output chunk f is the input chunk f of its owner.
Buffers (docs/MODEL.md C2, H2): rank r's memory at 2^45 (r + 1); P at +2^42, W at +2^43, RECV
at +3*2^42; scratch slots of 2^36 bytes up to 64 slots, halved each time the slot count doubles
(slots: R flat, R*C for C channels, 2R for a hierarchy); an intra-node stage's slot k is slot
kX, an inter-node stage's slot k of block b is R + bX + k; rdh's partial of round k for chunk
c is slot (n - (n >> k)) + (c >> (k+1)); T(r) is RECV slot R - 1; W's chunks lie back to back.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import allreduce_ref  # noqa: E402  (the SR generator and rounding, written from MODEL.md)

M45, P_OFF, W_OFF, RECV_OFF = 1 << 45, 1 << 42, 2 << 42, 3 << 42
RINGS = ("ring", "ring-2r2w")


class Layout:
    def __init__(self, r, n, size, slots):
        self.r, self.n, self.size = r, n, size
        wide = max(1 << max(slots - 1, 0).bit_length(), 64) // 64
        self.stride = (1 << 36) // wide

    def start(self, f):
        return f * self.n // self.r

    def base(self, q):
        return M45 * (q + 1)

    def p(self, q, slot):
        return self.base(q) + P_OFF + slot * self.stride

    def w(self, q, f):
        empty = 0 if self.n >= self.r else f - self.start(f)
        return self.base(q) + W_OFF + self.start(f) * self.size + empty

    def t(self, q):
        return self.base(q) + RECV_OFF + (self.r - 1) * self.stride


class Numbers:
    """One CCE reduce: fp32 accumulation in source order, one rounding to the buffer dtype."""

    def __init__(self, dt, rounding, seed):
        self.dt, self.sr = np.dtype(dt), rounding == "sr" and np.dtype(dt) != np.dtype(np.float32)
        self.key = allreduce_ref.sr_key(seed & 0xFFFFFFFF, 0, 0)

    def reduce(self, vals, dst):
        if self.dt == np.dtype(np.int32):
            acc = vals[0].astype(np.int64)
            for v in vals[1:]:
                acc = acc + v
            return ((acc + (1 << 31)) % (1 << 32) - (1 << 31)).astype(np.int32)
        acc = vals[0].astype(np.float32)
        for v in vals[1:]:
            acc = (acc + v.astype(np.float32)).astype(np.float32)
        if self.sr:
            index = np.uint64(dst // self.dt.itemsize) + np.arange(len(acc), dtype=np.uint64)
            return allreduce_ref.sr_round(acc, self.dt, self.key, index)
        return acc.astype(self.dt)


def owner_of(algo, n):
    """Member -> the chunk it holds after the reduce-scatter."""
    return [q if algo in ("mesh", "rdh") else (q + 1) % n for q in range(n)]


def rdh_slot(n, k, c):
    return (n - (n >> k)) + (c >> (k + 1))


def reduce_chunk(algo, n, c, val, p_addr, result_addr, num):
    """Group chunk c's reduction over n members: val(m) is member m's input of the chunk,
    p_addr(m, slot) a member's partial, result_addr(m) where member m puts the result. Returns
    (member that holds it, value)."""
    m = lambda x: x % n
    if algo in RINGS:
        acc = None
        for s in range(n - 1):
            q = m(c + 1 + s)
            first = val(c) if s == 0 else acc
            dst = result_addr(q) if s == n - 2 else p_addr(q, c)
            acc = num.reduce([first, val(q)], dst)
        return m(c - 1), acc
    if algo == "kangaring":
        three = (n - 1) // 2
        acc = None
        for s in range(three):
            q = m(c + 2 + 2 * s)
            first = val(c) if s == 0 else acc
            last = s + 1 == three and n % 2 == 1
            acc = num.reduce([first, val(m(q - 1)), val(q)], result_addr(q) if last else p_addr(q, c))
        if n % 2 == 0:
            s = three
            q = m(c + 1 + 2 * s)
            first = val(m(q - 1)) if s == 0 else acc
            acc = num.reduce([first, val(q)], result_addr(q))
            return q, acc
        return m(c - 1), acc
    if algo == "mesh":
        return c, num.reduce([val(x) for x in range(n)], result_addr(c))
    if algo == "rdh":
        rounds = n.bit_length() - 1
        v = {x: val(x) for x in range(n)}
        for k in range(rounds):
            d = 1 << k
            nv = {}
            for q in range(n):
                if q % (2 * d) == c % (2 * d):
                    dst = result_addr(q) if 2 * d == n else p_addr(q, rdh_slot(n, k, c))
                    nv[q] = num.reduce([v[q & ~d], v[q | d]], dst)
            v = nv
        return c, v[c]
    raise ValueError(f"unknown algo {algo}")


def channel_ring(r, y, channels, k):
    """Channel k's ring: position -> rank (every node entered floor(kY/C) local ranks on; a short
    last node turns modulo its own count)."""
    y = min(y or r, r)
    s = k * y // channels
    return [i - i % y + (i % y + s) % min(y, r - (i - i % y)) for i in range(r)]


def pieces(length, channels):
    """A chunk's C pieces: (offset, end) within the chunk."""
    return [(k * length // channels, (k + 1) * length // channels) for k in range(channels)]


def flat_chunk(algo, c, inputs, lay, num, channels, y):
    """Chunk c of a flat ring (or any flat algorithm with one channel): its value, piece after
    piece, each round its channel's ring."""
    r, start = len(inputs), lay.start(c)
    if channels == 1 or algo not in RINGS:
        fine = slice(start, lay.start(c + 1))
        holder, v = reduce_chunk(algo, r, c, lambda x: inputs[x][fine], lambda q, s: lay.p(q, s),
                                 lambda q: lay.w(q, c), num)
        return v
    out = []
    for k, (lo, hi) in enumerate(pieces(lay.start(c + 1) - start, channels)):
        g = channel_ring(r, y, channels, k)
        p = (g.index((c - 1) % r) + 1) % r
        part = slice(start + lo, start + hi)
        holder, v = reduce_chunk(algo, r, p, lambda i: inputs[g[i]][part],
                                 lambda i, _: lay.p(g[i], c * channels + k),
                                 lambda i: lay.w(g[i], c) + lo * lay.size, num)
        assert g[holder] == (c - 1) % r
        out.append(v)
    return np.concatenate(out)


def flat(algo, collective, inputs, num, channels=1, ranks_per_node=None):
    """A flat collective over all ranks: every rank's output. `channels` > 1 (the rings only)
    runs piece k of every chunk round channel k's ring over nodes of `ranks_per_node` ranks
    (None: one node)."""
    r, n = len(inputs), len(inputs[0])
    assert channels == 1 or algo in RINGS
    lay = Layout(r, n, num.dt.itemsize, r * channels)
    fine = lambda f: slice(lay.start(f), lay.start(f + 1))
    own = owner_of(algo, r)
    if collective == "all-gather":
        out = np.concatenate([inputs[own.index(f)][fine(f)] for f in range(r)])
        return [out.copy() for _ in range(r)]
    chunks = {c: flat_chunk(algo, c, inputs, lay, num, channels, ranks_per_node) for c in range(r)}
    if collective == "reduce-scatter":
        return [chunks[own[q]] for q in range(r)]
    out = np.concatenate([chunks[c] for c in range(r)])
    return [out.copy() for _ in range(r)]


def gce_ring_chunk(n, c, val, dt):
    """Chunk c of the GCE ring over n members whose every hop crosses a node (docs/MODEL.md G6,
    H8): each value sent is quantized on the way (one GCE round trip), the owner quantizes the
    final sum once more, and every member holds its bytes. RNE only."""
    acc = val(c)
    for k in range(1, n):
        acc = allreduce_ref.quantize(acc, dt)
        acc = (acc.astype(np.float32) + val((c + k) % n).astype(np.float32)).astype(dt)
    return allreduce_ref.quantize(acc, dt)


def hier(intra, inter, x, y, collective, inputs, num, gce=False):
    """A hierarchical collective over x nodes of y ranks: every rank's output. With `gce`, the
    inter-node ring compresses every hop (all-reduce, RNE)."""
    r, n = x * y, len(inputs[0])
    assert len(inputs) == r
    lay = Layout(r, n, num.dt.itemsize, 2 * r)
    start = lay.start
    ob = owner_of(intra, y)
    on = owner_of("mesh" if inter == "single-step-mesh" else inter, x)
    owner = [ob[q % y] * x + on[q // y] for q in range(r)]
    fine = lambda f: slice(start(f), start(f + 1))
    if collective == "all-gather":
        out = np.concatenate([inputs[owner.index(f)][start(f):start(f + 1)] for f in range(r)])
        return [out.copy() for _ in range(r)]
    # Stage 1: every node's intra-node reduce-scatter of A over its blocks, into T.
    t = {}  # global rank -> its block's node sum
    for nd in range(x):
        g = lambda i: nd * y + i
        for b in range(y):
            blk = slice(start(b * x), start((b + 1) * x))
            holder, v = reduce_chunk(intra, y, b, lambda i: inputs[g(i)][blk], lambda i, s: lay.p(g(i), s * x),
                                     lambda i: lay.t(g(i)), num)
            assert ob[holder] == b
            t[g(holder)] = v
    # Stage 2: every local index's inter-node stage over the fine chunks of its block.
    outs = [None] * r
    fine_val = {}
    for i in range(y):
        b = ob[i]
        g = lambda nd: nd * y + i
        sub = lambda j: slice(start(b * x + j) - start(b * x), start(b * x + j + 1) - start(b * x))
        if inter == "single-step-mesh":
            for nd in range(x):
                whole = num.reduce([t[g(k)] for k in range(x)], lay.w(g(nd), b * x))
                outs[g(nd)] = ("block", b, whole)
            continue
        if gce:
            for j in range(x):
                fine_val[b * x + j] = gce_ring_chunk(x, j, lambda nd: t[g(nd)][sub(j)], num.dt)
            continue
        for j in range(x):
            holder, v = reduce_chunk(inter, x, j, lambda nd: t[g(nd)][sub(j)],
                                     lambda nd, s: lay.p(g(nd), r + b * x + s), lambda nd: lay.w(g(nd), b * x + j), num)
            fine_val[b * x + j] = v
    if collective == "reduce-scatter":
        return [fine_val[owner[q]] for q in range(r)]
    if inter == "single-step-mesh":
        # Every rank's block is its own rounding; the intra-node all-gather copies each local
        # rank's block to its node's ranks.
        res = []
        for q in range(r):
            nd = q // y
            parts = []
            for b in range(y):
                holder = nd * y + ob.index(b)
                parts.append(outs[holder][2])
            res.append(np.concatenate(parts))
        return res
    out = np.concatenate([fine_val[f] for f in range(r)])
    return [out.copy() for _ in range(r)]
