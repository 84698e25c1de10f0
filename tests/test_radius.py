"""Robustness radius (Yang et al. 2022): the space, PDP, the prover, PR, the analysis.

Soundness is checked against brute force on toy victims whose every prediction can be
enumerated: a certified Omega_r holds no adversarial text; PDP's bound is never below the
true minimum; PR_hat falls within eps of the exact PR at the rate Hoeffding promises.
Everything here is offline and fast (no WordNet, vectors or trained models), except the
tests marked heavy.
"""

from __future__ import annotations

import itertools
import json
import math
import random
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from textrobust.analyses.protocol import Failure, WorkerContext
from textrobust.analyses.radius.analysis import PRMetricAnalysis, PRRecord, RadiusBoundsAnalysis, RadiusRecord
from textrobust.attack.goals import TargetedClassification, UntargetedClassification
from textrobust.attack.problem import Problem
from textrobust.attack.searches import SEARCHES
from textrobust.attack.searches.search_testing import DictSource, FakeProblem, check_search, default_fake_problem
from textrobust.data.examples import Dataset, Example
from textrobust.embeddings import WordVectors
from textrobust.errors import ConfigError, TextRobustError
from textrobust.analyses.radius import (
    Bounds,
    CleanedSynonyms,
    ExhaustiveProver,
    ExhaustiveSearch,
    MethodOutcome,
    ModificationCap,
    OptimalityRow,
    PerturbationSpace,
    PRAnalysis,
    PRConfig,
    PREstimate,
    PRMetricSettings,
    PRResult,
    Proof,
    ProverOutcome,
    PseudoDynamicProgramming,
    RadiusAnalysis,
    RadiusBoundsSettings,
    RadiusResult,
    RadiusVerdict,
    Sensitivity,
    SpaceSource,
    Verdict,
    YieldCurves,
    attack_table,
    build_space,
    certified_table,
    estimate_pr,
    falsified_share,
    hoeffding_epsilon,
    hoeffding_samples,
    modification_cap,
    pr_summary,
    sensitivity_order,
    space_from_problem,
    yield_curves,
)
from textrobust.analyses.radius.method import space_of
from textrobust.records import decode, encode
from textrobust.text import Text
from textrobust.victims.function import FunctionVictim
from textrobust.victims.protocol import Capabilities
from textrobust.victims.query import QueryLayer
from textrobust.victims.testing import KeywordVictim, WordListVictim


# ---- toy worlds -----------------------------------------------------------------------------------
class World:
    """A random toy victim over a random space, small enough to enumerate: each word has a
    weight; some pairs of substitutes interact (so the victim is not additive); the label
    is the original's prediction."""

    def __init__(self, seed: int, *, positions: int | None = None, labels: int = 2) -> None:
        rng = np.random.default_rng(seed)
        n = int(positions or rng.integers(3, 7))
        self.text = Text.from_string(" ".join(f"w{i}" for i in range(n)) + ".")
        table: dict[str, list[str]] = {}
        for i in range(n):
            k = int(rng.integers(0, 4))
            if k:
                table[f"w{i}"] = [f"s{i}x{j}" for j in range(k)]
        self.table = table
        vocab = [w for i in range(n) for w in [f"w{i}", *table.get(f"w{i}", [])]]
        self.weights = {w: rng.normal(0.0, 1.0, labels) for w in vocab}
        subs = [w for w in vocab if w.startswith("s")]
        self.pairs = {
            (a, b): rng.normal(0.0, 2.5, labels)
            for a, b in itertools.combinations(subs, 2)
            if rng.random() < 0.3
        }
        names = tuple(f"l{j}" for j in range(labels))
        self.victim = FunctionVictim(self._logits, names, outputs="logits", name=f"world{seed}")
        self.label = int(self.victim.probabilities([self.text])[0].argmax())
        self.source = DictSource(table)
        self.space = build_space(self.text, self.source)

    def _logits(self, strings: list[str]) -> np.ndarray:
        out = []
        for s in strings:
            words = set(s.rstrip(".").split())
            z = sum((self.weights[w] for w in words), np.zeros_like(next(iter(self.weights.values()))))
            for (a, b), v in self.pairs.items():
                if a in words and b in words:
                    z = z + v
            out.append(z)
        return np.array(out)

    def omega(self) -> list[Text]:
        """Every text of Omega(X), by brute force over the candidate sets."""
        sets = self.space.candidate_sets()
        out = []
        for words in itertools.product(*sets.values()):
            out.append(self.text.replace(dict(zip(sets, words))) if sets else self.text)
        return out

    def min_adversarial(self) -> float:
        """The fewest substitutions of an adversarial text (inf if none)."""
        texts = self.omega()
        predicted = self.victim.probabilities(texts).argmax(axis=1)
        l0 = [self.text.l0(t) for t, p in zip(texts, predicted) if p != self.label]
        return min(l0, default=math.inf)

    def goal(self, layer: QueryLayer | None = None) -> UntargetedClassification:
        return UntargetedClassification(layer or QueryLayer(self.victim), self.label)

    def problem(self, tau: float = 1.0) -> Problem:
        return Problem(self.text, self.goal(), SpaceSource(self.space), position_constraints=(ModificationCap(tau),))


WORLDS = range(40)


