"""Issue 38's checks of a second-order vulnerable example: margin, fluency floor, fragments,
part of speech in context (textrobust.analyses.second_order.checks)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from textrobust.analyses.second_order import Neighbourhood, PatchFinder, SecondOrderAttack, SOEnum
from textrobust.analyses.second_order.analysis import SecondOrderSettings, build_checks
from textrobust.analyses.second_order.checks import (
    FragmentFilter,
    SecondOrderChecks,
    boundary_distance,
    is_fragment_edit,
    touches_stop_word,
)
from textrobust.attack.candidates.tagging import PosTag
from textrobust.attack.results import Status
from textrobust.data.examples import Example
from textrobust.errors import ConfigError
from textrobust.text import Text
from textrobust.victims.query import QueryLayer
from textrobust.attack.searches.search_testing import DictSource
from tests.test_second_order import PLANTED_FILL, START, TableFillIn, linear_victim

STOPS = frozenset({"a", "the", "of", "to", "one"})


def attack_with(checks: SecondOrderChecks | None) -> SecondOrderAttack:
    layer = QueryLayer(linear_victim())
    hood = Neighbourhood(TableFillIn(PLANTED_FILL))
    finder = PatchFinder(layer, DictSource({"film": ["movie"]}))
    return SecondOrderAttack(layer, hood, SOEnum(), patches=finder, name="so-enum", checks=checks)


def test_boundary_distance_is_half_the_top_two_gap() -> None:
    assert boundary_distance(np.array([[0.3, 0.7], [0.5, 0.5]])).round(3).tolist() == [0.2, 0.0]
    assert boundary_distance(np.array([0.6, 0.3, 0.1])).round(3).tolist() == [0.15]


def test_margin_zero_is_the_paper_and_a_margin_rejects_the_near_tie() -> None:
    # "one decent film": P(pos) 0.574 -> 0.475 after film -> movie, 0.025 from the boundary
    plain = attack_with(None).attack(Example("e", START, 1))
    zero = attack_with(SecondOrderChecks(margin=0.0)).attack(Example("e", START, 1))
    assert plain.status is Status.SUCCEEDED and str(plain.vulnerable) == "one decent film"
    assert zero.status is Status.SUCCEEDED and zero.vulnerable == plain.vulnerable
    strict = attack_with(SecondOrderChecks(margin=0.05)).attack(Example("e", START, 1))
    assert strict.status is Status.FAILED
    assert strict.extras["rejected_margin"] >= 1
    assert strict.extras["first_flip_distance"] == pytest.approx(0.0249, abs=1e-3)


def test_fluency_floor_is_relative_to_x0() -> None:
    asked: list[str] = []

    def perplexity(texts: Sequence[str]) -> np.ndarray:
        asked.extend(texts)
        return np.array([50.0 if t.startswith("one") else 20.0 for t in texts])

    result = attack_with(SecondOrderChecks(fluency=2.0, perplexity=perplexity)).attack(Example("e", START, 1))
    assert result.status is Status.FAILED and result.extras["rejected_fluency"] >= 1
    # only would-be successes and x0 are scored, not every neighbour
    assert set(asked) <= {"a good film", "one decent film"}
    loose = attack_with(SecondOrderChecks(fluency=3.0, perplexity=perplexity)).attack(Example("e", START, 1))
    assert loose.status is Status.SUCCEEDED


def test_fragment_edits() -> None:
    assert is_fragment_edit(["a", "cinema", "master", "class"], 3, "a", STOPS)
    assert is_fragment_edit(["thanks", "largely", "to", "williams"], 1, "to", STOPS)
    assert is_fragment_edit(["a", "fine", "film"], 1, "--", STOPS)
    assert not is_fragment_edit(["a", "fine", "film"], 0, "the", STOPS)  # stop word for stop word
    assert not is_fragment_edit(["a", "fine", "film"], 1, "good", STOPS)


def test_fragment_filter_drops_them_from_the_neighbourhood() -> None:
    hood = Neighbourhood(TableFillIn({0: [("one", 5.0)], 1: [("of", 5.0), ("great", 4.0)], 2: [("film", 5.0)]}))
    source = FragmentFilter(hood.source(), STOPS)
    found = source.candidates(Text.from_string("a good film"), [0, 1])
    assert [s.word for s in found[1]] == ["great"] and [s.word for s in found[0]] == ["one"]
    assert source.dropped == 1 and callable(source.prefetch)
    # the attack with the filter: "one" for "a" is stop for stop, allowed; the planted answer stays
    checks = SecondOrderChecks(no_fragments=True, stop_words=STOPS)
    assert attack_with(checks).attack(Example("e", START, 1)).status is Status.SUCCEEDED


def test_content_only_rejects_edits_of_stop_words_and_keeps_content_for_content() -> None:
    # a reader's "broken" neighbour of the dev half: "before a single frame" -> "in a single frame"
    stops = STOPS | {"before", "in", "very"}
    assert touches_stop_word(["before", "a", "single", "frame"], 0, "in", stops)
    assert touches_stop_word(["a", "fine", "film"], 1, "very", stops)  # content -> stop word
    assert touches_stop_word(["a", "fine", "film"], 1, "--", stops)
    assert not touches_stop_word(["a", "fine", "film"], 1, "good", stops)
    hood = Neighbourhood(TableFillIn({0: [("one", 5.0)], 1: [("of", 5.0), ("great", 4.0)], 2: [("film", 5.0)]}))
    source = FragmentFilter(hood.source(), STOPS, content_only=True)
    found = source.candidates(Text.from_string("a good film"), [0, 1])
    assert found[0] == [] and [s.word for s in found[1]] == ["great"] and source.dropped == 2
    # the planted answer changes "a" into "one" (stop word for stop word): no longer a finding
    plain = attack_with(SecondOrderChecks(no_fragments=True, stop_words=STOPS)).attack(Example("e", START, 1))
    strict = attack_with(SecondOrderChecks(content_only=True, stop_words=STOPS)).attack(Example("e", START, 1))
    assert plain.status is Status.SUCCEEDED and "one" in str(plain.vulnerable).split()
    assert strict.status is Status.FAILED and strict.extras["fragments_dropped"] >= 1
    assert SecondOrderChecks(content_only=True).active


def test_pos_in_context_rejects_a_changed_part_of_speech() -> None:
    def tagger(text: Text) -> list[PosTag]:
        return [PosTag("NN", "NUM") if w == "one" else PosTag("DT", "DET") if w in ("a", "the") else PosTag("JJ", "ADJ")
                for w in text.words]

    result = attack_with(SecondOrderChecks(pos_in_context=True, tagger=tagger)).attack(Example("e", START, 1))
    assert result.status is Status.FAILED and result.extras["rejected_pos"] >= 1

    def same(text: Text) -> list[PosTag]:
        return [PosTag("X", "X") for _ in text.words]

    assert attack_with(SecondOrderChecks(pos_in_context=True, tagger=same)).attack(
        Example("e", START, 1)).status is Status.SUCCEEDED


def test_settings_build_checks_and_validate() -> None:
    checks = build_checks(SecondOrderSettings(margin=0.1, fluency=1.5, sentences=True, pos_check=True))
    assert checks.describe() == {"margin": 0.1, "fluency": 1.5, "no_fragments": True, "content_only": True,
                                 "pos_in_context": True, "fluent_first": True}
    assert not build_checks(SecondOrderSettings(margin=0.0, fluency=0.0, sentences=False,
                                                pos_check=False, content=False, pick="clearest")).active
    assert build_checks(SecondOrderSettings(fluency=0.5)).fluency == 0.5  # below 1: more fluent than x0
    with pytest.raises(ConfigError, match="margin"):
        SecondOrderChecks(margin=0.6)
    with pytest.raises(ConfigError, match="'fluency' parameter of SecondOrderChecks must be > 0"):
        SecondOrderChecks(fluency=0.0)


def test_the_shipped_default_is_neighbor_1_more_fluent_than_x0_the_most_fluent_first() -> None:
    """Issue 48's default, chosen on the dev half: one changed word, perplexity at most 0.9 x x0's."""
    from textrobust.analyses.second_order.analysis import second_order_search

    settings = SecondOrderSettings()
    assert (settings.max_k, settings.fluency, settings.pick, settings.content) == (None, 0.9, "fluent", True)
    assert repr(second_order_search(settings, 0)) == "BeamSearch(beam_width=20, max_depth=1)"
    assert repr(second_order_search(SecondOrderSettings(max_k=3), 0)) == "BeamSearch(beam_width=20, max_depth=3)"


#: A world with two vulnerable neighbours one word from x0 (score in [0, 0.4): the patch flips
#: it): "a meh film" (0.3) and "a okay film" (0.25, the clearer flip: nearer 0.2, the middle).
TWO_FLIPS = {0: [("a", 5.0)], 1: [("good", 5.0), ("meh", 4.5), ("okay", 4.4)], 2: [("film", 5.0)]}


def two_flip_attack(checks: SecondOrderChecks | None) -> SecondOrderAttack:
    from textrobust.analyses.second_order import so_beam
    from tests.test_second_order import WEIGHTS

    layer = QueryLayer(linear_victim({**WEIGHTS, "meh": 0.1, "okay": 0.05}))
    finder = PatchFinder(layer, DictSource({"film": ["movie"]}))
    return SecondOrderAttack(layer, Neighbourhood(TableFillIn(TWO_FLIPS)), so_beam(max_k=1), patches=finder,
                             checks=checks)


def test_fluent_first_reports_the_most_fluent_of_a_steps_flips() -> None:
    def perplexity(texts: Sequence[str]) -> np.ndarray:  # "meh" reads more fluent than "okay" here
        return np.array([{"a good film": 20.0, "a meh film": 15.0, "a okay film": 18.0}[t] for t in texts])

    clearest = two_flip_attack(SecondOrderChecks(fluency=1.0, perplexity=perplexity)).attack(Example("e", START, 1))
    fluent = two_flip_attack(SecondOrderChecks(fluency=1.0, fluent_first=True, perplexity=perplexity)).attack(
        Example("e", START, 1))
    assert str(clearest.vulnerable) == "a okay film"  # the paper's choice: the smallest Eq. 4 loss
    assert str(fluent.vulnerable) == "a meh film" and fluent.status is Status.SUCCEEDED
    # the checks keep every flip they accepted, with its perplexity ratio to x0
    assert sorted((text, round(ratio, 2)) for text, ratio, _ in fluent.extras["accepted"]) == [
        ("a meh film", 0.75), ("a okay film", 0.9)]


def test_a_floor_below_one_asks_for_a_neighbour_more_fluent_than_x0() -> None:
    def perplexity(texts: Sequence[str]) -> np.ndarray:
        return np.array([{"a good film": 20.0, "a meh film": 19.0, "a okay film": 18.0}[t] for t in texts])

    kept = two_flip_attack(SecondOrderChecks(fluency=0.9, fluent_first=True, perplexity=perplexity)).attack(
        Example("e", START, 1))
    assert str(kept.vulnerable) == "a okay film"  # 18 / 20 = 0.9 passes, 19 / 20 does not
    assert kept.extras["rejected_fluency"] == 1
    strict = two_flip_attack(SecondOrderChecks(fluency=0.85, fluent_first=True, perplexity=perplexity)).attack(
        Example("e", START, 1))
    assert strict.status is Status.FAILED and strict.extras["accepted"] == []


def test_margin_figures_and_the_section_show_margin_zero_the_near_ties_and_three_findings() -> None:
    from textrobust.analyses.second_order.analysis import (
        SecondOrderSummary,
        margin_figures,
        second_order_section,
    )

    strict = attack_with(SecondOrderChecks(margin=0.05)).attack(Example("e", START, 1))
    plain = attack_with(None).attack(Example("e", START, 1))
    # the strict run saw a flip at margin 0 (0.025 from the boundary): a near tie
    assert margin_figures([strict], 0.05) == (1.0, 1.0)
    assert margin_figures([plain], 0.0) == (1.0, 1.0)  # below NEAR_TIE = 0.05
    assert np.isnan(margin_figures([], 0.0)[0])
    summary = SecondOrderSummary(units=1, ok=1, errors=0, budget_exhausted=0, examples=1, succeeded=1, failed=0,
                                 skipped=0, success_rate=1.0, vulnerable_at_start=0, l0=2.0, words_perturbed=2.0,
                                 queries_per_example=10.0, fill_requests_per_example=3.0,
                                 median_perplexity_before=float("nan"), median_perplexity_after=float("nan"),
                                 seconds_per_example=0.1, margin=0.0, success_rate_margin0=1.0, near_tie_share=1.0)
    section = second_order_section(summary, [plain], ("negative", "positive"), "so-enum")
    names = [h.label for h in section.headline]
    assert "success rate at margin 0" in names and "near-tie share" in names
    findings = next(t for t in section.tables if t.title == "findings to read")
    assert [list(r) for r in findings.rows] == [["a good film", "one decent film", "film -> movie",
                                                "P(positive) 0.57 -> 0.48", "n/a"]]  # no perplexity kept


def test_the_section_shows_the_best_evidence_first_each_with_its_naturalness_score() -> None:
    """Issue 48 item 4: x0 itself first, then the most fluent neighbours (perplexity over
    x0's, the naturalness check's score), the clearer flip first among equals."""
    from dataclasses import replace

    from textrobust.analyses.second_order.analysis import SecondOrderSummary, evidence_order, second_order_section

    plain = attack_with(None).attack(Example("e", START, 1))  # "one decent film", 0.025 from the boundary
    worse = replace(plain, example_id="worse", extras={"perplexity_before": 20.0, "perplexity_after": 18.0})
    better = replace(plain, example_id="better", extras={"accepted": [["one decent film", 0.6, 0.025]]})
    clear = replace(better, example_id="clear", vulnerable_probabilities=(0.2, 0.8),
                    vulnerable_patched_probabilities=(0.7, 0.3))
    itself = replace(plain, example_id="itself", vulnerable=plain.original)
    unknown = replace(plain, example_id="unknown")
    ordered = sorted([unknown, worse, better, itself, clear], key=evidence_order)
    assert [r.example_id for r in ordered] == ["itself", "clear", "better", "worse", "unknown"]
    summary = SecondOrderSummary(units=5, ok=5, errors=0, budget_exhausted=0, examples=5, succeeded=5, failed=0,
                                 skipped=0, success_rate=1.0, vulnerable_at_start=1, l0=1.6, words_perturbed=1.6,
                                 queries_per_example=10.0, fill_requests_per_example=3.0,
                                 median_perplexity_before=float("nan"), median_perplexity_after=float("nan"),
                                 seconds_per_example=0.1)
    section = second_order_section(summary, [unknown, worse, better, itself, clear], ("negative", "positive"),
                                   "so-beam")
    assert [e.id for e in section.examples] == ["itself", "clear", "better", "worse", "unknown"]
    notes = [" ".join(str(e.note).split()) for e in section.examples]
    assert "naturalness check: perplexity 1.00 x x0's" in notes[0]
    assert "naturalness check: perplexity 0.60 x x0's; flip 0.20 from the decision boundary" in notes[1]
    assert "perplexity 0.90 x x0's" in notes[3] and "perplexity n/a" in notes[4]
    findings = next(t for t in section.tables if t.title == "findings to read")
    assert [r[1] for r in findings.rows] == ["(x0 itself)", "one decent film", "one decent film"]
    assert [r[-1] for r in findings.rows] == ["1.00", "0.60", "0.60"]
