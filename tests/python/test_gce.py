"""cce.gce_compress / cce.gce_decompress (the project's MODEL GCE codec, run as gradient
packets on the engine) against scripts/gce_ref.py, an independent numpy + ml_dtypes
reference: the same payload and scale bytes, the decoded values within the stated bound."""
import importlib.util
import pathlib
import struct

import ml_dtypes
import numpy as np
import pytest

import cce

_spec = importlib.util.spec_from_file_location(
    "gce_ref", pathlib.Path(__file__).resolve().parents[2] / "scripts" / "gce_ref.py")
gce_ref = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gce_ref)

HEADER = 32
PER_PACKET = 2048
BLOCK = 32


def stride(n):
    return -(-(HEADER + -(-n // BLOCK)) // 16) * 16


def packets(payload, headers, n):
    """Each packet's (scales, payload) from the headers laid out one stride apart."""
    step = stride(min(PER_PACKET, n))
    for k, start in enumerate(range(0, n, PER_PACKET)):
        m = min(PER_PACKET, n - start)
        h = headers[k * step:(k + 1) * step]
        assert bytes(h[:4]) == b"GCE1"
        assert struct.unpack_from("<I", bytes(h), 8)[0] == m
        yield start, m, h[HEADER:HEADER + -(-m // BLOCK)], payload[start:start + m]


@pytest.mark.parametrize("dtype", [ml_dtypes.bfloat16, np.float16, np.float32])
@pytest.mark.parametrize("n", [1, 31, 2048, 5000])
def test_compress_matches_the_reference_and_decompress_is_within_the_bound(dtype, n):
    rng = np.random.default_rng(n)
    x = (rng.standard_normal(n) * np.exp(rng.uniform(-20, 20, n))).astype(np.float32)
    x[::97] = 0.0
    x = x.astype(dtype)
    payload, headers = cce.gce_compress(x)
    assert payload.dtype == np.uint8 and payload.size == n
    values = x.astype(np.float32)
    for start, m, scales, pay in packets(payload, headers, n):
        want_scales, want_payload = gce_ref.compress(values[start:start + m], BLOCK)
        assert scales.tobytes() == np.asarray(want_scales, dtype=np.uint8).tobytes()
        assert pay.tobytes() == np.asarray(want_payload, dtype=np.uint8).tobytes()
    y = cce.gce_decompress(payload, headers, dtype=np.float32)
    assert y.dtype == np.float32 and y.size == n
    # |x - x_hat| <= max(2^-3 |x|, 2^(E - 17)) per element, E its block's scale exponent.
    for start, m, scales, _ in packets(payload, headers, n):
        e = np.repeat(scales.astype(np.int64) - 127, BLOCK)[:m]
        xs, ys = values[start:start + m].astype(np.float64), y[start:start + m].astype(np.float64)
        bound = np.maximum(np.abs(xs) / 8, np.exp2(e - 17.0))
        finite = np.isfinite(xs)
        assert np.all(np.abs(xs[finite] - ys[finite]) <= bound[finite])
        assert np.array_equal(xs[~finite], ys[~finite])  # float16's overflows: ±inf stays


def test_nan_inf_zero_and_refusals():
    x = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.5, -3.0] + [0.25] * 40, dtype=np.float32)
    payload, headers = cce.gce_compress(x)
    y = cce.gce_decompress(payload, headers, dtype=np.float32)
    assert np.isnan(y[0]) and y[1] == np.inf and y[2] == -np.inf
    assert np.signbit(y[3]) and not np.signbit(y[4])
    assert list(y[5:7]) == [1.5, -3.0] and np.all(y[7:] == 0.25)
    with pytest.raises(cce.CceError, match="not bf16, fp16 or fp32"):
        cce.gce_compress(np.arange(8, dtype=np.int32))
    bad = headers.copy()
    bad[0] ^= 0xFF
    with pytest.raises(cce.EngineFault, match="Failed to build decompression header"):
        cce.gce_decompress(payload, bad)


def test_allreduce_with_gce_equals_the_reference(tmp_path):
    """cce.allreduce(compress="gce") against scripts/allreduce_ref.py --gce (numpy + ml_dtypes)."""
    import subprocess
    import sys

    rng = np.random.default_rng(17)
    ranks, n, per_node = 6, 4099, 2
    arrays = [rng.uniform(-2, 2, n).astype(ml_dtypes.bfloat16) for _ in range(ranks)]
    outs, report = cce.allreduce(arrays, algo="ring", compress="gce", ranks_per_node=per_node)
    assert report["ranks_identical"] and report["wrong"] == 0
    assert report["nodes"] == 3 and 0.5 < report["hop_bytes_ratio"] < 0.6
    (tmp_path / "in").mkdir()
    (tmp_path / "out").mkdir()
    for r in range(ranks):
        arrays[r].tofile(tmp_path / "in" / f"rank{r}.bin")
        outs[r].tofile(tmp_path / "out" / f"rank{r}.bin")
    script = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "allreduce_ref.py"
    p = subprocess.run(
        [sys.executable, str(script), "ring", str(ranks), "bf16", str(tmp_path / "in"), str(tmp_path / "out"),
         "--gce", str(per_node)],
        capture_output=True, text=True,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    with pytest.raises(cce.CceError, match="runs the ring all-reduce"):
        cce.allreduce(arrays, algo="mesh", compress="gce")
