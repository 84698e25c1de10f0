"""``textrobust report RUN_DIR``: render report.html again from a run folder."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from textrobust.cli.common import console, fail
from textrobust.errors import TextRobustError


#: Columns of a table written to a pipe or a file (no terminal to fit): wide enough that
#: a line is never wrapped or cut in the middle of a figure.
PIPED_WIDTH = 200


def table_console() -> Console:
    """The console to print a table on: the shared one on a terminal (its real width) or
    with ``COLUMNS`` set; else one :data:`PIPED_WIDTH` columns wide on the same output
    (rich would fit a pipe or a file to 80 columns and cut a wide table)."""
    if console.is_terminal or os.environ.get("COLUMNS", "").strip().isdigit():
        return console
    return Console(file=console.file, width=PIPED_WIDTH)


def register(app: typer.Typer) -> None:
    app.command("report")(report_cmd)


def report_cmd(run_dir: Annotated[Path, typer.Argument(metavar="RUN", help="A run folder written by an analysis "
                                                                            "command or `textrobust audit`.")]
               ) -> None:
    """Rebuild report.html (and report.json) of a run folder from its run store."""
    from textrobust.audit import rebuild_report

    try:
        html, data = rebuild_report(run_dir)
    except TextRobustError as exc:
        fail(exc)
    console.print(f"report: {html}   data: {data}", soft_wrap=True, highlight=False)  # whole, at any width
