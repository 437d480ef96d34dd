"""cce — a bit-exact model of the Trainium compute-DMA ("CCE") in-transfer reduce, from Python.

Arrays in are numpy arrays of numpy or ml_dtypes dtypes (anything array-like, e.g. JAX arrays or
torch CPU tensors, goes through ``numpy.asarray``); arrays out are new numpy arrays of the right
dtype. The work is done by the same Rust library calls as the ``cce`` command line, with the GIL
released: ``cce.reduce`` gives the bytes ``cce reduce`` writes for the same inputs.

Errors: :class:`CceError` (a ``ValueError``) for bad input, with the CLI's one-line message;
:class:`EngineFault` (``queue``, ``descriptor``, ``reason``) when the engine stops on a packet;
:class:`RankFailed` (``rank``, ``step``) when a rank of a collective fails.

Frameworks (optional extras, imported on their own): ``cce.torch`` — the ``"cce"``
``torch.distributed`` backend; ``cce.jax`` — ``psum`` / ``pmean`` and ``collectives()``;
``python -m cce.examples.drift`` — what bf16 in-transfer all-reduce does to a training run.
"""
import os

import numpy as np

from . import _cce, nki
from ._dtypes import as_array, cce_name, from_raw, numpy_dtype, raw
from ._errors import CceError, EngineFault, RankFailed

