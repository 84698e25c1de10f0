"""Issue 37, items 8, 11 and 13 (audit and gate): the verdict says why no analysis counted
toward the level; the plan is printed before an audit starts and says what --n does;
--n 0 is refused and a figure over no examples fails the gate; the "Not run" commands
carry the user's --n and --candidates; a JUnit file's missing folder is refused, not made;
full-width digits in --require are refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from cli_helpers import reviews_csv, use_toy_victim
from textrobust import audit
from textrobust.audit.profiles import describe_plan, not_run, profile_settings
from textrobust.audit.requirements import check, parse_requirement, write_junit
from textrobust.audit.verdict import verdict
from textrobust.cli.app import app
from textrobust.errors import ConfigError, TextRobustError

runner = CliRunner()


def _flat(text: str) -> str:
    return " ".join(text.split())


# ---- item 8: why no analysis counted -------------------------------------------------------------
def test_the_verdict_says_why_no_analysis_counted() -> None:
    paper = {"name": "attack", "risk": 1.0, "point": "2 of 2 attacked examples were flipped",
             "settings": {"candidates": "paper"}}
    judged = verdict([paper])
    assert judged["level"] == "unknown" and "No robustness analysis ran" not in judged["headline"]
    assert judged["headline"].startswith("No analysis counted toward the level: attack used the papers' own "
                                         "substitutes (--candidates paper)")
    assert "2 of 2 attacked examples were flipped" in judged["points"]
    empty = verdict([{"name": "pr", "risk": float("nan"), "settings": {"candidates": "validated"}}])
    assert "pr gave no failure share (no example counted)" in empty["headline"]
    assert verdict([{"name": "evaluate", "risk": None}])["headline"].startswith("No robustness analysis ran")
    counted = verdict([paper, {"name": "pr", "risk": 0.1, "settings": {"candidates": "validated"}}])
    assert counted["level"] == "good" and any("Not counted in the level: attack" in p for p in counted["points"])


# ---- item 11: the plan, --n 0, a figure over nothing ----------------------------------------------
def test_the_plan_is_printed_before_the_audit_starts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[str] = []

    def run(*args: Any, **kwargs: Any) -> Any:
        started.append("run")
        raise TextRobustError("stop here")

    monkeypatch.setattr(audit, "run", run)
    result = runner.invoke(app, ["audit", "--profile", "paper", "--out", str(tmp_path / "o")])
    assert started and result.exit_code == 2
    text = _flat(result.output)
    assert text.index("Plan (profile paper: 9 analyses)") < text.index("stop here")
    assert "second-order (n=872)" in text and "pr (n=1,000)" in text and "Rough time: 3.5 h" in text
    assert "--n N caps each analysis's own n" in text
    capped = _flat(runner.invoke(app, ["audit", "--profile", "paper", "--n", "3", "--out", str(tmp_path / "o")])
                   .output)
    assert "attack (n=3)" in capped and "--n 3 caps each analysis's own n: each runs on at most 3 examples" in capped
    quiet = runner.invoke(app, ["audit", "--quiet", "--out", str(tmp_path / "o")]).output
    assert "Plan (" not in quiet


def test_the_plan_sizes_and_time() -> None:
    lines = describe_plan({"attack": {"n": 10}, "evaluate": {}}, profile=None, n=None)
    assert lines[0] == "Plan (2 analyses): attack (n=10), evaluate (all examples)."
    assert lines[1].startswith("Rough time: 29 s plus evaluate over every example of the data")  # 10 x 2.9 s
    assert describe_plan(profile_settings("quick"), profile="quick")[1].startswith("Rough time: 2 min")


def test_n_zero_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_toy_victim(monkeypatch)
    result = runner.invoke(app, ["audit", "--analyses", "evaluate", "--n", "0", "--data", str(reviews_csv(tmp_path)),
                                 "--out", str(tmp_path / "run"), "--quiet"])
    assert result.exit_code == 2
    assert "The '--n' option must be an int >= 1" in _flat(result.output) and not (tmp_path / "run").exists()


def test_a_figure_over_no_examples_fails_the_gate(tmp_path: Path) -> None:
    summary = {"schema": "textrobust.summary/1", "analyses": {"evaluate": {"run_id": "r", "summary": {
        "units": 0, "ok": 0, "errors": 0, "budget_exhausted": 0, "examples": 0, "accuracy": None}}}}
    (tmp_path / "summary.json").write_text(json.dumps(summary))
    result = runner.invoke(app, ["gate", str(tmp_path), "--require", "evaluate.errors<=0"])
    assert result.exit_code == 3, result.output
    assert "evaluate.errors was computed over no examples (evaluate ran on 0 units)" in _flat(result.output)
    [outcome] = check([parse_requirement("evaluate.errors<=0")], {"evaluate.units": 1, "evaluate.errors": 0})
    assert outcome.passed  # one unit: the figure stands


# ---- item 13: Not-run commands, JUnit folders, full-width digits ----------------------------------
def test_not_run_commands_carry_the_users_n_and_candidates() -> None:
    ran = {"attack": {"n": 3, "candidates": "paper"}}
    commands = {m["name"]: m["command"] for m in not_run(ran, settings=ran)}
    assert commands["second-order"] == "textrobust second-order --n 3 --candidates paper --out runs/second-order"
    assert commands["bias"] == "textrobust bias --n 3 --out runs/bias"  # bias has no candidates
    assert commands["evaluate"] == "textrobust evaluate --out runs/evaluate"
    plain = {m["name"]: m["command"] for m in not_run(["attack"])}
    assert plain["bias"] == "textrobust bias --n 20 --out runs/bias"  # the full profile's size
    default = {"attack": {"n": 20, "candidates": "validated"}}
    assert "--candidates" not in not_run(default, settings=default)[1]["command"]


def test_an_audit_with_paper_candidates_says_so_and_its_suggestions_keep_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_toy_victim(monkeypatch)  # about 20 s: the paper's counter-fitted neighbours load
    result = runner.invoke(app, ["audit", "--analyses", "attack", "--candidates", "paper", "--n", "2", "--data",
                                 str(reviews_csv(tmp_path)), "--out", str(tmp_path / "run"), "--quiet"])
    assert result.exit_code == 0, result.output
    text = _flat(result.stdout)
    assert "Verdict: unknown. No analysis counted toward the level: attack used the papers' own substitutes" in text
    assert "No robustness analysis ran" not in text
    assert "textrobust second-order --data" in text and "--n 2 --candidates paper --out runs/second-order" in text


def test_a_missing_junit_folder_is_refused_not_made(tmp_path: Path) -> None:
    (tmp_path / "summary.json").write_text(json.dumps({"schema": "textrobust.summary/1", "analyses": {
        "evaluate": {"run_id": "r", "summary": {"units": 6, "ok": 6, "errors": 0, "budget_exhausted": 0}}}}))
    target = tmp_path / "nonexistent" / "dir" / "x.xml"
    result = runner.invoke(app, ["gate", str(tmp_path), "--require", "evaluate.errors<=0", "--junit", str(target)])
    assert result.exit_code == 2 and "its folder" in result.output and "does not exist" in _flat(result.output)
    assert not (tmp_path / "nonexistent").exists()
    with pytest.raises(ConfigError, match="does not exist"):
        write_junit((), target)
    ok = runner.invoke(app, ["gate", str(tmp_path), "--require", "evaluate.errors<=0", "--junit",
                             str(tmp_path / "x.xml")])
    assert ok.exit_code == 0 and (tmp_path / "x.xml").is_file()


def test_an_audit_refuses_a_missing_junit_folder_before_running(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(audit, "run", lambda *a, **k: pytest.fail("the audit ran"))
    result = runner.invoke(app, ["audit", "--analyses", "evaluate", "--require", "evaluate.errors<=0", "--junit",
                                 str(tmp_path / "no" / "x.xml"), "--out", str(tmp_path / "run"), "--quiet"])
    assert result.exit_code == 2 and "does not exist" in _flat(result.output)


@pytest.mark.parametrize("text", ["evaluate.errors<=０", "attack.success_rate<=０.５", "attack.l0>=١"])
def test_full_width_and_other_unicode_digits_are_refused(text: str, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="ASCII digits"):
        parse_requirement(text)
    result = runner.invoke(app, ["gate", str(tmp_path), "--require", text])
    assert result.exit_code == 2 and "ASCII digits" in _flat(result.output)


def test_summary_json_card_keeps_defense_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from textrobust.audit.testing import keyword_scores
    from textrobust.victims.function import FunctionVictim

    class HardenedToy(FunctionVictim):
        card = {"architecture": "toy", "defense": "certified",
                "defense_settings": {"certified_test_accuracy": 0.5, "config": {"epochs": 8}}}

    use_toy_victim(monkeypatch, HardenedToy(keyword_scores, ("negative", "positive")))
    result = runner.invoke(app, ["audit", "--analyses", "evaluate", "--data", str(reviews_csv(tmp_path)), "--out",
                                 str(tmp_path / "run"), "--quiet"])
    assert result.exit_code == 0, result.output
    card = json.loads((tmp_path / "run" / "summary.json").read_text())["victim"]["card"]
    assert card["defense"] == "certified"
    assert card["defense_settings"] == {"certified_test_accuracy": 0.5, "config": {"epochs": 8}}


def test_audit_candidates_shows_its_choices() -> None:
    text = _flat(runner.invoke(app, ["audit", "--help"], env={"COLUMNS": "200"}).output)
    assert "--candidates [validated|paper]" in text and "--candidates <str>" not in text


# ---- item 14: the full profile's ACCS gives a figure ----------------------------------------------
def test_the_full_profiles_accs_size_is_the_measured_one() -> None:
    from textrobust.audit.profiles import ACCS_FULL_MIN

    assert profile_settings("full")["accs"]["n"] >= ACCS_FULL_MIN  # 3 left ACCS undefined on the default victim
    assert "textrobust accs --n 20 --out runs/accs" in [m["command"] for m in not_run(["evaluate"])]


@pytest.mark.heavy
def test_the_full_profiles_accs_gives_a_figure_on_the_default_victim(tmp_path: Path) -> None:
    """The real default victim and models: about 5 minutes on 2 busy cores."""
    result = runner.invoke(app, ["audit", "--profile", "full", "--analyses", "accs", "--out", str(tmp_path / "run"),
                                 "--quiet"])
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())["analyses"]["accs"]["summary"]
    [row] = summary["rows"]
    assert row["accs"] is not None and row["max_first_order"] > 0 and row["max_second_order"] > 0
