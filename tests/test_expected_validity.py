"""Issue 47: findings carry their probability of keeping the meaning, each figure is an
expected valid rate with a 95% interval, and the verdict follows the interval.

Stub judges only (no model): a candidate source whose "judge" reads a table, with the
identity calibration or one with spread draws.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from textrobust.attack.attack import Attack, Banned
from textrobust.attack.candidates.swap_validity import (
    FindingValidity,
    finding_validity,
    independent,
    judge_threshold,
    raw_score,
    swap_probabilities,
)
from textrobust.attack.problem import Substitution
from textrobust.attack.searches.greedy import GreedySearch
from textrobust.audit.verdict import verdict
from textrobust.data.examples import Dataset, Example
from textrobust.errors import ConfigError
from textrobust.report.reviewed import settle_first
from textrobust.text import Text
from textrobust.validity.calibration import Calibration
from textrobust.validity.estimate import Unit, estimate, settling_reviews
from textrobust.victims.function import FunctionVictim
from textrobust.victims.query import QueryLayer

LABELS = ("negative", "positive")


@dataclass(frozen=True)
class _Evidence:
    judge: float | None
    reason: str = ""


class StubJudged:
    """Candidates and a judge from tables: ``table`` word -> substitutes (best first),
    ``scores`` substitute -> the judge's raw score; ``calibration`` as given."""

    def __init__(self, table: dict[str, list[str]], scores: dict[str, float],
                 calibration: Calibration | None = None) -> None:
        self.table = table
        self.scores = scores
        self.calibration = calibration or Calibration.identity()
        self.asked: list[tuple[int, str]] = []

    def candidates(self, text: Text, positions: Any) -> dict[int, list[Substitution]]:
        return {p: [Substitution(p, s, self.scores.get(s, 0.0)) for s in self.table.get(text.words[p].lower(), [])]
                for p in positions}

    def evidence_many(self, text: Text, pairs: Any) -> list[_Evidence]:
        self.asked += list(pairs)
        return [_Evidence(self.scores.get(s.lower(), 0.0)) for _, s in pairs]


def _flipper(bad: set[str]) -> FunctionVictim:
    """Positive unless a word of ``bad`` appears."""
    return FunctionVictim(lambda texts: [[0.9, 0.1] if bad & set(t.split()) else [0.1, 0.9] for t in texts], LABELS)


# ---- the seam -------------------------------------------------------------------------------------
def test_raw_score_is_the_judge_unless_a_hard_check_failed() -> None:
    assert raw_score(_Evidence(0.7)) == 0.7
    assert raw_score(_Evidence(0.3, "judge")) == 0.3  # below the threshold: still the judge's score
    assert raw_score(_Evidence(0.9, "antonym")) == 0.0
    assert raw_score(_Evidence(None)) == 0.0


def test_a_finding_combines_its_swaps_independently_per_draw() -> None:
    draws = np.array([[0.0, 0.0], [0.5, 0.5], [1.0, 1.0]]).T  # refit b maps 0 -> 0, 1 -> b/2 (B = 3 rows)
    calibration = Calibration(np.array([0.0, 1.0]), np.array([0.0, 0.8]), np.array([[0.0, 0.6], [0.0, 0.8],
                                                                                    [0.0, 1.0]]))
    del draws
    source = StubJudged({}, {"fine": 1.0, "nice": 0.5}, calibration)
    text = Text.from_string("a good and great film")
    changed = text.replace({1: "fine", 3: "nice"})
    found = finding_validity(source, text, changed)
    assert found.probability == pytest.approx(0.8 * 0.4)
    assert found.draws == pytest.approx((0.6 * 0.3, 0.8 * 0.4, 1.0 * 0.5))
    assert [s["position"] for s in found.swaps] == [1, 3] and found.swaps[1]["raw"] == 0.5
    assert FindingValidity.from_dict(found.to_dict()) == found
    probs = swap_probabilities(source, text, [(1, "fine")])
    assert probs.point.tolist() == [0.8] and probs.draws.shape == (3, 1)
    assert independent(np.array([[0.5, 0.5], [1.0, 0.2]])).tolist() == [0.25, 0.2]


