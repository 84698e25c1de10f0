"""The figures people measured on SO-Beam's findings (issue 38) stay pinned: the evidence the
verdict reads (textrobust.analyses.second_order.evidence) is the labelled set's Table 4 on the
test half, and (heavy) the search still finds the findings that were read."""

from __future__ import annotations

import pytest

from textrobust.analyses.second_order.evidence import MEASURED, TARGET_DROP, TARGET_KEEPS
from textrobust.validity.second_order import load_labelled, table4


def test_the_recorded_evidence_is_the_labelled_sets_test_half() -> None:
    found = load_labelled()
    assert MEASURED, "no measured evidence recorded"
    for evidence in MEASURED:
        rows = [f for f in found if f.half == "test" and f.settings == evidence.name]
        t = table4(rows)
        assert t.findings == evidence.findings, evidence.name
        assert t.naturalness_drop == pytest.approx(evidence.naturalness_drop, abs=0.005), evidence.name
        assert t.keeps_neighbour == pytest.approx(evidence.patch_keeps, abs=0.005), evidence.name
        assert evidence.meets_targets == (t.naturalness_drop <= TARGET_DROP and t.keeps_neighbour >= TARGET_KEEPS)


@pytest.mark.heavy
@pytest.mark.xfail(strict=True, reason="issue 39 changed the validated source (its judge and operating point, "
                   "commits fdd9f06-6f473b2, 02:15-02:29 UTC on 2026-11-28) after the labelled findings were "
                   "generated: SO-Beam now picks other patch pairs (rt-12325: film -> movie, read: little -> small). "
                   "Regenerate the findings with today's source and have them read again, then drop this mark.")
def test_the_default_search_still_finds_what_people_read() -> None:
    """Rerun SO-Beam on two labelled one-word findings of the CNN (the shipped default's when
    they have been read, else the paper's count, phase 1): the same neighbour and patch come
    back, so the people's figures still describe what the search reports."""
    from textrobust.analyses.second_order import Neighbourhood, PatchFinder, SecondOrderAttack
    from textrobust.analyses.second_order.analysis import (
        SecondOrderSettings,
        build_checks,
        patch_synonyms,
        second_order_search,
    )
    from textrobust.assets import cache_dir
    from textrobust.attack.results import Status
    from textrobust.data.examples import Example
    from textrobust.fill_in.neighbourhood import load_fill_in
    from textrobust.text import Text
    from textrobust.victims.query import QueryLayer
    from textrobust.zoo.io import load_victim

    found = [f for f in load_labelled() if f.reader == 1 and f.victim == "cnn" and f.corpus == "rotten_tomatoes"
             and f.l0 == 1]
    # the shipped default's findings when people have read them, else the paper's count
    settings = SecondOrderSettings()
    rows = [f for f in found if f.settings == "tuned"][:2]
    if not rows:
        settings = SecondOrderSettings(max_k=6, margin=0.0, fluency=0.0, sentences=False, pos_check=False)
        rows = [f for f in found if f.settings == "baseline"][:2]
    assert rows
    layer = QueryLayer(load_victim(cache_dir() / "victims" / "default"))
    attack = SecondOrderAttack(layer, Neighbourhood(load_fill_in(settings.fill_in), kappa=settings.kappa,
                                                    delta=settings.delta),
                               second_order_search(settings, 0),
                               patches=PatchFinder(layer, patch_synonyms(settings.candidates)),
                               budget=settings.budget, checks=build_checks(settings))
    for row in rows:
        result = attack.attack(Example(row.example_id, Text.from_string(row.x0), 0))
        assert result.status is Status.SUCCEEDED
        assert result.patch is not None and (result.patch.source, result.patch.target) == (row.patch_source,
                                                                                           row.patch_target)
        assert str(result.vulnerable) == row.neighbour
