"""The robustness gate for CI (issue 30, item 4): ``--require 'ANALYSIS.FIGURE>=VALUE'``.

Parsing (good and malformed), checking against a summary (pass, fail with the shortfall,
NaN and absent figures), the keys known before a run and after it, the JUnit file, and the
command line: ``audit --require`` exits 3 when a figure misses, 2 for a malformed
requirement or an unknown key (listing the valid ones, before any work runs), and
``textrobust gate RUN_DIR`` checks a finished run. The commands run in-process on the toy
keyword victim over six reviews (``tests/cli_helpers.py``): seconds, not minutes.
"""

from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typer.testing import CliRunner

from textrobust.analyses import ANALYSES
from textrobust.audit.requirements import (
    JUNIT_SUITE,
    Operator,
    Requirement,
    check,
    check_keys,
    declared_figures,
    figures,
    load_figures,
    parse_requirement,
    parse_requirements,
    summary_keys,
    write_junit,
)
from textrobust.cli.app import app
from textrobust.cli.audit import CONFIG_EXAMPLE, load_config
from textrobust.errors import ConfigError, StoreError

from cli_helpers import reviews_csv, use_toy_victim  # noqa: E402

runner = CliRunner()


def _invoke(argv: list[str]) -> tuple[int, str]:
    result = runner.invoke(app, argv, terminal_width=300)
    assert "Traceback" not in result.output, result.output
    return result.exit_code, " ".join(result.output.split())


def _summary(attack: dict[str, object]) -> dict[str, object]:
    """A summary.json as the orchestrator writes it, with an attack summary."""
    base = {"units": 10, "ok": 10, "errors": 0, "budget_exhausted": 0}
    return {"schema": "textrobust.summary/1", "analyses": {"attack": {"run_id": "r", "summary": {**base, **attack}}}}


# ---- parsing ----------------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "key", "operator", "threshold"), [
    ("attack.accuracy_under_attack>=0.30", "attack.accuracy_under_attack", Operator.AT_LEAST, 0.30),
    ("  attack.success_rate <= 0.5 ", "attack.success_rate", Operator.AT_MOST, 0.5),
    ("second-order.success_rate<=1e-1", "second-order.success_rate", Operator.AT_MOST, 0.1),
    ("radius.bounds.mean_lower>=-2", "radius.bounds.mean_lower", Operator.AT_LEAST, -2),
    ("evaluate.accuracy_per_label.0>=.5", "evaluate.accuracy_per_label.0", Operator.AT_LEAST, 0.5),
])
def test_requirements_parse(text: str, key: str, operator: Operator, threshold: float) -> None:
    requirement = parse_requirement(text)
    assert requirement == Requirement(key, operator, threshold)
    assert requirement.analysis == key.split(".")[0]
    assert parse_requirement(str(requirement)) == requirement  # what messages show parses back


def test_a_requirement_is_validated_when_made() -> None:
    for key, operator, threshold in (("accuracy", Operator.AT_LEAST, 0.5), ("a.x", ">=", 0.5),
                                     ("a.x", Operator.AT_MOST, math.nan), ("a.x", Operator.AT_MOST, "1")):
        with pytest.raises(ConfigError, match="of a requirement must"):
            Requirement(key, operator, threshold)  # type: ignore[arg-type]


def test_a_whole_threshold_stays_a_count() -> None:
    assert str(parse_requirement("attack.errors<=0")) == "attack.errors <= 0"
    assert str(parse_requirement("attack.accuracy_under_attack>=0.3")) == "attack.accuracy_under_attack >= 0.30"