def test_min_validity_becomes_the_judge_threshold_with_that_probability() -> None:
    calibration = Calibration(np.array([0.0, 0.5, 1.0]), np.array([0.1, 0.5, 0.9]), np.array([[0.1, 0.5, 0.9]]))
    assert judge_threshold(calibration, 0.5) == pytest.approx(0.5)
    assert judge_threshold(calibration, 0.3) == pytest.approx(0.25)
    with pytest.raises(ConfigError, match="min_validity.*at most 0.900"):
        judge_threshold(calibration, 0.95)


# ---- the estimate ---------------------------------------------------------------------------------
def test_the_expected_rate_is_the_sum_of_probabilities_over_the_examples() -> None:
    units = [Unit(f"attack/{i}", str(i), p) for i, p in enumerate([1.0, 0.5, 0.25])]
    found = estimate(units, 10)
    assert found.point == pytest.approx(0.175)
    assert found.low <= found.point <= found.high
    assert estimate(units, 10) == found  # seeded
    assert estimate([], 10) == estimate([], 10) and estimate([], 10).point == 0.0
    assert math.isnan(estimate([], 0).point)


def test_the_interval_covers_the_sampling_of_examples_and_grows_with_calibration_uncertainty() -> None:
    # every finding sure: the interval is the sampling of 10 flips among 50 examples alone
    sure = [Unit(f"a/{i}", str(i), 1.0) for i in range(10)]
    alone = estimate(sure, 50)
    assert alone.point == 0.2 and 0.05 < alone.low < 0.2 < alone.high < 0.35
    # the same point with an uncertain calibration (refits between 0.2 and 1.8 times p) is wider
    spread = [Unit(f"a/{i}", str(i), 0.5, tuple(np.linspace(0.1, 0.9, 200))) for i in range(20)]
    tight = [Unit(f"a/{i}", str(i), 0.5, (0.5,) * 200) for i in range(20)]
    assert estimate(spread, 50).point == estimate(tight, 50).point == pytest.approx(0.2)
    assert estimate(spread, 50).high - estimate(spread, 50).low > estimate(tight, 50).high - estimate(tight, 50).low
    # reviewed findings are certain: confirmed count 1, rejected 0
    reviewed = [Unit(u.item, u.example, u.probability, u.draws, outcome=1.0 if i < 5 else 0.0)
                for i, u in enumerate(spread)]
    assert estimate(reviewed, 50).point == pytest.approx(0.1)


def test_a_pr_example_weighs_its_samples_by_its_misclassified_share() -> None:
    units = [Unit("pr/a/1", "a", 1.0, weight=0.5), Unit("pr/a/2", "a", 0.0, weight=0.5),
             Unit("pr/b/1", "b", 1.0, weight=0.2)]
    assert estimate(units, 4).point == pytest.approx((0.5 * 0.5 + 0.2) / 4)
    with pytest.raises(ConfigError, match="3 examples have findings"):
        estimate([Unit("x", "1", 1.0), Unit("y", "2", 1.0), Unit("z", "3", 1.0)], 2)


# ---- the search keeps looking past a probably invalid flip -----------------------------------------
def _attack(accept: float | None, budget: int | None = None) -> tuple[Attack, StubJudged]:
    source = StubJudged({"good": ["awful"], "film": ["flick"]}, {"awful": 0.1, "flick": 0.9})

    def score(texts: list[str]) -> list[list[float]]:  # "good" matters most: the search tries it first
        return [[0.9, 0.1] if {"awful", "flick"} & set(t.split()) else [0.1, 0.9] if "good" in t else [0.4, 0.6]
                for t in texts]

    layer = QueryLayer(FunctionVictim(score, LABELS))

    def validity(original: Text, changed: Text) -> FindingValidity:
        return finding_validity(source, original, changed)

    return Attack(layer, source=source, search=GreedySearch(), budget=budget,
                  validity=validity if accept is not None else None, accept_validity=accept), source


def test_a_probably_invalid_flip_does_not_end_the_search() -> None:
    example = Example("e", Text.from_string("a good film"), 1)
    first, _ = _attack(None)
    plain = first.attack(example)
    assert plain.perturbed.words[1] == "awful"  # today: the first flip, an antonym
    weighed, _ = _attack(0.5)
    found = weighed.attack(example)
    assert found.status.value == "succeeded" and found.perturbed.words[1:] == ("good", "flick")  # the valid one
    assert found.queries > plain.queries
    tight, _ = _attack(0.5, budget=plain.queries)  # no budget left to look again: the first flip stands
    assert tight.attack(example).perturbed.words[1] == "awful"