__all__ = [
    "CceError", "EngineFault", "RankFailed", "MAX_SOURCES", "convert", "value", "reduce", "nki",
    "encode", "decode", "tables", "build", "Ring", "run", "allreduce", "element", "gce_compress", "gce_decompress",
    "identify", "make_probe", "repro", "reveal",
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
    out = _cce.convert(raw(a), src, dst, str(rounding), _seed(rounding, seed, 64), bool(saturate), 1)
    return from_raw(out, dst, a.shape)


def _arrays_of_one_dtype(xs, what, empty):
    """``xs`` as arrays of one CCE dtype, and its cce name; CceError naming the odd one out."""
    arrays = [as_array(x, f"{what} {i}") for i, x in enumerate(xs)]
    if not arrays:
        raise CceError(empty)
    dt = cce_name(arrays[0].dtype)
    for i, a in enumerate(arrays[1:], 1):
        if cce_name(a.dtype) != dt:
            raise CceError(f"{what} {i} is {a.dtype.name}, {what} 0 is {arrays[0].dtype.name}: one dtype for all")
    return arrays, dt


def _uint(name, v, bits):
    """``v`` as an integer in 0..2**bits, else CceError naming ``name``."""
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise CceError(f"{name}: {v!r} is not an integer")
    if not 0 <= int(v) < (1 << bits):
        raise CceError(f"{name}: {v} does not fit {bits} bits (0..={(1 << bits) - 1})")
    return int(v)


def _seed(rounding, seed, bits):
    """The seed for the library: None with RNE and the default 0 (as the CLI without --seed)."""
    seed = _uint("seed", seed, bits)
    return None if rounding != "sr" and seed == 0 else seed


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
        out: the output dtype (default: the sources' dtype), or an array to write the result into
            (writable, C-contiguous, as many elements as a source; its dtype is the output dtype;
            it is returned). A refused call leaves it untouched; a run that faults may have
            written the packets before the faulting one.
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
    arrays, in_dt = _arrays_of_one_dtype(srcs, "source", "a reduce needs at least one source")
    target = out if isinstance(out, np.ndarray) else None
    out_dt = in_dt if out is None else cce_name(target.dtype if target is not None else out)
    if not isinstance(op, str):
        raise CceError(f"op {op!r}: expected 'add', 'fma', 'min' or 'max'")
    dests = _uint("dests", dests, 16)
    if dests == 0:
        raise CceError("a reduce needs at least one destination")
    if target is not None:
        if dests != 1:
            raise CceError("out= an array takes one destination (dests=1)")
        if not (target.flags.c_contiguous and target.flags.writeable) or target.size != arrays[0].size:
            raise CceError(f"out: a writable C-contiguous array of {arrays[0].size} elements "
                           f"(got {target.size}{'' if target.flags.c_contiguous else ', not contiguous'})")
        results = [target]
    else:
        # Fresh zeroed result arrays (numpy allocates large ones on huge pages); the engine
        # writes them in place, so a refused or faulted call hands nothing back.
        results = [np.zeros(arrays[0].shape, dtype=numpy_dtype(out_dt)) for _ in range(dests)]
    _cce.reduce(
        [raw(a) for a in arrays], [r.reshape(-1).view(np.uint8) for r in results], op, in_dt, cce_name(accum),
        out_dt, _scales(scales, len(arrays)), None if clamp is None else str(clamp),
        None if clamp_dtype is None else cce_name(clamp_dtype), str(rounding), _seed(rounding, seed, 32),
        _uint("arch", arch, 32), _uint("threads", threads, 16),
    )
    return results if dests > 1 else results[0]


# --- The bits -------------------------------------------------------------------------------


def _field_text(v):
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, (float, np.floating)):
        return repr(float(v))
    return str(v)


def encode(encoder, **fields):
    """The words ``encoder`` packs from ``fields`` (``cce encode``): e.g.
    ``cce.encode("fma-descriptor", a_sel="input", b_sel="scale", c_sel="stored", scale=0.5)``.

    Field names are the CLI's with ``_`` for ``-``; values are numbers, dtype names (``"bf16"``),
    operand names (``"input"``), or ``0x`` strings; an omitted field is 0. Returns the list of
    32-bit words (``cce encode --json``'s ``words``). Raises CceError for an unknown encoder or
    field, or a value that does not fit (the CLI's message).
    """
    pairs = [(k.replace("_", "-"), _field_text(v)) for k, v in fields.items()]
    return _cce.encode(str(encoder), pairs)["words"]


def decode(encoder, words_or_bytes):
    """Every field of the words (a list of ints, or the little-endian bytes) as ``encoder``
    reads them — the object ``cce decode --json`` prints: each field's value, bits, tag and note,
    ``exact``, the unexplained bits. ``encoder`` may also be ``"meta-ctrl"`` (every reading) or
    ``"cce-info"`` (the 140-byte struct, bytes only)."""
    if isinstance(words_or_bytes, (bytes, bytearray, memoryview)):
        return _cce.decode_hex(str(encoder), bytes(words_or_bytes).hex())
    if isinstance(words_or_bytes, int):
        words_or_bytes = [words_or_bytes]
    try:
        words = [_uint("word", w, 32) for w in words_or_bytes]
    except TypeError:
        raise CceError("decode: a list of 32-bit words, or bytes") from None
    return _cce.decode_words(str(encoder), words)


def value(dtype, value, *, saturate=False):
    """One value in ``dtype`` told in full — the object ``cce value --dtype DTYPE VALUE --json``
    prints (and the page's Dtypes view shows): its bits, exact decimal, class, fields,
    neighbours, ulp, the round-to-nearest-even of a decimal with its exact error, stochastic
    rounding's two outcomes, and its conversion to every dtype.

    Args:
        dtype: a cce dtype name (``"bf16"``, ``"fp8e4"``, ``"i32"`` …).
        value: a decimal (``"1.3"``, ``"inf"``, a Python number) or ``"0x…"`` bits.
        saturate: round and convert with saturation (±max finite instead of ±inf / NaN).

    Raises:
        CceError: an unknown dtype, a value that is not a number, bits wider than the dtype.
    """
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise CceError("value: a decimal string, a number or 0x bits")
    return _cce.value(str(dtype), value if isinstance(value, str) else repr(value), bool(saturate))


def tables():
    """The op, dtype and arch tables with their tags (``cce tables --json``)."""
    return _cce.tables()


# --- Rings ----------------------------------------------------------------------------------


class Ring:
    """A ring dump (the file ``cce build -o`` writes): ``to_bytes()``, ``save(path)``,
    ``Ring.load(path)``, ``disasm()`` (the ``cce disasm`` listing) and ``descriptors`` (the
    ``cce disasm --json`` object of its queue(s)). Made by :func:`build` or from dump bytes."""

    def __init__(self, data):
        self._ring = data if isinstance(data, _cce.Ring) else _cce.Ring(bytes(data))

    @classmethod
    def load(cls, path):
        """Reads a ring dump file (CceError if it is not one)."""
        with open(path, "rb") as f:
            return cls(f.read())

    def to_bytes(self):
        """The dump bytes."""
        return self._ring.to_bytes()

    def save(self, path):
        """Writes the dump to ``path``."""
        with open(path, "wb") as f:
            f.write(self.to_bytes())

    def disasm(self):
        """The listing ``cce disasm`` prints."""
        return self._ring.disasm()

    @property
    def descriptors(self):
        """Every queue's descriptors, packets and fault: ``cce disasm --json``'s object."""
        return self._ring.listing()


def build(*, op, elems, src, dst, dtype=None, accum="fp32", out=None, arch=3, scale=None, const=None,
          const_dtype=None, rounding="rne", seed=0, prio=0, cap=None, no_cce_info=False, selectors=None,
          ring_size=None, queue=0, **flags):
    """The rings of one reduce, as ``cce build`` builds them (keywords as its flags; ``dtype`` is
    ``--in``, which Python reserves — ``**{"in": "bf16"}`` works too). ``src`` / ``dst`` are
    address lists. Returns a :class:`Ring`. Raises CceError with the CLI's (the study's) message."""
    if "in" in flags:
        dtype = flags.pop("in")
    if flags:
        raise CceError(f"build: unknown keyword(s) {', '.join(sorted(flags))}")
    if dtype is None:
        raise CceError("build: the source dtype is required (dtype=, the CLI's --in)")
    in_dt = cce_name(dtype)
    src = [src] if isinstance(src, int) else list(src)
    dst = [dst] if isinstance(dst, int) else list(dst)
    ring = _cce.build(
        str(op), in_dt, cce_name(accum), in_dt if out is None else cce_name(out), _uint("elems", elems, 64),
        [_uint("src", a, 64) for a in src], [_uint("dst", a, 64) for a in dst], _uint("arch", arch, 32),
        _scales(scale, len(src)), None if const is None else str(const),
        None if const_dtype is None else cce_name(const_dtype), str(rounding), _seed(rounding, seed, 32),
        _uint("prio", prio, 32), None if cap is None else _uint("cap", cap, 32), bool(no_cce_info),
        None if selectors is None else str(selectors), None if ring_size is None else _uint("ring_size", ring_size, 32),
        _uint("queue", queue, 32),
    )
    return Ring(ring)


def run(ring, load=None, dump=(), *, threads=1):
    """Executes ``ring`` (a :class:`Ring`, or dump bytes) over memory loaded from arrays, as
    ``cce run`` does: ``load`` maps ``{address: array}``, ``dump`` lists ``(address, nbytes)``
    ranges to read after the run (a range no load covers is zeros first). Returns ``cce run
    --json``'s object — ``queues`` (state, semaphore, packets, tx/rx done, fault), counts,
    ``seconds`` — plus ``dumps``, one ``uint8`` array per range. A faulted queue shows in
    ``queues`` (its packet wrote nothing); bad input raises CceError."""
    r = ring if isinstance(ring, Ring) else Ring(ring)
    loads = [(_uint("load address", a, 64), raw(as_array(x, f"load 0x{a:x}"))) for a, x in (load or {}).items()]
    dumps = [(_uint("dump address", a, 64), _uint("dump length", n, 64)) for a, n in dump]
    return _cce.run(r._ring, loads, dumps, _uint("threads", threads, 16))


# --- Collectives ----------------------------------------------------------------------------


def _algo_and_file(algo):
    """``algo`` as the extension takes it: a built-in name as it is, or a path of a user's MSCCL
    XML schedule (a ``PathLike`` or a name ending in ``.xml``) read into ``("file", (path,
    text))``."""
    if isinstance(algo, os.PathLike) or (isinstance(algo, str) and algo.lower().endswith(".xml")):
        path = os.fspath(algo)
        try:
            with open(path, encoding="utf-8") as f:
                return "file", (path, f.read())
        except (OSError, UnicodeDecodeError) as e:
            raise CceError(f"algo: {path}: {e}") from None
    return algo, None


def allreduce(arrays, *, algo="ring", op="add", accum=None, rounding="rne", seed=0, arch=3, compress=None,
              ranks_per_node=None, check="exact", nodes=None, intra=None, inter=None, collective=None, channels=None):
    """All-reduces one array per rank (2–4096 ranks, one dtype and element count) over simulated
    ranks, each with its own engine, lowered to CCE packets — as ``cce allreduce --input-dir``.

    ``algo``: ring, ring-2r2w, kangaring, mesh, rdh (a power-of-two rank count) or auto (the
    least model time; the report then holds ``candidates``) — or a user's MSCCL XML schedule:
    a path ending in ``.xml`` (a ``str`` or ``os.PathLike``), as ``cce allreduce --algo-file``
    (its ``ngpus`` must be the number of arrays; its ``coll`` decides the collective: a
    reduce-scatter returns each rank's share, flat; the report adds ``algorithm_file``,
    ``algorithm_name``, ``coll``, ``proto``, ``nchannels``, ``nchunksperloop``, ``in_place``,
    ``algorithm_steps``; docs/MODEL.md X1–X13); ``op``: add, min, max or avg (FMA
    with scale fl32(1/R); not for a file); ``accum``: default fp32 for floats, the dtype for integers. Returns
    ``(outputs, report)``: every rank's result array and ``cce allreduce --json``'s object
    (``algo``, ``ranks_identical``, ``max_ulp_err``, ``wrong``, counts, times, ``per_rank``,
    ``per_link``). ``compress="gce"`` compresses what crosses a node boundary of the ring
    (``algo="ring"``; bf16, float16, float32; nodes of ``ranks_per_node`` ranks, default two
    nodes), as ``cce allreduce --compress gce``: the report adds ``hop_bytes``,
    ``hop_bytes_uncompressed`` and ``hop_bytes_ratio`` (docs/MODEL.md G6–G9, all MODEL).
    ``check``: ``"exact"`` compares every output element with the exact reduction (streaming,
    constant memory); ``"none"`` skips it — the report's error keys (``ranks_identical``,
    ``max_abs_err``, ``max_rel_err``, ``max_ulp_err``, ``mean_ulp_err``, ``wrong``) are then
    ``None`` and ``check`` says ``"none"``. Raises CceError for bad input (a schedule the checks refuse included: the message names
    rank, thread block, step and line), RankFailed when a rank fails. The arrays are read in place
    while the call runs, without the GIL (a C-contiguous array is never copied): another thread
    must not write them meanwhile.

    A cluster (as ``cce allreduce --nodes``): ``nodes`` X nodes of ``ranks_per_node`` Y ranks
    (the instance's when not given; X·Y must be the number of arrays), and ``algo="hier"`` with
    ``intra`` (ring, ring-2r2w, kangaring, mesh, rdh) inside each node and ``inter`` (ring, mesh,
    single-step-mesh, rdh) between nodes (docs/MODEL.md H1–H6). ``collective``: allreduce (the
    default), reduce-scatter (each rank's output is its own chunk) or all-gather.

    ``channels`` (as ``cce allreduce --channels``): C ring cycles of the flat ring, 1–32, with
    ``algo`` ring or ring-2r2w (or auto, whose ring candidate then runs them): every chunk is cut
    into C pieces and piece k is reduced and gathered round channel k's ring, which visits every
    node of ``ranks_per_node`` ranks from local rank ⌊kY/C⌋ on — so over several nodes the order
    of a sum depends on C, and stochastic rounding's bits do everywhere (its pieces take other
    buffers; docs/MODEL.md C29). Not with a hierarchy, a schedule file or ``compress``; a
    refusal raises CceError naming ``channels``. ``None``: one channel (auto: its own choice)."""
    ranks, dt = _arrays_of_one_dtype(arrays, "rank", "allreduce: at least two ranks' arrays")
    algo, algo_file = _algo_and_file(algo)
    topology = _topology(nodes, intra, inter, collective)
    outs, report = _cce.allreduce(
        [raw(a) for a in ranks], str(algo), str(op), dt, None if accum is None else cce_name(accum), str(rounding),
        _uint("seed", seed, 64), _uint("arch", arch, 32), None if compress is None else str(compress),
        None if ranks_per_node is None else _uint("ranks_per_node", ranks_per_node, 64), algo_file, str(check),
        topology, channels=None if channels is None else _uint("channels", channels, 64),
    )
    shape = ranks[0].shape
    return [from_raw(o, dt, shape if len(o) == ranks[0].nbytes else None) for o in outs], report


def element(arrays, index, *, algo="ring", op="add", accum=None, rounding="rne", seed=0, arch=3, compress=None,
            ranks_per_node=None, rank=None, nodes=None, intra=None, inter=None, collective=None, channels=None):
    """How element ``index`` of an all-reduce's output was made — as ``cce allreduce --element``,
    over one array per rank (the arrays and keywords of ``allreduce``). Computed from the
    schedule for that element alone: nothing runs, only the elements it needs are read.

    Returns ``cce allreduce --element --json``'s ``element`` object as a dict: ``index``,
    ``rank`` (the rank whose output is shown: ``rank``, default 0, or for a reduce-scatter the
    rank that holds the element), ``chunk``, ``expr`` (the order: ranks, ``a+b`` combines in the
    accumulate dtype, each pair of parentheses rounds once to the buffer dtype, ``g(…)`` a GCE
    hop), ``leaves`` (the ranks in the order they enter), ``steps`` (each ``rank``, ``step``,
    ``kind``, ``packet``, ``operands`` in accumulation order, ``accumulate``, ``exact``,
    ``rounded`` {``bits``, ``value``}, ``rounding``, ``reference``, ``error``, ``gce``),
    ``output``, ``reference`` and ``error`` (docs/forensics.md). Raises CceError for bad input:
    an element or rank out of range, arrays of different lengths. ``nodes``, ``intra``, ``inter``
    and ``collective`` as for ``allreduce`` (a hierarchy's element); ``channels`` too (a piece of
    a chunk of the flat ring of that many channels, docs/MODEL.md C29)."""
    ranks, dt = _arrays_of_one_dtype(arrays, "rank", "element: at least two ranks' arrays")
    algo, algo_file = _algo_and_file(algo)
    return _cce.element(
        [raw(a) for a in ranks], str(algo), str(op), dt, None if accum is None else cce_name(accum), str(rounding),
        _uint("seed", seed, 64), _uint("arch", arch, 32), None if compress is None else str(compress),
        None if ranks_per_node is None else _uint("ranks_per_node", ranks_per_node, 64), algo_file,
        _uint("index", index, 64), None if rank is None else _uint("rank", rank, 64),
        _topology(nodes, intra, inter, collective), channels=None if channels is None else _uint("channels", channels, 64),
    )


def _topology(nodes, intra, inter, collective):
    """The topology keywords of ``allreduce`` and ``element``, as the extension takes them."""
    if nodes is None and intra is None and inter is None and collective is None:
        return None
    return (None if nodes is None else _uint("nodes", nodes, 64), None if intra is None else str(intra),
            None if inter is None else str(inter), None if collective is None else str(collective))


# --- Which order made an output (cce identify) -----------------------------------------


def _algo_files(files):
    out = []
    for f in files:
        path = os.fspath(f)
        try:
            with open(path, encoding="utf-8") as fh:
                out.append((path, fh.read()))
        except (OSError, UnicodeDecodeError) as e:
            raise CceError(f"algo_files: {path}: {e}") from None
    return out


def identify(inputs, output, *, dtype=None, accum=None, rounding="rne", observed_rank=0, algo_files=(), arch=3,
             threads=None, ranks_per_node=None, ranks=None, channels=None):
    """Which reduction order made ``output`` from ``inputs`` (one array per rank, 2–64 ranks,
    one float dtype and length) — as ``cce identify --input-dir … --observed … --json``.

    ``output``: one array (rank ``observed_rank``'s output), a list of every rank's outputs
    (ranks 0, 1, …), or a dict {rank: array}. ``dtype``: the buffer dtype (default: the
    arrays'; give it to read raw ``uint16`` arrays as ``"bf16"``). ``accum``: the accumulate
    dtype (default: both fp32 and the buffer dtype are candidates). ``rounding``: ``"rne"``
    (candidates match bit for bit) or ``"sr"`` (a candidate is ``consistent`` with an element
    when some choice of round-down / round-up at every rounding gives its bits). ``algo_files``:
    paths of users' MSCCL XML all-reduce schedules, candidates beside cce's algorithms.
    ``ranks_per_node``: nodes of that many ranks — every hierarchical pair that can run them
    (``hier(intra/inter)``) joins the candidates (as ``cce identify --ranks-per-node``).
    ``ranks``: the rank count the inputs must have (as ``cce identify --ranks``; refused when
    ``len(inputs)`` differs). ``channels``: the flat ring of that many channels (1–32, as
    ``cce identify --channels``) joins the candidates as ``ring(C channels)``, its rings turned
    in nodes of ``ranks_per_node`` ranks (the instance's when not given), as ``cce.allreduce(…,
    channels=C)`` runs it (docs/MODEL.md C29).

    Returns the JSON object as a dict: ``verdict`` (``explained``, ``fragmented`` or
    ``unexplained``), ``verdict_reason``, ``answer`` (the best candidate only when
    ``explained``, else None), ``candidates`` [{``name``, ``algo``, ``accum``, ``aliases``,
    ``expr``, ``leaves``, ``matched``, ``total``, ``consistent``, …}] best first, ``best`` (the
    top of the ranking, not an answer unless ``explained``), ``map`` [{``first``, ``last``,
    ``expr``, ``leaves``, ``candidate``, ``suspects``, …}], ``map_segments``, ``unexplained`` and
    ``suspects`` {``count``, ``first``}, ``separating``, ``nonfinite``, … (docs/identify.md).
    Raises CceError for bad input (arrays of different lengths, an output of the wrong length,
    an integer dtype, a rank out of range) with the CLI's message."""
    arrays = [as_array(x, f"input {i}") for i, x in enumerate(inputs)]
    if len(arrays) < 2:
        raise CceError("identify: at least two ranks' inputs")
    dt = cce_name(dtype) if dtype is not None else cce_name(arrays[0].dtype)
    if isinstance(output, dict):
        observed = [(_uint("observed rank", r, 32), as_array(a, f"output {r}")) for r, a in output.items()]
    elif isinstance(output, (list, tuple)):
        observed = [(r, as_array(a, f"output {r}")) for r, a in enumerate(output)]
    else:
        observed = [(_uint("observed_rank", observed_rank, 32), as_array(output, "output"))]
    return _cce.identify(
        [raw(a) for a in arrays], [(r, raw(a)) for r, a in observed], dt,
        None if accum is None else cce_name(accum), str(rounding), _algo_files(algo_files),
        _uint("arch", arch, 32), None if threads is None else _uint("threads", threads, 16),
        None if ranks_per_node is None else _uint("ranks_per_node", ranks_per_node, 64),
        None if ranks is None else _uint("ranks", ranks, 64),
        channels=None if channels is None else _uint("channels", channels, 64),
    )


def make_probe(ranks, elems, dtype="bf16", directory=None):
    """Probe inputs for ``ranks`` ranks of ``elems`` elements: every pair of the orders
    ``identify`` knows gives different bits in every chunk of 64 elements — as ``cce identify
    --make-probe``. Returns ``(arrays, info)``: one array per rank and {``ranks``, ``elems``,
    ``dtype``, ``period``, ``orders``}; with ``directory``, also writes ``rank{r}.bin`` and the
    README there. Raises CceError for a dtype the probe cannot use or a size over the budget."""
    dt = cce_name(dtype)
    outs, info, readme = _cce.make_probe(_uint("ranks", ranks, 64), _uint("elems", elems, 64), dt)
    arrays = [from_raw(o, dt) for o in outs]
    if directory is not None:
        os.makedirs(directory, exist_ok=True)
        for r, a in enumerate(arrays):
            a.tofile(os.path.join(directory, f"rank{r}.bin"))
        with open(os.path.join(directory, "README.md"), "w", encoding="utf-8") as f:
            f.write(readme)
    return arrays, info
# --- The tree of any all-reduce (cce reveal) ----------------------------------------------


def reveal(fn, ranks, elems, dtype):
    """The tree that sums every element of the all-reduce ``fn`` — as ``cce reveal --json``.

    ``fn(inputs) -> outputs``: ``inputs`` is a list of ``ranks`` arrays of ``elems`` elements of
    ``dtype`` (``"fp32"``, ``"bf16"``, ``"fp16"`` or the numpy / ml_dtypes dtypes), one per rank;
    it returns every rank's result of summing them (a list of ``ranks`` arrays of the same shape;
    anything ``numpy.asarray`` takes). It is called as often as the reveal needs (3 times when
    every rank's output is the same), on masked inputs and then on random ones.

    Returns the JSON object as a dict: ``revealed``, ``reason`` (when not revealed), ``runs``,
    ``ranks``, ``elems``, ``dtype``, ``classes`` [{``first``, ``last``, ``rank`` (only where
    the ranks' outputs differ), ``expr``, ``leaves``, ``accum``, ``equals``}] (docs/reveal.md).
    ``revealed`` is false, with the reason and no classes, when no tree per element explains the
    outputs (an order that depends on the values, stochastic rounding, a class shorter than
    R(R-1)/2 elements whose order is on no list). Raises CceError for bad input (a dtype or rank count the masks cannot
    use, outputs of the wrong number or shape); an exception ``fn`` raises is raised as it is."""
    dt = cce_name(dtype)
    n_ranks, n_elems = _uint("ranks", ranks, 64), _uint("elems", elems, 64)
    np_dt = numpy_dtype(dt)

    def run(k, inputs):
        arrays = [from_raw(b, dt) for b in inputs]
        outs = fn(arrays)
        if not isinstance(outs, (list, tuple)) or len(outs) != n_ranks:
            got = len(outs) if isinstance(outs, (list, tuple)) else type(outs).__name__
            raise CceError(f"reveal: run {k}: fn returned {got} outputs; it returns one array per rank ({n_ranks})")
        flat = []
        for r, o in enumerate(outs):
            a = np.asarray(o)
            if a.size != n_elems:
                raise CceError(f"reveal: run {k}: rank {r}'s output has {a.size} elements, the inputs {n_elems}")
            flat.append(raw(np.ascontiguousarray(a.reshape(-1).astype(np_dt, copy=False))))
        return flat

    return _cce.reveal(run, n_ranks, n_elems, dt)


def _list(name, v, item):
    """A keyword's value as a list of ``item(x)``: a list or tuple, or one value alone."""
    values = list(v) if isinstance(v, (list, tuple)) else [v]
    return [item(name, x) for x in values]


def _text(name, x):
    if not isinstance(x, (str, int, np.integer)) or isinstance(x, bool):
        raise CceError(f"{name}: {x!r} is not a name or a number")
    return str(x)


def repro(*, ranks, algo, elems=None, dtype=None, accum=None, rounding="rne", seed=1, arch=3, compress="none",
          ranks_per_node=None, channels=1, op="add", input_seed=1, inputs=None, all_pairs=False):
    """Why are my bits different? Runs every configuration of the lists once on the same inputs,
    as ``cce repro --json``, and returns its object as a dict: ``configs`` (each with its
    ``class``, ``ranks_agree``, errors), ``classes`` (lists of config indices whose outputs are
    bit-identical), ``pairs`` (each class against the first of its inputs, or with
    ``all_pairs=True`` every pair: ``a``, ``b``, ``differ``, ``first`` = {``element``, ``rank``,
    ``a``, ``b``, ``ulps``}, ``separated_by``, ``words``), ``invariant`` ({axis: [algorithms]}),
    ``verdicts``, ``skipped``, ``env``.

    Every list keyword takes a list or one value, mirroring the CLI's flags: ``ranks``,
    ``algo`` (names, ``"auto"``, or paths ending in ``.xml``: users' MSCCL schedules), ``elems``
    (numbers or ``"MIN:MAX"`` doubling sweeps; default: the inputs' length), ``dtype`` (default:
    the inputs' dtype), ``accum`` (default: fp32 for floats), ``rounding``, ``seed`` (stochastic
    rounding's, 32 bits), ``arch``, ``compress``, ``ranks_per_node``, ``channels`` (the flat
    ring's, 1–32; more than one with ring, ring-2r2w or auto only). ``inputs``: one array per
    rank of one dtype and length (read in place; each size uses the first N elements); without
    them, inputs are generated from ``input_seed`` (rank r's as ``cce gen --seed input_seed +
    r``). Raises CceError (a ValueError) for bad input: an empty list, an unknown name, an empty
    sweep, arrays of different lengths, a space of more than 1024 configurations, a
    configuration or memory budget the model refuses — before anything runs."""
    raw_inputs = None
    if inputs is not None:
        arrays, dt = _arrays_of_one_dtype(inputs, "rank", "repro: inputs=[] holds no rank's array")
        raw_inputs = [raw(np.ascontiguousarray(a).reshape(-1)) for a in arrays]
        if dtype is None:
            dtype = dt
        if elems is None:
            elems = [min(a.size for a in arrays)]
    if dtype is None:
        raise CceError("repro: dtype= is needed without inputs=")
    if elems is None:
        raise CceError("repro: elems= is needed without inputs=")
    algos, files = [], []
    for a in _list("algo", algo, lambda n, x: x):
        if isinstance(a, os.PathLike) or (isinstance(a, str) and a.lower().endswith(".xml")):
            path = os.fspath(a)
            try:
                with open(path, encoding="utf-8") as f:
                    files.append((path, f.read()))
            except (OSError, UnicodeDecodeError) as e:
                raise CceError(f"algo: {path}: {e}") from None
        else:
            algos.append(_text("algo", a))
    none = lambda v: [] if v is None else v  # noqa: E731
    lists = {
        "ranks": _list("ranks", ranks, lambda n, x: _uint(n, x, 64)),
        "algo": algos,
        "algo_files": files,
        "elems": _list("elems", elems, _text),
        "dtype": _list("dtype", dtype, lambda n, x: cce_name(x)),
        "accum": _list("accum", none(accum), lambda n, x: cce_name(x)),
        "rounding": _list("rounding", rounding, _text),
        "seed": _list("seed", seed, lambda n, x: _uint(n, x, 64)),
        "arch": _list("arch", arch, lambda n, x: _uint(n, x, 32)),
        "compress": _list("compress", compress, _text),
        "ranks_per_node": _list("ranks_per_node", none(ranks_per_node), lambda n, x: _uint(n, x, 64)),
        "channels": _list("channels", channels, lambda n, x: _uint(n, x, 64)),
    }
    return _cce.repro(lists, str(op), _uint("input_seed", input_seed, 64), bool(all_pairs), raw_inputs)


# --- GCE gradient compression (the project's MODEL codec) ----------------------------------


def gce_compress(x):
    """Compresses a bf16, float16 or float32 array with GCE gradient packets on the engine —
    the project's MODEL codec (docs/MODEL.md "GCE"): block-scaled fp8 e5m2, one E8M0 scale per
    32 elements, one header per packet of 2048 elements. Returns ``(payload, headers)``, two
    ``uint8`` arrays: one fp8 byte per element, and every packet's header with its scale table.
    Raises CceError for another dtype or an empty array."""
    a = np.ascontiguousarray(x).reshape(-1)
    payload, headers = _cce.gce_compress(raw(a), cce_name(a.dtype))
    return payload, headers


def gce_decompress(payload, headers, dtype="bfloat16"):
    """Expands ``gce_compress``'s ``(payload, headers)`` to an array of ``dtype`` (bf16,
    float16 or float32): each value is its fp8 code times its block's power of two, rounded to
    nearest even. A header that does not describe the payload raises EngineFault ("Failed to
    build decompression header")."""
    out = cce_name(dtype)
    p = np.ascontiguousarray(payload, dtype=np.uint8).reshape(-1)
    h = np.ascontiguousarray(headers, dtype=np.uint8).reshape(-1)
    return from_raw(_cce.gce_decompress(p, h, out), out)
