"""`cce value --json` against independent oracles: ml_dtypes / numpy casts and exact rational
arithmetic (fractions), for random bit patterns and random decimals (ties and near-ties,
subnormals, overflow, NaN, inf) in every float dtype, with and without --saturate, and random
integers in every integer dtype.

Checked for every value: the rounding of a decimal (nearest even, found on the dtype's grid of
every value by exact comparisons; numpy's float64 -> float32 cast for fp32), the stored value,
its digits, class and fields, the neighbours and ulp (the sorted grid; np.nextafter for fp32),
the RNE error and the stochastic-rounding fractions (Fraction), and the conversions to every
dtype (ml_dtypes / numpy astype from float32, --saturate as a clip to finfo.max; integers by
round-half-even and clamping, docs/MODEL.md "Conversions"; an integer into a float on the grid).
The decimal oracle rounds once, as cce does: ml_dtypes' own float64 -> bfloat16 / float8 astype
rounds twice, through float32, and differs only there (the last test shows it).

Speed: one `cce value` call takes all of a dtype's values (several VALUEs print
{"values": [...]}), so the test starts 30 processes, run side by side: about 7 s in all.
"""
import functools
import json
import math
import re
import subprocess
from bisect import bisect_left, bisect_right
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

# cce name: (numpy type, unsigned bits type, canonical quiet NaN)
FLOATS = {
    "bf16": (ml_dtypes.bfloat16, np.uint16, 0x7FC0),
    "fp16": (np.float16, np.uint16, 0x7E00),
    "fp32": (np.float32, np.uint32, 0x7FC00000),
    "fp8e3": (ml_dtypes.float8_e3m4, np.uint8, 0x78),
    "fp8e4": (ml_dtypes.float8_e4m3, np.uint8, 0x7C),
    "fp8e5": (ml_dtypes.float8_e5m2, np.uint8, 0x7E),
    "fp8e4fn": (ml_dtypes.float8_e4m3fn, np.uint8, 0x7F),
}
INTS = {"u8": (8, False), "i8": (8, True), "u16": (16, False), "i16": (16, True),
        "u32": (32, False), "i32": (32, True), "u64": (64, False), "i64": (64, True)}
ORDER = ["u8", "i8", "u16", "i16", "u32", "i32", "u64", "i64",
         "fp16", "bf16", "fp32", "fp8e3", "fp8e4", "fp8e5", "fp8e4fn"]
EXACT = re.compile(r"^-?(0|[1-9][0-9]*)(\.[0-9]*[1-9])?$")


def width(name):
    return INTS[name][0] if name in INTS else 8 * np.dtype(FLOATS[name][0]).itemsize


def decode(name, bits):
    """A float dtype's bits as an f64 (exact: every value of these formats is an f64)."""
    dt, ut, _ = FLOATS[name]
    return float(np.array([bits], dtype=ut).view(dt).astype(np.float64)[0])


def frac(text):
    assert EXACT.match(text), f"not an exact decimal in the shortest form: {text!r}"
    return Fraction(text)


def exact_of(x):
    """What cce prints for a value: digits, or inf / nan with their sign."""
    if math.isnan(x):
        return "-nan" if math.copysign(1, x) < 0 else "nan"
    if math.isinf(x):
        return "-inf" if x < 0 else "inf"
    return None