# ---- the space ---------------------------------------------------------------------------------------
def test_space_sizes_and_layers_match_brute_force() -> None:
    for seed in range(25):
        world = World(seed)
        space, omega = world.space, world.omega()
        assert space.size() == len(omega) == len(set(omega))
        by_l0 = Counter(world.text.l0(t) for t in omega)
        for k in range(space.m + 2):
            layer = list(space.layer(k))
            assert len(layer) == space.layer_size(k) == by_l0.get(k, 0)
            assert len(set(layer)) == len(layer)
            assert all(world.text.l0(t) == k for t in layer)
            assert space.size(k) == sum(by_l0.get(j, 0) for j in range(k + 1))
            ball = set(space.ball(k))
            assert ball == {t for t in omega if world.text.l0(t) <= k}
            assert all(space.contains(t, k) for t in ball)


def test_unrank_is_a_bijection_onto_omega_r() -> None:
    for seed in range(15):
        space = World(seed).space
        for r in range(space.m + 1):
            texts = {space.text(space.unrank(i, r)) for i in range(space.size(r))}
            assert texts == set(space.ball(r))
        with pytest.raises(ConfigError):
            space.unrank(space.size(1), 1)


def test_exact_big_integer_sizes() -> None:
    n = 60
    text = Text.from_string(" ".join(f"w{i}" for i in range(n)))
    subs = tuple(tuple(f"{c}{i}" for c in "abcde") for i in range(n))
    space = PerturbationSpace(text, tuple(range(n)), subs)
    assert space.size() == 6**60  # > 2**155: no float could hold it exactly
    assert space.size(3) == sum(math.comb(60, k) * 5**k for k in range(4))
    assert space.layer_size(60) == 5**60
    assert space.size(100) == space.size()
    rng = random.Random(0)
    sample = space.sample(30, 5, rng)
    assert all(space.contains(t, 30) for t in sample)


def test_sampling_is_uniform_on_omega_r() -> None:
    text = Text.from_string("a b c d")
    space = PerturbationSpace(text, (0, 1, 3), (("x",), ("y", "z"), ("u", "v", "w")))
    r = 2
    size = space.size(r)  # 1 + 6 + 11 = 18
    draws = 18_000
    counts = Counter(space.sample(r, draws, random.Random(7)))
    assert set(counts) == set(space.ball(r)) and len(counts) == size
    expected = draws / size
    chi2 = sum((c - expected) ** 2 / expected for c in counts.values())
    assert chi2 < 50.0  # 17 degrees of freedom: p < 1e-4 beyond 45


def test_space_validation_and_sources() -> None:
    text = Text.from_string("a good film")
    with pytest.raises(ConfigError):
        PerturbationSpace(text, (1,), (("good",),))  # the original word is not a substitute
    with pytest.raises(ConfigError):
        PerturbationSpace(text, (1,), ((),))
    with pytest.raises(ConfigError):
        PerturbationSpace(text, (2, 1), (("movie",), ("fine",)))
    space = build_space(text.freeze([2]), DictSource({"good": ["fine", "nice", "fine"], "film": ["movie"]}))
    assert space.positions == (1,) and space.substitutes == (("fine", "nice"),)  # frozen 2 left out, deduped
    source = SpaceSource(space)
    assert [s.word for s in source.candidates(text.replace(1, "nice"), [0, 1, 2])[1]] == ["good", "fine"]
    with pytest.raises(ConfigError):
        source.candidates(Text.from_string("short"), [0])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 3), min_size=0, max_size=5), st.integers(0, 6))
def test_size_is_the_sum_of_elementary_symmetric_polynomials(counts: list[int], r: int) -> None:
    text = Text.from_string(" ".join(f"w{i}" for i in range(len(counts))) or "...")
    subs = tuple(tuple(f"s{i}{j}" for j in range(c)) for i, c in enumerate(counts))
    space = PerturbationSpace(text, tuple(range(len(counts))), subs)
    expected = sum(
        math.prod(counts[i] for i in chosen) for k in range(min(r, len(counts)) + 1)
        for chosen in itertools.combinations(range(len(counts)), k)
    )
    assert space.size(r) == expected == sum(1 for _ in space.ball(r))


# ---- the cap --------------------------------------------------------------------------------------
def test_modification_cap_is_floor_of_tau_n() -> None:
    assert modification_cap(Text.from_string("a b c"), 0.25) == 0
    assert modification_cap(Text.from_string("a b c d"), 0.25) == 1
    assert modification_cap(Text.from_string(" ".join("x" * 12)), 0.25) == 3
    assert modification_cap(Text.from_pair("p q r s", "a b c d e f g h"), 0.25) == 2  # hypothesis only
    text = Text.from_string("a b c d e f g h")
    assert ModificationCap(0.25).allowed(text, text.replace(0, "z"), frozenset({1, 2})) == {1, 2}
    assert ModificationCap(0.25).allowed(text, text.replace({0: "z", 1: "y"}), frozenset({2})) == frozenset()
    with pytest.raises(ConfigError):
        modification_cap(text, 0.0)


