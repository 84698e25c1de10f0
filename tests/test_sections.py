"""The typed section contract (textrobust.sections, issue 29 item 4): what an analysis hands
the report, checked where it is built, and stored as exactly the JSON the report held before."""

from __future__ import annotations

import json
import math
from dataclasses import FrozenInstanceError

import numpy as np
import pytest

from textrobust.analyses.sections import example_row, figure, headline, table, with_substitutes
from textrobust.errors import ReportError
from textrobust.report.schema import validate_report
from textrobust.sections import ExampleRow, Figure, Headline, Section, Table
from textrobust.text import Text

SVG = '<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"/>\n'

#: A section's JSON as the analyses produced it by hand (dicts) before the typed contract.
STORED = {
    "headline": [{"label": "clean accuracy", "value": 0.75, "format": "%", "note": "share right"},
                 {"label": "examples", "value": None, "format": "int", "note": None}],
    "tables": [{"title": "outcomes", "columns": ["metric", "value"], "rows": [["succeeded", 3], ["rate", None]]},
               {"title": "noted", "columns": ["a"], "rows": [[True]], "note": "what a means"}],
    "figures": [{"title": "chart", "svg": SVG, "caption": ""}],
    "examples": [{"id": "e1", "status": "succeeded", "label": "pos", "prediction_before": "pos",
                  "prediction_after": "neg", "original": ["a", " ", "good", " ", "film"],
                  "perturbed": ["a", " ", "fine", " ", "film"], "changed": [2], "note": "1 word"}],
    "risk": 0.5, "point": "half flip.",
}


def _section() -> Section:
    return Section(
        headline=[headline("clean accuracy", np.float64(0.75), "%", "share right"),
                  headline("examples", float("nan"), "int")],
        tables=[table("outcomes", ["metric", "value"], [["succeeded", np.int64(3)], ["rate", math.inf]]),
                table("noted", ("a",), [(True,)], "what a means")],
        figures=[figure("chart", SVG)],
        examples=[example_row("e1", "succeeded", ("neg", "pos"), 1, Text.from_string("a good film"),
                              Text.from_string("a fine film"), 1, 0, "1 word")],
        risk=np.float32(0.5), point="half flip.")


def test_a_section_gives_exactly_the_json_the_report_stored_before() -> None:
    data = _section().to_dict()
    assert json.dumps(data) == json.dumps(STORED)  # same keys, same order, plain numbers
    assert type(data["tables"][0]["rows"][0][1]) is int and type(data["risk"]) is float


def test_the_section_validates_inside_a_report() -> None:
    from textrobust.report.testing import validate_section

    class Named:
        name, title, paper = "demo", "Demo", "none"

        class settings:  # noqa: N801 - stands in for a Settings instance
            @staticmethod
            def to_dict() -> dict[str, object]:
                return {}

    report = validate_section(Named, _section(), units=1)
    validate_report(json.loads(json.dumps(report)))  # and once more as read from report.json


def test_parts_are_frozen_and_hold_tuples() -> None:
    section = _section()
    assert isinstance(section.headline, tuple) and isinstance(section.tables[0].rows[0], tuple)
    with pytest.raises(FrozenInstanceError):
        section.risk = 0.1  # type: ignore[misc]


def test_an_empty_note_is_left_out_of_a_table_and_nan_headline_values_are_na() -> None:
    assert "note" not in Table("t", ["a"], [[1]], "").to_dict()
    assert Headline("x", math.nan).value is None and Headline("x", np.int64(4), "int").value == 4


@pytest.mark.parametrize(("build", "message"), [
    (lambda: Headline("x", 1.0, "percent"),  # type: ignore[arg-type]
     r"'headline.format' must be one of '%', 'int', 'float', 'text'"),
    (lambda: Headline("x", [1.0]), r"'headline.value' must be a string or number or null"),  # type: ignore[arg-type]
    (lambda: Table("t", ["a", "b"], [[1]]), r"'table.rows\[0\]' has 1 cells but the table has 2 columns"),
    (lambda: Table("t", "ab", [["x", "y"]]), r"'table.columns' must be a list"),
    (lambda: Table("t", ["a"], [[{"k": 1}]]), r"'table.rows\[0\]\[0\]' must be a string, number or boolean"),
    (lambda: Figure("f", "<png/>"), r"'figure.svg' must be a complete SVG document"),
    (lambda: ExampleRow("e", "s", "pos", ["a"], ["b"], [3]), r"'example.changed\[0\]' is 3, past the last token"),
    (lambda: Section(headline=[{"label": "x"}]),  # type: ignore[list-item]
     r"'section.headline\[0\]' must be a Headline"),
    (lambda: Section(risk="high"), r"'section.risk' must be a number or null"),  # type: ignore[arg-type]
])
def test_a_bad_part_fails_where_it_is_built_naming_the_key(build: object, message: str) -> None:
    with pytest.raises(ReportError, match=message):
        build()  # type: ignore[operator]


def test_with_substitutes_adds_the_candidates_headline_last() -> None:
    section = with_substitutes(_section(), "validated", "WordNet")
    assert [h.label for h in section.headline][:2] == ["clean accuracy", "examples"]
    assert section.headline[-1].value == "validated"
    assert section.point is not None and section.point.startswith("half flip (substitutes: validated substitutes; ")
