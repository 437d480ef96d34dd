"""Every ```python block of the documentation runs verbatim: the blocks of README.md, of
docs/python.md and of docs/forensics.md, each document's in order in one namespace of its own (its asserts are the checks;
a block that raises fails the test)."""
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCS = ["README.md", "docs/python.md", "docs/forensics.md"]


def python_blocks(doc):
    return re.findall(r"```python\n(.*?)```", (ROOT / doc).read_text(), flags=re.S)


def test_python_examples_are_there():
    assert len(python_blocks("README.md")) >= 1, "the README's tour has its Python snippet"
    assert len(python_blocks("docs/python.md")) >= 3, "docs/python.md has its examples"


@pytest.mark.parametrize("doc", DOCS)
def test_python_blocks_run(doc):
    namespace = {}
    for block in python_blocks(doc):
        exec(compile(block, str(ROOT / doc), "exec"), namespace)
