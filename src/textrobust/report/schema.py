"""The report dict (schema ``textrobust.report/1``): its declaration, validation and reading.

An audit produces one JSON-ready dict; :func:`~textrobust.report.html.write_report` turns
it into ``report.html`` and ``report.json``. The dict has exactly these keys (a key whose
type admits ``None`` may also be left out, which means ``None``; any other key is
rejected, so a misspelt key fails loudly instead of vanishing from the page)::

    schema              "textrobust.report/1"
    textrobust_version  str
    created_at          str (ISO 8601 time)
    title               str
    victim              {name: str, path: str, card: {str: JSON} | None}
    data                {name: str, split: str, examples: int, label_names: [str],
                         length_limit: {max_words: int, policy: str, truncated: int,
                                        rejected: int} | None,
                         skipped_rows: {count: int, shown: [str]} | None}
    verdict             {level: "good" | "fair" | "poor" | "unknown", headline: str, points: [str]}
    run                 {seconds: float, queries: int, executor: str, workers: int, store: str,
                         resumed: bool, seed: int | None}
    analyses            [Analysis]
    profile             str | None (the ``--profile`` of ``textrobust audit``)
    not_run             [{name: str, title: str, command: str}] | None (registered analyses
                         this audit left out, each with the command that runs it)

    Analysis   {name: str (letters, digits, "_", "-", "."; unique), title: str, paper: str,
                settings: {str: JSON}, counts: {units, ok, errors, budget_exhausted: int},
                headline: [{label: str, value: float | int | str | None,
                            format: "%" | "int" | "float" | "text", note: str | None}],
                tables: [{title: str, columns: [str], rows: [[scalar | None]],
                          note: str | None (what the columns mean)}],
                figures: [{title: str, svg: str (a complete SVG document), caption: str}],
                examples: [{id: str, status: str, label: str, prediction_before: str | None,
                            prediction_after: str | None, original: [str], perturbed: [str],
                            changed: [int], note: str | None}],
                errors: [{id: str, error: str, message: str}],
                risk: float | None, point: str | None}

``risk`` (the share of examples on which robustness failed) and ``point`` (one line for
the verdict) are what :func:`textrobust.audit.verdict.verdict` reads; the page does not
show them apart from the verdict. ``%`` values are fractions (0.123 is shown as 12.3%).
Every row of a table has one cell per column; ``changed`` holds indices into ``original``
and ``perturbed`` (the tokens to mark as removed and inserted). A float that is NaN or
infinite counts as ``None``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, NotRequired, TypedDict

from textrobust.errors import TextRobustError

__all__ = [
    "SCHEMA_VERSION",
    "AnalysisSection",
    "Report",
    "ReportError",
    "json_ready",
    "load_report",
    "validate_report",
]

SCHEMA_VERSION = "textrobust.report/1"

FORMATS = ("%", "int", "float", "text")
LEVELS = ("good", "fair", "poor", "unknown")


class ReportError(TextRobustError, ValueError):
    """A report dict (or ``report.json``) does not follow the ``textrobust.report/1`` schema."""


# ---- the declaration, as TypedDicts (for readers and type checkers) -----------------------------
class Victim(TypedDict):
    name: str
    path: str
    card: NotRequired[dict[str, Any] | None]


class LengthLimit(TypedDict):
    max_words: int
    policy: str
    truncated: int  # analysed texts cut to max_words
    rejected: int  # analysed texts turned into error records


class SkippedRows(TypedDict):
    count: int
    shown: list[str]  # "row 3: empty text", the first ones


class DataInfo(TypedDict):
    name: str
    split: str
    examples: int
    label_names: list[str]
    length_limit: NotRequired[LengthLimit | None]
    skipped_rows: NotRequired[SkippedRows | None]


class Verdict(TypedDict):
    level: Literal["good", "fair", "poor", "unknown"]
    headline: str
    points: list[str]


class RunInfo(TypedDict):
    seconds: float
    queries: int
    executor: str
    workers: int
    store: str
    resumed: bool
    seed: NotRequired[int | None]


class Counts(TypedDict):
    units: int
    ok: int
    errors: int
    budget_exhausted: int


class Headline(TypedDict):
    label: str
    value: NotRequired[float | int | str | None]
    format: Literal["%", "int", "float", "text"]
    note: NotRequired[str | None]


class Table(TypedDict):
    title: str
    columns: list[str]
    rows: list[list[float | int | str | bool | None]]
    note: NotRequired[str | None]


class NotRun(TypedDict):
    name: str
    title: str
    command: str


class Figure(TypedDict):
    title: str
    svg: str
    caption: str


class ExampleRow(TypedDict):
    id: str
    status: str
    label: str
    prediction_before: NotRequired[str | None]
    prediction_after: NotRequired[str | None]
    original: list[str]
    perturbed: list[str]
    changed: list[int]
    note: NotRequired[str | None]


class ErrorRow(TypedDict):
    id: str
    error: str
    message: str


class AnalysisSection(TypedDict):
    name: str
    title: str
    paper: str
    settings: dict[str, Any]
    counts: Counts
    headline: list[Headline]
    tables: list[Table]
    figures: list[Figure]
    examples: list[ExampleRow]
    errors: list[ErrorRow]
    risk: NotRequired[float | None]
    point: NotRequired[str | None]


class Report(TypedDict):
    schema: str
    textrobust_version: str
    created_at: str
    title: str
    victim: Victim
    data: DataInfo
    verdict: Verdict
    run: RunInfo
    analyses: list[AnalysisSection]
    profile: NotRequired[str | None]
    not_run: NotRequired[list[NotRun] | None]


# ---- the same declaration, as checkers ----------------------------------------------------------
# A checker takes (value, path) and raises ReportError; ``what`` says what it accepts.
class _Check:
    def __init__(self, what: str, test: Callable[[Any], bool], nullable: bool = False) -> None:
        self.what = what
        self.test = test
        self.nullable = nullable

    def __call__(self, value: Any, path: str) -> None:
        if _is_null(value):
            if not self.nullable:
                _fail(path, f"must be {self.what}", value)
            return
        if not self.test(value):
            _fail(path, f"must be {self.what}{' or null' if self.nullable else ''}", value)


def _is_null(value: Any) -> bool:
    return value is None or (isinstance(value, float) and not math.isfinite(value))


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_scalar(value: Any) -> bool:
    return isinstance(value, (str, int, float, bool))


def _fail(path: str, must: str, value: Any) -> None:
    shown = repr(value)
    if len(shown) > 80:
        shown = shown[:77] + "..."
    raise ReportError(f"Report key '{path}' {must}. Got {shown} ({type(value).__name__}) instead.")


_STR = _Check("a string", lambda v: isinstance(v, str))
_OPT_STR = _Check("a string", lambda v: isinstance(v, str), nullable=True)
_INT = _Check("an integer", _is_int)
_COUNT = _Check("an integer >= 0", lambda v: _is_int(v) and v >= 0)
_NUMBER = _Check("a finite number", _is_number)
_OPT_NUMBER = _Check("a number", _is_number, nullable=True)
_OPT_INT = _Check("an integer", _is_int, nullable=True)
_BOOL = _Check("true or false", lambda v: isinstance(v, bool))
_SCALAR = _Check("a string, number or boolean", _is_scalar, nullable=True)
_HEAD_VALUE = _Check("a string or number", lambda v: isinstance(v, str) or _is_number(v), nullable=True)
_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
_NAME = _Check("a name of letters, digits, '_', '-' and '.'",
               lambda v: isinstance(v, str) and _NAME_RE.fullmatch(v) is not None)
_SVG = _Check("a complete SVG document (text holding '<svg')", lambda v: isinstance(v, str) and "<svg" in v)


def _choice(options: Sequence[str]) -> _Check:
    return _Check("one of " + ", ".join(repr(o) for o in options), lambda v: v in options)


def _json(value: Any, path: str) -> None:
    """Any JSON value (objects with string keys)."""
    if _is_null(value) or _is_scalar(value):
        return
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                _fail(f"{path}.{key!r}", "must have a string key", key)
            _json(item, f"{path}.{key}")
        return
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            _json(item, f"{path}[{i}]")
        return
    _fail(path, "must be JSON data (string, number, boolean, null, list or object)", value)


def _json_object(value: Any, path: str) -> None:
    if not isinstance(value, Mapping):
        _fail(path, "must be an object", value)
    _json(value, path)


def _opt_json_object(value: Any, path: str) -> None:
    if value is not None:
        _json_object(value, path)


def _optional(check: Callable[[Any, str], None]) -> Callable[[Any, str], None]:
    """``check``, or null."""
    def run(value: Any, path: str) -> None:
        if value is not None:
            check(value, path)

    return run


def _list_of(check: Callable[[Any, str], None]) -> Callable[[Any, str], None]:
    def run(value: Any, path: str) -> None:
        if not isinstance(value, (list, tuple)):
            _fail(path, "must be a list", value)
        for i, item in enumerate(value):
            check(item, f"{path}[{i}]")

    return run


_Fields = Mapping[str, Callable[[Any, str], None]]


def _object(fields: _Fields, optional: _Fields | None = None) -> Callable[[Any, str], None]:
    """An object with the required keys ``fields`` and the keys ``optional`` (those that
    admit null, which a missing key means); any other key is rejected."""
    optional = dict(optional or {})
    every = {**fields, **optional}

    def run(value: Any, path: str) -> None:
        if not isinstance(value, Mapping):
            _fail(path, "must be an object", value)
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


def _table(value: Any, path: str) -> None:
    _object({"title": _STR, "columns": _list_of(_STR), "rows": _list_of(_list_of(_SCALAR))},
            {"note": _OPT_STR})(value, path)
    width = len(value["columns"])
    for i, row in enumerate(value["rows"]):
        if len(row) != width:
            raise ReportError(f"Report key '{path}.rows[{i}]' has {len(row)} cells but the table has "
                              f"{width} columns; give one cell per column (null for n/a).")


def _example(value: Any, path: str) -> None:
    _object({"id": _STR, "status": _STR, "label": _STR, "original": _list_of(_STR),
             "perturbed": _list_of(_STR), "changed": _list_of(_COUNT)},
            {"prediction_before": _OPT_STR, "prediction_after": _OPT_STR, "note": _OPT_STR})(value, path)
    longest = max(len(value["original"]), len(value["perturbed"]))
    for i, index in enumerate(value["changed"]):
        if index >= longest:
            raise ReportError(f"Report key '{path}.changed[{i}]' is {index}, past the last token "
                              f"(index {longest - 1}) of 'original' and 'perturbed'.")


_ANALYSIS = _object(
    {
        "name": _NAME, "title": _STR, "paper": _STR, "settings": _json_object,
        "counts": _object({"units": _COUNT, "ok": _COUNT, "errors": _COUNT, "budget_exhausted": _COUNT}),
        "headline": _list_of(_object({"label": _STR, "format": _choice(FORMATS)},
                                     {"value": _HEAD_VALUE, "note": _OPT_STR})),
        "tables": _list_of(_table),
        "figures": _list_of(_object({"title": _STR, "svg": _SVG, "caption": _STR})),
        "examples": _list_of(_example),
        "errors": _list_of(_object({"id": _STR, "error": _STR, "message": _STR})),
    },
    {"risk": _OPT_NUMBER, "point": _OPT_STR},
)

_REPORT = _object({
    "schema": _choice((SCHEMA_VERSION,)),
    "textrobust_version": _STR,
    "created_at": _STR,
    "title": _STR,
    "victim": _object({"name": _STR, "path": _STR}, {"card": _opt_json_object}),
    "data": _object({"name": _STR, "split": _STR, "examples": _COUNT, "label_names": _list_of(_STR)},
                    {"length_limit": _optional(_object({"max_words": _COUNT, "policy": _STR, "truncated": _COUNT,
                                                        "rejected": _COUNT})),
                     "skipped_rows": _optional(_object({"count": _COUNT, "shown": _list_of(_STR)}))}),
    "verdict": _object({"level": _choice(LEVELS), "headline": _STR, "points": _list_of(_STR)}),
    "run": _object({"seconds": _NUMBER, "queries": _COUNT, "executor": _STR, "workers": _COUNT,
                    "store": _STR, "resumed": _BOOL}, {"seed": _OPT_INT}),
    "analyses": _list_of(_ANALYSIS),
}, {"profile": _OPT_STR,
    "not_run": _optional(_list_of(_object({"name": _NAME, "title": _STR, "command": _STR})))})


def validate_report(report: Any) -> None:
    """Check ``report`` against the ``textrobust.report/1`` schema (see the module
    docstring); raise :class:`ReportError` naming the first bad key path, e.g.
    ``analyses[1].headline[0].format``."""
    if not isinstance(report, Mapping):
        raise ReportError(f"A report must be an object (a dict). Got {type(report).__name__} instead.")
    if "schema" not in report:
        raise ReportError(f"Report key 'schema' is missing; expected '{SCHEMA_VERSION}'.")
    if report["schema"] != SCHEMA_VERSION:
        raise ReportError(f"Report key 'schema' is {report['schema']!r}, but this version of textrobust "
                          f"reads '{SCHEMA_VERSION}' only; produce the report again with it.")
    _REPORT(report, "")
    seen: set[str] = set()
    for i, section in enumerate(report["analyses"]):
        if section["name"] in seen:
            raise ReportError(f"Report key 'analyses[{i}].name' repeats the analysis name "
                              f"{section['name']!r}; each analysis appears once.")
        seen.add(section["name"])


def json_ready(value: Any) -> Any:
    """A copy of ``value`` as plain JSON data: mappings become dicts, tuples lists, and
    NaN or infinite floats ``None`` (shown as n/a, written as null)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {k: json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_ready(v) for v in value]
    return value


def load_report(path: str | Path) -> dict[str, Any]:
    """Read a ``report.json`` written by :func:`~textrobust.report.html.write_report` and
    validate it."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ReportError(f"Cannot read the report file '{path}': {exc.strerror or exc}.") from exc
    try:
        report = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReportError(f"The report file '{path}' is not valid JSON (line {exc.lineno}, column "
                          f"{exc.colno}: {exc.msg}).") from exc
    try:
        validate_report(report)
    except ReportError as exc:
        raise ReportError(f"The report file '{path}' is not a {SCHEMA_VERSION} report: {exc}") from exc
    return report
