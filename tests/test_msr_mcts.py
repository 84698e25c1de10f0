"""The MCTS search (upper bound of the maximal safe radius): the engine's search contract,
every success returned with its distance, the closest first, UCT statistics backpropagated
to the root, the stopping rule."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from textrobust.attack.searches import SEARCHES
from textrobust.attack.searches.mcts import MCTSSearch, _pickup
from textrobust.attack.searches.search_testing import check_search, default_fake_problem
from textrobust.text import Text


def test_mcts_keeps_the_search_contract():
    ran = check_search(MCTSSearch(simulations=4, max_iterations=6))
    assert {"budget", "deterministic", "batching", "no_candidates", "already_adversarial"} <= set(ran)


def test_mcts_is_registered():
    assert isinstance(SEARCHES.get("mcts")(simulations=2), MCTSSearch)


def test_every_success_is_returned_and_the_closest_is_best():
    fake = default_fake_problem()
    start = Text.from_string("Superb and lovely, and fine.")  # score +3: two swaps needed
    weights = {"dull": 5.0, "poor": 1.0, "okay": 0.5}

    def distance(a: Text, b: Text) -> float:
        return sum(weights.get(b.words[p], 2.0) for p in a.diff(b))

    search = MCTSSearch(simulations=16, max_iterations=20, distance=distance)
    result = search.explore(start, fake.problem(start))
    assert result.successes
    for s in result.successes:
        score, success = fake.verdict(s.text)
        assert success and s.distance == pytest.approx(distance(start, s.text))
        assert s.positions == tuple(start.diff(s.text)) and len(s.positions) >= 2
    assert result.best_distance == min(s.distance for s in result.successes)
    assert result.outcome.best == result.closest().text and result.outcome.success
    assert result.vertices <= result.total_vertices


def test_no_success_means_no_distance():
    fake = default_fake_problem()
    start = fake.hard_text
    result = MCTSSearch(simulations=4, max_words=2, max_iterations=None).explore(start, fake.problem(start))
    assert result.successes == () and result.best_distance is None
    # with no iteration cap and a full share, the search stops only when the tree is exhausted
    assert result.vertices == result.total_vertices


def test_explore_share_stops_early():
    fake = default_fake_problem()
    start = fake.hard_text
    full = MCTSSearch(simulations=2, max_words=3, max_iterations=None).explore(start, fake.problem(start))
    part = MCTSSearch(simulations=2, max_words=3, max_iterations=None, explore_share=0.3).explore(
        start, default_fake_problem().problem(start))
    assert part.vertices < full.vertices
    assert part.vertices >= 0.3 * part.total_vertices


def test_every_reward_reaches_the_root():
    fake = default_fake_problem()
    start = fake.hard_text
    result = MCTSSearch(simulations=3, max_words=2, max_iterations=5).explore(start, fake.problem(start))
    assert result.vertices > 0 and result.root_visits == result.vertices


@given(st.integers(1, 50))
@settings(max_examples=20)
def test_pickup_weights_are_a_distribution_falling_with_rank(k):
    w = _pickup(k)
    assert w.sum() == pytest.approx(1.0)
    assert all(a >= b for a, b in zip(w, w[1:]))