# ---- the prover: soundness against brute force ----------------------------------------------------
@pytest.mark.parametrize("labels", [2, 3])
def test_prover_verdicts_match_brute_force(labels: int) -> None:
    prover = ExhaustiveProver(batch_size=5)
    seen: Counter[Verdict] = Counter()
    for seed in WORLDS:
        world = World(seed, labels=labels)
        omega = world.omega()
        predicted = world.victim.probabilities(omega).argmax(axis=1)
        truth = world.min_adversarial()
        order = sensitivity_order(world.space, "delete", evaluate=world.goal().evaluate)
        proofs = prover.prove_radii(world.space, world.goal().evaluate, world.space.m + 1, order=order)
        assert [p.radius for p in proofs] == list(range(world.space.m + 2))
        for proof in proofs:
            seen[proof.verdict] += 1
            ball = [p for t, p in zip(omega, predicted) if world.text.l0(t) <= proof.radius]
            if proof.verdict is Verdict.CERTIFIED:
                # every text of the certified Omega_r keeps its label, and all were checked
                assert all(p == world.label for p in ball)
                assert proof.checked == proof.size == len(ball)
            else:
                assert proof.verdict is Verdict.FOUND
                assert truth <= proof.radius
                adv = proof.adversarial
                assert adv is not None and world.space.contains(adv, proof.radius)
                assert world.victim.probabilities([adv])[0].argmax() != world.label
                assert proof.adversarial_l0 == truth  # layers go up one by one: the minimum
        assert all((p.verdict is Verdict.FOUND) == (truth <= p.radius) for p in proofs)
    assert seen[Verdict.CERTIFIED] > 20 and seen[Verdict.FOUND] > 20  # both verdicts exercised


def test_prover_batches_and_stops_at_the_first_adversarial() -> None:
    world = next(w for w in (World(s, positions=6) for s in WORLDS) if 1 <= w.min_adversarial() <= 2)
    calls: list[int] = []
    goal = world.goal()

    def evaluate(texts: Sequence[Text]):  # type: ignore[no-untyped-def]
        calls.append(len(texts))
        return goal.evaluate(texts)

    proof = ExhaustiveProver(batch_size=4).prove(world.space, evaluate, world.space.m)
    assert proof.verdict is Verdict.FOUND
    assert all(1 <= c <= 4 for c in calls)
    assert sum(calls) == proof.checked < world.space.size()


def test_prover_limits_give_unknown_never_certified() -> None:
    world = next(w for w in (World(s, positions=6) for s in WORLDS) if w.min_adversarial() == math.inf)
    space = world.space
    assert space.size() > 8
    timed = ExhaustiveProver(time_limit=1e-9).prove(space, world.goal().evaluate, 3)
    assert timed.verdict is Verdict.UNKNOWN and timed.reason == "time limit"
    capped = ExhaustiveProver(max_texts=5, batch_size=2).prove_radii(space, world.goal().evaluate, 3)
    assert [p.verdict for p in capped][-1] is Verdict.UNKNOWN and capped[-1].reason == "text limit"
    assert all(p.checked <= 5 for p in capped)
    layer = QueryLayer(world.victim)
    with layer.budget(3):
        budgeted = ExhaustiveProver(batch_size=2).prove(space, world.goal(layer).evaluate, 3)
    assert budgeted.verdict is Verdict.UNKNOWN and budgeted.reason == "query budget"
    full = ExhaustiveProver().prove(space, world.goal().evaluate, space.m)
    assert full.verdict is Verdict.CERTIFIED and full.checked == space.size()


class _LinearGradientVictim:
    """Two labels; logit(pos) = sum of word weights; word gradients = the weight."""

    def __init__(self, weights: dict[str, float]) -> None:
        self.weights = weights
        self.label_names = ("neg", "pos")
        self.capabilities = Capabilities(gradients=True)

    def probabilities(self, texts: Sequence[Text]) -> np.ndarray:
        z = np.array([sum(self.weights.get(w, 0.0) for w in t.words) for t in texts])
        p = 1 / (1 + np.exp(-z))
        return np.stack([1 - p, p], axis=1)

    def word_gradients(self, texts: Sequence[Text], labels: Sequence[int]) -> list[np.ndarray]:
        return [np.array([[self.weights.get(w, 0.0), 0.0] for w in t.words]) for t in texts]


def test_sensitivity_orders() -> None:
    text = Text.from_string("good plot and great acting")
    space = PerturbationSpace(text, (0, 1, 3, 4), (("fine",), ("story",), ("big",), ("play",)))
    victim = _LinearGradientVictim({"good": 0.5, "great": 2.0, "plot": -0.1, "acting": 1.0})
    grads = sensitivity_order(space, "gradient", gradients=lambda t: victim.word_gradients([t], [1])[0])
    assert grads == (3, 4, 0, 1)
    goal = UntargetedClassification(QueryLayer(victim), 1)
    assert sensitivity_order(space, "delete", evaluate=goal.evaluate) == (3, 4, 0, 1)
    assert sensitivity_order(space, "text") == space.positions
    with pytest.raises(ConfigError):
        sensitivity_order(space, "gradient")
    with pytest.raises(ConfigError):
        sensitivity_order(space, "nonsense")


# ---- PDP --------------------------------------------------------------------------------------------
def test_pdp_keeps_the_search_contract() -> None:
    assert "batching" in check_search(PseudoDynamicProgramming())
    assert "budget" in check_search(PseudoDynamicProgramming(top_k=2, lookahead_samples=1))


