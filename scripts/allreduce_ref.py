#!/usr/bin/env python3
"""Independent sequential reference for a bf16 (or fp16 / fp32) ADD all-reduce.

Follows the reduction order documented in crates/cce-collectives/src/collective/mod.rs, with numpy
+ ml_dtypes: every step accumulates its sources in order in fp32 and rounds once to the buffer
dtype. Indices mod R; chunk c = elements [c*N/R, (c+1)*N/R).
  ring, ring-2r2w: acc = IN_c; then for k = 1..R-1: acc = round(f32(acc) + f32(IN_{c+k}))
  kangaring:       acc = round(IN_c + IN_{c+1} + IN_{c+2}); then two more inputs per step;
                   with R even the last step adds one (R = 2: one step of two)
  mesh:            round(IN_0 + IN_1 + ... + IN_{R-1}) in fp32, in rank order
  rdh (R = 2^L):   v_x = IN_x; for d = 1, 2, 4, ..., R/2: for every x with bit d clear,
                   v_x = v_(x+d) = round(f32(v_x) + f32(v_(x+d))); the result is v_0
                   (the same tree for every chunk)
  ring with --gce K (docs/MODEL.md G6, G7; nodes of K consecutive ranks): as ring, but a value
                   sent from rank x to rank x+1 in another node is quantized on the way,
                   v = dt(decode(compress(f32(v)))) with the GCE codec of gce_ref.py (blocks of
                   32 from the chunk's start), and the final chunk is quantized once more by its
                   owner (rank c-1) before the all-gather copies it to every rank
Compares every DIR_OUT/rank{r}.bin with the result; exit 0 when all match.
Usage: allreduce_ref.py ALGO RANKS DTYPE DIR_IN DIR_OUT [--gce RANKS_PER_NODE]

A user schedule in MSCCL XML (docs/MODEL.md X1-X13): the file is parsed and checked here, its
thread blocks and links simulated operationally (see msccl_main), every value computed by X9.
Usage: allreduce_ref.py --xml FILE.xml DTYPE DIR_IN DIR_OUT [--op add|min|max] [--rounding rne|sr]
                        [--seed S]
  DTYPE bf16 | fp16 | fp32 | i32. DIR_IN/rank{r}.bin: the rank's whole buffer of `elems` elements
  (all-gather: its share is elements [r*elems/R, (r+1)*elems/R)). DIR_OUT/rank{r}.bin: the rank's
  output (all-reduce and all-gather `elems` elements, reduce-scatter elems/R). Exit 0 when every
  rank matches, 1 at the first difference, 2 when the file is refused (it names the rule).
"""
import collections
import os
import re
import sys

try:
    import ml_dtypes
    import numpy as np
except ImportError:  # pragma: no cover
    sys.exit("allreduce_ref.py needs numpy and ml_dtypes: run scripts/test (it installs them into .venv), or pip install -r scripts/requirements.txt")

DT = {"bf16": ml_dtypes.bfloat16, "fp16": np.float16, "fp32": np.float32}


