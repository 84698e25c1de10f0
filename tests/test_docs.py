"""Every README and docstring example runs."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import textrobust

ROOT = Path(__file__).resolve().parents[1]
# Modules whose import needs an optional extra that a minimal install may lack.
OPTIONAL = {"textrobust.assets.gemma"}


def _modules() -> list[str]:
    names = []
    for info in pkgutil.walk_packages(textrobust.__path__, "textrobust."):
        if info.name not in OPTIONAL:
            names.append(info.name)
    return sorted(names)


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in finder.find(module, name):
        runner.run(test)
    assert runner.failures == 0, f"{runner.failures} docstring example(s) failed in {name}"


@pytest.mark.heavy
def test_readme_python_example_runs() -> None:
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks, "README has no python example"
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {"__name__": "readme"})  # noqa: S102
