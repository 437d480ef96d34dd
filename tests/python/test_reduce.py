"""cce.reduce gives the bytes `cce reduce` writes for the same inputs (the CLI is the same library
path, exercised as a separate program over files); cce.nki.dma_compute equals an independent numpy
float32 sum-then-cast reference; a JAX array goes in and the right numpy array comes out."""
import ml_dtypes
import numpy as np
import pytest

import cce

BF16 = ml_dtypes.bfloat16


def sample(dtype, n, seed):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(max(info.min, -1000), min(info.max, 1000), n).astype(dt)
    return rng.uniform(-4, 4, n).astype(np.float32).astype(dt)


CASES = [
    # (op, dtype, accum, out, nsrc, extra kwargs, dests)
    ("add", BF16, "float32", None, 3, {}, 1),
    ("add", BF16, "float32", None, 1, {}, 1),
    ("add", BF16, "float32", None, 32, {}, 1),
    ("add", np.float16, "float32", None, 5, {}, 2),
    ("add", ml_dtypes.float8_e4m3, "float32", None, 4, {}, 1),
    ("add", np.float32, "float32", BF16, 2, {"rounding": "sr", "seed": 42}, 1),
    ("add", BF16, "float32", None, 7, {"rounding": "sr", "seed": 7}, 2),
    ("add", np.int32, "int32", None, 3, {}, 1),
    ("fma", BF16, "float32", None, 2, {"scales": [0.5, 0.5]}, 1),
    ("fma", np.float16, "float32", None, 6, {"scales": 0.25}, 1),
    ("min", BF16, "float32", None, 4, {}, 1),
    ("max", BF16, "float32", None, 3, {"clamp": 0.5, "clamp_dtype": BF16}, 1),
    ("min", np.float16, "float32", None, 2, {"clamp": "-1.5"}, 2),
]


def cli_dtype(dt):
    return cce.cce_name(dt)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{np.dtype(c[1]).name}-{c[4]}src-{c[6]}dst")
def test_reduce_equals_the_cli(case, run_cli, tmp_path):
    op, dt, accum, out, nsrc, kw, dests = case
    n = 3001
    srcs = [sample(dt, n, 100 + i) for i in range(nsrc)]
    got = cce.reduce(srcs, op=op, accum=accum, out=out, dests=dests, **kw)
    got = got if dests > 1 else [got]
    files = []
    for i, s in enumerate(srcs):
        p = tmp_path / f"src{i}.bin"
        s.tofile(p)
        files.append(str(p))
    dsts = [str(tmp_path / f"dst{i}.bin") for i in range(dests)]
    out_dt = np.dtype(dt if out is None else out)
    args = ["reduce", "--op", op, "--in", cli_dtype(dt), "--accum", cli_dtype(accum), "--out", cli_dtype(out_dt),
            "--src", *files, "--dst", *dsts]
    if "scales" in kw:
        sc = kw["scales"] if isinstance(kw["scales"], list) else [kw["scales"]]
        args += ["--scale", *map(str, sc)]
    if "clamp" in kw:
        args += ["--const", str(kw["clamp"]), "--const-dtype", cli_dtype(kw.get("clamp_dtype", dt))]
    if kw.get("rounding") == "sr":
        args += ["--rounding", "sr", "--seed", str(kw["seed"])]
    run_cli(*args)
    for g, d in zip(got, dsts):
        assert g.dtype == out_dt and g.shape == (n,)
        assert g.tobytes() == open(d, "rb").read()


def test_reduce_keeps_the_first_source_shape():
    a = sample(BF16, 12, 1).reshape(3, 4)
    b = sample(BF16, 12, 2)
    assert cce.reduce([a, b]).shape == (3, 4)


@pytest.mark.parametrize("dt", [BF16, np.float16, ml_dtypes.float8_e4m3, ml_dtypes.float8_e5m2, np.float32])
@pytest.mark.parametrize("nsrc", [1, 2, 5, 16])
def test_dma_compute_is_a_float32_sum_then_cast(dt, nsrc):
    srcs = [sample(dt, 4097, 10 * nsrc + i) for i in range(nsrc)]
    dst = np.zeros(4097, dtype=dt)
    cce.nki.dma_compute(dst, srcs, np.add)
    acc = np.zeros(4097, dtype=np.float32)
    for s in srcs:
        acc = acc + s.astype(np.float32)  # each step rounded to float32, in source order
    want = acc.astype(dt)
    assert dst.tobytes() == want.tobytes()


def test_dma_compute_scales_min_max_without_strict():
    a, b = sample(np.float32, 1000, 1), sample(np.float32, 1000, 2)
    dst = np.zeros(1000, dtype=np.float32)
    cce.nki.dma_compute(dst, [a, b], np.add, scales=[0.5, 2.0], strict=False)
    # FMA: one rounding per step, so compare with exactly rounded float64 steps.
    want = (np.float32(np.float64(a) * 0.5) + np.float64(b) * 2.0).astype(np.float32)
    assert np.array_equal(dst, want)
    cce.nki.dma_compute(dst, [a, b], np.maximum, strict=False)
    assert np.array_equal(dst, np.maximum(a, b))
    cce.nki.dma_compute(dst, [a, b], "min", strict=False)
    assert np.array_equal(dst, np.minimum(a, b))
    out = np.zeros(1000, dtype=BF16)
    cce.nki.dma_copy(out, a)
    assert out.tobytes() == a.astype(BF16).tobytes()


def test_a_jax_array_goes_in():
    import jax.numpy as jnp  # scripts/requirements.txt installs jax (CPU)

    x = jnp.linspace(-2, 2, 257, dtype=jnp.bfloat16)
    y = jnp.ones(257, dtype=jnp.bfloat16)
    got = cce.reduce([x, y])
    assert isinstance(got, np.ndarray) and got.dtype == np.dtype(BF16)
    # JAX's own CPU (XLA) arithmetic as the second converter: fp32 sum, cast to bf16.
    want = np.asarray((x.astype(jnp.float32) + y.astype(jnp.float32)).astype(jnp.bfloat16))
    assert got.tobytes() == want.tobytes()
    conv = cce.convert(jnp.linspace(-3, 3, 1001, dtype=jnp.float32), "bf16")
    assert conv.tobytes() == np.asarray(jnp.linspace(-3, 3, 1001, dtype=jnp.float32).astype(jnp.bfloat16)).tobytes()


def test_out_array_receives_the_result_in_place():
    a, b = sample(BF16, 1000, 1), sample(BF16, 1000, 2)
    into = np.full(1000, 7, dtype=np.float32)
    got = cce.reduce([a, b], out=into)
    assert got is into
    assert into.tobytes() == cce.reduce([a, b], out=np.float32).tobytes()
    before = into.copy()
    with pytest.raises(cce.CceError, match="1000 elements"):
        cce.reduce([a, b], out=np.zeros(999, dtype=np.float32))
    with pytest.raises(cce.CceError, match="sources differ in length"):
        cce.reduce([a, b[:10]], out=into)
    assert into.tobytes() == before.tobytes(), "a refused call leaves out= untouched"

