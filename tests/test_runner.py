"""Tests of the resumable runner, including a real ``kill -9`` in the middle of a run."""

from __future__ import annotations

import io
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rich.console import Console

import textrobust
from textrobust.errors import ConfigError, StoreError
from textrobust.runner import RunStats, make_progress, run_examples
from textrobust.store import RunStatus, RunStore

ITEMS = [(f"ex-{i:03d}", i) for i in range(10)]


def square(i: int) -> dict[str, int]:
    return {"square": i * i}


def test_resume_skips_done_ids_and_computes_only_the_rest(tmp_path: Path) -> None:
    calls: list[int] = []

    def work(i: int) -> dict[str, int]:
        calls.append(i)
        return square(i)

    with RunStore(tmp_path / "runs.sqlite") as store:
        run = store.start_run("evaluate", {"n": 4}, seed=0)
        first = run_examples(run, ITEMS[:4], work)
        assert (first.done_before, first.computed, first.failed, first.total) == (0, 4, 0, 4)
    with RunStore(tmp_path / "runs.sqlite") as store:
        run = store.resume_or_start("evaluate", {"n": 10}, seed=0, resume=True)
        second = run_examples(run, ITEMS, work)
        assert (second.done_before, second.computed, second.failed) == (4, 6, 0)
        assert calls == list(range(4)) + list(range(4, 10))
        rows = run.results()
        assert [r.example_id for r in rows] == [eid for eid, _ in ITEMS]
        assert [r.position for r in rows] == list(range(10))
        assert all(r.payload == {"square": int(r.example_id[3:]) ** 2} for r in rows)
        assert all(r.seconds is not None and r.seconds >= 0 for r in rows)
        third = run_examples(run, ITEMS, work)
        assert (third.done_before, third.computed) == (10, 0) and len(calls) == 10


def test_an_exception_is_recorded_and_the_run_goes_on(tmp_path: Path) -> None:
    def work(i: int) -> dict[str, int]:
        if i == 3:
            raise ValueError("no words to change")
        return square(i)

    with RunStore(tmp_path / "runs.sqlite") as store:
        run = store.start_run("attack", {}, seed=0)
        stats = run_examples(run, ITEMS, work)
        assert (stats.computed, stats.failed) == (10, 1)
        bad = run.result("ex-003")
        assert bad.failed and bad.payload["error"] == "ValueError"
        assert bad.payload["message"] == "no words to change"
        assert "raise ValueError" in bad.payload["traceback"]
        assert run.failed_ids() == {"ex-003"}
        assert run.done_ids(include_failed=False) == {eid for eid, _ in ITEMS} - {"ex-003"}

        # Errors are not retried unless asked; with retry_failed they are replaced.
        assert run_examples(run, ITEMS, work).computed == 0
        retried = run_examples(run, ITEMS, square, retry_failed=True)
        assert (retried.done_before, retried.computed, retried.failed) == (9, 1, 0)
        assert run.result("ex-003").payload == {"square": 9} and run.failed_ids() == set()


def test_non_mapping_results_are_recorded_as_errors(tmp_path: Path) -> None:
    with RunStore(tmp_path / "runs.sqlite") as store:
        run = store.start_run("attack", {}, seed=0)
        stats = run_examples(run, ITEMS[:2], lambda i: [i])
        assert stats.failed == 2
        assert run.result("ex-000").payload["error"] == "StoreError"


def test_on_error_raise_propagates_and_keeps_earlier_results(tmp_path: Path) -> None:
    def work(i: int) -> dict[str, int]:
        if i == 5:
            raise RuntimeError("victim crashed")
        return square(i)

    with RunStore(tmp_path / "runs.sqlite") as store:
        run = store.start_run("attack", {}, seed=0)
        with pytest.raises(RuntimeError, match="victim crashed"):
            run_examples(run, ITEMS, work, on_error="raise")
        assert run.done_ids() == {f"ex-{i:03d}" for i in range(5)}
        assert run.failed_ids() == set()


def test_keyboard_interrupt_leaves_a_consistent_resumable_store(tmp_path: Path) -> None:
    def work(i: int) -> dict[str, int]:
        if i == 6:
            raise KeyboardInterrupt
        return square(i)

    path = tmp_path / "runs.sqlite"
    with RunStore(path) as store:
        run = store.start_run("attack", {"n": 10}, seed=1)
        with pytest.raises(KeyboardInterrupt):
            run_examples(run, ITEMS, work)
    with RunStore(path) as store:
        run = store.resume_or_start("attack", {"n": 10}, seed=1, resume=True)
        assert run.status is RunStatus.RUNNING
        assert run.done_ids() == {f"ex-{i:03d}" for i in range(6)}
        stats = run_examples(run, ITEMS, square)
        assert (stats.done_before, stats.computed, len(run)) == (6, 4, 10)


