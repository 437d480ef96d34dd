"""The bits, rings, run and all-reduce from Python agree with the `cce` CLI's JSON and files
for the same request (the CLI is the other front of the same library, run as a program)."""
import json
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

import cce

BF16 = ml_dtypes.bfloat16


def cli_json(run_cli, *args):
    return json.loads(run_cli(*args, "--json").stdout)


@pytest.mark.parametrize("encoder, fields", [
    ("fma-descriptor", {"a_sel": "input", "b_sel": "scale", "c_sel": "stored", "scale": 0.5}),
    ("fma-meta-ctrl", {"sub": 3, "in_dt": "bf16", "accum_dt": "fp32"}),
    ("min-max-descriptor", {"length": 4096, "constant": "0x3f80"}),
    ("add-meta-ctrl", {"last": 1}),
    ("seed-init-descriptor", {"seed": 42, "seed_en": True}),
    ("m2s-data", {}),
])
def test_encode_and_decode_agree_with_the_cli(encoder, fields, run_cli):
    flags = []
    for k, v in fields.items():
        flags += [f"--{k.replace('_', '-')}", str(int(v) if isinstance(v, bool) else v)]
    want = cli_json(run_cli, "encode", encoder, *flags)
    words = cce.encode(encoder, **fields)
    assert words == want["words"]
    assert cce.decode(encoder, words) == cli_json(run_cli, "decode", encoder, want["bytes_hex"])
    raw_bytes = b"".join(w.to_bytes(4, "little") for w in words)
    assert cce.decode(encoder, raw_bytes) == cli_json(run_cli, "decode", encoder, want["bytes_hex"])


def test_meta_ctrl_readings_and_tables(run_cli):
    assert cce.decode("meta-ctrl", 0x02100000) == cli_json(run_cli, "decode", "meta-ctrl", "0x02100000")
    assert cce.tables() == cli_json(run_cli, "tables")


def test_bits_errors():
    with pytest.raises(cce.CceError, match="unknown encoder 'nope'"):
        cce.encode("nope")
    with pytest.raises(cce.CceError, match="does not fit 3 bits"):
        cce.encode("fma-meta-ctrl", sub=9)
    with pytest.raises(cce.CceError, match="expected 32 hex digits"):
        cce.decode("fma-descriptor", b"\x00\xff")


def test_build_disasm_and_run_agree_with_the_cli(run_cli, tmp_path):
    kw = dict(op="add", dtype="bf16", accum="fp32", elems=3000, src=[0x10000, 0x20000, 0x30000], dst=[0x90000],
              rounding="sr", seed=42)
    ring = cce.build(**kw)
    path = tmp_path / "add.ring"
    run_cli("build", "--op", "add", "--in", "bf16", "--accum", "fp32", "--out", "bf16", "--elems", "3000",
            "--src", "0x10000", "0x20000", "0x30000", "--dst", "0x90000", "--rounding", "sr", "--seed", "42",
            "-o", path)
    assert ring.to_bytes() == path.read_bytes()
    assert ring.disasm() == run_cli("disasm", path).stdout
    assert ring.descriptors == cli_json(run_cli, "disasm", path)
    again = tmp_path / "again.ring"
    ring.save(again)
    assert cce.Ring.load(again).to_bytes() == ring.to_bytes()

    srcs = [np.random.default_rng(k).uniform(-2, 2, 3000).astype(np.float32).astype(BF16) for k in range(3)]
    report = cce.run(ring, load={0x10000 * (k + 1): s for k, s in enumerate(srcs)}, dump=[(0x90000, 6000)])
    files = []
    for k, s in enumerate(srcs):
        p = tmp_path / f"s{k}.bin"
        s.tofile(p)
        files.append(f"0x{0x10000 * (k + 1):x}={p}")
    out = tmp_path / "out.bin"
    cli = cli_json(run_cli, "run", path, "--load", *files, "--dump", f"0x90000:6000={out}")
    dumps = report.pop("dumps")
    assert dumps[0].tobytes() == out.read_bytes()
    report.pop("seconds"), cli.pop("seconds")
    assert report == cli


def test_a_faulting_ring_shows_its_fault_and_bad_rings_raise(tmp_path):
    ring = cce.build(op="add", dtype="bf16", elems=64, src=[0x1000], dst=[0x9000])
    report = cce.run(ring, load={}, dump=[(0x9000, 128)])  # the source is unmapped
    assert report["queues"][0]["state"] == "faulted" and report["queues"][0]["fault"]
    assert report["dumps"][0].tobytes() == bytes(128), "the faulted packet wrote nothing"
    with pytest.raises(cce.CceError, match="not a cce ring dump"):
        cce.Ring(b"garbage")
    with pytest.raises(cce.CceError, match="CCE replication not supported for v1/v2 archs"):
        cce.build(op="add", dtype="bf16", elems=64, src=[0x1000], dst=[0x9000, 0xa000], arch=2)


