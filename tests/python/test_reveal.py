"""`cce reveal` against black boxes whose orders are known without cce: real libraries' all-reduces
(Open MPI through mpi4py, torch's gloo, JAX/XLA's CPU psum) and trees made in numpy.

The ground truths come from tests/python/blackbox/library_orders.py (written from the libraries'
documented and source orders, found by the exhaustive search of scripts/tree_ref.py at small R,
see tests/python/blackbox/ground_truth.py) and, before cce is asked, are checked again here
against one run of the library on random inputs with tree_ref's evaluator: a library whose order
changed fails as "ground truth", not as cce. Trees are compared in tree_ref.canonical form.

Runs: at most 3 when every class holds at least R(R-1)/2 elements, else ceil(log2 R) + 3.
The larger cases have "large" in their ids: `-k "not large"` leaves them out."""
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(HERE, "blackbox"))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

import harness  # noqa: E402
import library_orders as L  # noqa: E402
import tree_ref as T  # noqa: E402

MPI_ALGOS = {1: "basic_linear", 2: "nonoverlapping", 3: "recursive_doubling", 4: "ring",
             5: "segmented_ring", 6: "rabenseifner"}


def pairs(r):
    return r * (r - 1) // 2


def elems_for(r):
    """R classes of R(R-1)/2 elements each fit: the 3-run case for chunked orders too."""
    return r * pairs(r)


@pytest.fixture(scope="session")
def reveal_bin():
    path = os.environ.get("CCE_BIN") or os.path.join(ROOT, "target", "debug", "cce")
    if not os.path.exists(path):
        pytest.fail(f"the cce binary is needed: {path} is missing (build it, or set CCE_BIN)")
    return path


def reveal(cce, cmd, ranks, elems, dtype):
    # No time limit of the test's own: cce's default per run (600 s) and a bound on the whole
    # that only a hang reaches (a busy machine must not fail the test).
    args = [cce, "reveal", "--run", cmd, "--ranks", str(ranks), "--elems", str(elems), "--dtype", dtype, "--json"]
    env = dict(os.environ, **harness.MPI_ENV)
    p = subprocess.run(args, capture_output=True, text=True, env=env, timeout=7200)
    try:
        doc = json.loads(p.stdout)
    except ValueError:
        doc = None
    return p, doc


def per_rank(classes, ranks, dtype):
    """{rank: [(first, last, canonical expr, accum)]} with adjacent equal trees merged."""
    out = {}
    for r in range(ranks):
        rows = sorted((f, l) + T.canonical(x, a, dtype) for f, l, cr, x, a in classes if cr is None or cr == r)
        merged = []
        for f, l, x, a in rows:
            if merged and merged[-1][1] + 1 == f and merged[-1][2:] == (x, a):
                merged[-1] = (merged[-1][0], l, x, a)
            else:
                merged.append((f, l, x, a))
        out[r] = merged
    return out


def run_bound(classes, ranks):
    if min(l - f + 1 for f, l, *_ in classes) >= pairs(ranks):
        return 3
    return math.ceil(math.log2(ranks)) + 3


def check_truth(cmd, classes, ranks, elems, dtype, seed=11):
    """The ground truth holds for the black box: its bits on random inputs are tree_ref's."""
    rng = np.random.default_rng(seed)
    x = T.random_inputs(ranks, elems, dtype, rng)
    got = harness.run_cmd(cmd, x, dtype)
    want = T.apply_classes(classes, x, dtype)
    for r in range(ranks):
        diff = np.flatnonzero((got[r].view(np.uint8).reshape(elems, -1)
                               != want[r].view(np.uint8).reshape(elems, -1)).any(axis=1))
        assert diff.size == 0, f"ground truth: rank {r} differs from the expected order at elements {diff[:10]}"


def assert_revealed(cce, cmd, classes, ranks, elems, dtype):
    p, doc = reveal(cce, cmd, ranks, elems, dtype)
    assert p.returncode == 0, f"exit {p.returncode}: {p.stderr[-3000:]}\n{p.stdout[-2000:]}"
    assert doc is not None, p.stdout[-2000:]
    assert doc["revealed"] is True, doc.get("reason")
    assert (doc["ranks"], doc["elems"], doc["dtype"]) == (ranks, elems, dtype)
    for c in doc["classes"]:
        assert "equals" in c and (c["equals"] is None or isinstance(c["equals"], str)), c
    ranked = any(r is not None for _, _, r, _, _ in classes)
    if not ranked:
        assert all("rank" not in c for c in doc["classes"]), "rank given where every rank agrees"
    got = [(c["first"], c["last"], c.get("rank"), c["expr"], c["accum"]) for c in doc["classes"]]
    assert per_rank(got, ranks, dtype) == per_rank(classes, ranks, dtype)
    bound = run_bound(classes, ranks)
    assert 1 <= doc["runs"] <= bound, f"{doc['runs']} runs, bound {bound}"