def test_exhaustive_search_keeps_the_contract_and_is_minimal() -> None:
    assert "deterministic" in check_search(ExhaustiveSearch())
    for seed in WORLDS:
        world = World(seed)
        outcome = ExhaustiveSearch().search(world.text, world.problem())
        truth = world.min_adversarial()
        assert outcome.success == (truth < math.inf)
        if outcome.success:
            assert world.text.l0(outcome.best) == truth


@pytest.mark.parametrize("labels", [2, 3])
def test_pdp_bound_is_never_below_the_brute_force_minimum(labels: int) -> None:
    found = 0
    for seed in WORLDS:
        world = World(seed, labels=labels)
        truth = world.min_adversarial()
        outcome = PseudoDynamicProgramming(tau=1.0, top_k=3).search(world.text, world.problem())
        if outcome.success:
            found += 1
            adv = outcome.best
            assert world.space.contains(adv)
            assert world.victim.probabilities([adv])[0].argmax() != world.label
            assert world.text.l0(adv) >= truth
        else:
            assert world.text.l0(outcome.best) >= 0
    assert found >= 5


def test_pdp_finds_the_minimum_on_a_linear_victim_and_respects_tau() -> None:
    victim = WordListVictim(["good", "great", "fine", "superb"], ["bad", "awful", "poor", "dull"])
    text = Text.from_string("good acting, great story, fine music and superb sets in a long film")
    table = {"good": ["nice", "bad"], "great": ["big", "awful"], "fine": ["okay", "poor"], "superb": ["dull"]}
    space = build_space(text, DictSource(table))
    layer = QueryLayer(victim)
    problem = Problem(text, UntargetedClassification(layer, 1), SpaceSource(space),
                      position_constraints=(ModificationCap(0.25),))
    outcome = PseudoDynamicProgramming().search(text, problem)
    assert outcome.success and text.l0(outcome.best) == 2  # score 4: two swaps reach 0 (a tie, label 0)
    tight = PseudoDynamicProgramming(tau=0.1).search(text, problem)  # cap floor(0.1 * 14) = 1
    assert not tight.success and text.l0(tight.best) <= 1


def test_pdp_targeted() -> None:
    victim = KeywordVictim({"sport": ["goal", "match"], "politics": ["vote", "law"], "arts": ["film", "song"]})
    text = Text.from_string("a goal in the match of the season with a late goal")
    space = build_space(text, DictSource({"goal": ["vote", "song"], "match": ["law", "film"]}))
    layer = QueryLayer(victim)
    problem = Problem(text, TargetedClassification(layer, 2), SpaceSource(space))
    outcome = PseudoDynamicProgramming(tau=1.0).search(text, problem)
    assert outcome.success
    assert victim.probabilities([outcome.best])[0].argmax() == 2


def test_searches_on_a_space_source_never_leave_omega() -> None:
    for seed in range(12):
        world = World(seed, positions=6)
        for name in ("greedy", "pso", "beam"):
            settings_ = {"pop_size": 8, "max_iters": 4} if name == "pso" else {}
            outcome = SEARCHES.get(name)(**settings_).search(world.text, world.problem(tau=0.5))
            assert world.space.contains(outcome.best, modification_cap(world.text, 0.5))


def test_space_from_problem_reads_the_problem() -> None:
    fake: FakeProblem = default_fake_problem()
    start = fake.texts[0]
    space = space_from_problem(fake.problem(start))
    assert space.positions == (1, 2, 4, 5, 8, 9)  # good film great acting fine plot
    assert space.substitutes_at(1) == ("nice", "bad", "decent", "fine")


# ---- PR -----------------------------------------------------------------------------------------------
def test_hoeffding_sample_size() -> None:
    assert hoeffding_samples(0.025, 0.005) == 4794  # ln(400) / 0.00125 = 4793.2; the paper rounds to 5000
    assert hoeffding_samples(0.1, 0.05) == 185
    assert hoeffding_epsilon(4794, 0.005) < 0.025
    with pytest.raises(ConfigError):
        hoeffding_samples(0.0, 0.1)


def _exact_pr(world: World, r: int) -> float:
    texts = [t for t in world.omega() if world.text.l0(t) <= r]
    return float(np.mean(world.victim.probabilities(texts).argmax(axis=1) == world.label))


def test_pr_exact_mode_equals_brute_force() -> None:
    for seed in range(20):
        world = World(seed)
        r = max(world.space.m - 1, 0)
        estimate = estimate_pr(world.space, world.goal().evaluate, random.Random(0), PRConfig(), radius=r)
        assert estimate.exact and estimate.evaluated == world.space.size(r)
        assert estimate.pr == pytest.approx(_exact_pr(world, r)) and estimate.low == estimate.high == estimate.pr