def test_banned_drops_only_the_named_swaps() -> None:
    source = StubJudged({"good": ["awful", "fine"]}, {})
    text = Text.from_string("good good")
    got = Banned(source, frozenset({(0, "awful")})).candidates(text, [0, 1])
    assert [s.word for s in got[0]] == ["fine"] and [s.word for s in got[1]] == ["awful", "fine"]


def test_accept_validity_needs_a_validity_and_a_share() -> None:
    layer = QueryLayer(_flipper(set()))
    with pytest.raises(ConfigError, match="accept_validity.*needs 'validity'"):
        Attack(layer, source=StubJudged({}, {}), search=GreedySearch(), accept_validity=0.5)
    with pytest.raises(ConfigError, match=r"accept_validity.*\(0, 1\]"):
        Attack(layer, source=StubJudged({}, {}), search=GreedySearch(), accept_validity=0.0, validity=lambda a, b: None)


# ---- the verdict follows the interval --------------------------------------------------------------
def _section(point: float, low: float, high: float, name: str = "attack") -> dict[str, Any]:
    return {"name": name, "settings": {"candidates": "validated"}, "risk": point, "risk_low": low,
            "risk_high": high, "point": f"{name} point"}


@pytest.mark.parametrize(("interval", "level"), [((0.05, 0.0, 0.2), "good"), ((0.4, 0.3, 0.55), "fair"),
                                                  ((0.8, 0.7, 0.9), "poor"), ((0.2, 0.1, 0.3), "inconclusive")])
def test_the_level_is_set_only_when_the_whole_interval_is_in_one_band(interval: tuple[float, float, float],
                                                                       level: str) -> None:
    assert verdict([_section(*interval)], gates={})["level"] == level


def test_an_inconclusive_verdict_without_findings_says_reviews_cannot_settle_it() -> None:
    judged = verdict([_section(0.2, 0.1, 0.3)], gates={})
    assert judged["level"] == "inconclusive" and judged["settle"] == []
    assert "spans good and fair" in " ".join(judged["points"])
    assert "attack more examples (--n)" in " ".join(judged["points"])


def test_a_section_without_an_interval_keeps_its_point() -> None:
    assert verdict([{"name": "msr", "risk": 0.3, "point": "p"}], gates={})["level"] == "fair"


def test_settling_reviews_are_greedy_and_settle_when_readers_agree_with_the_judge() -> None:
    units = [Unit(f"attack/{i}", str(i), 0.5 if i < 40 else 0.9) for i in range(45)]
    thresholds = ((0.25, "good"), (0.6, "fair"), (math.inf, "poor"))

    def settled(estimates: dict[str, Any]) -> bool:
        from textrobust.validity.estimate import band_of

        e = estimates["attack"]
        return band_of(e.low, thresholds) == band_of(e.high, thresholds)

    assert not settled({"attack": estimate(units, 100)})
    assert settling_reviews({"attack": (units[40:], 100)}, settled) == []  # settled already
    named = settling_reviews({"attack": (units, 100)}, settled)
    assert named and all(int(item.split("/")[1]) < 40 for item in named)  # the p = 0.5 ones move it most
    reviewed = [Unit(u.item, u.example, u.probability, outcome=1.0 if u.item in named else None) for u in units]
    assert settled({"attack": estimate(reviewed, 100)})


def test_the_review_shows_the_settling_findings_first() -> None:
    @dataclass(frozen=True)
    class F:
        item: str

    found = [F("attack/a"), F("attack/b"), F("attack/c")]
    assert [f.item for f in settle_first(found, ["attack/c", "attack/a"])] == ["attack/c", "attack/a", "attack/b"]


# ---- an audit end to end: summary keys, the inconclusive verdict, reviews settle it ---------------
def _world(monkeypatch: pytest.MonkeyPatch, judged: StubJudged) -> None:
    from textrobust.attack.candidates import choice, swap_validity
    from textrobust.devices import Placement

    monkeypatch.setattr(choice, "_SHARED", {("PeopleSubstitutes", Placement(), ()): judged,
                                          ("PeopleSubstitutes", Placement(), (("min_probability", 0.2),)): judged})
    monkeypatch.setattr(swap_validity, "validity_judge", lambda source=None, placement=None: judged)


def _data(flips: int, total: int) -> Dataset:
    examples = tuple(Example(f"e{i}", Text.from_string(f"{'good' if i < flips else 'great'} film number {i}"), 1)
                     for i in range(total))
    return Dataset("toy", examples, LABELS, split="test")


