"""cce.element — one element's story — against an independent numpy / ml_dtypes reference.

The reference knows only the documented grammar (docs/forensics.md): a rank number is that
rank's input element; ``a+b+…`` combines left to right in the accumulate dtype, each combine
rounded to nearest even into it (add: the sum; avg: an FMA with scale fl32(1/R) on every input
and 1 on every partial, one rounding; min / max: no rounding); every pair of parentheses rounds
once, to nearest even, to the buffer dtype. From that alone it

- evaluates the story's ``expr`` over the inputs and gets the output's bits;
- recomputes every reduce step from its ``operands`` (their bits, in order) and gets the step's
  ``rounded`` bits;
and the output equals the full all-reduce's (``cce.allreduce``), rank by rank.
"""
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

import cce
from order_grammar import parse

NP = {"bf16": ml_dtypes.bfloat16, "fp16": np.float16, "fp32": np.float32}
UINT = {2: np.uint16, 4: np.uint32}


def inputs(ranks, n, dtype, seed):
    """Per rank and element different values in [-1, 1) (one generator per rank)."""
    return [np.random.default_rng(seed * 100 + r).uniform(-1, 1, n).astype(NP[dtype]) for r in range(ranks)]


def bits(x, dtype):
    return int(np.asarray(x, dtype=NP[dtype]).view(UINT[np.dtype(NP[dtype]).itemsize]))


def value(b, dtype):
    return float(np.array([b], dtype=UINT[np.dtype(NP[dtype]).itemsize]).view(NP[dtype])[0])


def f32_nearest(fr):
    """The float32 nearest the exact rational ``fr``, ties to even (no double rounding)."""
    f = np.float32(float(fr))
    cands = [np.nextafter(f, np.float32(-np.inf)), f, np.nextafter(f, np.float32(np.inf))]
    return min(cands, key=lambda c: (abs(Fraction(float(c)) - fr), int(np.float32(c).view(np.uint32)) & 1))


def to_acc(x, accum):
    return np.asarray(x, dtype=NP[accum])[()]


def combine(op, accum, acc, x, scale):
    """One documented combine in the accumulate dtype (RNE)."""
    if op == "min":
        return min(acc, x)
    if op == "max":
        return max(acc, x)
    if op == "avg":
        return f32_nearest(Fraction(float(x)) * Fraction(float(scale)) + Fraction(float(acc)))
    exact = float(acc) + float(x)  # two bf16/fp16/fp32 values of [-R, R]: exact in float64
    return np.asarray(exact).astype(NP[accum])[()]


def reduce_values(op, accum, dtype, vals, scales):
    """A packet's reduce: combine in order (avg starts from 0), round once to the dtype."""
    if op == "avg":
        acc = np.float32(0)
        for x, s in zip(vals, scales):
            acc = combine(op, accum, acc, to_acc(x, accum), s)
    else:
        acc = to_acc(vals[0], accum)
        for x in vals[1:]:
            acc = combine(op, accum, acc, to_acc(x, accum), None)
    return np.asarray(acc).astype(NP[dtype])[()]



def evaluate(tree, leaf, op, accum, dtype, ranks):
    """The grammar's value of ``tree``: rank r is ``leaf(r)``; each list reduces and rounds."""
    if isinstance(tree, int):
        return leaf(tree)
    vals = [evaluate(t, leaf, op, accum, dtype, ranks) for t in tree]
    inv = np.float32(1) / np.float32(ranks)
    scales = [inv if isinstance(t, int) else np.float32(1) for t in tree]
    return reduce_values(op, accum, dtype, vals, scales)


def sequential(order):
    tree = [order[0], order[1]]
    for r in order[2:]:
        tree = [tree, r]
    return tree


CASES = [
    (algo, ranks, op, dtype, accum)
    for algo, rank_counts in [("ring", (4, 5)), ("ring-2r2w", (5,)), ("kangaring", (4, 5)), ("mesh", (5,)),
                              ("rdh", (4, 8))]
    for ranks in rank_counts
    for op, dtype, accum in [("add", "bf16", "fp32"), ("add", "bf16", "bf16"), ("add", "fp16", "fp32"),
                             ("add", "fp32", "fp32"), ("avg", "bf16", "fp32"), ("min", "bf16", "fp32"),
                             ("max", "fp16", "fp32")]
]