def test_pr_hat_is_within_eps_at_the_stated_rate() -> None:
    eps, delta, repeats = 0.1, 0.1, 150
    config = PRConfig(epsilon=eps, delta=delta, exact_limit=0)
    worlds = [w for w in (World(s, positions=6) for s in WORLDS) if 0.2 < _exact_pr(w, 3) < 0.9][:2]
    assert worlds
    for world in worlds:
        truth = _exact_pr(world, 3)
        layer = QueryLayer(world.victim)  # cached: repeated draws cost nothing
        goal = world.goal(layer)
        misses = 0
        for seed in range(repeats):
            estimate = estimate_pr(world.space, goal.evaluate, random.Random(seed), config, radius=3)
            assert not estimate.exact and estimate.evaluated == hoeffding_samples(eps, delta)
            misses += abs(estimate.pr - truth) >= eps
            assert estimate.low <= estimate.pr <= estimate.high
        # Hoeffding promises at most delta; allow binomial noise above it (P(Bin(150, .1) > 27) < 1%)
        assert misses <= 27


def test_pr_radius_defaults_to_a_quarter_of_the_length() -> None:
    world = World(3, positions=8)
    estimate = estimate_pr(world.space, world.goal().evaluate, random.Random(0))
    assert estimate.radius == 2


# ---- candidate cleaning -------------------------------------------------------------------------------
def test_cleaned_synonyms_rank_by_cosine_and_keep_eta() -> None:
    words = ["good", "great", "fine", "nice", "bad", "decent", "film", "movie", "the"]
    vectors = WordVectors(words, np.array([
        [1.0, 0.0], [0.95, 0.1], [0.8, 0.3], [0.9, 0.2], [-1.0, 0.1], [0.6, 0.8], [0.0, 1.0], [0.1, 1.0], [0.7, 0.7],
    ]))
    base = DictSource({"good": ["bad", "decent", "fine", "nice", "great", "unknownword"], "the": ["fine"],
                       "film": ["movie"]})
    source = CleanedSynonyms(base, vectors, eta=3, min_cos=0.5, stop_words={"the"})
    found = source.candidates(Text.from_string("the good film"), [0, 1, 2])
    assert [s.word for s in found[1]] == ["great", "nice", "fine"]  # bad (cos < 0.5) and unknownword dropped
    assert found[1][0].score == pytest.approx(vectors.cosine("good", "great"))
    assert 0 not in found  # a stop word
    assert [s.word for s in found[2]] == ["movie"]
    loose = CleanedSynonyms(base, vectors, eta=10, min_cos=None, skip_stop_words=False)
    assert [s.word for s in loose.candidates(Text.from_string("the good film"), [1])[1]][-1] == "bad"
    assert "eta=3" in repr(source)


# ---- the analysis ---------------------------------------------------------------------------------------
def _toy_examples(n: int = 12) -> tuple[WordListVictim, DictSource, list[Example]]:
    victim = WordListVictim(["good", "great", "fine", "superb", "lovely"], ["bad", "awful", "dull", "poor", "weak"])
    source = DictSource({"good": ["nice", "bad", "decent"], "great": ["grand", "awful"], "fine": ["okay", "poor"],
                         "superb": ["dull", "super"], "film": ["movie", "picture"], "plot": ["story"],
                         "acting": ["performance"]})
    texts = [
        "A good film with great acting and a fine plot, superb.",
        "Good, great and fine: a superb and lovely film with good acting.",
        "A good film.",
        "A bad film with awful acting.",
        "The plot is fine but the acting is good and the film is great.",
        "Lovely and superb and great and good, a film for all.",
    ]
    examples = [Example(f"ex{i}", Text.from_string(t), 1) for i, t in enumerate(texts)][:n]
    return victim, source, examples


def _pdp(l0: int | None, words: int = 10) -> MethodOutcome:
    return MethodOutcome(l0 is not None, l0, None if l0 is None else l0 / words, 1.0, 5, None)


def _result(methods: dict[str, int | None] | None, *, cap: int = 3, prover: ProverOutcome | None = None,
            label: int = 1, predicted: int = 1) -> RadiusResult:
    text = Text.from_string("w0 w1 w2 w3 w4 w5 w6 w7 w8 w9")
    outcomes = None if methods is None else {name: _pdp(l0) for name, l0 in methods.items()}
    return RadiusResult("x", text, label, 10, predicted, 0, cap, None, outcomes, prover)


def _prover(lower: int, upper: int | None, verdicts: Sequence[tuple[str, float]] = (),
            proofs: Sequence[Proof] = ()) -> ProverOutcome:
    return ProverOutcome(Sensitivity.DELETE, (), tuple(proofs),
                         tuple(RadiusVerdict(r, Verdict(v), "prover", s) for r, (v, s) in enumerate(verdicts, 1)),
                         Bounds(lower, upper, upper is not None and lower == upper, False), 0, 0.0, 0.0)


