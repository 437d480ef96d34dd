"""The orders the real libraries' all-reduces sum in, written from what their documentation and
source say (read, not copied) and checked against their outputs with scripts/tree_ref.py: each
function returns a list of classes (first, last, rank or None, expr, accum) over N elements —
the ground truth `cce reveal` is held to. A tree never depends on the values; rank is None
where every rank's output has the same tree (so in all of these).

Open MPI 4.1 (coll/base, algorithms forced in coll/tuned):
- 1 basic linear: a linear reduce to rank 0 then a broadcast. Rank 0 starts from rank R-1's
  vector and adds R-2, R-3, …, 0 into it: ((((R-1)+(R-2))+…)+0).
- 2 nonoverlapping: tuned's own reduce to 0 (its fixed decision: linear, or a binary tree, or a
  binomial tree by size and bytes) then a broadcast.
- 3 recursive doubling: with p' the largest power of two <= R and x = R - p' extra ranks, ranks
  2i and 2i+1 (i < x) are summed first and act as one; then log2 p' butterfly steps, each adding
  the partner's partial sum (IEEE add commutes, so both partners hold the same bits).
- 4 ring: the vector cut in R blocks (the first N mod R blocks one element longer); block b is
  started by rank b and passed up the ring, each rank adding its own element:
  (((b+(b+1))+(b+2))+…+(b-1)). Fewer elements than ranks: recursive doubling.
- 5 segmented ring: with the default segment size (0) it is the ring; with a segment size set
  (checked with coll_tuned_allreduce_algorithm_segmentsize 64 at R = 4, 5, 8) it pipelines
  each block in segments, every one still started by rank b: the ring's classes again.
- 6 rabenseifner (reduce-scatter by recursive halving, then an allgather): the same pairs-first
  handling of the extra ranks and the same butterfly partners as recursive doubling, so every
  element has recursive doubling's tree.

gloo (torch.distributed's CPU backend): a ring reduce-scatter + allgather over R chunks; chunk
c's sum runs *down* the ring: from rank c-1, adding c-2, c-3, …, c (each chunk ends at the rank
that owns it). See ``gloo_ring``.

XLA's CPU psum: every device sums the R buffers itself, in device order; fp32 adds in fp32,
bf16 / fp16 are added in fp32 and rounded once: (0+1+…+R-1).
"""
import sys
import os

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "scripts"))
from tree_ref import fmt  # noqa: E402


def chain(order):
    """A left-to-right sequence of two-operand adds over the given ranks."""
    t = order[0]
    for r in order[1:]:
        t = [t, r]
    return t


def blocks(n, parts):
    """Open MPI's block split: parts blocks, the first n mod parts one element longer."""
    late, split = divmod(n, parts)
    out, start = [], 0
    for b in range(parts):
        size = late + 1 if b < split else late
        out.append((start, start + size - 1))
        start += size
    return out


def whole(n, tree, accum="fp32"):
    return [(0, n - 1, None, fmt(tree), accum)]


# ---------------------------------------------------------------- Open MPI


def ompi_linear_tree(r):
    return chain(list(range(r - 1, -1, -1)))


def ompi_recursive_doubling_tree(r):
    pof2 = 1
    while pof2 * 2 <= r:
        pof2 *= 2
    extra = r - pof2
    # the partial sum each new rank holds after the pairs-first step
    part = [[2 * v, 2 * v + 1] if v < extra else v + extra for v in range(pof2)]
    d = 1
    while d < pof2:
        part = [[part[v], part[v ^ d]] for v in range(pof2)]
        d *= 2
    return part[0]


def _reduce_tree(r, children):
    """A tree reduce to rank 0: a rank adds its children's partial sums to its own, one by one
    in the given order."""
    def node(v):
        t = v
        for c in children(v):
            t = [t, node(c)]
        return t
    return node(0)


def ompi_binary_children(r, fanout=2):
    """Open MPI's n-ary tree rooted at 0 (coll_base_topo's build_tree): level l holds
    fanout**l consecutive ranks; the node at position p of a level of width w has the ranks at
    positions p, p+w, p+2w, … of the next level as children."""
    levels, start, width = [], 0, 1
    while start < r:
        levels.append(list(range(start, min(r, start + width))))
        start += width
        width *= fanout
    kids = {v: [] for v in range(r)}
    for l in range(len(levels) - 1):
        w = fanout ** l
        nxt = levels[l + 1]
        for p, v in enumerate(levels[l]):
            kids[v] = [nxt[q] for q in range(p, len(nxt), w)][:fanout]
    return lambda v: kids[v]


