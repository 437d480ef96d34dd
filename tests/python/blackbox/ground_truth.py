"""Establishing and checking the libraries' ground truths (the work behind library_orders.py).

    python ground_truth.py search LIB R DTYPE [N]   # every tree over R ranks, kept where it
                                                    # reproduces the library's output bits
    python ground_truth.py check LIB R DTYPE [N]    # library_orders' classes vs. the output

LIB is ompi1 … ompi6 (Open MPI's allreduce algorithm), gloo or xla. search runs the black box on
10 sets of random inputs (differing per rank and element) and prints the classes that the
exhaustive search of scripts/tree_ref.py leaves, and any element it cannot pin to one tree;
check evaluates library_orders' classes with tree_ref on fresh random inputs and compares bits."""
import sys

import numpy as np

import harness
import library_orders as L
import tree_ref as T


def command(lib, r, dtype):
    if lib.startswith("ompi"):
        return harness.mpi_cmd(r, int(lib[4:]), dtype)
    if lib == "gloo":
        return harness.script_cmd("gloo_allreduce.py", dtype, r)
    if lib == "xla":
        return harness.script_cmd("xla_psum.py", dtype, r)
    raise ValueError(lib)


def expected(lib, r, n, dtype):
    if lib.startswith("ompi"):
        return L.ompi(int(lib[4:]), r, n, dtype)
    if lib == "gloo":
        return L.gloo_ring(r, n, dtype)
    if lib == "xla":
        return L.xla_psum(r, n, dtype)
    raise ValueError(lib)


def check(lib, r, dtype, n, trials=2, seed=7):
    """The number of (rank, element) outputs where library_orders' classes disagree with the
    library, over `trials` random inputs."""
    rng = np.random.default_rng(seed)
    classes = expected(lib, r, n, dtype)
    run = harness.runner(command(lib, r, dtype), dtype)
    bad = 0
    for _ in range(trials):
        x = T.random_inputs(r, n, dtype, rng)
        got = run(x)
        want = T.apply_classes(classes, x, dtype)
        for a, b in zip(got, want):
            bad += int((a.view(np.uint8).reshape(n, -1) != b.view(np.uint8).reshape(n, -1)).any(axis=1).sum())
    return bad


def main():
    mode, lib, r, dtype = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    n = int(sys.argv[5]) if len(sys.argv) > 5 else 4 * r + 3
    if mode == "search":
        cands, ok = T.search(harness.runner(command(lib, r, dtype), dtype), r, n, dtype)
        classes, problems = T.classes_of(cands, ok)
        print(f"{lib} R={r} {dtype} N={n}: search")
        for c in classes:
            print("   ", c)
        for p in problems:
            print("    ?", p)
        try:
            want = T.canon_classes(expected(lib, r, n, dtype), dtype)
            print("    library_orders agrees:", want == T.canon_classes(classes, dtype))
        except NotImplementedError as e:
            print("    library_orders has no order here:", e)
    else:
        print(f"{lib} R={r} {dtype} N={n}: elements that differ from library_orders:",
              check(lib, r, dtype, n))


if __name__ == "__main__":
    main()
