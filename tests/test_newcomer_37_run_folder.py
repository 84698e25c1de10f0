"""Issue 37, item 14 (run folders and the report command): a finished run folder keeps no
empty lock file, yet the lock stays exclusive while holders come and go; ``textrobust
report DIR`` prints its paths whole, at any width."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli_helpers import reviews_csv, use_toy_victim
from textrobust.audit.run_folder import LOCK_FILE, RunFolderLock
from textrobust.cli.app import app
from textrobust.errors import StoreError

runner = CliRunner()


def test_a_finished_run_folder_keeps_no_lock_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_toy_victim(monkeypatch)
    out = tmp_path / "run"
    result = runner.invoke(app, ["evaluate", "--data", str(reviews_csv(tmp_path)), "--quiet", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert (out / "summary.json").is_file() and not (out / LOCK_FILE).exists()
    with RunFolderLock(out) as lock:
        assert lock.held and (out / LOCK_FILE).is_file()  # there while held
    assert not (out / LOCK_FILE).exists()


def test_the_lock_stays_exclusive_while_holders_remove_it(tmp_path: Path) -> None:
    inside, most, taken = [0], [0], [0]
    guard = threading.Lock()
    failures: list[BaseException] = []

    def worker() -> None:
        try:
            for _ in range(150):
                try:
                    lock = RunFolderLock(tmp_path)
                except StoreError:
                    continue
                with guard:
                    inside[0] += 1
                    most[0] = max(most[0], inside[0])
                    taken[0] += 1
                time.sleep(0.0002)
                with guard:
                    inside[0] -= 1
                lock.release()
        except BaseException as exc:  # noqa: BLE001 - reported below
            failures.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not failures, failures
    assert most[0] == 1 and taken[0] > 0  # never two holders at once
    assert not (tmp_path / LOCK_FILE).exists()


def test_report_prints_its_paths_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_toy_victim(monkeypatch)
    out = tmp_path / ("a-long-folder-name-" * 4) / "run"
    assert runner.invoke(app, ["evaluate", "--data", str(reviews_csv(tmp_path)), "--quiet", "--out",
                               str(out)]).exit_code == 0
    monkeypatch.delenv("COLUMNS", raising=False)
    result = runner.invoke(app, ["report", str(out)])
    assert result.exit_code == 0, result.output
    assert f"report: {out / 'report.html'}   data: {out / 'report.json'}" in result.output.splitlines()


def test_a_lock_file_removed_between_open_and_lock_is_opened_again(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import fcntl
    import sys

    first = RunFolderLock(tmp_path)

    class Racing:  # the holder releases (removing the file) right after the next holder opened it
        LOCK_EX, LOCK_NB, LOCK_UN = fcntl.LOCK_EX, fcntl.LOCK_NB, fcntl.LOCK_UN
        calls = 0

        def flock(self, fd: int, operation: int) -> None:
            Racing.calls += 1
            if Racing.calls == 1:
                first.release()
            fcntl.flock(fd, operation)

    monkeypatch.setitem(sys.modules, "fcntl", Racing())
    second = RunFolderLock(tmp_path)
    monkeypatch.setitem(sys.modules, "fcntl", fcntl)
    assert second.held and Racing.calls == 2  # locked the removed file, saw it gone, locked the new one
    with pytest.raises(StoreError, match="in use by process"):
        RunFolderLock(tmp_path)  # the lock is on the file others see, not on the removed one
    second.release()
