"""``python -m cce.examples.jax_overhead [--devices 4 8] [--mib 1] [--calls 15]``: what
``cce.jax.psum`` costs per call inside a jitted ``shard_map``, against ``cce.allreduce`` of the
same shards (``check="none"``, the adapters' default).

Each device count runs in its own process (JAX fixes its CPU device count when it starts):
``--mib`` MiB of bf16 per device, the jitted psum and ``cce.allreduce`` alternated ``--calls``
times after a warm-up each; the medians and their ratio. A benchmark, never a test: needs jax
(``pip install 'cce-trainium[jax]'``).
"""
import argparse
import json
import subprocess
import sys
import time


def worker(devices, mib, calls):
    import jax

    jax.config.update("jax_num_cpu_devices", devices)
    import jax.numpy as jnp
    import ml_dtypes
    import numpy as np
    from jax.sharding import Mesh, PartitionSpec as P

    import cce
    import cce.jax as cj

    n = (mib << 20) // 2
    x = np.random.default_rng(0).standard_normal((devices, n)).astype(ml_dtypes.bfloat16)
    mesh = Mesh(np.array(jax.devices()), ("d",))
    f = jax.jit(jax.shard_map(lambda v: cj.psum(v, "d"), mesh=mesh, in_specs=P("d"), out_specs=P("d")))
    xj = jnp.asarray(x.reshape(-1))
    f(xj).block_until_ready()
    shards = list(x)
    cce.allreduce(shards, check="none")
    psum, base = [], []
    for _ in range(calls):
        t0 = time.perf_counter()
        f(xj).block_until_ready()
        psum.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        cce.allreduce(shards, check="none")
        base.append(time.perf_counter() - t0)
    psum.sort()
    base.sort()
    med = calls // 2
    print(json.dumps({"devices": devices, "mib_per_device": mib, "psum_seconds": psum[med],
                      "allreduce_seconds": base[med], "ratio": psum[med] / base[med], "jax": jax.__version__}))


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m cce.examples.jax_overhead", description=__doc__.splitlines()[0])
    ap.add_argument("--devices", type=int, nargs="+", default=[4, 8])
    ap.add_argument("--mib", type=int, default=1, help="MiB of bf16 per device (default 1)")
    ap.add_argument("--calls", type=int, default=15, help="alternated calls (default 15)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.worker:
        worker(a.worker, a.mib, a.calls)
        return 0
    if any(d < 2 for d in a.devices) or a.mib < 1 or a.calls < 1:
        ap.error("--devices must be at least 2, --mib and --calls at least 1")
    rows = []
    for d in a.devices:
        p = subprocess.run([sys.executable, "-m", "cce.examples.jax_overhead", "--worker", str(d), "--mib", str(a.mib),
                            "--calls", str(a.calls)], capture_output=True, text=True)
        if p.returncode:
            raise SystemExit(p.stderr.strip().splitlines()[-1] if p.stderr.strip() else "a worker failed")
        rows.append(json.loads(p.stdout.strip().splitlines()[-1]))
    if a.json:
        print(json.dumps(rows, indent=1))
        return 0
    print("| devices | cce.jax.psum, ms/call | cce.allreduce, ms/call | ratio |")
    print("|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['devices']} | {r['psum_seconds'] * 1e3:.2f} | {r['allreduce_seconds'] * 1e3:.2f} | {r['ratio']:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
