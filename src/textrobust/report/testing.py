"""Test helpers for report sections (used by the tests of every analysis)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from textrobust.report.schema import SCHEMA_VERSION, validate_report

__all__ = ["validate_section"]


def validate_section(analysis: Any, section: Mapping[str, Any], *, units: int,
                     label_names: Sequence[str] = ("neg", "pos")) -> dict[str, Any]:
    """Validate ``section`` (from ``analysis.section``) inside a minimal, complete report
    against the strict schema; returns the report. Raises as ``validate_report`` does."""
    entry = {"name": analysis.name, "title": analysis.title, "paper": analysis.paper,
             "settings": analysis.settings.to_dict(),
             "counts": {"units": units, "ok": units, "errors": 0, "budget_exhausted": 0},
             "errors": [], **section}
    report = {"schema": SCHEMA_VERSION, "textrobust_version": "0", "created_at": "2026-01-01T00:00:00+00:00",
              "title": "t", "victim": {"name": "v", "path": "p"},
              "data": {"name": "d", "split": "test", "examples": units, "label_names": list(label_names)},
              "verdict": {"level": "unknown", "headline": "h", "points": []},
              "run": {"seconds": 1.0, "queries": 1, "executor": "local", "workers": 1, "store": "s",
                      "resumed": False, "seed": 0},
              "analyses": [entry]}
    validate_report(report)
    return report