@pytest.mark.parametrize(("text", "said"), [
    ("attack.accuracy_under_attack", "has no operator"),
    ("attack.accuracy_under_attack>0.3", "operator '>'"),
    ("attack.accuracy_under_attack=0.3", "operator '='"),
    ("attack.accuracy_under_attack==0.3", "operator '=='"),
    ("accuracy_under_attack>=0.3", "ANALYSIS.FIGURE"),
    (">=0.3", "ANALYSIS.FIGURE"),
    ("attack..l0>=1", "ANALYSIS.FIGURE"),
    ("attack.accuracy under attack>=1", "ANALYSIS.FIGURE"),
    ("attack.l0>>=1", "ANALYSIS.FIGURE"),
    ("attack.l0!=1", "operator '!='"),
    ("attack.accuracy_under_attack>=high", "finite number"),
    ("attack.accuracy_under_attack>=", "finite number"),
    ("attack.accuracy_under_attack>=nan", "finite number"),
    ("attack.accuracy_under_attack<=inf", "finite number"),
    ("attack.accuracy_under_attack>=30%", "finite number"),
])
def test_malformed_requirements_are_config_errors(text: str, said: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_requirement(text)
    message = str(caught.value)
    assert message.startswith("The '--require' option")
    assert said in message and repr(text) in message  # names what was wrong and what was given
    assert "attack.accuracy_under_attack>=0.30" in message  # and what would be accepted


def test_parse_requirements_keeps_the_order_and_names_the_source() -> None:
    parsed = parse_requirements(["a.x>=1", "b.y<=2"])
    assert [r.key for r in parsed] == ["a.x", "b.y"]
    with pytest.raises(ConfigError, match=r"^The key 'require' in \[run\] of f.toml"):
        parse_requirements(["a.x>=1", "b.y"], "The key 'require' in [run] of f.toml")


# ---- checking ---------------------------------------------------------------------------------
def test_a_failing_requirement_says_by_how_much() -> None:
    [outcome] = check([parse_requirement("attack.accuracy_under_attack>=0.30")],
                      {"attack.accuracy_under_attack": 0.12})
    assert not outcome.passed and outcome.value == 0.12
    assert outcome.message == "attack.accuracy_under_attack = 0.12, required >= 0.30 (short by 0.18)"
    [over] = check([parse_requirement("attack.success_rate<=0.5")], {"attack.success_rate": 0.75})
    assert not over.passed and over.message == "attack.success_rate = 0.75, required <= 0.50 (over by 0.25)"
    [count] = check([parse_requirement("attack.errors<=0")], {"attack.errors": 3})
    assert count.message == "attack.errors = 3, required <= 0 (over by 3)"


def test_passing_requirements_say_by_how_much_and_bounds_are_inclusive() -> None:
    outcomes = check(parse_requirements(["attack.accuracy_under_attack>=0.30", "attack.success_rate<=0.5",
                                         "evaluate.accuracy>=0.3"]),
                     {"attack.accuracy_under_attack": 0.45, "attack.success_rate": 0.5, "evaluate.accuracy": 0.3})
    assert all(o.passed for o in outcomes)
    assert outcomes[0].message == "attack.accuracy_under_attack = 0.45, required >= 0.30 (passed by 0.15)"
    assert outcomes[1].message.endswith("(met exactly)")


def test_an_undefined_or_absent_figure_fails_with_a_clear_message() -> None:
    requirements = parse_requirements(["attack.similarity>=0.8", "attack.l0<=2", "radius.bounds.mean_lower>=1",
                                       "msr.lime_spearman>=0.1"])
    values = {"attack.similarity": None, "attack.l0": math.nan, "radius.bounds": None}
    outcomes = check(requirements, values)
    assert not any(o.passed for o in outcomes)
    assert outcomes[0].message == "attack.similarity is undefined (NaN or not computed), required >= 0.80"
    assert outcomes[1].message == "attack.l0 is undefined (NaN or not computed), required <= 2"
    assert outcomes[2].message == "radius.bounds.mean_lower is undefined (not computed), required >= 1"
    assert outcomes[3].message == "msr.lime_spearman is not in the summary (its analysis did not run), required >= 0.10"
    [typo] = check(parse_requirements(["attack.simlarity>=0.8"]), values)
    assert typo.message == "attack.simlarity is not in the summary (attack has no such figure), required >= 0.80"
    assert all(o.value is None for o in outcomes)


def test_figures_flatten_a_summary_with_dots() -> None:
    summary = _summary({"accuracy_under_attack": 0.4, "similarity": None, "recipe": "pwws", "rows": [1, 2],
                        "per_label": {"0": 0.5, "1": None}, "bounds": {"mean": 1.5, "inner": {"k": 2}},
                        "guaranteed": True})
    values = figures(summary)
    assert values["attack.accuracy_under_attack"] == 0.4
    assert values["attack.similarity"] is None
    assert values["attack.per_label.0"] == 0.5 and values["attack.per_label.1"] is None
    assert values["attack.bounds.inner.k"] == 2 and values["attack.guaranteed"] == 1
    assert values["attack.units"] == 10
    assert not any(k.startswith(("attack.recipe", "attack.rows")) for k in values)  # text and lists: no figure


# ---- which keys exist ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", ANALYSES.names())
def test_declared_figures_are_those_an_empty_summary_has(name: str) -> None:
    """The keys known before a run match what the analysis's summary writes (checked on the
    summary of no records, which every analysis can make without a model)."""
    keys, prefixes = declared_figures([name])
    assert {f"{name}.units", f"{name}.errors"} <= keys
    summary = ANALYSES.get(name)().summarise([], [])
    values = figures({"analyses": {name: {"summary": summary.to_dict()}}})
    open_ = {k for k in values if any(k.startswith(p + ".") for p in prefixes)}
    absent = {k for k, v in values.items() if v is None}
    assert set(values) - open_ - keys <= absent  # every written figure was declared...
    assert {k for k in keys - set(values) if not any(k.startswith(a + ".") for a in absent)} == set()  # ...and back


def test_keys_of_data_keyed_tables_are_open_before_the_run() -> None:
    keys, prefixes = declared_figures(["evaluate", "attack"])
    assert "evaluate.accuracy" in keys and "attack.accuracy_under_attack" in keys
    assert "evaluate.accuracy_per_label" in prefixes and not any(p.startswith("attack.") for p in prefixes)
    check_keys(parse_requirements(["evaluate.accuracy_per_label.1>=0.5"]), keys, prefixes)


def test_an_unknown_key_lists_the_valid_ones() -> None:
    keys, prefixes = declared_figures(["evaluate"])
    with pytest.raises(ConfigError) as caught:
        check_keys(parse_requirements(["evaluate.acuracy>=0.5"]), keys, prefixes, where="the analyses run (evaluate)")
    message = str(caught.value)
    assert "'evaluate.acuracy', which is not a figure of the analyses run (evaluate)" in message
    assert "Did you mean 'evaluate.accuracy'?" in message
    assert "Valid keys: evaluate.accuracy, evaluate.accuracy_per_label.<key>, evaluate.budget_exhausted" in message
    with pytest.raises(ConfigError, match="Valid keys: .*evaluate.queries"):
        check_keys(parse_requirements(["attack.accuracy_under_attack>=0.3"]), keys, prefixes)


def test_after_the_run_the_keys_are_the_declared_and_the_found_ones() -> None:
    values = figures({"analyses": {"evaluate": {"summary": {"units": 1, "ok": 1, "errors": 0, "budget_exhausted": 0,
                                                            "examples": 6, "accuracy": 0.8, "queries": 6,
                                                            "accuracy_per_label": {"0": 0.6, "1": 1.0}}},
                                   "radius": {"summary": {"units": 0, "bounds": None}}}})
    keys, prefixes = summary_keys(values)
    assert {"evaluate.accuracy_per_label.0", "evaluate.accuracy_per_label.1", "radius.bounds.mean_lower"} <= keys
    assert "evaluate.accuracy_per_label.2" not in keys and not prefixes
    with pytest.raises(ConfigError, match="Valid keys: .*evaluate.accuracy_per_label.1"):
        check_keys(parse_requirements(["evaluate.accuracy_per_label.positive>=0.5"]), keys, prefixes)


# ---- JUnit ----------------------------------------------------------------------------------------
def test_the_junit_file_has_one_case_per_requirement(tmp_path: Path) -> None:
    requirements = parse_requirements(["attack.accuracy_under_attack>=0.30", "attack.success_rate<=0.9",
                                       "attack.similarity>=0.8", "attack.l0<=5"])
    outcomes = check(requirements, figures(_summary({"accuracy_under_attack": 0.12, "success_rate": 0.5,
                                                      "similarity": None, "l0": 1.5})))
    (tmp_path / "reports").mkdir()  # an existing folder (a missing one is refused: tests/test_newcomer_37_audit.py)
    path = write_junit(outcomes, tmp_path / "reports" / "gate.xml")
    suite = ET.parse(path).getroot()
    assert suite.tag == "testsuite" and suite.get("name") == JUNIT_SUITE
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("4", "2", "0")
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == [str(r) for r in requirements]
    assert {c.get("classname") for c in cases} == {"textrobust.attack"}
    failures = {c.get("name"): c.find("failure") for c in cases}
    assert failures["attack.success_rate <= 0.90"] is None and failures["attack.l0 <= 5"] is None
    short = failures["attack.accuracy_under_attack >= 0.30"]
    assert short is not None
    assert short.get("message") == "attack.accuracy_under_attack = 0.12, required >= 0.30 (short by 0.18)"
    undefined = failures["attack.similarity >= 0.80"]
    assert undefined is not None and "undefined (NaN or not computed)" in (undefined.get("message") or "")


def test_an_unwritable_junit_path_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(ConfigError, match="The JUnit file .* cannot be written"):
        write_junit(check(parse_requirements(["a.x>=1"]), {"a.x": 2}), tmp_path / "file" / "gate.xml")


def test_load_figures_names_a_folder_without_a_summary(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="No summary.json in"):
        load_figures(tmp_path)
    (tmp_path / "summary.json").write_text("{not json")
    with pytest.raises(StoreError, match="cannot be read"):
        load_figures(tmp_path)


# ---- the command line ---------------------------------------------------------------------------
def _audit(tmp_path: Path, out: Path, *extra: str) -> tuple[int, str]:
    return _invoke(["audit", "--analyses", "evaluate", "--data", str(reviews_csv(tmp_path)), "--out", str(out),
                    "--quiet", *extra])


def test_audit_passes_the_gate_and_writes_junit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_toy_victim(monkeypatch)
    code, output = _audit(tmp_path, tmp_path / "run", "--require", "evaluate.accuracy>=0.5",
                          "--require", "evaluate.errors<=0", "--junit", str(tmp_path / "gate.xml"))
    assert code == 0, output
    accuracy = json.loads((tmp_path / "run" / "summary.json").read_text())["analyses"]["evaluate"]["summary"]
    assert accuracy["accuracy"] >= 0.5  # the toy victim gets 5 of 6 right
    assert "evaluate.errors = 0, required <= 0 (met exactly)" in output
    assert "Gate passed: all 2 requirement(s) met." in output
    suite = ET.parse(tmp_path / "gate.xml").getroot()
    assert (suite.get("tests"), suite.get("failures")) == ("2", "0")


def test_audit_exits_3_when_a_figure_misses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_toy_victim(monkeypatch)
    code, output = _audit(tmp_path, tmp_path / "run", "--require", "evaluate.accuracy>=0.9",
                          "--require", "evaluate.accuracy_per_label.1>=0.9", "--junit", str(tmp_path / "gate.xml"))
    assert code == 3, output
    assert "evaluate.accuracy = 0.8333, required >= 0.90 (short by 0.0667)" in output
    assert "Gate failed: 1 of 2 requirement(s) not met." in output
    suite = ET.parse(tmp_path / "gate.xml").getroot()
    assert (suite.get("tests"), suite.get("failures")) == ("2", "1")
    assert (tmp_path / "run" / "report.html").is_file()  # the run itself is complete


def test_an_undefined_figure_fails_the_gate_without_a_crash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_toy_victim(monkeypatch)
    config = tmp_path / "audit.toml"  # n = 0 from a file (--n 0 is refused): no example, no figure
    config.write_text("[analyses.evaluate]\nn = 0\n", encoding="utf-8")
    code, output = _audit(tmp_path, tmp_path / "run", "--config", str(config), "--require", "evaluate.accuracy>=0.5")
    assert code == 3, output
    assert "evaluate.accuracy was computed over no examples (evaluate ran on 0 units), required >= 0.50" in output


@pytest.mark.parametrize(("require", "said"), [
    ("attack.accuracy_under_attack>=0.3", "not a figure of the analyses run (evaluate). Valid keys: evaluate.accuracy,"),
    ("evaluate.acuracy>=0.3", "Did you mean 'evaluate.accuracy'?"),
    ("evaluate.accuracy>0.3", "only >= and <= are accepted"),
    ("evaluate.accuracy>=most", "finite number"),
])
def test_a_bad_requirement_exits_2_before_anything_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      require: str, said: str) -> None:
    use_toy_victim(monkeypatch)
    code, output = _audit(tmp_path, tmp_path / "run", "--require", require)
    assert code == 2, output
    assert said in output
    assert not (tmp_path / "run").exists()  # checked before the run started


