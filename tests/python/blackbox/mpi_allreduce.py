"""A black box for `cce reveal`: Open MPI's MPI_Allreduce (SUM) through mpi4py.

    mpirun -n R --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_allreduce_algorithm ALGO \
        python mpi_allreduce.py IN OUT DTYPE ALGO

Each MPI process is one rank: it reads IN/rank{r}.bin and writes OUT/rank{r}.bin. ALGO is only
checked against the MCA setting (the mpirun line chooses the algorithm; 0 leaves it to tuned's
rules). DTYPE fp32 (MPI.FLOAT); fp16 where the MPI library has a half type (Open MPI 4.1 has
none: refused with exit 2)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bbio import read_rank, write_rank  # noqa: E402


def main():
    indir, outdir, dtype, algo = sys.argv[1:5]
    if dtype != "fp32":
        print(f"mpi_allreduce.py: dtype {dtype}: Open MPI 4.1 has no 16-bit float type", file=sys.stderr)
        sys.exit(2)
    forced = os.environ.get("OMPI_MCA_coll_tuned_allreduce_algorithm")
    if forced is not None and forced != algo:
        print(f"mpi_allreduce.py: ALGO {algo} but the MCA setting says {forced}", file=sys.stderr)
        sys.exit(2)
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    x = read_rank(indir, rank, dtype)
    y = x.copy()
    comm.Allreduce(x, y, op=MPI.SUM)
    write_rank(outdir, rank, y, dtype)


if __name__ == "__main__":
    main()
