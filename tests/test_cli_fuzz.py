"""CLI fuzz: every registered command, every option, a table of bad values per option type;
and ``audit --config`` with a key of the wrong type for every key of the file, and other
bad files (issue 27, item 11).

Each bad value must end in exit code 2 with one clear error line naming the option (or
click's usage error), no traceback, and nothing written to ``--out``. To bound the cost
of a value that slips through validation, every run also gets ``--n 1`` where the command
has ``--n`` and ``--quiet`` where it has it.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from textrobust.cli.app import app
from textrobust.errors import ConfigError

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


# ---- audit --config: a TOML file with bad values -----------------------------------------------
def _toml_keys() -> list[tuple[str, str, str]]:
    """``(section, key, TOML value of the wrong type)`` for every key of [victim], [data], [run]."""
    from textrobust.audit.config_file import SECTIONS, _check_type

    cases = []
    for section, keys in SECTIONS.items():
        for key in sorted(keys or ()):
            for value in ('"x"', "5", "true"):  # the first of these that is refused
                try:
                    _check_type(Path("f.toml"), section, key, tomllib.loads(f"v = {value}")["v"])
                except ConfigError:
                    cases.append((section, key, value))
                    break
    return cases


@pytest.mark.parametrize("section, key, value", _toml_keys())
def test_a_toml_key_of_the_wrong_type_exits_2_naming_the_key_and_file(tmp_path: Path, section: str, key: str,
                                                                      value: str) -> None:
    config = tmp_path / "audit.toml"
    config.write_text(f"[{section}]\n{key} = {value}\n")
    out = tmp_path / "out"
    result = runner.invoke(app, ["audit", "--config", str(config), "--analyses", "evaluate", "--n", "1", "--quiet",
                                 "--out", str(out)], terminal_width=400)
    message = " ".join(result.output.split())
    assert result.exit_code == 2, f"[{section}] {key} = {value}: exit {result.exit_code}\n{result.output[-2000:]}"
    assert "Traceback" not in result.output
    assert f"'{key}'" in message and f"[{section}]" in message and str(config) in message, message
    assert not out.exists() or not any(out.iterdir())


BAD_CONFIGS = {
    "run seed a string": ('[run]\nseed = "x"\n', ["'seed'", "[run]"]),
    "attack n a string": ('[analyses.attack]\nn = "five"\n', ["'n'", "[analyses.attack]"]),
    "attack budget out of range": ("[analyses.attack]\nbudget = 0\n", ["'budget'", "[analyses.attack]"]),
    "attack unknown key": ("[analyses.attack]\nbudjet = 10\n", ["'budjet'", "[analyses.attack]", "budget"]),
    "analysis not a table": ("[analyses]\nattack = 5\n", ["[analyses.attack]", "table"]),
    "unknown analysis": ("[analyses.atack]\n", ["atack"]),
    "unknown section": ("[runs]\nseed = 1\n", ["[runs]"]),
    "unknown key": ("[run]\nsed = 1\n", ["sed"]),
    "label_map values": ("[data]\nlabel_map = { fresh = 1 }\n", ["'label_map'", "[data]"]),
    "label_names items": ("[data]\nlabel_names = [1, 2]\n", ["'label_names'", "[data]"]),
    "not TOML": ("[run\nseed = 1\n", ["not valid TOML"]),
}


@pytest.mark.parametrize("with_n", [False, True], ids=["", "with --n 2"])
@pytest.mark.parametrize("case", sorted(BAD_CONFIGS))
def test_a_bad_config_file_exits_2_with_one_clear_error(tmp_path: Path, case: str, with_n: bool) -> None:
    text, expected = BAD_CONFIGS[case]
    config = tmp_path / "audit.toml"
    config.write_text(text)
    out = tmp_path / "out"
    argv = ["audit", "--config", str(config), "--quiet", "--out", str(out)] + (["--n", "2"] if with_n else [])
    result = runner.invoke(app, argv, terminal_width=400)
    message = " ".join(result.output.split())
    assert result.exit_code == 2, f"{case}: exit {result.exit_code}\n{result.output[-2000:]}"
    assert "Traceback" not in result.output and str(config) in message, message
    assert all(part in message for part in expected), f"{case}: {message}"
    assert "AttackSettings" not in message  # the file's keys, not Python class names
    assert not out.exists() or not any(out.iterdir())


def test_a_folder_or_unreadable_file_as_config_exits_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out"
    result = runner.invoke(app, ["audit", "--config", str(tmp_path), "--quiet", "--out", str(out)],
                           terminal_width=400)
    message = " ".join(result.output.split())
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert "'--config'" in message and "folder" in message and str(tmp_path) in message
    config = tmp_path / "audit.toml"
    config.write_text("[run]\nseed = 1\n")

    def unreadable(self: Path, *args: Any, **kwargs: Any) -> str:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "read_text", unreadable)  # root reads any file: simulate a locked one
    result = runner.invoke(app, ["audit", "--config", str(config), "--quiet", "--out", str(out)], terminal_width=400)
    message = " ".join(result.output.split())
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert "'--config'" in message and "cannot be read: Permission denied" in message and str(config) in message
    assert not out.exists()


# ---- export targets: no file of a run is ever written over (issue 37, item 1) --------------------
@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run folder as ``evaluate`` leaves it (toy victim): store, summary, reports."""
    from cli_helpers import reviews_csv, use_toy_victim

    folder = tmp_path_factory.mktemp("finished")
    with pytest.MonkeyPatch.context() as patch:
        use_toy_victim(patch)
        result = runner.invoke(app, ["evaluate", "--data", str(reviews_csv(folder)), "--quiet", "--out",
                                     str(folder / "run")], terminal_width=200)
    assert result.exit_code == 0, result.output
    (folder / "run" / "store.sqlite-wal").write_bytes(b"")  # as a live store has them
    (folder / "run" / "store.sqlite-shm").write_bytes(b"")
    return folder / "run"


