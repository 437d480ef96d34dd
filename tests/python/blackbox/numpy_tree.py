"""A black box for `cce reveal` made in numpy: sums each class of elements with its own tree.

    python numpy_tree.py IN OUT DTYPE TREEFILE

TREEFILE is JSON, a list of classes {"first", "last", "rank" (null: every rank), "expr",
"accum"} covering every rank's elements; scripts/tree_ref.py evaluates each class's tree over
the ranks' inputs (accum fp32: one rounding per parenthesis; accum = DTYPE: one per add).

With TREEFILE `sorted-by-magnitude` it is a value-dependent order instead, that no tree
explains: each element's R inputs are added one by one in order of increasing |value| (ties by
rank), rounding every add."""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "scripts"))
import numpy as np  # noqa: E402

import tree_ref  # noqa: E402
from bbio import count_ranks, read_rank, write_rank  # noqa: E402


def sorted_by_magnitude(inputs, dtype):
    x = np.stack([a.astype(np.float32) for a in inputs])
    order = np.argsort(np.abs(x), axis=0, kind="stable")
    xs = np.take_along_axis(x, order, axis=0)
    acc = xs[0]
    for k in range(1, len(inputs)):
        acc = (acc + xs[k]).astype(tree_ref.np_dtype(dtype)).astype(np.float32)
    y = acc.astype(tree_ref.np_dtype(dtype))
    return [y.copy() for _ in inputs]


def main():
    indir, outdir, dtype, treefile = sys.argv[1:5]
    ranks = count_ranks(indir)
    inputs = [read_rank(indir, r, dtype) for r in range(ranks)]
    if treefile == "sorted-by-magnitude":
        outputs = sorted_by_magnitude(inputs, dtype)
    else:
        with open(treefile) as f:
            classes = [(c["first"], c["last"], c.get("rank"), c["expr"], c["accum"]) for c in json.load(f)]
        outputs = tree_ref.apply_classes(classes, inputs, dtype)
    for r, y in enumerate(outputs):
        write_rank(outdir, r, y, dtype)


if __name__ == "__main__":
    main()