# ---------------------------------------------------------------- Open MPI


def _mpi_ready():
    if shutil.which("mpirun") is None:
        pytest.skip("mpirun is missing (Debian: apt-get install openmpi-bin libopenmpi-dev)")
    pytest.importorskip("mpi4py")
    try:
        from mpi4py import MPI  # noqa: F401
    except Exception as e:  # the wheel loads libmpi at import: no MPI library, no test
        pytest.skip(f"mpi4py cannot load an MPI library: {e}")


MPI_CASES = [(a, r, elems_for(r)) for a in MPI_ALGOS for r in (3, 4, 5, 6, 8)]
MPI_LARGE = [(a, 16, elems_for(16)) for a in (3, 4, 6)] + [(2, 16, elems_for(16))]
# ring blocks of 3-4 elements, fewer than R(R-1)/2 = 28 (cce needs N >= 28): the ceil(log2 R) + 3 bound
MPI_SMALL_BLOCKS = [(4, 8, 30)]


def _mpi_id(case):
    a, r, n = case
    return f"{MPI_ALGOS[a]}-R{r}-N{n}" + ("-large" if r >= 16 else "")


@pytest.mark.parametrize("case", MPI_CASES + MPI_SMALL_BLOCKS + MPI_LARGE, ids=_mpi_id)
def test_open_mpi(reveal_bin, case):
    _mpi_ready()
    algo, ranks, elems = case
    cmd = harness.mpi_cmd(ranks, algo)
    classes = L.ompi(algo, ranks, elems)
    check_truth(cmd, classes, ranks, elems, "fp32")
    assert_revealed(reveal_bin, cmd, classes, ranks, elems, "fp32")


# ---------------------------------------------------------------- gloo, XLA


@pytest.mark.parametrize("ranks", [4, 8])
@pytest.mark.parametrize("dtype", ["fp32", "bf16", "fp16"])
def test_gloo(reveal_bin, ranks, dtype):
    pytest.importorskip("torch")
    elems = elems_for(ranks)
    cmd = harness.script_cmd("gloo_allreduce.py", dtype, ranks)
    classes = L.gloo_ring(ranks, elems, dtype)
    check_truth(cmd, classes, ranks, elems, dtype)
    assert_revealed(reveal_bin, cmd, classes, ranks, elems, dtype)


@pytest.mark.parametrize("ranks", [4, 8])
@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_xla_psum(reveal_bin, ranks, dtype):
    pytest.importorskip("jax")
    elems = elems_for(ranks)
    cmd = harness.script_cmd("xla_psum.py", dtype, ranks)
    classes = L.xla_psum(ranks, elems, dtype)
    check_truth(cmd, classes, ranks, elems, dtype)
    assert_revealed(reveal_bin, cmd, classes, ranks, elems, dtype)


# ---------------------------------------------------------------- trees made in numpy


def _tree_cases():
    cases = []
    for r in (3, 4, 5, 6, 7, 8, 16, 32):
        big = "-large" if r >= 16 else ""
        cases.append(pytest.param(r, "binary", "fp32", "fp32", "whole", id=f"binary-fp32-R{r}{big}"))
        cases.append(pytest.param(r, "multiway", "bf16", "fp32", "whole", id=f"multiway-bf16-acc32-R{r}{big}"))
        cases.append(pytest.param(r, "multiway", "bf16", "bf16", "whole", id=f"multiway-bf16-acc16-R{r}{big}"))
        if r <= 8:
            cases.append(pytest.param(r, "binary", "fp32", "fp32", "chunks", id=f"binary-fp32-chunks-R{r}"))
            cases.append(pytest.param(r, "multiway", "bf16", "fp32", "chunks", id=f"multiway-bf16-acc32-chunks-R{r}"))
    cases.append(pytest.param(4, "multiway", "fp16", "fp32", "whole", id="multiway-fp16-acc32-R4"))
    cases.append(pytest.param(5, "multiway", "fp16", "fp16", "chunks", id="multiway-fp16-acc16-chunks-R5"))
    cases.append(pytest.param(5, "binary", "fp32", "fp32", "ranks", id="binary-fp32-per-rank-R5"))
    cases.append(pytest.param(6, "multiway", "bf16", "fp32", "ranks", id="multiway-bf16-acc32-per-rank-R6"))
    return cases