@pytest.mark.parametrize("algo,ranks,op,dtype,accum", CASES)
def test_the_story_follows_the_grammar_and_the_run(algo, ranks, op, dtype, accum):
    n = 1000
    xs = inputs(ranks, n, dtype, seed=ranks + len(algo))
    outs, _ = cce.allreduce(xs, algo=algo, op=op, accum=accum, check="none")
    starts = sorted({c * n // ranks for c in range(ranks)} | {c * n // ranks - 1 for c in range(1, ranks)})
    for index in starts + [n // 2, n - 1]:
        for rank in (0, ranks - 1):
            s = cce.element(xs, index, algo=algo, op=op, accum=accum, rank=rank)
            assert (s["index"], s["rank"]) == (index, rank)
            out = int(s["output"]["bits"], 16)
            assert out == bits(outs[rank][index], dtype), (algo, index, rank)
            # The grammar alone, over the inputs, gives the output.
            got = evaluate(parse(s["expr"]), lambda r: xs[r][index], op, accum, dtype, ranks)
            assert bits(got, dtype) == out, (algo, s["expr"])
            tree = parse(s["expr"])
            leaves = []

            def walk(t):
                if isinstance(t, int):
                    leaves.append(t)
                else:
                    for k in t:
                        walk(k)
            walk(tree)
            assert s["leaves"] == leaves and sorted(leaves) == list(range(ranks))
            made = {}
            for st in s["steps"]:
                ops = st["operands"]
                for o in ops:
                    b = int(o["bits"], 16)
                    if o["expr"].isdigit():
                        assert b == bits(xs[int(o["expr"])][index], dtype)
                    else:
                        assert made[o["expr"]] == b, (o["expr"], st)
                if st["kind"] == "reduce" and len(ops) > 1:
                    sub = parse(st["expr"])
                    vals = [value(int(o["bits"], 16), dtype) for o in ops]
                    inv = np.float32(1) / np.float32(ranks)
                    scales = [inv if isinstance(t, int) else np.float32(1) for t in sub]
                    want = reduce_values(op, accum, dtype, [np.asarray(v, NP[dtype])[()] for v in vals], scales)
                    assert int(st["rounded"]["bits"], 16) == bits(want, dtype), st
                    assert st["rounding"]["mode"] in ("exact", "rne")
                made[st["expr"]] = int(st["rounded"]["bits"], 16)
            assert made[s["expr"]] == out


def test_the_ring_order_is_the_documented_one():
    """Ring: chunk c is ((IN_c + IN_{c+1}) + …) + IN_{c-1}, rounded after each +."""
    xs = inputs(6, 600, "bf16", 3)
    for c in range(6):
        s = cce.element(xs, c * 100 + 7)
        assert s["chunk"] == c
        want = sequential([(c + k) % 6 for k in range(6)])
        assert parse(s["expr"]) == want


def test_stochastic_rounding_is_recorded():
    """SR: the random bits and P(up) of every rounding to bf16, and `up` agreeing with them."""
    xs = inputs(4, 400, "bf16", 5)
    outs, _ = cce.allreduce(xs, algo="ring", op="add", rounding="sr", seed=9, check="none")
    s = cce.element(xs, 123, algo="ring", op="add", rounding="sr", seed=9)
    assert int(s["output"]["bits"], 16) == bits(outs[0][123], "bf16")
    sr = [st["rounding"] for st in s["steps"] if st["rounding"]["mode"] == "sr"]
    assert sr, s["steps"]
    for r in sr:
        frac = int(round(r["p_up"] * 2**32))
        assert r["up"] == (frac + int(r["random"], 16) >= 2**32)


def test_gce_hops_show_their_quantisation():
    xs = inputs(4, 4096, "bf16", 7)
    outs, _ = cce.allreduce(xs, algo="ring", op="add", compress="gce", ranks_per_node=2, check="none")
    s = cce.element(xs, 1500, algo="ring", op="add", compress="gce", ranks_per_node=2, rank=3)
    assert int(s["output"]["bits"], 16) == bits(outs[3][1500], "bf16")
    assert s["expr"].startswith("g(")
    q = [st["gce"] for st in s["steps"] if st["gce"]]
    assert q and all(g["codec"] == "MODEL" for g in q)
    for g in q:
        first, last = g["block"]
        assert last - first < 32 and first <= 1500 <= last


def test_out_of_range_raises():
    xs = inputs(4, 100, "bf16", 1)
    with pytest.raises(cce.CceError, match="element 100"):
        cce.element(xs, 100)
    with pytest.raises(cce.CceError, match="rank 4"):
        cce.element(xs, 3, rank=4)
