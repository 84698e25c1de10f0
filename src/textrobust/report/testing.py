"""Test helpers for report sections (used by the tests of every analysis)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from textrobust.report.schema import SCHEMA_VERSION, validate_report
from textrobust.sections import Section

__all__ = ["validate_section"]


def validate_section(analysis: Any, section: Section | Mapping[str, Any], *, units: int,
                     label_names: Sequence[str] = ("neg", "pos")) -> dict[str, Any]:
    """Validate ``section`` (from ``analysis.section``, or its JSON form) inside a minimal,
    complete report against the strict schema; returns the report. Raises as
    ``validate_report`` does."""
    data = section.to_dict() if isinstance(section, Section) else section
    entry = {"name": analysis.name, "title": analysis.title, "paper": analysis.paper,
             "settings": analysis.settings.to_dict(),
             "counts": {"units": units, "ok": units, "errors": 0, "budget_exhausted": 0},
             "errors": [], **data}
    report = {"schema": SCHEMA_VERSION, "textrobust_version": "0", "created_at": "2026-01-01T00:00:00+00:00",
              "title": "t", "victim": {"name": "v", "path": "p"},
              "data": {"name": "d", "split": "test", "examples": units, "label_names": list(label_names)},
              "verdict": {"level": "unknown", "headline": "h", "points": []},
              "run": {"seconds": 1.0, "queries": 1, "executor": "local", "workers": 1, "store": "s",
                      "resumed": False, "seed": 0},
              "analyses": [entry]}
    validate_report(report)
    return report
