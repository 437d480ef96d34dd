//! The README `cce identify` writes beside the probe's files (the options it names spelled by
//! [`flag`], as every text of the render layer).

use crate::identify::ProbeFiles;
use crate::render::flag;

/// numpy / ml_dtypes's name of a probe dtype, and torch's.
fn names(p: &ProbeFiles) -> (&'static str, &'static str) {
    match p.dtype.name() {
        "bf16" => ("ml_dtypes.bfloat16", "torch.bfloat16"),
        "fp16" => ("np.float16", "torch.float16"),
        "fp32" => ("np.float32", "torch.float32"),
        _ => ("np.uint8", "torch.uint8"),
    }
}

/// The README text.
pub(crate) fn readme(p: &ProbeFiles) -> String {
    let (np_t, torch_t) = names(p);
    let (r, n, d) = (p.ranks, p.elems, p.dtype.name());
    format!(
        r#"# A probe of the all-reduce's order

`rank0.bin` … `rank{last}.bin`: the inputs of one all-reduce (sum) of {r} ranks, {n} elements of
{d} each, raw little-endian. Any {period} consecutive elements give different bits for every pair of
the {orders} reduction orders `cce identify` knows at {r} ranks (a sequential sum from every start
rank in both directions, the pairwise tree, one {r}-source reduce; accumulated in fp32 or {d}), so
every chunk of 64 elements or more names its order.

## Run it on a Trainium instance

Run the all-reduce on {r} NeuronCores, rank r reading `rank{{r}}.bin`, and save every rank's
output as `out/rank{{r}}.bin` (raw {d}, the same layout). Keep the sum in {d}: a framework that
casts to fp32 before the collective answers another question. If the runtime rounds
stochastically (`NEURON_RT_STOCHASTIC_ROUNDING_EN`, LOW: check your Neuron release's
documentation), pass `{rounding} sr` below.

torch-neuronx (`torchrun {nproc}={r} probe_torch.py`):

```python
import numpy as np, ml_dtypes, torch, torch.distributed as dist
import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_backend  # registers the 'xla' process group

dist.init_process_group("xla")
rank = xm.get_ordinal()
x = np.fromfile(f"rank{{rank}}.bin", dtype={np_t})
t = torch.from_numpy(x.view(np.uint8).copy()).view({torch_t}).to(xm.xla_device())
y = xm.all_reduce(xm.REDUCE_SUM, t)
xm.mark_step()
import os; os.makedirs("out", exist_ok=True)
y.cpu().view(torch.uint8).numpy().tofile(f"out/rank{{rank}}.bin")
```

JAX (jax-neuronx, one process, {r} devices):

```python
import os, numpy as np, ml_dtypes, jax
devices = jax.devices()[:{r}]
x = np.stack([np.fromfile(f"rank{{q}}.bin", dtype={np_t}) for q in range({r})])
y = jax.pmap(lambda v: jax.lax.psum(v, "i"), axis_name="i", devices=devices)(x)
os.makedirs("out", exist_ok=True)
for q in range({r}):
    np.asarray(y[q]).tofile(f"out/rank{{q}}.bin")
```

## Name the order

```console
cce identify {input_dir} . {observed} out {dtype} {d}
```

The first line is the verdict. `explained`: `map` names the order of every element range
(chunk by chunk). `fragmented` or `unexplained`: the hardware uses an order outside the
families — `suspects` and `unexplained` list the elements no range's order explains, `best` is
only the closest candidate, and `cce reveal` recovers the order itself: report it.
docs/identify.md says what a MODEL order of docs/MODEL.md becomes once the hardware's order is
known.
"#,
        last = r.saturating_sub(1),
        rounding = flag("rounding"),
        input_dir = flag("input-dir"),
        observed = flag("observed"),
        dtype = flag("dtype"),
        // torchrun's option, spelled the same way.
        nproc = flag("nproc_per_node"),
        period = p.period,
        orders = p.orders,
    )
}
