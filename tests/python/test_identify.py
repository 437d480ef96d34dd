"""cce.identify / cce identify against outputs made here, by numpy and ml_dtypes following the
documented order grammar (a rank is its value, ``+`` adds in float32, every parenthesis rounds
to bf16) — orders cce's algorithms use and orders they never use (other start ranks, the other
direction, trees) — never by cce's code."""
import json
import os

import ml_dtypes
import numpy as np
import pytest

import cce
from order_grammar import parse

BF16 = ml_dtypes.bfloat16



def evaluate(tree, xs, round_=lambda a: a.astype(BF16)):
    """``tree`` over the ranks' bf16 arrays ``xs``: float32 adds, one rounding per parenthesis."""
    if isinstance(tree, int):
        return xs[tree]
    acc = evaluate(tree[0], xs, round_).astype(np.float32)
    for t in tree[1:]:
        acc = acc + evaluate(t, xs, round_).astype(np.float32)
    return round_(acc)


def seq(ranks, start, up=True):
    order = [(start + k) % ranks if up else (start - k) % ranks for k in range(ranks)]
    text = f"({order[0]}+{order[1]})"
    for r in order[2:]:
        text = f"({text}+{r})"
    return text


def pairwise(ranks):
    def tree(rs):
        if len(rs) == 1:
            return str(rs[0])
        mid = (len(rs) + 1) // 2
        return f"({tree(rs[:mid])}+{tree(rs[mid:])})"
    return tree(list(range(ranks)))


def single(ranks):
    return "(" + "+".join(str(r) for r in range(ranks)) + ")"


def inputs(ranks, n, seed):
    """bf16 inputs, different per rank and element, over several binades and both signs."""
    rng = np.random.default_rng(seed)
    mant = rng.uniform(1, 2, (ranks, n)) * rng.choice([-1, 1], (ranks, n))
    return [(m * 2.0 ** rng.integers(-6, 7, n)).astype(BF16) for m in mant]


def bits(a):
    return np.asarray(a).view(np.uint16)


def by_chunks(xs, orders):
    """Chunk c (of len(orders) equal chunks) made by orders[c]."""
    n = len(xs[0])
    out = np.empty(n, BF16)
    k = len(orders)
    for c, text in enumerate(orders):
        lo, hi = c * n // k, (c + 1) * n // k
        out[lo:hi] = evaluate(parse(text), [x[lo:hi] for x in xs])
    return out


def candidate_at(report, i):
    for m in report["map"]:
        if m["first"] <= i <= m["last"]:
            return m
    return None


def test_names_the_order_of_every_chunk_element_for_element():
    ranks, n = 8, 8 * 512
    xs = inputs(ranks, n, 1)
    # Orders cce's algorithms never use: other starts, downward, the tree, one 8-source reduce.
    orders = [seq(8, 3, False), seq(8, 5), pairwise(8), seq(8, 0, False), single(8), seq(8, 6),
              seq(8, 2, False), seq(8, 7)]
    # (A parenthesis of eight adds them left to right in float32 and rounds once: the single
    # reduce.)
    out = by_chunks(xs, orders)
    r = cce.identify(xs, out, observed_rank=3)
    assert r["unexplained"]["count"] == 0
    assert r["total"] == n
    for c, text in enumerate(orders):
        lo, hi = c * n // 8, (c + 1) * n // 8
        wrong = [i for i in range(lo, hi) if (candidate_at(r, i) or {}).get("expr") != text]
        # Element for element, but where the previous chunk's order still explains the first
        # elements of this one (both orders give the same bits there).
        assert all(i < lo + 8 for i in wrong), (c, text, wrong[:10])
        for i in wrong:
            m = candidate_at(r, i)
            got = evaluate(parse(m["expr"]), [x[i:i + 1] for x in xs])
            assert bits(got)[0] == bits(out)[i]
    # Every range's order, evaluated here, gives the observed bits on every element it claims.
    for m in r["map"]:
        sl = slice(m["first"], m["last"] + 1)
        got = evaluate(parse(m["expr"]), [x[sl] for x in xs])
        assert m["explained"] == np.count_nonzero(bits(got) == bits(out[sl]))
        assert m["unexplained"] == 0
        assert m["leaves"] == [int(t) for t in m["expr"].replace("(", " ").replace(")", " ").replace("+", " ").split()]


def test_a_single_order_is_named_best_and_the_ring_order_is_cces_ring():
    ranks, n = 4, 4 * 256
    xs = inputs(ranks, n, 2)
    out = evaluate(parse(seq(4, 2, False)), xs)
    r = cce.identify(xs, out)
    best = r["candidates"][0]
    assert r["best"] == best["name"] == "sequential from 2 down"
    assert best["matched"] == best["total"] == n and best["expr"] == seq(4, 2, False)
    assert r["separating"] > 0 and r["candidates"][1]["matched"] < n
    # cce's ring reduces chunk c from rank c upward (docs/collectives.md): made here, named ring.
    ring = by_chunks(xs, [seq(4, c) for c in range(4)])
    r = cce.identify(xs, [ring] * 4)
    assert r["best"] == "ring" and r["candidates"][0]["algo"] == "ring"
    assert r["candidates"][0]["matched"] == n