def _make_classes(ranks, kind, dtype, accum, layout, rng):
    make = T.random_binary if kind == "binary" else T.random_multiway
    elems = elems_for(ranks)
    if layout == "whole":
        return elems, [(0, elems - 1, None, T.fmt(make(ranks, rng)), accum)]
    if layout == "chunks":  # R chunks of R(R-1)/2 elements, each its own tree
        size = pairs(ranks)
        return elems, [(c * size, (c + 1) * size - 1, None, T.fmt(make(ranks, rng)), accum)
                       for c in range(ranks)]
    # ranks differ: rank 0 sums the first half with another tree than the others do
    half = elems // 2
    other, mine = T.fmt(make(ranks, rng)), T.fmt(make(ranks, rng))
    while T.canonical(mine, accum, dtype) == T.canonical(other, accum, dtype):
        mine = T.fmt(make(ranks, rng))
    classes = [(0, elems - 1, r, other, accum) for r in range(1, ranks)]
    classes += [(0, half - 1, 0, mine, accum), (half, elems - 1, 0, other, accum)]
    return elems, classes


@pytest.mark.parametrize("ranks, kind, dtype, accum, layout", _tree_cases())
def test_numpy_tree(reveal_bin, tmp_path, ranks, kind, dtype, accum, layout):
    rng = np.random.default_rng(1000 * ranks + len(kind) + len(layout) + len(dtype + accum))
    elems, classes = _make_classes(ranks, kind, dtype, accum, layout, rng)
    treefile = tmp_path / "tree.json"
    treefile.write_text(json.dumps([{"first": f, "last": l, "rank": r, "expr": x, "accum": a}
                                    for f, l, r, x, a in classes]))
    cmd = harness.script_cmd("numpy_tree.py", dtype, str(treefile))
    if layout == "ranks":  # the box applies tree_ref itself: its plumbing checked once per kind
        check_truth(cmd, classes, ranks, elems, dtype)
    assert_revealed(reveal_bin, cmd, classes, ranks, elems, dtype)


def test_numpy_tree_box_follows_its_file(tmp_path):
    """The numpy black box is not trivially right: two trees that differ give different bits."""
    rng = np.random.default_rng(5)
    x = T.random_inputs(4, 64, "fp32", rng)
    a = T.evaluate(T.parse("(((0+1)+2)+3)"), x, "fp32", "fp32")
    b = T.evaluate(T.parse("((0+1)+(2+3))"), x, "fp32", "fp32")
    assert (a.view(np.uint32) != b.view(np.uint32)).any()
    treefile = tmp_path / "tree.json"
    treefile.write_text(json.dumps([{"first": 0, "last": 63, "rank": None, "expr": "(((0+1)+2)+3)", "accum": "fp32"}]))
    got = harness.run_cmd(harness.script_cmd("numpy_tree.py", "fp32", str(treefile)), x, "fp32")
    assert all((g.view(np.uint32) == a.view(np.uint32)).all() for g in got)


def test_ground_truth_can_fail():
    """check_truth's comparison is able to fail: gloo's ring read the other way round (Open MPI's
    direction) does not reproduce a ring that runs down."""
    rng = np.random.default_rng(3)
    x = T.random_inputs(4, 24, "fp32", rng)
    down = T.apply_classes(L.gloo_ring(4, 24, "fp32"), x, "fp32")
    up = T.apply_classes([(f, l, None, T.fmt(L.chain([(c + k) % 4 for k in range(4)])), "fp32")
                          for c, (f, l) in enumerate(L.gloo_layout(4, 24, 4))], x, "fp32")
    assert (down[0].view(np.uint32) != up[0].view(np.uint32)).any()


# ---------------------------------------------------------------- no tree


@pytest.mark.parametrize("ranks", [4, 8])
def test_value_dependent_order_is_not_a_tree(reveal_bin, ranks):
    """Each element summed in order of increasing |value|: no one tree per element explains it,
    and cce must say so (exit 1, revealed false) rather than print a tree."""
    elems = elems_for(ranks)
    cmd = harness.script_cmd("numpy_tree.py", "fp32", "sorted-by-magnitude")
    p, doc = reveal(reveal_bin, cmd, ranks, elems, "fp32")
    assert p.returncode == 1, f"exit {p.returncode}: {p.stderr[-2000:]}\n{p.stdout[-2000:]}"
    assert doc is not None and doc["revealed"] is False, p.stdout[-2000:]
    assert doc.get("reason"), doc
    assert not doc.get("classes"), "a tree was printed for a value-dependent order"


