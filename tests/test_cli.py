"""The command line: commands exist, print what they should, fail cleanly (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from textrobust.cli.app import app
from textrobust.store import RunStore

runner = CliRunner()


def test_help_lists_every_command() -> None:
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    for command in ("assets", "list", "data", "train", "evaluate", "attack", "demo", "export"):
        assert command in result.output


def test_list_shows_the_registries() -> None:
    result = runner.invoke(app, ["list"], terminal_width=200)
    assert result.exit_code == 0, result.output
    for name in ("rotten_tomatoes", "cnn", "textfooler", "greedy", "wordnet_synonyms", "lm_log_prob_drop", "glove"):
        assert name in result.output


def test_data_peeks_at_a_user_csv_and_reports_bad_rows(tmp_path: Path) -> None:
    path = tmp_path / "reviews.csv"
    path.write_text("text,label\nA fine film.,pos\nDull.,neg\n,pos\nOkay.,weird\n")
    result = runner.invoke(app, ["data", str(path), "--label-names", "neg,pos", "--skip-bad-rows"], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "A fine film." in result.output and "2 bad row(s) skipped" in result.output
    failing = runner.invoke(app, ["data", str(path), "--label-names", "neg,pos"], terminal_width=200)
    assert failing.exit_code == 2
    assert "row 3" in failing.output and "row 4" in failing.output


def test_unknown_choices_exit_with_code_2() -> None:
    result = runner.invoke(app, ["attack", "--recipe", "nope"])
    assert result.exit_code == 2 and "Unknown recipe 'nope'" in result.output
    result = runner.invoke(app, ["train", "nope"])
    assert result.exit_code == 2 and "Unknown architecture 'nope'" in result.output
    result = runner.invoke(app, ["demo", "--steps", "evaluate,nope"])
    assert result.exit_code == 2 and "Unknown demo step" in result.output


def test_export_writes_jsonl_and_csv(tmp_path: Path) -> None:
    with RunStore(tmp_path / "store.sqlite") as store:
        run = store.start_run("attack", {"n": 2}, seed=0)
        run.record("a", {"status": "succeeded", "l0": 1}, position=0)
        run.record("b", {"status": "failed", "l0": 0}, position=1)
    result = runner.invoke(app, ["export", str(tmp_path)])
    assert result.exit_code == 0, result.output
    lines = (tmp_path / "results.jsonl").read_text().splitlines()
    assert [json.loads(line)["example_id"] for line in lines] == ["a", "b"]
    result = runner.invoke(app, ["export", str(tmp_path), "--format", "csv"])
    assert result.exit_code == 0 and "succeeded" in (tmp_path / "results.csv").read_text()
    missing = runner.invoke(app, ["export", str(tmp_path / "nothing")])
    assert missing.exit_code == 2 and "No run store" in missing.output


@pytest.mark.heavy
def test_assets_table_lists_every_asset() -> None:
    result = runner.invoke(app, ["assets"], terminal_width=250)
    assert result.exit_code == 0
    for name in ("minilm", "glove", "wordnet", "pos_tagger", "rotten_tomatoes", "stop_words"):
        assert name in result.output


@pytest.mark.heavy
def test_demo_runs_and_resumes(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    result = runner.invoke(app, ["demo", "--out", str(out), "--n", "2"], terminal_width=200)
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    assert set(summary["steps"]) == {"evaluate", "attack", "second-order", "radius", "accs"}
    evaluation = summary["steps"]["evaluate"]["summary"]["evaluation"]
    assert evaluation["examples"] == 1276 and 0.6 < evaluation["accuracy"] <= 1.0
    attack = summary["steps"]["attack"]["summary"]["summary"]
    assert attack["examples"] == 2
    again = runner.invoke(app, ["demo", "--out", str(out), "--n", "2", "--resume", "--steps", "evaluate,attack"],
                          terminal_width=200)
    assert again.exit_code == 0, again.output
    resumed = json.loads((out / "summary.json").read_text())
    assert resumed["steps"]["evaluate"]["summary"]["evaluation"]["computed"] == 0
    assert resumed["steps"]["attack"]["summary"]["summary"]["computed_now"] == 0
