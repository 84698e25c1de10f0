"""What the command line says names what the user typed (issue 27, items 17 and 19).

Errors name flags and commands, never Python identifiers (settings classes, parameter
names, library functions); the --label-map suggestion maps the user's labels the right way
round and is not offered for an option already given; --help shows no ``<bool>`` after a
flag, and ``audit --help`` and the README document the --config file with an annotated
example that loads.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from textrobust import audit
from textrobust.audit.testing import keyword_scores
from textrobust.cli.app import app
from textrobust.cli.audit import CONFIG_EXAMPLE, load_config
from textrobust.victims.function import FunctionVictim

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[1]
REVIEWS = ROOT / "examples" / "reviews.csv"
REVIEW_OPTIONS = ["--data", str(REVIEWS), "--text-column", "review", "--label-column", "verdict"]
PRAISE = ("gripping", "wonderful", "funny", "inventive", "charming", "moving", "beautifully", "heartfelt")


def praise_scores(texts: list[str]) -> list[list[float]]:
    """A toy sentiment model that knows the praise words of examples/reviews.csv."""
    return [[0.1, 0.9] if any(w in t.lower() for w in PRAISE) else [0.8, 0.2] for t in texts]


def _use_victim(monkeypatch: pytest.MonkeyPatch, victim: Any) -> None:
    real = audit.run

    def run(_victim: Any, *args: Any, **kwargs: Any) -> Any:
        return real(victim, *args, **kwargs)

    monkeypatch.setattr(audit, "run", run)


def _invoke(argv: list[str]) -> tuple[int, str]:
    result = runner.invoke(app, argv, terminal_width=300)
    assert "Traceback" not in result.output, result.output
    return result.exit_code, " ".join(result.output.split())


PYTHON_NAMES = re.compile(r"Settings\b|Accepted parameters|parameter\b|\(Python:|textrobust\.zoo|train_victim|"
                          r"\bNone\b|label_map=|labels_by_position=")


# ---- item 17: flags and commands, not Python names ----------------------------------------------
def test_a_bad_setting_names_the_option_and_the_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _use_victim(monkeypatch, FunctionVictim(keyword_scores, ("negative", "positive")))
    code, message = _invoke(["attack", "--budget", "0", "--n", "1", "--no-quality", "--quiet", "--out",
                             str(tmp_path / "out"), *REVIEW_OPTIONS, "--label-map", "fresh=positive,rotten=negative"])
    assert code == 2
    assert "The '--budget' option must be greater than or equal to 1. Got 0 instead." in message, message
    assert "`textrobust attack --help`" in message
    assert not PYTHON_NAMES.search(message), message


def test_a_settings_error_keeps_its_facts_for_every_audience() -> None:
    import pickle

    from textrobust.analyses import ANALYSES
    from textrobust.errors import ConfigError, SettingsError

    with pytest.raises(SettingsError) as caught:
        ANALYSES.get("attack").settings_type(budget=0, nope=1)
    error = caught.value
    assert isinstance(error, ConfigError)  # caught as before
    assert "The 'budget' parameter of AttackSettings must be greater than or equal to 1. Got 0 instead." in str(error)
    assert "The 'nope' parameter of AttackSettings is not known." in str(error)
    assert error.render(lambda name: f"Key '{name}'").startswith("Key 'budget' must be greater")
    again = pickle.loads(pickle.dumps(error))  # crosses to and from worker processes
    assert str(again) == str(error) and again.problems == error.problems


@pytest.mark.parametrize("argv, flag", [
    (["evaluate", "--split", "sideways"], "'--split' option"),
    (["evaluate", *REVIEW_OPTIONS, "--file-format", "xls"], "'--file-format' option"),
])
def test_a_library_parameter_reads_as_its_flag(tmp_path: Path, argv: list[str], flag: str) -> None:
    code, message = _invoke([*argv, "--quiet", "--out", str(tmp_path / "out")])
    assert code == 2 and flag in message, message
    assert not PYTHON_NAMES.search(message), message


def test_a_missing_victim_folder_says_which_command_trains_one(tmp_path: Path) -> None:
    code, message = _invoke(["evaluate", "--victim", str(tmp_path / "nope"), "--quiet", "--out", str(tmp_path / "o")])
    assert code == 2 and "`textrobust train" in message, message
    assert not PYTHON_NAMES.search(message), message


def test_the_label_map_suggestion_follows_what_the_victim_predicts(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # the data's labels sort as (fresh, rotten), the victim's as (negative, positive): pairing
    # them by position would say fresh=negative, the wrong way round
    _use_victim(monkeypatch, FunctionVictim(praise_scores, ("negative", "positive")))
    code, message = _invoke(["evaluate", *REVIEW_OPTIONS, "--quiet", "--out", str(tmp_path / "out")])
    assert code == 2, message
    assert "--label-map fresh=positive,rotten=negative" in message, message
    assert "fresh=negative" not in message and "--labels-by-position" in message
    assert not PYTHON_NAMES.search(message), message
    code, message = _invoke(["evaluate", *REVIEW_OPTIONS, "--label-map", "fresh=positive,rotten=negative",
                             "--quiet", "--out", str(tmp_path / "ok")])
    assert code == 0, message  # the suggestion works


def test_no_suggestion_repeats_an_option_already_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _use_victim(monkeypatch, FunctionVictim(praise_scores, ("negative", "positive")))
    code, message = _invoke(["evaluate", *REVIEW_OPTIONS, "--label-map", "fresh=good,rotten=bad", "--quiet",
                             "--out", str(tmp_path / "out")])
    assert code == 2, message
    assert "Map them by name with --label-map" not in message, message
    assert "Correct --label-map" in message and "fresh=positive,rotten=negative" in message
    three = tmp_path / "three.csv"
    three.write_text(REVIEWS.read_text() + '"It is a film.",meh\n')
    code, message = _invoke(["evaluate", "--data", str(three), "--text-column", "review", "--label-column", "verdict",
                             "--labels-by-position", "--quiet", "--out", str(tmp_path / "out3")])
    assert code == 2, message
    assert "3 vs 2" in message and "match them by position" not in message, message


@pytest.mark.heavy
def test_the_default_victim_gets_the_right_label_map_for_the_example_file(tmp_path: Path) -> None:
    code, message = _invoke(["evaluate", *REVIEW_OPTIONS, "--quiet", "--out", str(tmp_path / "out")])
    assert code == 2 and "--label-map fresh=positive,rotten=negative" in message, message


# ---- item 19: --help ----------------------------------------------------------------------------
def _commands(group: Any = None, prefix: tuple[str, ...] = ()) -> list[list[str]]:
    """Every command and sub-command (``assets prepare``) as its argv."""
    group = group if group is not None else typer.main.get_command(app)
    found = []
    for name, command in sorted(group.commands.items()):
        found.append([*prefix, name])
        if hasattr(command, "commands"):
            found += _commands(command, (*prefix, name))
    return found


@pytest.mark.parametrize("argv", [["--help"]] + [[*names, "--help"] for names in _commands()])
def test_help_shows_no_type_after_a_flag(argv: list[str]) -> None:
    result = runner.invoke(app, argv, terminal_width=100)
    assert result.exit_code == 0, result.output
    assert "<bool>" not in result.output, result.output
    assert "--help" in result.output


def test_audit_help_describes_the_config_file_with_an_example() -> None:
    result = runner.invoke(app, ["audit", "--help"], terminal_width=100)
    text = " ".join(result.output.replace("│", " ").split())
    assert result.exit_code == 0
    assert "see `textrobust audit --help`" not in text  # the option's help no longer points at itself
    assert "A TOML file with the victim, the data, the run options and the analyses" in text
    assert "The --config file, an annotated example:" in text
    for line in CONFIG_EXAMPLE.splitlines():  # every line, its TOML tables not eaten as markup
        assert " ".join(line.split()) in text, line


def test_the_config_example_loads_and_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "examples").mkdir()
    shutil.copy(REVIEWS, tmp_path / "examples" / "reviews.csv")
    (tmp_path / "audit.toml").write_text(CONFIG_EXAMPLE)
    config = load_config(tmp_path / "audit.toml")
    assert set(config["analyses"]) == {"evaluate", "attack"}
    monkeypatch.chdir(tmp_path)
    _use_victim(monkeypatch, FunctionVictim(praise_scores, ("negative", "positive")))
    code, message = _invoke(["audit", "--config", "audit.toml", "--analyses", "evaluate", "--n", "2", "--quiet"])
    assert code == 0, message
    assert (tmp_path / "runs" / "audit-reviews" / "report.html").is_file()
    load_config(ROOT / "examples" / "audit.toml")


def test_the_readme_documents_the_config_file_as_the_help_does() -> None:
    readme = (ROOT / "README.md").read_text()
    assert f"```toml\n{CONFIG_EXAMPLE}```" in readme
