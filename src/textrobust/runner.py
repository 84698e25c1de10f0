"""The resumable loop every command runs its examples through.

:func:`run_examples` skips the examples a run already holds, computes the rest one at a
time and records each result in the run store the moment it exists, so an interrupted
run (Ctrl-C, ``kill -9``) resumes where it stopped without recomputing or losing
anything it had recorded.

>>> import tempfile, pathlib
>>> from textrobust.store import RunStore
>>> with tempfile.TemporaryDirectory() as d, RunStore(pathlib.Path(d) / "r.sqlite") as store:
...     run = store.start_run("demo", {"n": 3}, seed=0)
...     items = [("a", 1), ("b", 2), ("c", 3)]
...     first = run_examples(run, items[:2], lambda x: {"square": x * x})
...     again = run_examples(run, items, lambda x: {"square": x * x})
...     (first.computed, again.done_before, again.computed, len(run))
(2, 2, 1, 3)
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from textrobust.errors import ConfigError, StoreError
from textrobust.store import Run, to_jsonable

if TYPE_CHECKING:  # rich is imported only when a progress bar is wanted
    from rich.console import Console
    from rich.progress import Progress

__all__ = ["RunStats", "error_payload", "make_progress", "run_examples"]

T = TypeVar("T")

_TRACEBACK_CHARS = 4000


@dataclass(frozen=True)
class RunStats:
    """What one call of :func:`run_examples` did.

    ``done_before``: examples of ``items`` already in the store (skipped);
    ``computed``: examples computed and recorded now, ``failed`` of them as errors;
    ``seconds``: wall time of the call; ``queries``: queries used by the computed ones
    (0 without a counter).
    """

    done_before: int
    computed: int
    failed: int
    seconds: float
    queries: int

    @property
    def total(self) -> int:
        """Examples of ``items`` that now have a result."""
        return self.done_before + self.computed


def error_payload(exc: BaseException) -> dict[str, str]:
    """The payload recorded for an example whose work raised ``exc``.

    ``{"error": <type name>, "message": <str(exc)>, "traceback": <last frames>}``.
    """
    formatted = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return {
        "error": type(exc).__name__,
        "message": str(exc),
        "traceback": formatted[-_TRACEBACK_CHARS:],
    }


def make_progress(*, console: Console | None = None, transient: bool = False) -> Progress:
    """A rich progress display with units/s and total queries, for :func:`run_examples`.

    Use it as a context manager around the calls. A task's ``unit`` field names what it
    counts (default ``ex``, examples). Without a terminal (CI, a pipe) it draws no bar but
    prints a line when a task starts, at every tenth of its units and when it is done;
    ``TEXTROBUST_NO_PROGRESS=1`` switches it off entirely.
    """
    import os

    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        ProgressColumn,
        SpinnerColumn,
        Task,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    from rich.text import Text as RichText

    class RateColumn(ProgressColumn):
        """Examples per second over the recent past."""

        def render(self, task: Task) -> RichText:
            speed = task.finished_speed or task.speed
            shown = "?" if speed is None else f"{speed:.2f}" if speed < 10 else f"{speed:.0f}"
            unit = str(task.fields.get("unit", "examples"))
            return RichText(f"{shown} {'ex' if unit == 'examples' else unit}/s", style="progress.data.speed")

    class QueriesColumn(ProgressColumn):
        """Total model queries used so far (blank when nobody counts them)."""

        def render(self, task: Task) -> RichText:
            used = task.fields.get("queries")
            return RichText("" if used is None else f"{used:,} queries", style="cyan")

    off = os.environ.get("TEXTROBUST_NO_PROGRESS", "") not in ("", "0")
    console = console if console is not None else Console(stderr=True)
    if not off and not console.is_terminal:
        return _line_progress(console)
    return Progress(
        SpinnerColumn(),
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        RateColumn(),
        QueriesColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=transient,
        disable=off,
    )


def _line_progress(console: Console) -> Progress:
    """A :class:`rich.progress.Progress` that draws nothing and prints one line per
    milestone of each task instead (start, every tenth of ``total``, done): for logs."""
    from rich.progress import Progress, TaskID

    class LineProgress(Progress):
        def __init__(self) -> None:
            super().__init__(console=console, disable=True)
            self._shown: dict[TaskID, int] = {}

        def add_task(self, description: str, start: bool = True, total: float | None = 100.0,
                     completed: int = 0, visible: bool = True, **fields: Any) -> TaskID:
            task = super().add_task(description, start=start, total=total, completed=completed, visible=visible,
                                    **fields)
            unit = fields.get("unit", "examples")
            done = f" ({completed:,} already in the store)" if completed else ""
            self._say(f"{description}: {int(total or 0):,} {unit}{done}")
            # all done already (resumed): the "done" line follows at once
            self._shown[task] = -1 if completed >= (total or 0) else int(completed)
            self._milestone(task)
            return task

        def update(self, task_id: TaskID, **kwargs: Any) -> None:
            super().update(task_id, **kwargs)
            self._milestone(task_id)

        def advance(self, task_id: TaskID, advance: float = 1) -> None:
            super().advance(task_id, advance)
            self._milestone(task_id)

        def _milestone(self, task_id: TaskID) -> None:
            task = self._tasks[task_id]
            total, done = int(task.total or 0), int(task.completed)
            step = max(1, -(-total // 10))
            last = self._shown.get(task_id, 0)
            if done <= last or (done < total and done // step == last // step):
                return
            self._shown[task_id] = done
            unit = task.fields.get("unit", "examples")
            queries = task.fields.get("queries")
            cost = "" if queries is None else f", {int(queries):,} queries"
            if done >= total:
                self._say(f"{task.description}: done, {done:,}/{total:,} {unit} in {task.elapsed or 0.0:,.1f} s{cost}")
            else:
                self._say(f"{task.description}: {done:,}/{total:,} {unit} ({task.elapsed or 0.0:,.0f} s{cost})")

        def _say(self, line: str) -> None:
            self.console.print(line, markup=False, highlight=False, soft_wrap=True)

    return LineProgress()


def run_examples(
    run: Run,
    items: Sequence[tuple[str, T]],
    work: Callable[[T], Mapping[str, Any]],
    *,
    progress: Progress | None = None,
    description: str = "examples",
    queries: Callable[[], int] | None = None,
    on_error: Literal["record", "raise"] = "record",
    retry_failed: bool = False,
) -> RunStats:
    """Compute ``work(item)`` for every ``(example_id, item)`` not yet stored in ``run``.

    Each result is recorded the moment it exists, with its position in ``items``, the
    seconds ``work`` took and, if ``queries`` (a counter of model queries, e.g. the
    victim's) is given, the queries that example used. An exception raised by ``work``
    is recorded as :func:`error_payload` with ``failed=True`` (``on_error="record"``,
    so one bad example does not end a long run) or re-raised (``on_error="raise"``).
    Examples recorded as errors are skipped on a later call unless ``retry_failed``.

    ``progress`` (e.g. from :func:`make_progress`) gets one task; ``None`` is quiet.
    Ctrl-C (KeyboardInterrupt) propagates; every result recorded before it is kept and
    the store stays consistent (each record is one transaction).
    """
    if on_error not in ("record", "raise"):
        raise ConfigError(
            f"The 'on_error' parameter of run_examples must be 'record' or 'raise'. "
            f"Got {on_error!r} instead."
        )
    items = list(items)
    seen: set[str] = set()
    duplicates: list[str] = []
    for entry in items:
        if not (isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[0], str)):
            raise ConfigError(
                "The 'items' parameter of run_examples must hold (example_id: str, item) "
                f"pairs. Got {entry!r:.80} instead."
            )
        if entry[0] in seen:
            duplicates.append(entry[0])
        seen.add(entry[0])
    if duplicates:
        raise ConfigError(
            f"The 'items' parameter of run_examples has repeated example ids "
            f"{sorted(set(duplicates))[:10]}; ids must be unique within a run."
        )

    start = time.perf_counter()
    previously_failed = run.failed_ids() if retry_failed else set()
    done = run.done_ids() - previously_failed
    todo = [(pos, eid, item) for pos, (eid, item) in enumerate(items) if eid not in done]
    done_before = len(items) - len(todo)

    task = None
    if progress is not None:
        task = progress.add_task(
            description,
            total=len(items),
            completed=done_before,
            queries=0 if queries is not None else None,
        )

    computed = failed = total_queries = 0
    try:
        for position, example_id, item in todo:
            before = queries() if queries is not None else 0
            began = time.perf_counter()
            is_failure = False
            try:
                payload = work(item)
                if not isinstance(payload, Mapping):
                    raise StoreError(
                        f"The work function of run_examples must return a mapping (dict) "
                        f"of results. Got {type(payload).__qualname__} for example "
                        f"'{example_id}'."
                    )
                payload = to_jsonable(payload)
            except Exception as exc:  # one bad example must not end a long run
                if on_error == "raise":
                    raise
                payload = error_payload(exc)
                is_failure = True
            seconds = time.perf_counter() - began
            used = max(0, queries() - before) if queries is not None else None
            run.record(
                example_id,
                payload,
                position=position,
                seconds=seconds,
                queries=used,
                failed=is_failure,
                overwrite=example_id in previously_failed,
            )
            computed += 1
            failed += is_failure
            total_queries += used or 0
            if progress is not None and task is not None:
                shown = total_queries if queries is not None else None
                progress.update(task, advance=1, queries=shown)
    except KeyboardInterrupt:
        if progress is not None and task is not None:
            progress.update(task, description=f"{description} (interrupted)")
        raise
    return RunStats(
        done_before=done_before,
        computed=computed,
        failed=failed,
        seconds=time.perf_counter() - start,
        queries=total_queries,
    )
