"""The command of every registered analysis, generated from its settings (issue 29).

A setting is declared once, in its analysis's ``Settings``: each field becomes an option of
``textrobust NAME`` named ``--field-name``, typed from the field's annotation, defaulting to
the field's default, its help the field's description. The shared data and run options
(:mod:`textrobust.cli.options`) are added by
:func:`~textrobust.cli.options.with_shared_options`, which raises a TypeError at import when
a field has the name of one of them (msr's ``--max-words`` once shadowed the text-length
limit and cut every text). The command hands the options, as the analysis's settings, to
:func:`textrobust.cli.running.run_analyses`: the settings a Python caller gives
:func:`textrobust.audit.run`, validated there by the same ``Settings``.

Annotations and their options: ``int``, ``float``, ``str`` as they are, ``X | None`` as an
optional ``X``, ``bool`` as ``--x/--no-x``, a ``Literal`` or an ``Enum`` as a string with
its choices in the help, a ``tuple[X, ...]`` as a repeatable option whose values may also
be comma-separated (``--methods pdp,greedy`` or ``--methods pdp --methods greedy``).

>>> from textrobust.analyses import ANALYSES
>>> command = analysis_command(ANALYSES.get("msr"))
>>> command.__name__, "max_set_size" in inspect.signature(command).parameters
('msr_cmd', True)
"""

from __future__ import annotations

import enum
import inspect
import types
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Optional, Union

import typer

from textrobust.cli import options as o
from textrobust.cli.common import fail
from textrobust.errors import ConfigError

if typing.TYPE_CHECKING:
    from pydantic.fields import FieldInfo

    from textrobust.analyses.protocol import Analysis

__all__ = ["FieldOption", "analysis_command", "command_help", "field_option", "register"]


@dataclass(frozen=True)
class FieldOption:
    """One settings field as a command-line option: the parameter ``name`` (the field's),
    its typer ``annotation`` and ``default``, and ``convert`` from the parsed value to the
    value the settings field takes."""

    name: str
    annotation: Any
    default: Any
    convert: Callable[[Any], Any]

    @property
    def flag(self) -> str:
        """The option as typed: ``--max-set-size``."""
        return "--" + self.name.replace("_", "-")


def _same(value: Any) -> Any:
    return value


def _help(description: str | None) -> str:
    """A field description as option help, ending with a full stop (its case kept: it may
    start with a value to type, such as ``so-beam``)."""
    text = " ".join((description or "").split())
    return text if not text or text.endswith((".", "!", "?")) else text + "."


