"""The audit configuration file in the library (:mod:`textrobust.audit.config_file`,
issue 29): Python reads and runs the same file as ``textrobust audit --config``, with the
same analyses and settings, and the file's key types are those of the CLI's options."""

from __future__ import annotations

import typing
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli_helpers import reviews_csv, use_toy_victim
from textrobust.audit import config_file
from textrobust.audit.config_file import KEY_TYPES, SECTIONS, choose_analyses, load_config, run_config
from textrobust.audit.run_folder import stored_options
from textrobust.audit.testing import keyword_victim
from textrobust.cli import options as o
from textrobust.cli.app import app
from textrobust.errors import ConfigError


def _file(tmp_path: Path, out: Path) -> Path:
    path = tmp_path / "audit.toml"
    path.write_text(f"""
[data]
name = "{reviews_csv(tmp_path)}"
label_names = ["negative", "positive"]

[run]
out = "{out}"
seed = 3
title = "Toy audit"

[analyses.evaluate]
batch_size = 2

[analyses.attack]
recipe = "pwws"
n = 3
quality = false
candidates = "paper"
""", encoding="utf-8")
    return path


def test_python_and_the_command_line_run_the_same_file_the_same_way(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from_python = run_config(_file(tmp_path, tmp_path / "python"), victim=keyword_victim(), progress=False)
    use_toy_victim(monkeypatch)
    result = CliRunner().invoke(app, ["audit", "--config", str(_file(tmp_path, tmp_path / "cli")), "--quiet"],
                                env={"TEXTROBUST_NO_PROGRESS": "1"})
    assert result.exit_code == 0, result.output
    for name in ("evaluate", "attack"):
        python_settings, python_shared = stored_options(tmp_path / "python", name)
        cli_settings, cli_shared = stored_options(tmp_path / "cli", name)
        assert python_settings == cli_settings and python_shared == cli_shared
        assert python_shared["seed"] == 3 and python_shared["label_names"] == ["negative", "positive"]
    assert stored_options(tmp_path / "python", "attack")[0]["recipe"] == "pwws"
    assert from_python.report["title"] == "Toy audit" and set(from_python.results) == {"evaluate", "attack"}
    assert (tmp_path / "python" / "report.html").is_file() and (tmp_path / "cli" / "report.html").is_file()


def test_keyword_arguments_win_over_the_file(tmp_path: Path) -> None:
    arguments = config_file.run_arguments(load_config(_file(tmp_path, tmp_path / "run")))
    assert arguments["seed"] == 3 and arguments["out"] == tmp_path / "run" and arguments["title"] == "Toy audit"
    assert arguments["data_options"] == {"label_names": ["negative", "positive"]}
    assert arguments["analyses"]["attack"] == {"recipe": "pwws", "n": 3, "quality": False, "candidates": "paper"}
    result = run_config(_file(tmp_path, tmp_path / "run"), victim=keyword_victim(), progress=False,
                        analyses={"evaluate": {}}, out=tmp_path / "other")
    assert set(result.results) == {"evaluate"} and (tmp_path / "other" / "report.json").is_file()


def test_the_analyses_are_chosen_as_the_audit_command_chooses_them() -> None:
    from textrobust.audit.profiles import profile_settings

    assert choose_analyses() == profile_settings("quick")  # no file, no names: the quick profile
    assert choose_analyses({"attack": {"recipe": "pwws"}}) == {"attack": {"recipe": "pwws"}}
    assert choose_analyses({"attack": {"n": 1}}, profile="full")["attack"] == {**profile_settings("full")["attack"],
                                                                                "n": 1}
    assert choose_analyses({"attack": {"n": 40}}, n=5)["attack"]["n"] == 5
    assert choose_analyses({"attack": {"n": 4}}, n=5)["attack"]["n"] == 4
    assert choose_analyses(None, names="evaluate,msr", candidates="paper")["msr"]["candidates"] == "paper"
    assert "candidates" not in choose_analyses(None, names="evaluate", candidates="paper")["evaluate"]
    with pytest.raises(ConfigError, match="Unknown analyses"):
        choose_analyses(None, names="nope")
    with pytest.raises(ConfigError, match="must be an int >= 1"):
        choose_analyses(n=-1)


def test_every_key_standing_for_a_shared_option_has_that_options_type() -> None:
    """The file's key types are declared in the library (it cannot import the CLI); this
    keeps them equal to the options' types."""
    for section, keys in SECTIONS.items():
        for key in keys or ():
            option = config_file.KEY_OPTIONS.get((section, key), key)
            if option not in o.SHARED:
                continue
            declared = typing.get_args(o.SHARED[option][0])[0]  # Annotated[T, ...]
            kind = next((k for k in typing.get_args(declared) if k is not type(None)), declared)  # Optional[T]
            assert KEY_TYPES.get(option, str) is kind, (section, key, kind)


def test_a_bad_file_is_a_config_error_naming_the_key_in_python_too(tmp_path: Path) -> None:
    path = tmp_path / "audit.toml"
    path.write_text('[run]\nseed = "three"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"The key 'seed' in \[run\] of .* must be an integer \(as --seed takes\)"):
        run_config(path)
    path.write_text('[analyses.attack]\nbudjet = 3\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"The key 'budjet' in \[analyses.attack\]"):
        load_config(path)


def test_the_example_documents_every_run_key_and_loads_with_them_uncommented(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Every [run] key is in CONFIG_EXAMPLE (set or commented, with what it does), and the
    example with the commented run keys switched on is a valid file."""
    import textrobust.threads
    from textrobust.audit.config_file import CONFIG_EXAMPLE

    monkeypatch.setattr(textrobust.threads, "affinity_cpus", lambda: 2)
    run = CONFIG_EXAMPLE.split("[run]\n", 1)[1].split("\n\n", 1)[0].splitlines()
    keys = {line.lstrip("# ").split(" =")[0] for line in run if " = " in line}
    assert keys == set(SECTIONS["run"]), sorted(set(SECTIONS["run"]) ^ keys)
    for line in run:
        if line.startswith("# ") and " = " in line:  # a key left out: a note after it says what it does
            assert "  # " in line[2:], f"no note on what it does: {line}"
    switched = [line[2:] if line.startswith("# ") and " = " in line else line for line in run]
    path = tmp_path / "audit.toml"
    path.write_text(CONFIG_EXAMPLE.replace("\n".join(run), "\n".join(switched)), encoding="utf-8")
    loaded = load_config(path)["run"]
    assert {key: loaded[key] for key in ("device", "dtype", "allow_precision_change", "threads",
                                         "gpus_per_worker")} == {
        "device": "auto", "dtype": "float32", "allow_precision_change": False, "threads": "auto",
        "gpus_per_worker": 0.5}
    arguments = config_file.run_arguments(load_config(path))
    assert (arguments["threads"], arguments["device"], arguments["gpus_per_worker"]) == ("auto", "auto", 0.5)


def test_threads_in_the_file_reach_the_audit(tmp_path: Path) -> None:
    import json

    out = tmp_path / "run"
    path = tmp_path / "audit.toml"
    path.write_text(f'[data]\nname = "{reviews_csv(tmp_path).as_posix()}"\n[run]\nout = "{out.as_posix()}"\n'
                    'threads = 1\n[analyses.evaluate]\n', encoding="utf-8")
    run_config(path, victim=keyword_victim(), progress=False)
    plan = json.loads((out / "summary.json").read_text())["threads"]
    assert (plan["threads"], plan["source"]) == (1, "given")
