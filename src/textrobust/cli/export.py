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
    run: Annotated[Path, typer.Argument(metavar="RUN", help="Run folder (the --out of a run), holding store.sqlite.")],
    format: Annotated[Optional[str], typer.Option("--format", help="csv, jsonl or json (default: from the --to "
                                                  "file name, else jsonl).")] = None,
    run_id: Annotated[Optional[str], typer.Option(help="Export only this run of the folder (default: the latest "
                                                       "run of each analysis).")] = None,
    to: Annotated[Optional[Path], typer.Option(help="Output file; its name (.csv, .jsonl, .json) gives the format "
                                               "(default: RUN/results.<format>). A folder of several analyses (an "
                                               "audit) gives one file each: x.csv -> x.attack.csv, x.pr.csv, ...")
              ] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace export files that exist (a run's own files, "
                                                        "store.sqlite, summary.json, report.*, are never "
                                                        "replaced).")] = False,
) -> None:
    """Export the per-example results of a run: one flat row per record (CSV, JSON Lines or
    JSON), one file per analysis of an audit. Every file written is named with its rows."""
    from textrobust.audit.export import export_run

    try:
        written = export_run(run, to=to, format=format, run_id=run_id, force=force)
    except TextRobustError as exc:
        fail(exc)
    for item in written:
        console.print(f"wrote {item.rows:,} rows of {item.analysis} (run {item.run_id}) to {item.path}",
                      highlight=False, soft_wrap=True)