def quantize(v: np.ndarray, dt) -> np.ndarray:
    """One GCE round trip of a chunk's values, back in the buffer dtype (RNE)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import gce_ref

    scales, payload = gce_ref.compress(v.astype(np.float32), 32)
    return gce_ref.decode(scales, payload, 32).view(np.float32).astype(dt)


def main_algo() -> int:
    algo, r, dt, din, dout = sys.argv[1], int(sys.argv[2]), DT[sys.argv[3]], sys.argv[4], sys.argv[5]
    per_node = int(sys.argv[7]) if len(sys.argv) > 7 and sys.argv[6] == "--gce" else None
    if per_node is not None and algo != "ring":
        sys.exit("--gce follows the ring only")
    node = lambda x: (x % r) // per_node
    ins = [np.fromfile(f"{din}/rank{q}.bin", dtype=dt) for q in range(r)]
    n = len(ins[0])
    out = np.zeros(n, dtype=dt)
    f32 = lambda a: a.astype(np.float32)
    for c in range(r):
        a, b = c * n // r, (c + 1) * n // r
        chunk = [x[a:b] for x in ins]
        if algo in ("ring", "ring-2r2w"):
            acc = chunk[c]
            for k in range(1, r):
                if per_node is not None and node(c + k - 1) != node(c + k):
                    acc = quantize(acc, dt)
                acc = (f32(acc) + f32(chunk[(c + k) % r])).astype(dt)
            if per_node is not None:
                acc = quantize(acc, dt)
        elif algo == "kangaring":
            if r == 2:
                acc = (f32(chunk[c]) + f32(chunk[(c + 1) % r])).astype(dt)
            else:
                acc = (f32(chunk[c]) + f32(chunk[(c + 1) % r]) + f32(chunk[(c + 2) % r])).astype(dt)
                k = 3
                while k + 1 < r:
                    acc = (f32(acc) + f32(chunk[(c + k) % r]) + f32(chunk[(c + k + 1) % r])).astype(dt)
                    k += 2
                if k < r:
                    acc = (f32(acc) + f32(chunk[(c + k) % r])).astype(dt)
        elif algo == "rdh":
            if r & (r - 1):
                sys.exit(f"rdh needs a power-of-two rank count, not {r}")
            v = list(chunk)
            d = 1
            while d < r:
                for x in range(r):
                    if not x & d:
                        v[x] = v[x + d] = (f32(v[x]) + f32(v[x + d])).astype(dt)
                d *= 2
            acc = v[0]
        elif algo == "mesh":
            s = f32(chunk[0])
            for q in range(1, r):
                s = s + f32(chunk[q])
            acc = s.astype(dt)
        else:
            sys.exit(f"unknown algo {algo}")
        out[a:b] = acc
    want = out.tobytes()
    for q in range(r):
        got = open(f"{dout}/rank{q}.bin", "rb").read()
        if got != want:
            g = np.frombuffer(got, dtype=dt)
            bad = np.nonzero(g.view(np.uint8 if g.itemsize == 1 else f"u{g.itemsize}") != out.view(np.uint8 if g.itemsize == 1 else f"u{g.itemsize}"))[0]
            print(f"rank {q}: {len(bad)} of {n} elements differ; first at {bad[0]}: got {g[bad[0]]!r}, expected {out[bad[0]]!r}")
            return 1
    print(f"ok: {algo}, {r} ranks, {n} elements, every rank equals the sequential reference")
    return 0


# ---------------------------------------------------------------------------------------------
# User schedules in MSCCL XML (--xml). Written from docs/MODEL.md X1-X13 only; shares nothing
# with the Rust. The file is read and checked (X1-X3, X5, X6), then every thread block runs as a
# sequential program over unbounded FIFO links; the run also checks X7 (races through the
# happens-before relation it builds, reads of unwritten chunks, and on chunk symbols whether the
# schedule computes its collective).

XML_DT = {"bf16": ml_dtypes.bfloat16, "fp16": np.float16, "fp32": np.float32, "i32": np.int32}
STEP_TYPES = ("s", "r", "rcs", "rrs", "rrc", "rrcs", "re", "cpy", "nop")
SENDING = ("s", "rcs", "rrs", "rrcs")
RECEIVING = ("r", "rcs", "rrs", "rrc", "rrcs")
USES_SRC = ("s", "rrs", "rrc", "rrcs", "cpy", "re")
USES_DST = ("r", "rcs", "rrc", "rrcs", "cpy", "re")
COLLS = ("allreduce", "reducescatter", "allgather")
MAX_FUSED = 31  # X5: 31 sources plus the destination, one 32-source CCE packet
MAX_TRANSMISSIONS = 32768


class Refused(Exception):
    """The file breaks a rule of X1-X7 (cce refuses it too) or the run cannot finish."""


class XStep:
    pass


class XTb:
    pass


class XGpu:
    pass


class XAlgo:
    pass


class Tr:
    """One transmission (X5): a step, or a fused chain of `re` steps (srcoffs has one entry per
    member)."""

    def where(self):
        return f"rank {self.rank} tb {self.tb} step {self.last} (line {self.line})"


def _int(node, key, default=None):
    a = node["attrs"]
    if key not in a:
        if default is not None:
            return default
        raise Refused(f"line {node['line']}: <{node['name']}> has no attribute {key}")
    v = a[key]
    if not re.fullmatch(r"-?[0-9]+", v):
        raise Refused(f"line {node['line']}: <{node['name']}> {key}=\"{v}\" is not a decimal integer")
    return int(v)


def _str(node, key):
    if key not in node["attrs"]:
        raise Refused(f"line {node['line']}: <{node['name']}> has no attribute {key}")
    return node["attrs"][key]


def read_tree(data: bytes):
    """The element tree as nested dicts with each element's line (expat, as xml.etree uses)."""
    import xml.parsers.expat

    p = xml.parsers.expat.ParserCreate()
    stack, top = [], []

    def start(name, attrs):
        node = {"name": name, "attrs": attrs, "line": p.CurrentLineNumber, "kids": []}
        (stack[-1]["kids"] if stack else top).append(node)
        stack.append(node)

    p.StartElementHandler = start
    p.EndElementHandler = lambda name: stack.pop()
    try:
        p.Parse(data, True)
    except xml.parsers.expat.ExpatError as e:
        raise Refused(f"not well-formed XML: {e}") from None
    return top[0]


