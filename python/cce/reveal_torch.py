"""Reveal the reduction tree of ``torch.distributed.all_reduce`` on your own process group.

Run it the way you run training, one process per rank::

    torchrun --nproc-per-node 8 -m cce.reveal_torch --elems 4096 --dtype bf16
    torchrun --nnodes 2 --nproc-per-node 8 ... -m cce.reveal_torch --backend nccl --dtype bf16

Every rank calls ``dist.all_reduce`` (SUM) on its own tensor, as many times as the reveal needs
(3 when every rank's output is the same); rank 0 chooses each run's inputs (``cce.reveal``),
sends each rank its input, gathers every rank's output and prints the answer: the classes of
elements that share a tree, each tree in the order grammar, the accumulate dtype, and the cce
family it equals (docs/reveal.md). ``--json`` prints ``cce reveal --json``'s object instead.

The backend is the process group's (``--backend``; default: nccl where CUDA is, else gloo), the
device follows it (``cuda:LOCAL_RANK`` for nccl, else cpu; ``--device`` overrides). Rank 0
exits 0 when revealed, 1 when not (with the reason), 2 on bad input; the other ranks exit 0.
"""
import argparse
import json
import os
import sys

import numpy as np


def _torch_dtype(torch, cce_dtype):
    return {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[cce_dtype]


def _to_tensor(torch, a, dtype, device):
    """A numpy array of the cce dtype as a torch tensor on ``device`` (bf16 through its bits)."""
    if dtype == "bf16":
        t = torch.from_numpy(np.ascontiguousarray(a).view(np.int16).copy()).view(torch.bfloat16)
    else:
        t = torch.from_numpy(np.ascontiguousarray(a).copy())
    return t.to(device)


def _to_numpy(t, dtype):
    t = t.detach().cpu().contiguous()
    if dtype == "bf16":
        import ml_dtypes
        return t.view(_torch_int16()).numpy().view(ml_dtypes.bfloat16)
    return t.numpy()


def _torch_int16():
    import torch
    return torch.int16


def _parse(argv):
    p = argparse.ArgumentParser(prog="python -m cce.reveal_torch", description=__doc__.split("\n\n")[0])
    p.add_argument("--elems", type=int, default=None,
                   help="elements per rank (default: R(R-1)/2 times R, so each of R chunks holds every pair)")
    p.add_argument("--dtype", default="fp32", choices=["fp32", "bf16", "fp16"])
    p.add_argument("--backend", default=None, help="the process group's backend (default: nccl with CUDA, else gloo)")
    p.add_argument("--device", default=None, help="the tensors' device (default: cuda:LOCAL_RANK for nccl, else cpu)")
    p.add_argument("--json", action="store_true", help="print cce reveal --json's object")
    return p.parse_args(argv)


def main(argv=None):
    args = _parse(argv)
    import torch
    import torch.distributed as dist

    backend = args.backend or ("nccl" if torch.cuda.is_available() else "gloo")
    dist.init_process_group(backend)
    rank, ranks = dist.get_rank(), dist.get_world_size()
    device = args.device or (f"cuda:{os.environ.get('LOCAL_RANK', '0')}" if backend == "nccl" else "cpu")
    elems = args.elems or ranks * ranks * (ranks - 1) // 2
    tdt = _torch_dtype(torch, args.dtype)
    status = 0
    try:
        if rank == 0:
            status = _lead(torch, dist, ranks, elems, args, tdt, device)
        else:
            _follow(torch, dist, ranks, elems, tdt, device)
    finally:
        dist.destroy_process_group()
    return status


def _one_run(torch, dist, ranks, elems, tdt, device, stack):
    """Every rank: receive its input from rank 0's ``stack``, all-reduce it, gather the outputs."""
    stack = stack if stack is not None else torch.empty((ranks, elems), dtype=tdt, device=device)
    dist.broadcast(stack, src=0)
    mine = stack[dist.get_rank()].clone()
    dist.all_reduce(mine)
    outs = [torch.empty(elems, dtype=tdt, device=device) for _ in range(ranks)]
    dist.all_gather(outs, mine)
    return outs


def _signal(torch, dist, device, go):
    flag = torch.tensor([1 if go else 0], dtype=torch.int32, device=device)
    dist.broadcast(flag, src=0)
    return bool(flag.item())


def _follow(torch, dist, ranks, elems, tdt, device):
    while _signal(torch, dist, device, False):
        _one_run(torch, dist, ranks, elems, tdt, device, None)


def _lead(torch, dist, ranks, elems, args, tdt, device):
    import cce

    def fn(inputs):
        _signal(torch, dist, device, True)
        stack = torch.stack([_to_tensor(torch, a, args.dtype, device) for a in inputs])
        outs = _one_run(torch, dist, ranks, elems, tdt, device, stack)
        return [_to_numpy(o, args.dtype) for o in outs]

    try:
        answer = cce.reveal(fn, ranks, elems, args.dtype)
    except cce.CceError as e:
        _signal(torch, dist, device, False)
        print(f"cce.reveal_torch: {e}", file=sys.stderr)
        return 2
    _signal(torch, dist, device, False)
    if args.json:
        print(json.dumps(answer))
    else:
        _print(answer, backend=dist.get_backend())
    return 0 if answer["revealed"] else 1


def _print(a, backend):
    print(f"reveal: dist.all_reduce ({backend}), {a['ranks']} ranks x {a['elems']} {a['dtype']} elements, "
          f"{a['runs']} runs")
    if not a["revealed"]:
        print(f"not revealed: {a['reason']}")
        return
    print(f"revealed: {len(a['classes'])} classes of elements, each checked on random inputs")
    for c in a["classes"][:32]:
        rank = f"rank {c['rank']} " if "rank" in c else ""
        eq = f"  = {c['equals']}" if c["equals"] else ""
        print(f"  {rank}{c['first']}..={c['last']}: {c['expr']}  accumulate {c['accum']}{eq}")
    if len(a["classes"]) > 32:
        print(f"  ... {len(a['classes']) - 32} more classes (--json lists all)")


if __name__ == "__main__":
    sys.exit(main())
