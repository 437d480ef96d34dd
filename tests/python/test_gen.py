"""`cce gen --values uniform` against scripts/allreduce_ref.py's numpy copy of the documented
counter formula, the narrow dtypes rounded by ml_dtypes / numpy."""
import importlib.util
import pathlib

import ml_dtypes
import numpy as np
import pytest

REF = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "allreduce_ref.py"
_spec = importlib.util.spec_from_file_location("allreduce_ref", REF)
ref = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ref)


@pytest.mark.parametrize("dtype,np_dtype", [("fp32", np.float32), ("bf16", ml_dtypes.bfloat16), ("fp16", np.float16)])
def test_uniform_is_the_formula_rounded_as_ml_dtypes_rounds(run_cli, tmp_path, dtype, np_dtype):
    # Past several of the generator's 2048-element passes and threads' stretches, odd length.
    n, seed = 70_001, 12
    f = tmp_path / f"{dtype}.bin"
    run_cli("gen", "--dtype", dtype, "--elems", n, "--seed", seed, "-o", f)
    got = np.fromfile(f, dtype=np.uint8)
    want = ref.uniform_sample(seed, n).astype(np_dtype)
    assert got.size == want.nbytes
    word = f"<u{want.itemsize}"
    bad = np.flatnonzero(got.view(word) != want.view(word))
    assert bad.size == 0, f"{bad.size} elements differ, first at {bad[:5].tolist()}"
