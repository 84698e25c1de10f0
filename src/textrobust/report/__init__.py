"""The HTML/JSON report of an audit (schema ``textrobust.report/1``).

``write_report(report, out_dir)`` validates a report dict and writes ``report.html`` (one
self-contained page: inline CSS, no script, no external address) and ``report.json``;
``load_report`` reads the JSON back. The analyses draw their figures with
:mod:`textrobust.analyses.figures` (SVG text in their sections' ``figures``); this package
only renders. See :mod:`textrobust.report.schema` for the keys.

Importing this package loads neither Jinja2 nor matplotlib; they load on first use.
"""

from __future__ import annotations

from textrobust.report.html import render_html, write_report
from textrobust.report.schema import SCHEMA_VERSION, ReportError, load_report, validate_report

__all__ = [
    "SCHEMA_VERSION",
    "ReportError",
    "load_report",
    "render_html",
    "validate_report",
    "write_report",
]
