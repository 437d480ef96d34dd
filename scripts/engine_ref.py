#!/usr/bin/env python3
"""Independent reference for `cce reduce` (numpy + ml_dtypes; exact rationals for FMA).

Computes, in source order, what docs/MODEL.md ("Numerics") specifies for a reduce and compares it bit for
bit with the destination files `cce reduce` wrote:
  ADD:     acc = conv(src0); acc = acc + conv(src_i)       (numpy fp32 / int32 arithmetic)
  MIN/MAX: running np.minimum / np.maximum, then min/max with the clamp constant
  FMA:     acc = 0; acc = round_f32(src_i * scale_i + acc)  (exact Fraction, one rounding)
  out = acc.astype(out dtype)                              (ml_dtypes: round to nearest even)
Exit 0 when every destination matches; 1 with the first mismatch otherwise.
Usage: engine_ref.py --op add --in bf16 --accum fp32 --out bf16 --src a b --dst out
       [--scale 0.5 ...] [--const 1.5 --const-dtype bf16]
"""
import argparse
import sys
from fractions import Fraction

try:
    import ml_dtypes
    import numpy as np
except ImportError:  # pragma: no cover
    sys.exit("engine_ref.py needs numpy and ml_dtypes: run scripts/test (it installs them into .venv), or pip install -r scripts/requirements.txt")

DTYPES = {
    "bf16": ml_dtypes.bfloat16, "fp16": np.float16, "fp32": np.float32,
    "fp8e3": ml_dtypes.float8_e3m4, "fp8e4": ml_dtypes.float8_e4m3, "fp8e5": ml_dtypes.float8_e5m2,
    "i8": np.int8, "u8": np.uint8, "i16": np.int16, "u16": np.uint16, "i32": np.int32, "u32": np.uint32,
}


def round_f32(fr: Fraction) -> np.float32:
    """The float32 nearest to an exact rational, ties to even; overflow to ±inf."""
    if fr == 0:
        return np.float32(0.0)
    neg, a = fr < 0, abs(fr)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    while Fraction(2) ** e > a:
        e -= 1
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    e = max(e, -126)  # subnormals share the quantum 2^-149
    q = Fraction(2) ** (e - 23)
    m = a / q
    n = m.numerator // m.denominator
    rem = m - n
    if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and n % 2 == 1):
        n += 1
    val = n * q
    if val > Fraction(int(np.finfo(np.float32).max)):
        return np.float32(-np.inf if neg else np.inf)
    return np.float32(-float(val) if neg else float(val))


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--op", required=True)
    p.add_argument("--in", dest="in_dt", required=True)
    p.add_argument("--accum", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--src", nargs="+", required=True)
    p.add_argument("--dst", nargs="+", required=True)
    p.add_argument("--scale", nargs="*", type=float, default=[])
    p.add_argument("--const")
    p.add_argument("--const-dtype")
    a = p.parse_args()
    srcs = [np.fromfile(f, dtype=DTYPES[a.in_dt]) for f in a.src]
    acc_t = DTYPES[a.accum]
    if a.op == "fma":
        scales = a.scale or [1.0]
        if len(scales) == 1:
            scales = scales * len(srcs)
        acc = [Fraction(0)] * len(srcs[0])
        acc32 = np.zeros(len(srcs[0]), dtype=np.float32)
        for s, sc in zip(srcs, scales):
            sc32 = Fraction(float(np.float32(sc)))
            x = s.astype(np.float32)
            acc32 = np.array([round_f32(Fraction(float(v)) * sc32 + Fraction(float(c))) for v, c in zip(x, acc32)], dtype=np.float32)
        acc = acc32
    else:
        with np.errstate(over="ignore", invalid="ignore"):
            acc = srcs[0].astype(acc_t)
            for s in srcs[1:]:
                v = s.astype(acc_t)
                if a.op == "add":
                    acc = (acc + v).astype(acc_t)
                elif a.op == "min":
                    acc = np.minimum(acc, v)
                elif a.op == "max":
                    acc = np.maximum(acc, v)
            if a.const is not None:
                cdt = DTYPES[a.const_dtype or a.in_dt]
                c = cdt(float(a.const)) if np.issubdtype(np.dtype(cdt), np.floating) or cdt in (ml_dtypes.bfloat16,) else cdt(int(a.const))
                c = np.array([c]).astype(acc_t)[0]
                acc = np.minimum(acc, c) if a.op == "min" else np.maximum(acc, c)
    with np.errstate(over="ignore", invalid="ignore"):
        want = np.asarray(acc).astype(DTYPES[a.out]).tobytes()
    for f in a.dst:
        got = open(f, "rb").read()
        if got != want:
            w = np.frombuffer(want, dtype=DTYPES[a.out])
            g = np.frombuffer(got, dtype=DTYPES[a.out]) if len(got) == len(want) else None
            if g is None:
                print(f"{f}: {len(got)} bytes, expected {len(want)}")
                return 1
            bad = np.nonzero(w.view(np.uint8 if w.itemsize == 1 else f"u{w.itemsize}") != g.view(np.uint8 if w.itemsize == 1 else f"u{w.itemsize}"))[0]
            i = bad[0]
            print(f"{f}: {len(bad)} of {len(w)} elements differ; first at {i}: got {g[i]!r}, expected {w[i]!r}")
            return 1
    print(f"ok: {len(a.dst)} destination(s), {len(srcs[0])} elements, {len(srcs)} sources")
    return 0


if __name__ == "__main__":
    sys.exit(main())
