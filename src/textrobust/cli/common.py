"""Shared helpers of the command line: consoles, the error exit, cell formatting."""

from __future__ import annotations

import re
from typing import Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

__all__ = ["console", "err_console", "fail", "fmt", "human_size"]

console = Console()
err_console = Console(stderr=True)


_PYTHON_NAMES = {"on_bad_rows='skip'": "--skip-bad-rows", "on_bad_rows": "--skip-bad-rows",
                 "encoding=": "--encoding ", "file_format=": "--file-format ", "label_names=": "--label-names "}


def _cli_message(message: str) -> str:
    """Python parameter names in a library message, as the CLI flags the user typed."""
    message = re.sub(r"The '(\w+)' parameter of \w+Settings", lambda m: f"The '--{m.group(1).replace('_', '-')}' "
                     "option", message)
    for python, flag in _PYTHON_NAMES.items():
        message = message.replace(python, flag)
    return message


def fail(exc: BaseException) -> NoReturn:
    """Print ``exc`` as one error line (no traceback; Python parameter names as the CLI
    flags the user typed) and exit with code 2."""
    err_console.print(f"[bold red]error:[/] {escape(_cli_message(str(exc)))}", highlight=False, markup=True)
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
