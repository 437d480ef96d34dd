"""The flat ring's channels (`--channels C`, `cce.allreduce(..., channels=C)`) against
scripts/collective_ref.py, whose channel rings are written from the documented order
(crates/cce-collectives/src/collective/mod.rs "Reduction order", group.rs; docs/MODEL.md C29):
piece k of every chunk summed round channel k's ring, which enters every node ⌊kY/C⌋ local
ranks on (a short last node turning modulo its own count), its partials in scratch slot cC + k.

ring and ring-2r2w, C ∈ {2, 3, 4, 8}, one node and nodes of Y (a short last node too), bf16 and
fp32 with RNE and bf16 with stochastic rounding (whose bits follow the buffers' addresses), all
three collectives, element counts that split evenly, unevenly and into empty pieces: bit for
bit on every rank, through Python and the CLI. int32 is the exact sum; C changes the bits of a
float sum; every refusal names `channels`."""
import importlib.util
import pathlib

import numpy as np
import pytest

import cce
from test_hier import DT, inputs  # every rank's input, different per rank and element

REF = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "collective_ref.py"
_spec = importlib.util.spec_from_file_location("collective_ref", REF)
ref = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ref)

RINGS = ["ring", "ring-2r2w"]
CHANNELS = [2, 3, 4, 8]
NUMBERS = [("bf16", "rne"), ("fp32", "rne"), ("bf16", "sr")]
COLLECTIVES = ["allreduce", "reduce-scatter", "all-gather"]
# (R, Y): Y None is one node (Y = R); so is Y above R; 7 over Y = 3 ends in a node of one rank,
# 7 over Y = 4 in a node of three.
SMALL = [(4, None), (5, None), (6, None), (8, None), (8, 4), (9, 3), (7, 3), (7, 4), (6, 8)]
LARGE = [(16, 4), (16, 8), (32, 4)]


