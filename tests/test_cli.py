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
    for command in ("assets", "list", "data", "train", "evaluate", "attack", "audit", "report", "demo", "export"):
        assert command in result.output


def test_list_shows_the_registries() -> None:
    result = runner.invoke(app, ["list"], terminal_width=200)
    assert result.exit_code == 0, result.output
    for name in ("rotten_tomatoes", "cnn", "textfooler", "greedy", "wordnet_synonyms", "lm_log_prob_drop", "glove",
                 "second-order", "process", "minilm_mlm"):
        assert name in result.output


def test_list_shows_each_registry_once() -> None:
    """SIMILARITY_SCORERS and its old name CONSTRAINT_MODELS are one registry: one table."""
    from textrobust.cli.components import _registries

    registries = list(_registries().values())
    assert len({id(r) for r in registries}) == len(registries)
    result = runner.invoke(app, ["list"], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert result.output.count("similarity scorers") == 1
    assert result.output.count("word_mean") == 1  # a similarity scorer's row, printed once


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
    result = runner.invoke(app, ["audit", "--analyses", "evaluate,nope"])
    assert result.exit_code == 2 and "Unknown analyses ['nope']" in result.output


def test_export_writes_jsonl_and_csv(tmp_path: Path) -> None:
    with RunStore(tmp_path / "store.sqlite") as store:
        run = store.start_run("attack", {"n": 2}, seed=0)
        run.record("a", {"status": "succeeded", "l0": 1}, position=0)
        run.record("b", {"status": "failed", "l0": 0}, position=1)
    result = runner.invoke(app, ["export", str(tmp_path)])
    assert result.exit_code == 0, result.output
    lines = (tmp_path / "results.jsonl").read_text().splitlines()
    assert [json.loads(line)["id"] for line in lines] == ["a", "b"]
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


def test_train_prints_its_card(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The success path of `train` prints the card (it used to crash on a VictimCard)."""
    from textrobust.cli import train
    from textrobust.zoo.cards import VictimCard

    card = VictimCard(architecture="cnn", dataset="rotten_tomatoes", label_names=("negative", "positive"),
                      splits={"train": 8}, seed=0, dev_accuracy=0.75, test_accuracy=0.5, train_seconds=1.0,
                      parameters=10, epochs_run=1, best_epoch=1, vocab_size=5, model_config={}, training={})
    train._print_card(card, tmp_path)
    train._print_card(card.to_dict(), tmp_path)


@pytest.mark.parametrize("argv, flag", [
    (["evaluate", "--seed", str(2**63)], "--seed"),
    (["evaluate", "--seed", "-1"], "--seed"),
    (["train", "cnn", "--seed", "-1"], "--seed"),
    (["train", "cnn", "--epochs", "0"], "--epochs"),
    (["evaluate", "--batch-size", "0"], "--batch-size"),
    (["evaluate", "--n", "-1"], "--n"),
    (["attack", "--budget", "0"], "--budget"),
    (["data", "rotten_tomatoes", "--n", "-1"], "--n"),
    (["evaluate", "--workers", "0", "--executor", "process"], "--workers"),
])
def test_bad_options_exit_2_naming_the_flag(argv: list[str], flag: str) -> None:
    result = runner.invoke(app, argv, terminal_width=200)
    assert result.exit_code == 2, result.output
    assert flag in result.output and "Traceback" not in result.output


def test_out_naming_a_file_exits_2(tmp_path: Path) -> None:
    target = tmp_path / "a-file"
    target.write_text("x")
    for argv in (["evaluate", "--out", str(target)], ["train", "cnn", "--out", str(target)]):
        result = runner.invoke(app, argv, terminal_width=200)
        assert result.exit_code == 2 and "--out" in result.output, result.output


@pytest.mark.heavy
def test_audit_runs_resumes_and_rebuilds_its_report(tmp_path: Path) -> None:
    out = tmp_path / "audit"
    result = runner.invoke(app, ["audit", "--out", str(out), "--n", "2"], terminal_width=80)
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    assert set(summary["analyses"]) >= {"evaluate", "attack"}
    assert summary["analyses"]["attack"]["summary"]["units"] == 2
    assert (out / "report.html").is_file()
    again = runner.invoke(app, ["audit", "--out", str(out), "--resume"], terminal_width=80)
    assert again.exit_code == 0, again.output
    resumed = json.loads((out / "summary.json").read_text())
    assert all(a["computed_now"] == 0 for a in resumed["analyses"].values())
    rebuilt = runner.invoke(app, ["report", str(out)])
    assert rebuilt.exit_code == 0, rebuilt.output


@pytest.mark.heavy
def test_resume_takes_the_stored_options(tmp_path: Path) -> None:
    out = tmp_path / "pwws"
    first = runner.invoke(app, ["attack", "--recipe", "pwws", "--n", "2", "--budget", "300", "--no-quality",
                                "--out", str(out)], terminal_width=80)
    assert first.exit_code == 0, first.output
    again = runner.invoke(app, ["attack", "--out", str(out), "--resume"], terminal_width=80)
    assert again.exit_code == 0, again.output
    assert "0 units computed now, 2 resumed" in again.output
    assert "a unit: the examples saved together" in " ".join(again.output.split())
    clash = runner.invoke(app, ["attack", "--out", str(out), "--resume", "--budget", "10"], terminal_width=80)
    assert clash.exit_code == 2 and "budget" in clash.output


def test_threads_follow_textrobust_threads_then_the_cpu_affinity(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from textrobust.cli.common import threads_for_this_machine

    monkeypatch.setenv("TEXTROBUST_THREADS", "1")
    assert threads_for_this_machine() == 1
    for bad in ("zero", "²", str(len(os.sched_getaffinity(0)) + 1)):  # the command refuses it (exit 2), not this
        monkeypatch.setenv("TEXTROBUST_THREADS", bad)
        assert threads_for_this_machine() == len(os.sched_getaffinity(0))