class Grid:
    """A narrow float dtype's non-negative values in bit order (= value order), with the
    value one ulp past max (where an overflow rounds to: encoding max + 1, inf or the fn NaN)."""

    def __init__(self, name):
        dt, ut, _ = FLOATS[name]
        n = 1 << (8 * np.dtype(dt).itemsize - 1)
        with np.errstate(invalid="ignore"):
            vals = np.arange(n, dtype=np.uint32).astype(ut).view(dt).astype(np.float64)
        self.max_enc = int(np.flatnonzero(np.isfinite(vals))[-1])
        g = [float(v) for v in vals[: self.max_enc + 1]]
        g.append(g[-1] + (g[-1] - g[-2]))  # one ulp past max (max and its predecessor share a binade)
        self.g = g

    def rne(self, a):
        """Encoding nearest to the magnitude a >= 0 (ties to even); max_enc + 1 = overflow."""
        g = self.g
        if a > g[-1]:
            return self.max_enc + 1
        i = bisect_left(g, a)
        if g[i] == a:
            return i
        mid = (g[i - 1] + g[i]) / 2  # exact: at most 12 significant bits
        if a != mid:
            return i - 1 if a < mid else i
        return i - 1 if (i - 1) % 2 == 0 else i

    def trunc(self, a):
        """Encoding of the magnitude a truncated (toward zero)."""
        return bisect_right(self.g, a) - 1


GRIDS = {name: Grid(name) for name in FLOATS if name != "fp32"}
F32_MAX = float(np.finfo(np.float32).max)


def fmax(name):
    return float(ml_dtypes.finfo(FLOATS[name][0]).max)


def rne_bits(name, x, saturate):
    """The oracle: x (an f64) rounded to nearest even into the dtype."""
    w = width(name)
    sign = (1 << (w - 1)) if math.copysign(1, x) < 0 else 0
    if math.isnan(x):
        return FLOATS[name][2] | sign
    if saturate:
        x = min(max(x, -fmax(name)), fmax(name))
    if name == "fp32":
        with np.errstate(over="ignore"):
            return int(np.array([x]).astype(np.float32).view(np.uint32)[0])
    grid = GRIDS[name]
    return sign | grid.rne(abs(x))


def convert_oracle(src_value, to, saturate):
    """`src_value` (an f64 holding a float dtype's value) converted to `to`: an integer dtype's
    exact text, or a float dtype's value as an f64."""
    return _convert_oracle(src_value, math.copysign(1, src_value), to, saturate)  # -0 != 0 here


@functools.lru_cache(maxsize=None)
def _convert_oracle(src_value, _sign, to, saturate):
    if to in INTS:
        bits, signed = INTS[to]
        lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
        if math.isnan(src_value):
            return str(0)
        if math.isinf(src_value):
            return str(hi if src_value > 0 else lo)
        return str(min(max(round(Fraction(src_value)), lo), hi))  # round(): half to even
    v32 = np.array([src_value], dtype=np.float32)  # exact: every float dtype's value is an f32
    if saturate:
        m = np.float32(fmax(to))
        v32 = np.where(np.isnan(v32), v32, np.clip(v32, -m, m)).astype(np.float32)
    if to == "fp32":
        out = v32
    else:
        with np.errstate(over="ignore", invalid="ignore"):
            out = v32.astype(FLOATS[to][0])
    return float(out.astype(np.float64)[0])


def check_exact(text, want):
    """`text` is want's exact decimal (or special), -0 included."""
    special = exact_of(want)
    if special is not None:
        assert text == special, (text, want)
    else:
        assert frac(text) == Fraction(want), (text, want)
        if want == 0:
            assert text == ("-0" if math.copysign(1, want) < 0 else "0"), (text, want)


@functools.lru_cache(maxsize=None)
def every_value(name):
    """A narrow dtype's values in value order (one zero; the infinities where it has them)."""
    grid = GRIDS[name]
    pos = grid.g[: grid.max_enc + 1]
    has_inf = not math.isnan(decode(name, grid.max_enc + 1))
    return sorted(set([-p for p in pos] + pos + ([math.inf, -math.inf] if has_inf else [])))


def neighbours(name, v):
    """(next_down, next_up) of the value v by value order, None past the ends and for NaN."""
    if math.isnan(v):
        return None, None
    if name == "fp32":
        f = np.float32(v)
        with np.errstate(over="ignore"):
            up = float(np.nextafter(f, np.float32(np.inf))) if v != math.inf else None
            down = float(np.nextafter(f, np.float32(-np.inf))) if v != -math.inf else None
        return down, up
    allv = every_value(name)
    i = bisect_left(allv, v)
    down = allv[i - 1] if i > 0 else None
    up = allv[i + 1] if i + 1 < len(allv) else None
    # IEEE nextUp / nextDown: a zero is reached from below as -0, from above as +0.
    if up == 0:
        up = -0.0
    if down == 0:
        down = 0.0
    return down, up


