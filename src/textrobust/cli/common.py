"""Shared helpers of the command line: consoles, the error exit, cell formatting."""

from __future__ import annotations

import os
import re
import signal
from typing import Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from typer.core import TyperCommand, TyperGroup

from textrobust.errors import ConfigError, SettingsError
from textrobust.threads import affinity_cpus, cgroup_cpu_quota, choose_threads, environment_threads

__all__ = ["App", "Command", "Group", "Terminated", "console", "err_console", "fail", "fmt", "human_size",
           "settings_message", "stop_on_sigterm", "threads_for_this_machine"]

console = Console()
err_console = Console(stderr=True)


_PYTHON_NAMES = {"on_bad_rows='skip'": "--skip-bad-rows", "on_bad_rows": "--skip-bad-rows",
                 "encoding=": "--encoding ", "file_format=": "--file-format ", "label_names=": "--label-names "}


#: A library message's aside for Python callers, "(Python: split='all')": not for the CLI.
_PYTHON_ASIDE = re.compile(r"\s*\(Python: [^()]*(?:\([^()]*\)[^()]*)*\)")


def _context() -> Any:
    """The click context of the command running now, or None (typer runs its own copy of
    click, so ``click.get_current_context`` would not see it)."""
    try:
        from typer.main import get_current_context
    except ImportError:  # pragma: no cover - another typer layout
        return None
    return get_current_context(silent=True)


def _options() -> dict[str, str]:
    """The current command's options: parameter name -> its long flag (``n`` -> ``--n``)."""
    ctx = _context()
    if ctx is None:
        return {}
    return {p.name: max(p.opts, key=len) for p in ctx.command.params
            if p.name and p.opts and type(p).__name__.endswith("Option")}


def _command() -> str | None:
    ctx = _context()
    return None if ctx is None or not ctx.info_name else f"textrobust {ctx.info_name}"


def _cli_message(message: str) -> str:
    """Python parameter names in a library message, as the CLI flags the user typed."""
    options = _options()
    message = re.sub(r"The '(\w+)' parameter of \w+Settings", lambda m: f"The '--{m.group(1).replace('_', '-')}' "
                     "option", message)
    message = re.sub(r"The '(\w+)' parameter\b(?! of)",
                     lambda m: f"The '{options[m.group(1)]}' option" if m.group(1) in options else m.group(0), message)
    message = _PYTHON_ASIDE.sub("", message)
    for python, flag in _PYTHON_NAMES.items():
        message = message.replace(python, flag)
    return message


def settings_message(exc: SettingsError) -> str:
    """A :class:`~textrobust.errors.SettingsError` worded for the command line: each
    setting as the option of the current command that sets it, then where to read them."""
    options = _options()
    command = _command()

    def subject(name: str) -> str:
        if name in options:
            return f"The '{options[name]}' option"
        return f"The setting '{name}'" + (f" of `{command}`" if command else "")

    return exc.render(subject, f"See `{command} --help` for its options." if command else None)


def fail(exc: BaseException) -> NoReturn:
    """Print ``exc`` as one error line (no traceback; Python parameter names as the CLI
    flags the user typed) and exit with code 2."""
    message = settings_message(exc) if isinstance(exc, SettingsError) else _cli_message(str(exc))
    err_console.print(f"[bold red]error:[/] {escape(message)}", highlight=False, markup=True)
    raise typer.Exit(code=2)


def _untyped_flags(params: list[Any]) -> list[Any]:
    """Flags shown without a type in --help: typer prints ``<bool>`` for every flag."""
    for param in params:
        if getattr(param, "is_flag", False) and param.metavar is None:
            param.metavar = ""
    return params


class Command(TyperCommand):
    """A command whose --help shows no ``<bool>`` after a flag (``--quiet``, ``--help``)."""

    def get_params(self, ctx: Any) -> list[Any]:
        return _untyped_flags(super().get_params(ctx))


class Group(TyperGroup):
    """The ``textrobust`` group, its --help without ``<bool>`` after a flag."""

    def get_params(self, ctx: Any) -> list[Any]:
        return _untyped_flags(super().get_params(ctx))


class App(typer.Typer):
    """A typer app whose commands are :class:`Command`: flags without a type in --help."""

    def command(self, *args: Any, cls: type[TyperCommand] | None = None, **kwargs: Any) -> Any:
        return super().command(*args, cls=cls or Command, **kwargs)


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived (``kill PID``, a CI timeout, a container stop). A KeyboardInterrupt,
    so that every path that cleans up after Ctrl-C (executors, the store, the resume hint)
    does the same after it."""

    exit_code = 128 + signal.SIGTERM


def stop_on_sigterm() -> None:
    """Turn SIGTERM in this process into :class:`Terminated`, once: a second SIGTERM ends
    the process at once, as by default. Child processes (spawned workers) keep the default."""
    owner = os.getpid()

    def handler(signum: int, frame: Any) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        if os.getpid() != owner:  # a forked child: end as SIGTERM would
            os.kill(os.getpid(), signal.SIGTERM)
            return
        raise Terminated()

    signal.signal(signal.SIGTERM, handler)


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


def threads_for_this_machine() -> int:
    """Intra-op threads for torch and BLAS: ``TEXTROBUST_THREADS`` when set (and valid:
    :func:`textrobust.threads.environment_threads`), else the
    cores this process may run on (its CPU affinity, which in a container can be fewer
    than the machine's cores that torch would count), at most its cgroup CPU quota
    (:func:`textrobust.threads.choose_threads` without the load)."""
    try:
        given = environment_threads()
    except ConfigError:  # a bad value: the command that runs torch refuses it (exit 2), --help need not
        given = None
    return given if given is not None else choose_threads(affinity_cpus(), cgroup_cpu_quota(), None)
