"""scripts/msccl_gen.py's schedules through scripts/allreduce_ref.py --xml (docs/MODEL.md X1-X13).

No cce: int32 sums, minima and gathers are exact in any order, so the reference's simulation of
every generated schedule must equal numpy's plain sum / gather element for element; float cases
check X9's order and single rounding against formulas written here; every defect file and a set
of hand-broken files must be refused (never hang).
"""
import fractions
import importlib.util
import pathlib
import re
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
REF = ROOT / "scripts" / "allreduce_ref.py"
GEN = ROOT / "scripts" / "msccl_gen.py"


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


ref = _load("allreduce_ref", REF)
gen = _load("msccl_gen", GEN)

MODES = {"ring-allreduce": (False, True), "allpairs-allreduce": (False, True), "hier-allreduce": (False, True),
         "tree-allreduce": (False, True), "ring-reducescatter": (False, True), "ring-allgather": (False, True)}
CASES = [(algo, r, ip) for algo, modes in MODES.items() for r in (2, 4, 8, 16) for ip in modes]
CASES += [("allpairs-allreduce", 32, False), ("allpairs-allreduce", 32, True)]


def write_xml(tmp_path, *args):
    """The generator's command line, in process; returns the file's bytes."""
    path = tmp_path / "algo.xml"
    assert gen.main([*map(str, args), "-o", str(path)]) == 0
    return path.read_bytes()


def int_inputs(r, elems, seed):
    """Distinct per rank and element, over the whole int32 range (sums wrap)."""
    rng = np.random.default_rng(seed)
    return [rng.integers(-2**31, 2**31, elems, dtype=np.int64).astype(np.int32) + np.int32(q) for q in range(r)]


