"""`cce gen --values uniform` against numpy: the documented counter formula recomputed here (the
32-bit hash, the odd multiple of 2^-24) and the narrow dtypes as ml_dtypes / numpy round it."""
import ml_dtypes
import numpy as np
import pytest

M64 = (1 << 64) - 1


def mix64(z):
    """SplitMix64's finaliser (the keys), in Python integers."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def fmix32(h):
    """MurmurHash3's 32-bit finaliser over a uint32 array."""
    h = h ^ (h >> np.uint32(16))
    h = h * np.uint32(0x85EBCA6B)
    h = h ^ (h >> np.uint32(13))
    h = h * np.uint32(0xC2B2AE35)
    return h ^ (h >> np.uint32(16))


def uniform_f32(seed, n):
    """Elements 0 .. n of the uniform sample (n < 2^32: one high half, 0)."""
    k = mix64(mix64(seed ^ 0x5A3CE1B496F20D87) ^ 0)
    k0, k1 = np.uint32(k & 0xFFFFFFFF), np.uint32(k >> 32)
    x = fmix32(fmix32(np.arange(n, dtype=np.uint32) ^ k0) ^ k1)
    u = (x >> np.uint32(8)).astype(np.int64)
    return ((2 * u + 1 - (1 << 24)).astype(np.float64) / float(1 << 24)).astype(np.float32)


@pytest.mark.parametrize("dtype,np_dtype", [("fp32", np.float32), ("bf16", ml_dtypes.bfloat16), ("fp16", np.float16)])
def test_uniform_is_the_formula_rounded_as_ml_dtypes_rounds(run_cli, tmp_path, dtype, np_dtype):
    # Past several of the generator's 2048-element passes and threads' stretches, odd length.
    n, seed = 70_001, 12
    f = tmp_path / f"{dtype}.bin"
    run_cli("gen", "--dtype", dtype, "--elems", n, "--seed", seed, "-o", f)
    got = np.fromfile(f, dtype=np.uint8)
    want = uniform_f32(seed, n).astype(np_dtype)
    assert got.size == want.nbytes
    word = f"<u{want.itemsize}"
    bad = np.flatnonzero(got.view(word) != want.view(word))
    assert bad.size == 0, f"{bad.size} elements differ, first at {bad[:5].tolist()}"
