#!/usr/bin/env python3
"""Independent sequential reference for a bf16 (or fp16 / fp32) ADD all-reduce.

Follows the reduction order documented in crates/cce-collectives/src/allreduce/mod.rs, with numpy
+ ml_dtypes: every step accumulates its sources in order in fp32 and rounds once to the buffer
dtype. Indices mod R; chunk c = elements [c*N/R, (c+1)*N/R).
  ring, ring-2r2w: acc = IN_c; then for k = 1..R-1: acc = round(f32(acc) + f32(IN_{c+k}))
  kangaring:       acc = round(IN_c + IN_{c+1} + IN_{c+2}); then two more inputs per step;
                   with R even the last step adds one (R = 2: one step of two)
  mesh:            round(IN_0 + IN_1 + ... + IN_{R-1}) in fp32, in rank order
  rdh (R = 2^L):   v_x = IN_x; for d = 1, 2, 4, ..., R/2: for every x with bit d clear,
                   v_x = v_(x+d) = round(f32(v_x) + f32(v_(x+d))); the result is v_0
                   (the same tree for every chunk)
  ring with --gce K (docs/MODEL.md G6, G7; nodes of K consecutive ranks): as ring, but a value
                   sent from rank x to rank x+1 in another node is quantized on the way,
                   v = dt(decode(compress(f32(v)))) with the GCE codec of gce_ref.py (blocks of
                   32 from the chunk's start), and the final chunk is quantized once more by its
                   owner (rank c-1) before the all-gather copies it to every rank
Compares every DIR_OUT/rank{r}.bin with the result; exit 0 when all match.
Usage: allreduce_ref.py ALGO RANKS DTYPE DIR_IN DIR_OUT [--gce RANKS_PER_NODE]
"""
import os
import sys

try:
    import ml_dtypes
    import numpy as np
except ImportError:  # pragma: no cover
    sys.exit("allreduce_ref.py needs numpy and ml_dtypes: run scripts/test (it installs them into .venv), or pip install -r scripts/requirements.txt")

DT = {"bf16": ml_dtypes.bfloat16, "fp16": np.float16, "fp32": np.float32}


def quantize(v: np.ndarray, dt) -> np.ndarray:
    """One GCE round trip of a chunk's values, back in the buffer dtype (RNE)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import gce_ref

    scales, payload = gce_ref.compress(v.astype(np.float32), 32)
    return gce_ref.decode(scales, payload, 32).view(np.float32).astype(dt)


def main() -> int:
    algo, r, dt, din, dout = sys.argv[1], int(sys.argv[2]), DT[sys.argv[3]], sys.argv[4], sys.argv[5]
    per_node = int(sys.argv[7]) if len(sys.argv) > 7 and sys.argv[6] == "--gce" else None
    if per_node is not None and algo != "ring":
        sys.exit("--gce follows the ring only")
    node = lambda x: (x % r) // per_node
    ins = [np.fromfile(f"{din}/rank{q}.bin", dtype=dt) for q in range(r)]
    n = len(ins[0])
    out = np.zeros(n, dtype=dt)
    f32 = lambda a: a.astype(np.float32)
    for c in range(r):
        a, b = c * n // r, (c + 1) * n // r
        chunk = [x[a:b] for x in ins]
        if algo in ("ring", "ring-2r2w"):
            acc = chunk[c]
            for k in range(1, r):
                if per_node is not None and node(c + k - 1) != node(c + k):
                    acc = quantize(acc, dt)
                acc = (f32(acc) + f32(chunk[(c + k) % r])).astype(dt)
            if per_node is not None:
                acc = quantize(acc, dt)
        elif algo == "kangaring":
            if r == 2:
                acc = (f32(chunk[c]) + f32(chunk[(c + 1) % r])).astype(dt)
            else:
                acc = (f32(chunk[c]) + f32(chunk[(c + 1) % r]) + f32(chunk[(c + 2) % r])).astype(dt)
                k = 3
                while k + 1 < r:
                    acc = (f32(acc) + f32(chunk[(c + k) % r]) + f32(chunk[(c + k + 1) % r])).astype(dt)
                    k += 2
                if k < r:
                    acc = (f32(acc) + f32(chunk[(c + k) % r])).astype(dt)
        elif algo == "rdh":
            if r & (r - 1):
                sys.exit(f"rdh needs a power-of-two rank count, not {r}")
            v = list(chunk)
            d = 1
            while d < r:
                for x in range(r):
                    if not x & d:
                        v[x] = v[x + d] = (f32(v[x]) + f32(v[x + d])).astype(dt)
                d *= 2
            acc = v[0]
        elif algo == "mesh":
            s = f32(chunk[0])
            for q in range(1, r):
                s = s + f32(chunk[q])
            acc = s.astype(dt)
        else:
            sys.exit(f"unknown algo {algo}")
        out[a:b] = acc
    want = out.tobytes()
    for q in range(r):
        got = open(f"{dout}/rank{q}.bin", "rb").read()
        if got != want:
            g = np.frombuffer(got, dtype=dt)
            bad = np.nonzero(g.view(np.uint8 if g.itemsize == 1 else f"u{g.itemsize}") != out.view(np.uint8 if g.itemsize == 1 else f"u{g.itemsize}"))[0]
            print(f"rank {q}: {len(bad)} of {n} elements differ; first at {bad[0]}: got {g[bad[0]]!r}, expected {out[bad[0]]!r}")
            return 1
    print(f"ok: {algo}, {r} ranks, {n} elements, every rank equals the sequential reference")
    return 0


if __name__ == "__main__":
    sys.exit(main())
