"""The audit's progress display: lines without a terminal, nothing when switched off (the
bar's columns: tests/test_cli_terminal.py)."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from textrobust.audit.progress import make_progress


def test_without_a_terminal_a_task_prints_lines_with_its_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TEXTROBUST_NO_PROGRESS", raising=False)  # CI sets it
    out = io.StringIO()
    console = Console(file=out, force_terminal=False, width=120)
    with make_progress(console=console) as progress:
        task = progress.add_task("attack", total=10, completed=1, queries=0, unit="examples")
        for _ in range(9):
            progress.update(task, advance=1, queries=7)
        (shown,) = progress.tasks
        assert (shown.description, shown.completed, shown.total) == ("attack", 10, 10)
    lines = out.getvalue().splitlines()
    assert lines[0] == "attack: 10 examples (1 already in the store)"
    assert lines[-1].startswith("attack: done, 10/10 examples in") and lines[-1].endswith(", 7 queries")


def test_progress_can_be_switched_off_by_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEXTROBUST_NO_PROGRESS", "1")
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=120)
    with make_progress(console=console) as progress:
        task = progress.add_task("quiet", total=1)
        progress.update(task, advance=1)
    assert "quiet" not in out.getvalue()