def check_stored(name, got, want_bits):
    assert got["bits"] == want_bits, (name, got, hex(want_bits))
    assert got["bits_hex"] == f"0x{want_bits:0{width(name) // 4}x}"
    check_exact(got["exact"], decode(name, want_bits))


def check_fields(name, d, bits, v):
    dt = FLOATS[name][0]
    info = ml_dtypes.finfo(dt)
    w, mbits = width(name), int(info.nmant)
    ebits = w - 1 - mbits
    e = (bits >> mbits) & ((1 << ebits) - 1)
    want = [{"name": "sign", "bits": f"[{w - 1}]", "value": bits >> (w - 1)},
            {"name": "exponent", "bits": f"[{w - 2}:{mbits}]", "value": e},
            {"name": "mantissa", "bits": f"[{mbits - 1}:0]", "value": bits & ((1 << mbits) - 1)}]
    bias = (1 << (ebits - 1)) - 1
    want[1]["unbiased"] = None if not math.isfinite(v) else max(e, 1) - bias
    assert d["fields"] == want, (name, hex(bits), d["fields"])
    tiny = float(info.smallest_normal)
    cls = ("nan" if math.isnan(v) else "inf" if math.isinf(v) else "zero" if v == 0
           else "subnormal" if abs(v) < tiny else "normal")
    assert d["class"] == cls, (name, hex(bits), d["class"])


def check_neighbours(name, d, v):
    down, up = neighbours(name, v)
    for key, want in (("next_down", down), ("next_up", up)):
        got = d[key]
        if want is None:
            assert got is None, (name, v, key, got)
            continue
        check_exact(got["exact"], want)
        assert decode(name, got["bits"]) == want or math.isnan(want)
    if up is not None and math.isfinite(up) and math.isfinite(v):
        assert frac(d["ulp"]) == Fraction(up) - Fraction(v), (name, v, d["ulp"])
    else:
        assert d["ulp"] is None, (name, v, d["ulp"])


def check_sr(name, d, x):
    """Stochastic rounding's outcomes and probabilities, from Fraction."""
    sr = d["sr"]
    if not math.isfinite(x):
        assert sr is None
        return
    a, sign = abs(x), -1 if math.copysign(1, x) < 0 else 1
    if name == "fp32":
        r = float(np.float32(a)) if a <= F32_MAX else math.inf
        with np.errstate(over="ignore"):
            lo = r if r <= a else float(np.nextafter(np.float32(r), np.float32(0)))
            hi = float(np.nextafter(np.float32(lo), np.float32(np.inf)))
    else:
        grid = GRIDS[name]
        enc = grid.trunc(a)
        lo = grid.g[enc] if enc <= grid.max_enc else math.inf
        hi = grid.g[enc + 1] if enc + 1 <= grid.max_enc else math.inf
    if lo == a or not math.isfinite(hi) or not math.isfinite(lo):
        assert sr is None, (name, x, sr)
        return
    p_up = (Fraction(a) - Fraction(lo)) / (Fraction(hi) - Fraction(lo))
    assert sr is not None, (name, x)
    check_exact(sr["down"]["exact"], math.copysign(lo, sign))
    check_exact(sr["up"]["exact"], math.copysign(hi, sign))
    assert sr["up"]["p"] == float(p_up), (name, x, sr)
    assert sr["down"]["p"] == float(1 - p_up), (name, x, sr)
    assert sr["p32_up"] == math.floor(p_up * 2**32) / 2**32
    assert sr["engine_uses"] == (name != "fp32")


