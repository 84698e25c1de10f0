"""The audit's progress display: a bar on a terminal, one line per milestone in a log.

:func:`make_progress` gives a :class:`rich.progress.Progress`; the orchestrator adds one
task per analysis (its ``unit`` field names what it counts, its ``queries`` field the
model queries used so far). While the display runs (from ``start`` to ``stop``, or as a
context manager) it also says when a model starts loading and how long it took (the
:mod:`textrobust.loading` announcements, issue 41): ``loading the causal LM
gemma3-270m-f32 (cpu, float32) ...`` then ``loaded the causal LM ... in 5.4 s``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textrobust.loading import LoadEvent

if TYPE_CHECKING:  # rich is imported only when a progress display is wanted
    from rich.console import Console
    from rich.progress import Progress

__all__ = ["load_line", "make_progress"]


def load_line(event: LoadEvent) -> str:
    """The progress line of a model-loading announcement."""
    if not event.done:
        return f"loading {event.what} ..."
    if event.stopped:
        return f"loading {event.what} stopped after {event.seconds:,.1f} s"
    if event.failed:
        return f"loading {event.what} failed after {event.seconds:,.1f} s"
    return f"loaded {event.what} in {event.seconds:,.1f} s"


def _announcing(cls: Any) -> Any:
    """A subclass of the :class:`rich.progress.Progress` class ``cls`` that prints a line
    per model-loading announcement (:func:`load_line`) between ``start`` and ``stop``."""
    from contextlib import ExitStack

    from textrobust.loading import listening

    class Announcing(cls):
        _loads: ExitStack | None = None

        def start(self) -> None:
            super().start()
            if self._loads is None:
                self._loads = ExitStack()
                self._loads.enter_context(listening(self._announce))

        def stop(self) -> None:
            if self._loads is not None:
                self._loads.close()
                self._loads = None
            super().stop()

        def _announce(self, event: LoadEvent) -> None:
            if not self.disable or getattr(self, "_lines", False):
                self.console.print(load_line(event), markup=False, highlight=False, soft_wrap=True)

    Announcing.__name__ = Announcing.__qualname__ = cls.__name__
    return Announcing


def make_progress(*, console: Console | None = None, transient: bool = False) -> Progress:
    """A rich progress display with units/s and total queries (the audit's, one task per analysis).

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
    return _announcing(Progress)(
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

    class LineProgress(_announcing(Progress)):  # type: ignore[misc]
        _lines = True  # draws no bar (disabled) but prints its lines

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
