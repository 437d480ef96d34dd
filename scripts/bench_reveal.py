#!/usr/bin/env python3
"""The cost of `cce reveal` beyond its black box's runs: cce's own all-reduces revealed at 64
ranks (mesh at 32, its most sources) x 1 Mi elements of bf16, each through
`cce allreduce --input-dir {in} --output-dir {out}` as the black box.

Prints, per algorithm: whether it was revealed, the runs, the classes, the whole command's wall
time (measured here, around the process), the black box's runs' share (the reveal's own JSON
`black_box_seconds`) and the difference — the reveal's own cost — and the peak RSS of the
reveal process. Usage: bench_reveal.py [--cce PATH] [--elems N] [--ranks R]
"""
import argparse
import json
import resource
import subprocess
import time

CASES = [
    ("ring", "--algo ring", None),
    ("kangaring", "--algo kangaring", None),
    ("mesh", "--algo mesh", 32),
    ("rdh", "--algo rdh", None),
    ("hier(kangaring/rdh)", "--nodes 2 --ranks-per-node {half} --algo hier --intra kangaring --inter rdh", None),
]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cce", default="target/release/cce")
    ap.add_argument("--elems", type=int, default=1 << 20)
    ap.add_argument("--ranks", type=int, default=64)
    args = ap.parse_args()
    print(f"{'algorithm':22} {'ranks':>5} {'revealed':>8} {'runs':>4} {'classes':>7} {'wall s':>7} "
          f"{'box s':>6} {'own s':>6} {'RSS MiB':>8}")
    for name, flags, ranks in CASES:
        r = ranks or args.ranks
        spec = flags.format(half=r // 2)
        box = (f"{args.cce} allreduce --ranks {r} {spec} --op add --dtype bf16 --elems {args.elems} "
               f"--input-dir {{in}} --output-dir {{out}} --check none")
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        t = time.perf_counter()
        p = subprocess.run([args.cce, "reveal", "--run", box, "--ranks", str(r), "--elems", str(args.elems),
                            "--dtype", "bf16", "--json"], capture_output=True, text=True)
        wall = time.perf_counter() - t
        rss = max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024
        a = json.loads(p.stdout)
        own = wall - a["black_box_seconds"]
        print(f"{name:22} {r:>5} {str(a['revealed']):>8} {a['runs']:>4} {len(a['classes']):>7} {wall:>7.2f} "
              f"{a['black_box_seconds']:>6.2f} {own:>6.2f} {rss:>8.0f}")


if __name__ == "__main__":
    main()
