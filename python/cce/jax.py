"""JAX's ``psum`` and ``pmean`` with Trainium's all-reduce numerics, on CPU devices.

``cce.jax.psum(x, axis_name, **opts)`` and ``cce.jax.pmean`` are used where ``jax.lax.psum`` /
``pmean`` would be: inside ``jax.shard_map`` (or ``pmap``) over CPU devices
(``jax.config.update("jax_num_cpu_devices", n)``), under ``jit`` and ``grad``. Device ``i`` of
the axis gets rank ``i``'s output of ``cce.allreduce`` of every device's shard — the same bytes,
bit for bit: each device's collective is a call of cce's XLA FFI handler (in the extension,
registered with ``jax.ffi`` on first use), where the devices' shards meet without the GIL; the
last to arrive runs the CCE all-reduce once, and every device takes its rank's output. ``opts``
are ``cce.allreduce``'s: ``algo``, ``accum``, ``rounding``, ``seed``, ``arch``, ``compress``,
``ranks_per_node``, a hierarchy's ``nodes``, ``intra`` and ``inter``, ``check`` (default ``"none"``: the adapters do not run the exact check
unless asked).

Errors: options are checked when the call is traced (a ``CceError``, the message
``cce.allreduce`` gives for them). What fails while the program runs — a device that does not
arrive within ``RENDEZVOUS_SECONDS`` (the error names it), a size the all-reduce refuses —
raises JAX's ``JaxRuntimeError`` carrying cce's message.

Seeds that replay (stochastic rounding): a call given ``seed=s`` uses exactly ``s``, so it equals
``cce.allreduce(..., seed=s)``. Without one, the seed is drawn from (the base seed — 0, or the
``collectives(seed=...)`` in force —, the call's position: the order in which the program's cce
collectives were traced, and the step: how many times this device has run this call before).
Each device counts its own runs, so the seed never depends on thread or process scheduling; the
same program traced in the same order gives the same bits on every run. The all-reduce itself
gives each rank its own stream (the engine's queue).

``with cce.jax.collectives(**opts):`` routes unmodified ``jax.lax.psum`` / ``jax.lax.pmean`` of
bf16, float16 and float32 arrays over one named axis through cce; everything else (integers,
Python scalars such as ``psum(1, axis)``, several axes) falls through to XLA with a
``CceFallthrough`` warning that says why. The context restores ``jax.lax.psum`` / ``pmean`` on
exit. JAX reuses a function's trace, so entering and leaving clear JAX's caches
(``jax.clear_caches()``): a step traced before the context is traced again inside it, and one
traced inside it again outside. ``routed()`` lists the calls the context sent to cce.

Gradients follow JAX's rule for ``psum`` inside ``shard_map``: the output is one value for every
device, so a shard's cotangent is the output's (times fl32(1/R) for ``pmean``, the FMA's scale);
no collective runs backwards.

Supported JAX: the versions in ``SUPPORTED_JAX`` (``pip install .[jax]`` installs one); with
another version the first call warns once.
"""
import contextlib
import threading
import warnings

import numpy as np

from ._adapters import OPTIONS, check_names, require
from ._errors import CceError
from ._seeds import derived_seed  # noqa: F401 (part of cce.jax's API)

#: JAX releases this adapter is tested with (major.minor.patch prefixes).
SUPPORTED_JAX = ("0.10.2",)

#: dtypes ``collectives()`` routes to cce (names as numpy / ml_dtypes spell them).
ROUTED_DTYPES = ("bfloat16", "float16", "float32")


class CceFallthrough(UserWarning):
    """A ``jax.lax.psum`` / ``pmean`` under ``collectives()`` that runs on XLA: the message
    says why (its dtype, a Python scalar, several axes)."""


def _jax():
    return require("jax", SUPPORTED_JAX, "jax")


def _checked(opts):
    """The options, validated by name (their values are cce.allreduce's to check)."""
    check_names(opts, "jax")
    opts = dict(opts)
    opts.setdefault("check", "none")
    return opts


