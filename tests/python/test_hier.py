"""Hierarchical collectives against scripts/collective_ref.py, the independent numpy reference
that follows the documented orders and buffers (docs/MODEL.md H1–H6): every (intra, inter) pair
over X ∈ {2, 4, 8} nodes of Y ∈ {2, 4, 8, 32} ranks, bf16 and fp32 with RNE and bf16 with
stochastic rounding, all three collectives, bit for bit on every rank; int32 equals the exact
sum. Inputs differ per rank and per element. The flat algorithms are held to the same reference
(its flat part) so the two parts of the reference check each other's common ground."""
import importlib.util
import pathlib

import ml_dtypes
import numpy as np
import pytest

import cce

REF = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "collective_ref.py"
_spec = importlib.util.spec_from_file_location("collective_ref", REF)
ref = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ref)

INTRA = ["ring", "ring-2r2w", "kangaring", "mesh", "rdh"]
INTER = ["ring", "mesh", "single-step-mesh", "rdh"]
SHAPES = [(x, y) for x in (2, 4, 8) for y in (2, 4, 8, 32)]
NUMBERS = [("bf16", "rne"), ("fp32", "rne"), ("bf16", "sr")]
COLLECTIVES = ["allreduce", "reduce-scatter", "all-gather"]
DT = {"bf16": ml_dtypes.bfloat16, "fp32": np.float32, "i32": np.int32}


def inputs(r, n, dtype, seed):
    rng = np.random.default_rng(seed)
    if dtype == "i32":
        return [rng.integers(-2**20, 2**20, n, dtype=np.int32) for _ in range(r)]
    # Magnitudes over several binades, signs mixed: every rounding is exercised.
    return [(rng.standard_normal(n) * 2.0 ** rng.integers(-4, 5, n)).astype(np.float32).astype(DT[dtype])
            for _ in range(r)]


