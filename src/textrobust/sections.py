"""A report section as typed values: what :meth:`Analysis.section` returns.

A section is what one analysis adds to the report: headline figures, tables, figures
(SVG charts), example rows, and the ``risk`` and ``point`` the verdict reads. Each part
is a frozen dataclass whose constructor normalises its values (NaN and infinite floats
become None, numpy scalars plain numbers, lists tuples) and checks them against the
``textrobust.report/1`` schema (:mod:`textrobust.report.schema`), so a bad section fails
where it is built, naming the key, not when the report is written. ``to_dict()`` gives
the JSON form the report stores; the report checks a read ``report.json`` against the
same declarations (:data:`SECTION_FIELDS`, :data:`SECTION_OPTIONAL`).

The parts, as the report page shows them:

- :class:`Headline`: one figure (``format`` ``"%"`` for a fraction shown as a percentage,
  ``"int"``, ``"float"`` or ``"text"``), with a note saying what it means;
- :class:`Table`: a title, columns, one cell per column in every row, a note on the columns;
- :class:`Figure`: a complete SVG document and its caption;
- :class:`ExampleRow`: an example's tokens before and after, ``changed`` indexing the
  tokens to mark, the label and the predictions.

>>> Headline("clean accuracy", 0.9, "%").to_dict()
{'label': 'clean accuracy', 'value': 0.9, 'format': '%', 'note': None}
>>> Table("t", ["a", "b"], [[1, float("nan")]]).to_dict()
{'title': 't', 'columns': ['a', 'b'], 'rows': [[1, None]]}
>>> Headline("accuracy", 0.9, "percent")
Traceback (most recent call last):
...
textrobust.errors.ReportError: Report key 'headline.format' must be one of '%', 'int', 'float', 'text'. Got 'percent' (str) instead.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NotRequired, TypeAlias, TypedDict

from textrobust.json_checks import (
    COUNT,
    OPT_NUMBER,
    OPT_STR,
    SCALAR,
    STR,
    Check,
    Checker,
    choice,
    fail,
    is_number,
    json_object,
    list_of,
    object_of,
    optional,
)
from textrobust.errors import ReportError

__all__ = [
    "FORMATS", "SECTION_FIELDS", "SECTION_OPTIONAL", "Cell", "ExampleData", "ExampleRow", "Figure", "FigureData",
    "Format", "Headline", "HeadlineData", "Section", "SectionData", "Table", "TableData",
]

#: How a headline value is shown: a fraction as a percentage, a whole number, a number, text.
Format: TypeAlias = Literal["%", "int", "float", "text"]
FORMATS: tuple[Format, ...] = ("%", "int", "float", "text")
#: One cell of a table (None: n/a).
Cell: TypeAlias = "float | int | str | bool | None"


# ---- the JSON form, as TypedDicts (what ``to_dict`` returns and ``report.json`` holds) ---------
class HeadlineData(TypedDict):
    label: str
    value: NotRequired[float | int | str | None]
    format: Format
    note: NotRequired[str | None]


class TableData(TypedDict):
    title: str
    columns: list[str]
    rows: list[list[Cell]]
    note: NotRequired[str | None]


class FigureData(TypedDict):
    title: str
    svg: str
    caption: str


class ExampleData(TypedDict):
    id: str
    status: str
    label: str
    prediction_before: NotRequired[str | None]
    prediction_after: NotRequired[str | None]
    original: list[str]
    perturbed: list[str]
    changed: list[int]
    note: NotRequired[str | None]


class SectionData(TypedDict):
    headline: list[HeadlineData]
    tables: list[TableData]
    figures: list[FigureData]
    examples: list[ExampleData]
    risk: NotRequired[float | None]
    point: NotRequired[str | None]
    risk_low: NotRequired[float | None]
    risk_high: NotRequired[float | None]
    validity: NotRequired[dict[str, Any] | None]


# ---- the same declaration, as checkers (:mod:`textrobust.json_checks`) --------------------------
_HEAD_VALUE = Check("a string or number", lambda v: isinstance(v, str) or is_number(v), nullable=True)
_SVG = Check("a complete SVG document (text holding '<svg')", lambda v: isinstance(v, str) and "<svg" in v)

_HEADLINE = object_of({"label": STR, "format": choice(FORMATS)}, {"value": _HEAD_VALUE, "note": OPT_STR})
_FIGURE = object_of({"title": STR, "svg": _SVG, "caption": STR})
_TABLE_KEYS = object_of({"title": STR, "columns": list_of(STR), "rows": list_of(list_of(SCALAR))}, {"note": OPT_STR})
_EXAMPLE_KEYS = object_of({"id": STR, "status": STR, "label": STR, "original": list_of(STR),
                           "perturbed": list_of(STR), "changed": list_of(COUNT)},
                          {"prediction_before": OPT_STR, "prediction_after": OPT_STR, "note": OPT_STR})


def _table(value: Any, path: str) -> None:
    _TABLE_KEYS(value, path)
    width = len(value["columns"])
    for i, row in enumerate(value["rows"]):
        if len(row) != width:
            raise ReportError(f"Report key '{path}.rows[{i}]' has {len(row)} cells but the table has "
                              f"{width} columns; give one cell per column (null for n/a).")


def _example(value: Any, path: str) -> None:
    _EXAMPLE_KEYS(value, path)
    longest = max(len(value["original"]), len(value["perturbed"]))
    for i, index in enumerate(value["changed"]):
        if index >= longest:
            raise ReportError(f"Report key '{path}.changed[{i}]' is {index}, past the last token "
                              f"(index {longest - 1}) of 'original' and 'perturbed'.")


#: The keys of a section in a report's analysis entry, each with its checker.
SECTION_FIELDS: Mapping[str, Checker] = {
    "headline": list_of(_HEADLINE), "tables": list_of(_table), "figures": list_of(_FIGURE),
    "examples": list_of(_example),
}
#: The keys of a section that may be left out (meaning null).
SECTION_OPTIONAL: Mapping[str, Checker] = {"risk": OPT_NUMBER, "point": OPT_STR, "risk_low": OPT_NUMBER,
                                           "risk_high": OPT_NUMBER, "validity": optional(json_object)}


# ---- the typed values -----------------------------------------------------------------------------
def _json(value: Any) -> Any:
    """``value`` as plain JSON data (mappings to dicts, tuples to lists, NaN to None)."""
    if isinstance(value, Mapping):
        return {str(k): _json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json(v) for v in value]
    return _plain(value)


def _plain(value: Any) -> Any:
    """``value`` as a plain JSON scalar where it is one: NaN and infinite floats become
    None, numpy scalars Python ones; anything else is left for the checkers to judge."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, (bool, int, str)):
        return value
    item = getattr(value, "item", None)
    if callable(item) and getattr(value, "shape", None) == ():  # a numpy scalar (or 0-d array)
        return _plain(item())
    return value


