"""``textrobust export``: per-example results of a run to JSONL or CSV."""

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
    format: Annotated[str, typer.Option("--format", help="jsonl or csv.")] = "jsonl",
    run_id: Annotated[Optional[str], typer.Option(help="Run to export (default: the latest).")] = None,
    to: Annotated[Optional[Path], typer.Option(help="Output file (default: <out>/results.<format>).")] = None,
) -> None:
    """Export the per-example results of a run to JSONL or CSV."""
    from textrobust.store import RunStore

    if format not in ("jsonl", "csv"):
        fail(TextRobustError(f"The '--format' option must be 'jsonl' or 'csv'. Got {format!r} instead."))
    try:
        if not (out / "store.sqlite").is_file():
            raise TextRobustError(f"No run store at {out / 'store.sqlite'}: give the --out folder of a run.")
        store = RunStore(out / "store.sqlite")
        run = store.open_run(run_id) if run_id else store.latest_run()
        if run is None:
            raise TextRobustError(f"No run found in {out / 'store.sqlite'}.")
        target = to or out / f"results.{format}"
        (run.export_jsonl if format == "jsonl" else run.export_csv)(target)
    except TextRobustError as exc:
        fail(exc)
        return
    console.print(f"wrote {target}")
