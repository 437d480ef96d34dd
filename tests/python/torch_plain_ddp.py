"""A DDP training script as a user writes it: nothing of cce but the backend's name. Run by
test_torch.py under torchrun; writes OUT_DIR/rank{r}.json with what the test checks."""
import json
import os
import pathlib
import sys

import torch
import torch.distributed as dist

dist.init_process_group("cce")
rank = dist.get_rank()
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1)).to(torch.bfloat16)
ddp = torch.nn.parallel.DistributedDataParallel(model)
opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
g = torch.Generator().manual_seed(100 + rank)
for _ in range(3):
    x = torch.randn(32, 8, generator=g).to(torch.bfloat16)
    loss = ddp(x).float().pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
group = dist.group.WORLD
result = {
    "backend": dist.get_backend(),
    "group_class": type(group).__name__,
    "cce_reductions": getattr(group, "_reductions", 0),
    "params": [p.float().reshape(-1).tolist() for p in model.parameters()],
}
pathlib.Path(sys.argv[1], f"rank{os.environ['RANK']}.json").write_text(json.dumps(result))
dist.destroy_process_group()
