"""cce.jax: psum / pmean inside shard_map over 2, 4 and 8 CPU devices against cce.allreduce and
the numpy ring reference (scripts/allreduce_ref.py), seeds that replay, an unmodified training
step routed by collectives(), gradients against finite differences and XLA. Each device count
runs in a child process (jax_cases.py): JAX fixes its CPU device count when it starts."""
import json
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import cce
import cce.jax as cj

HERE = pathlib.Path(__file__).resolve().parent
REF = HERE.parents[1] / "scripts" / "allreduce_ref.py"


def run_case(case, devices, tmp_path):
    out = tmp_path / f"{case}-{devices}"
    p = subprocess.run([sys.executable, str(HERE / "jax_cases.py"), case, str(devices), str(out)],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    return json.loads((out / "result.json").read_text()), out


@pytest.mark.parametrize("devices", [2, 4, 8])
def test_psum_and_pmean_equal_allreduce_bit_for_bit(devices, tmp_path):
    result, out = run_case("psum", devices, tmp_path)
    assert len(result["cases"]) == 13  # 3 dtypes x RNE, SR x psum, pmean; one 256 Ki-element case
    assert all(c["same"] for c in result["cases"]), [c for c in result["cases"] if not c["same"]]
    for dt in ("bf16", "fp16", "fp32"):
        d = out / dt
        p = subprocess.run([sys.executable, str(REF), "ring", str(devices), dt, str(d / "in"), str(d / "out")],
                           capture_output=True, text=True)
        assert p.returncode == 0, p.stdout + p.stderr


def test_psum_over_a_hierarchy_equals_allreduce(tmp_path):
    result, _ = run_case("hier", 8, tmp_path)
    assert result == {"same": True, "algo": "hier(kangaring/rdh)"}


def test_stochastic_rounding_seeds_replay(tmp_path):
    result, _ = run_case("seeds", 4, tmp_path)
    assert result["same"] == [True, True]
    assert result["steps_differ"]


def test_collectives_routes_an_unmodified_step_and_restores_xla(tmp_path):
    result, _ = run_case("train", 4, tmp_path)
    assert result["routed"] == [["pmean", "float32", [3]]]
    assert result["mean_equal"]
    assert result["axis_size"] == 4
    assert result["fallthrough"] == ["cce.jax: psum falls through to XLA: int is not an array"]
    assert result["restored"] and result["routed_after"] == []
    assert result["xla_after"] == 6.0


def test_gradients_through_psum_and_pmean(tmp_path):
    result, _ = run_case("grad", 4, tmp_path)
    assert result["psum"] == "ok" and result["pmean"] == "ok"
    assert result["psum_vs_xla"] < 1e-4 and result["pmean_vs_xla"] < 1e-4


def test_derived_seeds_differ_by_position_and_step():
    seeds = {cj.derived_seed(0, p, s) for p in range(4) for s in range(4)}
    assert len(seeds) == 16 and all(0 <= s < 1 << 64 for s in seeds)
    assert cj.derived_seed(5, 1, 2) == cj.derived_seed(5, 1, 2) != cj.derived_seed(6, 1, 2)


def test_bad_options_raise_cce_error():
    x = np.zeros(4, np.float32)
    with pytest.raises(cce.CceError, match="unknown option 'rounding_mode'"):
        cj.psum(x, "d", rounding_mode="sr")
    with pytest.raises(cce.CceError, match="one axis name"):
        cj.psum(x, ("a", "b"))
    jax = pytest.importorskip("jax")
    from jax.sharding import Mesh, PartitionSpec as P

    mesh = Mesh(np.array(jax.devices()[:1]), ("d",))
    with pytest.raises(cce.CceError, match="--algo 'nonsense'"):  # checked when traced
        jax.jit(jax.shard_map(lambda v: cj.psum(v, "d", algo="nonsense"), mesh=mesh, in_specs=P("d"),
                              out_specs=P("d")))(x)
    with pytest.raises(cce.CceError, match="unknown option 'bogus'"):
        with cj.collectives(bogus=1):
            pass


def test_a_device_that_never_arrives_ends_the_call_with_an_error(tmp_path):
    result, _ = run_case("timeout", 2, tmp_path)
    assert result["error"] is not None
    assert "device(s) [2, 3] of the axis did not bring their shards to call" in result["error"], result
    assert "within 0.3 s" in result["error"]
    assert result["after"]


def test_derived_seed_is_splitmix64():
    """The seed rule (one implementation, in the extension) against SplitMix64 written here."""
    m = (1 << 64) - 1

    def mix(x):
        x = (x + 0x9E3779B97F4A7C15) & m
        x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & m
        x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & m
        return x ^ (x >> 31)

    for base, pos, step in [(0, 0, 0), (5, 1, 2), (m, m, m), (123456789, 42, 7)]:
        assert cj.derived_seed(base, pos, step) == mix(mix(mix(base) ^ pos) ^ step)


def test_overhead_benchmark_runs():
    """python -m cce.examples.jax_overhead (a benchmark, run here once, small): its rows."""
    p = subprocess.run([sys.executable, "-m", "cce.examples.jax_overhead", "--devices", "2", "--calls", "2", "--json"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    (row,) = json.loads(p.stdout)
    # a smoke test of the benchmark: both times measured and plausible (a call takes 1 us to 10 s)
    assert row["devices"] == 2 and all(1e-6 < row[k] < 10 for k in ("psum_seconds", "allreduce_seconds"))
