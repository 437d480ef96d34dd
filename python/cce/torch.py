"""A ``torch.distributed`` backend named ``"cce"``: Trainium's all-reduce numerics for CPU tensors.

``dist.init_process_group("cce")`` — under ``torchrun``, ``mp.spawn`` or any other launcher —
gives a process group whose reductions are the CCE's: rank ``r``'s tensor after ``all_reduce``
holds exactly the bytes ``cce.allreduce`` gives rank ``r`` for every rank's tensor (algorithm,
accumulate dtype, RNE / SR, seed, arch and ``compress`` as configured below). The package
declares the backend through the ``torch.distributed.backends`` entry point, so an unmodified
script finds it once ``cce-trainium[torch]`` is installed; ``import cce.torch`` registers it too.

How it runs: rank ``r``'s output is rank ``r``'s of the CCE all-reduce of every rank's array,
computed once per call. With every rank of the group on one host (the default transport, "auto"),
each rank copies its bytes into its own shared-memory segment and rings the leader's doorbell (a
FIFO); the group's leader (rank 0) runs the all-reduce over all segments in place, writes each
rank's output (or the error, which then ends the call on every rank) into that rank's segment and
rings that rank's doorbell. Across
hosts (or with ``transport="gloo"``), every rank's bytes reach every other rank over gloo
(``uint8`` views) and each rank runs the all-reduce itself. Collectives run to completion when
called; the work object they return is already complete (``wait()`` returns at once,
``get_future()`` is done).

Collectives:

- ``all_reduce`` (SUM, AVG, MIN, MAX; ``all_reduce_coalesced`` too) of bf16, float16, float32,
  int8 / int16 / int32 / int64 and uint8 tensors: the CCE all-reduce (``op`` add, avg — an FMA
  with scale fl32(1/R) —, min, max). Other dtypes (float64, bool, complex) fall through to gloo
  with a ``CceFallthrough`` warning, once per dtype; other ops raise ``CceError``.
- ``reduce_scatter`` / ``reduce_scatter_tensor``: rank ``r``'s slice of the CCE all-reduce of the
  rank's inputs laid end to end (same dtypes and ops).
- ``all_gather`` / ``all_gather_into_tensor``, ``broadcast``, ``barrier``, ``gather``, ``scatter``,
  ``all_to_all``: data movement, bytes unchanged — gloo's.

Options (``dist.init_process_group("cce", pg_options=cce.torch.Options(...))``, else environment
variables, else the default): ``algo`` (``CCE_ALGO``, ring), ``accum`` (``CCE_ACCUM``),
``rounding`` (``CCE_ROUNDING``, rne), ``seed`` (``CCE_SEED``, 0: the base seed), ``arch``
(``CCE_ARCH``, 3), ``compress`` (``CCE_COMPRESS``), ``ranks_per_node`` (``CCE_RANKS_PER_NODE``),
``check`` (``CCE_CHECK``, none: the exact check runs only when asked), a hierarchy's ``nodes``
(``CCE_NODES``), ``intra`` (``CCE_INTRA``) and ``inter`` (``CCE_INTER``) with ``algo="hier"``
(nodes × ranks_per_node must be the group's size), ``transport``
(``CCE_TRANSPORT``: auto, shm or gloo). ``with
cce.torch.options(**opts):`` overrides them for the calls a thread makes inside it (the same on
every rank: on one host the leader's options are the ones used).

Seeds that replay (stochastic rounding): a call made inside ``options(seed=s)`` uses exactly
``s`` (it equals ``cce.allreduce(..., seed=s)``). Otherwise call ``k`` of a process group (its
``k``-th reduction, counted from 0; every rank makes the same calls in the same order) uses
``derived_seed(base, k, group)``, ``group`` the CRC-32 of the group's name — a function of the
program alone (docs/MODEL.md C18). ``seed_of_call(k)`` gives it.

A rank that dies or stops calling ends the others' collective with a ``RankFailed`` that names
it, within the group's timeout: on one host the doorbell's wait sees the process gone (within
half a second); over gloo each rank marks its arrival at every call in the store, and the marks
name the ranks that did not arrive.

Supported torch: the versions in ``SUPPORTED_TORCH`` (``pip install 'cce-trainium[torch]'``
installs one); with another version the first process group warns once.
"""
import atexit
import contextlib
import datetime
import os
import socket
import threading
import uuid
import weakref
import warnings
import zlib

