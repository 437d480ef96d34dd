"""Running a black box's command as `cce reveal` does (the CMD contract), for the tests' own
ground truths: write the inputs to a fresh IN directory, run the command through the shell with
{in} and {out} replaced, read every rank's output back."""
import os
import shlex
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "scripts"))
from bbio import read_rank, write_rank  # noqa: E402

PY = shlex.quote(sys.executable)
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


def mpi_cmd(ranks, algo, dtype="fp32"):
    """The mpirun line for Open MPI's allreduce algorithm ALGO (coll/tuned forced)."""
    return (f"mpirun -n {ranks} --oversubscribe --mca coll_tuned_use_dynamic_rules 1 "
            f"--mca coll_tuned_allreduce_algorithm {algo} {PY} {shlex.quote(os.path.join(HERE, 'mpi_allreduce.py'))} "
            f"{{in}} {{out}} {dtype} {algo}")


def script_cmd(name, *args):
    return " ".join([PY, shlex.quote(os.path.join(HERE, name)), "{in}", "{out}", *map(str, args)])


def run_cmd(cmd, inputs, dtype, timeout=3600):
    """The outputs of one run of cmd on inputs (a list of per-rank arrays)."""
    with tempfile.TemporaryDirectory() as tmp:
        indir, outdir = os.path.join(tmp, "in"), os.path.join(tmp, "out")
        os.makedirs(indir)
        os.makedirs(outdir)
        for r, x in enumerate(inputs):
            write_rank(indir, r, x, dtype)
        line = cmd.replace("{in}", shlex.quote(indir)).replace("{out}", shlex.quote(outdir))
        env = dict(os.environ, **MPI_ENV)
        p = subprocess.run(line, shell=True, capture_output=True, text=True, timeout=timeout, env=env)
        if p.returncode != 0:
            raise RuntimeError(f"{line}: exit {p.returncode}: {p.stderr[-2000:]}")
        return [read_rank(outdir, r, dtype) for r in range(len(inputs))]


def runner(cmd, dtype):
    return lambda inputs: run_cmd(cmd, inputs, dtype)
