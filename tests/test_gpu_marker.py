"""The suite's ``gpu`` skip (tests/conftest.py) follows the marker, not the keyword set.

pytest's keywords hold the folder and module names above a test, so ``"gpu" in
item.keywords`` also matched an unmarked test under a folder named ``gpu`` (issue 41).
These tests run the suite's own conftest in a throw-away pytest session with CUDA reported
missing, so they pass the same way on a GPU machine.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

_CONFTEST = Path(__file__).with_name("conftest.py").read_text(encoding="utf-8")
_INI = """
[pytest]
markers =
    gpu: needs a CUDA device
"""


def _run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.RunResult:
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    pytester.makeini(_INI)
    pytester.makeconftest(_CONFTEST)
    return pytester.runpytest_inprocess("-rs", "-p", "no:cacheprovider")


def test_unmarked_test_under_a_gpu_folder_runs(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = pytester.mkpydir("gpu")
    (folder / "test_in_gpu_folder.py").write_text("def test_plain():\n    assert True\n", encoding="utf-8")
    result = _run(pytester, monkeypatch)
    result.assert_outcomes(passed=1, skipped=0)


def test_marked_test_is_skipped_with_the_reason(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    pytester.makepyfile(
        test_marked="""
import pytest

@pytest.mark.gpu
def test_needs_cuda():
    raise AssertionError("must not run without CUDA")

def test_plain():
    assert True
"""
    )
    result = _run(pytester, monkeypatch)
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(["*needs a CUDA device (torch.cuda.is_available() is False)*"])


def test_class_marker_reaches_its_methods(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    pytester.makepyfile(
        test_cls="""
import pytest

@pytest.mark.gpu
class TestOnCuda:
    def test_one(self):
        raise AssertionError("must not run without CUDA")
"""
    )
    result = _run(pytester, monkeypatch)
    result.assert_outcomes(skipped=1)