def exact(coll, ins, op="add"):
    """What every rank must hold, from numpy alone."""
    r, n = len(ins), len(ins[0])
    if coll == "allgather":
        return [np.concatenate([ins[q][q * n // r:(q + 1) * n // r] for q in range(r)])] * r
    red = {"add": lambda: np.sum(ins, axis=0, dtype=np.int32), "min": lambda: np.min(ins, axis=0),
           "max": lambda: np.max(ins, axis=0)}[op]()
    if coll == "reducescatter":
        return [red[q * n // r:(q + 1) * n // r] for q in range(r)]
    return [red] * r


@pytest.mark.parametrize("algo,r,inplace", CASES)
def test_schedule_computes_its_collective(tmp_path, algo, r, inplace):
    k = 2 if r <= 8 else 1
    xml = write_xml(tmp_path, algo, r, "--inplace" if inplace else "--outofplace", "--chunks", k)
    a = ref.parse_msccl(xml)
    elems = a.nchunks * 3
    ins = int_inputs(r, elems, r * 7 + k)
    got = ref.msccl_expected(xml, "i32", ins)
    for q, (g, w) in enumerate(zip(got, exact(a.coll, ins))):
        assert g.dtype == np.int32 and np.array_equal(g, w), f"rank {q}"


@pytest.mark.parametrize("algo,r,k,c,inplace", [
    ("ring-allreduce", 5, 3, 2, False), ("ring-allreduce", 3, 1, 4, True),
    ("ring-reducescatter", 6, 2, 3, False), ("ring-reducescatter", 7, 1, 2, True),
    ("ring-allgather", 5, 2, 2, False), ("ring-allgather", 3, 3, 2, True),
    ("hier-allreduce", 9, 1, 1, False), ("hier-allreduce", 7, 1, 1, True), ("hier-allreduce", 12, 2, 1, True),
    ("tree-allreduce", 13, 3, 1, False), ("allpairs-allreduce", 11, 2, 1, True)])
def test_chunks_channels_and_odd_rank_counts(tmp_path, algo, r, k, c, inplace):
    xml = write_xml(tmp_path, algo, r, "--chunks", k, "--channels", c, *(["--inplace"] if inplace else []))
    a = ref.parse_msccl(xml)
    ins = int_inputs(r, a.nchunks * 2, 1)
    for op in ("add", "min", "max"):
        if a.coll == "allgather" and op != "add":
            continue
        for g, w in zip(ref.msccl_expected(xml, "i32", ins, op=op), exact(a.coll, ins, op)):
            assert np.array_equal(g, w), op


def test_shape_of_the_files(tmp_path):
    """Every attribute on every step; s = position; hasdep exactly where a step waits; fusion."""
    xml = write_xml(tmp_path, "allpairs-allreduce", 32)
    text = xml.decode()
    steps = re.findall(r"<step [^>]*>", text)
    names = ["s", "type", "srcbuf", "srcoff", "dstbuf", "dstoff", "cnt", "depid", "deps", "hasdep"]
    assert steps and all(re.findall(r'(\w+)="', s) == names for s in steps)
    a = ref.parse_msccl(xml)
    for g in a.gpus:
        waited = {(st.depid, st.deps) for t in g.tbs for st in t.steps if st.depid >= 0}
        for t in g.tbs:
            for pos, st in enumerate(t.steps):
                assert st.s == pos
                assert st.hasdep == ((t.id, pos) in waited)
    ref.transmissions(a)
    reducer = a.trs[0][-1]
    assert [(x.type, len(x.srcoffs)) for x in reducer] == [("cpy", 1), ("re", 31)]
    assert len(reducer[1].waits) == 31  # 30 nops and the first re's own depid


def test_reduction_order_and_single_rounding(tmp_path):
    """X9 on bf16: a fused re chain rounds once (own chunk, then the peers' in step order); a ring
    rounds at every hop with the message first."""
    rng = np.random.default_rng(3)
    r = 6
    xml = write_xml(tmp_path, "allpairs-allreduce", r)
    ins = [(rng.standard_normal(r * 64) * 10 ** rng.uniform(-3, 3, r * 64)).astype(ml_dtypes.bfloat16)
           for _ in range(r)]
    f32 = lambda v: v.astype(np.float32)
    got = ref.msccl_expected(xml, "bf16", ins)
    want = []
    for c in range(r):
        acc = f32(ins[c][c * 64:(c + 1) * 64])
        for p in range(r):
            if p != c:
                acc = acc + f32(ins[p][c * 64:(c + 1) * 64])
        want.append(acc.astype(ml_dtypes.bfloat16))
    want = np.concatenate(want)
    pairwise = []  # what rounding after every source would give
    for c in range(r):
        acc = ins[c][c * 64:(c + 1) * 64]
        for p in range(r):
            if p != c:
                acc = (f32(acc) + f32(ins[p][c * 64:(c + 1) * 64])).astype(ml_dtypes.bfloat16)
        pairwise.append(acc)
    pairwise = np.concatenate(pairwise)
    assert not np.array_equal(want.view(np.uint16), pairwise.view(np.uint16))  # the test can tell
    for g in got:
        assert np.array_equal(g.view(np.uint16), want.view(np.uint16))
    xml = write_xml(tmp_path, "ring-allreduce", r)
    got = ref.msccl_expected(xml, "bf16", ins)
    for c in range(r):
        part = lambda q: ins[q % r][c * 64:(c + 1) * 64]
        acc = part(c + 1)
        for k in range(2, r + 1):
            acc = (f32(acc) + f32(part(c + k))).astype(ml_dtypes.bfloat16)
        for g in got:
            assert np.array_equal(g[c * 64:(c + 1) * 64].view(np.uint16), acc.view(np.uint16))


def _scalar_bits(seed, index):
    """docs/MODEL.md's generator, once more, in plain integers (stream 0, site 0)."""
    m64, m32 = (1 << 64) - 1, (1 << 32) - 1

    def mix64(z):
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & m64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & m64
        return z ^ (z >> 31)

    def fmix32(h):
        h ^= h >> 16
        h = (h * 0x85EBCA6B) & m32
        h ^= h >> 13
        h = (h * 0xC2B2AE35) & m32
        return h ^ (h >> 16)

    key = mix64(mix64(mix64(seed ^ 0x9E3779B97F4A7C15)) ^ 0x2545F4914F6CDD1D)
    k = (key & m32) ^ fmix32((key >> 32) ^ (((index >> 32) * 0x9E3779B1) & m32))
    return fmix32((index & m32) ^ k)


def test_sr_generator_and_rule():
    rng = np.random.default_rng(11)
    idx = np.concatenate([rng.integers(0, 2**63, 500, dtype=np.uint64),
                          np.arange(5, dtype=np.uint64) + np.uint64(2**45 * 17 // 2)])
    for seed in (0, 1, 2**63 + 12345):
        key = ref.sr_key(seed, 0, 0)
        assert [int(b) for b in ref.sr_bits(key, idx)] == [_scalar_bits(seed, int(i)) for i in idx]
    # the rule: away from zero iff floor(frac * 2^32) + r >= 2^32, checked in exact rationals
    for dt, (mant, emin) in ((ml_dtypes.bfloat16, (7, -126)), (np.float16, (10, -14))):
        x = (rng.standard_normal(3000) * 10.0 ** rng.uniform(-9, 4, 3000)).astype(np.float32)
        if dt is np.float16:
            x = np.clip(x, -60000, 60000)
        x[:3] = [0.0, -0.0, 1.0]
        index = rng.integers(0, 2**63, len(x), dtype=np.uint64)
        key = ref.sr_key(9, 0, 0)
        got = ref.sr_round(x, dt, key, index).astype(np.float64)
        bits = ref.sr_bits(key, index)
        for v, g, b in zip(x, got, bits):
            m = fractions.Fraction(float(abs(v)))
            e = emin  # the binade of m, or the subnormal one
            while fractions.Fraction(2) ** (e + 1) <= m:
                e += 1
            ulp = fractions.Fraction(2) ** (e - mant)
            lo = (m // ulp) * ulp
            frac32 = int((m - lo) / ulp * 2**32)
            want = lo + ulp if frac32 + int(b) >= 2**32 else lo
            assert fractions.Fraction(abs(float(g))) == want and np.signbit(g) == np.signbit(v), (v, g, want)


def test_sr_keys_follow_x10(tmp_path):
    """bf16 SR on a 3-rank ring: the rrs result rounds with the index of its staging slot T
    (rank q's sending transmissions s, rrs, rrcs, rcs: the rrs is slot 1), the rrcs result with its
    output address (X10)."""
    r, n = 3, 3 * 40
    xml = write_xml(tmp_path, "ring-allreduce", r)
    rng = np.random.default_rng(5)
    ins = [rng.standard_normal(n).astype(ml_dtypes.bfloat16) for _ in range(r)]
    got = ref.msccl_expected(xml, "bf16", ins, rounding="sr", seed=77)
    key, ce = ref.sr_key(77, 0, 0), n // r
    f32 = lambda v: v.astype(np.float32)
    for c in range(r):
        part = lambda q: ins[q % r][c * ce:(c + 1) * ce]
        q1, q2 = (c + 2) % r, c
        t_index = (2**45 * (q1 + 1) + 3 * 2**42) // 2 + 1 * ce + np.arange(ce, dtype=np.uint64)
        mid = ref.sr_round(f32(part(c + 1)) + f32(part(c + 2)), ml_dtypes.bfloat16, key, t_index)
        o_index = (2**45 * (q2 + 1) + 2**43) // 2 + c * ce + np.arange(ce, dtype=np.uint64)
        fin = ref.sr_round(f32(mid) + f32(part(c)), ml_dtypes.bfloat16, key, o_index)
        for g in got:
            assert np.array_equal(g[c * ce:(c + 1) * ce].view(np.uint16), fin.view(np.uint16))
    rne = ref.msccl_expected(xml, "bf16", ins)
    assert not np.array_equal(rne[0].view(np.uint16), got[0].view(np.uint16))
    fp32 = [x.astype(np.float32) for x in ins]  # fp32 is always RNE
    assert np.array_equal(ref.msccl_expected(xml, "fp32", fp32, rounding="sr", seed=77)[0],
                          ref.msccl_expected(xml, "fp32", fp32)[0])


def test_min_max_zeros_and_nan():
    a = np.array([-0.0, 0.0, 1.0, np.nan, 2.0], dtype=np.float32)
    b = np.array([0.0, -0.0, np.nan, 1.0, 3.0], dtype=np.float32)
    mn, mx = ref._fminmax(a, b, True), ref._fminmax(a, b, False)
    assert list(np.signbit(mn[:2])) == [True, True] and list(np.signbit(mx[:2])) == [False, False]
    assert np.isnan(mn[2:4]).all() and np.isnan(mx[2:4]).all() and mn[4] == 2 and mx[4] == 3
    nums = ref.Numbers(np.float16, "add", "rne", 0)
    out = nums.reduce([np.array([np.inf], np.float16), np.array([-np.inf], np.float16)], 0)
    assert out.view(np.uint16)[0] == 0x7E00  # a NaN an operation makes is the positive canonical one


def run_ref(*args, timeout=30):
    return subprocess.run([sys.executable, str(REF), *map(str, args)], capture_output=True, text=True, timeout=timeout)


def test_command_line(tmp_path):
    """--xml FILE DTYPE DIR_IN DIR_OUT: exit 0 on the exact result, 1 naming the first difference."""
    r = 4
    xml = tmp_path / "rs.xml"
    assert subprocess.run([sys.executable, str(GEN), "ring-reducescatter", str(r), "--chunks", "2", "-o", str(xml)],
                          timeout=30).returncode == 0
    din, dout = tmp_path / "in", tmp_path / "out"
    din.mkdir()
    dout.mkdir()
    ins = int_inputs(r, 8 * 5, 2)
    for q, (x, w) in enumerate(zip(ins, exact("reducescatter", ins))):
        x.tofile(din / f"rank{q}.bin")
        w.tofile(dout / f"rank{q}.bin")
    p = run_ref("--xml", xml, "i32", din, dout)
    assert p.returncode == 0 and p.stdout.startswith("ok:"), p.stdout + p.stderr
    w = exact("reducescatter", ins)[2].copy()
    w[3] += 1
    w.tofile(dout / "rank2.bin")
    p = run_ref("--xml", xml, "i32", din, dout)
    assert p.returncode == 1 and "rank 2" in p.stdout and "first at 3" in p.stdout, p.stdout


DEFECT_MESSAGES = {"unmatched-send": "nothing receives", "reordered-recv": "does not compute its allreduce",
                   "cycle": "stuck", "offset": "are not inside", "unknown-type": "unknown type 'rrx'",
                   "missing-attr": "no attribute cnt"}


@pytest.mark.parametrize("defect", sorted(DEFECT_MESSAGES))
@pytest.mark.parametrize("r", [2, 5])
def test_defects_are_refused(tmp_path, defect, r):
    xml = tmp_path / "bad.xml"
    p = subprocess.run([sys.executable, str(GEN), "ring-allreduce", str(r), "--defect", defect, "-o", str(xml)],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stderr
    din = tmp_path / "in"
    din.mkdir()
    for q, x in enumerate(int_inputs(r, r * 4, 0)):
        x.tofile(din / f"rank{q}.bin")
    p = run_ref("--xml", xml, "i32", din, din)
    assert p.returncode == 2 and DEFECT_MESSAGES[defect] in p.stderr, p.stdout + p.stderr


def _edit(xml, old, new, count=1):
    text = xml.decode()
    assert old in text, old
    return text.replace(old, new, count).encode()


BROKEN = [
    # in place, a peer tb's second send no longer waits for the reducer: it reads i[0] unordered
    # with the re that writes it
    (["allpairs-allreduce", 3, "--inplace"],
     ['srcbuf="i" srcoff="0" dstbuf="o" dstoff="-1" cnt="1" depid="4" deps="2"',
      'srcbuf="i" srcoff="0" dstbuf="o" dstoff="-1" cnt="1" depid="-1" deps="-1"'], "data race"),
    # the reducer's nop without a dependency
    (["allpairs-allreduce", 3], ['type="nop" srcbuf="i" srcoff="-1" dstbuf="o" dstoff="-1" cnt="0" depid="2"',
                                 'type="nop" srcbuf="i" srcoff="-1" dstbuf="o" dstoff="-1" cnt="0" depid="-1"'],
     "nop without"),
    # the first re loses its own depid, so the nop's wait has nowhere to go (X5)
    (["allpairs-allreduce", 3], ['type="re" srcbuf="s" srcoff="0" dstbuf="o" dstoff="0" cnt="1" depid="3" deps="0"',
                                 'type="re" srcbuf="s" srcoff="0" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1"'],
     "needs a depid"),
    # a wait on a step nothing flags
    (["allpairs-allreduce", 3], ['depid="4" deps="3" hasdep="0"', 'depid="4" deps="9" hasdep="0"'], "wait forever"),
    # a continuing re with another cnt (X5)
    (["allpairs-allreduce", 3, "--chunks", 2], ['type="re" srcbuf="s" srcoff="2" dstbuf="o" dstoff="0" cnt="2"',
                                                'type="re" srcbuf="s" srcoff="2" dstbuf="o" dstoff="0" cnt="1"'],
     "has cnt 1"),
    # the cross-group tb's first send no longer waits for the intra-group reduce-scatter into scratch
    (["hier-allreduce", 4], ['type="s" srcbuf="s" srcoff="1" dstbuf="o" dstoff="-1" cnt="1" depid="0" deps="1"',
                             'type="s" srcbuf="s" srcoff="1" dstbuf="o" dstoff="-1" cnt="1" depid="-1" deps="-1"'],
     "nothing has written"),
    (["ring-allreduce", 3], ['<step s="1"', '<step s="2"'], "position"),
    (["ring-allreduce", 3], ['coll="allreduce"', 'coll="alltoall"'], "coll"),
    (["ring-allreduce", 3], ['send="1" recv="2"', 'send="0" recv="2"'], "another rank"),
    (["ring-allreduce", 3], ['</tb>', '</tb><foo/>'], "<foo>"),
    (["ring-allreduce", 3], ['cnt="1"', 'cnt="0x1"'], "not a decimal integer"),
    (["ring-allreduce", 3], ['type="rrs" srcbuf="i" srcoff="1"', 'type="rrs" srcbuf="x" srcoff="1"'], "unknown buffer"),
]


@pytest.mark.parametrize("args,edit,message", BROKEN)
def test_broken_files_are_refused(tmp_path, args, edit, message):
    good = write_xml(tmp_path, *args)
    r, n = ref.parse_msccl(good).ngpus, ref.parse_msccl(good).nchunks
    ins = int_inputs(r, n * 2, 0)
    ref.msccl_expected(good, "i32", ins)
    with pytest.raises(ref.Refused, match=re.escape(message)):
        ref.msccl_expected(_edit(good, *edit), "i32", ins)


def test_unwritten_reads_and_sizes(tmp_path):
    xml = write_xml(tmp_path, "allpairs-allreduce", 3)
    # the reducer reads scratch slot 1 which the receive tb no longer writes (it writes slot 0 twice)
    bad = _edit(xml, 'type="r" srcbuf="i" srcoff="-1" dstbuf="s" dstoff="1"',
                'type="r" srcbuf="i" srcoff="-1" dstbuf="o" dstoff="1"')
    with pytest.raises(ref.Refused, match="which nothing has written|data race"):
        ref.msccl_expected(bad, "i32", int_inputs(3, 6, 0))
    with pytest.raises(ref.Refused, match="not a multiple of nchunksperloop"):
        ref.msccl_expected(xml, "i32", int_inputs(3, 7, 0))
