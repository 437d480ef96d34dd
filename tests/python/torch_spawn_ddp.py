"""A DDP script started by torch.multiprocessing.spawn, backend "cce" by name only. Run by
test_torch.py: torch_spawn_ddp.py PORT OUT_DIR; each rank writes OUT_DIR/rank{r}.json."""
import json
import pathlib
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def train(rank, world, port, out):
    dist.init_process_group("cce", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    torch.manual_seed(0)
    model = torch.nn.Linear(6, 3).to(torch.bfloat16)
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(7 + rank)
    for _ in range(2):
        loss = ddp(torch.randn(8, 6, generator=g).to(torch.bfloat16)).float().pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    result = {"backend": dist.get_backend(), "params": [p.float().reshape(-1).tolist() for p in model.parameters()]}
    pathlib.Path(out, f"rank{rank}.json").write_text(json.dumps(result))
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(train, args=(2, int(sys.argv[1]), sys.argv[2]), nprocs=2)
