"""``python -m cce.examples.call_overhead [--ranks 8] [--mib 2] [--calls 40]``: what a
``cce.allreduce(check="none")`` call costs beside its own ``seconds``, and the least work any
call must add to them.

``--ranks`` arrays of ``--mib`` MiB of bf16 each (8 × 2 MiB is issue 27's 8 × 1 Mi elements).
Alternated ``--calls`` times after a warm-up: numpy's ``copyto`` of every array into buffers
made before (warm memory: the copy a call must make, since the engine owns its buffers and the
ring writes in place), then the call. Prints the medians of the copy, the call's wall time and
its ``seconds``, and the ratios of the copy and the wall to ``seconds``. A benchmark, never a
test.
"""
import argparse
import json
import statistics
import sys
import time

import ml_dtypes
import numpy as np

import cce


def measure(ranks, mib, calls):
    """The medians of (copy, wall, seconds) over `calls` alternated rounds, in seconds."""
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal((mib << 20) // 2).astype(ml_dtypes.bfloat16) for _ in range(ranks)]
    room = [np.empty_like(a) for a in arrays]
    for _ in range(3):
        cce.allreduce(arrays, check="none")
    copy, wall, seconds = [], [], []
    for _ in range(calls):
        t0 = time.perf_counter()
        for r, a in zip(room, arrays):
            np.copyto(r, a)
        copy.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        _, report = cce.allreduce(arrays, check="none")
        wall.append(time.perf_counter() - t0)
        seconds.append(report["seconds"])
    m = statistics.median
    return m(copy), m(wall), m(seconds)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m cce.examples.call_overhead", description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, default=8)
    ap.add_argument("--mib", type=int, default=2, help="MiB of bf16 per rank (default 2: 1 Mi elements)")
    ap.add_argument("--calls", type=int, default=40, help="alternated rounds (default 40)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    if a.ranks < 2 or a.mib < 1 or a.calls < 1:
        ap.error("--ranks must be at least 2, --mib and --calls at least 1")
    copy, wall, seconds = measure(a.ranks, a.mib, a.calls)
    row = {"ranks": a.ranks, "mib_per_rank": a.mib, "copy_seconds": copy, "wall_seconds": wall,
           "seconds": seconds, "copy_to_seconds": copy / seconds, "wall_to_seconds": wall / seconds}
    if a.json:
        print(json.dumps(row, indent=1))
        return 0
    print(f"{a.ranks} × {a.mib} MiB bf16, medians of {a.calls}: the inputs' copy {copy * 1e3:.2f} ms, "
          f"the call {wall * 1e3:.2f} ms, its seconds {seconds * 1e3:.2f} ms")
    print(f"copy / seconds {copy / seconds:.2f}, wall / seconds {wall / seconds:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