def parse_msccl(data: bytes) -> XAlgo:
    """X1 (what is read, strictly) and X2 (shape rules)."""
    root = read_tree(data)
    if root["name"] != "algo":
        raise Refused(f"line {root['line']}: the root element is <{root['name']}>, not <algo>")
    a = XAlgo()
    a.name = _str(root, "name")
    a.proto = _str(root, "proto")
    a.nchannels = _int(root, "nchannels")
    a.nchunks = _int(root, "nchunksperloop")
    a.ngpus = _int(root, "ngpus")
    a.coll = _str(root, "coll")
    a.inplace = _int(root, "inplace")
    a.outofplace = _int(root, "outofplace", 1 - a.inplace)
    a.min_bytes = _int(root, "minBytes", 0)
    a.max_bytes = _int(root, "maxBytes", 0)
    if a.proto not in ("Simple", "LL", "LL128"):
        raise Refused(f"line {root['line']}: proto {a.proto!r} is not Simple, LL or LL128")
    if a.coll not in COLLS:
        raise Refused(f"line {root['line']}: coll {a.coll!r}: cce runs allreduce, reducescatter, allgather")
    if not 2 <= a.ngpus <= 64:
        raise Refused(f"line {root['line']}: ngpus {a.ngpus} is not in 2..=64")
    if not 1 <= a.nchannels <= 32:
        raise Refused(f"line {root['line']}: nchannels {a.nchannels} is not in 1..=32")
    if a.nchunks < 1:
        raise Refused(f"line {root['line']}: nchunksperloop {a.nchunks} < 1")
    gpus = {}
    for gn in root["kids"]:
        if gn["name"] != "gpu":
            raise Refused(f"line {gn['line']}: <{gn['name']}> inside <algo> (only <gpu>)")
        g = XGpu()
        g.id, g.line = _int(gn, "id"), gn["line"]
        g.chunks = {"i": _int(gn, "i_chunks"), "o": _int(gn, "o_chunks"), "s": _int(gn, "s_chunks")}
        if not 0 <= g.id < a.ngpus or g.id in gpus:
            raise Refused(f"line {gn['line']}: gpu id {g.id} is out of 0..{a.ngpus} or repeated")
        if min(g.chunks.values()) < 0:
            raise Refused(f"line {gn['line']}: gpu {g.id} has a negative chunk count")
        tbs = {}
        for tn in gn["kids"]:
            if tn["name"] != "tb":
                raise Refused(f"line {tn['line']}: <{tn['name']}> inside <gpu> (only <tb>)")
            t = XTb()
            t.id, t.send, t.recv, t.chan = (_int(tn, k) for k in ("id", "send", "recv", "chan"))
            t.line = tn["line"]
            if t.id in tbs:
                raise Refused(f"line {tn['line']}: rank {g.id}: tb id {t.id} repeated")
            for k, peer in (("send", t.send), ("recv", t.recv)):
                if peer != -1 and (not 0 <= peer < a.ngpus or peer == g.id):
                    raise Refused(f"line {tn['line']}: rank {g.id} tb {t.id}: {k} {peer} is not -1 or another rank")
            if not 0 <= t.chan < a.nchannels:
                raise Refused(f"line {tn['line']}: rank {g.id} tb {t.id}: chan {t.chan} is not below nchannels {a.nchannels}")
            t.steps = []
            for pos, sn in enumerate(tn["kids"]):
                if sn["name"] != "step":
                    raise Refused(f"line {sn['line']}: <{sn['name']}> inside <tb> (only <step>)")
                st = XStep()
                st.line = sn["line"]
                st.s = _int(sn, "s")
                st.type = _str(sn, "type")
                st.srcbuf, st.dstbuf = _str(sn, "srcbuf"), _str(sn, "dstbuf")
                st.srcoff, st.dstoff, st.cnt = _int(sn, "srcoff"), _int(sn, "dstoff"), _int(sn, "cnt")
                st.depid, st.deps, st.hasdep = _int(sn, "depid"), _int(sn, "deps"), _int(sn, "hasdep")
                here = f"line {st.line}: rank {g.id} tb {t.id} step {pos}"
                if st.type not in STEP_TYPES:
                    raise Refused(f"{here}: unknown type {st.type!r}")
                for b in (st.srcbuf, st.dstbuf):
                    if b not in ("i", "o", "s"):
                        raise Refused(f"{here}: unknown buffer {b!r}")
                if st.s != pos:
                    raise Refused(f"{here}: s=\"{st.s}\" is not the step's position {pos}")
                if st.hasdep not in (0, 1):
                    raise Refused(f"{here}: hasdep {st.hasdep} is not 0 or 1")
                if st.type == "nop":
                    if st.depid < 0:
                        raise Refused(f"{here}: a nop without a dependency (depid {st.depid})")
                else:
                    if not 1 <= st.cnt <= 71:
                        raise Refused(f"{here}: cnt {st.cnt} is not in 1..=71")
                    if st.type in SENDING and t.send < 0:
                        raise Refused(f"{here}: {st.type} sends but the tb has no send peer")
                    if st.type in RECEIVING and t.recv < 0:
                        raise Refused(f"{here}: {st.type} receives but the tb has no recv peer")
                    for used, b, off, what in ((USES_SRC, st.srcbuf, st.srcoff, "src"),
                                               (USES_DST, st.dstbuf, st.dstoff, "dst")):
                        if st.type in used and not (0 <= off and off + st.cnt <= g.chunks[b]):
                            raise Refused(f"{here}: {what} chunks [{off}, {off + st.cnt}) are not inside "
                                          f"{b}'s {g.chunks[b]} chunks")
                t.steps.append(st)
            tbs[t.id] = t
        if sorted(tbs) != list(range(len(tbs))):
            raise Refused(f"line {gn['line']}: rank {g.id}: tb ids {sorted(tbs)} are not dense from 0")
        g.tbs = [tbs[i] for i in range(len(tbs))]
        for k in ("send", "recv"):
            seen = set()
            for t in g.tbs:
                key = (getattr(t, k), t.chan)
                if key[0] >= 0 and key in seen:
                    raise Refused(f"line {t.line}: rank {g.id}: a second tb with {k} {key[0]} on channel {t.chan}")
                seen.add(key)
        gpus[g.id] = g
    if sorted(gpus) != list(range(a.ngpus)):
        raise Refused(f"the file has gpus {sorted(gpus)}, not 0..{a.ngpus - 1}")
    a.gpus = [gpus[i] for i in range(a.ngpus)]
    return a


