"""A run folder and the process that runs in it (issue 27, items 5, 6 and 20).

One process writes a run folder at a time (a second is refused, naming the first);
``--resume`` with nothing to resume stops with exit 2; SIGTERM stops a run as Ctrl-C does,
saying what is saved and how to continue; an unreachable ``--address`` fails at once
instead of Ray retrying it for minutes. Every command runs through the real command line,
on a toy keyword victim (``audit.run`` is wrapped so that the victim option resolves to
it): fast, offline.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import textrobust
from textrobust import audit
from textrobust.audit.run_folder import LOCK_FILE, RunFolderLock
from textrobust.audit.testing import keyword_scores
from textrobust.cli.app import app
from textrobust.errors import StoreError
from textrobust.store import RunStore
from textrobust.victims.function import FunctionVictim

from cli_helpers import use_toy_victim  # noqa: E402

runner = CliRunner()

ROWS = [("a good film with a fine cast", "positive"), ("dull and slow from start to end", "negative"),
        ("a great story told with care", "positive"), ("the plot is thin and the jokes fall flat", "negative"),
        ("one great scene in a long film", "positive"), ("good acting cannot save a weak script", "negative")]


def _csv(tmp_path: Path) -> Path:
    path = tmp_path / "reviews.csv"
    path.write_text("text,label\n" + "".join(f'"{text}",{label}\n' for text, label in ROWS), encoding="utf-8")
    return path


_use_toy_victim = use_toy_victim


def _env() -> dict[str, str]:
    env = dict(os.environ)
    src = str(Path(textrobust.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH")) if p)
    return env


def _one_line(text: str) -> str:
    return " ".join(text.split())


# ---- item 5: one process per run folder ---------------------------------------------------------
_HOLDER = """
import sys
from textrobust.audit.run_folder import RunFolderLock
with RunFolderLock(sys.argv[1]):
    print("locked", flush=True)
    sys.stdin.read()  # until the test closes stdin
"""


def test_a_second_run_on_a_folder_in_use_exits_2_naming_the_other_process(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    _use_toy_victim(monkeypatch)
    data, out = _csv(tmp_path), tmp_path / "run"
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(out), "--label", "first-run"], env=_env(),
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked", holder.stderr
        result = runner.invoke(app, ["evaluate", "--data", str(data), "--quiet", "--out", str(out)],
                               terminal_width=300)
        message = _one_line(result.output)
        assert result.exit_code == 2, result.output
        assert "Traceback" not in result.output
        assert f"in use by process {holder.pid}" in message and "first-run" in message, message
        assert "--out" in message
        assert not (out / "store.sqlite").exists()  # the refused run wrote nothing
    finally:
        holder.communicate(input="", timeout=60)
    # the first process has ended: its lock file is removed with it (issue 37, item 14)
    assert not (out / LOCK_FILE).exists()
    again = runner.invoke(app, ["evaluate", "--data", str(data), "--quiet", "--out", str(out)], terminal_width=300)
    assert again.exit_code == 0, again.output
    with RunStore(out / "store.sqlite") as store:
        assert [run.kind for run in store.runs()] == ["evaluate"]


def test_the_lock_is_released_when_its_owner_dies_without_cleaning_up(tmp_path: Path) -> None:
    child = subprocess.Popen([sys.executable, "-c", _HOLDER, str(tmp_path)], env=_env(), stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "locked"
        with pytest.raises(StoreError, match=f"process {child.pid}"):
            RunFolderLock(tmp_path)
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=60)
    finally:
        child.kill()
        child.communicate(timeout=60)
    with RunFolderLock(tmp_path) as lock:  # stale: nobody holds it
        assert lock.held
        with pytest.raises(StoreError, match=f"process {os.getpid()}"):
            RunFolderLock(tmp_path)  # a second holder, even in the same process
    with RunFolderLock(tmp_path):  # released on leaving the block
        pass


def test_report_refuses_a_folder_in_use(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _use_toy_victim(monkeypatch)
    out = tmp_path / "run"
    assert runner.invoke(app, ["evaluate", "--data", str(_csv(tmp_path)), "--quiet", "--out", str(out)]).exit_code == 0
    with RunFolderLock(out):
        result = runner.invoke(app, ["report", str(out)], terminal_width=300)
    assert result.exit_code == 2 and "in use by process" in _one_line(result.output), result.output
    assert runner.invoke(app, ["report", str(out)]).exit_code == 0


# ---- item 6: --resume with nothing to resume ----------------------------------------------------
def test_resume_of_a_missing_folder_exits_2_and_says_how_to_start(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    _use_toy_victim(monkeypatch)
    out = tmp_path / "never-ran"
    result = runner.invoke(app, ["evaluate", "--data", str(_csv(tmp_path)), "--resume", "--quiet", "--out", str(out)],
                           terminal_width=300)
    message = _one_line(result.output)
    assert result.exit_code == 2, result.output
    assert "Nothing to resume" in message and str(out) in message and "does not exist" in message
    assert "without --resume" in message and "Traceback" not in result.output
    assert not out.exists()


def test_resume_of_a_store_of_another_analysis_exits_2_naming_both(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    _use_toy_victim(monkeypatch)
    data, out = _csv(tmp_path), tmp_path / "run"
    assert runner.invoke(app, ["evaluate", "--data", str(data), "--quiet", "--out", str(out)]).exit_code == 0
    result = runner.invoke(app, ["attack", "--data", str(data), "--n", "1", "--no-quality", "--resume", "--quiet",
                                 "--out", str(out)], terminal_width=300)
    message = _one_line(result.output)
    assert result.exit_code == 2, result.output
    assert "Nothing to resume" in message and "runs of evaluate, not of attack" in message, message
    assert "without --resume" in message
    with RunStore(out / "store.sqlite") as store:
        assert [run.kind for run in store.runs()] == ["evaluate"]  # no attack run was started
    empty = tmp_path / "empty"
    empty.mkdir()
    result = runner.invoke(app, ["evaluate", "--data", str(data), "--resume", "--quiet", "--out", str(empty)],
                           terminal_width=300)
    assert result.exit_code == 2 and "holds no run store" in _one_line(result.output), result.output
    assert list(empty.iterdir()) == []


def test_resume_of_an_audit_stopped_before_its_later_analyses_continues(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    _use_toy_victim(monkeypatch)
    data, out = _csv(tmp_path), tmp_path / "run"
    assert runner.invoke(app, ["evaluate", "--data", str(data), "--quiet", "--out", str(out)]).exit_code == 0
    # evaluate has a run to continue; attack starts: that is a resume, not an error
    result = runner.invoke(app, ["audit", "--data", str(data), "--analyses", "evaluate,attack", "--n", "1",
                                 "--resume", "--quiet", "--out", str(out)], terminal_width=300)
    assert result.exit_code == 0, result.output


# ---- item 20: SIGTERM and an unreachable Ray address ---------------------------------------------
_SLOW_RUN = """
import sys, time
from textrobust import audit
from textrobust.audit.testing import keyword_scores
from textrobust.victims.function import FunctionVictim