import numpy as np

from . import _shm
from ._adapters import OPTIONS, check_names, require
from ._dtypes import cce_name_of, numpy_dtype
from ._errors import CceError, EngineFault, RankFailed
from ._seeds import derived_seed

#: torch releases this backend is tested with (version prefixes).
SUPPORTED_TORCH = ("2.15.",)

#: The backend's name, as ``init_process_group`` takes it.
BACKEND = "cce"

#: The options and the environment variables that set them.
ENVIRONMENT = {name: f"CCE_{name.upper()}" for name in OPTIONS}
_INTEGER_OPTIONS = ("seed", "arch", "ranks_per_node", "nodes")

#: How ranks' bytes travel: "auto" (shared memory when every rank of the group is on this host,
#: else gloo), "shm" (shared memory, refused across hosts) or "gloo".
TRANSPORTS = ("auto", "shm", "gloo")
TRANSPORT_ENV = "CCE_TRANSPORT"


class CceFallthrough(UserWarning):
    """A reduction the backend hands to gloo (a dtype the CCE does not carry): the message says
    which."""


class Options:
    """The backend's options for one process group (``pg_options=``); any left ``None`` comes
    from its environment variable, else its default."""

    def __init__(self, *, algo=None, accum=None, rounding=None, seed=None, arch=None, compress=None,
                 ranks_per_node=None, check=None, transport=None, nodes=None, intra=None, inter=None):
        self.algo, self.accum, self.rounding, self.seed = algo, accum, rounding, seed
        self.arch, self.compress, self.ranks_per_node, self.check = arch, compress, ranks_per_node, check
        self.transport = transport
        self.nodes, self.intra, self.inter = nodes, intra, inter

    def resolved_transport(self, environ=os.environ):
        """The transport (``TRANSPORTS``): this option, else ``CCE_TRANSPORT``, else auto."""
        t = self.transport or environ.get(TRANSPORT_ENV) or "auto"
        if t not in TRANSPORTS:
            raise CceError(f"cce.torch: transport {t!r} is not one of {', '.join(TRANSPORTS)}")
        return t

    def resolved(self, environ=os.environ):
        """The options as ``cce.allreduce`` keywords, environment and defaults filled in."""
        out = {"algo": "ring", "rounding": "rne", "seed": 0, "arch": 3, "check": "none"}
        for name, var in ENVIRONMENT.items():
            value = getattr(self, name)
            if value is None and environ.get(var, "") != "":
                value = environ[var]
                if name in _INTEGER_OPTIONS:
                    try:
                        value = int(value, 0)
                    except ValueError:
                        raise CceError(f"cce.torch: {var}={environ[var]!r} is not an integer") from None
            if value is not None:
                out[name] = value
        return out

    def __repr__(self):
        set_ = ", ".join(f"{k}={getattr(self, k)!r}" for k in ENVIRONMENT if getattr(self, k) is not None)
        return f"cce.torch.Options({set_})"


_LOCAL = threading.local()


@contextlib.contextmanager
def options(**opts):
    """Overrides the process group's options for the collectives this thread calls inside the
    block (``seed=s``: exactly ``s`` for every call)."""
    check_names(opts, "torch")
    stack = getattr(_LOCAL, "stack", None)
    if stack is None:
        stack = _LOCAL.stack = []
    stack.append(dict(opts))
    try:
        yield
    finally:
        stack.pop()


def _overrides():
    merged = {}
    for frame in getattr(_LOCAL, "stack", ()):
        merged.update(frame)
    return merged


def _torch():
    torch = require("torch", SUPPORTED_TORCH, "torch")
    import torch.distributed as dist

    return torch, dist


# Dtypes already warned about falling through to gloo (once per process).
_FELL_THROUGH = set()


def _cce_dtype(t):
    """The cce name of a tensor's dtype, or None when the CCE does not carry it."""
    return cce_name_of(str(t.dtype).removeprefix("torch."))


def _as_numpy(flat, dt):
    """A contiguous 1-d CPU tensor as a numpy array of cce dtype ``dt`` over the same memory
    (through a uint8 view: numpy has no bfloat16 or fp8 of its own)."""
    torch, _ = _torch()
    return flat.view(torch.uint8).numpy().view(numpy_dtype(dt))


