"""Shared helpers of the command line: consoles, the error exit, cell formatting."""

from __future__ import annotations

from typing import Any, NoReturn

import typer
from rich.console import Console


__all__ = ["console", "err_console", "fail", "fmt", "human_size"]

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


def fmt(value: Any, kind: str = "") -> str:
    """A table cell: floats with 2 decimals (or as %), ints with separators, nan as '-'."""
    if isinstance(value, float):
        if value != value:  # nan
            return "-"
        if kind == "%":
            return f"{value:.1%}"
        return f"{value:,.2f}"
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)
