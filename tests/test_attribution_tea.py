"""TEA and TEF (Ivankay et al.): the attribution goal and the searches, on a planted victim."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from textrobust.attack.goals import UntargetedClassification
from textrobust.attack.goals_attribution import CHANGED_PREDICTION, AttributionGoal
from textrobust.attack.problem import Problem, Substitution
from textrobust.attack.searches import ATTRIBUTION_SEARCHES, TEASearch
from textrobust.attack.testing import StaticCandidates
from textrobust.attribution import Occlusion, pcc_distance
from textrobust.attribution.testing import planted_victim
from textrobust.errors import ConfigError
from textrobust.text import Text
from textrobust.victims import QueryLayer

pytest.importorskip("captum")

SCORES = {"good": 1.0, "film": 0.5, "plot": -0.7, "story": 0.3, "acting": 0.6, "great": 0.9}
START = Text.from_string("good film with a plot and a story and some acting")
TABLE = {"film": ["picture", "movie"], "good": ["awful", "great"], "plot": ["storyline"], "story": ["tale"]}


class CountingSource(StaticCandidates):
    def __init__(self, table: dict[str, Sequence[str]]) -> None:
        super().__init__(table)
        self.calls = 0

    def candidates(self, text: Text, positions: Sequence[int]) -> dict[int, list[Substitution]]:
        self.calls += 1
        return super().candidates(text, positions)


def problem(source: StaticCandidates | None = None) -> tuple[Problem, QueryLayer, AttributionGoal]:
    # "movie" flips every word's contribution (the explanation), "awful" flips the label.
    layer = QueryLayer(planted_victim(SCORES, "movie", flip="awful"))
    goal = AttributionGoal(layer, Occlusion(layer), START, 1)
    return Problem(original=START, goal=goal, source=source or StaticCandidates(TABLE)), layer, goal


def test_goal_scores_distance_and_refuses_changed_predictions() -> None:
    _, layer, goal = problem()
    texts = [START, START.replace(1, "movie"), START.replace(0, "awful"), START.replace(1, "picture")]
    found = goal.evaluate(texts)
    assert found.scores[0] == pytest.approx(0.0)
    assert found.scores[1] > 0.85  # the planted flip: PCC close to -1
    assert found.scores[2] == CHANGED_PREDICTION and np.isnan(found.outputs[2, 0]) and found.outputs[2, 1] == 0.0
    assert 0.0 <= found.scores[3] < found.scores[1]
    assert not found.success.any()
    # the distance is Eq. 2's scaled PCC between the maps
    maps = Occlusion(layer).attribute([START, texts[1]], [1, 1])
    assert found.scores[1] == pytest.approx(pcc_distance(maps[1], maps[0]))


def test_goal_refuses_texts_of_another_length() -> None:
    _, _, goal = problem()
    with pytest.raises(ConfigError, match="word by word"):
        goal.distances([Text.from_string("good film")])


@pytest.mark.parametrize("batch_masking", [True, False])
def test_tea_finds_the_planted_word_and_keeps_the_prediction(batch_masking: bool) -> None:
    prob, layer, goal = problem()
    outcome = TEASearch(rho_max=0.2, batch_masking=batch_masking).search(START, prob)
    assert "movie" in outcome.best.words and "awful" not in outcome.best.words
    assert layer.predict([outcome.best])[0] == 1
    assert outcome.score == pytest.approx(goal.distances([outcome.best])[0]) and outcome.score > 0.85
    assert not outcome.success  # an attribution goal has no threshold: the search runs its budget
    assert START.l0(outcome.best) <= TEASearch(rho_max=0.2).max_substitutions(START)


def test_tea_substitutes_at_most_rho_max_words() -> None:
    prob, _, _ = problem()
    search = TEASearch(rho_max=0.05)
    assert search.max_substitutions(START) == 1 and search.batch_size(START) == 1
    outcome = search.search(START, prob)
    assert START.l0(outcome.best) == 1
    assert TEASearch(rho_max=0.4).max_substitutions(START) == 4
    assert TEASearch(rho_max=0.4).batch_size(START) == 1  # rho_b = min(0.4, 0.15): floor(11 * 0.15)
    assert TEASearch(rho_max=0.4, rho_b=0.3).batch_size(START) == 3


def test_batch_masking_asks_the_source_once_per_batch() -> None:
    with_batches, without = CountingSource(TABLE), CountingSource(TABLE)
    TEASearch(rho_max=0.4, rho_b=0.4, batch_masking=True, ranking="order").search(START, problem(with_batches)[0])
    TEASearch(rho_max=0.4, rho_b=0.4, batch_masking=False, ranking="order").search(START, problem(without)[0])
    assert with_batches.calls < without.calls


def test_ranking_zeroes_words_by_the_attribution_distance() -> None:
    _, _, goal = problem()
    positions = [0, 1, 4]
    importance = goal.importance(START, positions)
    expected = goal.distances([START.replace(p, "unk") for p in positions])  # black-box: unk
    np.testing.assert_allclose(importance, expected)


def test_tea_needs_an_attribution_goal_and_is_registered() -> None:
    layer = QueryLayer(planted_victim(SCORES, "movie"))
    prob = Problem(original=START, goal=UntargetedClassification(layer, 1), source=StaticCandidates(TABLE))
    with pytest.raises(ConfigError, match="AttributionGoal"):
        TEASearch().search(START, prob)
    assert ATTRIBUTION_SEARCHES.names() == ["tea", "tef"]
    assert ATTRIBUTION_SEARCHES.get("tef")().config.batch_masking is False
    assert ATTRIBUTION_SEARCHES.get("tea")().config.batch_ratio() == 0.15
    with pytest.raises(ConfigError, match="rho_max"):
        TEASearch(rho_max=0.0)
