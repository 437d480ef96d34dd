"""What Trainium's in-transfer all-reduce does to a training run: ``python -m cce.examples.drift``.

A small classifier (64 -> 32 tanh -> 10, softmax cross-entropy) is trained data-parallel over 8
ranks, three times from the same start on the same batches. Each step every rank computes its
gradient in fp32 on its own shard; the gradients are averaged by ``cce.allreduce`` (a ring of
CCE packets, ``op="avg"``: an FMA with scale fl32(1/8) per source) — in fp32 (the reference run),
or cast to bf16 (round to nearest even) and all-reduced in bf16 with every hop rounded to nearest
even (RNE) or stochastically (SR, seed = the step). The weights stay fp32; every rank applies the
same averaged gradient (SGD). The table shows the training loss of each run and how far the bf16
runs' weights are from the fp32 run's (relative L2 distance); the plot shows both over the steps.

Data: scikit-learn's handwritten digits (1,797 8x8 images, shipped inside the scikit-learn
package: ``pip install scikit-learn``), 80 % for training, split into 8 rank shards; without
scikit-learn, a synthetic 10-class problem of the same shape, and the output says so. The 8
ranks are simulated in one process, as ``cce.allreduce`` simulates them; the bits are the ones
8 processes under ``cce.torch`` would exchange.
"""
import argparse
import json
import sys

import numpy as np

import cce

from . import _svg

RUNS = ("fp32", "bf16 RNE", "bf16 SR")


def load_data(seed):
    """(x, y, name): features scaled to [0, 1], integer labels, and where they came from."""
    try:
        from sklearn.datasets import load_digits
    except ImportError:
        rng = np.random.default_rng(seed)
        centres = rng.standard_normal((10, 64)).astype(np.float32)
        y = rng.integers(0, 10, 1797)
        x = np.clip(0.5 + 0.25 * (centres[y] + 1.5 * rng.standard_normal((1797, 64))), 0, 1).astype(np.float32)
        return x, y, "synthetic (scikit-learn is not installed): 10 Gaussian classes, 1,797 x 64"
    d = load_digits()
    return (d.data / 16.0).astype(np.float32), d.target.astype(np.int64), "scikit-learn digits, 1,797 x 64"


class Mlp:
    """64 -> hidden tanh -> 10; parameters in one flat fp32 vector (one all-reduce bucket)."""

    def __init__(self, hidden, seed):
        rng = np.random.default_rng(seed)
        self.shapes = [(64, hidden), (hidden,), (hidden, 10), (10,)]
        parts = [rng.standard_normal(s).astype(np.float32) / np.float32(np.sqrt(s[0])) if len(s) == 2
                 else np.zeros(s, np.float32) for s in self.shapes]
        self.w = np.concatenate([p.reshape(-1) for p in parts])

    def unpack(self, flat):
        out, at = [], 0
        for s in self.shapes:
            n = int(np.prod(s))
            out.append(flat[at:at + n].reshape(s))
            at += n
        return out

    def loss_and_grad(self, w, x, y):
        w1, b1, w2, b2 = self.unpack(w)
        h = np.tanh(x @ w1 + b1)
        z = h @ w2 + b2
        z = z - z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        loss = float(-np.log(p[np.arange(len(y)), y] + 1e-12).mean())
        dz = p
        dz[np.arange(len(y)), y] -= 1
        dz /= len(y)
        dh = (dz @ w2.T) * (1 - h * h)
        g = [x.T @ dh, dh.sum(0), h.T @ dz, dz.sum(0)]
        return loss, np.concatenate([a.reshape(-1) for a in g]).astype(np.float32)

    def accuracy(self, w, x, y):
        w1, b1, w2, b2 = self.unpack(w)
        return float(((np.tanh(x @ w1 + b1) @ w2 + b2).argmax(1) == y).mean())


def averaged(grads, run, step):
    """The ranks' gradients averaged by the CCE all-reduce, as fp32 (every rank's output is the
    same for the ring; rank 0's is used)."""
    if run == "fp32":
        outs, _ = cce.allreduce(grads, op="avg", check="none")
    else:
        g16 = [cce.convert(g, "bfloat16") for g in grads]
        outs, _ = cce.allreduce(g16, op="avg", rounding="sr" if run == "bf16 SR" else "rne", seed=step,
                                check="none")
    return outs[0].astype(np.float32)


