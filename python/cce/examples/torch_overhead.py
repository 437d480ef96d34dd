"""``python -m cce.examples.torch_overhead [--ranks 2 4] [--mib 1] [--calls 20] [--transport auto]``:
what the ``"cce"`` torch backend costs per ``all_reduce``, against ``cce.allreduce`` of the same
arrays in one process (``check="none"``, the adapters' default).

Each rank count starts that many processes (this module in worker mode, on a fresh port); every
rank makes ``--calls`` bf16 all-reduces (RNE) of ``--mib`` MiB back to back, as a training loop
does, after one warm-up call; its time per call is the best of three such runs. The parent then
times ``cce.allreduce`` of the same arrays the same way. The ratio is the slowest rank's time
per call over the parent's. A benchmark, never a test: needs torch (``pip install
'cce-trainium[torch]'``).
"""
import argparse
import json
import os
import pathlib
import socket
import subprocess
import sys
import tempfile
import time

import numpy as np

from .._dtypes import numpy_dtype


def _per_call(f, calls):
    f()
    runs = []
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(calls):
            f()
        runs.append((time.perf_counter() - t0) / calls)
    return min(runs)


def worker(out, mib, calls):
    import datetime

    import torch
    import torch.distributed as dist

    import cce.torch  # noqa: F401 - registers the backend

    dist.init_process_group("cce", timeout=datetime.timedelta(seconds=120))
    rank = dist.get_rank()
    g = torch.Generator().manual_seed(rank)
    x = torch.randn((mib << 20) // 2, generator=g).to(torch.bfloat16)
    y = x.clone()
    dist.barrier()
    seconds = _per_call(lambda: dist.all_reduce(y), calls)
    np.save(pathlib.Path(out) / f"rank{rank}.npy", x.view(torch.int16).numpy())
    (pathlib.Path(out) / f"rank{rank}.json").write_text(json.dumps({"seconds": seconds}))
    dist.destroy_process_group()


def measure(ranks, mib, calls, transport):
    import cce

    with tempfile.TemporaryDirectory() as out:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        procs = []
        for r in range(ranks):
            env = dict(os.environ, RANK=str(r), WORLD_SIZE=str(ranks), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
                       CCE_TRANSPORT=transport, TORCH_CPP_LOG_LEVEL="ERROR")
            procs.append(subprocess.Popen([sys.executable, "-m", "cce.examples.torch_overhead", "--worker", out,
                                           "--mib", str(mib), "--calls", str(calls)], env=env))
        if any(p.wait() for p in procs):
            raise SystemExit("a rank failed")
        per_rank = [json.loads((pathlib.Path(out) / f"rank{r}.json").read_text())["seconds"] for r in range(ranks)]
        arrays = [np.load(pathlib.Path(out) / f"rank{r}.npy").view(numpy_dtype("bf16")) for r in range(ranks)]
    base = _per_call(lambda: cce.allreduce(arrays, check="none"), calls)
    return {"ranks": ranks, "mib_per_rank": mib, "transport": transport, "torch_seconds": max(per_rank),
            "per_rank_seconds": per_rank, "allreduce_seconds": base, "ratio": max(per_rank) / base}


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m cce.examples.torch_overhead", description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, nargs="+", default=[2, 4])
    ap.add_argument("--mib", type=int, default=1, help="MiB of bf16 per rank (default 1)")
    ap.add_argument("--calls", type=int, default=20, help="calls per timed run (default 20)")
    ap.add_argument("--transport", default="auto", choices=["auto", "shm", "gloo"])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.worker:
        worker(a.worker, a.mib, a.calls)
        return 0
    if any(r < 2 for r in a.ranks) or a.mib < 1 or a.calls < 1:
        ap.error("--ranks must be at least 2, --mib and --calls at least 1")
    rows = [measure(r, a.mib, a.calls, a.transport) for r in a.ranks]
    if a.json:
        print(json.dumps(rows, indent=1))
        return 0
    print("| ranks | transport | torch all_reduce, ms/call | cce.allreduce, ms/call | ratio |")
    print("|---:|---|---:|---:|---:|")
    for row in rows:
        print(f"| {row['ranks']} | {row['transport']} | {row['torch_seconds'] * 1e3:.2f} | "
              f"{row['allreduce_seconds'] * 1e3:.2f} | {row['ratio']:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
