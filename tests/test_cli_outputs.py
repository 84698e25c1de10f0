"""Outputs never hide a failure (issue 16): what the CLI prints for budget exhaustion, an
empty selection, an unwritable --out and an interrupted run.

The commands run in-process on a toy keyword victim (``audit.run`` is wrapped so the
victim option resolves to it), over a small CSV written by each test: fast and offline.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from textrobust import audit
from textrobust.audit.testing import keyword_scores
from textrobust.cli.app import app
from textrobust.store import RunStore
from textrobust.victims.function import FunctionVictim

from cli_helpers import reviews_csv, use_toy_victim  # noqa: E402

runner = CliRunner()

_csv = reviews_csv


_use_toy_victim = use_toy_victim


def test_budget_exhausted_examples_get_their_own_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _use_toy_victim(monkeypatch)
    out = tmp_path / "run"
    result = runner.invoke(app, ["attack", "--data", str(_csv(tmp_path)), "--recipe", "textfooler", "--budget", "1",
                                 "--no-quality", "--out", str(out), "--quiet"], terminal_width=200)
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())["analyses"]["attack"]["summary"]
    assert summary["budget_exhausted"] >= 1
    row = next(line for line in result.output.splitlines() if "budget exhausted" in line)
    assert str(summary["budget_exhausted"]) in row
    assert "upper bound" in result.output  # the accuracy under attack is flagged, not presented as exact
    outcomes = {}
    for line in result.output.splitlines():
        cells = [c.strip() for c in line.split("│") if c.strip()]
        if len(cells) == 2 and cells[0].startswith(("succeeded", "failed", "skipped", "budget", "errors")):
            outcomes[cells[0]] = int(cells[1])
    assert outcomes["failed (search ended)"] + outcomes["budget exhausted"] == summary["failed"]
    assert sum(outcomes.values()) == summary["units"]  # disjoint rows: nothing counted twice


def test_evaluate_over_zero_examples_prints_n_a(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _use_toy_victim(monkeypatch)
    out = tmp_path / "run"
    result = runner.invoke(app, ["evaluate", "--data", str(_csv(tmp_path)), "--n", "0", "--out", str(out), "--quiet"],
                           terminal_width=200)
    assert result.exit_code == 0, result.output
    accuracy = next(line for line in result.output.splitlines() if "clean accuracy" in line and "│" in line)
    assert "n/a" in accuracy and "0.00%" not in accuracy


def test_read_only_out_folder_exits_2_and_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Root ignores permission bits, so the read-only folder is simulated at os.access.
    locked = tmp_path / "locked"
    locked.mkdir()
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda path, mode: False if Path(path) == locked else real_access(path, mode))
    result = runner.invoke(app, ["evaluate", "--data", str(_csv(tmp_path)), "--out", str(locked / "run")],
                           terminal_width=200)
    assert result.exit_code == 2, result.output
    message = " ".join(result.output.split())
    assert "--out" in message and "cannot be written" in message
    assert "Traceback" not in result.output
    assert list(locked.iterdir()) == []


def test_interrupted_run_says_what_was_saved_and_how_to_resume(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    calls = {"n": 0}

    def scores(texts: list[str]) -> list[list[float]]:
        calls["n"] += 1
        if calls["n"] > 3:  # Ctrl-C arrives while the fourth example is scored
            raise KeyboardInterrupt
        return keyword_scores(texts)

    _use_toy_victim(monkeypatch, FunctionVictim(scores, ("negative", "positive")))
    out = tmp_path / "run"
    result = runner.invoke(app, ["evaluate", "--data", str(_csv(tmp_path)), "--batch-size", "1", "--out", str(out),
                                 "--quiet"], terminal_width=300)
    assert result.exit_code == 130, result.output
    with RunStore(out / "store.sqlite") as store:
        saved = sum(len(run) for run in store.runs())
    assert saved >= 1
    assert f"interrupted: {saved:,} results are saved" in result.output
    assert f"continue with: textrobust evaluate --out {out} --resume" in result.output