def transmissions(a: XAlgo):
    """X5: each rank's thread blocks as lists of transmissions; then X6's waits and links."""
    count = 0
    a.trs = []  # a.trs[q][t] = [Tr]
    for g in a.gpus:
        per_rank = []
        for t in g.tbs:
            out, pending, open_re = [], [], None
            for st in t.steps:
                where = f"rank {g.id} tb {t.id} step {st.s} (line {st.line})"
                if st.type == "nop":
                    pending.append((st.depid, st.deps))
                    continue
                if (st.type == "re" and open_re is not None and st.depid == -1
                        and (st.dstbuf, st.dstoff, st.srcbuf) == (open_re.dstbuf, open_re.dstoff, open_re.srcbuf)
                        and open_re.hasdep == 0 and len(open_re.srcoffs) < MAX_FUSED):
                    if st.cnt != open_re.cnt:
                        raise Refused(f"{where}: a re continuing the reduction of step {open_re.first} "
                                      f"has cnt {st.cnt}, the reduction {open_re.cnt}")
                    open_re.srcoffs.append(st.srcoff)
                    open_re.hasdep, open_re.last, open_re.line = st.hasdep, st.s, st.line
                    continue
                if pending and st.depid < 0:
                    raise Refused(f"{where}: the nops before it carry dependencies, so it needs a depid of its own")
                tr = Tr()
                tr.rank, tr.tb, tr.idx = g.id, t.id, len(out)
                tr.type, tr.cnt, tr.hasdep = st.type, st.cnt, st.hasdep
                tr.srcbuf, tr.srcoffs, tr.dstbuf, tr.dstoff = st.srcbuf, [st.srcoff], st.dstbuf, st.dstoff
                tr.first = tr.last = st.s
                tr.line = st.line
                tr.waits = pending + ([(st.depid, st.deps)] if st.depid >= 0 else [])
                pending = []
                open_re = tr if st.type == "re" else None
                out.append(tr)
            # X6: the flag a transmission sets is the kernel's step counter: past its waits (all
            # but one of them are nops' positions), then past its fused members; then one on.
            counter = 0
            for tr in out:
                counter += max(len(tr.waits) - 1, 0)
                tr.flag = counter + (len(tr.srcoffs) - 1 if tr.type == "re" else 0)
                counter = tr.flag + 1
            count += len(out)
            per_rank.append(out)
        a.trs.append(per_rank)
    if count > MAX_TRANSMISSIONS:
        raise Refused(f"{count} transmissions (at most {MAX_TRANSMISSIONS})")
    # global ids, and the wait each names resolved to the transmission whose flag meets it (X6)
    a.all_trs = [tr for per_rank in a.trs for trs in per_rank for tr in trs]
    for gid, tr in enumerate(a.all_trs):
        tr.g = gid
    for tr in a.all_trs:
        tr.meet = []
        for d, k in tr.waits:
            tbs = a.trs[tr.rank]
            m = None
            if 0 <= d < len(tbs):
                m = next((x for x in tbs[d] if x.hasdep == 1 and x.flag >= k), None)
            if m is None:
                raise Refused(f"{tr.where()}: waits for tb {d} step {k}, which nothing can meet "
                              f"(no transmission there with hasdep 1 at or after that step): it would wait forever")
            tr.meet.append(m)
    # links (A, B, c): A's tb with send B on c, B's tb with recv A on c, k-th with k-th (X6)
    sends, recvs = {}, {}
    for g in a.gpus:
        for t in g.tbs:
            trs = a.trs[g.id][t.id]
            if t.send >= 0:
                sends[(g.id, t.send, t.chan)] = [x for x in trs if x.type in SENDING]
            if t.recv >= 0:
                recvs[(t.recv, g.id, t.chan)] = [x for x in trs if x.type in RECEIVING]
    for key in sorted(set(sends) | set(recvs)):
        s_, r_ = sends.get(key, []), recvs.get(key, [])
        A, B, c = key
        for k, (x, y) in enumerate(zip(s_, r_)):
            if x.cnt != y.cnt:
                raise Refused(f"link {A}->{B} channel {c}: message {k} is sent with cnt {x.cnt} "
                              f"({x.where()}) and received with cnt {y.cnt} ({y.where()})")
        if len(s_) != len(r_):
            if len(s_) > len(r_):
                raise Refused(f"link {A}->{B} channel {c}: {len(s_)} sends, {len(r_)} receives: "
                              f"{s_[len(r_)].where()} sends a message nothing receives")
            raise Refused(f"link {A}->{B} channel {c}: {len(s_)} sends, {len(r_)} receives: "
                          f"{r_[len(s_)].where()} receives a message nothing sends")
    # X10's staging slots: the rank's sending transmissions, tbs by id then in order, in chunks
    for per_rank in a.trs:
        at = 0
        for trs in per_rank:
            for tr in trs:
                if tr.type in SENDING:
                    tr.tslot = at
                    at += tr.cnt


# --- numbers (X9) --------------------------------------------------------------------------------

M64 = (1 << 64) - 1


