"""The report dict (schema ``textrobust.report/1``): its declaration, validation and reading.

An audit produces one JSON-ready dict; :func:`~textrobust.report.html.write_report` turns
it into ``report.html`` and ``report.json``. The dict has exactly these keys (a key whose
type admits ``None`` may also be left out, which means ``None``; any other key is
rejected, so a misspelt key fails loudly instead of vanishing from the page)::

    schema              "textrobust.report/1"
    textrobust_version  str
    created_at          str (ISO 8601 time)
    title               str
    victim              {name: str, path: str, card: {str: JSON} | None,
                         placement: {device: str, dtype: str, agreement: float | None,
                                     agreement_sample: int | None} | None (where the
                         victim ran, in what float type, and below float32 the share of a
                         sample on which it predicted as in float32; textrobust.devices)}
    data                {name: str, split: str, examples: int, label_names: [str],
                         length_limit: {max_words: int, policy: str, truncated: int,
                                        rejected: int} | None,
                         skipped_rows: {count: int, shown: [str]} | None}
    verdict             {level: "good" | "fair" | "poor" | "inconclusive" | "unknown", headline: str,
                         points: [str], settle: [str] | None (when inconclusive: the findings
                         whose review would settle it, textrobust.audit.verdict)}
    run                 {seconds: float, queries: int, executor: str, workers: int, store: str,
                         resumed: bool, seed: int | None, gpus_per_worker: float (only
                         with --gpus-per-worker)}
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
                risk: float | None, point: str | None,
                risk_low: float | None, risk_high: float | None (the risk's 95% interval
                          when it is an expected valid rate, issue 47),
                validity: {figure: str, examples: int, units: [{item, example,
                          probability, draws, weight, outcome}]} | None (the findings the
                          risk's interval rests on; textrobust.validity.estimate),
                reviewed: {str: JSON} | None (the figures over the findings people
                          confirmed in ``textrobust review``: textrobust.report.reviewed)}

``risk`` (the share of examples on which robustness failed) and ``point`` (one line for
the verdict) are what :func:`textrobust.audit.verdict.verdict` reads; the page does not
show them apart from the verdict. ``%`` values are fractions (0.123 is shown as 12.3%).
Every row of a table has one cell per column; ``changed`` holds indices into ``original``
and ``perturbed`` (the tokens to mark as removed and inserted). A float that is NaN or
infinite counts as ``None``.

An analysis builds its section (``headline`` to ``point``) as the typed, self-checking
values of :mod:`textrobust.sections`, which also declares those keys' checkers; this
module adds the rest of the report and checks a whole report (or a read ``report.json``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, NotRequired, TypedDict

from textrobust.errors import ReportError
from textrobust.json_checks import (
    BOOL,
    COUNT,
    NAME,
    NUMBER,
    OPT_INT,
    OPT_NUMBER,
    OPT_STR,
    SCHEMA_VERSION,
    STR,
    choice,
    json_object,
    list_of,
    object_of,
    optional,
)
from textrobust.sections import SECTION_FIELDS, SECTION_OPTIONAL, ExampleData, FigureData, HeadlineData, TableData

__all__ = [
    "SCHEMA_VERSION",
    "AnalysisSection",
    "Report",
    "ReportError",
    "json_ready",
    "load_report",
    "validate_report",
]

LEVELS = ("good", "fair", "poor", "inconclusive", "unknown")


# ---- the declaration, as TypedDicts (for readers and type checkers) -----------------------------
class Victim(TypedDict):
    name: str
    path: str
    card: NotRequired[dict[str, Any] | None]
    placement: NotRequired[dict[str, Any] | None]


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
    level: Literal["good", "fair", "poor", "inconclusive", "unknown"]
    headline: str
    points: list[str]
    settle: NotRequired[list[str] | None]


class RunInfo(TypedDict):
    seconds: float
    queries: int
    executor: str
    workers: int
    store: str
    resumed: bool
    seed: NotRequired[int | None]
    gpus_per_worker: NotRequired[float]


class Counts(TypedDict):
    units: int
    ok: int
    errors: int
    budget_exhausted: int


class NotRun(TypedDict):
    name: str
    title: str
    command: str


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
    headline: list[HeadlineData]
    tables: list[TableData]
    figures: list[FigureData]
    examples: list[ExampleData]
    errors: list[ErrorRow]
    risk: NotRequired[float | None]
    point: NotRequired[str | None]
    risk_low: NotRequired[float | None]
    risk_high: NotRequired[float | None]
    validity: NotRequired[dict[str, Any] | None]
    reviewed: NotRequired[dict[str, Any] | None]


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


# ---- the same declaration, as checkers (:mod:`textrobust.json_checks`; a section's own keys are
# declared by :mod:`textrobust.sections`, which builds them) ----------------------------------------
_ANALYSIS = object_of(
    {
        "name": NAME, "title": STR, "paper": STR, "settings": json_object,
        "counts": object_of({"units": COUNT, "ok": COUNT, "errors": COUNT, "budget_exhausted": COUNT}),
        **SECTION_FIELDS,
        "errors": list_of(object_of({"id": STR, "error": STR, "message": STR})),
    },
    {**SECTION_OPTIONAL, "reviewed": optional(json_object)},
)

_REPORT = object_of({
    "schema": choice((SCHEMA_VERSION,)),
    "textrobust_version": STR,
    "created_at": STR,
    "title": STR,
    "victim": object_of({"name": STR, "path": STR}, {
        "card": optional(json_object),
        "placement": optional(object_of({"device": STR, "dtype": STR},
                                        {"agreement": OPT_NUMBER, "agreement_sample": OPT_INT}))}),
    "data": object_of({"name": STR, "split": STR, "examples": COUNT, "label_names": list_of(STR)},
                      {"length_limit": optional(object_of({"max_words": COUNT, "policy": STR, "truncated": COUNT,
                                                           "rejected": COUNT})),
                       "skipped_rows": optional(object_of({"count": COUNT, "shown": list_of(STR)}))}),
    "verdict": object_of({"level": choice(LEVELS), "headline": STR, "points": list_of(STR)},
                         {"settle": optional(list_of(STR))}),
    "run": object_of({"seconds": NUMBER, "queries": COUNT, "executor": STR, "workers": COUNT,
                      "store": STR, "resumed": BOOL}, {"seed": OPT_INT, "gpus_per_worker": OPT_NUMBER}),
    "analyses": list_of(_ANALYSIS),
}, {"profile": OPT_STR,
    "not_run": optional(list_of(object_of({"name": NAME, "title": STR, "command": STR})))})


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
