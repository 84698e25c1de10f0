"""Checkers of JSON-ready data against a declared shape (the report schema and its sections).

A checker is a function ``(value, path) -> None`` that raises
:class:`~textrobust.errors.ReportError` naming the first bad key path, e.g.
``analyses[1].headline[0].format``, the value it got and what it accepts. Checkers
compose: :func:`object_of` (exact keys, a misspelt key fails loudly), :func:`list_of`,
:func:`optional`, :func:`choice`, and the scalar checkers below. A float that is NaN or
infinite counts as null (JSON has neither).

:mod:`textrobust.sections` declares a report section with them and
:mod:`textrobust.report.schema` the whole report, so the two share one declaration.

>>> check = object_of({"label": STR}, {"note": OPT_STR})
>>> check({"label": "accuracy", "note": None}, "headline[0]")
>>> check({"label": 1}, "headline[0]")
Traceback (most recent call last):
...
textrobust.errors.ReportError: Report key 'headline[0].label' must be a string. Got 1 (int) instead.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeAlias

from textrobust.errors import ReportError

__all__ = [
    "BOOL", "COUNT", "Checker", "SCHEMA_VERSION", "INT", "NAME", "NUMBER", "OPT_INT", "OPT_NUMBER", "OPT_STR", "SCALAR", "STR",
    "Check", "choice", "fail", "is_int", "is_null", "is_number", "json_object", "json_value", "list_of",
    "object_of", "optional",
]

#: The schema a report (and so each of its sections) follows.
SCHEMA_VERSION = "textrobust.report/1"

#: A checker: raises :class:`ReportError` when ``value`` (at key ``path``) is not what it declares.
Checker: TypeAlias = Callable[[Any, str], None]


class Check:
    """A checker of one scalar kind: ``what`` says what it accepts, ``test`` accepts a
    non-null value, ``nullable`` lets null (None, NaN, infinity) through."""

    def __init__(self, what: str, test: Callable[[Any], bool], nullable: bool = False) -> None:
        self.what = what
        self.test = test
        self.nullable = nullable

    def __call__(self, value: Any, path: str) -> None:
        if is_null(value):
            if not self.nullable:
                fail(path, f"must be {self.what}", value)
            return
        if not self.test(value):
            fail(path, f"must be {self.what}{' or null' if self.nullable else ''}", value)


def is_null(value: Any) -> bool:
    """Whether ``value`` is null in JSON: None, or a NaN or infinite float."""
    return value is None or (isinstance(value, float) and not math.isfinite(value))


def is_int(value: Any) -> bool:
    """Whether ``value`` is a whole number (not a boolean)."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    """Whether ``value`` is a number (not a boolean)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_scalar(value: Any) -> bool:
    return isinstance(value, (str, int, float, bool))


def fail(path: str, must: str, value: Any) -> None:
    """Raise :class:`ReportError`: the key ``path`` ``must`` be something else than ``value``."""
    shown = repr(value)
    if len(shown) > 80:
        shown = shown[:77] + "..."
    raise ReportError(f"Report key '{path}' {must}. Got {shown} ({type(value).__name__}) instead.")


STR = Check("a string", lambda v: isinstance(v, str))
OPT_STR = Check("a string", lambda v: isinstance(v, str), nullable=True)
INT = Check("an integer", is_int)
COUNT = Check("an integer >= 0", lambda v: is_int(v) and v >= 0)
NUMBER = Check("a finite number", is_number)
OPT_NUMBER = Check("a number", is_number, nullable=True)
OPT_INT = Check("an integer", is_int, nullable=True)
BOOL = Check("true or false", lambda v: isinstance(v, bool))
SCALAR = Check("a string, number or boolean", _is_scalar, nullable=True)
_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
NAME = Check("a name of letters, digits, '_', '-' and '.'",
             lambda v: isinstance(v, str) and _NAME_RE.fullmatch(v) is not None)


def choice(options: Sequence[str]) -> Check:
    """A checker accepting exactly one of ``options``."""
    return Check("one of " + ", ".join(repr(o) for o in options), lambda v: v in options)


def json_value(value: Any, path: str) -> None:
    """Any JSON value (objects with string keys)."""
    if is_null(value) or _is_scalar(value):
        return
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                fail(f"{path}.{key!r}", "must have a string key", key)
            json_value(item, f"{path}.{key}")
        return
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            json_value(item, f"{path}[{i}]")
        return
    fail(path, "must be JSON data (string, number, boolean, null, list or object)", value)


def json_object(value: Any, path: str) -> None:
    """A JSON object (any keys, JSON values)."""
    if not isinstance(value, Mapping):
        fail(path, "must be an object", value)
    json_value(value, path)


def optional(check: Checker) -> Checker:
    """``check``, or null."""
    def run(value: Any, path: str) -> None:
        if value is not None:
            check(value, path)

    return run


def list_of(check: Checker) -> Checker:
    """A list (or tuple) whose every item passes ``check``."""
    def run(value: Any, path: str) -> None:
        if not isinstance(value, (list, tuple)):
            fail(path, "must be a list", value)
        for i, item in enumerate(value):
            check(item, f"{path}[{i}]")

    return run


def object_of(fields: Mapping[str, Checker], optional_fields: Mapping[str, Checker] | None = None) -> Checker:
    """An object with the required keys ``fields`` and the keys ``optional_fields`` (those
    that admit null, which a missing key means); any other key is rejected, naming the
    keys accepted."""
    every = {**fields, **(optional_fields or {})}

    def run(value: Any, path: str) -> None:
        if not isinstance(value, Mapping):
            fail(path, "must be an object", value)
        where = path or "the report"
        for key in value:
            if key not in every:
                accepted = ", ".join(every)
                raise ReportError(f"Report key '{_join(path, key)}' is not part of the {SCHEMA_VERSION} "
                                  f"schema. Keys accepted in {where}: {accepted}.")
        for key, check in every.items():
            if key in value:
                check(value[key], _join(path, key))
            elif key in fields:
                raise ReportError(f"Report key '{_join(path, key)}' is missing from {where}.")

    return run


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else str(key)
