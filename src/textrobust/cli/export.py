"""``textrobust export``: per-example results of a run to CSV, JSON Lines or JSON, one flat row each."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from textrobust.cli.common import console, fail
from textrobust.errors import TextRobustError


def register(app: typer.Typer) -> None:
    app.command("export")(export)


def export(
    out: Annotated[Path, typer.Argument(help="Run folder holding store.sqlite.")],
    format: Annotated[Optional[str], typer.Option("--format", help="csv, jsonl or json (default: from the --to "
                                                  "file name, else jsonl).")] = None,
    run_id: Annotated[Optional[str], typer.Option(help="Run to export (default: the latest).")] = None,
    to: Annotated[Optional[Path], typer.Option(help="Output file; its name (.csv, .jsonl, .json) gives the format "
                                               "(default: <out>/results.<format>).")] = None,
) -> None:
    """Export the per-example results of a run: one flat row per record (CSV, JSON Lines or JSON)."""
    from textrobust.audit.export import export_run

    try:
        target, rows = export_run(out, to=to, format=format, run_id=run_id)
    except TextRobustError as exc:
        fail(exc)
    console.print(f"wrote {rows:,} rows to {target}")
