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


def chain(order):
    """The sum of ``order`` (ranks) left to right, each ``+`` rounded: ``((a+b)+c)+…``."""
    text = f"({order[0]}+{order[1]})"
    for r in order[2:]:
        text = f"({text}+{r})"
    return text


def channel_ring(ranks, y, channels, k):
    """Channel k's ring (mod.rs "Reduction order", docs/MODEL.md C29): its position i (node n,
    local j) is rank nY + (j + s) mod y_n, s = floor(kY/C), y_n the node's ranks (a short last
    node turns mod its own count)."""
    s = k * y // channels
    ring = []
    for i in range(ranks):
        n, j = divmod(i, y)
        ring.append(n * y + (j + s) % min(y, ranks - n * y))
    return ring


def channelled(xs, y, channels):
    """The flat ring of ``channels`` channels in nodes of ``y`` ranks, as documented: chunk c is
    cut into pieces [floor(kL/C), floor((k+1)L/C)); piece k is the sum round channel k's ring g
    from g(p), p = g^-1(c - 1) + 1."""
    ranks, n = len(xs), len(xs[0])
    out = np.empty(n, BF16)
    for c in range(ranks):
        lo, hi = c * n // ranks, (c + 1) * n // ranks
        for k in range(channels):
            a, b = lo + k * (hi - lo) // channels, lo + (k + 1) * (hi - lo) // channels
            g = channel_ring(ranks, y, channels, k)
            p = g.index((c - 1) % ranks) + 1
            order = [g[(p + t) % ranks] for t in range(ranks)]
            out[a:b] = evaluate(parse(chain(order)), [x[a:b] for x in xs])
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


# --- Issue 51: orders real libraries use, orders on no list, and the verdict -----------------
# Every output below is made here in numpy from the libraries' documented orders and layouts
# (Open MPI's coll_base_allreduce.c, gloo's allreduce.cc), never by cce's code.


def ompi_bounds(n, ranks):
    """Open MPI's ring blocks: the first n mod R hold one element more."""
    late, split = divmod(n, ranks)
    return [c * late + min(c, split) for c in range(ranks + 1)]


