"""The README's Python example runs as written (from a clone: skipped where README.md is absent)."""

import os
import re

import pytest

README = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "README.md")


@pytest.mark.skipif(not os.path.isfile(README), reason="no README.md next to the tests")
def test_readme_python_blocks_run(capsys):
    with open(README) as f:
        blocks = re.findall(r"```python\n(.*?)```", f.read(), flags=re.S)
    assert blocks, "the README has no Python example"
    for code in blocks:
        namespace = {}
        exec(compile(code, "README.md", "exec"), namespace)
        r = namespace.get("r")
        if r is not None:
            assert r.converged and abs(r.estimate - namespace["s"].exact) <= 5 * r.error
    assert "itn" in capsys.readouterr().out
