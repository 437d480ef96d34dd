"""Cases for test_jax.py, run in a child process per device count (JAX fixes its CPU device count
when it starts). Usage: jax_cases.py CASE DEVICES OUT_DIR; writes OUT_DIR/result.json."""
import json
import pathlib
import sys
import warnings

import jax

CASE, DEVICES, OUT = sys.argv[1], int(sys.argv[2]), pathlib.Path(sys.argv[3])
jax.config.update("jax_num_cpu_devices", DEVICES)

import jax.numpy as jnp  # noqa: E402
import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import Mesh, PartitionSpec as P  # noqa: E402

import cce  # noqa: E402
import cce.jax as cj  # noqa: E402

MESH = Mesh(np.array(jax.devices()), ("d",))
DTYPES = {"bf16": ml_dtypes.bfloat16, "fp16": np.float16, "fp32": np.float32}


def shards(dt, n, seed):
    """Every rank's shard, different per rank and per element."""
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((DEVICES, n)) * np.exp2(rng.integers(-6, 7, (DEVICES, n)))).astype(dt)


def run_psum(x, fn):
    f = jax.jit(jax.shard_map(fn, mesh=MESH, in_specs=P("d"), out_specs=P("d")))
    return np.asarray(f(jnp.asarray(x.reshape(-1)))).reshape(x.shape)


def psum_equals_allreduce():
    """psum and pmean per dtype and rounding, against cce.allreduce of the same shards, and the
    RNE ring sums written for scripts/allreduce_ref.py."""
    out = []
    for name, dt in DTYPES.items():
        x = shards(dt, 1000 + DEVICES, seed=DEVICES)
        for rounding in ("rne", "sr"):
            for op, fn in (("add", cj.psum), ("avg", cj.pmean)):
                y = run_psum(x, lambda v, fn=fn, r=rounding: fn(v, "d", rounding=r, seed=11))
                want, _ = cce.allreduce(list(x), op=op, rounding=rounding, seed=11)
                same = all(y[i].tobytes() == want[i].tobytes() for i in range(DEVICES))
                out.append({"dtype": name, "rounding": rounding, "op": op, "same": same})
        ring_dir = OUT / name
        (ring_dir / "in").mkdir(parents=True)
        (ring_dir / "out").mkdir()
        y = run_psum(x, lambda v: cj.psum(v, "d"))
        for r in range(DEVICES):
            x[r].tofile(ring_dir / "in" / f"rank{r}.bin")
            y[r].tofile(ring_dir / "out" / f"rank{r}.bin")
    # Large shards (host callbacks, cce.jax's first design, hung on arguments this size).
    x = shards(ml_dtypes.bfloat16, 1 << 18, seed=DEVICES + 1)
    y = run_psum(x, lambda v: cj.psum(v, "d"))
    want, _ = cce.allreduce(list(x))
    out.append({"dtype": "bf16", "rounding": "rne", "op": "add", "elements": 1 << 18,
                "same": all(y[i].tobytes() == want[i].tobytes() for i in range(DEVICES))})
    return {"cases": out}


def hier_psum():
    """psum over a hierarchy (2 nodes of DEVICES / 2) against cce.allreduce of the same shards."""
    x = shards(ml_dtypes.bfloat16, 1000 + DEVICES, seed=DEVICES + 2)
    opts = dict(algo="hier", nodes=2, ranks_per_node=DEVICES // 2, intra="kangaring", inter="rdh", rounding="sr",
                seed=7)
    y = run_psum(x, lambda v: cj.psum(v, "d", **opts))
    want, report = cce.allreduce(list(x), op="add", **opts)
    return {"same": all(y[i].tobytes() == want[i].tobytes() for i in range(DEVICES)), "algo": report["label"]}


def seeds_replay():
    """SR without a seed: two runs of one jitted step give the bits of seeds derived from
    (0, position, step); the second run differs from the first (the step moved)."""
    x = shards(ml_dtypes.bfloat16, 4096, seed=3)
    f = jax.jit(jax.shard_map(lambda v: cj.psum(v, "d", rounding="sr"), mesh=MESH, in_specs=P("d"),
                              out_specs=P("d")))
    position = cj._CALLS.positions
    runs = [np.asarray(f(jnp.asarray(x.reshape(-1)))).reshape(x.shape) for _ in range(2)]
    same = []
    for step, y in enumerate(runs):
        want, _ = cce.allreduce(list(x), rounding="sr", seed=cj.derived_seed(0, position, step))
        same.append(all(y[i].tobytes() == want[i].tobytes() for i in range(DEVICES)))
    return {"same": same, "steps_differ": runs[0].tobytes() != runs[1].tobytes()}


