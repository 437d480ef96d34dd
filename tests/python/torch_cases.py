"""Cases for test_torch.py: one process per rank, started by the test with RANK, WORLD_SIZE,
MASTER_ADDR and MASTER_PORT set. Usage: torch_cases.py CASE OUT_DIR; each rank writes
OUT_DIR/rank{r}.json (and .npz where a case records tensors) and exits 0 when its own checks pass."""
import datetime
import json
import os
import pathlib
import sys
import time

import ml_dtypes
import numpy as np
import torch
import torch.distributed as dist

import cce
import cce.torch as ct

CASE, OUT = sys.argv[1], pathlib.Path(sys.argv[2])
RANK, SIZE = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
TIMEOUT = datetime.timedelta(seconds=float(os.environ.get("CASE_TIMEOUT", "60")))
DTYPES = {"bf16": torch.bfloat16, "fp32": torch.float32, "fp16": torch.float16}
NUMPY = {"bf16": ml_dtypes.bfloat16, "fp32": np.float32, "fp16": np.float16}


def values(n, seed, dt):
    """Different per rank and per element, over a range of binades."""
    g = torch.Generator().manual_seed(seed * 1000 + RANK)
    return (torch.randn(n, generator=g) * torch.exp2(torch.randint(-6, 7, (n,), generator=g).float())).to(dt)


def raw(t):
    return t.detach().reshape(-1).view(torch.uint8).numpy().copy()