def _items(value: Any, path: str) -> tuple[Any, ...]:
    """``value`` (a list or tuple) as a tuple; a string or anything else fails."""
    if not isinstance(value, (list, tuple)):
        fail(path, "must be a list", value)
    return tuple(value)


def _set(obj: object, name: str, value: Any) -> None:
    object.__setattr__(obj, name, value)


@dataclass(frozen=True)
class Headline:
    """One headline figure; ``value`` None (or NaN) is shown as n/a, never 0."""

    label: str
    value: float | int | str | None
    format: Format = "float"
    note: str | None = None

    def __post_init__(self) -> None:
        _set(self, "value", _plain(self.value))
        _HEADLINE(self.to_dict(), "headline")

    def to_dict(self) -> HeadlineData:
        """The JSON form (every key present)."""
        return {"label": self.label, "value": self.value, "format": self.format, "note": self.note}


@dataclass(frozen=True)
class Table:
    """One table: a cell per column in every row (None for n/a); ``note`` says what the
    columns mean (shown under it; left out of the JSON when empty)."""

    title: str
    columns: Sequence[str]
    rows: Sequence[Sequence[Cell]]
    note: str | None = None

    def __post_init__(self) -> None:
        _set(self, "columns", _items(self.columns, "table.columns"))
        rows = _items(self.rows, "table.rows")
        _set(self, "rows", tuple(tuple(_plain(c) for c in _items(row, f"table.rows[{i}]"))
                                 for i, row in enumerate(rows)))
        _table(self.to_dict(), "table")

    def to_dict(self) -> TableData:
        """The JSON form (``note`` only when there is one)."""
        data: TableData = {"title": self.title, "columns": list(self.columns),
                           "rows": [list(row) for row in self.rows]}
        if self.note:
            data["note"] = self.note
        return data


