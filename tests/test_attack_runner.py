"""Attack runner, problem, goals, results and metrics on closed-form victims."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pytest

from textrobust.attack import metrics
from textrobust.attack.attack import Attack
from textrobust.attack.goals import TargetedClassification, UntargetedClassification, classification_goal
from textrobust.attack.problem import Problem, Proposal, SearchOutcome, Substitution
from textrobust.attack.results import AttackResult, Status
from textrobust.data.examples import Example
from textrobust.errors import CapabilityError, ConfigError, QueryBudgetExceeded
from textrobust.text import Text
from textrobust.victims.function import FunctionVictim
from textrobust.victims.query import QueryLayer
from textrobust.victims.testing import WordListVictim

SYNONYMS = {"good": ["fine", "bad"], "great": ["awful", "big"], "film": ["movie"]}


class DictSource:
    def __init__(self, table: dict[str, list[str]]) -> None:
        self.table = table

    def candidates(self, text: Text, positions: Sequence[int]) -> dict[int, list[Substitution]]:
        return {p: [Substitution(p, w) for w in self.table.get(text.words[p].lower(), [])] for p in positions}


class TakeBest:
    """Greedy stand-in: apply the best-scoring neighbour until success or no gain."""

    def search(self, start: Text, problem: Problem) -> SearchOutcome:
        current = start
        score = float(problem.evaluate([current]).scores[0])
        while True:
            try:
                proposals = problem.neighbours(current)
                if not proposals:
                    return SearchOutcome(current, score, False)
                ev = problem.evaluate([p.text for p in proposals])
            except QueryBudgetExceeded:
                return SearchOutcome(current, score, False, budget_exhausted=True)
            i = int(np.argmax(ev.scores))
            if ev.scores[i] <= score:
                return SearchOutcome(current, score, False)
            current, score = proposals[i].text, float(ev.scores[i])
            if ev.success[i]:
                return SearchOutcome(current, score, True)


class NoRepeat:
    def allowed(self, original: Text, current: Text, positions: frozenset[int]) -> frozenset[int]:
        return positions - set(original.diff(current))


def make_attack(budget: int | None = None) -> tuple[Attack, QueryLayer]:
    layer = QueryLayer(WordListVictim(["good", "great", "fine"], ["bad", "awful"]))
    attack = Attack(layer, source=DictSource(SYNONYMS), search=TakeBest(), position_constraints=[NoRepeat()],
                    budget=budget, name="toy")
    return attack, layer


def test_attack_finds_the_exact_adversarial_text() -> None:
    attack, _ = make_attack()
    example = Example("e1", Text.from_string("A good film, great!"), 1)
    result = attack.attack(example)
    # lexicon score 2 (good, great). good->bad and great->awful both give score 0, i.e.
    # p = [0.5, 0.5]; argmax of a tie is label 0 (negative): success. The stand-in search
    # breaks the score tie by the first position.
    assert result.status is Status.SUCCEEDED
    assert str(result.perturbed) == "A bad film, great!"
    assert result.perturbed_prediction == 0 and result.original_prediction == 1
    assert result.l0 == 1 and result.changed_positions == (1,)
    assert result.queries >= 2
    assert math.isclose(result.perturbed_fraction, 1 / 4)


def test_skipped_when_already_wrong_and_failed_without_candidates() -> None:
    attack, _ = make_attack()
    skipped = attack.attack(Example("s", Text.from_string("a bad film"), 1))
    assert skipped.status is Status.SKIPPED and skipped.queries == 1
    failed = attack.attack(Example("f", Text.from_string("nice nice"), 0))
    assert failed.status is Status.FAILED and str(failed.perturbed) == "nice nice"


def test_budget_is_enforced_by_the_query_layer() -> None:
    attack, layer = make_attack(budget=2)
    result = attack.attack(Example("b", Text.from_string("good great good great fine"), 1))
    assert result.status is Status.FAILED and result.budget_exhausted
    assert result.queries <= 2
    with pytest.raises(ConfigError):
        Attack(layer, source=DictSource({}), search=TakeBest(), budget=0)


def test_goals_scores_and_success_multiclass() -> None:
    probs = np.array([[0.2, 0.5, 0.3], [0.6, 0.3, 0.1], [0.34, 0.33, 0.33]])
    texts = [Text.from_string(w) for w in ("a", "b", "c")]
    table = {t.key: p for t, p in zip(texts, probs)}
    victim = FunctionVictim(lambda s: [table[(x,)] for x in s], ("x", "y", "z"))
    layer = QueryLayer(victim)
    ev = UntargetedClassification(layer, 0).evaluate(texts)
    assert np.allclose(ev.scores, [0.8, 0.4, 0.66]) and ev.success.tolist() == [True, False, False]
    ev = UntargetedClassification(layer, 0, min_confidence=0.55).evaluate(texts)
    assert ev.success.tolist() == [False, False, False]
    ev = TargetedClassification(layer, 2).evaluate(texts)
    assert np.allclose(ev.scores, [0.3, 0.1, 0.33]) and not ev.success.any()
    assert isinstance(classification_goal(layer, 0, target=1), TargetedClassification)
    with pytest.raises(ConfigError):
        classification_goal(layer, 1, target=1)
    with pytest.raises(ConfigError):
        UntargetedClassification(layer, 5)
    with pytest.raises(ConfigError):
        UntargetedClassification(layer, 0, min_confidence=1.5)


def test_problem_filters_and_respects_frozen_positions() -> None:
    layer = QueryLayer(WordListVictim(["good"], ["bad"]))
    original = Text.from_pair("good good", "good film")  # premise frozen
    goal = UntargetedClassification(layer, 1)

    class NotFine:
        def check(self, original: Text, proposals: Sequence[Proposal]) -> np.ndarray:
            return np.array([p.word != "fine" for p in proposals])

    problem = Problem(original, goal, DictSource(SYNONYMS), constraints=(NotFine(),))
    proposals = problem.neighbours(original)
    assert {(p.position, p.word) for p in proposals} == {(2, "bad"), (3, "movie")}
    assert problem.positions(original) == (2, 3)
    with pytest.raises(CapabilityError):
        problem.word_gradients(original)


def _result(status: Status, l0: int = 0, queries: int = 10, **extras: float) -> AttackResult:
    original = Text.from_string("one two three four")
    perturbed = original.replace({i: "x" for i in range(l0)}) if l0 else original
    return AttackResult("id", 1, status, original, perturbed, 1, 0, (0.1, 0.9), (0.9, 0.1), queries, 0.5,
                        extras=dict(extras))


def test_metrics_are_pure_and_follow_textattack_conventions() -> None:
    results = [
        _result(Status.SUCCEEDED, l0=1, queries=10, perplexity_before=40.0, perplexity_after=80.0, similarity=0.9),
        _result(Status.SUCCEEDED, l0=2, queries=30, perplexity_before=60.0, perplexity_after=100.0, similarity=0.8),
        _result(Status.FAILED, queries=50),
        _result(Status.SKIPPED, queries=1),
    ]
    first = metrics.summary(results)
    assert metrics.summary(results) == first  # calling twice changes nothing
    assert first["success_rate"] == pytest.approx(2 / 3)
    assert first["original_accuracy"] == pytest.approx(3 / 4)
    assert first["accuracy_under_attack"] == pytest.approx(1 / 4)
    assert first["queries_per_example"] == pytest.approx(30.0)
    assert first["words_perturbed"] == pytest.approx((1 / 4 + 2 / 4) / 2)
    assert first["l0"] == pytest.approx(1.5)
    assert first["median_perplexity_before"] == pytest.approx(50.0)
    assert first["median_perplexity_after"] == pytest.approx(90.0)
    assert first["similarity"] == pytest.approx(0.85)
    assert math.isnan(metrics.success_rate([])) and math.isnan(metrics.words_perturbed(results[2:]))


def test_result_round_trips_through_the_records_codec() -> None:
    from textrobust.records import decode, encode

    result = _result(Status.SUCCEEDED, l0=2, similarity=0.7)
    back = decode(AttackResult, encode(result))
    assert back == result and back.l0 == 2 and back.extras == {"similarity": 0.7}
    pair = AttackResult("p", 0, Status.FAILED, Text.from_pair("a b", "c"), Text.from_pair("a b", "d"), 0, 0,
                        (1.0, 0.0), (1.0, 0.0), 3, 0.1)
    back = decode(AttackResult, encode(pair))
    assert back.original.columns == ("a b", "c") and back.original.frozen == frozenset({0, 1})