def check_conversions(name, d, v, saturate):
    got = {c["dtype"]: c for c in d["conversions"]}
    assert [c["dtype"] for c in d["conversions"]] == [t for t in ORDER if t != name]
    for to, c in got.items():
        if to in INTS:
            assert c["exact"] == convert_oracle(v, to, saturate), (name, v, to, c)
            assert c["tag"] == "MODEL"
            continue
        want = convert_oracle(v, to, saturate)
        if math.isnan(want):
            sign = 1 << (width(to) - 1) if math.copysign(1, v) < 0 else 0
            assert c["bits"] == FLOATS[to][2] | sign, (name, v, to, c)  # canonical NaN, sign kept
        else:
            check_exact(c["exact"], want)
            assert decode(to, c["bits"]) == want or (want == 0)
        assert c["tag"] == "MED"


def check_float(name, d, text, saturate):
    assert (d["dtype"], d["input"], d["saturate"]) == (name, text, saturate)
    assert d["tag"] == ("MED" if name.startswith("fp8") or name == "fp16" else "HIGH")
    if text.lower().startswith("0x"):
        assert d["input_kind"] == "bits" and d["rne"] is None and d["sr"] is None
        bits = int(text, 16)
    else:
        x = float(text)
        assert d["input_kind"] == "value"
        bits = rne_bits(name, x, saturate)
        if math.isfinite(x):
            check_exact(d["input_exact"], x)
        rne = d["rne"]
        check_stored(name, rne, bits)
        v = decode(name, bits)
        if math.isfinite(x) and math.isfinite(v):
            err = Fraction(x) - Fraction(v)
            assert frac(rne["error"]) == err, (name, text, rne)
            assert rne["inexact"] == (err != 0)
        else:
            assert rne["error"] is None
        check_sr(name, d, x)
    check_stored(name, d, bits)
    v = decode(name, bits)
    assert d["value"] == (v if math.isfinite(v) else None)
    check_fields(name, d, bits, v)
    check_neighbours(name, d, v)
    check_conversions(name, d, v, saturate)


def decimals(name, rng):
    """Decimal texts: random magnitudes, midpoints and a hair either side, grid values, short
    decimals, specials."""
    m = fmax(name)
    tiny = float(ml_dtypes.finfo(FLOATS[name][0]).smallest_subnormal)
    if name == "fp32":
        pats = rng.integers(0, 0x7F800000, 300, dtype=np.uint64).astype(np.uint32)
        lo = pats.view(np.float32).astype(np.float64)
        hi = np.nextafter(pats.view(np.float32), np.float32(np.inf)).astype(np.float64)
    else:
        g = np.array(GRIDS[name].g)
        idx = rng.integers(0, len(g) - 1, 300)
        lo, hi = g[idx], g[idx + 1]
    # 40 of them among the subnormals and the first normals.
    if name == "fp32":
        sub = rng.integers(0, 0x01000000, 40, dtype=np.uint64).astype(np.uint32)
        lo[:40] = sub.view(np.float32)
        hi[:40] = np.nextafter(sub.view(np.float32), np.float32(np.inf))
    else:
        nmant = int(ml_dtypes.finfo(FLOATS[name][0]).nmant)
        idx = rng.integers(0, 2 << nmant, 40)
        lo[:40], hi[:40] = g[idx], g[idx + 1]
    mids = (lo + hi) / 2
    sign = np.where(rng.random(300) < 0.5, -1.0, 1.0)
    out = [repr(float(s * v)) for s, v in zip(sign, mids)]
    out += [repr(float(s * np.nextafter(v, np.inf))) for s, v in zip(sign[:100], mids[:100])]
    out += [repr(float(s * np.nextafter(v, 0))) for s, v in zip(sign[100:200], mids[100:200])]
    out += [repr(float(s * v)) for s, v in zip(sign[200:260], lo[200:260])]
    mags = np.exp(rng.uniform(math.log(tiny / 4), math.log(m * 4), 200))
    out += [repr(float(s * v)) for s, v in zip(sign[:200], mags)]
    out += [f"{s * v:.3g}" for s, v in zip(sign[:60], mags[:60])]
    out += [f"{v:.2f}" for v in rng.uniform(-6, 6, 40)]
    out += ["nan", "-nan", "NaN", "inf", "-inf", "infinity", "0", "-0", "0.0", "1e400", "-1e400",
            "1e-400", "-1e-400", "5e-324", repr(m), repr(-m), repr(tiny), repr(tiny / 2), repr(3 * tiny / 2),
            repr(m + (m - float(np.nextafter(np.float32(m), np.float32(0)))) / 2 if name == "fp32" else
                 (GRIDS[name].g[-1] + m) / 2), "1.3", "0.1", "-2.5e-3"]
    return out


