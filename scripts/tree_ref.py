"""An independent numpy reference of summation trees in the order grammar, the oracle that
`cce reveal`'s tests compare with.

Written from the grammar as docs/forensics.md and docs/identify.md state it, not from cce's
code: a rank number is that rank's input element; ``(a+b+c)`` adds its operands left to right in
the accumulate dtype and rounds the sum once to the buffer dtype D; every pair of parentheses is
one rounding; the whole expression is parenthesised.

What it holds:
- ``parse`` / ``fmt``: the grammar to a tree (an int, or a list of operands) and back;
- ``evaluate``: a tree over per-rank arrays, vectorised over elements, for accum fp32 (each node
  sums in float32, then one round-to-nearest-even cast to D) or accum = D (a cast after every add);
- ``canonical``: the one spelling of a tree that the comparisons use, applying exactly the
  equivalences that hold for every input (see its docstring);
- ``random_binary`` / ``random_multiway``: seeded random trees over a random permutation of R
  ranks;
- ``all_trees`` / ``search``: every tree over R <= 5 leaves (6 or 7 in fp32, where only binary
  trees are distinct), deduplicated by canonical form, and which of them reproduce an observed
  output element by element;
- ``classes_of``: elements grouped into ranges that share one tree (the shape of the answer
  ``cce reveal`` gives).

Run it as a script for a self-check of the equivalences it claims.
"""
import itertools
import os
import sys

import ml_dtypes
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "python"))
from order_grammar import parse  # noqa: E402  (the shared reading of the grammar)

DTYPES = {"fp32": np.float32, "bf16": ml_dtypes.bfloat16, "fp16": np.float16}
ACCUMS = ("fp32", "bf16", "fp16")


def np_dtype(name):
    return np.dtype(DTYPES[name])


def fmt(tree):
    """The grammar's text of a tree (the inverse of ``parse``)."""
    if isinstance(tree, int):
        return str(tree)
    return "(" + "+".join(fmt(k) for k in tree) + ")"


def leaves(tree):
    if isinstance(tree, int):
        return [tree]
    return [x for k in tree for x in leaves(k)]


def is_binary(tree):
    return isinstance(tree, int) or (len(tree) == 2 and all(is_binary(k) for k in tree))


# ---------------------------------------------------------------- evaluation


def _round(x32, dtype):
    """One round-to-nearest-even of float32 values to the buffer dtype, back as float32."""
    return x32.astype(np_dtype(dtype)).astype(np.float32)


def evaluate(tree, inputs, dtype, accum):
    """The tree's value per element: ``inputs[r]`` is rank r's array (buffer dtype), the result
    an array of the buffer dtype.

    accum fp32: a node adds its operands left to right in float32 and rounds the sum once to
    D. accum = D: every add is rounded to D (an add of two D values done in float32 and then
    cast is correctly rounded for bf16 and fp16: float32 has more than 2p+2 bits)."""
    if accum not in (dtype, "fp32"):
        raise ValueError(f"accum {accum} with dtype {dtype}: only fp32 or the buffer dtype")
    xs = [np.asarray(a).astype(np.float32) for a in inputs]

    def go(t):
        if isinstance(t, int):
            return xs[t]
        vals = [go(k) for k in t]
        acc = vals[0]
        for v in vals[1:]:
            acc = acc + v  # float32 add
            if accum != "fp32":
                acc = _round(acc, dtype)
        return _round(acc, dtype)

    return go(tree).astype(np_dtype(dtype))


# ---------------------------------------------------------------- canonical form


def _binarise(tree):
    """(a+b+c) as ((a+b)+c): the same bits when every add rounds to D."""
    if isinstance(tree, int):
        return tree
    kids = [_binarise(k) for k in tree]
    acc = kids[0]
    for k in kids[1:]:
        acc = [acc, k]
    return acc


def _commute(tree):
    """Each node's first two operands in a fixed order (IEEE add commutes); returns the text."""
    if isinstance(tree, int):
        return str(tree)
    kids = [_commute(k) for k in tree]
    first = sorted(kids[:2], key=lambda s: (len(s), s))
    return "(" + "+".join(first + kids[2:]) + ")"


def canonical(expr, accum, dtype):
    """(expr, accum) spelt one way, applying exactly these equivalences:
    - the first two operands of a node commute (the first add is a+b = b+a);
    - when accum is D, ``(a+b+c)`` = ``((a+b)+c)`` (every add rounds to D anyway);
    - for D in {bf16, fp16}, a tree whose nodes all have two operands gives the same bits
      with accum fp32 or D (one add, double rounding through float32 is innocuous), so it is
      spelt with accum D.
    Nothing else (no reassociation, no commuting of later operands)."""
    tree = parse(expr) if isinstance(expr, str) else expr
    if accum == dtype:
        tree = _binarise(tree)
    if dtype in ("bf16", "fp16") and is_binary(tree):
        accum = dtype
    return _commute(tree), accum