def _op_name(dist, op):
    names = {dist.ReduceOp.SUM: "add", dist.ReduceOp.AVG: "avg", dist.ReduceOp.MIN: "min", dist.ReduceOp.MAX: "max"}
    for k, v in names.items():
        if op == k:
            return v
    raise CceError(f"cce.torch: reduce op {op} is not a CCE op (SUM, AVG, MIN, MAX)")


def _done(torch, result):
    fut = torch.futures.Future()
    fut.set_result(result)
    return torch._C._distributed_c10d._create_work_from_future(fut)


def seed_of_call(k, base=0, group_name="0"):
    """The stochastic-rounding seed of a group's ``k``-th reduction (no explicit seed): see the
    module doc. ``group_name``: the process group's name (``"0"`` for the default group)."""
    return derived_seed(base, k, zlib.crc32(str(group_name).encode()))


def _make_group_class(torch, dist):
    """The ProcessGroup subclass (made on first use, so importing cce.torch needs no torch)."""

    class CceProcessGroup(dist.ProcessGroup):
        """One process group of the ``"cce"`` backend (see the module doc)."""

        def __init__(self, store, rank, size, timeout, group_name, opts):
            super().__init__(rank, size)
            # A group made again on the same store (destroy, then init) must not read the last
            # one's keys: each init counts itself in the store (every rank finished the last
            # init's barriers before any begins this one), and its keys live under that count.
            generation = (store.add("cce-inits", 1) - 1) // size
            store = dist.PrefixStore(f"cce/{generation}/", store)
            self._store = store
            self._rank, self._size = rank, size
            self._timeout = timeout
            self._group = str(group_name)
            self._opts = opts
            self._calls = 0  # collectives begun on this group (arrival marks)
            self._reductions = 0  # reductions begun (their seeds)
            self._gloo = dist.ProcessGroupGloo(dist.PrefixStore("cce-gloo/", store), rank, size, timeout)
            self._bells = None
            self._segments = self._shared_memory(opts.resolved_transport())
            _LIVE.add(self)

        def _shared_memory(self, transport):
            """The same-host transport's segments and doorbells, or None for gloo (see
            TRANSPORTS)."""
            if transport == "gloo":
                return None
            where = _host_identity()
            self._store.set(f"cce-host/{self._rank}", f"{os.getpid()} {where}".encode())
            seen = [self._store.get(f"cce-host/{r}").decode().split(" ", 1) for r in range(self._size)]
            hosts = {h for _, h in seen}
            if len(hosts) != 1 or where.endswith(" no-shm"):
                if transport == "shm":
                    raise CceError(f"cce.torch: transport shm needs every rank on one host with {_shm.SHM_DIR}; "
                                   f"this group spans {len(hosts)} host(s)")
                return None
            if self._rank == 0:
                self._store.set("cce-shm-token", uuid.uuid4().hex.encode())
            token = self._store.get("cce-shm-token").decode()
            self._bells = _shm.Doorbells(token, self._rank, self._size, [int(p) for p, _ in seen])
            self._gloo.barrier(dist.BarrierOptions()).wait()  # every bell made
            self._bells.open()
            self._gloo.barrier(dist.BarrierOptions()).wait()  # every bell opened
            self._bells.unlink()
            return _shm.Segments(token, self._rank, self._size)

        def getBackendName(self):
            return BACKEND

        def shutdown(self):
            """``destroy_process_group`` calls it: the gloo transport, the segments and the
            doorbells are let go."""
            self._release()

        def _release(self):
            self._segments = None
            if getattr(self, "_bells", None) is not None:
                self._bells.close()
                self._bells = None
            gloo, self._gloo = self._gloo, None
            if gloo is not None:
                gloo.shutdown()

        @property
        def group_name(self):
            """The group's name in torch.distributed (``"0"`` for the default group)."""
            return self._group

        def __repr__(self):
            return f"CceProcessGroup(rank={self._rank}, size={self._size}, group={self._group!r})"

        # --- failure naming ---------------------------------------------------------------

        def _run(self, what, transfer):
            """Runs ``transfer()`` (a gloo collective, waited on) after marking this rank's
            arrival; a failure names the ranks that did not arrive."""
            call = self._calls
            self._calls += 1
            # A rank's mark holds the number of the last call it arrived at; ARRIVAL_SLOTS keys per
            # rank, reused in turn, keep the store's size bounded (a failure reads the current call's).
            self._store.set(f"cce-arrived/{call % ARRIVAL_SLOTS}/{self._rank}", str(call).encode())
            try:
                return transfer()
            except (CceError, EngineFault, RankFailed):  # cce's own, raised on every rank
                raise
            except Exception as e:  # gloo's: a peer closed its connection or timed out
                raise self._failure(what, call, e) from e

        def _failure(self, what, call, error):
            missing = []
            for r in range(self._size):
                try:
                    key = f"cce-arrived/{call % ARRIVAL_SLOTS}/{r}"
                    if not self._store.check([key]) or self._store.get(key) != str(call).encode():
                        missing.append(r)
                except Exception:  # the store went with the process that hosted it
                    host = "torchrun's agent" if os.environ.get("TORCHELASTIC_USE_AGENT_STORE") == "True" else "rank 0"
                    return RankFailed(f"cce.torch: {what} (call {call}) failed and the store is unreachable: "
                                      f"its host ({host}) has exited: {error}",
                                      rank=None if host != "rank 0" else 0, step=call)
            if missing:
                return RankFailed(f"cce.torch: {what} (call {call}): rank(s) {missing} did not arrive "
                                  f"(exited or stopped calling): {error}", rank=missing[0], step=call)
            return RankFailed(f"cce.torch: {what} (call {call}) failed after every rank arrived: {error}", step=call)

        # --- reductions ---------------------------------------------------------------------

        def _reduce(self, flat, op, what):
            """``flat`` (a contiguous 1-d CPU tensor) replaced by this rank's output of the CCE
            all-reduce of every rank's ``flat``."""
            from . import allreduce

            dt = _cce_dtype(flat)
            opname = _op_name(dist, op)
            if flat.numel() == 0:  # every rank passes the same size: nothing to exchange
                return
            k = self._reductions
            self._reductions += 1
            if dt is None:
                if flat.dtype not in _FELL_THROUGH:
                    _FELL_THROUGH.add(flat.dtype)
                    warnings.warn(f"cce.torch: {what} of {flat.dtype} falls through to gloo (not a CCE dtype)",
                                  CceFallthrough, stacklevel=4)
                if opname == "avg":  # gloo has no AVG
                    self._run(what, lambda: self._gloo.allreduce([flat], dist.AllreduceOptions()).wait())
                    flat.div_(self._size)
                else:
                    o = dist.AllreduceOptions()
                    o.reduceOp = op
                    self._run(what, lambda: self._gloo.allreduce([flat], o).wait())
                return
            opts = self._opts.resolved()
            local = _overrides()
            opts.update(local)
            base = opts.pop("seed")
            if "seed" in local:
                seed = local["seed"]
            else:
                seed = seed_of_call(k, base, self._group) if str(opts.get("rounding", "rne")).lower() == "sr" else 0
            if self._segments is not None:
                return self._reduce_shared(flat, dt, opname, seed, opts, what)
            nbytes = flat.numel() * flat.element_size()
            gathered = torch.empty(self._size * nbytes, dtype=torch.uint8)
            mine = flat.view(torch.uint8)
            self._run(what, lambda: self._gloo._allgather_base(gathered, mine).wait())
            ranks = gathered.numpy().view(numpy_dtype(dt)).reshape(self._size, -1)
            outs, _ = allreduce(list(ranks), op=opname, seed=seed, **opts)
            _as_numpy(flat, dt)[...] = outs[self._rank]

        def _agree(self, ok):
            """Whether every rank passed ``ok`` (a gloo all-reduce MIN of one flag)."""
            flag = torch.tensor([1 if ok else 0], dtype=torch.int32)
            o = dist.AllreduceOptions()
            o.reduceOp = dist.ReduceOp.MIN
            self._gloo.allreduce([flag], o).wait()
            return bool(flag.item())

        def _reduce_shared(self, flat, dt, opname, seed, opts, what):
            """``_reduce`` over shared memory: every rank copies its bytes into its segment and
            rings the leader; the leader runs the all-reduce once on all segments in place, writes
            each rank's output (or the error) into that rank's segment and rings it."""
            from . import allreduce

            seg, bells = self._segments, self._bells
            nbytes = flat.numel() * flat.element_size()
            if 2 * nbytes > seg.capacity:  # every rank grows at the same call (same size)
                self._run(what, lambda: seg.ensure(nbytes, self._agree))
            call = self._calls
            self._calls += 1
            timeout = self._timeout.total_seconds()

            def failed(e):
                how = "exited" if e.dead else f"did not arrive within {timeout:g} s"
                return RankFailed(f"cce.torch: {what} (call {call}): rank(s) {e.ranks} {how}", rank=e.ranks[0],
                                  step=call)

            mine = flat.view(torch.uint8).numpy()
            seg.input(self._rank, nbytes)[:] = mine
            if self._rank != 0:
                bells.ring(0)
                try:
                    bells.wait([0], timeout)
                except _shm.PeerFailed as e:
                    raise failed(e) from None
                kind, message, failed_rank = seg.status()
                if kind == 3:
                    raise RankFailed(message, rank=failed_rank, step=call)
                if kind:
                    raise _ERROR_KINDS[kind](message)
                mine[:] = seg.output(self._rank, nbytes)
                return
            try:
                bells.wait(range(1, self._size), timeout)
            except _shm.PeerFailed as e:  # the ranks that did arrive are told, then released
                error = failed(e)
                for r in set(range(1, self._size)) - set(e.ranks):
                    seg.set_status(r, 3, str(error), failed_rank=error.rank)
                    bells.ring(r)
                raise error from None
            np_dt = numpy_dtype(dt)
            error, kind = None, 0
            try:
                outs, _ = allreduce([seg.input(r, nbytes).view(np_dt) for r in range(self._size)], op=opname,
                                    seed=seed, **opts)
            except Exception as e:  # every rank raises it
                error = e
                kind = next((k for k, t in _ERROR_KINDS.items() if type(e) is t), 4)
            for r in range(1, self._size):
                if error is None:
                    seg.output(r, nbytes)[:] = outs[r].reshape(-1).view(np.uint8)
                seg.set_status(r, kind, str(error) if kind != 4 else f"{type(error).__name__}: {error}",
                               failed_rank=getattr(error, "rank", None))
                bells.ring(r)
            if error is not None:
                raise error
            mine[:] = outs[0].reshape(-1).view(np.uint8)

        def _reduce_into(self, tensor, op, what):
            if tensor.is_contiguous():
                self._reduce(tensor.reshape(-1), op, what)
            else:
                flat = tensor.contiguous().reshape(-1)
                self._reduce(flat, op, what)
                tensor.copy_(flat.reshape(tensor.shape))

        def allreduce(self, tensors, opts=None):
            op = opts.reduceOp if opts is not None else dist.ReduceOp.SUM
            for t in tensors:
                self._reduce_into(t, op, "all_reduce")
            return _done(torch, tensors)

        def allreduce_coalesced(self, tensors, opts=None):
            return self.allreduce(tensors, opts)

        def reduce_scatter(self, output_tensors, input_tensors, opts=None):
            op = opts.reduceOp if opts is not None else dist.ReduceOp.SUM
            for out, parts in zip(output_tensors, input_tensors):
                if len(parts) != self._size:
                    raise CceError(f"cce.torch: reduce_scatter needs {self._size} input tensors, got {len(parts)}")
                whole = torch.cat([p.reshape(-1) for p in parts])
                self._reduce(whole, op, "reduce_scatter")
                n = out.numel()
                out.copy_(whole[self._rank * n:(self._rank + 1) * n].reshape(out.shape))
            return _done(torch, output_tensors)

        def _reduce_scatter_base(self, output, input, opts=None):
            op = opts.reduceOp if opts is not None else dist.ReduceOp.SUM
            if input.numel() != output.numel() * self._size:
                raise CceError(f"cce.torch: reduce_scatter_tensor: input has {input.numel()} elements, "
                               f"expected {self._size} x {output.numel()}")
            whole = input.reshape(-1).clone()
            self._reduce(whole, op, "reduce_scatter_tensor")
            n = output.numel()
            output.copy_(whole[self._rank * n:(self._rank + 1) * n].reshape(output.shape))
            return _done(torch, [output])

        reduce_scatter_single = _reduce_scatter_base

        # --- data movement: gloo's, bytes unchanged ----------------------------------------

        def allgather(self, output_tensors, input_tensors, opts=None):
            self._run("all_gather", lambda: self._gloo.allgather(output_tensors, input_tensors).wait())
            return _done(torch, output_tensors)

        def _allgather_base(self, output, input, opts=None):
            self._run("all_gather_into_tensor", lambda: self._gloo._allgather_base(output, input).wait())
            return _done(torch, [output])

        all_gather_single = _allgather_base

        def allgather_coalesced(self, output_lists, input_tensors, opts=None):
            self._run("all_gather_coalesced", lambda: self._gloo.allgather_coalesced(output_lists, input_tensors).wait())
            return _done(torch, output_lists)

        def broadcast(self, tensors, opts=None):
            o = dist.BroadcastOptions()
            if opts is not None:
                o.rootRank, o.rootTensor = opts.rootRank, opts.rootTensor
            self._run("broadcast", lambda: self._gloo.broadcast(tensors, o).wait())
            return _done(torch, tensors)

        def barrier(self, opts=None):
            self._run("barrier", lambda: self._gloo.barrier(dist.BarrierOptions()).wait())
            return _done(torch, [])

        def gather(self, output_tensors, input_tensors, opts=None):
            o = dist.GatherOptions()
            o.rootRank = opts.rootRank if opts is not None else 0
            self._run("gather", lambda: self._gloo.gather(output_tensors, input_tensors, o).wait())
            return _done(torch, output_tensors)

        def scatter(self, output_tensors, input_tensors, opts=None):
            o = dist.ScatterOptions()
            o.rootRank = opts.rootRank if opts is not None else 0
            self._run("scatter", lambda: self._gloo.scatter(output_tensors, input_tensors, o).wait())
            return _done(torch, output_tensors)

        def alltoall(self, output_tensors, input_tensors, opts=None):
            self._run("all_to_all", lambda: self._gloo.alltoall(output_tensors, input_tensors, dist.AllToAllOptions()).wait())
            return _done(torch, output_tensors)

        def alltoall_base(self, output, input, output_split_sizes, input_split_sizes, opts=None):
            self._run("all_to_all_single", lambda: self._gloo.alltoall_base(
                output, input, output_split_sizes, input_split_sizes, dist.AllToAllOptions()).wait())
            return _done(torch, [output])

    return CceProcessGroup


