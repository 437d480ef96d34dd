"""NKI's call shapes over the cce engine: ``dma_compute`` and ``dma_copy``.

``dma_compute(dst, srcs, reduce_op, scales=None)`` follows NKI's documented semantics
(``nki.isa.dma_compute``, NKI 0.3+): ``dst = reduce_op(srcs[0]*scales[0], srcs[1]*scales[1], …)``
computed in float32 inside the DMA engine (every input widened to fp32), the result cast to
``dst``'s dtype, ``dst`` written in place. It runs as one CCE reduce through the whole path, so the
bits are the engine model's (RNE by default; ``rounding="sr"`` for stochastic rounding, which NKI
selects with ``NEURON_RT_STOCHASTIC_ROUNDING_EN=1``).

``strict=True`` (the default) enforces NKI's public limits: ``reduce_op`` add only, every scale
1.0 (or None), at most 16 sources, equal element counts. ``strict=False`` opens what the CCE itself
does: FMA with any fp32 scales, min and max, up to 32 sources. In both modes the sources share one
dtype (a CCE packet has one input dtype). Indirect (vector_offset) transfers are not modelled.
"""
import numpy as np

from ._dtypes import as_array
from ._errors import CceError

#: NKI's documented limit on sources per dma_compute.
NKI_MAX_SOURCES = 16

_OPS = {"add": "add", "maximum": "max", "max": "max", "minimum": "min", "min": "min"}


def _op_name(reduce_op):
    if isinstance(reduce_op, str):
        name = reduce_op
    else:
        name = getattr(reduce_op, "__name__", None) or ""
    if name not in _OPS:
        raise CceError(f"reduce_op {reduce_op!r}: expected numpy.add, numpy.maximum, numpy.minimum or their names")
    return _OPS[name]


def _target(dst):
    if not isinstance(dst, np.ndarray):
        raise CceError("dst: a numpy array, written in place")
    if not dst.flags.writeable:
        raise CceError("dst: the array is read-only")
    if dst.ndim == 0:
        raise CceError("dst: a 0-d array has no elements to transfer (give at least one dimension)")
    return dst


def dma_compute(dst, srcs, reduce_op, scales=None, *, strict=True, rounding="rne", seed=0):
    """Writes ``reduce_op(srcs[i] * scales[i])`` (float32 inside) into ``dst``, in place.

    Args:
        dst: the destination numpy array (any CCE dtype), as many elements as every source.
        srcs: the source arrays (one CCE dtype, equal element counts).
        reduce_op: ``numpy.add``, ``numpy.maximum``, ``numpy.minimum`` or ``"add"``/``"max"``/``"min"``.
        scales: per-source float32 scales (add only), or None.
        strict: enforce NKI's limits (see the module); False opens every CCE op and 32 sources.
        rounding, seed: ``"rne"`` or ``"sr"`` with its seed.

    Raises:
        CceError: a limit or rule broken, with a message naming it.
    """
    from . import reduce

    dst = _target(dst)
    op = _op_name(reduce_op)
    arrays = [as_array(s, f"source {i}") for i, s in enumerate(srcs)]
    n = len(arrays)
    if n == 0:
        raise CceError("dma_compute needs at least one source")
    for i, a in enumerate(arrays):
        if a.size != dst.size:
            raise CceError(f"source {i} has {a.size} elements, dst has {dst.size}: element counts must be equal")
    if scales is not None and len(scales) != n:
        raise CceError(f"{len(scales)} scales for {n} sources (give one per source, or None)")
    if strict:
        if op != "add":
            raise CceError(f"reduce_op {op}: NKI's dma_compute supports add only (strict=False opens min and max)")
        if scales is not None and any(float(s) != 1.0 for s in scales):
            raise CceError("NKI's dma_compute takes scales of 1.0 only (strict=False opens any fp32 scale)")
        if n > NKI_MAX_SOURCES:
            raise CceError(f"{n} sources: NKI's dma_compute takes at most {NKI_MAX_SOURCES} (strict=False opens 32)")
    scaled = scales is not None and any(float(s) != 1.0 for s in scales)
    if scaled and op != "add":
        raise CceError(f"scales apply to add only, not {op}")
    kw = {"op": "fma", "scales": [float(s) for s in scales]} if scaled else {"op": op}
    result = reduce(arrays, accum="float32", out=dst.dtype, rounding=rounding, seed=seed, **kw)
    # The result is complete before dst is touched: a refused or faulted call leaves dst as it was.
    dst[...] = result.reshape(dst.shape)


def dma_copy(dst, src, *, rounding="rne", seed=0):
    """Copies ``src`` into ``dst`` in place through the engine, cast to ``dst``'s dtype (a
    one-source ADD widened to float32, as the collectives' copies are)."""
    dma_compute(dst, [src], "add", strict=False, rounding=rounding, seed=seed)
