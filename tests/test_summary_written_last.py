"""``summary.json`` is the last output of a run and is written whole (issue 37's note:
a stop while the outputs are written must not leave a summary beside a missing report)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from textrobust.audit import orchestrator
from textrobust.audit.limits import LengthReport

REPORT: dict[str, Any] = {"verdict": {"level": "good"}, "run": {"id": "r"}, "victim": {}, "data": {},
                          "analyses": [{"name": "evaluate", "settings": {},
                                        "figures": [{"svg": "<svg/>"}]}]}


def test_summary_comes_after_the_figures_and_through_a_temporary_file(tmp_path: Path) -> None:
    orchestrator._write_summary(tmp_path, {}, REPORT, LengthReport(10, "truncate"))
    assert json.loads((tmp_path / "summary.json").read_text())["verdict"] == {"level": "good"}
    assert (tmp_path / "figures" / "evaluate-1.svg").read_text() == "<svg/>"
    assert not list(tmp_path.glob(".summary.json*"))


def test_a_failure_before_the_summary_leaves_the_previous_one_whole(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "summary.json").write_text('{"old": true}\n')

    def stop(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt  # a stop while the figures are written

    monkeypatch.setattr(Path, "write_text", stop)
    with pytest.raises(KeyboardInterrupt):
        orchestrator._write_summary(tmp_path, {}, REPORT, LengthReport(10, "truncate"))
    monkeypatch.undo()
    assert json.loads((tmp_path / "summary.json").read_text()) == {"old": True}