@pytest.mark.parametrize("algo", ["ring", "ring-2r2w", "kangaring", "mesh", "rdh", "auto"])
def test_allreduce_equals_the_cli_output_dir(algo, run_cli, tmp_path):
    ranks = 4
    ins = tmp_path / "in"
    outs = tmp_path / "out"
    ins.mkdir()
    arrays = [np.random.default_rng(r).uniform(-1, 1, 2049).astype(np.float32).astype(BF16) for r in range(ranks)]
    for r, a in enumerate(arrays):
        a.tofile(ins / f"rank{r}.bin")
    got, report = cce.allreduce(arrays, algo=algo, op="add")
    cli = cli_json(run_cli, "allreduce", "--ranks", ranks, "--algo", algo, "--op", "add", "--dtype", "bf16",
                   "--input-dir", ins, "--output-dir", outs)
    for r in range(ranks):
        assert got[r].dtype == np.dtype(BF16) and got[r].tobytes() == (outs / f"rank{r}.bin").read_bytes()
    for k in ("seconds", "algbw_gbps", "busbw_gbps", "model_peak_bytes"):  # measured, run by run
        report.pop(k), cli.pop(k)
    assert report == cli


def test_allreduce_check_none_gives_the_same_bytes_and_null_errors(run_cli, tmp_path):
    arrays = [np.random.default_rng(10 + r).uniform(-1, 1, 5000).astype(np.float32).astype(BF16) for r in range(3)]
    checked, rc = cce.allreduce(arrays, algo="ring")
    unchecked, ru = cce.allreduce(arrays, algo="ring", check="none")
    assert [o.tobytes() for o in unchecked] == [o.tobytes() for o in checked]
    assert rc["check"] == "exact" and ru["check"] == "none"
    assert isinstance(rc["wrong"], int) and rc["ranks_identical"] is True
    for k in ("ranks_identical", "max_abs_err", "max_rel_err", "max_ulp_err", "mean_ulp_err", "wrong"):
        assert ru[k] is None, k
    # The CLI's --check none prints the same nulls.
    ins = tmp_path / "in"
    ins.mkdir()
    for r, a in enumerate(arrays):
        a.tofile(ins / f"rank{r}.bin")
    cli = cli_json(run_cli, "allreduce", "--ranks", 3, "--algo", "ring", "--op", "add", "--dtype", "bf16",
                   "--input-dir", ins, "--check", "none")
    for k in ("seconds", "algbw_gbps", "busbw_gbps", "model_peak_bytes"):  # measured, run by run
        ru.pop(k), cli.pop(k)
    assert ru == cli
    with pytest.raises(cce.CceError, match="expected exact or none"):
        cce.allreduce(arrays, check="fast")


def test_call_overhead_benchmark_runs():
    """python -m cce.examples.call_overhead (a benchmark, run here once, small): its row."""
    p = subprocess.run([sys.executable, "-m", "cce.examples.call_overhead", "--ranks", "2", "--mib", "1", "--calls", "2",
                        "--json"], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    row = json.loads(p.stdout)
    # a smoke test: every time measured and plausible (1 us to 10 s); the call's wall time holds
    # the run its report times
    assert all(1e-6 < row[k] < 10 for k in ("copy_seconds", "wall_seconds", "seconds"))
    assert row["wall_seconds"] >= row["seconds"]


FORKED_CHILD = '''
import os, sys, ml_dtypes, numpy as np, cce
arrays = [np.random.default_rng(40 + r).uniform(-1, 1, 4096).astype(np.float32).astype(ml_dtypes.bfloat16) for r in range(4)]
first, _ = cce.allreduce(arrays, check="none")  # the parent now keeps rank threads
pid = os.fork()
if pid == 0:
    again, _ = cce.allreduce(arrays, check="none")
    os._exit(0 if [o.tobytes() for o in again] == [o.tobytes() for o in first] else 3)
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status))
'''


def test_allreduce_runs_in_a_forked_child():
    """A child forked after the parent ran an all-reduce (its rank threads kept) runs one too,
    with the same bytes, instead of waiting for threads it does not have."""
    p = subprocess.run([sys.executable, "-c", FORKED_CHILD], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr


def test_allreduce_errors():
    a = np.ones(16, dtype=BF16)
    with pytest.raises(cce.CceError, match="between 2 and 4096"):
        cce.allreduce([a])
    with pytest.raises(cce.CceError, match="--algo 'tree'"):
        cce.allreduce([a, a], algo="tree")
    with pytest.raises(cce.CceError, match="rank 1 is float16"):
        cce.allreduce([a, a.astype(np.float16)])