# ---------------------------------------------------------------- random trees


def random_binary(ranks, rng):
    """A random binary tree over a random permutation of the ranks."""
    items = [int(r) for r in rng.permutation(ranks)]
    while len(items) > 1:
        i = int(rng.integers(len(items) - 1))
        items[i : i + 2] = [[items[i], items[i + 1]]]
    return items[0]


def random_multiway(ranks, rng, max_kids=4):
    """A random tree over a random permutation of the ranks whose nodes take 2..max_kids
    adjacent operands (at least one node with three or more when R >= 3)."""
    while True:
        items = [int(r) for r in rng.permutation(ranks)]
        while len(items) > 1:
            k = int(rng.integers(2, min(max_kids, len(items)) + 1))
            i = int(rng.integers(len(items) - k + 1))
            items[i : i + k] = [items[i : i + k]]
        if ranks < 3 or not is_binary(items[0]):
            return items[0]


# ---------------------------------------------------------------- exhaustive search


def _ordered_partitions(s, lead_unordered=True):
    """Every way to split the tuple s into k >= 2 ordered nonempty blocks (the operands of one
    node), with the first two blocks as an unordered pair (they commute)."""
    s = tuple(s)
    n = len(s)
    out = []
    # assign each element a block label, then order blocks; simpler: recursive generation
    def rec(rest, blocks):
        if not rest:
            if len(blocks) >= 2:
                out.append(blocks)
            return
        # choose the next block as any nonempty subset of rest
        rest_l = list(rest)
        for size in range(1, len(rest_l) + 1):
            for comb in itertools.combinations(rest_l, size):
                remaining = tuple(x for x in rest_l if x not in comb)
                rec(remaining, blocks + [comb])

    rec(s, [])
    seen = set()
    res = []
    for b in out:
        if lead_unordered:
            key = (frozenset([b[0], b[1]]),) + tuple(b[2:])
        else:
            key = tuple(b)
        if key in seen:
            continue
        seen.add(key)
        res.append(b)
    assert n == 0 or res or n == 1
    return res


def all_trees(ranks, dtype, multiway=None):
    """Every distinct (canonical expr, accum) over ranks 0..R-1: every shape, leaf order and
    node width, with both accumulate widths where they differ. fp32 (accum = D): the binary
    trees only; bf16 / fp16: binary trees with accum D, and trees with a node of three or more
    operands with accum D (= some binary tree, so skipped) or fp32."""
    if multiway is None:
        multiway = dtype != "fp32"
    memo = {}

    def trees(s):
        if s in memo:
            return memo[s]
        if len(s) == 1:
            res = [s[0]]
        else:
            res = []
            for blocks in _ordered_partitions(s):
                if not multiway and len(blocks) > 2:
                    continue
                for kids in itertools.product(*(trees(b) for b in blocks)):
                    res.append(list(kids))
        memo[s] = res
        return res

    out = {}
    for t in trees(tuple(range(ranks))):
        accs = ["fp32"] if dtype == "fp32" else ([dtype] if is_binary(t) else ["fp32"])
        for a in accs:
            key = canonical(t, a, dtype)
            out.setdefault(key, t)
    return [(expr, acc) for (expr, acc) in out]


SPANS = {"fp32": 8, "bf16": 30, "fp16": 12}


def random_inputs(ranks, elems, dtype, rng, span=None):
    """Inputs that differ per rank and per element: magnitudes over 2*span+1 binades, both
    signs, and per element one random rank holding (about) minus the others' sum. The total
    is then small next to the partial sums, so the result is mostly the tree's own rounding
    errors: different trees disagree far more often than on plain random values (where the
    final rounding hides the intermediate ones). The 16-bit types get wider spans: summed in
    float32, their values must lie far apart before a float32 add rounds at all (the order of
    a node's operands is otherwise invisible)."""
    dt = np_dtype(dtype)
    span = SPANS[dtype] if span is None else span
    x = rng.uniform(1.0, 2.0, size=(ranks, elems)) * np.exp2(rng.integers(-span, span + 1, size=(ranks, elems)))
    x = (x * rng.choice([-1.0, 1.0], size=(ranks, elems))).astype(np.float32).astype(dt).astype(np.float64)
    if ranks > 2:
        j = rng.integers(ranks, size=elems)
        cols = np.arange(elems)
        x[j, cols] = 0.0
        x[j, cols] = -x.sum(axis=0)
    x = x.astype(np.float32)
    return [x[r].astype(dt) for r in range(ranks)]


def match_matrix(candidates, inputs, output, dtype):
    """A boolean matrix [candidate, element]: the candidate's bits equal the output's."""
    out_bits = np.asarray(output).view(np.uint16 if np_dtype(dtype).itemsize == 2 else np.uint32)
    rows = []
    for expr, acc in candidates:
        v = evaluate(parse(expr), inputs, dtype, acc)
        rows.append(v.view(out_bits.dtype) == out_bits)
    return np.array(rows)


