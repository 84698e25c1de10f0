"""Issue 37, items 5, 6, 12 and 13 (compare): an unfinished run is refused without
--allow-unfinished and marked with it; --resamples must give the interval it names; the
terminal table's values beside a paired difference are over the shared examples; the
same run twice warns; the page's tables fit a narrow window (they scroll inside it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from test_compare import ATTACKS_A, ATTACKS_B, _attack, _config, make_run
from textrobust.cli.app import app
from textrobust.errors import ConfigError
from textrobust.report.compare import compare_runs
from textrobust.report.paired import min_resamples
from textrobust.store import RunStore


def _invoke(*args: str) -> Any:
    return CliRunner().invoke(app, ["compare", *args], terminal_width=200)


def _interrupted(folder: Path, planned: int, done: list[tuple[int, Any, int]]) -> Path:
    """A run folder whose attack run stopped after ``done`` of ``planned`` examples."""
    with RunStore(folder / "store.sqlite") as store:
        run = store.start_run("attack", {**_config({"recipe": "textfooler", "n": planned, "budget": None,
                                                    "quality": False, "candidates": "validated"}, "toy"),
                                         "data_examples": 1000}, seed=0)
        for position, (i, status, l0) in enumerate(done):
            run.record(f"e{i}", _attack(i, status, l0), position=position)
    return folder


@pytest.fixture()
def whole(tmp_path: Path) -> Path:
    return make_run(tmp_path / "whole", ATTACKS_A)


def test_an_unfinished_run_is_refused_without_the_flag(whole: Path, tmp_path: Path) -> None:
    cut = _interrupted(tmp_path / "cut", 100, ATTACKS_B[:3])
    result = _invoke(str(whole), str(cut), "--out", str(tmp_path / "out"))
    assert result.exit_code == 2
    message = " ".join(result.output.split())
    assert "Unfinished run(s): cut (attack: 3 of 100 planned examples)" in message
    assert "--allow-unfinished" in message and not (tmp_path / "out").exists()


def test_an_unfinished_run_is_marked_when_allowed(whole: Path, tmp_path: Path) -> None:
    cut = _interrupted(tmp_path / "cut", 100, ATTACKS_B[:3])
    result = _invoke(str(whole), str(cut), "--out", str(tmp_path / "out"), "--allow-unfinished")
    assert result.exit_code == 0, result.output
    assert "cut (unfinished)" in result.output
    assert "cut is unfinished (its run was interrupted): attack: 3 of 100 planned examples" in \
        " ".join(result.output.split())
    data = json.loads((tmp_path / "out" / "compare.json").read_text())
    assert [r["unfinished"] for r in data["runs"]] == [[], ["attack: 3 of 100 planned examples"]]
    page = (tmp_path / "out" / "compare.html").read_text()
    assert "unfinished: attack: 3 of 100 planned examples" in page


def test_resamples_must_give_the_interval(whole: Path, tmp_path: Path) -> None:
    assert min_resamples(0.95) == 200 and min_resamples(0.9) == 100  # each tail holds 5
    other = make_run(tmp_path / "other", ATTACKS_B)
    result = _invoke(str(whole), str(other), "--out", str(tmp_path / "out"), "--resamples", "1")
    assert result.exit_code == 2 and "--resamples" in result.output and "200" in result.output
    with pytest.raises(ConfigError, match="from 200 to 1,000,000 .* Got 199 instead"):
        compare_runs([whole, other], resamples=199)
    assert _invoke(str(whole), str(other), "--out", str(tmp_path / "out"), "--resamples", "200").exit_code == 0


def test_values_beside_a_paired_difference_are_over_the_shared_examples(whole: Path, tmp_path: Path) -> None:
    # the other run has e0..e3 only: on those, accuracy under attack is 2/4 in the baseline
    # (e1, e2 right), though 3/6 = 50.0% over its own six; the other run gets e0, e1 right
    part = make_run(tmp_path / "part", ATTACKS_B[:4])
    result = _invoke(str(whole), str(part), "--out", str(tmp_path / "out"), "--resamples", "200")
    assert result.exit_code == 0, result.output
    row = next(line for line in result.output.splitlines() if "accuracy under attack" in line)
    assert "50.0%" in row and row.count("50.0%") == 2  # both over e0..e3: 2/4 and 2/4
    success = next(line for line in result.output.splitlines() if "attack success rate" in line)
    # baseline over e0..e3: 1 success of 3 attacked (e3 skipped); the other: 1 of 3
    assert success.count("33.3%") == 2 and "40.0%" not in success  # 40.0%: the baseline's own 2 of 5
    assert "over the examples the two runs share" in " ".join(result.output.split())


def test_the_same_run_twice_warns(whole: Path, tmp_path: Path) -> None:
    result = _invoke(str(whole), str(whole), "--out", str(tmp_path / "out"), "--resamples", "200")
    assert result.exit_code == 0, result.output
    assert "is the same run folder as" in result.output and "compared with itself" in result.output
    other = make_run(tmp_path / "other", ATTACKS_B)
    assert "same run folder" not in _invoke(str(whole), str(other), "--out", str(tmp_path / "o2")).output


def test_the_page_wraps_its_figure_cells_and_scrolls_what_still_does_not_fit(whole: Path, tmp_path: Path) -> None:
    # checked by eye with three runs in headless chromium at 1300 px: no cut-off column;
    # here: the interval lines may wrap (they were nowrap and pushed the table past the
    # page), and every figures table sits in a horizontally scrolling wrapper
    other = make_run(tmp_path / "other", ATTACKS_B)
    third = make_run(tmp_path / "third-run-with-a-long-name", ATTACKS_B[:4])
    result = _invoke(str(whole), str(other), str(third), "--out", str(tmp_path / "out"), "--resamples", "200")
    assert result.exit_code == 0, result.output
    page = (tmp_path / "out" / "compare.html").read_text()
    ci = next(line for line in page.splitlines() if line.startswith(".ci {"))
    assert "nowrap" not in ci
    tables = page.count('<table class="figures-table">')
    assert tables == 1 and page.count('<div class="table-wrap">\n  <table class="figures-table">') == tables
