#!/usr/bin/env python3
"""Where `cce allreduce --algo auto` changes its choice: the model's size bands per algorithm.

For each rank count, asks `cce allreduce --explain --json` at sizes from 1 KiB to 1 GiB per rank
in steps of 2^(1/4) and prints each algorithm's band by bytes per rank (bf16, add). Extra
arguments go to every cce call (e.g. --arch 2, --latency-us 20).
Usage: crossovers.py [--cce PATH] [--ranks 16,32,64] [cce flags...]
"""
import argparse
import json
import subprocess


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cce", default="target/release/cce")
    ap.add_argument("--ranks", default="16,32,64")
    args, extra = ap.parse_known_args()
    for r in (int(x) for x in args.ranks.split(",")):
        bands, elems = [], 512.0
        while elems <= 2**29:
            out = subprocess.check_output([args.cce, "allreduce", "--ranks", str(r), "--algo", "auto", "--op", "add",
                                           "--dtype", "bf16", "--elems", str(int(elems)), "--explain", "--json", *extra])
            algo = json.loads(out)["algo"]
            if not bands or bands[-1][0] != algo:
                bands.append((algo, int(elems) * 2))
            elems *= 2 ** 0.25
        text = ", ".join(f"{a} from {b / 1e6:.3g} MB" for a, b in bands)
        print(f"R={r} {' '.join(extra)}: {text}")


if __name__ == "__main__":
    main()
