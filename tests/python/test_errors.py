"""Bad input raises the documented exception with a clear message; a randomized run over
thousands of argument combinations never crashes the interpreter (only documented exceptions)."""
import random

import ml_dtypes
import numpy as np
import pytest

import cce

BF16 = ml_dtypes.bfloat16


def a(n=8, dt=BF16):
    return np.arange(n, dtype=np.float32).astype(dt)


@pytest.mark.parametrize("call, fragment", [
    (lambda: cce.convert(a(), "float64"), "unknown dtype 'float64'"),
    (lambda: cce.convert(np.zeros(4, dtype=np.complex64), "bf16"), "not a CCE dtype"),
    (lambda: cce.convert(a(), "bf16", rounding="up"), "rounding 'up'"),
    (lambda: cce.convert(np.float32(1.0), "bf16"), "0-d array"),
    (lambda: cce.reduce([a(8), a(4)]), "sources differ in length: source 0 has 16 bytes, source 1 has 8 bytes"),
    (lambda: cce.reduce([a(8), a(8, np.float16)]), "source 1 is float16, source 0 is bfloat16"),
    (lambda: cce.reduce([a()] * 33), "33 sources"),
    (lambda: cce.reduce([]), "at least one source"),
    (lambda: cce.reduce(a()), "a list of arrays"),
    (lambda: cce.reduce([a(), a()], op="fma", scales=[1.0, 2.0, 3.0]), "3 scales for 2 sources"),
    (lambda: cce.reduce([a(), a()], op="xor"), "op 'xor'"),
    (lambda: cce.reduce([a(), a()], scales=[0.5, 0.5]), "--scale is for --op fma only"),
    (lambda: cce.reduce([a(), a()], clamp=1.0), "constant"),
    (lambda: cce.reduce([a(), a()], dests=2, arch=2), "CCE replication not supported for v1/v2 archs"),
    (lambda: cce.reduce([a(), a()], accum="fp32r", out="fp32r"), "fp32r"),
    (lambda: cce.reduce([a(), a()], op="max", clamp=1, clamp_dtype=np.float32),
     "Unsupported data type for min/max op fp32"),
    (lambda: cce.reduce([a(), a()], rounding="sr", seed=1 << 40), "seed: 1099511627776 does not fit 32 bits"),
    (lambda: cce.reduce([a(), a()], rounding="sr", seed=-1), "seed: -1 does not fit 32 bits"),
    (lambda: cce.reduce([a(), a()], arch="3"), "arch: '3' is not an integer"),
    (lambda: cce.reduce([a(), a()], threads=0), "threads must be at least 1"),
    (lambda: cce.reduce([a(), a()], op="fma", scales="x"), "scales: 'x' is not a number"),
    (lambda: cce.reduce([a(), a()], op=None), "op None"),
    (lambda: cce.nki.dma_compute(np.zeros(8, BF16), [a(), a()], np.maximum), "supports add only"),
    (lambda: cce.nki.dma_compute(np.zeros(8, BF16), [a(), a()], np.add, scales=[1.0, 2.0]), "scales of 1.0 only"),
    (lambda: cce.nki.dma_compute(np.zeros(8, BF16), [a()] * 17, np.add), "at most 16"),
    (lambda: cce.nki.dma_compute(np.zeros(8, BF16), [a(), a(4)], np.add), "element counts must be equal"),
    (lambda: cce.nki.dma_compute(np.zeros(8, BF16), [a(), a()], np.subtract), "expected numpy.add"),
    (lambda: cce.nki.dma_compute(np.zeros(8, BF16), [a()] * 2, np.add, scales=[1.0]), "1 scales for 2 sources"),
    (lambda: cce.nki.dma_compute([0.0] * 8, [a()], np.add), "dst: a numpy array"),
])
def test_bad_input_raises_cce_error(call, fragment):
    with pytest.raises(cce.CceError) as e:
        call()
    assert isinstance(e.value, ValueError)
    assert fragment in str(e.value)
    assert "\n" not in str(e.value)


def test_non_contiguous_views_are_read_correctly():
    x = np.arange(64, dtype=np.float32).reshape(8, 8)
    v = x[::2, ::3]
    assert not v.flags.c_contiguous
    got = cce.reduce([v.astype(np.float32), v], op="add", out=np.float32)
    assert np.array_equal(got, (v + v).astype(np.float32))


DTYPES = [BF16, np.float16, np.float32, ml_dtypes.float8_e4m3, ml_dtypes.float8_e5m2, ml_dtypes.float8_e3m4,
          ml_dtypes.float8_e4m3fn, np.int8, np.uint8, np.int16, np.int32, np.uint32, np.int64, np.float64,
          "bf16", "fp32r", "nope", None, 3]
OPS = ["add", "fma", "min", "max", "copy", "", None, 7]
ROUNDINGS = ["rne", "sr", "RNE", None]


def test_ten_thousand_random_calls_raise_only_documented_exceptions():
    rng = random.Random(12345)
    allowed = (cce.CceError, cce.EngineFault)
    outcomes = {"ok": 0, "refused": 0}
    for _ in range(10_000):
        dt = rng.choice(DTYPES[:13])
        n = rng.choice([0, 1, 3, 64, 1000])
        nsrc = rng.choice([0, 1, 2, 3, 16, 32, 33])
        srcs = []
        for _k in range(nsrc):
            m = n if rng.random() < 0.9 else rng.choice([1, 2, 5])
            srcs.append(np.zeros(m, dtype=np.float32).astype(dt) if rng.random() < 0.5 else
                        np.arange(m, dtype=np.float32).astype(dt)[::-1])
        kw = {
            "op": rng.choice(OPS), "accum": rng.choice(DTYPES), "out": rng.choice(DTYPES + [None] * 4),
            "rounding": rng.choice(ROUNDINGS), "seed": rng.choice([0, 1, 2 ** 32 - 1, 2 ** 32, -1]),
            "arch": rng.choice([0, 1, 2, 3, 4, 5, 99]), "dests": rng.choice([0, 1, 2, 3, 100]),
            "threads": rng.choice([0, 1, 2]),
        }
        if rng.random() < 0.3:
            kw["scales"] = rng.choice([0.5, [1.0] * nsrc, [1.0] * (nsrc + 1), float("nan"), "x"])
        if rng.random() < 0.2:
            kw["clamp"] = rng.choice([0.5, "0x3f80", "junk", -1e30])
            kw["clamp_dtype"] = rng.choice(DTYPES)
        which = rng.random()
        try:
            if which < 0.6:
                cce.reduce(srcs, **kw)
            elif which < 0.8:
                x = srcs[0] if srcs else np.float32(1.0)
                cce.convert(x, rng.choice(DTYPES), rounding=kw["rounding"] or "rne", seed=abs(kw["seed"]),
                            saturate=rng.random() < 0.5)
            else:
                dst = np.zeros(n, dtype=rng.choice(DTYPES[:13]))
                cce.nki.dma_compute(dst, srcs, rng.choice([np.add, np.maximum, np.minimum, "add", "sub"]),
                                    strict=rng.random() < 0.5)
            outcomes["ok"] += 1
        except allowed:
            outcomes["refused"] += 1
    # Both kinds happen: the run exercised real work, not only refusals.
    assert outcomes["ok"] > 500 and outcomes["refused"] > 500, outcomes
