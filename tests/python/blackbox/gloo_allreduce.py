"""A black box for `cce reveal`: torch.distributed's gloo backend, `dist.all_reduce` (SUM) over
RANKS processes on this machine.

    python gloo_allreduce.py IN OUT DTYPE RANKS

The processes are forked from this one after torch is imported (a spawn would import torch R
times); they meet through a TCP store on a free local port. DTYPE fp32, fp16, bf16
(whatever gloo's CPU all-reduce takes for it)."""
import os
import sys
import socket

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bbio import read_rank, write_rank  # noqa: E402

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

TORCH = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}


def worker(rank, ranks, indir, outdir, dtype, port):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=ranks)
    try:
        x = read_rank(indir, rank, dtype)
        # bit-exact: through int16 for the 16-bit types (numpy has no bfloat16 torch knows)
        if dtype == "fp32":
            t = torch.from_numpy(x.copy())
        else:
            t = torch.from_numpy(x.view("<i2").copy()).view(TORCH[dtype])
        dist.all_reduce(t, op=dist.ReduceOp.SUM)
        y = t.numpy() if dtype == "fp32" else t.view(torch.int16).numpy()
        write_rank(outdir, rank, y.view(x.dtype), dtype)
    finally:
        dist.destroy_process_group()


def main():
    indir, outdir, dtype, ranks = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    with socket.socket() as s:  # a port nobody listens on now
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    mp.start_processes(worker, args=(ranks, indir, outdir, dtype, port), nprocs=ranks,
                       join=True, start_method="fork")


if __name__ == "__main__":
    main()
