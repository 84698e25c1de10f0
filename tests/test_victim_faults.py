"""Victim faults become per-example error records; the run goes on and loses nothing."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from textrobust import audit
from textrobust.data.examples import Dataset, Example
from textrobust.errors import TextRobustError
from textrobust.text import Text
from textrobust.victims.function import FunctionVictim

FAULTS = ("raise", "nan", "inf", "shape", "sum")


def _faulty(texts: list[str]) -> Any:
    rows: list[list[float]] = []
    for text in texts:
        if "raise" in text:
            raise RuntimeError("the model crashed on this text")
        if "nan" in text:
            rows.append([math.nan, 1.0])
        elif "inf" in text:
            rows.append([math.inf, 0.0])
        elif "sum" in text:
            rows.append([0.7, 0.7])
        else:
            rows.append([0.3, 0.7])
    if any("shape" in t for t in texts):
        return [[0.5, 0.25, 0.25] for _ in texts]
    return rows


def _data() -> Dataset:
    words = ["fine", "raise", "fine", "nan", "inf", "fine", "shape", "sum", "fine"]
    examples = tuple(Example(f"e{i}", Text.from_string(f"a {w} film"), 1) for i, w in enumerate(words))
    return Dataset("faults", examples, ("negative", "positive"), split="test")


def test_every_fault_is_an_error_record_and_every_good_example_is_analysed(tmp_path: Path) -> None:
    victim = FunctionVictim(_faulty, ("negative", "positive"))
    result = audit.run(victim, _data(), {"evaluate": {"batch_size": 1}}, tmp_path, progress=False)
    summary = result["evaluate"].summary
    assert summary.units == 9 and summary.errors == 5 and summary.examples == 4
    assert summary.accuracy == 1.0
    messages = " ".join(f.message for f in result["evaluate"].failures)
    assert "crashed" in messages and "non-finite" in messages and "shape" in messages
    assert "probability distributions" in messages
    again = audit.run(victim, _data(), {"evaluate": {"batch_size": 1}}, tmp_path, resume=True, progress=False)
    assert again["evaluate"].computed == 0 and again["evaluate"].summary == summary


def test_a_victim_failing_on_every_call_stops_after_n_failures(tmp_path: Path) -> None:
    def down(texts: list[str]) -> Any:
        raise ConnectionError("model server unreachable")

    examples = tuple(Example(f"e{i}", Text.from_string(f"film {i}"), 0) for i in range(50))
    data = Dataset("d", examples, ("negative", "positive"), split="test")
    with pytest.raises(TextRobustError, match="10 units in a row failed.*unreachable.*--resume"):
        audit.run(FunctionVictim(down, ("negative", "positive")), data, {"evaluate": {"batch_size": 1}}, tmp_path,
                  progress=False, max_consecutive_failures=10)


def _slow_keyword(texts: list[str]) -> list[list[float]]:
    import time

    from textrobust.audit.testing import keyword_scores

    if any("slow" in t for t in texts):
        time.sleep(0.2)  # some texts take far longer than the rest
    return keyword_scores(texts)


def test_a_slow_victim_loses_nothing_when_answers_arrive_out_of_order(tmp_path: Path) -> None:
    from textrobust.audit.testing import keyword_victim

    words = ["good", "slow good", "bad", "slow bad", "great", "dull", "slow great", "fine"]
    examples = tuple(Example(f"e{i}", Text.from_string(f"a {w} film"), i % 2) for i, w in enumerate(words))
    data = Dataset("slow", examples, ("negative", "positive"), split="test")
    slow = FunctionVictim(_slow_keyword, ("negative", "positive"))
    analyses = {"evaluate": {"batch_size": 1}}
    fast = audit.run(keyword_victim(), data, analyses, tmp_path / "fast", progress=False)
    # Two worker processes: the slow examples finish after later ones.
    late = audit.run(slow, data, analyses, tmp_path / "slow", executor="process", workers=2, progress=False)
    assert late["evaluate"].summary == fast["evaluate"].summary
    assert late["evaluate"].summary.units == len(words) and late["evaluate"].summary.errors == 0
    assert [r.example_id for r in late["evaluate"].records] == [r.example_id for r in fast["evaluate"].records]
