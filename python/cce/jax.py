"""JAX's ``psum`` and ``pmean`` with Trainium's all-reduce numerics, on CPU devices.

``cce.jax.psum(x, axis_name, **opts)`` and ``cce.jax.pmean`` are used where ``jax.lax.psum`` /
``pmean`` would be: inside ``jax.shard_map`` (or ``pmap``) over CPU devices
(``jax.config.update("jax_num_cpu_devices", n)``), under ``jit`` and ``grad``. Device ``i`` of
the axis gets rank ``i``'s output of ``cce.allreduce`` of every device's shard — the same bytes,
bit for bit: each device's host callback brings its shard to one meeting, the last to arrive runs
the CCE all-reduce once, and every device takes its rank's output (a device that does not arrive
within ``RENDEZVOUS_SECONDS`` ends the call with a ``CceError`` naming it). ``opts`` are
``cce.allreduce``'s: ``algo``, ``accum``, ``rounding``, ``seed``, ``arch``, ``compress``,
``ranks_per_node``, ``check`` (default ``"none"``: the adapters do not run the exact check
unless asked).

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

from ._errors import CceError
from ._seeds import derived_seed

#: JAX releases this adapter is tested with (major.minor.patch prefixes).
SUPPORTED_JAX = ("0.10.2",)

#: ``cce.allreduce`` options the adapters pass on.
OPTIONS = ("algo", "accum", "rounding", "seed", "arch", "compress", "ranks_per_node", "check")

#: dtypes ``collectives()`` routes to cce (names as numpy / ml_dtypes spell them).
ROUTED_DTYPES = ("bfloat16", "float16", "float32")


class CceFallthrough(UserWarning):
    """A ``jax.lax.psum`` / ``pmean`` under ``collectives()`` that runs on XLA: the message
    says why (its dtype, a Python scalar, several axes)."""


def _jax():
    try:
        import jax
    except ImportError:
        raise CceError("cce.jax needs jax: pip install 'cce-trainium[jax]'") from None
    if not jax.__version__.startswith(SUPPORTED_JAX) and not _WARNED:
        _WARNED.append(jax.__version__)
        warnings.warn(f"cce.jax is tested with jax {', '.join(SUPPORTED_JAX)}; this is jax {jax.__version__}",
                      stacklevel=3)
    return jax


# The unsupported JAX version once warned about (a warning per process, not per call).
_WARNED = []


def _checked(opts):
    """The options, validated by name (their values are cce.allreduce's to check)."""
    bad = sorted(set(opts) - set(OPTIONS))
    if bad:
        raise CceError(f"cce.jax: unknown option {bad[0]!r}; expected one of {', '.join(OPTIONS)}")
    opts = dict(opts)
    opts.setdefault("check", "none")
    return opts


#: Seconds a device's callback waits for the other devices of its axis to bring their shards
#: before it raises (a device that never arrives — its process failed, or JAX ran the devices'
#: callbacks one after another — ends the call with an error naming the missing devices).
RENDEZVOUS_SECONDS = 120.0


class _Calls:
    """The process's cce collectives: trace positions, per-device run counts, and the meeting of
    every device's shard for each run."""

    def __init__(self):
        self.cond = threading.Condition()
        self.positions = 0
        self.runs = {}  # (position, device) -> runs so far
        self.meetings = {}  # (position, step) -> {"shards": {device: array}, "outs", "error", "left"}

    def next_position(self):
        with self.cond:
            self.positions += 1
            return self.positions - 1

    def step(self, position, device):
        with self.cond:
            k = (position, device)
            s = self.runs.get(k, 0)
            self.runs[k] = s + 1
            return s

    def meet(self, position, step, device, shard, ranks, compute):
        """Rank ``device``'s output of run ``step`` of call ``position``: the device that brings
        the last of the ``ranks`` shards runs ``compute(shards)`` (rank order), the others wait
        for it; kept until every device has taken its own."""
        key = (position, step)
        with self.cond:
            m = self.meetings.setdefault(key, {"shards": {}, "outs": None, "error": None, "left": ranks})
            m["shards"][device] = shard
            if len(m["shards"]) == ranks:
                try:
                    m["outs"] = compute([m["shards"][r] for r in range(ranks)])
                except BaseException as e:  # every device of the call raises it
                    m["error"] = e
                m["shards"] = None
                self.cond.notify_all()
            elif not self.cond.wait_for(lambda: m["shards"] is None, timeout=RENDEZVOUS_SECONDS):
                missing = sorted(set(range(ranks)) - set(m["shards"]))
                # The call failed: a device that arrives later meets no one and times out too.
                self.meetings.pop(key, None)
                raise CceError(f"cce.jax: device(s) {missing} of the axis did not bring their shards to call "
                               f"{position} (run {step}) within {RENDEZVOUS_SECONDS:g} s")
            m["left"] -= 1
            if m["left"] == 0:
                del self.meetings[key]
            if m["error"] is not None:
                raise m["error"]
            return m["outs"][device]


_CALLS = _Calls()


def _allreduce_op(x, axis_name, op, opts, base_seed):
    """The forward of one collective: every device's shard brought to one host meeting, the CCE
    all-reduce run once, device ``i`` given rank ``i``'s output."""
    jax = _jax()
    from . import allreduce

    position = _CALLS.next_position()
    explicit = opts.get("seed")
    rest = {k: v for k, v in opts.items() if k != "seed"}
    shape, dtype = x.shape, x.dtype
    ranks = jax.lax.axis_size(axis_name)

    def host(device, *pieces):
        device = int(device)
        shard = np.concatenate([np.asarray(p) for p in pieces]).reshape(shape)
        step = _CALLS.step(position, device)
        rounding = rest.get("rounding", "rne")
        seed = explicit if explicit is not None else (derived_seed(base_seed, position, step) if rounding == "sr" else 0)

        def compute(shards):
            outs, _ = allreduce(shards, op=op, seed=seed, **rest)
            return outs

        return np.asarray(_CALLS.meet(position, step, device, shard, ranks, compute)).reshape(shape)

    device = jax.lax.axis_index(axis_name)
    return jax.pure_callback(host, jax.ShapeDtypeStruct(shape, dtype), device, *_pieces(x.reshape(-1)))


#: Most bytes one callback argument holds. With several CPU devices, jax 0.9.2 and 0.10.2 hung
#: (every device's callback waiting in ``np.asarray`` of its argument) on larger arguments:
#: 2, 4 and 8 devices x 262,144 gathered fp32, also cut into 4 or 16 arguments; 4 devices x 1 Mi
#: fp32 as one argument; each device's own shard in 256 KiB or 1 MiB arguments (4 and 8 devices).
#: Cut into arguments of 64 KiB, the same runs finished. Measured, not understood: a shard
#: reaches the callback in arguments of at most this size.
PIECE_BYTES = 64 << 10


def _pieces(flat):
    """``flat`` (one dimension) cut into arguments of at most ``PIECE_BYTES``."""
    step = max(1, PIECE_BYTES // flat.dtype.itemsize)
    return [flat[a:a + step] for a in range(0, max(flat.shape[0], 1), step)]


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
