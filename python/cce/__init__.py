"""cce — a bit-exact model of the Trainium compute-DMA ("CCE") in-transfer reduce, from Python.

Arrays in are numpy arrays of numpy or ml_dtypes dtypes (anything array-like, e.g. JAX arrays or
torch CPU tensors, goes through ``numpy.asarray``); arrays out are new numpy arrays of the right
dtype. The work is done by the same Rust library calls as the ``cce`` command line, with the GIL
released: ``cce.reduce`` gives the bytes ``cce reduce`` writes for the same inputs.

Errors: :class:`CceError` (a ``ValueError``) for bad input, with the CLI's one-line message;
:class:`EngineFault` (``queue``, ``descriptor``, ``reason``) when the engine stops on a packet;
:class:`RankFailed` (``rank``, ``step``) when a rank of a collective fails.
"""
import numpy as np

from . import _cce, nki
from ._dtypes import as_array, cce_name, from_raw, numpy_dtype, raw
from ._errors import CceError, EngineFault, RankFailed

__all__ = [
    "CceError", "EngineFault", "RankFailed", "MAX_SOURCES", "convert", "reduce", "nki",
]

#: Most sources one CCE packet (and so one reduce) takes.
MAX_SOURCES = _cce.MAX_SOURCES


def convert(x, dtype, *, rounding="rne", seed=0, saturate=False):
    """``x`` converted to ``dtype`` element by element, with ml_dtypes semantics.

    Args:
        x: an array (any shape but 0-d) of a CCE dtype: numpy float16/float32/int8 … uint64, or
            ml_dtypes bfloat16, float8_e4m3, float8_e5m2, float8_e3m4, float8_e4m3fn.
        dtype: the target dtype (a dtype, its type, its name, or a cce name such as ``"bf16"``).
        rounding: ``"rne"`` (round to nearest, ties to even) or ``"sr"`` (stochastic rounding,
            the engine's counter-based generator keyed by ``seed`` and the element index).
        seed: the stochastic-rounding seed (ignored for ``"rne"``).
        saturate: overflow to ±max finite instead of ±inf (NaN for float8_e4m3fn).

    Returns:
        A new array of ``dtype`` with the shape of ``x``.

    Raises:
        CceError: an unknown dtype, a 0-d array, an unknown rounding.
    """
    a = as_array(x, "convert")
    src, dst = cce_name(a.dtype), cce_name(dtype)
    out = _cce.convert(raw(a), src, dst, str(rounding), _uint("seed", seed, 64), bool(saturate), 1)
    return from_raw(out, dst, a.shape)


def _uint(name, v, bits):
    """``v`` as an integer in 0..2**bits, else CceError naming ``name``."""
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise CceError(f"{name}: {v!r} is not an integer")
    if not 0 <= int(v) < (1 << bits):
        raise CceError(f"{name}: {v} does not fit {bits} bits (0..={(1 << bits) - 1})")
    return int(v)


def _scales(scales, n):
    """None (1.0 each), one number for every source, or one per source, as fp32 values."""
    if scales is None:
        return []
    try:
        if isinstance(scales, (int, float, np.floating, np.integer)):
            return [float(scales)] * n
        return [float(s) for s in scales]
    except (TypeError, ValueError):
        raise CceError(f"scales: {scales!r} is not a number or a list of numbers") from None


def reduce(srcs, *, op="add", accum="float32", out=None, scales=None, clamp=None, clamp_dtype=None,
           rounding="rne", seed=0, arch=3, dests=1, threads=1):
    """Reduces ``srcs`` element-wise through the whole CCE path: the host stack builds the rings,
    the engine executes their bytes over memory — the same bits as ``cce reduce``.

    Args:
        srcs: 1 to 32 arrays of one CCE dtype and one element count (their shapes may differ;
            the result has the shape of ``srcs[0]``).
        op: ``"add"``, ``"fma"`` (Σ scaleᵢ·xᵢ, fused, one rounding per step), ``"min"`` or ``"max"``.
        accum: the accumulate dtype (default float32).
        out: the output dtype (default: the sources' dtype).
        scales: FMA scales (fp32): one number for every source, or one per source; default 1.0.
        clamp: MIN/MAX clamp constant (a number, or a ``"0x…"`` bit pattern) in ``clamp_dtype``.
        clamp_dtype: the constant's dtype (int8, uint8, int16, uint16, bfloat16, float16);
            default the sources' dtype.
        rounding: ``"rne"`` or ``"sr"``; ``seed``: the 32-bit stochastic-rounding seed.
        threads: engine threads (the bits do not depend on it); 1..65535.
        arch: NeuronCore arch (1..=4; more than one destination needs 3 or 4).
        dests: destinations; more than one replicates the result (each gets the same bytes).
        threads: engine threads (the bits do not depend on it).

    Returns:
        The result array, or a list of ``dests`` arrays when ``dests > 1``.

    Raises:
        CceError: bad input, with the CLI's message (the study's where it has one).
        EngineFault: the engine stopped on a packet.
    """
    if isinstance(srcs, np.ndarray) or not hasattr(srcs, "__len__"):
        raise CceError("srcs: a list of arrays (one per source)")
    arrays = [as_array(s, f"source {i}") for i, s in enumerate(srcs)]
    if not arrays:
        raise CceError("a reduce needs at least one source")
    in_dt = cce_name(arrays[0].dtype)
    for i, a in enumerate(arrays[1:], 1):
        if cce_name(a.dtype) != in_dt:
            raise CceError(f"source {i} is {a.dtype.name}, source 0 is {arrays[0].dtype.name}: one dtype for all")
    out_dt = in_dt if out is None else cce_name(out)
    if not isinstance(op, str):
        raise CceError(f"op {op!r}: expected 'add', 'fma', 'min' or 'max'")
    outs, _stats = _cce.reduce(
        [raw(a) for a in arrays], op, in_dt, cce_name(accum), out_dt, _scales(scales, len(arrays)),
        None if clamp is None else str(clamp), None if clamp_dtype is None else cce_name(clamp_dtype),
        str(rounding), _uint("seed", seed, 32), _uint("arch", arch, 32), _uint("dests", dests, 16),
        _uint("threads", threads, 16),
    )
    results = [from_raw(o, out_dt, arrays[0].shape) for o in outs]
    return results if dests > 1 else results[0]