def test_radius_analysis_bounds_are_sound() -> None:
    victim, source, examples = _toy_examples()
    analysis = RadiusAnalysis(victim, RadiusBoundsSettings(pso_pop=8, pso_iters=4, max_radius=3), source=source)
    queries = 0
    for example in examples:
        result = analysis.analyse(example)
        queries += result.queries
        if result.skipped:
            assert not result.correct and result.methods is None
            continue
        space = build_space(example.text, source)
        texts = list(space.ball())
        predicted = victim.probabilities(texts).argmax(axis=1)
        truth = min((example.text.l0(t) for t, p in zip(texts, predicted) if p != 1), default=math.inf)
        radius = truth - 1  # the maximum robustness radius R (inf when robust everywhere)
        assert result.prover is not None and result.methods is not None and result.cap is not None
        bounds = result.prover.bounds
        assert bounds.lower <= radius
        assert bounds.robust_everywhere == (truth == math.inf and space.m <= 3)
        if bounds.upper is not None:
            assert radius <= bounds.upper
        for verdict in result.prover.verdicts:
            assert (verdict.verdict is Verdict.FOUND) == (verdict.r >= truth) or verdict.verdict is Verdict.UNKNOWN
        for name, outcome in result.methods.items():
            if outcome.success:
                assert outcome.l0 is not None and truth <= outcome.l0 <= result.cap, name
                assert outcome.perturbed is not None and example.text.l0(outcome.perturbed) == outcome.l0
        assert result.space is not None and result.space.size == space.size()
        assert result.space.size_by_radius == tuple(space.size(r) for r in (1, 2, 3))
        assert space_of(result).candidate_sets() == space.candidate_sets()
    assert queries > 0


def _context(victim: Any) -> WorkerContext:
    return WorkerContext(layer=QueryLayer(victim), label_names=tuple(victim.label_names), seed=0)


def test_radius_records_round_trip_through_the_codec() -> None:
    victim, source, examples = _toy_examples()
    analysis = RadiusBoundsAnalysis({"pso_pop": 8, "pso_iters": 4, "max_radius": 3}, source=source)
    analyse = analysis.worker(_context(victim))
    records = [analyse(e) for e in examples]
    assert {r.status for r in records} == {"analysed", "skipped"}
    for record in records:
        assert decode(RadiusRecord, json.loads(json.dumps(encode(record)))) == record
    pr = PRMetricAnalysis({"epsilon": 0.1, "delta": 0.1}, source=source).worker(_context(victim))
    for record in (pr(e) for e in examples):
        assert decode(PRRecord, json.loads(json.dumps(encode(record)))) == record


def test_radius_summary_and_section_on_a_toy_victim() -> None:
    victim, source, examples = _toy_examples()
    analysis = RadiusBoundsAnalysis({"pso_pop": 8, "pso_iters": 4}, source=source)
    analyse = analysis.worker(_context(victim))
    records = [analyse(e) for e in examples]
    failures = [Failure("boom", "ValueError", "planted")]
    summary = analysis.summarise(records, failures)
    attacked = sum(1 for r in records if r.status == "analysed")
    assert (summary.units, summary.ok, summary.errors) == (len(examples) + 1, len(examples), 1)
    assert summary.attacked == attacked and summary.skipped == len(examples) - attacked
    assert [row.r for row in summary.table3] == [1, 2, 3, 4]
    for row in summary.table3:
        assert row.found + row.certified + row.unknown == attacked
    assert summary.falsified_r1 == pytest.approx(summary.table3[0].found_pct / 100)
    assert summary.queries == sum(r.queries for r in records) > 0
    section = analysis.section(summary, records, failures, victim.label_names).to_dict()
    assert section["risk"] == summary.falsified_r1
    assert all(f["svg"].startswith("<?xml") for f in section["figures"]) and len(section["figures"]) == 2
    for spec in section["tables"]:  # issue 15: the CLI prints these in 80 columns
        assert len(spec["columns"]) <= 8 and all(len(str(c)) <= 10 for c in spec["columns"])
    empty = analysis.summarise([], [])
    assert math.isnan(empty.falsified_r1) and math.isnan(empty.table2[0].succ_rate)
    assert analysis.section(empty, [], [], victim.label_names).risk is None


def test_pr_summary_shows_the_epsilon_of_the_actual_sample_size() -> None:
    # issue 16: N = 50 at delta = 0.005 guarantees eps = sqrt(ln(400) / 100) ~ 0.245, not 0.025
    analysis = PRMetricAnalysis({"samples": 50})
    summary = analysis.summarise([], [])
    assert summary.samples == 50 and summary.epsilon == pytest.approx(hoeffding_epsilon(50, 0.005))
    assert summary.epsilon == pytest.approx(0.2448, abs=1e-4) and not summary.guaranteed
    assert summary.samples_needed == 4794 and summary.epsilon_requested == 0.025
    section = analysis.section(summary, [], [], ("negative", "positive")).to_dict()
    eps = next(h for h in section["headline"] if h["label"].startswith("eps"))
    assert eps["value"] == summary.epsilon and "N = 50" in eps["label"]
    assert section["risk"] is None and math.isnan(summary.pr.mean_pr)
    default = PRMetricAnalysis().summarise([], [])
    assert default.samples == 4794 and default.guaranteed and default.epsilon < 0.025


def test_attack_table_counts_wins_and_substitutions() -> None:
    results = [_result({"pdp": 1, "greedy": 2}), _result({"pdp": 2, "greedy": 2}), _result({"pdp": 3, "greedy": None}),
               _result({"pdp": None, "greedy": 1}), _result(None, predicted=0)]
    table = {row.method: row for row in attack_table(results, ("pdp", "greedy"))}
    assert table["pdp"].succ == 3 and table["pdp"].wins == 2 and table["pdp"].succ_rate == 0.75
    assert table["greedy"].succ == 3 and table["greedy"].wins == 1
    assert table["pdp"].percent_substituted == pytest.approx(20.0)
    curves = yield_curves(results, ("pdp", "greedy"), 2)
    assert curves.radii == (0, 1, 2, 3)
    assert curves.methods["pdp"] == (100.0, 75.0, 50.0, 25.0)
    assert curves.methods["greedy"] == (100.0, 75.0, 25.0, 25.0)
    assert curves.certified is None
    assert falsified_share(results, 1) == 0.5 and math.isnan(falsified_share([], 1))