_GROUP_CLASS = []
_LIVE = weakref.WeakSet()


@atexit.register
def _release_groups():
    """Shuts down the groups' gloo transports before the interpreter finalises: destroyed later,
    in finalisation's order, gloo aborted the process now and then (terminate called without an
    active exception)."""
    for g in list(_LIVE):
        g._release()

#: Store keys per rank for arrival marks (see CceProcessGroup._run).
ARRIVAL_SLOTS = 64

#: The error a rank raises for the leader's status kind (cce._shm.Segments.set_status).
_ERROR_KINDS = {1: CceError, 2: EngineFault, 3: RankFailed, 4: RuntimeError}


def _host_identity():
    """What tells hosts apart for the same-host transport: the host name, the boot id and the
    shared-memory directory's device and inode (containers on one machine differ in these)."""
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as f:
            boot = f.read().strip()
    except OSError:
        boot = "?"
    if not _shm.available():
        return f"{socket.gethostname()} {boot} no-shm"
    st = os.stat(_shm.SHM_DIR)
    return f"{socket.gethostname()} {boot} {st.st_dev}:{st.st_ino}"


def _create(backend_opts, pg_options):
    """The backend's creator (``Backend.register_backend(..., extended_api=True)``)."""
    torch, dist = _torch()
    if not _GROUP_CLASS:
        _GROUP_CLASS.append(_make_group_class(torch, dist))
    if pg_options is not None and not isinstance(pg_options, Options):
        raise CceError(f"cce.torch: pg_options must be a cce.torch.Options, not {type(pg_options).__name__}")
    opts = pg_options or Options()
    opts.resolved()  # bad environment values fail at init, not at the first collective
    opts.resolved_transport()
    timeout = backend_opts.timeout
    if not isinstance(timeout, datetime.timedelta):
        timeout = datetime.timedelta(seconds=float(timeout))
    return _GROUP_CLASS[0](backend_opts.store, backend_opts.group_rank, backend_opts.group_size, timeout,
                           backend_opts.group_id, opts)


def register():
    """Registers the ``"cce"`` backend with ``torch.distributed`` (idempotent). The package's
    ``torch.distributed.backends`` entry point calls it; so does importing ``cce.torch``."""
    _, dist = _torch()
    if BACKEND.upper() not in dist.Backend._plugins:
        dist.Backend.register_backend(BACKEND, _create, extended_api=True, devices=["cpu"])


try:  # importing cce.torch registers the backend when torch is there
    import torch as _probe  # noqa: F401
except ImportError:  # pragma: no cover - torch is an optional extra
    pass
else:
    register()
