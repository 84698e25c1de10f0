"""``textrobust report RUN_DIR``: render report.html again from a run folder."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from textrobust.cli.common import console, fail
from textrobust.errors import TextRobustError


def register(app: typer.Typer) -> None:
    app.command("report")(report_cmd)


def report_cmd(run_dir: Annotated[Path, typer.Argument(help="A run folder written by an analysis command "
                                                              "or `textrobust audit`.")]) -> None:
    """Rebuild report.html (and report.json) of a run folder from its run store."""
    from textrobust.audit import rebuild_report

    try:
        html, data = rebuild_report(run_dir)
    except TextRobustError as exc:
        fail(exc)
    console.print(f"report: {html}   data: {data}")