def test_an_audit_writes_the_expected_valid_rate_and_reviews_of_the_named_findings_settle_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from textrobust import audit
    from textrobust.store import RunStore
    from textrobust.validity.reviews import ReviewLog

    judged = StubJudged({"good": ["fine"], "great": ["grand"]}, {"fine": 0.5, "grand": 0.9})
    _world(monkeypatch, judged)
    out = tmp_path / "run"
    audit.run(_flipper({"fine"}), _data(40, 100), {"attack": {"recipe": "pwws", "quality": False, "n": None}}, out,
              progress=False)
    summary = json.loads((out / "summary.json").read_text())
    attack = summary["analyses"]["attack"]["summary"]
    assert attack["succeeded"] == 40 and attack["expected_valid_success_rate"] == pytest.approx(0.2)
    assert attack["expected_valid_success_rate_low"] < 0.2 < attack["expected_valid_success_rate_high"]
    assert summary["analyses"]["attack"]["reviewed"]["expected_valid_success_rate"] == pytest.approx(0.2)
    v = summary["verdict"]
    assert v["level"] == "inconclusive" and v["settle"], v
    report = json.loads((out / "report.json").read_text())
    section = report["analyses"][0]
    assert any("P(valid) 0.50" in (row.get("note") or "") for row in section["examples"])
    # the review shows the named findings first, each with its probability
    from textrobust.report.reviewed import run_findings

    shown = run_findings(out).findings
    assert [f.item for f in shown[: len(v["settle"])]] == v["settle"]
    assert ("probability it keeps the meaning", "0.50 (the judge's calibrated probability; swaps independent)") \
        in shown[0].lines
    # the readers confirm what the verdict named: the level is set
    with RunStore(out / "store.sqlite") as store:
        log = ReviewLog(store)
        for item in v["settle"]:
            log.record(summary["analyses"]["attack"]["run_id"], item, "ann", "valid")
    audit.rebuild_report(out)
    after = json.loads((out / "summary.json").read_text())
    assert after["verdict"]["level"] == "fair", after["verdict"]
    reviewed = after["analyses"]["attack"]["reviewed"]
    assert reviewed["confirmed"] == len(v["settle"])
    assert reviewed["expected_valid_success_rate"] == pytest.approx((len(v["settle"]) + 0.5 * (40 - len(v["settle"])))
                                                                    / 100)