def _mix64(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def sr_key(seed, stream, site):
    """The 64-bit key of (seed, stream, site): SplitMix64's finaliser three times (MODEL.md)."""
    a = _mix64((seed ^ 0x9E3779B97F4A7C15) & M64)
    b = _mix64(a ^ ((stream * 0xD1B54A32D192ED03) & M64))
    return _mix64(b ^ ((site * 0x8CB92BA72F3D8DD7) & M64) ^ 0x2545F4914F6CDD1D)


def _fmix32(h):
    """MurmurHash3's finaliser on a uint32 array (numpy's uint32 products wrap)."""
    h = h ^ (h >> np.uint32(16))
    h = h * np.uint32(0x85EBCA6B)
    h = h ^ (h >> np.uint32(13))
    h = h * np.uint32(0xC2B2AE35)
    return h ^ (h >> np.uint32(16))


def sr_bits(key, index):
    """32 random bits per element of `index` (uint64 array of global element indices)."""
    index = np.asarray(index, dtype=np.uint64)
    lo = (index & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    hi = (index >> np.uint64(32)).astype(np.uint32)
    k = np.uint32(key & 0xFFFFFFFF) ^ _fmix32(np.uint32(key >> 32) ^ (hi * np.uint32(0x9E3779B1)))
    return _fmix32(lo ^ k)


def uniform_sample(seed, n):
    """Elements 0 .. n (n < 2^32) of `cce gen --values uniform --dtype fp32 --seed seed`, the
    all-reduce's generated inputs before rounding to the dtype: keys from SplitMix64's finaliser
    of the seed and the index's high half (0), 32 bits fmix32(fmix32(i ^ k0) ^ k1), then
    (2 (x >> 8) + 1 - 2^24) / 2^24 (cce-numerics `sample`)."""
    k = _mix64(_mix64(seed ^ 0x5A3CE1B496F20D87) ^ 0)
    x = _fmix32(_fmix32(np.arange(n, dtype=np.uint32) ^ np.uint32(k & 0xFFFFFFFF)) ^ np.uint32(k >> 32))
    u = (x >> np.uint32(8)).astype(np.int64)
    return ((2 * u + 1 - (1 << 24)).astype(np.float64) / float(1 << 24)).astype(np.float32)


_NARROW = {np.dtype(ml_dtypes.bfloat16): (np.uint16, 0x7F80, 0x8000, 0x7FC0),
           np.dtype(np.float16): (np.uint16, 0x7C00, 0x8000, 0x7E00),
           np.dtype(np.float32): (np.uint32, 0x7F800000, 0x80000000, 0x7FC00000)}


def sr_round(acc, dt, key, index):
    """fp32 `acc` rounded stochastically into bf16 / fp16 (MODEL.md "Stochastic rounding"): with
    lo the neighbour toward zero and ulp the spacing above it, round away from zero iff
    floor((|acc| - lo) * 2^32 / ulp) + r >= 2^32. |acc| and lo are fp32 values, so |acc| - lo is
    exact in float64 and so are the power-of-two scalings; r = sr_bits(key, index)."""
    ut, inf_bits, sign_bit, _ = _NARROW[np.dtype(dt)]
    if not np.all(np.isfinite(acc)):
        raise Refused("stochastic rounding of an inf or NaN (the reference refuses it; choose other inputs)")
    mag = np.abs(acc)
    m = mag.astype(np.float64)
    with np.errstate(over="ignore"):
        near = mag.astype(dt)  # RNE; its neighbour toward zero is it or the one below
    nb = near.view(ut)
    lob = np.where(near.astype(np.float64) > m, nb - ut(1), nb).astype(ut)
    lo = lob.view(dt).astype(np.float64)
    up_b = (lob + ut(1)).astype(ut)
    top = up_b == ut(inf_bits)  # lo is the largest finite: its ulp is the spacing below it
    with np.errstate(invalid="ignore"):
        nxt = up_b.view(dt).astype(np.float64)
        prv = (lob - ut(1)).astype(ut).view(dt).astype(np.float64)
        ulp = np.where(top, lo - prv, nxt - lo)
    if np.any(m - lo >= ulp):
        raise Refused("stochastic rounding overflows to inf (the reference refuses it; choose other inputs)")
    frac = np.floor((m - lo) / ulp * 2.0 ** 32).astype(np.uint64)
    r = sr_bits(key, index).astype(np.uint64)
    up = frac + r >= np.uint64(1 << 32)
    res = np.where(up, up_b, lob).astype(ut)
    if np.any(res == ut(inf_bits)):
        raise Refused("stochastic rounding overflows to inf (the reference refuses it; choose other inputs)")
    res = res | np.where(np.signbit(acc), ut(sign_bit), ut(0)).astype(ut)
    return res.view(dt)


def _fminmax(a, b, is_min):
    """Running MIN / MAX in fp32: NaN propagates, -0 < +0."""
    if is_min:
        r = np.where(a < b, a, b)
    else:
        r = np.where(a > b, a, b)
    same = a == b  # equal values; only ±0 can differ in bits
    pick_a = np.signbit(a) if is_min else ~np.signbit(a)
    r = np.where(same & pick_a, a, np.where(same, b, r))
    return np.where(np.isnan(a) | np.isnan(b), np.float32(np.nan), r).astype(np.float32)


class Numbers:
    def __init__(self, dt, op, rounding, seed):
        self.dt, self.op, self.rounding = np.dtype(dt), op, rounding
        self.key = sr_key(seed, 0, 0)  # site 0 (the output rounding), stream 0 (X10)
        self.is_int = self.dt == np.dtype(np.int32)

    def reduce(self, vals, index0):
        """One CCE reduce (X9): sources in order, accumulated in fp32 (int32 for i32), rounded
        once to the buffer dtype; index0 = the destination's first global element index."""
        if self.is_int:
            acc = vals[0].copy()
            for v in vals[1:]:
                acc = acc + v if self.op == "add" else (np.minimum(acc, v) if self.op == "min" else np.maximum(acc, v))
            return acc.astype(np.int32)
        acc = vals[0].astype(np.float32)
        with np.errstate(over="ignore", invalid="ignore"):
            for v in vals[1:]:
                v = v.astype(np.float32)
                acc = (acc + v).astype(np.float32) if self.op == "add" else _fminmax(acc, v, self.op == "min")
        nan = np.isnan(acc)
        if self.rounding == "sr" and self.dt != np.dtype(np.float32):
            index = np.uint64(index0) + np.arange(len(acc), dtype=np.uint64)
            out = sr_round(acc, self.dt, self.key, index)
        else:
            with np.errstate(over="ignore"):
                out = acc.astype(self.dt)
        if nan.any():  # a NaN made by an operation on >= 2 operands is the positive canonical NaN
            ut, _, _, qnan = _NARROW[self.dt]
            out = out.copy()
            out.view(ut)[nan] = ut(qnan)
        return out


# --- the run -------------------------------------------------------------------------------------


class Run:
    """The executor, operationally: every thread block a sequential program of transmissions, a
    transmission runs when its waits are met (X6's flags) and, if it receives, its message is at
    the head of its link; links are unbounded FIFOs of snapshot values."""

    def __init__(self, a: XAlgo, numbers: Numbers, inputs, elems):
        R, N = a.ngpus, a.nchunks
        self.a, self.num, self.R, self.N = a, numbers, R, N
        if elems % N:
            raise Refused(f"{elems} elements are not a multiple of nchunksperloop {N} (X3)")
        nbytes = elems * numbers.dt.itemsize
        if nbytes < a.min_bytes or (a.max_bytes and nbytes > a.max_bytes):
            raise Refused(f"{nbytes} bytes per rank are outside minBytes {a.min_bytes} .. maxBytes {a.max_bytes}")
        if a.coll != "allreduce" and N % R:
            raise Refused(f"nchunksperloop {N} is not a multiple of {R} ranks (X3)")
        self.ce = elems // N  # elements per chunk
        self.cf = cf = N // R
        self.oop = a.outofplace == 1  # X4
        isz, osz = {"allreduce": (N, N), "reducescatter": (N, cf), "allgather": (cf, N)}[a.coll]
        for g in a.gpus:
            if g.chunks["i"] > isz or g.chunks["o"] > osz:
                raise Refused(f"rank {g.id} declares i_chunks {g.chunks['i']} / o_chunks {g.chunks['o']}: "
                              f"the {a.coll} gives it {isz} / {osz} (X3)")
        ce, dt = self.ce, numbers.dt
        cb = ce * dt.itemsize
        self.mem, self.sym, self.base = [], [], []
        for q in range(R):
            B = 2 ** 45 * (q + 1)
            sizes = {"S": a.gpus[q].chunks["s"]}
            base = {"S": B + 2 ** 42, "T": B + 3 * 2 ** 42, "O": B + 2 ** 43,
                    "I": B + (q * cf * cb if a.coll == "allgather" and self.oop else 0)}
            if self.oop or a.coll != "allgather":
                sizes["I"] = isz
            if self.oop or a.coll == "allgather":
                sizes["O"] = osz
            mem = {k: np.zeros(n * ce, dtype=dt) for k, n in sizes.items()}
            sym = {k: [None] * n for k, n in sizes.items()}
            x = inputs[q]
            if a.coll == "allgather":
                share = x[q * cf * ce:(q + 1) * cf * ce]
                reg, at = ("I", 0) if self.oop else ("O", q * cf)
                mem[reg][at * ce:(at + cf) * ce] = share
                for k in range(cf):
                    sym[reg][at + k] = {(q, q * cf + k): 1}
            else:
                mem["I"][:] = x
                for k in range(N):
                    sym["I"][k] = {(q, k): 1}
            self.mem.append(mem)
            self.sym.append(sym)
            self.base.append({k: v // dt.itemsize for k, v in base.items()})
        self.access = {}  # (rank, region, chunk) -> [last writer, readers since]
        self.reach = [0] * len(a.all_trs)

    def region(self, q, buf, off):
        """(region, chunk) of a buffer chunk after X4's aliasing."""
        if buf == "s":
            return "S", off
        if not self.oop:
            coll = self.a.coll
            if coll == "allreduce":
                return "I", off
            if coll == "reducescatter":
                return ("I", off) if buf == "i" else ("I", q * self.cf + off)
            return ("O", q * self.cf + off) if buf == "i" else ("O", off)
        return ("I" if buf == "i" else "O"), off

    def _touch(self, tr, reg, k, write):
        """X7's race rule along the execution order (a topological order of ->): a write must come
        after every earlier access of the chunk, a read after every earlier write."""
        key = (tr.rank, reg, k)
        rec = self.access.setdefault(key, [None, []])
        reach = self.reach[tr.g]
        w, readers = rec
        others = ([w] if w is not None else []) + (readers if write else [])
        for o in others:
            if not (reach >> o.g) & 1:
                raise Refused(f"data race on rank {tr.rank} {reg} chunk {k}: {o.where()} and {tr.where()} "
                              f"are not ordered and one of them writes it")
        if write:
            rec[0], rec[1] = tr, []
        else:
            readers.append(tr)

    def read(self, tr, buf, off):
        reg, k = self.region(tr.rank, buf, off)
        if self.sym[tr.rank][reg][k] is None:
            raise Refused(f"{tr.where()} reads {buf} chunk {off}, which nothing has written")
        self._touch(tr, reg, k, False)
        ce = self.ce
        return self.mem[tr.rank][reg][k * ce:(k + 1) * ce], self.sym[tr.rank][reg][k]

    def write(self, tr, buf, off, val, sym):
        reg, k = self.region(tr.rank, buf, off)
        self._touch(tr, reg, k, True)
        ce = self.ce
        self.mem[tr.rank][reg][k * ce:(k + 1) * ce] = val
        self.sym[tr.rank][reg][k] = sym

    def index(self, tr, buf, off):
        reg, k = self.region(tr.rank, buf, off)
        return self.base[tr.rank][reg] + k * self.ce

    def combine(self, parts, index0):
        vals = [p[0] for p in parts]
        sym = {}
        for p in parts:
            for c, n in p[1].items():
                sym[c] = sym.get(c, 0) + n
        return self.num.reduce(vals, index0), sym

    def overlap_check(self):
        for tr in self.a.all_trs:
            if tr.type not in ("rrc", "rrcs", "cpy", "re"):
                continue
            d_reg, d_k = self.region(tr.rank, tr.dstbuf, tr.dstoff)
            for so in tr.srcoffs:
                s_reg, s_k = self.region(tr.rank, tr.srcbuf, so)
                if s_reg == d_reg and s_k != d_k and s_k < d_k + tr.cnt and d_k < s_k + tr.cnt:
                    raise Refused(f"{tr.where()}: source {tr.srcbuf}[{so}, +{tr.cnt}) and destination "
                                  f"{tr.dstbuf}[{tr.dstoff}, +{tr.cnt}) overlap at different offsets")

    def execute(self, tr, msg):
        """Runs one transmission; returns the message it sends (or None)."""
        q, ce, t = tr.rank, self.ce, tr.type
        out = []
        src0 = tr.srcoffs[0]
        for j in range(tr.cnt):
            m = (msg[0][j], msg[1][j]) if msg is not None else None
            if t == "s":
                v, s = self.read(tr, tr.srcbuf, src0 + j)
                out.append((v.copy(), s))  # the snapshot at the send (X8)
            elif t in ("r", "rcs"):
                self.write(tr, tr.dstbuf, tr.dstoff + j, m[0], m[1])
                out.append(m)
            elif t == "rrs":
                idx = self.base[q]["T"] + (tr.tslot + j) * ce
                out.append(self.combine([m, self.read(tr, tr.srcbuf, src0 + j)], idx))
            elif t in ("rrc", "rrcs"):
                v = self.combine([m, self.read(tr, tr.srcbuf, src0 + j)], self.index(tr, tr.dstbuf, tr.dstoff + j))
                self.write(tr, tr.dstbuf, tr.dstoff + j, *v)
                out.append(v)
            elif t == "cpy":
                v, s = self.read(tr, tr.srcbuf, src0 + j)
                self.write(tr, tr.dstbuf, tr.dstoff + j, v.copy(), s)
            elif t == "re":
                parts = [self.read(tr, tr.dstbuf, tr.dstoff + j)]
                parts += [self.read(tr, tr.srcbuf, so + j) for so in tr.srcoffs]
                v = self.combine(parts, self.index(tr, tr.dstbuf, tr.dstoff + j))
                self.write(tr, tr.dstbuf, tr.dstoff + j, *v)
        if t in SENDING:
            return [o[0] for o in out], [o[1] for o in out], tr
        return None

    def run(self):
        a = self.a
        self.overlap_check()
        tbs = [(q, t) for q in range(self.R) for t in range(len(a.trs[q]))]
        pc = {qt: 0 for qt in tbs}
        links = {}
        progressed = True
        while progressed:
            progressed = False
            for q, t in tbs:
                trs, tb = a.trs[q][t], a.gpus[q].tbs[t]
                while pc[(q, t)] < len(trs):
                    tr = trs[pc[(q, t)]]
                    if any(pc[(q, m.tb)] <= m.idx for m in tr.meet):
                        break
                    msg = None
                    if tr.type in RECEIVING:
                        queue = links.get((tb.recv, q, tb.chan))
                        if not queue:
                            break
                        msg = queue.popleft()
                    reach = 1 << tr.g
                    if tr.idx:
                        reach |= self.reach[tr.g - 1]
                    for m in tr.meet:
                        reach |= self.reach[m.g]
                    if msg is not None:
                        reach |= self.reach[msg[2].g]
                    self.reach[tr.g] = reach
                    sent = self.execute(tr, msg)
                    if sent is not None:
                        links.setdefault((q, tb.send, tb.chan), collections.deque()).append(sent)
                    pc[(q, t)] += 1
                    progressed = True
        blocked = []
        for q, t in tbs:
            trs = a.trs[q][t]
            if pc[(q, t)] < len(trs):
                tr = trs[pc[(q, t)]]
                why = [f"tb {m.tb} step {m.last}" for m in tr.meet if pc[(q, m.tb)] <= m.idx]
                if not why:
                    tb = a.gpus[q].tbs[t]
                    why = [f"a message from rank {tb.recv} on channel {tb.chan}"]
                blocked.append(f"{tr.where()} ({tr.type}) waits for {', '.join(why)}")
        if blocked:
            raise Refused("stuck: nothing can run before every thread block finished (a deadlock; "
                          "the executor hangs):\n  " + "\n  ".join(blocked))
        left = [k for k, v in links.items() if v]
        if left:
            raise Refused(f"messages left on links {left}")

    def outputs(self, q):
        """The rank's output chunks as (region, chunk), and what each must hold (X7)."""
        R, N, cf, coll = self.R, self.N, self.cf, self.a.coll
        if coll == "allreduce":
            reg = "O" if self.oop else "I"
            return [((reg, k), {(p, k): 1 for p in range(R)}) for k in range(N)]
        if coll == "reducescatter":
            return [(("O", k) if self.oop else ("I", q * cf + k), {(p, q * cf + k): 1 for p in range(R)})
                    for k in range(cf)]
        return [(("O", k), {(k // cf, k): 1}) for k in range(N)]

    def result(self, q):
        """The rank's output after checking, on chunk symbols, that it is the collective's."""
        parts = []
        for k, ((reg, c), want) in enumerate(self.outputs(q)):
            got = self.sym[q][reg][c]
            if got != want:
                last = self.access.get((q, reg, c), [None])[0]

                def fmt(s):
                    if s is None:
                        return "nothing"
                    return " + ".join(f"{n}x rank {p} input chunk {x}" if n > 1 else f"rank {p} input chunk {x}"
                                      for (p, x), n in sorted(s.items()))

                raise Refused(f"the schedule does not compute its {self.a.coll}: rank {q} output chunk {k} holds "
                              f"{fmt(got)}, not {fmt(want)}" + (f" (last written by {last.where()})" if last else ""))
            parts.append(self.mem[q][reg][c * self.ce:(c + 1) * self.ce])
        return np.concatenate(parts)


def msccl_expected(xml_bytes, dtype, inputs, op="add", rounding="rne", seed=0):
    """Every rank's expected output (list of arrays) for the schedule in `xml_bytes`, given each
    rank's whole input buffer; raises Refused when the file breaks a rule or cannot finish."""
    if op not in ("add", "min", "max"):
        raise Refused(f"op {op!r}: add, min or max (avg is refused, X9)")
    if rounding not in ("rne", "sr"):
        raise Refused(f"rounding {rounding!r}: rne or sr")
    a = parse_msccl(xml_bytes)
    if len(inputs) != a.ngpus:
        raise Refused(f"{len(inputs)} inputs for {a.ngpus} ranks")
    elems = len(inputs[0])
    if any(len(x) != elems for x in inputs):
        raise Refused("the ranks' inputs differ in length")
    transmissions(a)
    run = Run(a, Numbers(XML_DT[dtype] if isinstance(dtype, str) else dtype, op, rounding, seed), inputs, elems)
    run.run()
    return [run.result(q) for q in range(a.ngpus)]


def msccl_main(argv) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="allreduce_ref.py --xml")
    ap.add_argument("xml")
    ap.add_argument("dtype", choices=sorted(XML_DT))
    ap.add_argument("din")
    ap.add_argument("dout")
    ap.add_argument("--op", default="add", choices=("add", "min", "max"))
    ap.add_argument("--rounding", default="rne", choices=("rne", "sr"))
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if not 0 <= args.seed <= M64:
        ap.error("--seed: 0 ..= 2^64 - 1")
    dt = np.dtype(XML_DT[args.dtype])  # little-endian files, read on a little-endian machine
    try:
        with open(args.xml, "rb") as f:
            data = f.read()
        ngpus = parse_msccl(data).ngpus
        inputs = [np.fromfile(f"{args.din}/rank{q}.bin", dtype=dt) for q in range(ngpus)]
        want = msccl_expected(data, args.dtype, inputs, args.op, args.rounding, args.seed)
    except Refused as e:
        print(f"refused: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    ut = f"u{dt.itemsize}"
    for q, w in enumerate(want):
        got = np.fromfile(f"{args.dout}/rank{q}.bin", dtype=dt)
        if len(got) != len(w):
            print(f"rank {q}: {len(got)} elements written, {len(w)} expected")
            return 1
        bad = np.nonzero(got.view(ut) != w.view(ut))[0]
        if len(bad):
            e = bad[0]
            print(f"rank {q}: {len(bad)} of {len(w)} elements differ; first at {e}: got {got[e].item()!r} "
                  f"(0x{int(got.view(ut)[e]):0{2 * dt.itemsize}x}), expected {w[e].item()!r} "
                  f"(0x{int(w.view(ut)[e]):0{2 * dt.itemsize}x})")
            return 1
    print(f"ok: {os.path.basename(args.xml)}, {len(want)} ranks, {len(inputs[0])} {args.dtype} elements "
          f"per rank, {args.op}, {args.rounding}: every rank equals the simulated schedule")
    return 0


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--xml":
        return msccl_main(sys.argv[2:])
    return main_algo()


if __name__ == "__main__":
    sys.exit(main())