def gloo_bounds(n, ranks, size=2):
    """gloo's ring chunks: S segments of ceil(n / S) elements, S / R per chunk, S the multiple
    of R at or above max(ceil(bytes / 1 MiB), 2R)."""
    seg_bytes = size * max(1, (1 << 20) // size)
    segments = -(-max(-(-n * size // seg_bytes), 2 * ranks) // ranks) * ranks
    seg = -(-n // segments)
    per = segments // ranks
    return [min(c * per * seg, n) for c in range(ranks)] + [n]


def chunked(xs, orders, bounds):
    out = np.empty(len(xs[0]), BF16)
    for c, text in enumerate(orders):
        lo, hi = bounds[c], bounds[c + 1]
        if lo < hi:
            out[lo:hi] = evaluate(parse(text), [x[lo:hi] for x in xs])
    return out


def seq_of(order):
    text = f"({order[0]}+{order[1]})"
    for r in order[2:]:
        text = f"({text}+{r})"
    return text


def full_matches(r):
    return [c for c in r["candidates"] if c["matched"] == r["total"]]


def test_three_flipped_bits_of_a_ring_are_found_and_nothing_else():
    ranks, n = 8, 8 * 300 + 5
    for xs in (inputs(ranks, n, 61), cce.make_probe(ranks, n, "bf16")[0]):
        out = chunked(xs, [seq(ranks, c) for c in range(ranks)], ompi_bounds(n, ranks))
        b = bits(out).copy()
        flipped = [17, 1000, 2201]
        b[flipped] ^= 1
        r = cce.identify(xs, b.view(BF16))
        found = sorted(r["suspects"]["first"] + r["unexplained"]["first"])
        assert found == flipped, (r["suspects"], r["unexplained"])
        assert r["suspects"]["count"] + r["unexplained"]["count"] == 3
        assert r["verdict"] != "explained" and r["answer"] is None
        # Open MPI's layout (n is no multiple of R): the family's ring, not cce's.
        assert r["best"].startswith("ring, chunk c from c up") and r["map_segments"] == 1


def test_gloos_reverse_ring_is_one_candidate_matching_every_element():
    ranks = 8
    for n in (4096, 1000):
        xs = inputs(ranks, n, 62 + n)
        # gloo: chunk c is the sequential sum from rank c - 1 downward.
        orders = [seq_of([(c - 1 - k) % ranks for k in range(ranks)]) for c in range(ranks)]
        out = chunked(xs, orders, gloo_bounds(n, ranks))
        r = cce.identify(xs, out, ranks=ranks)
        full = full_matches(r)
        assert len(full) == 1 and full[0]["name"].startswith("ring, chunk c from c-1 down"), [c["name"] for c in full]
        assert r["verdict"] == "explained" and r["answer"] == full[0]["name"]


def test_open_mpi_recursive_doubling_at_six_ranks_is_named():
    xs = inputs(6, 4096, 63)
    out = evaluate(parse("(((0+1)+(2+3))+(4+5))"), xs)
    r = cce.identify(xs, out)
    best = r["candidates"][0]
    assert r["verdict"] == "explained" and best["matched"] == r["total"]
    assert any(x.startswith("recursive doubling") for x in [best["name"], *best["aliases"]]), best


def test_orders_on_no_list_are_never_explained():
    p4 = cce.make_probe(4, 256, "bf16")[0]
    p8 = cce.make_probe(8, 4096, "bf16")[0]
    cases = [(p4, "((0+2)+(1+3))"), (inputs(4, 256, 64), "((0+2)+(1+3))"),
             (p8, seq_of([5, 2, 7, 0, 3, 6, 1, 4])), (inputs(8, 4096, 65), seq_of([5, 2, 7, 0, 3, 6, 1, 4]))]
    for xs, text in cases:
        r = cce.identify(xs, evaluate(parse(text), xs))
        assert r["verdict"] in ("fragmented", "unexplained"), (text, r["verdict"], r["verdict_reason"])
        assert r["answer"] is None and "cce reveal" in r["verdict_reason"]
        assert r["suspects"]["count"] + r["unexplained"]["count"] > 0


def test_fp32_accumulation_with_one_rounding_is_one_candidate():
    # XLA's bf16 psum on CPU: every value to float32, summed, rounded to bf16 once.
    xs = inputs(8, 4096, 66)
    acc = xs[0].astype(np.float32)
    for x in xs[1:]:
        acc = acc + x.astype(np.float32)
    r = cce.identify(xs, acc.astype(BF16))
    full = full_matches(r)
    assert len(full) == 1, [c["name"] for c in full]
    names = [full[0]["name"], *full[0]["aliases"]]
    assert "mesh, accumulate fp32" in names and "single 8-source reduce, accumulate fp32" in names
    assert r["verdict"] == "explained" and r["separating"] > 0


def test_the_text_puts_the_verdict_first_and_claims_no_best_when_nothing_fits(tmp_path, run_cli):
    xs = cce.make_probe(4, 256, "bf16")[0]
    d = tmp_path / "in"
    d.mkdir()
    for r, x in enumerate(xs):
        x.tofile(d / f"rank{r}.bin")
    evaluate(parse("((0+2)+(1+3))"), xs).tofile(tmp_path / "out.bin")
    p = run_cli("identify", "--input-dir", d, "--ranks", 4, "--observed", tmp_path / "out.bin", "--dtype", "bf16")
    lines = p.stdout.splitlines()
    assert lines[0].startswith("verdict: ") and not lines[0].startswith("verdict: explained") and "cce reveal" in lines[0]
    assert not any(line.startswith("best:") for line in lines)


def test_stale_rank_files_and_a_full_probe_directory_are_refused(tmp_path, run_cli):
    xs = inputs(8, 64, 67)
    d = tmp_path / "in"
    d.mkdir()
    for r, x in enumerate(xs):
        x.tofile(d / f"rank{r}.bin")
    out = evaluate(parse(seq(4, 0)), xs[:4])
    out.tofile(tmp_path / "out.bin")
    args = ["identify", "--input-dir", d, "--observed", tmp_path / "out.bin", "--dtype", "bf16"]
    p = run_cli(*args, "--ranks", 4, check=False)
    assert p.returncode == 2 and p.stdout == "" and "rank files beyond rank 3" in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
    # Without --ranks: a note (not a refusal) when the observed directory has fewer ranks.
    o = tmp_path / "out"
    o.mkdir()
    for r in range(4):
        out.tofile(o / f"rank{r}.bin")
    p = run_cli("identify", "--input-dir", d, "--observed", o, "--dtype", "bf16", "--json")
    assert "give --ranks 4" in p.stderr and json.loads(p.stdout)["ranks"] == 8
    p = run_cli("identify", "--input-dir", d, "--observed", o, "--dtype", "bf16", "--ranks", 4, check=False)
    assert p.returncode == 2 and "rank files beyond rank 3" in p.stderr
    with pytest.raises(cce.CceError, match="5 inputs are given"):
        cce.identify(xs[:5], out, ranks=4)
    p = run_cli("identify", "--make-probe", d, "--ranks", 4, "--elems", 64, "--dtype", "bf16", check=False)
    assert p.returncode == 2 and "not empty" in p.stderr and "--force" in p.stderr
    run_cli("identify", "--make-probe", d, "--ranks", 4, "--elems", 64, "--dtype", "bf16", "--force")
    assert sorted(f.name for f in d.iterdir()) == ["README.md"] + [f"rank{r}.bin" for r in range(4)]


@pytest.mark.parametrize("ranks, y, channels", [(8, 4, 4), (6, 4, 3), (8, 4, 3)])
def test_a_channelled_ring_is_named_with_channels_and_nothing_without(ranks, y, channels):
    """An output made here by the documented order of the flat ring of C channels (nodes of y
    ranks; 6 ranks end in a short node of 2) is ``ring(C channels)`` when ``channels=C`` is given
    (ring-2r2w of C channels its alias), piece by piece; without it nothing is the answer."""
    n = ranks * 600
    xs = inputs(ranks, n, 21)
    out = channelled(xs, y, channels)
    name = f"ring({channels} channels)"
    r = cce.identify(xs, [out] * ranks, channels=channels, ranks_per_node=y)
    assert (r["verdict"], r["answer"]) == ("explained", name), r["verdict_reason"]
    best = r["candidates"][0]
    assert best["matched"] == n and best["aliases"] == [f"ring-2r2w({channels} channels)"]
    assert all(c["matched"] < n for c in r["candidates"][1:])
    # Every range's order, evaluated here, is the observed bits of every element it claims.
    for m in r["map"]:
        sl = slice(m["first"], m["last"] + 1)
        assert np.array_equal(bits(evaluate(parse(m["expr"]), [x[sl] for x in xs])), bits(out[sl]))
    flat = cce.identify(xs, out)
    assert flat["answer"] is None and flat["verdict"] != "explained"
    assert all(c["matched"] < n for c in flat["candidates"])
    other = cce.identify(xs, out, channels=channels + 1, ranks_per_node=y)
    assert other["answer"] is None, other["verdict_reason"]


def test_channels_out_of_range_raise_cce_error():
    xs = inputs(4, 64, 7)
    out = evaluate(parse(seq(4, 0)), xs)
    for bad in (0, 33):
        with pytest.raises(cce.CceError, match=f"--channels {bad}: between 1 and 32"):
            cce.identify(xs, out, channels=bad)