def test_queries_are_counted_per_example(tmp_path: Path) -> None:
    counter = {"used": 0}

    def work(i: int) -> dict[str, int]:
        counter["used"] += i  # example i costs i queries
        return square(i)

    with RunStore(tmp_path / "runs.sqlite") as store:
        run = store.start_run("attack", {}, seed=0)
        stats = run_examples(run, ITEMS, work, queries=lambda: counter["used"])
        assert stats.queries == sum(range(10))
        assert [r.queries for r in run.results()] == list(range(10))
        no_counter = store.start_run("attack", {}, seed=0)
        assert run_examples(no_counter, ITEMS[:2], square).queries == 0
        assert no_counter.result("ex-001").queries is None


def test_progress_task_counts_done_examples_and_queries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TEXTROBUST_NO_PROGRESS", raising=False)  # CI sets it
    console = Console(file=io.StringIO(), force_terminal=False, width=120)
    with RunStore(tmp_path / "runs.sqlite") as store:
        run = store.start_run("attack", {}, seed=0)
        run.record("ex-000", {"square": 0}, position=0)
        with make_progress(console=console) as progress:
            run_examples(run, ITEMS, square, progress=progress, description="attack",
                         queries=lambda: 7)
            (task,) = progress.tasks
            assert (task.description, task.completed, task.total) == ("attack", 10, 10)
            assert task.fields["queries"] == 0
        shown = console.file.getvalue()
        assert "attack" in shown and "10/10" in shown
        # no terminal: lines, not a bar (issue 27); the bar's columns: tests/test_cli_terminal.py
        assert "attack: done, 10/10 examples" in shown and "0 queries" in shown


def test_bad_arguments_are_refused_before_any_work(tmp_path: Path) -> None:
    with RunStore(tmp_path / "runs.sqlite") as store:
        run = store.start_run("attack", {}, seed=0)
        with pytest.raises(ConfigError, match="'on_error'.*'record' or 'raise'.*'ignore'"):
            run_examples(run, ITEMS, square, on_error="ignore")  # type: ignore[arg-type]
        with pytest.raises(ConfigError, match=r"repeated example ids \['a'\]"):
            run_examples(run, [("a", 1), ("b", 2), ("a", 3)], square)
        with pytest.raises(ConfigError, match="pairs"):
            run_examples(run, [(1, 1)], square)  # type: ignore[list-item]
        assert len(run) == 0


def test_a_store_error_while_recording_is_not_swallowed(tmp_path: Path) -> None:
    with RunStore(tmp_path / "runs.sqlite") as store:
        run = store.start_run("attack", {}, seed=0)
        store.close()
        with pytest.raises(StoreError, match="closed"):
            run_examples(run, ITEMS, square)


_CHILD = """
import sys, time
from textrobust.store import RunStore
from textrobust.runner import run_examples

def work(i):
    time.sleep(0.01)
    return {"square": i * i, "pid": __import__("os").getpid()}

store = RunStore(sys.argv[1])
run = store.open_run(sys.argv[2])
run_examples(run, [(f"ex-{i:03d}", i) for i in range(200)], work)
print("finished", flush=True)
"""


def _count(path: Path) -> int:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
    try:
        return conn.execute("SELECT COUNT(*) FROM results").fetchone()[0]
    finally:
        conn.close()


def test_kill_9_loses_nothing_recorded_and_resume_recomputes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite"
    config = {"n": 200, "victim": "toy"}
    with RunStore(path) as store:
        run_id = store.start_run("attack", config, seed=5).run_id

    env = dict(os.environ)
    src = str(Path(textrobust.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH")) if p)
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(path), run_id],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 20
        while _count(path) < 40:
            if child.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"child ended or stalled early: {child.communicate()[1].decode()}")
            time.sleep(0.01)
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.kill()
        child.wait(timeout=10)
    assert child.returncode == -signal.SIGKILL

    with RunStore(path) as store:
        run = store.resume_or_start("attack", config, seed=5, resume=True)
        assert run.run_id == run_id and run.status is RunStatus.RUNNING
        before = {r.example_id: r for r in run.results()}
        assert 40 <= len(before) < 200
        assert all(r.payload["pid"] == child.pid for r in before.values())

        computed: list[str] = []

        def work(i: int) -> dict[str, int]:
            computed.append(f"ex-{i:03d}")
            return {"square": i * i, "pid": os.getpid()}

        stats = run_examples(run, [(f"ex-{i:03d}", i) for i in range(200)], work)
        after = run.results()

    assert isinstance(stats, RunStats)
    assert (stats.done_before, stats.computed) == (len(before), 200 - len(before))
    assert not set(computed) & set(before)  # nothing recorded was recomputed
    assert len(after) == 200 and len({r.example_id for r in after}) == 200
    assert [r.position for r in after] == list(range(200))
    for row in after:
        if row.example_id in before:  # nothing recorded was lost or changed
            assert row == before[row.example_id]
        assert row.payload["square"] == row.position**2


def test_progress_can_be_switched_off_by_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEXTROBUST_NO_PROGRESS", "1")
    console = Console(file=io.StringIO(), force_terminal=True, width=120)
    with RunStore(tmp_path / "runs.sqlite") as store:
        run = store.start_run("attack", {}, seed=0)
        with make_progress(console=console) as progress:
            run_examples(run, [("a", 1)], lambda x: {"v": x}, progress=progress, description="quiet")
    assert "quiet" not in console.file.getvalue()
