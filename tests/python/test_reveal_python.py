"""cce.reveal's Python front and python -m cce.reveal_torch, as a user calls them.

The orders the black boxes use are written here in numpy from their documented forms (not cce's
code): a sequential fp32 sum rounded once to bf16 (XLA's CPU psum of bf16), and torch's gloo ring
under torchrun, chunk c the sequential sum from rank c - 1 down."""
import json
import os
import shutil
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

import cce


def fp32_sum_rounded_once(xs):
    acc = np.zeros(xs[0].shape, dtype=np.float32)
    for x in xs:
        acc = (acc + x.astype(np.float32)).astype(np.float32)
    out = acc.astype(ml_dtypes.bfloat16)
    return [out.copy() for _ in xs]


def test_a_function_is_a_black_box():
    a = cce.reveal(fp32_sum_rounded_once, 6, 45, "bf16")
    assert a["revealed"] is True, a["reason"]
    assert a["runs"] == 3
    assert [(c["first"], c["last"]) for c in a["classes"]] == [(0, 44)]
    c = a["classes"][0]
    assert c["expr"] == "(0+1+2+3+4+5)" and c["accum"] == "fp32", c
    assert "rank" not in c


def test_outputs_of_the_wrong_shape_are_refused_with_the_run_named():
    with pytest.raises(cce.CceError, match=r"run 1: fn returned 2 outputs"):
        cce.reveal(lambda xs: xs[:2], 4, 12, "fp32")
    with pytest.raises(cce.CceError, match=r"run 1: rank 0's output has 3 elements, the inputs 12"):
        cce.reveal(lambda xs: [x[:3] for x in xs], 4, 12, "fp32")


def test_an_exception_of_the_function_is_raised_as_it_is():
    class Mine(Exception):
        pass

    def boom(xs):
        raise Mine("from the black box")

    with pytest.raises(Mine, match="from the black box"):
        cce.reveal(boom, 4, 12, "bf16")


def test_an_order_that_depends_on_the_values_is_not_revealed():
    def by_magnitude(xs):
        x = np.stack([a.astype(np.float32) for a in xs])
        order = np.argsort(np.abs(x), axis=0, kind="stable")
        xs_sorted = np.take_along_axis(x, order, axis=0)
        acc = xs_sorted[0].astype(ml_dtypes.bfloat16)
        for row in xs_sorted[1:]:
            acc = (acc.astype(np.float32) + row).astype(ml_dtypes.bfloat16)
        return [acc.copy() for _ in xs]

    a = cce.reveal(by_magnitude, 5, 50, "bf16")
    assert a["revealed"] is False and a["classes"] == [] and a["reason"]


def test_bad_sizes_are_refused():
    with pytest.raises(cce.CceError, match="reveal takes 2 to 64 ranks"):
        cce.reveal(fp32_sum_rounded_once, 65, 4000, "bf16")
    with pytest.raises(cce.CceError, match="reveal takes fp32, bf16 or fp16"):
        cce.reveal(fp32_sum_rounded_once, 4, 12, "i32")


@pytest.mark.skipif(shutil.which("torchrun") is None and not os.path.exists(
    os.path.join(os.path.dirname(sys.executable), "torchrun")), reason="torch's torchrun is not installed")
def test_reveal_torch_under_torchrun_reveals_gloos_ring(tmp_path):
    pytest.importorskip("torch")
    torchrun = shutil.which("torchrun") or os.path.join(os.path.dirname(sys.executable), "torchrun")
    env = dict(os.environ, OMP_NUM_THREADS="1")
    p = subprocess.run(
        [torchrun, "--standalone", "--nproc-per-node", "4", "-m", "cce.reveal_torch", "--dtype", "bf16",
         "--json"],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    a = json.loads(p.stdout.strip().splitlines()[-1])
    assert a["revealed"] and a["runs"] == 3 and a["elems"] == 24
    r = 4
    for c, cls in zip(range(r), a["classes"]):
        # chunk c: the sequential sum from rank c - 1 going down, written as the family writes it.
        seq = [(c - 1 - k) % r for k in range(r)]
        want = str(seq[0])
        for x in seq[1:]:
            want = f"({want}+{x})"
        assert (cls["first"], cls["last"]) == (6 * c, 6 * c + 5)
        assert cls["expr"] == want, (cls, want)
        assert cls["accum"] == "bf16"
