"""Second-order sets the verdict's level only when people believed its findings (issue 38,
item 4): textrobust.audit.verdict with textrobust.analyses.second_order.evidence."""

from __future__ import annotations

import pytest

from textrobust.analyses.second_order import evidence
from textrobust.analyses.second_order.evidence import ReaderEvidence, gate, reader_evidence
from textrobust.audit.verdict import verdict

CHECKS = {"margin": 0.1, "fluency": 1.5, "sentences": True, "pos_check": True, "max_k": 3}
ATTACK = {"name": "attack", "risk": 0.105, "point": "attack point", "settings": {"candidates": "validated"}}


def second(**settings: object) -> dict[str, object]:
    return {"name": "second-order", "risk": 0.9, "point": "second point",
            "settings": {"candidates": "validated", "method": "so-beam", **settings}}


@pytest.fixture
def measured(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two measured groups of checks: one below the bar (the paper's settings), one above."""
    monkeypatch.setattr(evidence, "MEASURED", (
        ReaderEvidence("paper", (6, 0.0, None, False, False, False), 0.61, 0.64, 120, "test half"),
        ReaderEvidence("tuned", (3, 0.1, 1.5, True, True, False), 0.2, 0.9, 110, "test half"),
    ))


def test_a_stub_section_that_fails_the_naturalness_floor_does_not_set_the_level(measured: None) -> None:
    found = verdict([ATTACK, second(margin=0.0, fluency=0.0, sentences=False, pos_check=False, max_k=6)])
    assert found["level"] == "good"  # from the attack's 10.5%, not second-order's 90%
    assert "near its test data" not in found["headline"]
    why = [p for p in found["points"] if p.startswith("Second-order does not set the level")]
    assert len(why) == 1 and "0.61" in why[0] and "64%" in why[0] and "at most 0.25" in why[0]
    assert "second point" in found["points"]  # its own point stays


def test_a_section_whose_settings_met_the_targets_sets_the_level(measured: None) -> None:
    found = verdict([ATTACK, second(**CHECKS)])
    assert found["level"] == "poor" and "near its test data" in found["headline"]
    assert not any(p.startswith("Second-order does not set") for p in found["points"])


def test_settings_never_read_do_not_set_the_level(measured: None) -> None:
    found = verdict([ATTACK, second(**{**CHECKS, "margin": 0.2})])
    assert verdict([ATTACK, second(**{**CHECKS, "max_k": 6})])["level"] == "good"  # k = 6 was not read
    assert found["level"] == "good"
    assert any("never checked by readers" in p for p in found["points"])
    assert reader_evidence({**CHECKS, "method": "so-enum"}) is None
    assert reader_evidence({**CHECKS, "content": True}) is None  # content words only: other findings
    assert reader_evidence({**CHECKS, "candidates": "paper"}) is None
    alone = verdict([second(max_k=6)])
    assert alone["level"] == "unknown" and "second-order did not meet the bar" in alone["headline"]


def test_gate_reads_the_recorded_figures(measured: None) -> None:
    allowed, why = gate(CHECKS)
    assert allowed and "0.20" in why and "90%" in why
    assert verdict([second(**CHECKS)], gates={})["level"] == "poor"  # no gates: the old rule
