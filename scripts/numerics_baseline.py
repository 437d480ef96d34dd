#!/usr/bin/env python3
"""numpy + ml_dtypes baseline for the `add4-bf16-rne` job of `cce bench numerics`.

Usage: python3 scripts/numerics_baseline.py [MiB per source, default 64] [--json]

Times 4 bf16 sources -> fp32 accumulate (in source order) -> bf16 out, the two ways a Python
user writes it (in-place `acc += s.astype(f32)`, and one expression of four astype's), and reports GB/s counting bytes read + written (5 x size), plus a same-run
single-thread memcpy (np.copyto) of 4 x size bytes for the ratio. Best of 5.
"""
import json
import sys
import time

try:
    import ml_dtypes
    import numpy as np
except ImportError:
    sys.stderr.write("numerics_baseline.py needs numpy and ml_dtypes: run scripts/test (it installs them into .venv), or pip install -r scripts/requirements.txt\n")
    sys.exit(3)


def best(f, reps=5):
    t = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        t = min(t, time.perf_counter() - t0)
    return t


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    mib = int(args[0]) if args else 64
    size = mib << 20
    n = size // 2
    rng = np.random.default_rng(1)
    # Finite, moderate bf16 values (same kind of data as the Rust bench).
    srcs = [rng.standard_normal(n, dtype=np.float32).astype(ml_dtypes.bfloat16) for _ in range(4)]

    big_src = np.frombuffer(rng.bytes(4 * size), dtype=np.uint8)
    big_dst = np.empty_like(big_src)
    t_copy = best(lambda: np.copyto(big_dst, big_src))
    memcpy_gbps = 8 * size / t_copy / 1e9
    del big_src, big_dst

    def job():
        acc = srcs[0].astype(np.float32)
        for s in srcs[1:]:
            acc += s.astype(np.float32)
        return acc.astype(ml_dtypes.bfloat16)

    def naive():
        a, b, c, d = srcs
        return (a.astype(np.float32) + b.astype(np.float32) + c.astype(np.float32)
                + d.astype(np.float32)).astype(ml_dtypes.bfloat16)

    res = {"name": "add4-bf16-rne", "impl": "numpy+ml_dtypes", "mib_per_source": mib, "memcpy_gbps": memcpy_gbps,
           "numpy": np.__version__, "ml_dtypes": ml_dtypes.__version__, "variants": []}
    for name, f in (("in-place", job), ("expression", naive)):
        t = best(f)
        gbps = 5 * size / t / 1e9
        res["variants"].append({"variant": name, "gbps": gbps, "ratio": gbps / memcpy_gbps})
    if "--json" in sys.argv:
        print(json.dumps(res))
    else:
        print(f"memcpy (np.copyto, 1 thread): {memcpy_gbps:.2f} GB/s")
        for v in res["variants"]:
            print(f"add4-bf16-rne numpy+ml_dtypes ({v['variant']}): {v['gbps']:.2f} GB/s  ratio {v['ratio']:.3f}")


if __name__ == "__main__":
    main()
