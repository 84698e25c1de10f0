"""``textrobust export`` never destroys a run, and exports every analysis of an audit
(issue 37, items 1 and 9)."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from textrobust.analyses.radius.analysis import PRRecord
from textrobust.analyses.radius.method import PRResult
from textrobust.analyses.radius.pr import PREstimate, PRSample, PRSwap
from textrobust.cli.app import app
from textrobust.records import encode, flat_fields
from textrobust.store import RunStore
from textrobust.text import Text

runner = CliRunner()


def _audit_folder(folder: Path) -> Path:
    """A run folder as an audit leaves it: a store with an attack and a PR run (the PR
    run with one scored and one skipped example), summary.json, report.json/.html, a figure."""
    folder.mkdir(parents=True, exist_ok=True)
    with RunStore(folder / "store.sqlite") as store:
        attack = store.start_run("attack", {"settings": {"n": 2}}, seed=0)
        attack.record("a", {"status": "succeeded", "l0": 1}, position=0)
        attack.record("b", {"status": "failed", "l0": 0}, position=1)
        pr = store.start_run("pr", {"settings": {"n": 2}}, seed=0)
        sample = PRSample(3, (PRSwap(1, "good", "fine"),), (0.6, 0.4))  # a kept misclassified text
        estimate = PREstimate(1, 18, 18, 13, 0.72, 0.7, 0.75, 0.01, 0.005, False, 0.25, (sample,))
        result = PRResult("a", 1, 7, 1, 19, 4, estimate, Text.from_string("a good film"), (0.2, 0.8))
        pr.record("a", encode(PRRecord("a", "scored", 19, 1.5, result)),
                  position=0, seconds=1.5, queries=19)
        pr.record("b", encode(PRRecord("b", "skipped", 1, 0.1, PRResult("b", 1, 5, 0, 1))), position=1,
                  seconds=0.1, queries=1)
    for name, text in (("summary.json", '{"schema": "textrobust.summary/1"}\n'), ("report.json", "{}\n"),
                       ("report.html", "<html></html>\n")):
        (folder / name).write_text(text)
    (folder / "figures").mkdir(exist_ok=True)
    (folder / "figures" / "pr-1.svg").write_text("<svg/>")
    return folder


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _export(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["export", *args], terminal_width=200)
    return result.exit_code, " ".join(result.output.split())


# ---- item 1: the run's own files are never a target ----------------------------------------------
@pytest.mark.parametrize("name", ["store.sqlite", "store.sqlite-wal", "store.sqlite-shm", "summary.json",
                                  "report.json", "report.html", ".textrobust.lock", "figures/pr-1.svg"])
@pytest.mark.parametrize("force", [False, True], ids=["", "--force"])
def test_export_refuses_to_write_over_a_file_of_the_run(tmp_path: Path, name: str, force: bool) -> None:
    run = _audit_folder(tmp_path / "run")
    before = _snapshot(run)
    code, output = _export(str(run), "--format", "jsonl", "--to", str(run / name), *(["--force"] if force else []))
    assert code == 2, output
    assert "Will not write the export over" in output and "the run would be lost" in output
    assert "Traceback" not in output
    assert _snapshot(run) == before  # nothing written, nothing replaced
    with RunStore(run / "store.sqlite") as store:  # the store is still the run's
        assert sorted(r.kind for r in store.runs()) == ["attack", "pr"]


def test_export_refuses_another_run_folders_files_and_links_to_them(tmp_path: Path) -> None:
    run = _audit_folder(tmp_path / "run")
    other = _audit_folder(tmp_path / "other")
    before = _snapshot(other)
    code, output = _export(str(run), "--to", str(other / "report.json"), "--force")
    assert code == 2 and "run folder" in output
    (tmp_path / "link.json").symlink_to(other / "summary.json")
    code, output = _export(str(run), "--to", str(tmp_path / "link.json"), "--force")
    assert code == 2 and "summary.json" in output
    os.link(run / "report.html", tmp_path / "hard.json")  # the same file under another name
    code, output = _export(str(run), "--run-id", _run_id(run, "attack"), "--to", str(tmp_path / "hard.json"),
                           "--force")
    assert code == 2 and "the run would be lost" in output
    assert _snapshot(other) == before
    assert (run / "report.html").read_text() == "<html></html>\n"


def test_export_refuses_a_folder_as_target(tmp_path: Path) -> None:
    run = _audit_folder(tmp_path / "run")
    code, output = _export(str(run), "--to", str(tmp_path), "--format", "csv")
    assert code == 2 and "is a folder" in output


def test_export_replaces_an_existing_file_only_with_force(tmp_path: Path) -> None:
    run = _audit_folder(tmp_path / "run")
    target = tmp_path / "rows.jsonl"
    target.write_text("precious\n")
    code, output = _export(str(run), "--run-id", _run_id(run, "attack"), "--to", str(target))
    assert code == 2 and "exists" in output and "--force" in output
    assert target.read_text() == "precious\n"
    code, output = _export(str(run), "--run-id", _run_id(run, "attack"), "--to", str(target), "--force")
    assert code == 0, output
    assert [json.loads(line)["id"] for line in target.read_text().splitlines()] == ["a", "b"]


def test_every_target_is_checked_before_any_is_written(tmp_path: Path) -> None:
    run = _audit_folder(tmp_path / "run")
    (tmp_path / "x.pr.csv").write_text("kept\n")  # the second file exists: the first is not written either
    code, output = _export(str(run), "--to", str(tmp_path / "x.csv"))
    assert code == 2 and "x.pr.csv" in output
    assert not (tmp_path / "x.attack.csv").exists() and (tmp_path / "x.pr.csv").read_text() == "kept\n"


def test_the_default_target_is_refused_the_second_time_without_force(tmp_path: Path) -> None:
    run = _audit_folder(tmp_path / "run")
    assert _export(str(run), "--run-id", _run_id(run, "pr"))[0] == 0
    assert (run / "results.jsonl").is_file()
    code, output = _export(str(run), "--run-id", _run_id(run, "pr"))
    assert code == 2 and "exists" in output
    assert _export(str(run), "--run-id", _run_id(run, "pr"), "--force")[0] == 0


# ---- item 9: every analysis of an audit, named, consistent columns --------------------------------
def test_an_audit_exports_every_analysis_one_file_each_naming_each(tmp_path: Path) -> None:
    run = _audit_folder(tmp_path / "run")
    code, output = _export(str(run), "--to", str(tmp_path / "x.csv"))
    assert code == 0, output
    attack_id, pr_id = _run_id(run, "attack"), _run_id(run, "pr")
    assert f"wrote 2 rows of attack (run {attack_id}) to {tmp_path / 'x.attack.csv'}" in output
    assert f"wrote 2 rows of pr (run {pr_id}) to {tmp_path / 'x.pr.csv'}" in output
    assert not (tmp_path / "x.csv").exists()
    attack = _csv(tmp_path / "x.attack.csv")
    assert [r["id"] for r in attack] == ["a", "b"] and attack[0]["l0"] == "1"
    pr = _csv(tmp_path / "x.pr.csv")
    header = list(pr[0])
    assert [r["id"] for r in pr] == ["a", "b"] and pr[0]["pr"] == "0.72" and pr[1]["status"] == "skipped"
    # the estimate's own time beside the unit's, not a dotted path through the record
    assert "estimate.seconds" in header and "result.estimate.seconds" not in header
    assert pr[0]["estimate.seconds"] == "0.25" and pr[0]["seconds"] == "1.5"
    assert "estimate" not in header  # the skipped example's empty estimate is no column
    assert all(any(row[c] for row in pr) for c in header)  # no column is empty in every row


def test_an_audit_exports_every_analysis_by_default_into_the_folder(tmp_path: Path) -> None:
    run = _audit_folder(tmp_path / "run")
    code, output = _export(str(run), "--format", "jsonl")
    assert code == 0, output
    assert (run / "results.attack.jsonl").is_file() and (run / "results.pr.jsonl").is_file()
    assert str(run / "results.attack.jsonl") in output and str(run / "results.pr.jsonl") in output


def test_run_id_exports_only_that_run_to_the_file_named(tmp_path: Path) -> None:
    run = _audit_folder(tmp_path / "run")
    code, output = _export(str(run), "--run-id", _run_id(run, "pr"), "--to", str(tmp_path / "pr.json"))
    assert code == 0, output
    assert [r["id"] for r in json.loads((tmp_path / "pr.json").read_text())] == ["a", "b"]
    assert "wrote 2 rows of pr" in output and "attack" not in output


def test_a_collision_is_named_by_the_shortest_free_end_of_its_path() -> None:
    estimate = PREstimate(1, 18, 18, 13, 0.72, 0.7, 0.75, 0.01, 0.005, False, 0.25)
    row = flat_fields(PRRecord("a", "scored", 19, 1.0, PRResult("a", 1, 7, 1, 3, 4, estimate)))
    assert row["seconds"] == 1.0 and row["estimate.seconds"] == 0.25  # not result.estimate.seconds
    assert row["queries"] == 19 and row["result.queries"] == 3  # the result's own count, named by its holder
    same = flat_fields(PRRecord("a", "scored", 3, 1.0, PRResult("a", 1, 7, 1, 3, 4, estimate)))
    assert "result.queries" not in same and same["queries"] == 3  # the same value: one column


def _run_id(folder: Path, kind: str) -> str:
    with RunStore(folder / "store.sqlite") as store:
        run = store.latest_run(kind)
        assert run is not None
        return run.run_id


def _csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


# ---- item 13 (export part): one name for the run folder argument ---------------------------------
@pytest.mark.parametrize("command, name", [("export", "RUN"), ("gate", "RUN"), ("report", "RUN"),
                                           ("compare", "RUNS")])
def test_the_run_folder_argument_has_one_name(command: str, name: str) -> None:
    shown = runner.invoke(app, [command, "--help"], terminal_width=200)
    usage = next(line for line in shown.output.splitlines() if "Usage:" in line)
    assert f"{{{name}}}" in usage and "out}" not in usage and "run_dir" not in usage, usage
    missing = runner.invoke(app, [command], terminal_width=200)
    assert missing.exit_code == 2 and f"Missing argument '{name}'" in missing.output