real = audit.run

def slow(texts):
    time.sleep(0.2)
    return keyword_scores(texts)

audit.run = lambda _victim, *args, **kwargs: real(FunctionVictim(slow, ("negative", "positive")), *args, **kwargs)
from textrobust.cli.app import main

sys.argv = ["textrobust", "evaluate", "--data", sys.argv[1], "--batch-size", "1", "--quiet", "--out", sys.argv[2]]
main()
"""


def test_sigterm_says_what_is_saved_and_how_to_resume(tmp_path: Path) -> None:
    data = tmp_path / "many.csv"
    data.write_text("text,label\n" + "".join(f'"a good film number {i}",positive\n' for i in range(400)))
    out = tmp_path / "run"
    store = out / "store.sqlite"

    def saved() -> int:
        if not store.is_file():
            return 0
        try:
            conn = sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=5)
            try:
                return int(conn.execute("SELECT COUNT(*) FROM results").fetchone()[0])
            finally:
                conn.close()
        except sqlite3.OperationalError:  # the tables are not created yet
            return 0

    child = subprocess.Popen([sys.executable, "-c", _SLOW_RUN, str(data), str(out)], env=_env(),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while saved() < 2:
            if child.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the run ended or stalled early: {child.communicate()[1]}")
            time.sleep(0.05)
        child.send_signal(signal.SIGTERM)
        _, stderr = child.communicate(timeout=120)
    finally:
        child.kill()
    assert child.returncode == 128 + signal.SIGTERM, stderr
    message = _one_line(stderr)
    assert "Traceback" not in stderr
    assert f"terminated (SIGTERM): {saved():,} results are saved in {store}" in message, message
    assert f"continue with: textrobust evaluate --out {out} --resume" in message
    assert 2 <= saved() < 400


def test_a_stop_before_the_run_starts_does_not_suggest_resume(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from textrobust.cli.common import Terminated

    def stopped(*args: Any, **kwargs: Any) -> Any:
        raise Terminated()  # SIGTERM while the victim loads

    monkeypatch.setattr(audit, "run", stopped)
    out = tmp_path / "run"
    result = runner.invoke(app, ["evaluate", "--data", str(_csv(tmp_path)), "--quiet", "--out", str(out)],
                           terminal_width=300)
    message = _one_line(result.output)
    assert result.exit_code == 128 + signal.SIGTERM, result.output
    assert "terminated (SIGTERM) before the run started: nothing is saved" in message, message
    assert "--resume" not in message


def test_an_unreachable_ray_address_fails_at_once_without_ray_retrying(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    ray = pytest.importorskip("ray")
    if ray.is_initialized():
        pytest.skip("Ray is already running in this process")
    _use_toy_victim(monkeypatch)
    tried: list[Any] = []
    # ray.init retries an address nobody answers for minutes: it must not be reached
    monkeypatch.setattr(ray, "init", lambda *args, **kwargs: tried.append(kwargs))
    out = tmp_path / "run"
    result = runner.invoke(app, ["evaluate", "--data", str(_csv(tmp_path)), "--executor", "ray", "--address",
                                 "127.0.0.1:1", "--quiet", "--out", str(out)], terminal_width=300)
    message = _one_line(result.output)
    assert result.exit_code == 2, result.output
    assert tried == []
    assert "'--address'" in message and "'127.0.0.1:1'" in message and "cannot be reached" in message, message
    assert "Traceback" not in result.output and not out.exists()
