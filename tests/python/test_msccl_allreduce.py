"""cce.allreduce(arrays, algo="file.xml"): a user's MSCCL XML schedule from Python (as
``cce allreduce --algo-file``), against scripts/allreduce_ref.py --xml (numpy + ml_dtypes) bit
for bit, and its refusals as CceError naming where."""
import pathlib
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

import cce

SCRIPTS = pathlib.Path(__file__).resolve().parents[2] / "scripts"


def gen(tmp_path, *args):
    path = tmp_path / ("_".join(a.lstrip("-") for a in args) + ".xml")
    subprocess.run([sys.executable, SCRIPTS / "msccl_gen.py", *args, "-o", path], check=True)
    return path


@pytest.mark.parametrize("algo,ranks,dt", [("ring-allreduce", 4, ml_dtypes.bfloat16), ("allpairs-allreduce", 8, np.float32),
                                           ("hier-allreduce", 8, np.float16), ("ring-reducescatter", 4, ml_dtypes.bfloat16)])
def test_a_file_equals_the_reference(tmp_path, algo, ranks, dt):
    xml = gen(tmp_path, algo, str(ranks))
    rng = np.random.default_rng(5)
    n = 8 * ranks * 13
    arrays = [rng.uniform(-1, 1, n).astype(dt) for _ in range(ranks)]
    outs, report = cce.allreduce(arrays, algo=xml, rounding="sr", seed=4)
    assert report["algo"] == "file" and report["algorithm_file"] == str(xml) and report["coll"] == algo.split("-")[1]
    assert report["ranks_identical"]
    din, dout = tmp_path / "in", tmp_path / "out"
    din.mkdir()
    dout.mkdir()
    for q in range(ranks):
        arrays[q].tofile(din / f"rank{q}.bin")
        outs[q].tofile(dout / f"rank{q}.bin")
    name = {ml_dtypes.bfloat16: "bf16", np.float16: "fp16", np.float32: "fp32"}[dt]
    r = subprocess.run([sys.executable, SCRIPTS / "allreduce_ref.py", "--xml", xml, name, din, dout,
                        "--rounding", "sr", "--seed", "4"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    if algo == "ring-reducescatter":
        assert all(o.shape == (n // ranks,) for o in outs)
    else:
        assert all(o.shape == (n,) and o.dtype == np.dtype(dt) for o in outs)


def test_refusals_name_where(tmp_path):
    a = np.ones(64, dtype=ml_dtypes.bfloat16)
    with pytest.raises(cce.CceError, match=r"rank 0 tb 0 step 0 \(line \d+\): deadlock, a cycle of waits and receives"):
        cce.allreduce([a, a], algo=gen(tmp_path, "ring-allreduce", "2", "--defect", "cycle"))
    with pytest.raises(cce.CceError, match="is an algorithm for 4 ranks"):
        cce.allreduce([a, a], algo=str(gen(tmp_path, "ring-allreduce", "4")))
    with pytest.raises(cce.CceError, match="avg is not an MSCCL reduction"):
        cce.allreduce([a] * 4, algo=gen(tmp_path, "ring-allreduce", "4"), op="avg")
    with pytest.raises(cce.CceError, match="nope.xml"):
        cce.allreduce([a, a], algo=str(tmp_path / "nope.xml"))
