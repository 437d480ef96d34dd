"""Every ```python block of the README runs verbatim, in order, in one namespace (its asserts are
the checks; a block that raises fails the test)."""
import pathlib
import re

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


def test_readme_python_blocks_run():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert len(blocks) >= 2, "the README's Python section has its examples"
    namespace = {}
    for block in blocks:
        exec(compile(block, str(README), "exec"), namespace)
