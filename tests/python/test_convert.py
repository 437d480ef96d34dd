"""cce.convert against ml_dtypes / numpy casts (the independent converter), bit for bit."""
import ml_dtypes
import numpy as np
import pytest

import cce

NARROW = {
    "bfloat16": ml_dtypes.bfloat16, "float16": np.float16, "float8_e3m4": ml_dtypes.float8_e3m4,
    "float8_e4m3": ml_dtypes.float8_e4m3, "float8_e5m2": ml_dtypes.float8_e5m2,
    "float8_e4m3fn": ml_dtypes.float8_e4m3fn,
}
ALL = {**NARROW, "float32": np.float32}


def every_pattern(dt):
    dt = np.dtype(dt)
    bits = np.arange(1 << (8 * dt.itemsize), dtype=np.uint8 if dt.itemsize == 1 else np.uint16)
    return bits.view(dt)


def same_bits(got, want):
    """Bit for bit, except NaN: a converted NaN is the target's canonical quiet NaN with the same
    sign (docs/MODEL.md, Conversions), so a NaN compares by class and sign."""
    assert got.dtype == want.dtype and got.shape == want.shape
    g = got.view(np.uint8).reshape(got.size, -1)
    w = want.view(np.uint8).reshape(want.size, -1)
    differ = (g != w).any(axis=1)
    wf, gf = want.reshape(-1).astype(np.float32), got.reshape(-1).astype(np.float32)
    nan = np.isnan(wf)
    assert np.array_equal(np.isnan(gf), nan), "NaN where the reference has none, or none where it has one"
    assert np.array_equal(np.signbit(gf[nan]), np.signbit(wf[nan])), "a NaN lost its sign"
    differ &= ~nan
    bad = np.flatnonzero(differ)
    assert bad.size == 0, f"{bad.size} elements differ, first at {bad[:5].tolist()}"


@pytest.mark.parametrize("src", sorted(NARROW))
@pytest.mark.parametrize("dst", sorted(ALL))
def test_every_narrow_pattern_to_every_dtype(src, dst):
    x = every_pattern(NARROW[src])
    same_bits(cce.convert(x, ALL[dst]), x.astype(ALL[dst]))


@pytest.mark.parametrize("dst", sorted(NARROW))
def test_float32_patterns_to_every_narrow_dtype(dst):
    # Every 4099th f32 pattern (about 1 M, all exponents and signs) plus every tie of the narrow grid.
    bits = np.arange(0, 1 << 32, 4099, dtype=np.uint64).astype(np.uint32)
    x = bits.view(np.float32)
    same_bits(cce.convert(x, NARROW[dst]), x.astype(NARROW[dst]))
    # Midpoints between neighbouring narrow values (ties to even) and a hair either side.
    grid = every_pattern(NARROW[dst]).astype(np.float32)
    grid = np.unique(grid[np.isfinite(grid)])
    mids = ((grid[:-1].astype(np.float64) + grid[1:]) / 2).astype(np.float32)
    near = np.concatenate([mids, np.nextafter(mids, np.float32(np.inf)), np.nextafter(mids, np.float32(-np.inf))])
    same_bits(cce.convert(near, NARROW[dst]), near.astype(NARROW[dst]))


def test_shape_and_layout():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    y = cce.convert(x, "bf16")
    assert y.shape == (2, 3, 4) and y.dtype == np.dtype(ml_dtypes.bfloat16)
    # A non-contiguous view is copied once and converted like its contiguous copy.
    v = x[:, ::2, 1:]
    same_bits(cce.convert(v, ml_dtypes.bfloat16), np.ascontiguousarray(v).astype(ml_dtypes.bfloat16))


def test_stochastic_rounding_is_deterministic_and_unbiased():
    x = np.full(100_000, 1.0 + 2.0 ** -9, dtype=np.float32)  # a quarter of the bf16 ulp (2^-7) above 1
    a = cce.convert(x, "bf16", rounding="sr", seed=7)
    assert np.array_equal(a.view(np.uint16), cce.convert(x, "bf16", rounding="sr", seed=7).view(np.uint16))
    assert not np.array_equal(a.view(np.uint16), cce.convert(x, "bf16", rounding="sr", seed=8).view(np.uint16))
    up = np.mean(a.astype(np.float32) > 1.0)
    assert abs(up - 0.25) < 0.01, up  # rounds up with probability 1/4


def test_saturate():
    x = np.array([1e6, -1e6, np.inf], dtype=np.float32)
    y = cce.convert(x, ml_dtypes.float8_e4m3, saturate=True).astype(np.float32)
    m = float(ml_dtypes.finfo(ml_dtypes.float8_e4m3).max)
    assert y[0] == m and y[1] == -m