def test_finds_every_corrupted_element_and_only_those():
    ranks, n = 8, 8 * 512
    xs = inputs(ranks, n, 3)
    out = by_chunks(xs, [seq(8, c) for c in range(8)])
    rng = np.random.default_rng(9)
    bad = np.sort(rng.choice(n, 37, replace=False))
    b = bits(out).copy()
    # A sign flip and a changed low bit: no order gives it.
    b[bad] ^= 0x8001
    out = b.view(BF16)
    r = cce.identify(xs, out)
    assert r["unexplained"]["count"] == 37
    assert r["unexplained"]["first"] == [int(i) for i in bad[:20]]
    assert r["best"] == "ring" and r["candidates"][0]["matched"] == n - 37


def sr_bf16(a, rng):
    """float32 → bf16 by stochastic rounding: 16 random bits added below the kept bits."""
    u = np.asarray(a, np.float32).view(np.uint32).astype(np.uint64)
    u = (u + rng.integers(0, 1 << 16, u.shape, dtype=np.uint64)) >> 16
    return u.astype(np.uint16).view(BF16)


def test_an_sr_output_of_the_right_order_is_consistent_and_most_wrong_orders_are_not():
    ranks, n = 4, 4 * 512
    xs = inputs(ranks, n, 4)
    rng = np.random.default_rng(5)
    text = seq(4, 1)
    out = evaluate(parse(text), xs, round_=lambda a: sr_bf16(a, rng))
    assert np.count_nonzero(bits(out) != bits(evaluate(parse(text), xs))) > n // 4  # SR did round
    r = cce.identify(xs, out, rounding="sr", accum="fp32")
    best = r["candidates"][0]
    assert best["expr"] == text and best["consistent"] == best["total"] == n
    assert best["undecided"] == 0
    wrong = [c for c in r["candidates"] if c["consistent"] is not None and c["expr"] != text]
    inconsistent = [c for c in wrong if c["consistent"] < c["total"]]
    assert len(wrong) >= 8 and len(inconsistent) >= 0.9 * len(wrong), [(c["name"], c["consistent"]) for c in wrong]
    # RNE would call the right order a mismatch at the stochastically rounded elements.
    assert best["matched"] < n


def test_nonfinite_inputs_separate_nothing_and_are_listed():
    xs = inputs(4, 1024, 6)
    xs[2][[5, 700]] = np.array([np.nan, np.inf], BF16)
    out = evaluate(parse(seq(4, 0)), xs)
    r = cce.identify(xs, out)
    assert r["nonfinite"] == {"count": 2, "first": [5, 700]}
    assert r["total"] == 1022 and r["candidates"][0]["matched"] == 1022


def test_bad_input_raises_cce_error():
    xs = inputs(4, 64, 7)
    out = evaluate(parse(seq(4, 0)), xs)
    with pytest.raises(cce.CceError, match="every rank holds the same element count"):
        cce.identify(xs[:3] + [xs[3][:32]], out)
    with pytest.raises(cce.CceError, match="expected 128"):
        cce.identify(xs, out[:63])
    with pytest.raises(cce.CceError, match="integer sums do not depend on the order"):
        cce.identify([x.view(np.int16) for x in xs], out.view(np.int16))
    with pytest.raises(cce.CceError, match="observed rank 4"):
        cce.identify(xs, out, observed_rank=4)
    with pytest.raises(cce.CceError, match="at least two"):
        cce.identify(xs[:1], out)


def test_the_cli_reads_bin_and_npy_and_agrees(tmp_path, run_cli):
    xs = inputs(4, 512, 8)
    d = tmp_path / "in"
    d.mkdir()
    for r, x in enumerate(xs):
        if r == 1:
            np.save(d / "rank1.npy", x.view(np.uint16))
        else:
            x.tofile(d / f"rank{r}.bin")
    out = evaluate(parse(pairwise(4)), xs)
    out.tofile(tmp_path / "out.bin")
    p = run_cli("identify", "--input-dir", d, "--observed", tmp_path / "out.bin", "--dtype", "bf16", "--json")
    cli = json.loads(p.stdout)
    py = cce.identify(xs, out)
    assert cli["best"] == py["best"] == "pairwise tree"
    assert [c["matched"] for c in cli["candidates"]] == [c["matched"] for c in py["candidates"]]
    os.remove(d / "rank2.bin")
    p = run_cli("identify", "--input-dir", d, "--observed", tmp_path / "out.bin", "--dtype", "bf16", check=False)
    assert p.returncode == 2 and "rank2.bin (or .npy) is missing" in p.stderr and p.stdout == ""


def test_make_probe_writes_inputs_and_a_readme(tmp_path):
    arrays, info = cce.make_probe(8, 1024, "bf16", directory=tmp_path)
    assert len(arrays) == 8 and info["period"] <= 64 and info["orders"] == 18
    assert (tmp_path / "README.md").read_text().count("cce identify") >= 1
    assert np.array_equal(np.fromfile(tmp_path / "rank3.bin", BF16).view(np.uint16), arrays[3].view(np.uint16))
