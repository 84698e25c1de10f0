"""CLI fuzz: every registered command, every option, a table of bad values per option type.

Each bad value must end in exit code 2 with one clear error line naming the option (or
click's usage error), no traceback, and nothing written to ``--out``. To bound the cost
of a value that slips through validation, every run also gets ``--n 1`` where the command
has ``--n`` and ``--quiet`` where it has it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from textrobust.cli.app import app

runner = CliRunner()
COMMAND = typer.main.get_command(app)
#: Commands that take no analysis options worth fuzzing (they only list or read).
SKIP = {"list", "assets"}
#: Options whose "bad" values are legitimately accepted (documented), by option name.
LENIENT = {"--address", "--label-map", "--text-column", "--label-column", "--pair-column", "--label-names",
           "--encoding", "--recipe", "--method", "--fill-in", "--constraint", "--group", "--methods", "--analyses",
           "--split", "--format", "--run-id", "--to", "--data", "--victim", "--config", "--executor",
           "--file-format", "--length-policy"}

INT_BAD = ["-5", "abc", str(10**30)]
FLOAT_BAD = ["nan", "-1e9", "abc"]


def _is_option(param: object) -> bool:
    # typer may bundle its own click: compare by class name, not by isinstance
    return type(param).__name__.endswith("Option")


def _commands() -> list[tuple[str, Any]]:
    assert hasattr(COMMAND, "commands")
    return [(name, cmd) for name, cmd in sorted(COMMAND.commands.items()) if name not in SKIP]


def _cases() -> list[tuple[str, str, str]]:
    cases = []
    for name, cmd in _commands():
        for param in cmd.params:
            if not _is_option(param) or param.is_flag or not param.opts:
                continue
            flag = max(param.opts, key=len)
            if flag in LENIENT:
                continue
            kind = param.type_descriptor.annotation
            if kind is int:
                values = INT_BAD
            elif kind is float:
                values = FLOAT_BAD
            else:
                continue
            cases += [(name, flag, value) for value in values]
    return cases


def _base(name: str, cmd: Any, out: Path, skip: str) -> list[str]:
    argv = [name]
    arguments = [p for p in cmd.params if type(p).__name__.endswith("Argument")]
    if arguments:
        argv.append({"train": "cnn", "data": "rotten_tomatoes"}.get(name, str(out)))
    options = {o for p in cmd.params if _is_option(p) for o in p.opts}
    if "--n" in options and skip != "--n":
        argv += ["--n", "1"]
    if "--quiet" in options:
        argv.append("--quiet")
    if "--out" in options:
        argv += ["--out", str(out)]
    return argv


@pytest.mark.parametrize("name, flag, value", _cases())
def test_a_bad_number_exits_2_naming_the_option(tmp_path: Path, name: str, flag: str, value: str) -> None:
    out = tmp_path / "out"
    cmd = COMMAND.commands[name]  # type: ignore[attr-defined]
    argv = _base(name, cmd, out, flag) + [flag, value]
    result = runner.invoke(app, argv, terminal_width=100)
    assert result.exit_code == 2, f"{argv}: exit {result.exit_code}\n{result.output[-2000:]}"
    assert "Traceback" not in result.output, argv
    assert flag in result.output or "Invalid value" in result.output or "is not a valid" in result.output, \
        f"{argv}: the message does not name {flag}:\n{result.output[-1000:]}"
    assert not out.exists() or not any(out.iterdir()), f"{argv} wrote into --out"


@pytest.mark.parametrize("name", [n for n, c in _commands() if any("--out" in p.opts for p in c.params
                                                                     if _is_option(p))])
def test_out_as_a_file_or_read_only_folder_exits_2(tmp_path: Path, name: str,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    cmd = COMMAND.commands[name]  # type: ignore[attr-defined]
    target = tmp_path / "a-file"
    target.write_text("keep me")
    result = runner.invoke(app, _base(name, cmd, target, ""), terminal_width=100)
    assert result.exit_code == 2 and "--out" in result.output and "Traceback" not in result.output, result.output
    assert target.read_text() == "keep me"
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    # Root ignores permission bits: there the read-only folder is simulated at os.access.
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda path, mode, *a, **k: False if Path(path) == locked
                        else real_access(path, mode, *a, **k))
    try:
        result = runner.invoke(app, _base(name, cmd, locked / "out", ""), terminal_width=100)
        assert result.exit_code == 2 and "--out" in result.output and "Traceback" not in result.output, \
            result.output
        assert list(locked.iterdir()) == []
    finally:
        locked.chmod(0o700)


@pytest.mark.parametrize("name", [n for n, c in _commands() if any("--victim" in p.opts for p in c.params
                                                                     if _is_option(p))])
def test_a_missing_victim_folder_exits_2(tmp_path: Path, name: str) -> None:
    cmd = COMMAND.commands[name]  # type: ignore[attr-defined]
    out = tmp_path / "out"
    result = runner.invoke(app, _base(name, cmd, out, "") + ["--victim", str(tmp_path / "nope")], terminal_width=100)
    assert result.exit_code == 2 and "nope" in result.output and "Traceback" not in result.output, result.output


@pytest.mark.parametrize("name", [n for n, c in _commands() if any("--data" in p.opts for p in c.params
                                                                   if _is_option(p))])
def test_a_missing_data_file_exits_2(tmp_path: Path, name: str) -> None:
    cmd = COMMAND.commands[name]  # type: ignore[attr-defined]
    result = runner.invoke(app, _base(name, cmd, tmp_path / "out", "") + ["--data", str(tmp_path / "none.csv")],
                           terminal_width=100)
    assert result.exit_code == 2 and "none.csv" in result.output and "Traceback" not in result.output, result.output
