"""cce.torch: the "cce" torch.distributed backend over 2 and 4 processes. DDP's gradient buckets
against cce.allreduce bit for bit (bf16 RNE and SR, fp32) and against the numpy ring reference
(scripts/allreduce_ref.py); every collective against gloo on exact dtypes; a rank that dies named
by the others within the timeout; an unmodified script under torchrun that finds the backend by
its entry point, and one under torch.multiprocessing.spawn. Each rank is its own process
(torch_cases.py, torch_plain_ddp.py, torch_spawn_ddp.py)."""
import glob
import json
import os
import pathlib
import socket
import subprocess
import sys

import numpy as np
import pytest

import cce

torch = pytest.importorskip("torch")
import cce.torch as ct  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
REF = HERE.parents[1] / "scripts" / "allreduce_ref.py"


def dtype_of(name):
    from cce._dtypes import numpy_dtype

    return numpy_dtype(name)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(case, ranks, out, extra_env=None, timeout=300):
    """Runs torch_cases.py CASE as `ranks` processes; returns their (returncode, output) and
    JSON results."""
    out.mkdir(parents=True, exist_ok=True)
    port = free_port()
    procs = []
    for r in range(ranks):
        env = dict(os.environ, RANK=str(r), WORLD_SIZE=str(ranks), MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=str(port), TORCH_CPP_LOG_LEVEL="ERROR", OMP_NUM_THREADS="1", **(extra_env or {}))
        procs.append(subprocess.Popen([sys.executable, str(HERE / "torch_cases.py"), case, str(out)], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    finished = []
    for p in procs:
        try:
            text, _ = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            raise
        finished.append((p.returncode, text))
    results = {}
    for r in range(ranks):
        f = out / f"rank{r}.json"
        if f.exists():
            results[r] = json.loads(f.read_text())
    return finished, results


@pytest.mark.parametrize("ranks", [2, 4])
@pytest.mark.parametrize("dtype,rounding", [("bf16", "rne"), ("bf16", "sr"), ("fp32", "rne")])
def test_ddp_buckets_equal_allreduce_bit_for_bit(ranks, dtype, rounding, tmp_path):
    procs, results = launch("ddp", ranks, tmp_path, {"CASE_DTYPE": dtype, "CASE_ROUNDING": rounding})
    assert all(rc == 0 for rc, _ in procs), procs
    assert {results[r]["backend"] for r in range(ranks)} == {"cce"}
    calls = results[0]["calls"]
    assert len(calls) >= 3 and all(results[r]["calls"] == calls for r in range(ranks))  # a bucket or more per step
    data = [np.load(tmp_path / f"rank{r}.npz") for r in range(ranks)]
    dt = dtype_of(dtype)
    group = results[0]["group"]
    for i, call in enumerate(calls):
        inputs = [d[f"before{i}"].view(dt) for d in data]
        assert len({x.tobytes() for x in inputs}) == ranks  # every rank's bucket differs
        seed = ct.seed_of_call(call, 5, group) if rounding == "sr" else 0
        want, _ = cce.allreduce(inputs, rounding=rounding, seed=seed)
        for r in range(ranks):
            assert data[r][f"after{i}"].tobytes() == want[r].tobytes(), (i, call, r)
    # every rank ends with the same parameters
    assert len({d["params"].tobytes() for d in data}) == 1
    if rounding == "rne":  # the independent numpy ring reference agrees on the first bucket
        (tmp_path / "in").mkdir()
        (tmp_path / "out").mkdir()
        for r, d in enumerate(data):
            d["before0"].tofile(tmp_path / "in" / f"rank{r}.bin")
            d["after0"].tofile(tmp_path / "out" / f"rank{r}.bin")
        p = subprocess.run([sys.executable, str(REF), "ring", str(ranks), dtype, str(tmp_path / "in"),
                            str(tmp_path / "out")], capture_output=True, text=True)
        assert p.returncode == 0, p.stdout + p.stderr


@pytest.mark.parametrize("ranks,transport", [(2, "auto"), (4, "auto"), (3, "gloo")])
def test_collectives_against_gloo_and_allreduce(ranks, transport, tmp_path):
    before = set(glob.glob("/dev/shm/cce-torch-*"))
    procs, results = launch("collectives", ranks, tmp_path, {"CCE_TRANSPORT": transport})
    assert set(glob.glob("/dev/shm/cce-torch-*")) == before  # segments are unlinked once mapped
    assert all(rc == 0 for rc, _ in procs), procs
    for r in range(ranks):
        checks = results[r]["checks"]
        assert len(checks) == (14 if transport == "gloo" else 16) and all(checks.values()), (r, checks)
    data = [np.load(tmp_path / f"rank{r}.npz") for r in range(ranks)]
    ops = {"SUM": "add", "AVG": "avg", "MIN": "min", "MAX": "max"}
    for name in ("bf16", "fp32", "fp16"):
        dt = dtype_of(name)
        for op, cop in ops.items():
            inputs = [d[f"{name}_{op}_in"].view(dt) for d in data]
            want, _ = cce.allreduce(inputs, op=cop)
            assert all(data[r][f"{name}_{op}_out"].tobytes() == want[r].tobytes() for r in range(ranks)), (name, op)
        inputs = [d[f"{name}_SR77_in"].view(dt) for d in data]
        want, _ = cce.allreduce(inputs, rounding="sr", seed=77)
        assert all(data[r][f"{name}_SR77_out"].tobytes() == want[r].tobytes() for r in range(ranks)), name
    bf16 = dtype_of("bf16")
    want, _ = cce.allreduce([d["rs_in"].view(bf16) for d in data])
    for r in range(ranks):
        assert data[r]["rs_out"].tobytes() == want[r][4 * r:4 * r + 4].tobytes()


@pytest.mark.parametrize("transport", ["auto", "gloo"])
@pytest.mark.parametrize("dead", [2, 0])
def test_a_rank_that_dies_is_named(dead, transport, tmp_path):
    procs, results = launch("dies", 3, tmp_path, {"CASE_DEAD": str(dead), "CASE_TIMEOUT": "30",
                                                  "CCE_TRANSPORT": transport}, timeout=120)
    survivors = [r for r in range(3) if r != dead]
    for r in survivors:
        res = results[r]
        assert res["type"] == "RankFailed", res
        assert res["seconds"] < 30, res
        assert res["rank"] == dead, res
        if transport == "auto":  # same host: the doorbell's wait sees the process gone
            assert f"rank(s) [{dead}] exited" in res["error"], res
        elif dead == 0:  # rank 0 hosted the store: that is what the others can tell
            assert "its host (rank 0) has exited" in res["error"], res
        else:
            assert f"rank(s) [{dead}] did not arrive" in res["error"], res


def test_groups_made_again_on_one_store(tmp_path):
    procs, results = launch("cycles", 2, tmp_path)
    assert all(rc == 0 for rc, _ in procs), procs
    assert all(all(results[r]["checks"].values()) for r in range(2)), results


def test_subgroups(tmp_path):
    procs, results = launch("subgroups", 4, tmp_path)
    assert all(rc == 0 for rc, _ in procs), procs
    assert all(all(results[r]["checks"].values()) for r in range(4)), results


def test_unmodified_ddp_script_under_torchrun(tmp_path):
    """torch_plain_ddp.py never imports cce: `init_process_group("cce")` finds the backend
    through the package's entry point."""
    port = free_port()
    env = dict(os.environ, TORCH_CPP_LOG_LEVEL="ERROR", OMP_NUM_THREADS="1")
    p = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2", "--master-port",
                        str(port), str(HERE / "torch_plain_ddp.py"), str(tmp_path)],
                       capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    res = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in range(2)]
    assert [r["backend"] for r in res] == ["cce", "cce"]
    assert [r["group_class"] for r in res] == ["CceProcessGroup"] * 2
    assert res[0]["params"] == res[1]["params"]
    assert res[0]["cce_reductions"] >= 3