def test_certified_table_and_pr_summary() -> None:
    results = [_result({}, prover=_prover(1, 1, [("certified", 1.0), ("found", 3.0)])),
               _result({}, prover=_prover(0, 0, [("found", 2.0), ("found", 2.0)]))]
    table = certified_table(results, 2)
    assert table[0].certified_pct == 50.0 and table[0].found_pct == 50.0
    assert table[1].found == 2 and table[1].found_seconds == 2.5 and math.isnan(table[1].unknown_seconds)
    estimates = [PREstimate(2, 10, 10, 9, v, v, v, 0.0, 0.005, False, 0.1) for v in (0.95, 0.5, 1.0)]
    prs = [PRResult(f"p{i}", 1, 2, 1, 10, 2, e) for i, e in enumerate(estimates)]
    summary = pr_summary([*prs, PRResult("s", 1, 2, 0, 1)], 0.9)
    assert summary.scored == 3 and summary.above_threshold == 2 and summary.skipped == 1
    assert summary.quantiles["median"] == 0.95
    assert math.isnan(pr_summary([], 0.9).mean_pr)


def test_pr_analysis_on_a_toy_victim() -> None:
    victim, source, examples = _toy_examples()
    analysis = PRAnalysis(victim, PRMetricSettings(epsilon=0.1, delta=0.1), source=source)
    result = analysis.analyse(examples[1])
    assert not result.skipped and result.estimate is not None
    assert 0.0 <= result.estimate.low <= result.estimate.pr <= result.estimate.high <= 1.0
    assert result.estimate.radius == modification_cap(examples[1].text, 0.25)
    assert 1 < result.queries <= 1 + result.estimate.evaluated  # duplicates in one batch are sent once


def test_the_method_takes_the_analysis_settings_as_they_are() -> None:
    # one settings class per analysis: the per-example classes read the analysis's own
    # fields (no renamed copy); the seed is the run's, given next to them
    chosen = RadiusBoundsSettings(top_k=3, lookahead=2, pso_pop=7, pso_iters=5, tau=0.5, batch_size=9)
    method = RadiusAnalysis(None, chosen, source=DictSource({}), seed=11)
    assert method.settings is chosen
    pdp = method.search("pdp")
    assert isinstance(pdp, PseudoDynamicProgramming)
    assert (pdp.config.top_k, pdp.config.lookahead_samples, pdp.config.tau, pdp.config.seed) == (3, 2, 0.5, 11)
    assert "pop_size=7" in repr(method.search("pso")) and "max_iters=5" in repr(method.search("pso"))
    analysis = RadiusBoundsAnalysis(chosen)
    assert analysis._method(None, 11).search("pdp").config == pdp.config
    pr = PRMetricSettings(epsilon=0.1, delta=0.2, samples=30, fraction=0.5, exact_limit=4, batch_size=8)
    assert pr.pr_config() == PRConfig(epsilon=0.1, delta=0.2, samples=30, fraction=0.5, exact_limit=4, batch_size=8)
    assert PRAnalysis(None, pr, source=DictSource({}), seed=5).describe()["seed"] == 5


def test_settings_are_validated() -> None:
    with pytest.raises(ConfigError):
        RadiusBoundsSettings(methods=("pdp", "textbugger"))
    with pytest.raises(ConfigError):
        RadiusBoundsSettings(methods=("greedy",))  # the prover needs PDP's bound
    assert RadiusBoundsSettings(methods=("greedy",), prover=False).methods == ("greedy",)
    with pytest.raises(ConfigError):
        PRMetricSettings(epsilon=0.0)
    with pytest.raises(TextRobustError):
        ExhaustiveProver(batch_size=0)
    for bad in ({"batch_size": 0}, {"prover_batch": 0}, {"methods": ("greedy",)}, {"time_limit": 0.0},
                {"unknown": 1}):
        with pytest.raises(ConfigError):
            RadiusBoundsAnalysis(bad)
    assert RadiusBoundsAnalysis({"methods": ("greedy",), "prover": False}).settings.methods == ("greedy",)
    for bad in ({"threshold": 1.5}, {"samples": 0}, {"batch_size": 0}):
        with pytest.raises(ConfigError):
            PRMetricAnalysis(bad)


