"""Helpers shared by the CLI tests (imported by name: pytest puts tests/ on sys.path)."""

from __future__ import annotations

from typing import Any

import pytest

from textrobust import audit
from textrobust.audit.testing import keyword_scores
from textrobust.victims.function import FunctionVictim


def use_toy_victim(monkeypatch: pytest.MonkeyPatch, victim: Any | None = None) -> None:
    """Make ``audit.run`` (what every analysis command calls) use ``victim``, by default a
    keyword classifier over negative/positive, whatever --victim the command names."""
    real = audit.run
    toy = victim if victim is not None else FunctionVictim(keyword_scores, ("negative", "positive"))

    def run(_victim: Any, *args: Any, **kwargs: Any) -> Any:
        return real(toy, *args, **kwargs)

    monkeypatch.setattr(audit, "run", run)


#: Six short reviews, three per class, that the keyword victim mostly gets right.
ROWS = [
    ("a good film with a fine cast", "positive"),
    ("a great story told with care", "positive"),
    ("dull and slow from start to end", "negative"),
    ("the plot is thin and the jokes fall flat", "negative"),
    ("good acting cannot save a weak script", "negative"),
    ("one great scene in a long film", "positive"),
]


def reviews_csv(tmp_path: Any) -> Any:
    """``tmp_path/reviews.csv`` with :data:`ROWS` under the columns text,label."""
    path = tmp_path / "reviews.csv"
    path.write_text("text,label\n" + "".join(f'"{text}",{label}\n' for text, label in ROWS), encoding="utf-8")
    return path
