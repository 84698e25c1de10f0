"""The audit orchestrator: any set of analyses over one victim and data set, on an
executor, into one run store, with one report.

>>> from textrobust import audit
>>> result = audit.run("default", "rotten_tomatoes", ["evaluate", "attack"], "runs/audit")  # doctest: +SKIP
>>> result.report_html                                                                       # doctest: +SKIP
PosixPath('runs/audit/report.html')
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["AnalysisResult", "AuditResult", "DEFAULT_ANALYSES", "rebuild_report", "run"]

_LAZY = {
    "AnalysisResult": "textrobust.audit.orchestrator",
    "AuditResult": "textrobust.audit.orchestrator",
    "DEFAULT_ANALYSES": "textrobust.audit.orchestrator",
    "rebuild_report": "textrobust.audit.orchestrator",
    "run": "textrobust.audit.orchestrator",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'textrobust.audit' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