def same_bits(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def run_pair(intra, inter, x, y, collective, dtype, rounding, seed=7):
    r = x * y
    n = 2 * r + 3
    ins = inputs(r, n, dtype, seed + 31 * r + len(intra) + 7 * len(inter))
    outs, report = cce.allreduce(ins, algo="hier", op="add", rounding=rounding, seed=seed, nodes=x,
                                 ranks_per_node=y, intra=intra, inter=inter, collective=collective, check="none")
    want = ref.hier(intra, inter, x, y, collective, ins, ref.Numbers(DT[dtype], rounding, seed))
    return outs, want, report, ins


def refusal(intra, inter, x, y, collective):
    """Why the pair cannot run, or None (the rules of docs/MODEL.md H3)."""
    pow2 = lambda v: v & (v - 1) == 0
    if intra == "rdh" and not pow2(y) or inter == "rdh" and not pow2(x):
        return "rdh"
    if intra == "mesh" and y > 32 or inter in ("mesh", "single-step-mesh") and x > 32:
        return "mesh"
    if inter == "single-step-mesh" and collective != "allreduce":
        return "single-step"
    return None


@pytest.mark.parametrize("dtype,rounding", NUMBERS)
@pytest.mark.parametrize("collective", COLLECTIVES)
@pytest.mark.parametrize("x,y", SHAPES)
def test_every_pair_equals_the_reference(x, y, collective, dtype, rounding):
    ran, differs = 0, False
    for intra in INTRA:
        for inter in INTER:
            if refusal(intra, inter, x, y, collective):
                with pytest.raises(cce.CceError):
                    run_pair(intra, inter, x, y, collective, dtype, rounding)
                continue
            outs, want, report, ins = run_pair(intra, inter, x, y, collective, dtype, rounding)
            assert report["algo"] == "hier" and len(outs) == x * y
            if rounding == "sr" and collective != "all-gather":
                # Stochastic rounding is at work: the reference's RNE bits differ somewhere.
                rne = ref.hier(intra, inter, x, y, collective, ins, ref.Numbers(DT[dtype], "rne", 7))
                differs = differs or any(not same_bits(a, b) for a, b in zip(want, rne))
            for q, (got, exp) in enumerate(zip(outs, want)):
                assert same_bits(np.asarray(got).reshape(-1), exp), \
                    f"hier({intra}/{inter}) x{x} y{y} {collective} {dtype} {rounding}: rank {q} differs"
            ran += 1
    assert ran >= 12
    assert differs or rounding != "sr" or collective == "all-gather", "stochastic rounding gave RNE's bits everywhere"


@pytest.mark.parametrize("collective", COLLECTIVES)
def test_int32_is_the_exact_sum(collective):
    x, y = 4, 8
    r, n = x * y, 101
    ins = inputs(r, n, "i32", 3)
    total = np.sum(np.stack(ins).astype(np.int64), axis=0).astype(np.int32)
    for intra in INTRA:
        for inter in INTER:
            if refusal(intra, inter, x, y, collective):
                continue
            outs, _ = cce.allreduce(ins, algo="hier", op="add", nodes=x, ranks_per_node=y, intra=intra, inter=inter,
                                    collective=collective)
            want = ref.hier(intra, inter, x, y, collective, ins, ref.Numbers(np.int32, "rne", 0))
            for got, exp in zip(outs, want):
                assert same_bits(np.asarray(got).reshape(-1), exp)
            if collective == "allreduce":
                assert all(same_bits(np.asarray(o), total) for o in outs)


@pytest.mark.parametrize("algo", ["ring", "ring-2r2w", "kangaring", "mesh", "rdh"])
@pytest.mark.parametrize("collective", COLLECTIVES)
def test_the_flat_algorithms_equal_the_same_reference(algo, collective):
    for r in (4, 8, 16):
        for dtype, rounding in NUMBERS:
            ins = inputs(r, 3 * r + 1, dtype, r)
            outs, _ = cce.allreduce(ins, algo=algo, op="add", rounding=rounding, seed=5, collective=collective,
                                    check="none")
            want = ref.flat(algo, collective, ins, ref.Numbers(DT[dtype], rounding, 5))
            for q, (got, exp) in enumerate(zip(outs, want)):
                assert same_bits(np.asarray(got).reshape(-1), exp), f"{algo} R={r} {collective} {dtype} {rounding} rank {q}"


def test_identify_names_a_hierarchy_given_its_nodes():
    ins = inputs(16, 1024, "bf16", 11)
    outs, _ = cce.allreduce(ins, algo="hier", op="add", nodes=4, ranks_per_node=4, intra="kangaring", inter="rdh",
                            check="none")
    r = cce.identify(ins, outs[0], ranks_per_node=4)
    full = [c["name"] for c in r["candidates"] if c["matched"] == 1024]
    assert "hier(kangaring/rdh), accumulate fp32" in full and all(n.startswith("hier(") for n in full), full


def test_an_elements_story_in_a_hierarchy_is_its_run():
    ins = inputs(8, 64, "bf16", 13)
    outs, _ = cce.allreduce(ins, algo="hier", op="add", nodes=2, ranks_per_node=4, intra="kangaring", inter="rdh")
    for i in (0, 5, 63):
        e = cce.element(ins, i, algo="hier", op="add", nodes=2, ranks_per_node=4, intra="kangaring", inter="rdh")
        got = np.asarray(outs[0]).reshape(-1).view(np.uint16)[i]
        assert int(e["output"]["bits"], 16) == int(got)
        assert sorted(e["leaves"]) == list(range(8))


@pytest.mark.parametrize("x,y", [(2, 4), (4, 2), (4, 8), (8, 2)])
def test_gce_on_the_inter_node_hops_equals_the_reference(x, y):
    """--compress gce with a hierarchy: the inter-node ring compresses every hop (docs/MODEL.md
    H8), the intra-node stages move bf16 as it is."""
    r = x * y
    for intra in INTRA:
        if refusal(intra, "ring", x, y, "allreduce"):
            continue
        ins = inputs(r, 64 * r + 5, "bf16", r + len(intra))
        outs, report = cce.allreduce(ins, algo="hier", op="add", nodes=x, ranks_per_node=y, intra=intra, inter="ring",
                                     compress="gce")
        want = ref.hier(intra, "ring", x, y, "allreduce", ins, ref.Numbers(DT["bf16"], "rne", 0), gce=True)
        assert report["ranks_identical"] and report["compress"] == "gce"
        for q, (got, exp) in enumerate(zip(outs, want)):
            assert same_bits(np.asarray(got).reshape(-1), exp), f"hier({intra}/ring) gce x{x} y{y} rank {q}"
        plain = ref.hier(intra, "ring", x, y, "allreduce", ins, ref.Numbers(DT["bf16"], "rne", 0))
        assert not same_bits(want[0], plain[0]), "the quantization changed nothing"


def test_repro_compares_named_pairs():
    """cce repro's lists take hierarchies by pair; a pair that cannot run the nodes is skipped with
    the reason."""
    r = cce.repro(ranks=12, algo=["hier(ring/ring)", "hier(kangaring/ring)", "hier(rdh/ring)"], ranks_per_node=3,
                  elems=96, dtype="bf16")
    ran = [c["algo"] for c in r["configs"]]
    assert ran == ["hier(ring/ring)", "hier(kangaring/ring)"], ran
    assert any("rdh" in s["reason"] and s["algo"] == "hier(rdh/ring)" for s in r["skipped"]), r["skipped"]
    assert len(r["classes"]) == 2
