"""Arrays in and out: numpy and ml_dtypes dtypes by name, raw bytes without copies.

ml_dtypes arrays do not support the buffer protocol and ml_dtypes reuses one-letter type
characters, so a dtype is recognised by its ``name`` (``bfloat16``, ``float8_e4m3`` …), never by
its char. Anything array-like (JAX arrays, torch CPU tensors, lists) goes through
``numpy.asarray``. A C-contiguous array is read in place (a ``uint8`` view); any other layout is
copied once into C order.
"""
import numpy as np

try:
    import ml_dtypes
except ImportError:  # pragma: no cover - a dependency of the package
    ml_dtypes = None

# numpy / ml_dtypes name -> cce name (the CLI's dtype names).
_TO_CCE = {
    "uint64": "u64", "int8": "i8", "uint8": "u8", "int16": "i16", "uint16": "u16",
    "bfloat16": "bf16", "float16": "fp16", "int32": "i32", "uint32": "u32", "float32": "fp32",
    "int64": "i64", "float8_e3m4": "fp8e3", "float8_e4m3": "fp8e4", "float8_e5m2": "fp8e5",
    "float8_e4m3fn": "fp8e4fn",
}
_FROM_CCE = {v: k for k, v in _TO_CCE.items()}
_FROM_CCE["fp32r"] = "float32"


from ._errors import CceError  # noqa: E402

# Resolved once: numpy dtype object <-> cce name (dtype objects hash by value).
_BY_DTYPE = {}
_DTYPE_OF = {}
for _np_name, _cce in _TO_CCE.items():
    _t = getattr(ml_dtypes, _np_name, None) if ml_dtypes is not None else None
    _dt = np.dtype(_t) if _t is not None else np.dtype(_np_name)
    _BY_DTYPE[_dt] = _cce
    _DTYPE_OF[_cce] = _dt
_DTYPE_OF["fp32r"] = np.dtype(np.float32)


def cce_name(dtype):
    """The cce name of a dtype given as a numpy/ml_dtypes dtype, its type, its numpy name or a cce
    name (``bf16``, ``fp8e4`` …). Raises CceError for anything else."""
    if isinstance(dtype, np.dtype):
        name = _BY_DTYPE.get(dtype)
        if name is not None:
            return name
    if isinstance(dtype, str):
        if dtype in _FROM_CCE:
            return dtype
        if dtype in _TO_CCE:
            return _TO_CCE[dtype]
        raise CceError(f"unknown dtype '{dtype}' (expected one of: {', '.join(sorted(_TO_CCE))}, "
                       f"or a cce name: {', '.join(sorted(_FROM_CCE))})")
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise CceError(f"unknown dtype {dtype!r}") from None
    if dt not in _BY_DTYPE:
        raise CceError(f"dtype {dt.name} is not a CCE dtype (expected one of: {', '.join(sorted(_TO_CCE))})")
    return _BY_DTYPE[dt]


def cce_name_of(name):
    """The cce name of a dtype's numpy / ml_dtypes name (torch spells them alike), or None."""
    return _TO_CCE.get(name)


def numpy_dtype(cce):
    """The numpy (or ml_dtypes) dtype of a cce name."""
    return _DTYPE_OF[cce]


def as_array(x, what="array"):
    """``x`` as a numpy array of at least one dimension (0-d arrays are refused)."""
    a = x if isinstance(x, np.ndarray) else np.asarray(x)
    if a.ndim == 0:
        raise CceError(f"{what}: a 0-d array has no elements to transfer (give at least one dimension)")
    return a


def raw(a):
    """The bytes of ``a`` as a 1-d ``uint8`` array: a view when ``a`` is C-contiguous, else one copy."""
    if not a.flags.c_contiguous:
        a = np.ascontiguousarray(a)
    if a.ndim != 1:
        a = a.reshape(-1)
    return a.view(np.uint8)


def from_raw(b, cce, shape=None):
    """A ``uint8`` array as the dtype ``cce`` (no copy), reshaped to ``shape`` when given."""
    out = b.view(_DTYPE_OF[cce])
    return out if shape is None or out.shape == shape else out.reshape(shape)