#: Seconds a device waits in cce's XLA handler for the other devices of its axis to bring their
#: shards (a device that never arrives ends the call with an error naming the missing devices).
RENDEZVOUS_SECONDS = 120.0


class _Calls:
    """The process's cce collectives in trace order (their positions)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.positions = 0

    def next_position(self):
        with self.lock:
            self.positions += 1
            return self.positions - 1


_CALLS = _Calls()

#: The XLA FFI target every device's collective calls (registered once per process).
FFI_TARGET = "cce_allreduce"
_REGISTERED = []


def _ffi_target(jax):
    """Registers the Rust handler (cce._cce) with XLA on first use; its name."""
    if not _REGISTERED:
        import ctypes

        from . import _cce

        handler = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)(_cce.xla_ffi_handler())
        jax.ffi.register_ffi_target(FFI_TARGET, jax.ffi.pycapsule(handler), platform="cpu")
        _REGISTERED.append(handler)  # the capsule points into the extension, loaded for good
    return FFI_TARGET


def _validate(dtype, ranks, op, opts):
    """The options checked at trace time: a small all-reduce of the same dtype, ranks and
    options (16 elements per rank) raises the CceError the real one would."""
    from . import allreduce

    tiny = [np.zeros(16 * ranks, dtype=np.dtype(dtype)) for _ in range(ranks)]
    allreduce(tiny, op=op, **{k: v for k, v in opts.items() if k != "check"}, check="none")


def _allreduce_op(x, axis_name, op, opts, base_seed):
    """The forward of one collective: every device's shard goes to cce's XLA handler, which
    meets the axis's devices in Rust (no GIL, no host callback), runs the CCE all-reduce once
    and gives device ``i`` rank ``i``'s output (see cce-py's xla_ffi module)."""
    jax = _jax()
    from ._dtypes import cce_name

    ranks = jax.lax.axis_size(axis_name)
    _validate(x.dtype, ranks, op, opts)  # dtype and options refused here, at trace time
    position = _CALLS.next_position()
    explicit = opts.get("seed")
    config = {
        "position": position, "ranks": ranks, "timeout": RENDEZVOUS_SECONDS, "op": op,
        "seed": f"explicit:{int(explicit)}" if explicit is not None else f"derive:{int(base_seed)}",
    }
    for k in OPTIONS:
        if k != "seed" and opts.get(k) is not None:
            config[k] = cce_name(opts[k]) if k == "accum" else opts[k]
    if any(";" in str(v) or "=" in str(v) for v in config.values()):
        raise CceError(f"cce.jax: an option holds ';' or '=': {config!r}")
    text = ";".join(f"{k}={v}" for k, v in config.items())
    device = jax.lax.axis_index(axis_name).astype(np.int32)
    call = jax.ffi.ffi_call(_ffi_target(jax), jax.ShapeDtypeStruct(x.shape, x.dtype), has_side_effect=True)
    return call(x, device, config=text)


def _varying_axes(jax, x):
    """The manual axes ``x`` varies over (``jax.typeof(x).manual_axis_type.varying`` in the
    supported JAX; empty outside shard_map)."""
    mat = getattr(jax.typeof(x), "manual_axis_type", None)
    return getattr(mat, "varying", frozenset())


def _collective(x, axis_name, op, opts, base_seed=0):
    jax = _jax()
    if not isinstance(axis_name, str):
        raise CceError(f"cce.jax: axis_name must be one axis name (a str), not {axis_name!r}")

    @jax.custom_vjp
    def f(v):
        return _allreduce_op(v, axis_name, op, opts, base_seed)

    def fwd(v):
        return f(v), None

    # The transpose (JAX's rule for psum in shard_map): the output is one value for every
    # device, so each shard's cotangent is the output's — times fl32(1/R) for pmean (the FMA's
    # scale), times R more when the shard itself was one value for every device. Typed as the
    # shard was (the callback's output is typed invariant).
    varying = axis_name in _varying_axes(jax, x)
    ranks = jax.lax.axis_size(axis_name)
    scale = (1.0 if op == "add" else float(np.float32(1.0) / np.float32(ranks))) * (1 if varying else ranks)

    def bwd(_, ct):
        g = ct if scale == 1.0 else ct * np.asarray(scale, dtype=ct.dtype)
        return (jax.lax.pcast(g, axis_name, to="varying") if varying else g,)

    f.defvjp(fwd, bwd)
    return f(x)


def psum(x, axis_name, **opts):
    """The sum of ``x`` over the devices of ``axis_name`` as Trainium's CCE all-reduce computes
    it (``cce.allreduce`` with ``op="add"``); device ``i`` gets rank ``i``'s output. ``opts``:
    ``cce.allreduce``'s options (see the module doc). Raises CceError for an unknown option or
    an axis that is not one name; the all-reduce raises CceError for what it refuses."""
    return _collective(x, axis_name, "add", _checked(opts))


def pmean(x, axis_name, **opts):
    """The mean of ``x`` over the devices of ``axis_name`` as the CCE computes it: ``op="avg"``,
    an FMA with the scale fl32(1/R) (docs/MODEL.md). As ``psum`` otherwise."""
    return _collective(x, axis_name, "avg", _checked(opts))


_ROUTE = threading.local()


def routed():
    """The calls the innermost active ``collectives()`` sent to cce, as ``(name, dtype,
    shape)`` tuples, in trace order (empty outside one)."""
    stack = getattr(_ROUTE, "stack", None)
    return list(stack[-1]["routed"]) if stack else []


def _why_not(x, axis_name):
    """Why ``collectives()`` leaves this call to XLA, or None to route it."""
    if not isinstance(axis_name, str):
        return f"axis_name {axis_name!r} is not one axis name"
    dt = getattr(x, "dtype", None)
    if dt is None or not hasattr(x, "shape"):
        return f"{type(x).__name__} is not an array"
    if np.dtype(dt).name not in ROUTED_DTYPES:
        return f"dtype {np.dtype(dt).name} is not one of {', '.join(ROUTED_DTYPES)}"
    return None


@contextlib.contextmanager
def collectives(**opts):
    """Routes ``jax.lax.psum`` / ``jax.lax.pmean`` through cce while active (see the module
    doc); ``opts`` as ``psum``'s, ``seed`` the base seed of the calls. Restores both on exit."""
    jax = _jax()
    opts = _checked(opts)
    base = opts.pop("seed", 0)
    if base is None:
        base = 0
    original = {"psum": jax.lax.psum, "pmean": jax.lax.pmean}
    frame = {"routed": []}

    def router(name, op):
        def routed_call(x, axis_name, **kw):
            leaves = jax.tree_util.tree_leaves(x)
            why = "keyword arguments " + ", ".join(sorted(kw)) if kw else None
            why = why or next((w for w in (_why_not(leaf, axis_name) for leaf in leaves) if w), None)
            if why is not None or not leaves:
                warnings.warn(f"cce.jax: {name} falls through to XLA: {why or 'no arrays'}", CceFallthrough,
                              stacklevel=2)
                return original[name](x, axis_name, **kw)

            def one(leaf):
                frame["routed"].append((name, np.dtype(leaf.dtype).name, tuple(leaf.shape)))
                return _collective(leaf, axis_name, op, opts, base)

            return jax.tree_util.tree_map(one, x)

        routed_call.__name__ = name
        routed_call.__doc__ = f"cce's {name} (cce.jax.collectives is active)."
        return routed_call

    stack = getattr(_ROUTE, "stack", None)
    if stack is None:
        stack = _ROUTE.stack = []
    stack.append(frame)
    # JAX reuses a function's trace: cleared on entry, a step traced before takes the route;
    # cleared on exit, it takes XLA's again.
    jax.clear_caches()
    jax.lax.psum, jax.lax.pmean = router("psum", "add"), router("pmean", "avg")
    try:
        yield frame["routed"]
    finally:
        jax.lax.psum, jax.lax.pmean = original["psum"], original["pmean"]
        stack.pop()
        jax.clear_caches()
