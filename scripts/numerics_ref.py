#!/usr/bin/env python3
"""Reference vectors for cce-numerics, from numpy + ml_dtypes (the independent oracle).

Usage: python3 scripts/numerics_ref.py OUT_DIR

Writes little-endian binary files and OUT_DIR/manifest.json:
  decode_<fmt>.bin      every pattern of an 8/16-bit float format, decoded to f32 bits (u32)
  f32_stride.json info  inputs are the f32 patterns i*251 (not stored), outputs per format
  narrow_stride_<fmt>.bin   RNE of every 251st f32 pattern into <fmt>
  extra_in.bin          f32 specials, every tie and near-tie of every format, overflow edges
  narrow_extra_<fmt>.bin    RNE of extra_in into <fmt>
  toint_extra_<int>.bin     extra_in -> int: round half to even, saturate, NaN -> 0
  reduce_<case>_src<k>.bin / reduce_<case>_out.bin   element-wise reductions in source order
"""
import json
import os
import sys

try:
    import ml_dtypes
    import numpy as np
except ImportError:  # pragma: no cover
    sys.stderr.write("numerics_ref.py needs numpy and ml_dtypes: run scripts/test (it installs them into .venv), or pip install -r scripts/requirements.txt\n")
    sys.exit(3)

FMTS = {
    "bf16": ml_dtypes.bfloat16,
    "fp16": np.float16,
    "fp8e3": ml_dtypes.float8_e3m4,
    "fp8e4": ml_dtypes.float8_e4m3,
    "fp8e5": ml_dtypes.float8_e5m2,
    "fp8e4fn": ml_dtypes.float8_e4m3fn,
}
INTS = {"u8": np.uint8, "i8": np.int8, "u16": np.uint16, "i16": np.int16,
        "u32": np.uint32, "i32": np.int32, "u64": np.uint64, "i64": np.int64}
STRIDE = 251


def bits_dtype(dt):
    return np.uint16 if np.dtype(dt).itemsize == 2 else np.uint8


def all_patterns(dt):
    bd = bits_dtype(dt)
    return np.arange(1 << (8 * np.dtype(dt).itemsize), dtype=np.uint64).astype(bd).view(dt)


def f32_from_bits(a):
    return np.asarray(a, dtype=np.uint32).view(np.float32)


def extra_inputs():
    vals = [0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001,
            0xFF800001, 0x7FBFFFFF, 0x7FFFFFFF, 0xFFFFFFFF, 0x00000001, 0x80000001, 0x007FFFFF,
            0x00800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x3F800000, 0xBF800000]
    out = [np.array(vals, dtype=np.uint32)]
    for name, dt in FMTS.items():
        with np.errstate(all="ignore"):
            v = all_patterns(dt).astype(np.float64)
        v = v[np.isfinite(v)]
        v = np.unique(v)  # sorted, -0 and +0 merged
        mids = (v[:-1] + v[1:]) / 2  # exact in f64, fit in f32 (<= 17 significant bits)
        fi = ml_dtypes.finfo(dt)
        mx = float(fi.max)
        # spacing in the top binade: the would-be next value is max + ulp(max)
        ulp = float(v[-1] - v[-2])
        edges = np.array([mx, mx + ulp / 2, mx + ulp, 2 * mx, mx + ulp / 4, mx + 3 * ulp / 4,
                          float(fi.smallest_subnormal) / 2, float(fi.smallest_subnormal) / 4,
                          float(fi.smallest_subnormal) * 0.75], dtype=np.float64)
        for arr in (v, mids, edges, -edges):
            with np.errstate(all="ignore"):
                b = arr.astype(np.float32).view(np.uint32)
            out += [b, b + np.uint32(1), b - np.uint32(1)]
    allv = np.concatenate(out)
    return np.unique(allv)


def to_int_ref(x32, it):
    info = np.iinfo(it)
    x = x32.astype(np.float64)
    r = np.rint(x)  # round half to even
    r = np.where(np.isnan(r), 0.0, r)
    lo, hi = float(info.min), float(info.max)
    res = np.empty(x.shape, dtype=it)
    big = r >= hi  # hi may not be exact in f64 (u64, i64): saturate explicitly
    small = r <= lo
    mid = ~(big | small)
    res[mid] = r[mid].astype(it)
    res[big] = info.max
    res[small] = info.min
    return res


def rand_bits(rng, n, dt):
    size = np.dtype(dt).itemsize
    raw = rng.integers(0, 256, size=n * size, dtype=np.uint8)
    return raw.view(dt).copy()


def rand_floats(rng, n, dt, special_frac=0.02):
    """Random values of a float type: mostly moderate, some random bit patterns (inf, NaN)."""
    v = (rng.standard_normal(n) * np.exp2(rng.integers(-6, 6, size=n))).astype(np.float32)
    v = v.astype(dt)
    k = int(n * special_frac)
    idx = rng.choice(n, size=k, replace=False)
    v[idx] = rand_bits(rng, k, dt)
    return v


def to_acc(x, acc):
    """Converts a source array into the accumulate dtype like the model: floats exactly/RNE,
    float -> int by RNE + saturate + NaN -> 0, int -> int by two's-complement wrap."""
    if np.dtype(acc).kind in "iu":
        if x.dtype.kind in "iu":
            return x.astype(acc)
        return to_int_ref(x.astype(np.float32), acc)
    return x.astype(acc)


