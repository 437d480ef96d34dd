"""``python -m cce.bench [MiB per source, default 64] [--json]``: the Python package's speed.

In one run, on the same machine state:
- ``cce.reduce`` on 4 × N MiB bf16 sources → fp32 accumulate → bf16 (the whole call: arrays in,
  the host rings, the engine, the result array out), GB/s counting bytes read + written (5 × N);
- the same job through ``cce bench reduce`` (the library's benchmark, run in this process), and
  the ratio of the two; and ``cce.reduce(..., out=array)`` into a reused result array (no fresh
  64 MiB to zero);
- the same job in numpy + ml_dtypes (fp32 accumulate in source order, then one cast), and cce's
  speed-up over it;
- the per-call time of a 1,024-element 4-source ``cce.reduce`` (the fixed cost of a call).
Best of the repetitions; a benchmark, never a test.
"""
import json
import sys
import time

import ml_dtypes
import numpy as np

import cce
from cce import _cce


def best(f, reps):
    t = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        t = min(t, time.perf_counter() - t0)
    return t


def run(mib=64, reps=5):
    size = mib << 20
    n = size // 2
    rng = np.random.default_rng(1)
    srcs = [rng.standard_normal(n, dtype=np.float32).astype(ml_dtypes.bfloat16) for _ in range(4)]
    moved = 5 * size

    t_cce = best(lambda: cce.reduce(srcs), reps)
    into = np.zeros(n, dtype=ml_dtypes.bfloat16)
    t_into = best(lambda: cce.reduce(srcs, out=into), reps)
    lib = _cce.bench_reduce(size, [1], reps)
    lib_rne = next(r for r in lib["results"] if r["name"] == "reduce4-bf16-rne" and r["threads"] == 1)

    def numpy_job():
        acc = srcs[0].astype(np.float32)
        for s in srcs[1:]:
            acc += s.astype(np.float32)
        return acc.astype(ml_dtypes.bfloat16)

    t_np = best(numpy_job, reps)
    small = [s[:1024].copy() for s in srcs]
    for _ in range(200):
        cce.reduce(small)
    calls = 5000
    t0 = time.perf_counter()
    for _ in range(calls):
        cce.reduce(small)
    per_call = (time.perf_counter() - t0) / calls

    cce_gbps = moved / t_cce / 1e9
    np_gbps = moved / t_np / 1e9
    return {
        "mib_per_source": mib,
        "cce_reduce_gbps": cce_gbps,
        "bench_reduce_gbps": lib_rne["gbps"],
        "ratio_to_bench_reduce": cce_gbps / lib_rne["gbps"],
        "cce_reduce_into_gbps": moved / t_into / 1e9,
        "ratio_into_to_bench_reduce": moved / t_into / 1e9 / lib_rne["gbps"],
        "memcpy_gbps": lib["memcpy_gbps"],
        "numpy_ml_dtypes_gbps": np_gbps,
        "speedup_over_numpy": cce_gbps / np_gbps,
        "per_call_us_1024": per_call * 1e6,
    }


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    r = run(int(args[0]) if args else 64)
    if "--json" in argv:
        print(json.dumps(r))
        return
    print(f"4 x {r['mib_per_source']} MiB bf16 -> fp32 -> bf16 add, 1 thread (GB/s = bytes read + written)")
    print(f"  cce.reduce            {r['cce_reduce_gbps']:8.2f} GB/s")
    print(f"  cce bench reduce      {r['bench_reduce_gbps']:8.2f} GB/s   ratio {r['ratio_to_bench_reduce']:.2f}")
    print(f"  cce.reduce(out=array) {r['cce_reduce_into_gbps']:8.2f} GB/s   ratio {r['ratio_into_to_bench_reduce']:.2f}"
          " (into a reused result array)")
    print(f"  numpy + ml_dtypes     {r['numpy_ml_dtypes_gbps']:8.2f} GB/s   cce {r['speedup_over_numpy']:.1f}x faster")
    print(f"  memcpy (same run)     {r['memcpy_gbps']:8.2f} GB/s")
    print(f"  cce.reduce, 4 x 1024 elements: {r['per_call_us_1024']:.1f} us per call")


if __name__ == "__main__":
    main(sys.argv[1:])
