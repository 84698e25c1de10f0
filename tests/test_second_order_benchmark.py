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


def test_two_kept_blocks_with_one_name_are_refused(bench: ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "results.md"
    path.write_text("<!-- kept: changes -->\na\n<!-- /kept -->\n\n<!-- kept: changes -->\nb\n<!-- /kept -->\n")
    with pytest.raises(SystemExit, match="more than one kept block named changes"):
        bench.kept_blocks(path)


@pytest.mark.parametrize("no_bias", [True, False])
def test_report_leaves_bias_alone_with_no_bias(bench: ModuleType, tmp_path: Path, monkeypatch, no_bias: bool) -> None:
    import argparse

    calls = []
    monkeypatch.setattr(bench, "RESULTS", tmp_path)
    monkeypatch.setattr(bench, "_load", lambda victim, method: [])
    monkeypatch.setattr(bench, "_bias_report", lambda args: calls.append(args))
    bench.report(argparse.Namespace(command_line="python benchmarks/second_order.py report", notes=[], no_bias=no_bias))
    assert (tmp_path / "second_order.md").read_text().startswith("# Second-order vs first-order attacks")
    assert len(calls) == (0 if no_bias else 1)