def test_without_a_judge_the_figure_is_n_a_and_the_share_flipped_sets_the_level(tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from textrobust import audit
    from textrobust.attack.candidates import choice, swap_validity
    from textrobust.devices import Placement

    judged = StubJudged({"good": ["fine"]}, {"fine": 0.5})
    monkeypatch.setattr(choice, "_SHARED", {("PeopleSubstitutes", Placement(), ()): judged,
                                          ("PeopleSubstitutes", Placement(), (("min_probability", 0.2),)): judged})
    monkeypatch.setattr(swap_validity, "validity_judge", lambda source=None, placement=None: None)
    out = tmp_path / "run"
    audit.run(_flipper({"fine"}), _data(2, 20), {"attack": {"recipe": "pwws", "quality": False}}, out, progress=False)
    summary = json.loads((out / "summary.json").read_text())
    attack = summary["analyses"]["attack"]["summary"]
    assert attack["expected_valid_success_rate"] is None and attack["success_rate"] == pytest.approx(0.1)
    assert summary["verdict"]["level"] == "good"


@pytest.mark.parametrize("score", [1.0, 0.0])
def test_radius_and_pr_give_the_falsified_and_misclassified_shares_weighted_by_validity(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, score: float) -> None:
    """Every swap sure (1) or surely invalid (0): the expected valid rates are the radius's
    falsified share at r = 1 and PR's misclassified share (1 - mean PR), or 0."""
    from test_radius import _toy_examples

    from textrobust import audit
    from textrobust.analyses.radius.analysis import PRMetricAnalysis, RadiusBoundsAnalysis
    from textrobust.attack.candidates import swap_validity

    class Everything(StubJudged):
        def evidence_many(self, text: Text, pairs: Any) -> list[_Evidence]:
            return [_Evidence(score) for _ in pairs]

    monkeypatch.setattr(swap_validity, "validity_judge", lambda source=None, placement=None: Everything({}, {}))
    victim, source, examples = _toy_examples()
    data = Dataset("toy", tuple(examples), tuple(victim.label_names), split="test")
    found = audit.run(victim, data, [RadiusBoundsAnalysis({"pso_pop": 8, "pso_iters": 4}, source=source),
                                     PRMetricAnalysis({"samples": 50}, source=source)], tmp_path, progress=False)
    radius, pr = found["radius"].summary, found["pr"].summary
    assert radius.falsified_r1 > 0 and 0 < pr.pr.mean_pr < 1
    assert radius.expected_valid_success_rate == pytest.approx(radius.falsified_r1 * score)
    assert pr.expected_valid_success_rate == pytest.approx((1 - pr.pr.mean_pr) * score)
    for s in (radius, pr):
        assert s.expected_valid_success_rate_low <= s.expected_valid_success_rate <= s.expected_valid_success_rate_high
    summary = json.loads((tmp_path / "summary.json").read_text())
    for name in ("radius", "pr"):
        assert {"expected_valid_success_rate", "expected_valid_success_rate_low",
                "expected_valid_success_rate_high"} <= set(summary["analyses"][name]["summary"])
    records = found["pr"].records
    assert any(r.validity and r.validity[0] and r.validity[0]["probability"] == score for r in records)


def test_the_gate_reads_the_interval_ends() -> None:
    from textrobust.audit.requirements import declared_figures, reviewed_figure_keys

    keys, _ = declared_figures(["attack", "radius", "pr"])
    for name in ("attack", "radius", "pr"):
        for end in ("", "_low", "_high"):
            assert f"{name}.expected_valid_success_rate{end}" in keys
            assert f"{name}.reviewed.expected_valid_success_rate{end}" in reviewed_figure_keys([name])


def test_a_second_order_finding_weighs_its_patch() -> None:
    from dataclasses import replace

    from review_fixtures import _second_order

    from textrobust.analyses.second_order.analysis import SecondOrderAnalysis, SecondOrderSettings

    analysis = SecondOrderAnalysis(SecondOrderSettings(quality=False, candidates="paper"))
    found = replace(_second_order(), validity={"probability": 0.25, "draws": [0.25] * 5, "swaps": []})
    summary = analysis.summarise([found], [])
    assert summary.succeeded == 1 and summary.expected_valid_success_rate == pytest.approx(0.25)
    section = analysis.section(summary, [found], [], list(LABELS))
    assert section.validity is not None and section.validity["units"][0]["item"] == "second-order/so-0"
    assert section.risk == pytest.approx(0.25) and section.risk_low is not None
    assert "P(valid) 0.25" in (section.examples[0].note or "")
    assert math.isnan(analysis.summarise([_second_order()], []).expected_valid_success_rate)  # not judged: n/a


def test_the_shipped_calibration_loads_monotone_with_its_refits() -> None:
    from textrobust.attack.candidates.validated import load_calibration

    calibration = load_calibration()
    grid = np.linspace(0, 1, 101)
    p = calibration.probability(grid)
    assert calibration.n == 2856 and calibration.bootstrap == 200
    assert np.all(np.diff(p) >= -1e-9) and 0.0 <= p[0] < 0.2 and p[-1] > 0.8
    assert calibration.draws(grid).shape == (200, 101)
    with pytest.raises(ConfigError, match="calibrate.py"):
        load_calibration(Path("/nonexistent/calibration.json"))


def test_min_validity_sets_the_validated_sources_judge_threshold() -> None:
    from textrobust.analyses.attack.analysis import recipe_spec
    from textrobust.attack.candidates.choice import validated_settings
    from textrobust.attack.candidates.swap_validity import labelled_settings
    from textrobust.attack.candidates.validated import load_calibration

    assert validated_settings(None) == {} and labelled_settings(None) == {}
    # the validated source learned from people gives calibrated probabilities: its own threshold
    assert validated_settings(0.4) == {"min_probability": 0.4}
    assert dict(recipe_spec("pwws", 0, "validated", 0.4).source.settings) == {"min_probability": 0.4}
    assert dict(recipe_spec("pwws", 0, "validated").source.settings) == {}
    # issue 39's source: the raw judge score whose calibrated probability is min_validity
    threshold = labelled_settings(0.4)["min_judge"]
    assert load_calibration().probability([threshold])[0] >= 0.4 > load_calibration().probability([threshold - 0.01])[0]


def test_tef_weighs_its_moved_explanations_by_validity() -> None:
    from test_attribution_analysis import SCORES, TABLE, TEF_TABLE, StaticCandidates, Words, planted_victim

    from textrobust.analyses.attribution.analysis import AttributionAnalysis, summarise_records
    from textrobust.analyses.attribution.text_distances import TextDistances
    from textrobust.similarity import EncoderCosine

    class Half(StubJudged):
        def evidence_many(self, text: Text, pairs: Any) -> list[_Evidence]:
            return [_Evidence(0.5) for _ in pairs]

    analysis = AttributionAnalysis({"attribution": "occlusion", "rhos": (0.1, 0.4), "n": 2, "perplexity": False,
                                    "grammar": False})
    analyse = analysis.worker_with(QueryLayer(planted_victim(SCORES, "movie", flip="awful")),
                                   {"tea": StaticCandidates(TABLE), "tef": StaticCandidates(TEF_TABLE)},
                                   TextDistances(EncoderCosine(Words())), stop_words={"a", "the", "with", "and"},
                                   judge=Half({}, {}))
    records = [analyse(Example("e1", Text.from_string("good film with a plot and a story"), 1)),
               analyse(Example("e2", Text.from_string("the acting and the film"), 0))]
    top = [next(r for r in record.runs if r.attack == "tef" and r.rho_max == 0.4) for record in records]
    for record, run in zip(records, top):
        if run.changed:
            assert record.tef_validity is not None and record.tef_validity["probability"] == pytest.approx(
                0.5 ** run.changed)
    moved = sum(0.5 ** run.changed for run in top if run.prediction_kept and run.pcc < 0.5)
    assert moved > 0  # TEF moved an explanation here: the figure is not trivially 0
    summary = summarise_records(analysis.settings, records, [])
    assert summary.expected_valid_success_rate == pytest.approx(moved / 2)


@pytest.mark.heavy
def test_the_validated_source_weighs_a_real_finding() -> None:
    """The shipped judge and calibration on one sentence: a synonym keeps the meaning more
    probably than an antonym, and every finding has one value per calibration refit."""
    from textrobust.attack.candidates.swap_validity import validity_judge
    from textrobust.attack.candidates.validated import ValidatedSynonyms

    judge = validity_judge(ValidatedSynonyms(verdict_cache=False))
    assert judge is not None
    text = Text.from_string("the film is a wonderful and moving story")
    synonym = finding_validity(judge, text, text.replace(4, "marvelous"))
    antonym = finding_validity(judge, text, text.replace(4, "terrible"))
    assert 0.0 <= antonym.probability < synonym.probability <= 1.0
    assert len(synonym.draws) == 200 and synonym.swaps[0]["substitute"] == "marvelous"


# ---- few examples: the exact binomial floor under the bootstrap ------------------------------------
@pytest.mark.parametrize(("rate", "examples", "low", "high"), [
    (0.0, 5, 0.0, 0.5218), (0.2, 5, 0.0051, 0.7164), (0.0, 1276, 0.0, 0.00289), (1.0, 4, 0.3976, 1.0),
])
def test_exact_bounds_are_clopper_pearson(rate: float, examples: int, low: float, high: float) -> None:
    from textrobust.validity.estimate import exact_bounds

    assert exact_bounds(rate, examples) == pytest.approx((low, high), abs=2e-4)
    assert all(math.isnan(v) for v in exact_bounds(0.1, 0))


def test_few_examples_never_give_a_narrow_interval_and_the_verdict_waits() -> None:
    """No flip among 5 attacked examples is not evidence of a good model: the interval reaches
    52%, and a verdict over it is inconclusive and asks for more examples."""
    from textrobust.validity.estimate import exact_bounds

    none = estimate([], 5)
    assert none.point == 0.0 and none.low == 0.0 and none.high == pytest.approx(0.5218, abs=1e-3)
    one = estimate([Unit("radius/a", "a", 0.9)], 5)
    assert one.high >= exact_bounds(0.9 / 5, 5)[1] > 0.6
    # many examples: the bootstrap and the exact interval agree closely; the exact one rules no more
    many = estimate([Unit(f"attack/{i}", str(i), 0.5) for i in range(100)], 1000)
    exact = exact_bounds(0.05, 1000)
    assert many.low <= exact[0] + 1e-9 and many.high >= exact[1] - 1e-9 and many.high - many.low < 0.05
    judged = verdict([_section(none.point, none.low, none.high)], gates={})
    assert judged["level"] == "inconclusive" and "attack more examples (--n)" in " ".join(judged["points"])
