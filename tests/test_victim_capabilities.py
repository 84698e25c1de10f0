"""Victims declare what they offer beyond probabilities, and analyses ask for it: the
embedding-victim protocol (white-box handles taken explicitly), the batched-victim
protocol, and a lockstep gate member that forwards only declared capabilities."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
import torch

from textrobust.analyses.msr.analysis import MsrAnalysis
from textrobust.analyses.protocol import WorkerContext
from textrobust.analyses.radius.analysis import _batched
from textrobust.attack.candidates.neighbours import EmbeddingSpace
from textrobust.data.examples import Example
from textrobust.errors import CapabilityError
from textrobust.text import Text
from textrobust.victims.function import FunctionVictim
from textrobust.victims.gate import BatchingGate
from textrobust.victims.protocol import (
    BatchedVictim,
    EmbeddingVictim,
    GradientVictim,
    StandIn,
    embedding_victim,
    require_embedding_victim,
    unwrap,
)
from textrobust.victims.query import QueryLayer
from textrobust.victims.torch import Encoded, TorchVictim
from textrobust.zoo.cnn import CnnClassifier, CnnConfig
from textrobust.zoo.vocab import WordVocab

WORDS = ["good", "bad", "film", "plot", "great", "awful", "movie", "story", "fine", "dull", "the", "a", "was"]
TEXTS = [Text.from_string("the film was good"), Text.from_string("a dull plot")]


def _zoo_victim() -> TorchVictim:
    torch.manual_seed(0)
    vocab = WordVocab(WORDS, max_length=8)
    return TorchVictim(CnnClassifier(CnnConfig(embed_dim=4, filters=4, widths=(2, 3)), len(vocab), 2), vocab,
                       ("neg", "pos"))


def _function_victim() -> FunctionVictim:
    return FunctionVictim(lambda s: [[0.4, 0.6] if "good" in x else [0.7, 0.3] for x in s], ("neg", "pos"))


class _MeanIds(torch.nn.Module):
    """A token-id model without embed/forward_embedded: it declares no embedding layer."""

    def __init__(self) -> None:
        super().__init__()
        self.embedding = torch.nn.Embedding(len(WORDS) + 2, 2)

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return (self.embedding(ids) * mask[..., None]).sum(1)


def test_a_zoo_word_victim_declares_the_embedding_victim_protocol() -> None:
    victim = _zoo_victim()
    assert isinstance(victim, EmbeddingVictim) and isinstance(victim, BatchedVictim)
    assert victim.capabilities.embedding_layer
    assert embedding_victim(victim) is victim and require_embedding_victim(victim, "MSR") is victim
    space = EmbeddingSpace.of_victim(victim)
    assert space.words == victim.tokenizer.words and space.limit == 8
    assert space.z.shape == tuple(victim.embedding_layer().weight.shape)


@pytest.mark.parametrize("build", [_function_victim, lambda: TorchVictim(_MeanIds(), WordVocab(WORDS), ("a", "b"))],
                         ids=["function", "torch-without-embedding-layer"])
def test_a_victim_without_the_capability_is_refused_by_name(build: object) -> None:
    victim = build()  # type: ignore[operator]
    assert not victim.capabilities.embedding_layer
    assert embedding_victim(victim) is None
    with pytest.raises(CapabilityError, match="EmbeddingSpace.of_victim needs .*'embedding_layer'"):
        EmbeddingSpace.of_victim(victim)
    with pytest.raises(CapabilityError, match="MSR lower bounds needs"):
        require_embedding_victim(victim, "MSR lower bounds")


def test_a_victim_whose_words_are_not_one_id_each_is_no_embedding_victim() -> None:
    class Pieces:
        """Two ids per word (no word vocabulary)."""

        max_length = 16

        def encode(self, texts: Sequence[Text]) -> Encoded:
            n = max(len(t) for t in texts) * 2
            ids = np.zeros((len(texts), n), dtype=np.int64)
            mask = np.zeros((len(texts), n), dtype=bool)
            index = np.full((len(texts), n), -1, dtype=np.int64)
            for i, t in enumerate(texts):
                for j, w in enumerate(t.words):
                    ids[i, 2 * j:2 * j + 2] = (hash(w) % 5) + 2
                    mask[i, 2 * j:2 * j + 2] = True
                    index[i, 2 * j:2 * j + 2] = j
            return Encoded(ids, mask, index)

    torch.manual_seed(0)
    victim = TorchVictim(CnnClassifier(CnnConfig(embed_dim=4, filters=4, widths=(2,)), 8, 2), Pieces(), ("a", "b"))
    assert victim.capabilities.embedding_layer and embedding_victim(victim) is None


def test_a_gate_member_forwards_only_declared_capabilities() -> None:
    victim = _zoo_victim()
    gate = BatchingGate(victim)
    member = gate.member()
    assert isinstance(member, StandIn) and unwrap(member) is victim
    assert embedding_victim(member) is victim  # white-box handles come from the victim itself
    assert not hasattr(member, "module") and not hasattr(member, "tokenizer") and not hasattr(member, "batch_size")
    assert isinstance(member, GradientVictim) and member.capabilities == victim.capabilities
    np.testing.assert_allclose(member.word_gradients(TEXTS, [0, 1])[0], victim.word_gradients(TEXTS, [0, 1])[0])
    assert member.accepts_word_ids
    ids = np.array([victim.word_ids(["the", "film", "was", "good"])])
    np.testing.assert_array_equal(member.probabilities_of_ids(ids), victim.probabilities_of_ids(ids))
    assert member.sort_window is None

    plain = BatchingGate(_function_victim()).member()
    assert embedding_victim(plain) is None and not plain.accepts_word_ids
    with pytest.raises(CapabilityError, match="'gradients'"):
        plain.word_gradients(TEXTS, [0, 1])
    with pytest.raises(CapabilityError, match="'attention'"):
        plain.attentions(TEXTS)
    with pytest.raises(CapabilityError, match="word ids"):
        plain.probabilities_of_ids(ids)


def test_radius_resizes_a_copy_of_a_batched_victim_only() -> None:
    victim = _zoo_victim()
    bigger = _batched(victim, 512)
    assert bigger is not victim and bigger.batch_size == 512 and victim.batch_size == 64  # type: ignore[attr-defined]
    assert _batched(victim, 64) is victim
    member = BatchingGate(victim).member()
    assert _batched(member, 512) is member  # the gate merges calls itself
    plain = _function_victim()
    assert _batched(plain, 512) is plain


def test_msr_through_a_gate_member_equals_msr_on_the_victim() -> None:
    """MSR asks for the embedding victim: behind a lockstep gate member it finds the same
    space, model and lower bounds as on the victim itself."""
    settings = {"n": 1, "candidates": "paper", "pos_filter": False, "simulations": 4, "iterations": 3,
                "multi_sets": 1, "lime": False, "max_set_size": 2}
    example = Example("e1", Text.from_string("the film was good"), 1)
    victim = _zoo_victim()
    direct = MsrAnalysis(settings).worker(WorkerContext(QueryLayer(victim), ("neg", "pos")))(example)
    gate = BatchingGate(victim)
    gate.open(1)
    gate.enter()
    try:
        gated = MsrAnalysis(settings).worker(WorkerContext(QueryLayer(gate.member()), ("neg", "pos")))(example)
    finally:
        gate.leave()
    assert direct.lower_status == gated.lower_status == "ok"
    assert [w.lower for w in gated.words] == [w.lower for w in direct.words]
    assert all(w.lower is not None for w in gated.words)
    assert gated.space == direct.space == "victim embedding"