def test_a_key_of_a_data_keyed_table_is_checked_after_the_run(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    use_toy_victim(monkeypatch)
    code, output = _audit(tmp_path, tmp_path / "run", "--require", "evaluate.accuracy_per_label.7>=0.5")
    assert code == 2, output
    assert "'evaluate.accuracy_per_label.7', which is not a figure of the run in" in output
    assert "evaluate.accuracy_per_label.0, evaluate.accuracy_per_label.1" in output


def test_gate_checks_a_finished_run_without_running(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_toy_victim(monkeypatch)
    out = tmp_path / "run"
    assert _audit(tmp_path, out)[0] == 0
    stamp = (out / "summary.json").stat().st_mtime_ns
    code, output = _invoke(["gate", str(out), "--require", "evaluate.accuracy>=0.5"])
    assert code == 0 and "evaluate.accuracy = 0.8333, required >= 0.50 (passed by 0.3333)" in output
    code, output = _invoke(["gate", str(out), "--require", "evaluate.accuracy<=0.5", "--junit", str(tmp_path / "j.xml")])
    assert code == 3 and "(over by 0.3333)" in output
    assert ET.parse(tmp_path / "j.xml").getroot().get("failures") == "1"
    code, output = _invoke(["gate", str(out), "--require", "attack.accuracy_under_attack>=0.3"])
    assert code == 2 and "Valid keys: evaluate.accuracy," in output
    assert (out / "summary.json").stat().st_mtime_ns == stamp  # nothing was re-run


def test_gate_on_a_written_summary_prints_the_shortfall(tmp_path: Path) -> None:
    (tmp_path / "summary.json").write_text(json.dumps(_summary({"accuracy_under_attack": 0.12, "similarity": None})))
    code, output = _invoke(["gate", str(tmp_path), "--require", "attack.accuracy_under_attack>=0.30",
                            "--require", "attack.similarity>=0.8", "--require", "attack.units>=5"])
    assert code == 3, output
    assert "attack.accuracy_under_attack = 0.12, required >= 0.30 (short by 0.18)" in output
    assert "attack.similarity is undefined" in output and "Gate failed: 2 of 3" in output


@pytest.mark.parametrize("argv", [["gate", "{tmp}"], ["gate", "{tmp}/missing", "--require", "evaluate.accuracy>=1"],
                                  ["gate", "{tmp}", "--require", "evaluate.accuracy"]])
def test_gate_usage_errors_exit_2(tmp_path: Path, argv: list[str]) -> None:
    code, output = _invoke([a.replace("{tmp}", str(tmp_path)) for a in argv])
    assert code == 2 and "error:" in output, output


# ---- the --config file --------------------------------------------------------------------------
def test_require_and_junit_in_the_config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_toy_victim(monkeypatch)
    config = tmp_path / "audit.toml"
    config.write_text(f'[data]\nname = "{reviews_csv(tmp_path)}"\n[run]\nout = "{tmp_path / "run"}"\n'
                      f'require = ["evaluate.accuracy>=0.9"]\njunit = "{tmp_path / "gate.xml"}"\n[analyses.evaluate]\n')
    code, output = _invoke(["audit", "--config", str(config), "--quiet"])
    assert code == 3 and "(short by 0.0667)" in output, output
    assert ET.parse(tmp_path / "gate.xml").getroot().get("failures") == "1"
    code, output = _invoke(["audit", "--config", str(config), "--quiet", "--require", "evaluate.accuracy>=0.5"])
    assert code == 0 and "Gate passed: all 1" in output, output  # the command line wins over the file


@pytest.mark.parametrize(("line", "said"), [
    ('require = "evaluate.accuracy>=0.5"', "The key 'require' in [run] of"),
    ('require = ["evaluate.accuracy"]', "The key 'require' in [run] of"),
    ("junit = 3", "The key 'junit' in [run] of"),
])
def test_a_bad_require_in_the_config_file_names_the_key(tmp_path: Path, line: str, said: str) -> None:
    config = tmp_path / "audit.toml"
    config.write_text(f"[run]\n{line}\n")
    with pytest.raises(ConfigError) as caught:
        load_config(config)
    assert said in str(caught.value)
    code, output = _invoke(["audit", "--config", str(config), "--out", str(tmp_path / "run")])
    assert code == 2 and said in output and not (tmp_path / "run").exists()


def test_a_key_from_the_file_that_is_not_a_figure_names_the_file(tmp_path: Path) -> None:
    config = tmp_path / "audit.toml"
    config.write_text('[run]\nrequire = ["attack.accuracy_under_attack>=0.3"]\n[analyses.evaluate]\n')
    code, output = _invoke(["audit", "--config", str(config), "--out", str(tmp_path / "run")])
    assert code == 2 and f"The key 'require' in [run] of {config} names 'attack.accuracy_under_attack'" in output


def test_the_config_example_documents_require_and_junit(tmp_path: Path) -> None:
    lines = [line for line in CONFIG_EXAMPLE.splitlines() if line.startswith(("# require =", "# junit ="))]
    assert len(lines) == 2
    uncommented = CONFIG_EXAMPLE
    for line in lines:
        uncommented = uncommented.replace(line, line[2:])
    (tmp_path / "audit.toml").write_text(uncommented)
    config = load_config(tmp_path / "audit.toml")
    assert config["run"]["require"] == ["attack.accuracy_under_attack>=0.30"]
    assert config["run"]["junit"].endswith("gate.xml")