def _unwrap_optional(annotation: Any) -> tuple[Any, bool]:
    """``(X, True)`` for ``X | None`` (or ``Optional[X]``), else ``(annotation, False)``."""
    if typing.get_origin(annotation) in (Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1 and len(typing.get_args(annotation)) == 2:
            return args[0], True
    return annotation, False


def _choices(kind: Any) -> tuple[Any, ...] | None:
    """The values of a ``Literal`` or an ``Enum`` annotation; None for any other."""
    if typing.get_origin(kind) is Literal:
        return typing.get_args(kind)
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        return tuple(member.value for member in kind)
    return None


def _scalar(kind: Any) -> type | None:
    """The command-line type of a single value of annotation ``kind``: int, float, str, or
    the common type of a Literal's or an Enum's values; None when unsupported."""
    if kind in (int, float, str):
        return typing.cast(type, kind)
    values = _choices(kind)
    if values:
        types_ = {type(v) for v in values}
        if len(types_) == 1 and next(iter(types_)) in (int, float, str):
            return next(iter(types_))
    return None


def _plain(value: Any) -> Any:
    """A default as typed on the command line (an Enum member as its value)."""
    return value.value if isinstance(value, enum.Enum) else value


def _items(flag: str, kind: type, example: Sequence[Any]) -> Callable[[Any], Any]:
    """The conversion of a repeatable, comma-separated option's values to a tuple of ``kind``."""

    def convert(values: Any) -> Any:
        parts = [part.strip() for value in values for part in str(value).split(",") if part.strip()]
        if kind is str:
            return tuple(parts)
        try:
            return tuple(kind(part) for part in parts)
        except ValueError:
            what = "numbers" if kind is float else "whole numbers"
            sample = ",".join(str(v) for v in example[:3]) or ("1,2" if kind is int else "0.1,0.2")
            fail(ConfigError(f"The '{flag}' option must be comma-separated {what} such as {sample}. Got "
                             f"{','.join(str(v) for v in values)!r} instead."))

    return convert


def field_option(name: str, info: FieldInfo, *, where: str = "Settings") -> FieldOption:
    """The command-line option of the settings field ``name`` (``info``: its pydantic
    field). A TypeError names the field when its type has no option form, or it has no
    default (every setting has one: a command runs with no options)."""
    if info.is_required():
        raise TypeError(f"The field '{name}' of {where} has no default; every setting needs one to be an option.")
    default = info.get_default(call_default_factory=True)
    kind, optional = _unwrap_optional(info.annotation)
    flag = "--" + name.replace("_", "-")
    help_ = _help(info.description)
    values = _choices(kind)
    metavar = "[" + "|".join(str(v) for v in values) + "]" if values else None
    if kind is bool and not optional:
        return FieldOption(name, Annotated[bool, typer.Option(help=help_)], bool(default), _same)
    if typing.get_origin(kind) is tuple and not optional:
        args = typing.get_args(kind)
        item = _scalar(args[0]) if len(args) == 2 and args[1] is Ellipsis else None
        if item is not None:
            item_values = _choices(args[0])
            shown = "[" + "|".join(str(v) for v in item_values) + "]" if item_values else f"<{item.__name__}>"
            option = typer.Option(help=help_, metavar=f"{shown},...")
            example = [_plain(v) for v in default] if default else []
            return FieldOption(name, Annotated[list[str], option], [str(v) for v in example],
                               _items(flag, item, example))
    scalar = _scalar(kind)
    if scalar is not None:
        cli_type: Any = Optional[scalar] if optional or default is None else scalar
        return FieldOption(name, Annotated[cli_type, typer.Option(help=help_, metavar=metavar)], _plain(default),
                           _same)
    raise TypeError(f"The field '{name}' of {where} ({info.annotation}) has no command-line form: use int, float, "
                    "str, bool, a Literal, an Enum, X | None or a tuple of one of them.")


def command_help(analysis_type: type[Analysis]) -> str:
    """A command's help: the analysis's title, the paper it comes from, then its
    ``help_note`` on how to read the figures (msr: how the radii are normalised)."""
    title = analysis_type.title.rstrip(".")
    paper = " ".join(str(getattr(analysis_type, "paper", "") or "").split())
    note = " ".join(analysis_type.help_note.split())
    return f"{title}." + "".join(f"\n\n{part}" for part in (paper, note) if part)


def analysis_command(analysis_type: type[Analysis], *, out: str | None = None) -> Callable[..., None]:
    """The ``textrobust NAME`` command of ``analysis_type``: one option per settings field
    (:func:`field_option`), the shared options, ``--out`` defaulting to ``out`` (default
    ``runs/NAME``). A field named like a shared option is a TypeError (at import, when the
    app registers the command)."""
    from textrobust.cli.running import run_analyses

    name = analysis_type.name
    settings_type = analysis_type.settings_type
    fields = [field_option(field, info, where=settings_type.__name__)
              for field, info in settings_type.model_fields.items()]

    def command(ctx: typer.Context, **values: Any) -> None:
        settings = {f.name: f.convert(values[f.name]) for f in fields}
        run_analyses(ctx, {name: settings})

    parameters = [inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=typer.Context)]
    parameters += [inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default, annotation=f.annotation)
                   for f in fields]
    command.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in parameters}
    command.__name__ = command.__qualname__ = name.replace("-", "_") + "_cmd"
    command.__doc__ = command_help(analysis_type)
    return o.with_shared_options(out or f"runs/{name}")(command)


def register(app: typer.Typer) -> None:
    """Add one command per registered analysis (:data:`textrobust.analyses.ANALYSES`) to
    the ``textrobust`` app, named as the analysis."""
    from textrobust.analyses import ANALYSES

    for name in ANALYSES.names():
        app.command(name)(analysis_command(ANALYSES.get(name)))
