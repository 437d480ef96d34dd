"""The CMD contract of `cce reveal`, shared by the black boxes here: rank r's input is
``IN/rank{r}.bin`` (raw little-endian elements of the dtype), its all-reduce result goes to
``OUT/rank{r}.bin`` (same shape)."""
import os

import ml_dtypes
import numpy as np

DTYPES = {"fp32": np.dtype("<f4"), "bf16": np.dtype(ml_dtypes.bfloat16), "fp16": np.dtype("<f2")}


def read_rank(indir, rank, dtype):
    return np.fromfile(os.path.join(indir, f"rank{rank}.bin"), dtype=DTYPES[dtype])


def write_rank(outdir, rank, array, dtype):
    os.makedirs(outdir, exist_ok=True)
    np.ascontiguousarray(array, dtype=DTYPES[dtype]).tofile(os.path.join(outdir, f"rank{rank}.bin"))


def count_ranks(indir):
    n = 0
    while os.path.exists(os.path.join(indir, f"rank{n}.bin")):
        n += 1
    return n
