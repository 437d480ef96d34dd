"""Shared fixtures: the `cce` binary the CLI comparisons run (CCE_BIN, set by scripts/test)."""
import os
import shutil
import subprocess

import pytest


@pytest.fixture(scope="session")
def cce_bin():
    path = os.environ.get("CCE_BIN") or shutil.which("cce")
    if not path or not os.path.exists(path):
        pytest.fail("the cce binary is needed for the CLI comparisons: run scripts/test (it sets CCE_BIN)")
    return path


@pytest.fixture
def run_cli(cce_bin):
    def run(*args, check=True):
        p = subprocess.run([cce_bin, *map(str, args)], capture_output=True, text=True)
        if check and p.returncode != 0:
            raise AssertionError(f"cce {' '.join(map(str, args))}: exit {p.returncode}: {p.stderr}")
        return p
    return run
