"""A black box for `cce reveal`: JAX/XLA's CPU `psum` over RANKS host devices.

    python xla_psum.py IN OUT DTYPE RANKS

One process; XLA is told to make RANKS CPU devices before jax is imported, and
`jax.pmap(lambda x: jax.lax.psum(x, 'i'), axis_name='i')` sums device r's row (rank r's input)
across the devices. DTYPE fp32, bf16 (fp16 too, as XLA does it)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bbio import read_rank, write_rank  # noqa: E402


def main():
    indir, outdir, dtype, ranks = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    flags = os.environ.get("XLA_FLAGS", "")
    os.environ["XLA_FLAGS"] = f"{flags} --xla_force_host_platform_device_count={ranks}".strip()
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    import numpy as np

    assert jax.device_count() == ranks, (jax.device_count(), ranks)
    x = np.stack([read_rank(indir, r, dtype) for r in range(ranks)])
    y = np.asarray(jax.pmap(lambda v: jax.lax.psum(v, "i"), axis_name="i")(x))
    assert y.dtype == x.dtype, (y.dtype, x.dtype)
    for r in range(ranks):
        write_rank(outdir, r, y[r], dtype)


if __name__ == "__main__":
    main()
