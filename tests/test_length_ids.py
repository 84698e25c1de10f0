"""``summary.json`` lists the ids of the analysed texts that were cut or rejected, bounded,
with their counts, as the README and ``textrobust.audit.limits`` say (issue 37, item 7)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from textrobust.audit.limits import MAX_LISTED_IDS, LengthReport
from textrobust.cli.app import app

from cli_helpers import use_toy_victim  # noqa: E402  (pytest puts tests/ on sys.path)

runner = CliRunner()


def _long_rows(tmp_path: Path, rows: int) -> Path:
    """``rows`` reviews of six words (cut by --max-words 3), every third one short."""
    path = tmp_path / "reviews.csv"
    texts = [("a good film" if i % 3 == 2 else f"a good film number {i} indeed") for i in range(rows)]
    path.write_text("text,label\n" + "".join(f'"{text}",positive\n' for text in texts))
    return path


@pytest.mark.parametrize("policy, key", [("truncate", "truncated"), ("error", "rejected")])
def test_summary_lists_the_first_ids_cut_with_their_count(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          policy: str, key: str) -> None:
    use_toy_victim(monkeypatch)
    out = tmp_path / "run"
    rows = 160
    result = runner.invoke(app, ["evaluate", "--data", str(_long_rows(tmp_path, rows)), "--max-words", "3",
                                 "--length-policy", policy, "--n", str(rows), "--out", str(out), "--quiet"],
                           terminal_width=200)
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    limit = summary["length_limit"]
    long_ids = [f"row-{i + 1}" for i in range(rows) if i % 3 != 2]  # 107 of 160
    assert limit[f"{key}_count"] == len(long_ids) == 107
    assert limit[key] == long_ids[:MAX_LISTED_IDS]  # the first 100, in data order
    other = "rejected" if key == "truncated" else "truncated"
    assert limit[other] == [] and limit[f"{other}_count"] == 0
    assert (limit["max_words"], limit["policy"]) == (3, policy)
    assert summary["data"]["length_limit"][key] == 107  # the report's count agrees


def test_a_few_cut_ids_are_all_listed() -> None:
    report = LengthReport(5, "truncate", truncated=("x", "y"))
    assert report.summary() == {"max_words": 5, "policy": "truncate", "truncated": ["x", "y"], "truncated_count": 2,
                                "rejected": [], "rejected_count": 0}
    assert report.summary(limit=1)["truncated"] == ["x"] and report.summary(limit=1)["truncated_count"] == 2