def test_options_and_errors():
    assert ct.Options(rounding="sr").resolved({"CCE_SEED": "9", "CCE_ROUNDING": "rne"}) == {
        "algo": "ring", "rounding": "sr", "seed": 9, "arch": 3, "check": "none"}
    with pytest.raises(cce.CceError, match="CCE_ARCH='x' is not an integer"):
        ct.Options().resolved({"CCE_ARCH": "x"})
    with pytest.raises(cce.CceError, match="unknown option 'sed'"):
        with ct.options(sed=1):
            pass
    seeds = {ct.seed_of_call(k, 0, "0") for k in range(100)}
    assert len(seeds) == 100 and ct.seed_of_call(3, 0, "1") != ct.seed_of_call(3, 0, "0")


def test_a_hierarchy_is_an_option():
    """The group's options carry a hierarchy (here from the environment, as torchrun sets it) to
    cce.allreduce: the keywords the backend passes give the hierarchy's bits."""
    opts = ct.Options(algo="hier", intra="kangaring").resolved({"CCE_NODES": "2", "CCE_RANKS_PER_NODE": "2",
                                                                 "CCE_INTER": "rdh"})
    assert opts == {"algo": "hier", "rounding": "rne", "seed": 0, "arch": 3, "check": "none", "nodes": 2,
                    "ranks_per_node": 2, "intra": "kangaring", "inter": "rdh"}
    x = [np.arange(64, dtype=np.float32) * (r + 1) / 7 for r in range(4)]
    outs, report = cce.allreduce(x, op="add", **opts)
    assert report["label"] == "hier(kangaring/rdh)" and report["nodes"] == 2
    want = cce.allreduce(x, op="add", algo="hier", nodes=2, ranks_per_node=2, intra="kangaring", inter="rdh")[0]
    assert all(a.tobytes() == b.tobytes() for a, b in zip(outs, want))


def test_overhead_benchmark_runs(tmp_path):
    """python -m cce.examples.torch_overhead (a benchmark, run here once, small): its rows."""
    p = subprocess.run([sys.executable, "-m", "cce.examples.torch_overhead", "--ranks", "2", "--calls", "2", "--json"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    (row,) = json.loads(p.stdout)
    assert row["ranks"] == 2 and row["transport"] == "auto" and len(row["per_rank_seconds"]) == 2
    # a smoke test of the benchmark: every time measured and plausible (a call takes 1 us to 10 s)
    assert all(1e-6 < t < 10 for t in [*row["per_rank_seconds"], row["allreduce_seconds"]])
    assert row["torch_seconds"] == max(row["per_rank_seconds"])


def test_ddp_under_mp_spawn(tmp_path):
    """torch.multiprocessing.spawn, tcp:// rendezvous, backend "cce" by name."""
    env = dict(os.environ, TORCH_CPP_LOG_LEVEL="ERROR", OMP_NUM_THREADS="1")
    p = subprocess.run([sys.executable, str(HERE / "torch_spawn_ddp.py"), str(free_port()), str(tmp_path)],
                       capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    res = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in range(2)]
    assert [r["backend"] for r in res] == ["cce", "cce"] and res[0]["params"] == res[1]["params"]