def training_step():
    """An unmodified shard_map step (grad, pmean of the gradient, psum(1) for the axis size)
    under collectives(): routed through cce, the mean equal to cce.allreduce's of the
    per-device gradients; XLA's psum back afterwards."""
    rng = np.random.default_rng(8)
    xs = rng.standard_normal((DEVICES * 4, 3)).astype(np.float32)
    ys = (xs @ np.array([1.0, -2.0, 0.5], np.float32) + 0.1 * rng.standard_normal(DEVICES * 4)).astype(np.float32)
    w = jnp.asarray(np.array([0.3, 0.1, -0.2], np.float32))

    def grads(w, xb, yb):
        return jax.grad(lambda w: jnp.mean((xb @ w - yb) ** 2))(w)

    def step(w, xb, yb):
        local = grads(w, xb, yb)
        g = jax.lax.pmean(local, "d")
        n = jax.lax.psum(1, "d")
        return w - 0.1 * g, g, local[None], n

    sm = jax.shard_map(step, mesh=MESH, in_specs=(P(), P("d"), P("d")), out_specs=(P(), P(), P("d"), P()))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with cj.collectives() as routed:
            _, g, local, n = jax.jit(sm)(w, jnp.asarray(xs), jnp.asarray(ys))
            routed = list(routed)
    mean, _ = cce.allreduce(list(np.asarray(local)), op="avg")
    restored = jax.lax.psum.__module__.startswith("jax.")
    pm = jax.jit(jax.shard_map(lambda v: jax.lax.psum(v, "d"), mesh=MESH, in_specs=P("d"), out_specs=P()))
    xla_after = float(np.asarray(pm(jnp.arange(DEVICES, dtype=jnp.float32)))[0])
    return {
        "routed": routed,
        "fallthrough": [str(c.message) for c in caught if issubclass(c.category, cj.CceFallthrough)],
        "mean_equal": np.asarray(g).tobytes() == mean[0].tobytes(),
        "axis_size": int(n),
        "restored": restored,
        "xla_after": xla_after,
        "routed_after": cj.routed(),
    }


def gradients():
    """Reverse-mode gradients through psum and pmean against finite differences
    (jax.test_util.check_grads, fp32), and against XLA's psum's gradient."""
    from jax.test_util import check_grads

    x = jnp.asarray(shards(np.float32, 8, seed=1).reshape(-1))
    res = {}
    for name, fn, xla in (("psum", cj.psum, jax.lax.psum), ("pmean", cj.pmean, jax.lax.pmean)):
        h = jax.shard_map(lambda v, fn=fn: jnp.sin(fn(v, "d")) * 3.0, mesh=MESH, in_specs=P("d"), out_specs=P("d"))
        try:
            check_grads(h, (x,), order=1, modes=["rev"], atol=2e-2, rtol=2e-2)
            res[name] = "ok"
        except AssertionError as e:
            res[name] = str(e)[:300]

        def loss(v, fn):
            return jnp.sum(jnp.sin(fn(v, "d")) * jnp.arange(v.shape[0], dtype=v.dtype))

        g = [jax.jit(jax.shard_map(jax.grad(lambda v, f=f: loss(v, f)), mesh=MESH, in_specs=P("d"),
                                   out_specs=P("d")))(x) for f in (fn, xla)]
        res[name + "_vs_xla"] = float(np.max(np.abs(np.asarray(g[0]) - np.asarray(g[1]))))
    return res


def device_never_arrives():
    """A call whose axis counts two devices more than run (jax.lax.axis_size patched while it is
    traced): the devices that do arrive wait RENDEZVOUS_SECONDS, then every call fails with an
    error naming the two that never came; the next call, traced normally, works."""
    cj.RENDEZVOUS_SECONDS = 0.3
    real = jax.lax.axis_size
    jax.lax.axis_size = lambda name: real(name) + 2
    x = shards(np.float32, 8, seed=1)
    try:
        run_psum(x, lambda v: cj.psum(v, "d"))
        error = None
    except Exception as e:  # noqa: BLE001 - JAX wraps the handler's error
        error = f"{type(e).__name__}: {e}"
    finally:
        jax.lax.axis_size = real
    y = run_psum(x, lambda v: cj.psum(v, "d"))
    want, _ = cce.allreduce(list(x))
    return {"error": error, "after": all(y[i].tobytes() == want[i].tobytes() for i in range(DEVICES))}


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    result = {"psum": psum_equals_allreduce, "seeds": seeds_replay, "train": training_step, "hier": hier_psum,
              "grad": gradients, "timeout": device_never_arrives}[CASE]()
    (OUT / "result.json").write_text(json.dumps(result, default=list))


if __name__ == "__main__":
    main()