@dataclass(frozen=True)
class Figure:
    """One chart: a complete SVG document (:mod:`textrobust.analyses.figures` draws them)."""

    title: str
    svg: str
    caption: str = ""

    def __post_init__(self) -> None:
        _FIGURE(self.to_dict(), "figure")

    def to_dict(self) -> FigureData:
        """The JSON form."""
        return {"title": self.title, "svg": self.svg, "caption": self.caption}


@dataclass(frozen=True)
class ExampleRow:
    """One example of a section's example table: its tokens before and after (gaps and
    words interleaved), ``changed`` indexing the tokens to mark as removed and inserted,
    the label and the predictions by name."""

    id: str
    status: str
    label: str
    original: Sequence[str]
    perturbed: Sequence[str]
    changed: Sequence[int]
    prediction_before: str | None = None
    prediction_after: str | None = None
    note: str | None = None

    def __post_init__(self) -> None:
        for name in ("original", "perturbed", "changed"):
            _set(self, name, _items(getattr(self, name), f"example.{name}"))
        _example(self.to_dict(), "example")

    def to_dict(self) -> ExampleData:
        """The JSON form (every key present)."""
        return {"id": self.id, "status": self.status, "label": self.label,
                "prediction_before": self.prediction_before, "prediction_after": self.prediction_after,
                "original": list(self.original), "perturbed": list(self.perturbed), "changed": list(self.changed),
                "note": self.note}


_PARTS: tuple[tuple[str, type], ...] = (("headline", Headline), ("tables", Table), ("figures", Figure),
                                        ("examples", ExampleRow))


@dataclass(frozen=True)
class Section:
    """The report section of an analysis. ``risk``: the share of examples on which
    robustness failed (what the verdict's level is read from; None when the analysis
    measures no such share); ``point``: one sentence for the verdict. ``risk_low`` ..
    ``risk_high``: the risk's 95% interval when it is an estimate (the expected valid
    rate, :mod:`textrobust.validity.estimate`); ``validity``: the findings it rests on, each
    with its probability of keeping the meaning (``{"figure", "examples", "units"}``), from
    which the verdict recomputes the interval as findings are reviewed (issue 47)."""

    headline: Sequence[Headline] = ()
    tables: Sequence[Table] = ()
    figures: Sequence[Figure] = ()
    examples: Sequence[ExampleRow] = ()
    risk: float | None = None
    point: str | None = None
    risk_low: float | None = None
    risk_high: float | None = None
    validity: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        for name, kind in _PARTS:
            items = _items(getattr(self, name), f"section.{name}")
            for i, item in enumerate(items):
                if not isinstance(item, kind):
                    fail(f"section.{name}[{i}]", f"must be a {kind.__name__}", item)
            _set(self, name, items)
        _set(self, "risk", _plain(self.risk))
        OPT_NUMBER(self.risk, "section.risk")
        OPT_STR(self.point, "section.point")
        for end in ("risk_low", "risk_high"):
            _set(self, end, _plain(getattr(self, end)))
            OPT_NUMBER(getattr(self, end), f"section.{end}")
        if self.validity is not None:
            json_object(_json(self.validity), "section.validity")

    def to_dict(self) -> SectionData:
        """The JSON form the report stores for this section (every key present)."""
        data: SectionData = {"headline": [h.to_dict() for h in self.headline],
                             "tables": [t.to_dict() for t in self.tables],
                             "figures": [f.to_dict() for f in self.figures],
                             "examples": [e.to_dict() for e in self.examples], "risk": self.risk, "point": self.point}
        if self.risk_low is not None or self.risk_high is not None:  # only estimates have them (issue 47)
            data["risk_low"], data["risk_high"] = self.risk_low, self.risk_high
        if self.validity is not None:
            data["validity"] = _json(self.validity)
        return data