def _files_of(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _export_targets(run: Path) -> list[str]:
    """Every file of the run folder, also as written with ``..`` and ``./`` and through a
    link; the folder itself."""
    names = [str(p.relative_to(run)) for p in sorted(run.rglob("*")) if p.is_file()]
    return [*names, f"../{run.name}/store.sqlite", "./summary.json", "link-to-store", "."]


@pytest.mark.parametrize("force", [False, True], ids=["", "--force"])
@pytest.mark.parametrize("fmt", ["csv", "jsonl", "json"])
def test_export_never_writes_over_a_file_of_the_run(finished_run: Path, fmt: str, force: bool) -> None:
    run = finished_run
    link = run.parent / "link-to-store"
    if not link.exists():
        link.symlink_to(run / "store.sqlite")
    before = _files_of(run)
    for target in _export_targets(run):
        path = link if target == "link-to-store" else run / target
        argv = ["export", str(run), "--format", fmt, "--to", str(path), *(["--force"] if force else [])]
        result = runner.invoke(app, argv, terminal_width=200)
        assert result.exit_code == 2, f"{argv}: exit {result.exit_code}\n{result.output[-1000:]}"
        assert "Traceback" not in result.output, argv
        assert _files_of(run) == before, f"{argv} changed the run folder"


# ---- SIGTERM: every command ends on it with 143 (issue 37, items 2 and 3) ------------------------
def _registered(name: str) -> Any:
    from textrobust.cli.app import app as typer_app

    return next(c for c in typer_app.registered_commands if (c.name or getattr(c.callback, "__name__", "")) == name)


@pytest.mark.parametrize("name", [n for n, _ in _commands() if n != "assets"])
@pytest.mark.parametrize("lost", [False, True], ids=["raised", "lost and run on"])
def test_a_stop_ends_every_command_with_143(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str,
                                             lost: bool) -> None:
    """SIGTERM raised in the command (``raised``), or lost on the way so that the command
    ran to its end (``lost and run on``): exit 143 with one line, no traceback."""
    import functools

    import textrobust.cli.sigterm as sigterm

    info = _registered(name)
    real = info.callback

    @functools.wraps(real)
    def command(*args: Any, **kwargs: Any) -> None:
        if not lost:
            raise sigterm.Terminated()

    monkeypatch.setattr(info, "callback", command)
    monkeypatch.setattr(sigterm, "_STOP", sigterm._Stop(owner=os.getpid(), requested=lost))
    cmd = COMMAND.commands[name]  # type: ignore[attr-defined]
    result = runner.invoke(app, _base(name, cmd, tmp_path / "out", ""), terminal_width=200)
    assert result.exit_code == 143, f"{name}: exit {result.exit_code}\n{result.output[-1000:]}"
    assert "terminated (SIGTERM)" in result.output and "Traceback" not in result.output, result.output
    assert sigterm._STOP.ended  # the command ended on the stop: no more deliveries
