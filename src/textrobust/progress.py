"""Rich progress bars for long work: examples/s and queries on every bar.

Set the environment variable ``TEXTROBUST_NO_PROGRESS=1`` (or pass ``enabled=False``) to
switch them off; without a terminal rich prints nothing live anyway.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.progress import Progress, Task
    from rich.text import Text as RichText

__all__ = ["make_progress"]


def make_progress(*, enabled: bool = True, transient: bool = False) -> Progress:
    """A progress display with: description, bar, done/total, examples/s, queries, times."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        ProgressColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    from rich.text import Text as RichText

    class RateColumn(ProgressColumn):
        def render(self, task: Task) -> RichText:
            speed = task.finished_speed or task.speed
            return RichText("-- ex/s" if speed is None else f"{speed:,.1f} ex/s", style="cyan")

    class QueriesColumn(ProgressColumn):
        def render(self, task: Task) -> RichText:
            queries = task.fields.get("queries")
            return RichText("" if queries is None else f"{int(queries):,} queries", style="magenta")

    disabled = not enabled or os.environ.get("TEXTROBUST_NO_PROGRESS", "") not in ("", "0")
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        RateColumn(),
        QueriesColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        disable=disabled,
        transient=transient,
    )