def search(run, ranks, elems, dtype, trials=10, seed=0, candidates=None):
    """For a black box ``run(inputs) -> outputs`` (lists of per-rank arrays), each rank's and
    element's set of candidate trees (indices into the returned ``candidates``) that reproduce
    its output on every one of ``trials`` random inputs.

    Returns (candidates, ok) with ok a boolean array [rank, candidate, element]."""
    if candidates is None:
        candidates = all_trees(ranks, dtype)
    rng = np.random.default_rng(seed)
    ok = np.ones((ranks, len(candidates), elems), dtype=bool)
    for _ in range(trials):
        inputs = random_inputs(ranks, elems, dtype, rng)
        outputs = run(inputs)
        for r in range(ranks):
            ok[r] &= match_matrix(candidates, inputs, outputs[r], dtype)
    return candidates, ok


def classes_of(candidates, ok):
    """The answer's shape from a search: maximal element ranges whose elements share exactly one
    candidate, per rank where ranks differ. Returns (classes, problems): classes as
    (first, last, rank or None, expr, accum), problems as text for elements that no candidate
    or more than one candidate explains."""
    ranks, _, elems = ok.shape
    problems = []
    per_rank = []
    for r in range(ranks):
        sets = [[candidates[i] for i in np.flatnonzero(ok[r, :, e])] for e in range(elems)]
        labels = [s[0] if len(s) == 1 else None for s in sets]
        # an element that a few candidates explain, one of them its neighbour's tree, joins that
        # neighbour's class (a rare element on which two trees happen to round alike)
        for _ in range(elems):
            changed = False
            for e in range(elems):
                if labels[e] is None and sets[e]:
                    for n in (e - 1, e + 1):
                        if 0 <= n < elems and labels[n] is not None and labels[n] in sets[e]:
                            labels[e] = labels[n]
                            changed = True
                            break
            if not changed:
                break
        for e in range(elems):
            if labels[e] is None:
                problems.append(f"rank {r} element {e}: {len(sets[e])} candidates {sets[e][:4]}")
        per_rank.append(labels)
    same = all(per_rank[r] == per_rank[0] for r in range(ranks))
    out = []
    for r in ([0] if same else range(ranks)):
        labels = per_rank[r]
        start = 0
        for e in range(1, elems + 1):
            if e == elems or labels[e] != labels[start]:
                if labels[start] is not None:
                    expr, acc = labels[start]
                    out.append((start, e - 1, None if same else r, expr, acc))
                start = e
    return out, problems


def canon_classes(classes, dtype):
    """Classes (first, last, rank, expr, accum) with each tree in canonical form."""
    return sorted((f, l, r if r is not None else -1) + canonical(x, a, dtype) for f, l, r, x, a in classes)


def apply_classes(classes, inputs, dtype):
    """Outputs per rank from classes (first, last, rank or None, expr, accum): what a black box
    that sums each class with its tree returns."""
    ranks = len(inputs)
    elems = len(inputs[0])
    outs = [np.zeros(elems, dtype=np_dtype(dtype)) for _ in range(ranks)]
    filled = np.zeros((ranks, elems), dtype=bool)
    for first, last, rank, expr, acc in classes:
        sl = slice(first, last + 1)
        v = evaluate(parse(expr), [x[sl] for x in inputs], dtype, acc)
        for r in range(ranks) if rank is None else [rank]:
            outs[r][sl] = v
            filled[r, sl] = True
    assert filled.all(), "classes do not cover every rank's elements"
    return outs


def _self_check():
    rng = np.random.default_rng(1)
    for dtype in ("fp32", "bf16", "fp16"):
        for ranks in (2, 3, 4, 5, 7):
            for _ in range(20):
                t = random_multiway(ranks, rng) if dtype != "fp32" else random_binary(ranks, rng)
                acc = "fp32" if dtype == "fp32" else str(rng.choice(["fp32", dtype]))
                x = random_inputs(ranks, 512, dtype, rng)
                c, a = canonical(fmt(t), acc, dtype)
                v1 = evaluate(t, x, dtype, acc)
                v2 = evaluate(parse(c), x, dtype, a)
                assert (v1.view(np.uint8) == v2.view(np.uint8)).all(), (fmt(t), acc, c, a)
    # the number of distinct trees: (2R-3)!! binary trees in fp32
    assert [len(all_trees(r, "fp32")) for r in (2, 3, 4, 5)] == [1, 3, 15, 105]
    print("tree_ref: self-check passed;", {r: len(all_trees(r, "bf16")) for r in (2, 3, 4, 5)},
          "bf16 candidates at R = 2..5")


if __name__ == "__main__":
    _self_check()