def bit_patterns(name, rng):
    w = width(name)
    if w == 8:
        pats = list(range(256)) + [int(b) for b in rng.integers(0, 256, 400)]
    else:
        pats = [int(b) for b in rng.integers(0, 1 << w, 600, dtype=np.uint64)]
    pats += [0, 1 << (w - 1), 1, (1 << w) - 1, (1 << (w - 1)) - 1]
    return [f"0x{b:0{w // 4}x}" if i % 3 else f"0X{b:X}" for i, b in enumerate(pats)]


def run_cce(cce_bin, name, texts, saturate=False):
    args = [cce_bin, "value", "--dtype", name, "--json"] + (["--saturate"] if saturate else [])
    return subprocess.Popen(args + [f"--value={t}" for t in texts], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def result(proc):
    out, err = proc.communicate()
    assert proc.returncode == 0, err
    return json.loads(out)["values"]


@pytest.fixture(scope="module")
def float_runs(cce_bin):
    rng = np.random.default_rng(45)
    runs = {}
    for name in FLOATS:
        texts = bit_patterns(name, rng) + decimals(name, rng)
        sat = texts[::3]
        runs[name] = (texts, sat, run_cce(cce_bin, name, texts), run_cce(cce_bin, name, sat, saturate=True))
    return runs


@pytest.mark.parametrize("name", sorted(FLOATS))
def test_float_values(float_runs, name):
    texts, sat, plain, saturating = float_runs[name]
    assert len(texts) >= 1000
    for got, text in zip(result(plain), texts, strict=True):
        check_float(name, got, text, False)
    for got, text in zip(result(saturating), sat, strict=True):
        check_float(name, got, text, True)


def test_decimals_agree_with_ml_dtypes_but_for_its_rounding_through_float32():
    """ml_dtypes' float64 -> bfloat16 / float8 astype rounds twice (through float32), numpy's
    float64 -> float16 once: cce (and the grid oracle above) round once. Near a tie the two
    differ, and only there."""
    x = np.array([1 + 2.0**-8 + 2.0**-40])
    assert int(x.astype(ml_dtypes.bfloat16).view(np.uint16)[0]) == 0x3F80  # the tie, from float32
    assert rne_bits("bf16", float(x[0]), False) == 0x3F81
    rng = np.random.default_rng(7)
    differ = 0
    for name in ["bf16", "fp8e4", "fp8e5", "fp8e3", "fp8e4fn", "fp16"]:
        for t in decimals(name, rng):
            xv = float(t)
            with np.errstate(over="ignore", invalid="ignore"):
                ml = int(np.array([xv]).astype(FLOATS[name][0]).view(FLOATS[name][1])[0])
                via32 = float(np.float32(xv))
            ours = rne_bits(name, xv, False)
            if math.isnan(xv) or ml == ours:
                continue
            differ += 1
            assert name != "fp16", (t, hex(ml), hex(ours))
            assert ml == rne_bits(name, via32, False), (name, t, hex(ml), hex(ours))
    assert differ > 0, "the near-ties include some that float32 rounds onto the tie"


def int_range(name):
    bits, signed = INTS[name]
    return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)


def wrap(v, name):
    """v in the integer dtype `name`, two's complement (numpy's astype)."""
    bits, signed = INTS[name]
    raw = v % (1 << bits)
    return raw - (1 << bits) if signed and raw >> (bits - 1) else raw


