"""benchmarks/second_order.py: the report keeps the hand-written blocks of the results
files (the before/after comparison of issue 13) when it rewrites them."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "second_order.py"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("second_order_benchmark", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_kept_blocks_are_found_by_name(bench: ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "results.md"
    assert bench.kept_blocks(path) == {}  # no file yet
    changes = "<!-- kept: changes -->\n## What changed\n\nprose\n<!-- /kept -->"
    before = "<!-- kept: before -->\n## Before\n\n| a | b |\n|---|---|\n| 1 | 2 |\n<!-- /kept -->"
    path.write_text(f"# Title\n\n{changes}\n\n## Tables\n\nold generated rows\n\n{before}\n")
    assert bench.kept_blocks(path) == {"changes": changes, "before": before}


def test_a_rewrite_keeps_the_blocks_in_place(bench: ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "results.md"
    changes = "<!-- kept: changes -->\nwhat changed\n<!-- /kept -->"
    before = "<!-- kept: before -->\nold tables\n<!-- /kept -->"
    path.write_text(f"# T\n\n{before}\n\nstale\n\n{changes}\n")
    generated = ["# T", "", "intro", "", "## New tables", "", "| x |"]
    out = bench._with_kept(generated, bench.kept_blocks(path), after_intro=4)
    text = "\n".join(out)
    path.write_text(text)
    # changes right after the introduction, the old tables at the end, nothing stale
    assert text.index("intro") < text.index("what changed") < text.index("## New tables") < text.index("old tables")
    assert "stale" not in text
    # rewriting again is stable: the blocks are neither lost nor doubled
    again = "\n".join(bench._with_kept(generated, bench.kept_blocks(path), after_intro=4))
    assert again == text and again.count("<!-- kept:") == 2
    # without blocks the generated lines come back unchanged
    assert bench._with_kept(generated, {}, after_intro=4) == generated
