#!/usr/bin/env python3
"""Independent reference for the GCE model codec (docs/MODEL.md "GCE codec"), numpy + ml_dtypes.

Written from the codec's specification, not from the Rust:
  blocks of B consecutive float32 values (the last may be shorter);
  scale: amax = max |x| over the block's finite elements; E = -127 if amax == 0 (or none is
         finite), else the smallest integer E with amax <= 57344 * 2^E (exact rationals),
         then E = max(E, -127); scale byte = E + 127;
  element: q = float8_e5m2(x * float32(2^-E)): a float32 product, then ml_dtypes' RNE cast;
  decode: x_hat = float64(float8_e5m2 q) * 2^E (exact in float64); a finite code whose
          product exceeds float32 max gives +-float32 max; +-inf stays; a NaN code gives the
          float32 quiet NaN 0x7FC00000 with the code's sign bit; then float32 (exact).

Usage: gce_ref.py DIR
DIR/manifest.json is a list of cases:
  {"name": N, "kind": "compress", "block": B}: reads DIR/N.f32 (little-endian float32) and
      writes DIR/N.scales, DIR/N.payload and DIR/N.decoded (the decode of what it wrote,
      little-endian float32 bits);
  {"name": N, "kind": "decode", "block": B}: reads DIR/N.scales and DIR/N.payload, writes
      DIR/N.decoded.
"""
import json
import sys
from fractions import Fraction

try:
    import ml_dtypes
    import numpy as np
except ImportError:  # pragma: no cover
    sys.exit("gce_ref.py needs numpy and ml_dtypes: run scripts/test (it installs them into .venv), or pip install -r scripts/requirements.txt")

E5M2 = ml_dtypes.float8_e5m2
E5M2_MAX = 57344
E_MIN = -127
F32_MAX = float(np.finfo(np.float32).max)


def scale_exponent(block: np.ndarray) -> int:
    finite = block[np.isfinite(block)]
    amax = Fraction(float(np.max(np.abs(finite)))) if finite.size else Fraction(0)
    if amax == 0:
        return E_MIN
    ratio = amax / E5M2_MAX
    # Smallest E with ratio <= 2^E: start near log2 and step to it.
    e = ratio.numerator.bit_length() - ratio.denominator.bit_length()
    while ratio > Fraction(2) ** e:
        e += 1
    while ratio <= Fraction(2) ** (e - 1):
        e -= 1
    return max(e, E_MIN)


def compress(values: np.ndarray, block: int) -> tuple[np.ndarray, np.ndarray]:
    n = values.size
    scales = np.zeros((n + block - 1) // block, dtype=np.uint8)
    payload = np.zeros(n, dtype=np.uint8)
    for b in range(scales.size):
        blk = values[b * block : (b + 1) * block]
        e = scale_exponent(blk)
        scales[b] = e + 127
        v = blk * np.float32(2.0**-e)
        assert v.dtype == np.float32
        with np.errstate(invalid="ignore", over="ignore"):
            payload[b * block : (b + 1) * block] = v.astype(E5M2).view(np.uint8)
    return scales, payload


def decode(scales: np.ndarray, payload: np.ndarray, block: int) -> np.ndarray:
    if scales.size != (payload.size + block - 1) // block:
        sys.exit(f"{scales.size} scales for {payload.size} elements in blocks of {block}")
    e = scales.astype(np.int64).repeat(block)[: payload.size] - 127
    d = payload.view(E5M2).astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        p = d * np.exp2(e.astype(np.float64))
        finite = np.isfinite(d)
        p = np.where(finite & (p > F32_MAX), F32_MAX, p)
        p = np.where(finite & (p < -F32_MAX), -F32_MAX, p)
        out = p.astype(np.float32)
    if not np.array_equal(out.astype(np.float64)[finite], p[finite]):
        sys.exit("a finite decode was not exact in float32")
    bits = out.view(np.uint32).copy()
    nan = ((payload & 0x7C) == 0x7C) & ((payload & 0x03) != 0)
    sign = (payload.astype(np.uint32) & 0x80) << 24
    bits[nan] = 0x7FC00000 | sign[nan]
    return bits


def main() -> int:
    d = sys.argv[1]
    with open(f"{d}/manifest.json") as f:
        cases = json.load(f)
    for c in cases:
        name, block = c["name"], int(c["block"])
        if c["kind"] == "compress":
            values = np.fromfile(f"{d}/{name}.f32", dtype="<f4").astype(np.float32)
            scales, payload = compress(values, block)
            scales.tofile(f"{d}/{name}.scales")
            payload.tofile(f"{d}/{name}.payload")
        elif c["kind"] == "decode":
            scales = np.fromfile(f"{d}/{name}.scales", dtype=np.uint8)
            payload = np.fromfile(f"{d}/{name}.payload", dtype=np.uint8)
        else:
            sys.exit(f"unknown case kind {c['kind']!r}")
        decode(scales, payload, block).astype("<u4").tofile(f"{d}/{name}.decoded")
    print(f"gce_ref.py: {len(cases)} cases")
    return 0


if __name__ == "__main__":
    sys.exit(main())