def reduce_case(rng, name, op, tin, tacc, tout, nsrc, n, clamp=None):
    din = FMTS.get(tin) or INTS.get(tin) or np.float32
    dacc = FMTS.get(tacc) or INTS.get(tacc) or np.float32
    dout = FMTS.get(tout) or INTS.get(tout) or np.float32
    if np.dtype(din).kind in "iu":
        srcs = [rand_bits(rng, n, din) for _ in range(nsrc)]
    else:
        srcs = [rand_floats(rng, n, din) for _ in range(nsrc)]
    with np.errstate(all="ignore"):
        acc = to_acc(srcs[0], dacc)
        for s in srcs[1:]:
            x = to_acc(s, dacc)
            if op == "add":
                acc = (acc + x).astype(dacc)
            elif op == "min":
                acc = np.minimum(acc, x)
            else:
                acc = np.maximum(acc, x)
        if clamp is not None:
            c = np.array(clamp).astype(dacc)
            acc = np.minimum(acc, c) if op == "min" else np.maximum(acc, c)
        if np.dtype(dout).kind in "iu":
            if np.dtype(dacc).kind in "iu":
                out = acc.astype(dout)  # wrap
            else:
                out = to_int_ref(acc.astype(np.float32), dout)
        else:
            out = acc.astype(dout)
    files = []
    for k, s in enumerate(srcs):
        f = f"reduce_{name}_src{k}.bin"
        s.tofile(os.path.join(OUT, f))
        files.append(f)
    out.tofile(os.path.join(OUT, f"reduce_{name}_out.bin"))
    return {"name": name, "op": op, "in": tin, "acc": tacc, "out": tout, "sources": files,
            "output": f"reduce_{name}_out.bin", "n": n, "clamp": clamp}


def main():
    global OUT
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        sys.exit(2)
    OUT = sys.argv[1]
    os.makedirs(OUT, exist_ok=True)
    manifest = {"ml_dtypes": ml_dtypes.__version__, "numpy": np.__version__, "stride": STRIDE,
                "formats": list(FMTS), "ints": list(INTS)}

    for name, dt in FMTS.items():
        f32 = all_patterns(dt).astype(np.float32)
        f32.view(np.uint32).tofile(os.path.join(OUT, f"decode_{name}.bin"))

    stride_in = f32_from_bits(np.arange(0, 1 << 32, STRIDE, dtype=np.uint64).astype(np.uint32))
    manifest["stride_count"] = int(stride_in.size)
    extra = extra_inputs()
    extra.tofile(os.path.join(OUT, "extra_in.bin"))
    manifest["extra_count"] = int(extra.size)
    extra_f = extra.view(np.float32)
    with np.errstate(all="ignore"):
        for name, dt in FMTS.items():
            stride_in.astype(dt).view(bits_dtype(dt)).tofile(os.path.join(OUT, f"narrow_stride_{name}.bin"))
            extra_f.astype(dt).view(bits_dtype(dt)).tofile(os.path.join(OUT, f"narrow_extra_{name}.bin"))
        for name, it in INTS.items():
            to_int_ref(extra_f, it).tofile(os.path.join(OUT, f"toint_extra_{name}.bin"))

    rng = np.random.default_rng(20261130)
    n = 20000
    cases = [
        ("add", "bf16", "fp32", "bf16", 4),
        ("add", "fp16", "fp32", "fp16", 3),
        ("add", "fp8e4", "fp32", "fp8e4", 4),
        ("add", "fp8e5", "fp32", "fp8e5", 2),
        ("add", "fp8e3", "fp32", "bf16", 5),
        ("add", "fp8e4fn", "fp32", "fp8e4fn", 3),
        ("add", "fp8e3", "fp32", "fp8e3", 6),
        ("add", "fp8e5", "fp32", "fp8e5", 1),
        ("add", "fp32", "fp32", "fp32", 4),
        ("add", "fp32", "fp32", "bf16", 32),
        ("add", "bf16", "bf16", "bf16", 3),
        ("add", "fp16", "fp16", "fp8e5", 3),
        ("add", "bf16", "fp32", "fp16", 1),
        ("add", "i8", "i32", "i8", 4),
        ("add", "u8", "u8", "u8", 3),
        ("add", "i32", "i64", "i32", 2),
        ("add", "i16", "fp32", "bf16", 3),
        ("add", "bf16", "i32", "i16", 2),
        ("min", "bf16", "fp32", "bf16", 4),
        ("max", "fp16", "fp32", "fp8e4", 3),
        ("max", "i16", "i16", "i16", 3),
        ("min", "u32", "u32", "u32", 2),
        ("max", "fp8e5", "bf16", "fp8e5", 4),
    ]
    out_cases = []
    for k, (op, tin, tacc, tout, nsrc) in enumerate(cases):
        out_cases.append(reduce_case(rng, f"{k}_{op}_{tin}_{tacc}_{tout}_{nsrc}", op, tin, tacc, tout, nsrc, n))
    out_cases.append(reduce_case(rng, "clamp_min_bf16", "min", "bf16", "fp32", "bf16", 3, n, clamp=0.5))
    out_cases.append(reduce_case(rng, "clamp_max_fp16", "max", "fp16", "fp32", "fp16", 2, n, clamp=-1.25))
    out_cases.append(reduce_case(rng, "clamp_max_i8", "max", "i8", "i32", "i8", 2, n, clamp=-3))
    manifest["reduce"] = out_cases
    with open(os.path.join(OUT, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)


if __name__ == "__main__":
    main()