def ddp_buckets():
    """An unmodified DDP training loop whose buckets the group records (the class's allreduce
    wrapped here, in the test): each rank writes every bucket's bytes before and after."""
    dtype, rounding = os.environ["CASE_DTYPE"], os.environ["CASE_ROUNDING"]
    dist.init_process_group("cce", timeout=TIMEOUT, pg_options=ct.Options(rounding=rounding, seed=5))
    group_class = type(dist.group.WORLD)
    records = []
    original = group_class.allreduce

    def recording(self, tensors, opts=None):
        before = [raw(t) for t in tensors]
        work = original(self, tensors, opts)
        records.extend({"call": self._reductions - 1, "before": b, "after": raw(t)} for b, t in zip(before, tensors))
        return work

    group_class.allreduce = recording
    torch.manual_seed(0)  # the same initial model on every rank (DDP broadcasts rank 0's anyway)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.Tanh(), torch.nn.Linear(64, 10)).to(DTYPES[dtype])
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05)
    for step in range(3):
        x = values(16 * 32, 10 + step, DTYPES[dtype]).reshape(16, 32)
        y = torch.randint(0, 10, (16,), generator=torch.Generator().manual_seed(RANK * 7 + step))
        loss = torch.nn.functional.cross_entropy(ddp(x).float(), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    params = np.concatenate([raw(p) for p in model.parameters()])
    np.savez(OUT / f"rank{RANK}.npz", params=params, **{f"before{i}": r["before"] for i, r in enumerate(records)},
             **{f"after{i}": r["after"] for i, r in enumerate(records)})
    return {"calls": [r["call"] for r in records], "backend": dist.get_backend(), "dtype": dtype,
            "rounding": rounding, "group": dist.group.WORLD.group_name}


def collectives():
    """Every collective on the cce group against the same call on a gloo group (exact dtypes:
    integers, and data movement of bf16 bytes), and float all-reduces recorded for the test."""
    dist.init_process_group("cce", timeout=TIMEOUT)
    gloo = dist.new_group(backend="gloo")
    checks = {}

    def same(name, a, b):
        checks[name] = bool(torch.equal(a, b))

    ints = torch.arange(SIZE * 6, dtype=torch.int32) * (RANK + 3) - 50 * RANK
    for op in ("SUM", "MIN", "MAX"):
        a, b = ints.clone(), ints.clone()
        dist.all_reduce(a, op=getattr(dist.ReduceOp, op))
        dist.all_reduce(b, op=getattr(dist.ReduceOp, op), group=gloo)
        same(f"all_reduce_i32_{op}", a, b)
    parts = [torch.arange(5, dtype=torch.int64) * (RANK + 1) + 100 * i for i in range(SIZE)]
    a, b = torch.empty(5, dtype=torch.int64), torch.empty(5, dtype=torch.int64)
    dist.reduce_scatter(a, parts)
    dist.reduce_scatter(b, parts, group=gloo)
    same("reduce_scatter_i64", a, b)
    a, b = torch.empty(6, dtype=torch.int32), torch.empty(6, dtype=torch.int32)
    dist.reduce_scatter_tensor(a, ints)
    dist.reduce_scatter_tensor(b, ints, group=gloo)
    same("reduce_scatter_tensor_i32", a, b)
    mine = values(7, 1, torch.bfloat16)
    a = [torch.empty(7, dtype=torch.bfloat16) for _ in range(SIZE)]
    b = [torch.empty(7, dtype=torch.bfloat16) for _ in range(SIZE)]
    dist.all_gather(a, mine)
    dist.all_gather(b, mine, group=gloo)
    same("all_gather_bf16", torch.stack(a), torch.stack(b))
    a, b = torch.empty(7 * SIZE, dtype=torch.bfloat16), torch.empty(7 * SIZE, dtype=torch.bfloat16)
    dist.all_gather_into_tensor(a, mine)
    dist.all_gather_into_tensor(b, mine, group=gloo)
    same("all_gather_into_tensor_bf16", a, b)
    a, b = mine.clone(), mine.clone()
    dist.broadcast(a, src=SIZE - 1)
    dist.broadcast(b, src=SIZE - 1, group=gloo)
    same("broadcast_bf16", a, b)
    t0 = time.monotonic()
    dist.barrier()
    checks["barrier"] = time.monotonic() - t0 < TIMEOUT.total_seconds()
    # async work: complete when returned, its future done with the tensor
    a = ints.clone()
    work = dist.all_reduce(a, async_op=True)
    checks["async_wait"] = work.wait() is True and work.get_future().done()
    # float reductions, recorded: the test compares them with cce.allreduce
    floats = {}
    for name, dt in DTYPES.items():
        x = values(1000 + SIZE, 2, dt)
        for op in ("SUM", "AVG", "MIN", "MAX"):
            y = x.clone()
            dist.all_reduce(y, op=getattr(dist.ReduceOp, op))
            floats[f"{name}_{op}_in"], floats[f"{name}_{op}_out"] = raw(x), raw(y)
        with ct.options(rounding="sr", seed=77):
            y = x.clone()
            dist.all_reduce(y)
            floats[f"{name}_SR77_in"], floats[f"{name}_SR77_out"] = raw(x), raw(y)
    # an empty tensor and a non-contiguous one
    e = torch.empty(0, dtype=torch.bfloat16)
    dist.all_reduce(e)
    checks["empty"] = e.numel() == 0
    nc = torch.arange(12, dtype=torch.int32).reshape(3, 4).t() * (RANK + 1)
    want = torch.arange(12, dtype=torch.int32).reshape(3, 4).t() * sum(range(1, SIZE + 1))
    dist.all_reduce(nc)
    checks["non_contiguous"] = torch.equal(nc, want)
    # a reduce-scatter of floats: the rank's slice of the all-reduce of its inputs laid end to end
    x = values(4 * SIZE, 3, torch.bfloat16)
    y = torch.empty(4, dtype=torch.bfloat16)
    dist.reduce_scatter_tensor(y, x)
    floats["rs_in"], floats["rs_out"] = raw(x), raw(y)
    # an op the CCE has not: a clear error, nothing written
    z = ints.clone()
    try:
        dist.all_reduce(z, op=dist.ReduceOp.PRODUCT)
        checks["product_refused"] = False
    except Exception as e:  # noqa: BLE001 - torch may wrap it
        checks["product_refused"] = "not a CCE op" in str(e) and torch.equal(z, ints)
    # an option the all-reduce refuses: every rank raises the CceError the all-reduce raised (with
    # shared memory, only the leader ran it), and the tensor is unchanged
    z = ints.clone()
    try:
        with ct.options(algo="nonsense"):
            dist.all_reduce(z)
        checks["bad_algo_refused"] = False
    except cce.CceError as e:
        checks["bad_algo_refused"] = "nonsense" in str(e) and torch.equal(z, ints)
    # /dev/shm without room for one rank's segment (posix_fallocate fails on the last rank, for
    # a 16 MiB tensor): every rank raises CceError and the tensor is unchanged; the next, small
    # call works again
    if os.environ.get("CCE_TRANSPORT", "auto") != "gloo":
        import cce._shm as shm

        real = shm.os.posix_fallocate

        def full(fd, offset, length):
            if RANK == SIZE - 1 and length > 20 << 20:
                raise OSError(28, "No space left on device")
            return real(fd, offset, length)

        shm.os.posix_fallocate = full
        big = torch.ones(4 << 20) * (RANK + 1)
        try:
            dist.all_reduce(big)
            checks["no_room_refused"] = False
        except cce.CceError as e:
            checks["no_room_refused"] = "no room in /dev/shm" in str(e) and bool((big == RANK + 1).all())
        shm.os.posix_fallocate = real
        small = torch.ones(8, dtype=torch.int32)
        dist.all_reduce(small)
        checks["after_no_room"] = bool((small == SIZE).all())
    np.savez(OUT / f"rank{RANK}.npz", **floats)
    dist.destroy_process_group()
    return {"checks": checks}


def rank_dies():
    """Rank DEAD leaves after one all-reduce; the others' next all-reduce must end with an error
    that names it."""
    dead = int(os.environ["CASE_DEAD"])
    dist.init_process_group("cce", timeout=TIMEOUT)
    t = values(1000, 4, torch.float32)
    dist.all_reduce(t)
    if RANK == dead:
        os._exit(0)
    t0 = time.monotonic()
    try:
        dist.all_reduce(t)
        return {"error": None}
    except Exception as e:  # noqa: BLE001 - the test reads the message
        return {"error": str(e).splitlines()[0], "type": type(e).__name__, "seconds": time.monotonic() - t0,
                "rank": getattr(e, "rank", None)}


def init_destroy_cycles():
    """Five groups one after another on the same store (init, all_reduce, destroy), as under
    torchrun, whose agent keeps one store: each gets the right sum, and the process's open files
    do not grow (the doorbells are closed). (With env:// each init makes a new store on the same
    port, and torch's own reconnection races; that is not what is tested here.)"""
    store = dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), SIZE, RANK == 0, TIMEOUT)
    fds, sums = [], []
    for i in range(5):
        dist.init_process_group("cce", timeout=TIMEOUT, store=store, rank=RANK, world_size=SIZE)
        t = torch.arange(4, dtype=torch.int32) + RANK + i
        dist.all_reduce(t)
        sums.append(t.tolist())
        dist.destroy_process_group()
        fds.append(len(os.listdir("/proc/self/fd")))
    want = [[SIZE * (k + i) + SIZE * (SIZE - 1) // 2 for k in range(4)] for i in range(5)]
    # A leak would add a doorbell or more per group; rank 0's count moves by one with the store's
    # client connections.
    return {"checks": {"sums": sums == want, "fds_steady": max(fds) <= fds[0] + 1}, "fds": fds}


def subgroups():
    """Two "cce" subgroups (even and odd ranks) beside the world group: each all-reduce sums
    its own members (each subgroup has its own leader, store keys and segments)."""
    dist.init_process_group("cce", timeout=TIMEOUT)
    even = dist.new_group(list(range(0, SIZE, 2)), backend="cce")
    odd = dist.new_group(list(range(1, SIZE, 2)), backend="cce")
    mine = even if RANK % 2 == 0 else odd
    t = torch.full((5,), RANK + 1, dtype=torch.int32)
    dist.all_reduce(t, group=mine)
    w = torch.full((3,), RANK + 1, dtype=torch.int32)
    dist.all_reduce(w)
    members = range(RANK % 2, SIZE, 2)
    checks = {"subgroup": bool((t == sum(m + 1 for m in members)).all()),
              "world": bool((w == SIZE * (SIZE + 1) // 2).all())}
    dist.destroy_process_group()
    return {"checks": checks}


CASES = {"ddp": ddp_buckets, "collectives": collectives, "dies": rank_dies, "cycles": init_destroy_cycles, "subgroups": subgroups}

if __name__ == "__main__":
    result = CASES[CASE]()
    (OUT / f"rank{RANK}.json").write_text(json.dumps(result))
    if CASE != "dies":
        ok = all(result.get("checks", {}).values())
        sys.exit(0 if ok else 1)
