"""benchmarks/run.py: rewriting results/summary.md keeps its hand-written readings."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "run.py"


def _load():  # noqa: ANN202
    spec = importlib.util.spec_from_file_location("run_benchmark", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    path = list(sys.path)
    try:
        spec.loader.exec_module(module)  # puts benchmarks/textattack on sys.path for `common`
    finally:
        sys.path[:] = path
    return module


def test_summary_rewrite_keeps_hand_written_blocks_in_order(tmp_path: Path) -> None:
    run = _load()
    path = tmp_path / "summary.md"
    run.write_summary(path, ["# Speed", "", "| a |", ""])  # no old file: just the table
    assert path.read_text() == "# Speed\n\n| a |\n"
    new = "<!-- kept: new -->\n## Reading (today)\n\ntext\n<!-- /kept -->"
    old = "<!-- kept: reading -->\n## Reading (yesterday)\n\n| x |\n<!-- /kept -->"
    path.write_text(f"# Speed\n\n| stale row |\n\n{new}\n\n{old}\n")
    run.write_summary(path, ["# Speed", "", "| fresh row |", ""])
    text = path.read_text()
    assert "stale row" not in text and "| fresh row |" in text
    assert text.index(new) < text.index(old)  # both readings, in their order, after the tables
    assert text.index("| fresh row |") < text.index(new)
