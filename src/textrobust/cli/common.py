"""Shared helpers of the command line: consoles, error exit, loading data and victims."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NoReturn

import typer
from rich.console import Console

from textrobust.errors import TextRobustError

__all__ = ["console", "err_console", "fail", "human_size", "write_json", "load_data", "load_victim", "fmt"]

console = Console()
err_console = Console(stderr=True)


def fail(exc: BaseException) -> NoReturn:
    """Print ``exc`` as one error line (no traceback) and exit with code 2."""
    err_console.print(f"[bold red]error:[/] {exc}", highlight=False, markup=True)
    raise typer.Exit(code=2)


def human_size(n: int | None) -> str:
    if n is None:
        return "-"
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:,.0f} {unit}" if unit == "B" else f"{size:,.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GB"


def write_json(path: Path, payload: dict[str, Any]) -> None:
    from textrobust.store import to_jsonable

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(to_jsonable(payload), indent=2, sort_keys=True) + "\n")


def fmt(value: Any, kind: str = "") -> str:
    """A table cell: floats with 2 decimals (or as %), ints with separators, nan as '-'."""
    if isinstance(value, float):
        if value != value:  # nan
            return "-"
        if kind == "%":
            return f"{value:.1%}"
        return f"{value:,.2f}"
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)


def load_data(name: str, split: str | None, text_column: str | None = None, label_column: str | None = None,
              pair_column: str | None = None, skip_bad_rows: bool = False, label_names: str | None = None) -> Any:
    """A bundled data set by name, or a user file/folder with column options."""
    from textrobust.data import DATASETS, load_dataset

    options: dict[str, Any] = {}
    if name not in DATASETS:
        if text_column:
            options["text_column"] = text_column
        if label_column:
            options["label_column"] = label_column
        if pair_column:
            options["pair_column"] = pair_column
        if skip_bad_rows:
            options["on_bad_rows"] = "skip"
        if label_names:
            options["label_names"] = [n.strip() for n in label_names.split(",") if n.strip()]
    try:
        return load_dataset(name, split=split, **options)
    except TextRobustError as exc:
        fail(exc)


def load_victim(victim_ref: str) -> tuple[Any, Path]:
    """``"default"`` (trained on first use) or a victim folder."""
    from textrobust.zoo import ensure_default_victim, load_victim as load

    path = ensure_default_victim() if victim_ref == "default" else Path(victim_ref)
    return load(path), path
