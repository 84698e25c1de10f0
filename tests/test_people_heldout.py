"""The source learned from people keeps its measured figures on SWORDS dev's held-out part
(issue 46): the figures the report quotes (textrobust.validity.people_judge.MEASURED) are
rerun here on the 120 held-out targets (people's judgements, never tuned on)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

SWORDS = Path(__file__).resolve().parents[2] / "shared" / "data" / "swords" / "swords-v1.1_dev.json.gz"

pytestmark = [pytest.mark.heavy, pytest.mark.slow,
              pytest.mark.skipif(not SWORDS.exists() or bool(os.environ.get("TEXTROBUST_NO_SHARED")),
                                 reason="the shared SWORDS data is not beside this checkout")]


def test_the_held_out_figures_are_the_measured_ones() -> None:
    from textrobust.attack.candidates.people import PeopleSubstitutes
    from textrobust.errors import DataError
    from textrobust.validity.people_judge import MEASURED
    from textrobust.validity.swords import HELD_OUT, load_swords, score, swords_part

    targets = [t for t in load_swords(SWORDS) if swords_part(t.context_id) == HELD_OUT]
    assert len(targets) == MEASURED["targets"]
    source = PeopleSubstitutes(verdict_cache=False)
    proposals = {}
    for target in targets:
        try:
            text, position = target.in_sentence()
        except DataError:
            continue
        proposals[target.id] = [s.word for s in source.candidates(text, [position])[position]]
    found = score(targets, proposals)
    assert found.lenient_precision == pytest.approx(MEASURED["precision"], abs=0.03)
    assert found.recall == pytest.approx(MEASURED["recall"], abs=0.02)
    assert found.first_proposal_acceptable == pytest.approx(MEASURED["first"], abs=0.04)
    assert found.per_target == pytest.approx(MEASURED["per_target"], abs=0.1)
