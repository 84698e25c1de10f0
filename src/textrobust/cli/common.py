"""Shared helpers of the command line: consoles, the error exit, cell formatting."""

from __future__ import annotations

import re
from typing import Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from typer.core import TyperCommand, TyperGroup

from textrobust.cli.sigterm import Terminated, stop_ended, stop_on_sigterm, stop_requested
from textrobust.errors import ConfigError, SettingsError
from textrobust.threads import affinity_cpus, cgroup_cpu_quota, choose_threads, environment_threads

__all__ = ["App", "Command", "Group", "Terminated", "command_line", "console", "err_console", "fail", "fmt",
           "human_size", "settings_message", "stop_on_sigterm", "threads_for_this_machine"]

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
    """The ``textrobust`` group, its --help without ``<bool>`` after a flag. A command
    stopped by SIGTERM ends with exit code 143 (:mod:`textrobust.cli.sigterm`), also one
    that ran on after the stop was lost or that typer would end with 130."""

    def get_params(self, ctx: Any) -> list[Any]:
        return _untyped_flags(super().get_params(ctx))

    def invoke(self, ctx: Any) -> Any:
        try:
            result = super().invoke(ctx)
        except Terminated:  # a command that does not say more (the analyses and train do)
            stop_ended()
            err_console.print("terminated (SIGTERM)", highlight=False)
            raise typer.Exit(code=Terminated.exit_code) from None
        except BaseException:
            if stop_requested():
                stop_ended()
            raise
        if stop_requested():  # the stop was lost on the way and the command went on: end it now
            stop_ended()
            err_console.print("terminated (SIGTERM)", highlight=False)
            raise typer.Exit(code=Terminated.exit_code)
        return result


def command_line(ctx: Any, *extra: str) -> str:
    """The command ``ctx`` ran, as typed (its arguments, and the options given on the
    command line), then ``extra``: a command the user can copy to run it again.

    >>> import click
    >>> @click.command("train")
    ... @click.argument("arch")
    ... @click.option("--epochs", type=int, default=3)
    ... @click.option("--quiet", is_flag=True)
    ... def cmd(arch, epochs, quiet):
    ...     return command_line(click.get_current_context(), "--resume")
    >>> cmd.main(["cnn", "--epochs", "2"], standalone_mode=False)
    'textrobust train cnn --epochs 2 --resume'
    """
    import shlex

    words = ["textrobust", ctx.command.name or ctx.info_name or ""]
    for param in ctx.command.params:
        value = ctx.params.get(param.name)
        if param.param_type_name == "argument":
            words += [str(v) for v in (value if isinstance(value, (list, tuple)) else [value]) if v is not None]
            continue
        source = ctx.get_parameter_source(param.name)  # typer's own click or click: by name
        if getattr(source, "name", None) != "COMMANDLINE" or not param.opts:
            continue
        flag = max(param.opts, key=len)
        if getattr(param, "is_flag", False):
            if value and flag not in extra:
                words.append(flag)
        else:
            shown = value.value if hasattr(value, "value") else value
            words += [flag, str(shown)]
    words += [word for word in extra if word not in words]
    return " ".join(shlex.quote(word) for word in words)


class App(typer.Typer):
    """A typer app whose commands are :class:`Command`: flags without a type in --help."""

    def command(self, *args: Any, cls: type[TyperCommand] | None = None, **kwargs: Any) -> Any:
        return super().command(*args, cls=cls or Command, **kwargs)


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