def train(steps, ranks, batch, lr, hidden, seed, every):
    x, y, source = load_data(seed)
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(y))
    cut = int(len(y) * 0.8)
    tr, te = order[:cut], order[cut:]
    shards = np.array_split(tr, ranks)
    model = Mlp(hidden, seed)
    w = {run: model.w.copy() for run in RUNS}
    rows = []
    plot_every = max(1, every // 5)  # the plot's points; the table shows every `every`-th step
    for step in range(steps + 1):
        if step % plot_every == 0 or step == steps:
            row = {"step": step}
            for run in RUNS:
                row[f"loss {run}"] = model.loss_and_grad(w[run], x[tr], y[tr])[0]
                row[f"accuracy {run}"] = model.accuracy(w[run], x[te], y[te])
            ref = np.linalg.norm(w["fp32"])
            for run in RUNS[1:]:
                row[f"distance {run}"] = float(np.linalg.norm(w[run] - w["fp32"]) / ref)
            rows.append(row)
        if step == steps:
            break
        picks = [s[rng.integers(0, len(s), batch)] for s in shards]
        for run in RUNS:
            grads = [model.loss_and_grad(w[run], x[p], y[p])[1] for p in picks]
            w[run] = w[run] - np.float32(lr) * averaged(grads, run, step)
    return rows, source, len(model.w)


def table(rows, every):
    rows = [r for r in rows if r["step"] % every == 0] + ([rows[-1]] if rows[-1]["step"] % every else [])
    head = ["step"] + [f"loss {r}" for r in RUNS] + [f"dist {r}" for r in RUNS[1:]]
    lines = ["| " + " | ".join(head) + " |", "|" + "---:|" * len(head)]
    for row in rows:
        cells = [str(row["step"])] + [f"{row[f'loss {r}']:.5f}" for r in RUNS] + \
            [f"{row[f'distance {r}']:.2e}" for r in RUNS[1:]]
        lines.append("| " + " | ".join(cells) + " |")
    last = rows[-1]
    lines.append("")
    lines.append("test accuracy after the last step: " + ", ".join(f"{r} {last[f'accuracy {r}']:.3f}" for r in RUNS))
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m cce.examples.drift", description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=600, help="training steps (default 600)")
    ap.add_argument("--ranks", type=int, default=8, help="data-parallel ranks (default 8)")
    ap.add_argument("--batch", type=int, default=16, help="examples per rank per step (default 16)")
    ap.add_argument("--lr", type=float, default=0.5, help="SGD learning rate (default 0.5)")
    ap.add_argument("--hidden", type=int, default=32, help="hidden units (default 32)")
    ap.add_argument("--seed", type=int, default=0, help="data split, initial weights and batches (default 0)")
    ap.add_argument("--every", type=int, default=50, help="table row every N steps (default 50)")
    ap.add_argument("--out", default="drift.svg", help="the plot (SVG; default drift.svg)")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON instead of the table")
    a = ap.parse_args(argv)
    for name in ("steps", "ranks", "batch", "hidden", "every"):
        if getattr(a, name) < (2 if name == "ranks" else 1):
            ap.error(f"--{name} must be at least {2 if name == 'ranks' else 1}")
    rows, source, params = train(a.steps, a.ranks, a.batch, a.lr, a.hidden, a.seed, a.every)
    steps = [r["step"] for r in rows]
    _svg.write(a.out, f"{a.ranks} ranks, {params} parameters, gradients all-reduced by cce ({source})", [
        _svg.panel("training loss", steps, [(r, [row[f"loss {r}"] for row in rows]) for r in RUNS],
                   ylabel="cross-entropy"),
        _svg.panel("weights' distance from the fp32 run", steps,
                   [(r, [row[f"distance {r}"] for row in rows]) for r in RUNS[1:]],
                   ylabel="relative L2 distance"),
    ], xlabel="step")
    if a.json:
        print(json.dumps({"data": source, "parameters": params, "ranks": a.ranks, "rows": rows}, indent=1))
    else:
        print(f"data: {source}; {a.ranks} ranks x {a.batch} examples per step; {params} parameters; lr {a.lr}")
        print(table(rows, a.every))
        print(f"plot: {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