def check_int(name, d, text, saturate):
    bits = INTS[name][0]
    lo, hi = int_range(name)
    raw = int(text, 16) if text.startswith("0x") else int(text) % (1 << bits)
    v = wrap(raw, name)
    assert (d["bits"], d["exact"], d["class"], d["saturate"]) == (raw, str(v), "integer", saturate)
    assert d["fields"] == [{"name": "value", "bits": f"[{bits - 1}:0]", "value": v}]
    assert (d["next_up"] or {}).get("exact") == (str(v + 1) if v < hi else None)
    assert (d["next_down"] or {}).get("exact") == (str(v - 1) if v > lo else None)
    assert d["ulp"] == ("1" if v < hi else None)
    for c in d["conversions"]:
        to = c["dtype"]
        if to in INTS:  # wraps; clamps with --saturate
            tlo, thi = int_range(to)
            want = min(max(v, tlo), thi) if saturate else wrap(v, to)
            assert c["exact"] == str(want), (name, v, to, c)
        else:
            check_exact(c["exact"], int_to_float(v, to, saturate))
        assert c["tag"] == "MODEL"


def test_integer_values(cce_bin):
    rng = np.random.default_rng(46)
    procs = {}
    for name, (bits, signed) in INTS.items():
        lo, hi = int_range(name)
        draw = rng.integers(lo, hi, 120, dtype=np.uint64 if hi >= 1 << 63 else np.int64, endpoint=True)
        vals = [lo, hi, 0, 1, lo + 1, hi - 1] + [int(v) for v in draw]
        pats = rng.integers(0, 1 << min(bits, 63), 40, dtype=np.uint64)
        texts = [str(v) for v in vals] + [f"0x{int(b):x}" for b in pats]
        procs[name] = (texts, run_cce(cce_bin, name, texts), run_cce(cce_bin, name, texts[:40], saturate=True))
    for name, (texts, plain, saturating) in procs.items():
        for d, text in zip(result(plain), texts, strict=True):
            check_int(name, d, text, False)
        for d, text in zip(result(saturating), texts[:40], strict=True):
            check_int(name, d, text, True)


def int_to_float(v, to, saturate):
    """An integer correctly rounded (nearest even) into a float dtype, exactly."""
    if to == "fp32":
        a = abs(v)
        if a >= 1 << 24:  # keep 24 significant bits, ties to even, by integer arithmetic
            s = a.bit_length() - 24
            q, r = divmod(a, 1 << s)
            half = 1 << (s - 1)
            q += r > half or (r == half and q % 2 == 1)
            a = q << s
        return math.copysign(float(a), v) if v else 0.0
    grid = GRIDS[to]
    enc = grid.rne(abs(v))  # Python compares int and float exactly
    if enc > grid.max_enc:
        if saturate:
            return math.copysign(fmax(to), v)
        return decode(to, enc | ((1 << (width(to) - 1)) if v < 0 else 0))
    return math.copysign(grid.g[enc], v) if v else 0.0


def test_the_python_call_is_the_cli_object():
    """cce.value(dtype, value) is `cce value --dtype DTYPE VALUE --json`'s object (a thin front
    over the same library call); a refusal raises CceError with the CLI's message."""
    import os

    import cce

    binary = os.environ.get("CCE_BIN", "cce")
    for dtype, text, saturate in [("bf16", "1.3", False), ("fp8e4", "1000", True), ("fp16", "0x7e01", False),
                                  ("i16", "-1234", False), ("fp32", "-inf", False)]:
        args = [binary, "value", "--dtype", dtype, "--value", text, "--json"] + (["--saturate"] if saturate else [])
        want = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)
        assert cce.value(dtype, text, saturate=saturate) == want, (dtype, text)
    assert cce.value("bf16", 1.5)["bits_hex"] == "0x3fc0"
    with pytest.raises(cce.CceError, match="dtype"):
        cce.value("bf17", "1")
    with pytest.raises(cce.CceError):
        cce.value("fp8e4", "0x1ff")
