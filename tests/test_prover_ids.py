"""The prover's word-id path: the same texts, batches and verdicts as the text path.

Tiny zoo word models (random weights, a WordVocab) built in the test; a planted space in
which some substitutions flip the label and others do not.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from textrobust.attack.goals import UntargetedClassification
from textrobust.attack.searches.exhaustive import ExhaustiveProver, Verdict, WordIdPath
from textrobust.attack.space import PerturbationSpace
from textrobust.errors import TextRobustError
from textrobust.text import Text
from textrobust.victims.function import FunctionVictim
from textrobust.victims.query import QueryLayer
from textrobust.victims.torch import TorchVictim
from textrobust.zoo import ZOO, WordVocab

WORDS = ["a", "the", "film", "movie", "good", "great", "fine", "bad", "dull", "slow", "plot", "story", "cast",
         "was", "is", "and", "very", "quite", "nice", "poor", "awful", "fun"]


#: small layers: the test is about the ids, not the model
SMALL = {"bow": {}, "cnn": {"filters": 8}, "lstm": {"hidden": 8}, "transformer": {"d_model": 16, "ff": 32, "layers": 1}}


def _victim(arch: str, seed: int, max_length: int = 64) -> TorchVictim:
    torch.manual_seed(seed)
    spec = ZOO.get(arch)
    vocab = WordVocab(WORDS, max_length=max_length)
    model = spec.build(spec.make_config(SMALL[arch]), len(vocab), 2)
    return TorchVictim(model, vocab, ("negative", "positive"), batch_size=16)


def _space(text: str) -> PerturbationSpace:
    x = Text.from_string(text)
    subs = {1: ("great", "fine", "nice"), 3: ("movie", "story"), 5: ("dull", "slow", "poor", "awful"),
            6: ("Plot", "unknownword")}
    positions = tuple(p for p in sorted(subs) if p < len(x))
    return PerturbationSpace(x, positions, tuple(subs[p] for p in positions))


def _prove(victim: TorchVictim, space: PerturbationSpace, label: int, fast: bool, batch: int, radius: int = 3):
    layer = QueryLayer(victim, cache_size=0)
    goal = UntargetedClassification(layer, label)
    ids = WordIdPath.of(goal) if fast else None
    order = tuple(reversed(space.positions))
    proofs = ExhaustiveProver(batch_size=batch).prove_radii(space, goal.evaluate, radius, order=order, ids=ids)
    return [(p.radius, p.verdict, p.checked, p.size, None if p.adversarial is None else str(p.adversarial))
            for p in proofs], layer.queries


@pytest.mark.parametrize("arch", ["bow", "cnn", "lstm", "transformer"])
@pytest.mark.parametrize("seed", [0, 1])
def test_the_id_path_gives_the_text_paths_verdicts(arch: str, seed: int) -> None:
    victim = _victim(arch, seed)
    space = _space("a good film and the very good cast was fun")
    label = int(victim.probabilities([space.original]).argmax())
    for batch in (7, 512):
        for target in (label, 1 - label):  # 1 - label: the original itself is "adversarial"
            slow = _prove(victim, space, target, fast=False, batch=batch)
            fast = _prove(victim, space, target, fast=True, batch=batch)
            assert fast == slow


def test_found_and_certified_both_happen_and_agree() -> None:
    """Over many random victims both verdicts occur, and the paths never disagree."""
    verdicts = set()
    for seed in range(12):
        victim = _victim("bow", seed)
        space = _space("a good film and the very good cast was fun")
        label = int(victim.probabilities([space.original]).argmax())
        slow = _prove(victim, space, label, fast=False, batch=64)
        fast = _prove(victim, space, label, fast=True, batch=64)
        assert fast == slow
        verdicts |= {v for _, v, *_ in slow[0]}
    assert {Verdict.FOUND, Verdict.CERTIFIED} <= verdicts


def test_words_past_what_the_model_reads_change_nothing() -> None:
    victim = _victim("cnn", 3, max_length=4)  # reads 4 words; positions 5 and 6 lie beyond
    space = _space("a good film and the very good cast")
    label = int(victim.probabilities([space.original]).argmax())
    assert _prove(victim, space, label, fast=True, batch=16) == _prove(victim, space, label, fast=False, batch=16)


def test_the_ids_are_the_tokenizers() -> None:
    victim = _victim("cnn", 0)
    space = _space("a good film and the very good cast was fun")
    path = WordIdPath.of(UntargetedClassification(QueryLayer(victim), 0))
    assert path is not None
    rows = 0
    for ids, segments in path.batches(space, 2, space.positions, 10):
        for row in range(len(ids)):
            text = path.text(space, segments, row)
            encoded = victim.tokenizer.encode([text])
            assert np.array_equal(ids[row], encoded.ids[0])
            rows += 1
    assert rows == space.layer_size(2)
    np.testing.assert_allclose(victim.probabilities_of_ids(ids), victim.probabilities(
        [path.text(space, segments, r) for r in range(len(ids))]), rtol=1e-6, atol=1e-7)


def test_a_tokenizer_that_disagrees_stops_the_proof() -> None:
    class Lying(WordVocab):
        def word_ids(self, words):  # type: ignore[no-untyped-def]
            return [1 for _ in words]  # not what encode gives

    torch.manual_seed(0)
    spec = ZOO.get("bow")
    vocab = Lying(WORDS, max_length=64)
    victim = TorchVictim(spec.build(spec.make_config(), len(vocab), 2), vocab, ("negative", "positive"))
    layer = QueryLayer(victim, cache_size=0)
    goal = UntargetedClassification(layer, 0)
    space = _space("a good film and the very good cast was fun")
    with pytest.raises(TextRobustError, match="refusing to certify"):
        ExhaustiveProver(batch_size=8).prove_radii(space, goal.evaluate, 2, ids=WordIdPath.of(goal))


def test_victims_without_word_ids_keep_the_text_path() -> None:
    victim = FunctionVictim(lambda texts: np.array([[0.5, 0.5]] * len(texts)), ("negative", "positive"))
    assert WordIdPath.of(UntargetedClassification(QueryLayer(victim), 0)) is None


def test_id_queries_are_budgeted_and_counted() -> None:
    victim = _victim("bow", 0)
    layer = QueryLayer(victim)
    ids = np.array([[1, 2, 3], [3, 2, 1]])
    with layer.budget(1):
        with pytest.raises(TextRobustError):
            layer.probabilities_of_ids(ids)
    assert layer.queries == 0
    layer.probabilities_of_ids(ids)
    assert layer.queries == 2 and layer.stats().requested == 2


@pytest.mark.parametrize("samples", [None, 300])
def test_pr_estimates_are_the_same_on_both_paths(samples: int | None) -> None:
    """Exact PR (small space) and sampled PR (same draws): identical estimates and counts."""
    from textrobust.attack.space import space_rng
    from textrobust.analyses.radius.pr import PRConfig, estimate_pr

    for seed in range(3):
        victim = _victim("bow", seed)
        space = _space("a good film and the very good cast was fun")
        label = int(victim.probabilities([space.original]).argmax())
        config = PRConfig(samples=samples, exact_limit=0, batch_size=64) if samples else PRConfig(batch_size=64)
        results = []
        for fast in (False, True):
            layer = QueryLayer(victim, cache_size=0)
            goal = UntargetedClassification(layer, label)
            estimate = estimate_pr(space, goal.evaluate, space_rng(seed, space.original), config, radius=3,
                                   ids=WordIdPath.of(goal) if fast else None)
            results.append((estimate.pr, estimate.evaluated, estimate.robust, estimate.exact, layer.queries))
        assert results[0] == results[1]
        assert results[0][3] is (samples is None)