def ompi_binomial_children(r):
    """Open MPI's binomial tree rooted at 0: rank v's children are v + 2^k for every 2^k below
    v's lowest set bit (all k for rank 0), nearest first."""
    def kids(v):
        out, m = [], 1
        while m < r and not (v & m):
            if v + m < r:
                out.append(v + m)
            m <<= 1
        return out
    return kids


def ompi_tuned_reduce_alg(r, nbytes):
    """coll/tuned's fixed decision for a commutative reduce (4.1): which algorithm it runs."""
    if r < 4:
        if nbytes < 8:
            return "rabenseifner"
        if nbytes < 16:
            return "binary"
        if nbytes < 32:
            return "pipeline"
        if nbytes < 262144:
            return "linear"
        return "other"
    if r < 8:
        return "binary" if nbytes < 4096 else "other"
    if r < 16:
        return "binary" if nbytes < 8192 else "binomial"
    if r < 32:
        return "binary" if nbytes < 4096 else "binomial"
    return "binomial" if r < 256 else "other"


def ompi_nonoverlapping_tree(r, nbytes):
    alg = ompi_tuned_reduce_alg(r, nbytes)
    if alg == "linear":
        return ompi_linear_tree(r)
    if alg == "binary":
        return _reduce_tree(r, ompi_binary_children(r))
    if alg == "binomial":
        return _reduce_tree(r, ompi_binomial_children(r))
    raise NotImplementedError(f"tuned reduce {alg} at R={r}, {nbytes} bytes")


def ompi_ring_classes(r, n):
    if n < r:
        return whole(n, ompi_recursive_doubling_tree(r))
    return [(f, l, None, fmt(chain([(b + k) % r for k in range(r)])), "fp32")
            for b, (f, l) in enumerate(blocks(n, r))]


def ompi(algo, r, n, dtype="fp32"):
    """The classes of Open MPI's allreduce algorithm number algo (ompi_info's numbering)."""
    assert dtype == "fp32"
    if algo == 1:
        return whole(n, ompi_linear_tree(r))
    if algo == 2:
        return whole(n, ompi_nonoverlapping_tree(r, 4 * n))
    if algo in (3, 6):
        return whole(n, ompi_recursive_doubling_tree(r))
    if algo in (4, 5):
        return ompi_ring_classes(r, n)
    raise ValueError(algo)


# ---------------------------------------------------------------- gloo, XLA


def gloo_layout(r, n, elem_bytes, max_segment_bytes=None):
    """gloo's ring layout (gloo/allreduce.cc, as read): segments of about a 2R-th of the bytes
    (rounded up to whole elements, capped by the maximum segment size), their number rounded
    up to a multiple of R with at least 2R; chunk c is the c-th run of numSegments/R segments.
    Returns each chunk's (first, last) element range (chunks past the end are left out)."""
    total = n * elem_bytes
    seg = -(-total // (2 * r))
    if max_segment_bytes is not None:
        seg = min(seg, elem_bytes * (max_segment_bytes // elem_bytes))
    seg = -(-seg // elem_bytes) * elem_bytes
    nseg = max(-(-total // seg), 2 * r)
    nseg = -(-nseg // r) * r
    per_chunk = (nseg // r) * (seg // elem_bytes)
    out = []
    for c in range(r):
        first = c * per_chunk
        if first < n:
            out.append((first, min(n, first + per_chunk) - 1))
    return out


def gloo_ring(r, n, dtype):
    """gloo's ring: chunk c is first sent by rank c-1 to rank c-2, which adds its own element,
    and so on down the ring, ending at rank c: ((c-1)+(c-2))+…+c. Two-operand adds only, so
    16-bit types are the same bits whatever width gloo adds in."""
    elem = 4 if dtype == "fp32" else 2
    acc = "fp32" if dtype == "fp32" else dtype
    return [(f, l, None, fmt(chain([(c - 1 - k) % r for k in range(r)])), acc)
            for c, (f, l) in enumerate(gloo_layout(r, n, elem))]


def xla_psum(r, n, dtype):
    tree = list(range(r))
    if dtype == "fp32":
        return whole(n, chain(tree), "fp32")
    return whole(n, tree if r > 2 else tree, "fp32")