def test_tree_ref_canonical_equivalences():
    """The equivalences canonical() applies, and only those."""
    c = T.canonical
    assert c("((1+0)+2)", "fp32", "fp32") == c("((0+1)+2)", "fp32", "fp32")
    assert c("(2+(0+1))", "fp32", "fp32") == c("((0+1)+2)", "fp32", "fp32")
    assert c("(0+1+2)", "bf16", "bf16") == c("((0+1)+2)", "bf16", "bf16")
    assert c("(1+0+2)", "fp32", "bf16") == c("(0+1+2)", "fp32", "bf16")
    assert c("(0+1+2)", "fp32", "bf16") != c("(0+2+1)", "fp32", "bf16")
    assert c("(0+1+2)", "fp32", "bf16") != c("((0+1)+2)", "bf16", "bf16")
    assert c("((0+1)+2)", "fp32", "bf16") == c("((0+1)+2)", "bf16", "bf16")
    assert c("((0+1)+(2+3))", "fp32", "fp32") != c("(((0+1)+2)+3)", "fp32", "fp32")


# ---------------------------------------------------------------- the ground truths' origin


@pytest.mark.parametrize("lib, ranks, dtype", [
    pytest.param("ompi4", 4, "fp32", id="ompi-ring-R4-large"),
    pytest.param("ompi3", 5, "fp32", id="ompi-recursive_doubling-R5-large"),
    pytest.param("gloo", 3, "bf16", id="gloo-R3-large"),
    pytest.param("xla", 3, "bf16", id="xla-R3-large"),
])
def test_exhaustive_search_finds_library_orders(lib, ranks, dtype):
    """library_orders' classes are what the exhaustive search over every tree finds in the
    library's own outputs (10 random inputs; nothing of the order assumed)."""
    if lib.startswith("ompi"):
        _mpi_ready()
    else:
        pytest.importorskip("torch" if lib == "gloo" else "jax")
    import ground_truth

    elems = 4 * ranks + 3
    cands, ok = T.search(harness.runner(ground_truth.command(lib, ranks, dtype), dtype), ranks, elems, dtype)
    found, problems = T.classes_of(cands, ok)
    assert not problems, problems[:5]
    assert T.canon_classes(found, dtype) == T.canon_classes(ground_truth.expected(lib, ranks, elems, dtype), dtype)


# ---------------------------------------------------------------- Python: cce.reveal(fn, …)


@pytest.mark.parametrize("ranks, kind, dtype, accum, layout", [
    (4, "binary", "fp32", "fp32", "whole"),
    (5, "multiway", "bf16", "fp32", "chunks"),
    (6, "binary", "fp16", "fp16", "ranks"),
    (8, "multiway", "bf16", "bf16", "whole"),
])
def test_python_reveal(ranks, kind, dtype, accum, layout):
    """cce.reveal on a function made from tree_ref's evaluator returns the same answer as the
    CLI's JSON: the trees that made the outputs."""
    import cce

    rng = np.random.default_rng(77 + ranks)
    elems, classes = _make_classes(ranks, kind, dtype, accum, layout, rng)
    calls = []

    def fn(inputs):
        calls.append(len(inputs))
        assert len(inputs) == ranks and all(len(x) == elems for x in inputs)
        return T.apply_classes(classes, [np.asarray(x, dtype=T.np_dtype(dtype)) for x in inputs], dtype)

    doc = cce.reveal(fn, ranks, elems, dtype)
    assert doc["revealed"] is True, doc.get("reason")
    assert doc["runs"] == len(calls) and 1 <= doc["runs"] <= run_bound(classes, ranks)
    got = [(c["first"], c["last"], c.get("rank"), c["expr"], c["accum"]) for c in doc["classes"]]
    assert per_rank(got, ranks, dtype) == per_rank(classes, ranks, dtype)


def test_python_reveal_value_dependent():
    import cce

    sys.path.insert(0, os.path.join(HERE, "blackbox"))
    import numpy_tree

    doc = cce.reveal(lambda xs: numpy_tree.sorted_by_magnitude([np.asarray(x) for x in xs], "fp32"), 6, 90, "fp32")
    assert doc["revealed"] is False and doc.get("reason") and not doc.get("classes")
