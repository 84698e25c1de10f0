"""Searches: the contract over every registered search, exact cases, budget and batching.

All problems are real (a closed-form victim behind a QueryLayer, a dict candidate source,
the classification goals); no real models.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from textrobust.attack.goals import TargetedClassification, UntargetedClassification
from textrobust.attack.problem import Problem, Proposal, SearchOutcome
from textrobust.attack.searches import (
    SEARCHES,
    BeamSearch,
    GeneticSearch,
    GreedyConfig,
    GreedySearch,
    ParticleSwarmSearch,
    Ranking,
    rank_positions,
)
from textrobust.attack.searches.base import admissible, best_index
from textrobust.attack.searches.search_testing import (
    DictSource,
    FakeProblem,
    RecordingGoal,
    SearchContractError,
    check_search,
    default_fake_problem,
)
from textrobust.errors import CapabilityError, ConfigError
from textrobust.text import Text
from textrobust.victims.function import FunctionVictim
from textrobust.victims.query import QueryLayer
from textrobust.victims.testing import KeywordVictim, WordListVictim

ALL = SEARCHES.names()

#: smaller population settings for the property tests (same code paths, less time)
SMALL = {"genetic": {"pop_size": 12, "max_iters": 6}, "pso": {"pop_size": 12, "max_iters": 6}}


def build(name: str, **settings: object):
    return SEARCHES.get(name)(**{**SMALL.get(name, {}), **settings})


# ---- a small exact world ------------------------------------------------------------------------
# P(positive) = logistic(#positive - #negative); the true label is positive (1).
LEXICON = WordListVictim(["good", "great", "fine", "superb"], ["bad", "awful", "poor", "dull"])
TABLE = {"good": ["nice", "bad"], "great": ["big", "awful"], "fine": ["okay"], "music": ["sound"]}
START = Text.from_string("good acting, great story, fine music")  # score 3


def lexicon_problem(
    start: Text = START,
    *,
    min_confidence: float = 0.6,
) -> tuple[Problem, QueryLayer, RecordingGoal]:
    layer = QueryLayer(LEXICON)
    goal = RecordingGoal(UntargetedClassification(layer, 1, min_confidence=min_confidence))
    return Problem(original=start, goal=goal, source=DictSource(TABLE)), layer, goal


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


# ---- registry, settings, repr ------------------------------------------------------------------
def test_registry_names_the_four_searches_and_builds_them_with_settings() -> None:
    # the engine's four, plus the robustness-radius searches registered by textrobust.analyses.radius
    assert ALL == ["beam", "exhaustive", "genetic", "greedy", "mcts", "pdp", "pso"]
    assert SEARCHES.entries()[0].summary.startswith("beam search")
    search = SEARCHES.get("beam")(beam_width=3)
    assert isinstance(search, BeamSearch) and search.config.beam_width == 3
    assert repr(search) == "BeamSearch(beam_width=3, max_depth=None)"
    assert "pop_size=60" in repr(SEARCHES.get("genetic")()) and "max_iters=20" in repr(SEARCHES.get("pso")())
    assert GreedySearch(GreedyConfig(ranking="unk"), seed=4).config == GreedyConfig(ranking="unk", seed=4)


@pytest.mark.parametrize(
    ("factory", "settings", "named"),
    [
        (BeamSearch, {"beam_width": 0}, "beam_width"),
        (BeamSearch, {"max_depth": 0}, "max_depth"),
        (BeamSearch, {"beam_witdh": 2}, "beam_witdh"),
        (GreedySearch, {"ranking": "saliency"}, "ranking"),
        (GreedySearch, {"unk_token": "two words"}, "unk_token"),
        (GeneticSearch, {"pop_size": 1}, "pop_size"),
        (GeneticSearch, {"temperature": 0.0}, "temperature"),
        (ParticleSwarmSearch, {"omega_max": 0.3, "omega_min": 0.5}, "omega_min"),
        (ParticleSwarmSearch, {"c_high": 0.1}, "c_low"),
        (ParticleSwarmSearch, {"v_max": -1.0}, "v_max"),
    ],
)
def test_settings_are_validated_with_messages_naming_the_parameter(
    factory: Callable[..., object], settings: dict[str, object], named: str
) -> None:
    with pytest.raises(ConfigError) as info:
        factory(**settings)
    assert f"'{named}'" in str(info.value)


def test_settings_are_frozen_and_a_wrong_config_type_is_refused() -> None:
    search = BeamSearch(beam_width=2)
    with pytest.raises(ValidationError):
        search.config.beam_width = 5  # type: ignore[misc]
    with pytest.raises(ConfigError, match="BeamConfig"):
        BeamSearch(GreedyConfig())  # type: ignore[arg-type]


# ---- the contract over every registered search -------------------------------------------------
@pytest.mark.parametrize("name", ALL)
def test_every_registered_search_keeps_the_contract(name: str) -> None:
    ran = check_search(SEARCHES.get(name)())
    assert {"frozen", "verdict", "budget", "deterministic", "no_candidates", "already_adversarial"} <= set(ran)


@pytest.mark.parametrize("ranking", ["unk", "random", "gradient"])
def test_greedy_keeps_the_contract_with_every_ranking(ranking: str) -> None:
    def with_gradients() -> FakeProblem:
        fake = default_fake_problem()
        fake.gradients = True
        return fake

    assert "budget" in check_search(GreedySearch(ranking=ranking), with_gradients)


class MaxChanges:
    """A position constraint: no position may change once ``k`` words differ."""

    def __init__(self, k: int) -> None:
        self.k = k

    def allowed(self, original: Text, current: Text, positions: frozenset[int]) -> frozenset[int]:
        return positions if original.l0(current) < self.k else frozenset()


class NotBoth:
    """A text constraint: never both ``a`` and ``b`` in one text."""

    def __init__(self, a: str, b: str) -> None:
        self.a, self.b = a, b

    def check(self, original: Text, proposals: list[Proposal]) -> np.ndarray:
        return np.array([not {self.a, self.b} <= set(p.text.words) for p in proposals])


@pytest.mark.parametrize("name", ALL)
def test_constraints_hold_for_every_search_even_through_crossover_and_moves(name: str) -> None:
    def constrained() -> FakeProblem:
        fake = default_fake_problem()
        fake.position_constraints = (MaxChanges(2),)
        fake.constraints = (NotBoth("bad", "awful"),)
        return fake

    check_search(build(name), constrained)
    fake = constrained()
    start = Text.from_string("good good great great fine fine")  # needs 4 swaps: impossible with 2
    with fake.budgeted(start, None) as problem:
        outcome = build(name, **({"pop_size": 30} if name in ("genetic", "pso") else {})).search(start, problem)
    assert start.l0(outcome.best) <= 2
    assert not {"bad", "awful"} <= set(outcome.best.words)
    assert not outcome.success


def test_the_checker_catches_a_search_that_touches_frozen_words() -> None:
    class Vandal(GreedySearch):
        def search(self, start: Text, problem: Problem) -> SearchOutcome:
            best = start.replace(0, "bad") if len(start) else start
            found = problem.evaluate([best])
            return SearchOutcome(best, float(found.scores[0]), bool(found.success[0]))

    with pytest.raises(SearchContractError) as info:
        check_search(Vandal())
    assert info.value.check in {"frozen", "positions"}


def test_the_checker_catches_a_search_that_lets_the_budget_error_escape() -> None:
    class Leaky(GreedySearch):
        def search(self, start: Text, problem: Problem) -> SearchOutcome:
            for p in problem.neighbours(start):  # one query per text, outside any guard
                problem.evaluate([p.text])
            return super().search(start, problem)

    with pytest.raises(SearchContractError) as info:
        check_search(Leaky())
    assert info.value.check == "budget"


def test_the_checker_catches_a_search_that_is_not_reproducible() -> None:
    class Drifting(GreedySearch):
        calls = 0

        def search(self, start: Text, problem: Problem) -> SearchOutcome:
            Drifting.calls += 1
            return replace(super().search(start, problem), iterations=Drifting.calls)

    with pytest.raises(SearchContractError) as info:
        check_search(Drifting())
    assert info.value.check == "deterministic"


def test_the_public_names_are_exported() -> None:
    from textrobust.attack import searches

    public = {n for n in dir(searches) if not n.startswith("_") and n[0].isupper() or n == "rank_positions"}
    assert set(searches.__all__) == public - {"Any", "Callable", "Search", "Registry"}
    assert all(hasattr(searches, n) for n in searches.__all__)


# Hypothesis: no search ever touches a frozen position, whatever is frozen.
FROZEN_START = Text.from_string("A good film with great acting and a fine plot.")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frozen=st.sets(st.integers(0, len(FROZEN_START) - 1)), name=st.sampled_from(ALL))
def test_no_search_touches_a_frozen_position(frozen: set[int], name: str) -> None:
    start = FROZEN_START.freeze(frozen)
    fake = default_fake_problem()
    with fake.budgeted(start, None) as problem:
        outcome = build(name).search(start, problem)
    assert not set(start.diff(outcome.best)) & frozen
    assert outcome.best.frozen == start.frozen
    assert outcome.success == fake.verdict(outcome.best)[1]


def test_a_pair_premise_is_never_changed() -> None:
    victim = KeywordVictim({"contradiction": ["not", "never"], "entailment": ["yes", "indeed"]})
    start = Text.from_pair("indeed it is", "yes yes it is")  # premise frozen by default
    source = DictSource({"yes": ["not", "maybe"], "indeed": ["never"]})
    for name in ALL:
        layer = QueryLayer(victim)
        outcome = build(name).search(start, Problem(start, UntargetedClassification(layer, 1), source))
        assert outcome.best.columns[0] == "indeed it is", name
        if name != "pdp":  # PDP may change at most floor(25% of 7 words) = 1 word: no success here
            assert outcome.success, name
            if name == "mcts":  # the closest success (fewest words, then text order), not the best score
                assert start.l0(outcome.best) == 2 and "not" in outcome.best.columns[1], name
            else:
                assert outcome.best.columns == ("indeed it is", "not not it is"), name


def test_targeted_multiclass_goals_are_met_by_every_search() -> None:
    victim = KeywordVictim(
        {"sport": ["goal", "match", "team"], "politics": ["vote", "party"], "tech": ["chip", "code"]}
    )
    start = Text.from_string("the team scored a goal in the match")
    source = DictSource({"team": ["party", "crew"], "goal": ["vote", "point"], "match": ["code", "game"]})
    for name in ALL:
        layer = QueryLayer(victim)
        problem = Problem(start, TargetedClassification(layer, 1), source)  # -> politics
        outcome = build(name).search(start, problem)
        assert outcome.success, name
        assert layer.predict([outcome.best])[0] == 1


# ---- exact cases -------------------------------------------------------------------------------
def test_greedy_finds_the_exact_adversarial_text_with_exact_query_counts() -> None:
    problem, layer, goal = lexicon_problem()
    outcome = GreedySearch(ranking="delete").search(START, problem)
    # ranking: deleting good/great/fine leaves score 2, deleting music 3 -> order 0, 2, 4, 5.
    # position 0: nice (2) / bad (1) -> keep bad; position 2: big (0: p=.5 < min_confidence)
    # and awful (-1) -> success.
    assert str(outcome.best) == "bad acting, awful story, fine music"
    assert outcome.success and outcome.score == pytest.approx(1 - sigmoid(-1))
    assert goal.calls == [1, 4, 2, 2]  # start, ranking, position 0, position 2
    assert layer.queries == 9 and outcome.iterations == 2


def test_word_importance_rankings() -> None:
    problem, layer, _ = lexicon_problem()
    delete = rank_positions(START, problem, [0, 2, 4, 5], "delete")
    assert delete.positions == (0, 2, 4, 5)
    assert delete.importance[0] == pytest.approx(1 - sigmoid(2))
    assert delete.importance[-1] == pytest.approx(1 - sigmoid(3))
    unk = rank_positions(START, problem, [5, 4, 2, 0], Ranking.UNK, unk_token="zzz")
    assert unk.positions == (4, 2, 0, 5)  # ties keep the given order
    assert layer.queries == 4 + 4  # the delete texts, then the unk texts
    rng = lambda: np.random.default_rng(7)
    first = rank_positions(START, problem, [0, 2, 4, 5], "random", rng=rng())
    assert first == rank_positions(START, problem, [0, 2, 4, 5], "random", rng=rng())
    assert sorted(first.positions) == [0, 2, 4, 5]
    with pytest.raises(ConfigError, match="'method'"):
        rank_positions(START, problem, [0], "saliency")
    with pytest.raises(ConfigError, match="'rng'"):
        rank_positions(START, problem, [0], "random")
    assert rank_positions(START, problem, [], "delete").positions == ()


def test_gradient_ranking_uses_word_gradient_norms_and_fails_fast_without_them() -> None:
    layer = QueryLayer(LEXICON)
    goal = UntargetedClassification(layer, 1)
    grads = np.zeros((len(START), 3))
    grads[4] = [0.0, -2.0, 1.0]  # |.|_1 = 3: "fine" first
    grads[2] = [1.0, 0.0, 0.0]
    problem = Problem(START, goal, DictSource(TABLE), gradients=lambda text: grads)
    ranked = rank_positions(START, problem, [0, 2, 4, 5], "gradient")
    assert ranked.positions == (4, 2, 0, 5) and ranked.importance[:2] == (3.0, 1.0)
    assert layer.queries == 0
    blind = Problem(START, goal, DictSource(TABLE))
    with pytest.raises(CapabilityError, match="gradients"):
        GreedySearch(ranking="gradient").search(START, blind)
    assert layer.queries == 0  # raised before the first query


def test_beam_finds_a_two_word_solution_that_greedy_misses() -> None:
    # P(negative) of each text; "q s" is the only adversarial one. Greedy takes the best
    # first step ("p", 0.40) and is stuck; a beam of 2 also keeps "q" (0.30) and finds "q s".
    p_negative = {
        "alpha beta": 0.10, "p beta": 0.40, "q beta": 0.30, "alpha r": 0.20, "alpha s": 0.15,
        "p r": 0.45, "p s": 0.45, "q r": 0.35, "q s": 0.90,
    }

    def fn(strings: list[str]) -> np.ndarray:
        neg = np.array([p_negative.get(s, 0.1) for s in strings])
        return np.stack([neg, 1 - neg], axis=1)

    start = Text.from_string("alpha beta")
    source = DictSource({"alpha": ["p", "q"], "beta": ["r", "s"]})

    def solve(search: object) -> SearchOutcome:
        layer = QueryLayer(FunctionVictim(fn, ("negative", "positive")))
        return search.search(start, Problem(start, UntargetedClassification(layer, 1), source))  # type: ignore[attr-defined]

    for ranking in ("delete", "unk", "random"):
        greedy = solve(GreedySearch(ranking=ranking))
        assert not greedy.success and str(greedy.best) == "p r"  # ties: first best
    assert not solve(BeamSearch(beam_width=1)).success
    beam = solve(BeamSearch(beam_width=2))
    assert beam.success and str(beam.best) == "q s" and beam.iterations == 2


def test_genetic_and_pso_succeed_on_an_easy_case_reproducibly() -> None:
    start = Text.from_string("good fine superb plot and great acting with a good cast")  # score 5
    table = {
        "good": ["bad", "nice"], "fine": ["poor", "okay"], "superb": ["dull", "super"],
        "great": ["awful", "big"], "plot": ["story"], "acting": ["play"], "cast": ["crew"],
    }
    for search in (GeneticSearch(seed=3), ParticleSwarmSearch(seed=3)):
        results = []
        for _ in range(2):
            layer = QueryLayer(LEXICON)
            problem = Problem(start, UntargetedClassification(layer, 1), DictSource(table))
            results.append((search.search(start, problem), layer.queries))
        (outcome, queries), (again, queries_again) = results
        assert outcome.success, search
        assert LEXICON.score(outcome.best) < 0 and start.l0(outcome.best) >= 3
        assert (outcome.best, queries) == (again.best, queries_again)


def test_different_seeds_explore_differently() -> None:
    fake = default_fake_problem()
    start = fake.hard_text
    seen = set()
    for seed in range(4):
        fake = default_fake_problem()
        with fake.budgeted(start, None) as problem:
            GeneticSearch(seed=seed, pop_size=10, max_iters=3).search(start, problem)
        seen.add(tuple(fake.calls))
    assert len(seen) > 1


# ---- budget --------------------------------------------------------------------------------------
def test_greedy_spends_the_rest_of_the_budget_on_a_prefix_and_reports_it() -> None:
    problem, layer, goal = lexicon_problem()
    with layer.budget(6) as budget:
        problem = Problem(START, goal, DictSource(TABLE), budget=budget)
        outcome = GreedySearch().search(START, problem)
    # 1 (start) + 4 (ranking) leave 1: position 0's batch of 2 is refused, its first
    # text ("nice", score 2) is scored, and it is the best text evaluated.
    assert outcome.budget_exhausted and not outcome.success
    assert str(outcome.best) == "nice acting, great story, fine music"
    assert layer.queries == 6 and budget.used == 6


@pytest.mark.parametrize("name", ALL)
def test_a_zero_budget_returns_the_start_unevaluated(name: str) -> None:
    fake = default_fake_problem()
    start = fake.texts[0]
    with fake.budgeted(start, 0) as problem:
        outcome = build(name).search(start, problem)
    assert outcome.best == start and outcome.budget_exhausted and math.isnan(outcome.score)
    assert fake.queries == 0


# ---- batching ------------------------------------------------------------------------------------
def test_each_step_is_one_evaluate_call() -> None:
    fake = default_fake_problem()
    start = fake.texts[0]
    with fake.budgeted(start, None) as problem:
        outcome = BeamSearch(beam_width=3).search(start, problem)
    assert len(fake.calls) == 1 + outcome.iterations  # the start, then one call per depth
    for name in ("genetic", "pso"):
        fake = default_fake_problem()
        with fake.budgeted(fake.hard_text, None) as problem:
            outcome = build(name).search(fake.hard_text, problem)
        # start, first population, then at most two calls per generation / iteration
        assert len(fake.calls) <= 2 + 2 * outcome.iterations
        assert max(fake.calls) > 1


def test_best_index_prefers_success_then_score_then_first() -> None:
    assert best_index(np.array([False, True, True]), np.array([0.9, 0.5, 0.6])) == 2
    assert best_index(np.array([False, False]), np.array([0.3, 0.3])) == 0


def test_admissible_replays_position_constraints_and_checks_text_constraints() -> None:
    fake = default_fake_problem()
    fake.position_constraints = (MaxChanges(1),)
    fake.constraints = (NotBoth("bad", "awful"),)
    start = fake.texts[0]
    problem = fake.problem(start)
    one = start.replace(1, "bad")
    two = one.replace(4, "grand")
    assert admissible(problem, start, start, one)
    assert not admissible(problem, start, one, two)  # two changes under MaxChanges(1)
    fake.position_constraints = ()
    problem = fake.problem(start)
    assert admissible(problem, start, one, two)
    assert not admissible(problem, start, one, one.replace(4, "awful"))


def test_the_budget_prefix_counts_the_goals_cost_per_text() -> None:
    """A goal whose texts cost two queries each (second-order: the text and its patched
    twin): when the budget refuses a batch, the prefix that still fits is scored."""
    from textrobust.attack.problem import Evaluation
    from textrobust.attack.searches.base import Run
    from textrobust.errors import QueryBudgetExceeded

    class TwoQueryGoal:
        queries_per_text = 2

        def __init__(self, layer: QueryLayer) -> None:
            self.layer = layer

        def evaluate(self, texts):  # type: ignore[no-untyped-def]
            twins = [Text.from_string(str(t) + " twin") for t in texts]
            probs = self.layer.probabilities([*texts, *twins])[: len(texts)]
            return Evaluation(probs[:, 0], np.zeros(len(texts), dtype=bool), probs)

    victim = KeywordVictim({"negative": ["bad"], "positive": ["good"]})
    layer = QueryLayer(victim)
    start = Text.from_string("a film")
    problem = Problem(start, TwoQueryGoal(layer), DictSource({}))
    with layer.budget(5):
        run = Run(start, problem)
        with pytest.raises(QueryBudgetExceeded):
            run.evaluate([Text.from_string(f"a bad film {i}") for i in range(4)])  # 8 queries: refused
        assert layer.queries == 4  # the prefix of 5 // 2 = 2 texts was scored, not 5 texts (10 queries)
    assert run.best != start


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.floats(0.0, 1e3, allow_nan=False), min_size=1, max_size=60).filter(lambda w: sum(w) > 0),
    st.integers(0, 2**32 - 1),
)
def test_weighted_index_is_numpy_choice_draw_for_draw(weights: list[float], seed: int) -> None:
    # the genetic search's position draw: same answers and same stream as rng.choice(p=...)
    from textrobust.attack.searches.population import weighted_index

    w = np.asarray(weights, dtype=np.float64)
    ours, numpys = np.random.default_rng(seed), np.random.default_rng(seed)
    for _ in range(5):
        assert weighted_index(ours, w) == int(numpys.choice(len(w), p=w / w.sum()))
    assert ours.random() == numpys.random()


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(st.booleans(), st.one_of(st.floats(0.0, 1.0), st.sampled_from([0.0, 0.5, 1.0, float("nan")]))),
        min_size=1,
        max_size=30,
    )
)
def test_best_of_on_lists_agrees_with_best_index(pairs: list[tuple[bool, float]]) -> None:
    from textrobust.attack.searches.base import best_index, best_of

    success = [s for s, _ in pairs]
    scores = [v for _, v in pairs]
    assert best_of(success, scores) == best_index(np.array(success), np.array(scores))
