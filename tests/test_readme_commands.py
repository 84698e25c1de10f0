"""Every command of the README's tour runs as written, with small sizes.

The commands are parsed from README.md (```bash blocks of the "A short tour" section),
not copied here. Each runs in a scratch folder holding a copy of ``examples/``, through the
real command line (in-process), with sizes made small: ``--n`` at most 2, one training
epoch, 100 PR samples. A line ending in ``# not in CI`` is skipped (and must say why).
Each command must exit 0, and an analysis command must leave the files it promises in
its ``--out`` folder: ``store.sqlite``, ``summary.json``, ``report.json``, ``report.html``.
Also: ``--help`` of every registered command exits 0, and the tour shows no warning of a
dependency (issue 27): warnings are recorded under Python's default filters, as a user
sees them, and the commands' stderr and the process's file descriptor 2 (where libraries'
log handlers and worker processes write) are searched for "warning" and deprecations.
"""

from __future__ import annotations

import re
import shlex
import shutil
import warnings
from pathlib import Path

import pytest
from typer.testing import CliRunner

from textrobust.cli.app import app

ROOT = Path(__file__).resolve().parents[1]
SKIP_MARK = "# not in CI"
ANALYSIS_COMMANDS = {"evaluate", "attack", "second-order", "bias", "radius", "pr", "accs", "attribution", "msr", "audit",
                     "demo"}
DEFAULT_OUT = {"evaluate": "runs/evaluate", "attack": "runs/attack", "audit": "runs/audit", "demo": "runs/audit",
               "second-order": "runs/second-order", "bias": "runs/bias", "radius": "runs/radius", "pr": "runs/pr",
               "accs": "runs/accs", "attribution": "runs/attribution", "msr": "runs/msr"}
#: option -> the largest value the test lets a command use
SMALL = {"--n": 2, "--epochs": 1, "--samples": 100}
#: options added when a command has them and the README line does not give them
ADDED = {"train": ["--epochs", "1"], "audit": ["--n", "2"], "demo": ["--n", "2"], "evaluate": ["--n", "50"],
         "pr": ["--samples", "100"]}


def tour_commands() -> list[tuple[str, bool]]:
    """``(command line, skipped)`` for every ``textrobust`` line of the tour's bash blocks."""
    text = (ROOT / "README.md").read_text()
    tour = text[text.index("## A short tour"):]
    tour = tour[: tour.index("\n## ", 5)] if "\n## " in tour[5:] else tour
    lines: list[tuple[str, bool]] = []
    for block in re.findall(r"```bash\n(.*?)```", tour, flags=re.S):
        for line in block.splitlines():
            if line.strip().startswith("textrobust "):
                lines.append((line.strip(), SKIP_MARK in line))
    return lines


def _small(argv: list[str]) -> list[str]:
    out = list(argv)
    for i, token in enumerate(out[:-1]):
        if token in SMALL and out[i + 1].isdigit():
            out[i + 1] = str(min(int(out[i + 1]), SMALL[token]))
    for option_value in [ADDED.get(out[0], [])]:
        if option_value and option_value[0] not in out:
            out += option_value
    return out


def _out_folder(argv: list[str]) -> Path | None:
    if argv[0] not in ANALYSIS_COMMANDS:
        return None
    if "--out" in argv:
        return Path(argv[argv.index("--out") + 1])
    if "--config" in argv:
        return None  # the folder comes from the file; checked by the report command that follows
    return Path(DEFAULT_OUT[argv[0]])


def test_the_tour_is_parsed() -> None:
    commands = tour_commands()
    assert len(commands) >= 10
    assert all(cmd.startswith("textrobust ") for cmd, _ in commands)
    skipped = [cmd for cmd, skip in commands if skip]
    for cmd in skipped:
        assert cmd.split(SKIP_MARK, 1)[1].strip(": ").strip(), f"a skipped line must say why: {cmd}"


def test_every_registered_command_has_help() -> None:
    runner = CliRunner()
    names = [c.name for c in app.registered_commands]
    assert {"audit", "report", "attack", "evaluate", "train", "data", "list"} <= set(names)
    for name in names:
        result = runner.invoke(app, [name, "--help"], terminal_width=80)
        assert result.exit_code == 0, (name, result.output)
        assert "Usage" in result.output


#: Lines of stderr that are a dependency's warning (a user cannot act on them)
NOISE = re.compile(r"warning|deprecat|token authentication", re.IGNORECASE)


def _users_warning_filters() -> None:
    """Python's default warning filters, as a user running ``textrobust`` has them."""
    warnings.resetwarnings()
    warnings.simplefilter("default")
    for category in (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning):
        warnings.simplefilter("ignore", category)
    warnings.filterwarnings("default", category=DeprecationWarning, module="__main__")


@pytest.mark.heavy
def test_every_tour_command_runs_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capfd: pytest.CaptureFixture[str]) -> None:
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TEXTROBUST_NO_PROGRESS", "1")
    monkeypatch.setenv("TEXTROBUST_THREADS", "1")  # `train` would warn of a busy machine: not a dependency's
    runner = CliRunner()
    ran = 0
    noise: list[str] = []
    with warnings.catch_warnings(record=True) as shown:
        _users_warning_filters()
        for line, skipped in tour_commands():
            if skipped:
                continue
            argv = _small(shlex.split(line.split("  #", 1)[0])[1:])
            result = runner.invoke(app, argv, terminal_width=80)
            assert result.exit_code == 0, f"`{line}` (run as {argv}) exited {result.exit_code}:\n{result.output}"
            assert "Traceback" not in result.output, line
            noise += [f"`{line}`: {text}" for text in result.stderr.splitlines() if NOISE.search(text)]
            out = _out_folder(argv)
            if out is not None:
                for name in ("store.sqlite", "summary.json", "report.json", "report.html"):
                    assert (out / name).is_file(), f"`{line}` did not write {out / name}"
            ran += 1
    assert ran >= 10
    noise += [f"{w.category.__name__}: {w.message} ({w.filename}:{w.lineno})" for w in shown]
    noise += [f"fd 2: {text}" for text in capfd.readouterr().err.splitlines() if NOISE.search(text)]
    assert not noise, "dependency warnings reached the user:\n" + "\n".join(noise)