def sizes(r, c):
    """Element counts: every piece equal; chunks and pieces of unequal lengths; fewer elements
    than pieces (empty pieces)."""
    return {"even": 4 * r * c, "uneven": 3 * r * c + r + 1, "empty": r * c // 2 + 1}


def same_bits(a, b):
    a = np.asarray(a).reshape(-1)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def check(algo, r, y, c, n, collective, dtype, rounding, seed=9):
    """One run through Python against the reference, every rank; returns the inputs and outputs."""
    ins = inputs(r, n, dtype, seed * 1000 + 97 * r + 13 * c + n + len(algo))
    outs, report = cce.allreduce(ins, algo=algo, op="add", rounding=rounding, seed=seed, ranks_per_node=y,
                                 collective=collective, channels=c, check="none")
    want = ref.flat(algo, collective, ins, ref.Numbers(DT[dtype], rounding, seed), channels=c, ranks_per_node=y)
    assert report["algo"] == algo and report["channels"] == c and len(outs) == r
    for q, (got, exp) in enumerate(zip(outs, want)):
        assert same_bits(got, exp), f"{algo} R={r} Y={y} C={c} N={n} {collective} {dtype} {rounding}: rank {q} differs"
    return ins, want


@pytest.mark.parametrize("r,y", SMALL)
@pytest.mark.parametrize("algo", RINGS)
def test_every_channel_count_equals_the_reference(algo, r, y):
    for c in CHANNELS:
        for dtype, rounding in NUMBERS:
            for collective in COLLECTIVES:
                for n in sizes(r, c).values():
                    check(algo, r, y, c, n, collective, dtype, rounding)


@pytest.mark.parametrize("r,y", LARGE)
@pytest.mark.parametrize("algo", RINGS)
def test_nodes_of_many_ranks_equal_the_reference(algo, r, y):
    """Larger shapes, to 8 nodes of 4, where R·C passes 64 slots and the slots narrow: every
    channel count, number and collective, the three sizes taken in turn."""
    for i, c in enumerate(CHANNELS):
        for j, (dtype, rounding) in enumerate(NUMBERS):
            for k, collective in enumerate(COLLECTIVES):
                n = list(sizes(r, c).values())[(i + j + k) % 3]
                check(algo, r, y, c, n, collective, dtype, rounding)


@pytest.mark.parametrize("algo", RINGS)
def test_fewer_elements_than_ranks(algo):
    """Empty chunks as well as empty pieces."""
    for r, y in [(8, 4), (7, 3)]:
        for n in (1, r - 1):
            for collective in COLLECTIVES:
                check(algo, r, y, 4, n, collective, "bf16", "sr")


def test_channels_change_the_bits():
    """Each channel's sum starts at another rank: the bits differ from the one-channel ring's, the
    reference agrees with both, and stochastic rounding is at work (not RNE's bits)."""
    r, y, n = 8, 4, 4096
    for algo in RINGS:
        ins, want = check(algo, r, y, 4, n, "allreduce", "bf16", "rne")
        one, _ = cce.allreduce(ins, algo=algo, op="add", ranks_per_node=y, check="none")
        one_ref = ref.flat(algo, "allreduce", ins, ref.Numbers(DT["bf16"], "rne", 0))
        assert same_bits(one[0], one_ref[0]) and not same_bits(one[0], want[0])
        sr_ins, sr_want = check(algo, r, y, 4, n, "allreduce", "bf16", "sr")
        rne = ref.flat(algo, "allreduce", sr_ins, ref.Numbers(DT["bf16"], "rne", 9), channels=4, ranks_per_node=y)
        assert not same_bits(rne[0], sr_want[0])


def test_on_one_node_channels_change_only_the_addresses():
    """On one node every channel's ring is the one ring turned, so every piece is summed from the
    same rank as with one channel: RNE gives one channel's bits, stochastic rounding others (its
    bits follow the slots, cC + k instead of c)."""
    r, n = 8, 1000
    for algo in RINGS:
        ins, want = check(algo, r, None, 4, n, "allreduce", "bf16", "rne")
        one, _ = cce.allreduce(ins, algo=algo, op="add", check="none")
        assert same_bits(one[0], want[0])
        ins, want = check(algo, r, None, 4, n, "allreduce", "bf16", "sr")
        one, _ = cce.allreduce(ins, algo=algo, op="add", rounding="sr", seed=9, check="none")
        assert not same_bits(one[0], want[0])


@pytest.mark.parametrize("collective", COLLECTIVES)
def test_int32_is_the_exact_sum(collective):
    for (r, y), c in zip(SMALL + LARGE, CHANNELS * 3):
        n = 3 * r * c + 5
        ins = inputs(r, n, "i32", r + c)
        for algo in RINGS:
            outs, _ = cce.allreduce(ins, algo=algo, op="add", ranks_per_node=y, channels=c, collective=collective)
            want = ref.flat(algo, collective, ins, ref.Numbers(np.int32, "rne", 0), channels=c, ranks_per_node=y)
            for got, exp in zip(outs, want):
                assert same_bits(got, exp)
            if collective == "allreduce":
                total = np.sum(np.stack(ins).astype(np.int64), axis=0).astype(np.int32)
                assert all(same_bits(o, total) for o in outs)


@pytest.mark.parametrize("collective", COLLECTIVES)
@pytest.mark.parametrize("algo", RINGS)
def test_the_cli_writes_the_same_bytes(algo, collective, run_cli, tmp_path):
    r, y, c, n = 8, 4, 3, 3 * 8 * 3 + 8 + 1
    ins = inputs(r, n, "bf16", 5)
    src = tmp_path / "in"
    src.mkdir()
    for q, a in enumerate(ins):
        a.tofile(src / f"rank{q}.bin")
    want = ref.flat(algo, collective, ins, ref.Numbers(DT["bf16"], "sr", 11), channels=c, ranks_per_node=y)
    out = tmp_path / "out"
    run_cli("allreduce", "--ranks", r, "--ranks-per-node", y, "--algo", algo, "--channels", c, "--collective",
            collective, "--dtype", "bf16", "--op", "add", "--rounding", "sr", "--seed", 11, "--input-dir", src,
            "--output-dir", out, "--check", "none")
    for q in range(r):
        assert (out / f"rank{q}.bin").read_bytes() == want[q].tobytes(), f"rank {q}"


REFUSED = [
    (dict(algo="ring", channels=0), "between 1 and 32"),
    (dict(algo="ring", channels=33), "between 1 and 32"),
    (dict(algo="ring", channels=-1), "channels"),
    (dict(algo="mesh", channels=2), "ring or ring-2r2w"),
    (dict(algo="kangaring", channels=2), "ring or ring-2r2w"),
    (dict(algo="rdh", channels=4), "ring or ring-2r2w"),
    (dict(algo="hier", nodes=2, ranks_per_node=4, channels=2), "ring or ring-2r2w"),
    (dict(algo="ring", compress="gce", ranks_per_node=4, channels=2), "gce"),
]


@pytest.mark.parametrize("kw,why", REFUSED)
def test_refusals_name_channels(kw, why):
    ins = inputs(8, 64, "bf16", 1)
    with pytest.raises(cce.CceError, match="channels") as e:
        cce.allreduce(ins, op="add", **kw)
    assert why in str(e.value)


def test_the_cli_refuses_with_the_same_words(run_cli):
    p = run_cli("allreduce", "--ranks", 4, "--algo", "mesh", "--channels", 2, "--elems", 64, "--op", "add",
                "--dtype", "bf16", check=False)
    assert p.returncode != 0 and "--channels 2" in p.stderr and "ring or ring-2r2w" in p.stderr, p.stderr


def test_element_of_a_channel_ring_is_its_run():
    """``cce.element`` takes ``channels``: the story's output bits are the run's, on pieces whose
    sums start at a node boundary of another channel (2 nodes of 4, 4 channels)."""
    r, y, c, n = 8, 4, 4, 37
    ins = inputs(r, n, "bf16", 11)
    outs, _ = cce.allreduce(ins, algo="ring", ranks_per_node=y, channels=c, check="none")
    got = outs[0].view(np.uint16)
    for i in range(n):
        story = cce.element(ins, i, algo="ring", ranks_per_node=y, channels=c)
        assert int(story["output"]["bits"], 16) == int(got[i]), i