def test_plots_are_written(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from textrobust.analyses.radius.plots import pr_violin, substitution_scatter, yield_plot

    violin = pr_violin({"bow": [0.9, 1.0, 0.5], "cnn": [0.8, 0.99]}, tmp_path / "v.png")
    curve = yield_plot(YieldCurves((0, 1, 2), {"pdp": (100.0, 60.0, 40.0)}, (100.0, 50.0, 30.0)), tmp_path / "c.png")
    scatter = substitution_scatter([_result({"pdp": 1, "greedy": 2})], tmp_path / "s.png")
    assert all(p.stat().st_size > 1000 for p in (violin, curve, scatter))
    with pytest.raises(ConfigError):
        pr_violin({}, tmp_path / "empty.png")


def test_cli_registers_radius_and_pr(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import typer
    from typer.testing import CliRunner

    from textrobust.cli.generated import register

    app = typer.Typer()
    register(app)  # every analysis's command, radius and pr among them
    runner = CliRunner()
    assert "--max-radius" in runner.invoke(app, ["radius", "--help"]).output
    result = runner.invoke(app, ["pr", "--help"])
    assert result.exit_code == 0 and "--epsilon" in result.output
    bad = runner.invoke(app, ["radius", "--methods", "pdp,nonsense", "--n", "1", "--out", str(tmp_path / "a")])
    assert bad.exit_code == 2 and "--methods" in bad.output
    # issue 16: validated up front, never stored as one error per example
    bad = runner.invoke(app, ["radius", "--batch-size", "0", "--n", "1", "--out", str(tmp_path / "b")])
    assert bad.exit_code == 2 and "--batch-size" in bad.output
    assert not (tmp_path / "b" / "store.sqlite").exists()
    bad = runner.invoke(app, ["pr", "--threshold", "2", "--n", "1", "--out", str(tmp_path / "c")])
    assert bad.exit_code == 2 and "--threshold" in bad.output


def test_an_audit_runs_radius_and_pr_and_resumes(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from textrobust import audit

    victim, source, examples = _toy_examples()
    data = Dataset("toy", tuple(examples), tuple(victim.label_names), split="test")
    radius = RadiusBoundsAnalysis({"pso_pop": 8, "pso_iters": 4, "n": 3}, source=source)
    pr = PRMetricAnalysis({"samples": 50, "n": 3}, source=source)
    first = audit.run(victim, data, [radius, pr], tmp_path, progress=False, report=False)
    assert first["radius"].computed == 3 and first["pr"].computed == 3
    radius = RadiusBoundsAnalysis({"pso_pop": 8, "pso_iters": 4}, source=source)
    pr = PRMetricAnalysis({"samples": 50}, source=source)
    extended = audit.run(victim, data, [radius, pr], tmp_path, progress=False, report=False, resume=True)
    assert extended["radius"].computed == len(examples) - 3 and extended["radius"].resumed == 3  # more n
    with pytest.raises(TextRobustError):  # a setting other than n differs from the stored run
        audit.run(victim, data, [RadiusBoundsAnalysis({"pso_pop": 9, "pso_iters": 4}, source=source)], tmp_path,
                  progress=False, report=False, resume=True)
    second = audit.run(victim, data, [radius, pr], tmp_path / "all", progress=False, report=False)
    assert second["radius"].computed == len(examples)
    again = RadiusBoundsAnalysis({"pso_pop": 8, "pso_iters": 4}, source=source)
    resumed = audit.run(victim, data, [again], tmp_path / "all", progress=False, report=False, resume=True)
    assert resumed["radius"].computed == 0 and resumed["radius"].resumed == len(examples)
    assert resumed["radius"].summary == second["radius"].summary
    s = second["pr"].summary
    assert s.samples == 50 and s.epsilon == pytest.approx(hoeffding_epsilon(50, 0.005))
    assert s.pr.scored + s.pr.skipped == len(examples)


# ---- heavy: real assets ----------------------------------------------------------------------------------
@pytest.mark.heavy
def test_radius_and_pr_on_the_default_victim(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from textrobust import audit

    settings = {"radius": {"n": 3, "pso_pop": 20, "pso_iters": 10, "max_radius": 3, "time_limit": 10.0},
                "pr": {"n": 3, "samples": 200}}
    result = audit.run("default", "rotten_tomatoes", settings, tmp_path, progress=False)
    assert result["radius"].summary.units == 3 and result["pr"].summary.units == 3
    assert result["radius"].summary.errors == 0 and result["pr"].summary.errors == 0
    assert (tmp_path / "summary.json").is_file() and (tmp_path / "report.json").is_file()


def test_exports_match_all() -> None:
    import textrobust.analyses.radius as radius

    assert all(getattr(radius, name) is not None for name in radius.__all__)
    public = {n for n in dir(radius) if not n.startswith("_") and type(getattr(radius, n)).__name__ != "module"}
    assert public - {"annotations"} == set(radius.__all__)
    assert {name for name, _, _ in radius.SEARCH_ENTRIES} == {"pdp", "exhaustive"}


def test_optimality_table_against_the_prover() -> None:
    from textrobust.analyses.radius import optimality_table

    found = Proof(2, Verdict.FOUND, 10, 10, 0.1, None, 2)
    results = [
        _result({"pdp": 2, "greedy": 3}, prover=_prover(1, 1)),
        _result({"pdp": None, "greedy": None}, prover=_prover(1, 1, proofs=[found])),
        _result({"pdp": 1, "greedy": None}, prover=_prover(2, 0)),
    ]
    table = {row.method: row for row in optimality_table(results, ("pdp", "greedy"))}
    assert table["pdp"] == OptimalityRow("pdp", exact=1, optimal=1, missed=1, violations=1)
    assert table["greedy"] == OptimalityRow("greedy", exact=1, optimal=0, missed=2, violations=0)
