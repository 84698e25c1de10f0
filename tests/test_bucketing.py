"""Length-bucketed batches of Hugging Face victims: the texts of a call are sorted by
token count before they are cut into batches, each padded to its own longest text.

The probabilities are those of unbucketed batches (and of one text at a time) up to
float32 noise; the padding counters see the padding go; the query layer hands a
bucketing victim large calls, and a lockstep batch of several examples is sorted across
examples.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from gate_helpers import gate_members

from textrobust.errors import ConfigError
from textrobust.text import Text
from textrobust.victims.gate import BatchingGate
from textrobust.victims.huggingface import BUCKET_WINDOW_BATCHES, HuggingFaceVictim, PaddingStats
from textrobust.victims.query import QueryLayer

pytest.importorskip("transformers")

WORDS = ["the", "film", "is", "good", "bad", "plot", "movie", "story", "and", "with", "acting", "great"]


@pytest.fixture(scope="module")
def model_and_tokenizer(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Any]:
    """A randomly initialised 2-layer BERT classifier and a fast word-piece tokenizer."""
    import torch
    import transformers
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast  # type: ignore[attr-defined]

    from textrobust.attribution.testing import TINY_BERT_VOCAB

    root = tmp_path_factory.mktemp("tiny-bert-bucket")
    (root / "vocab.txt").write_text("\n".join(TINY_BERT_VOCAB) + "\n", encoding="utf-8")
    if int(transformers.__version__.split(".")[0]) >= 5:  # transformers 5 takes `vocab`
        tokenizer = BertTokenizerFast(vocab=str(root / "vocab.txt"))
    else:  # pragma: no cover
        tokenizer = BertTokenizerFast(vocab_file=str(root / "vocab.txt"))
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(TINY_BERT_VOCAB), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=128, initializer_range=0.5,
                        id2label={0: "neg", 1: "pos", 2: "mixed"})
    return BertForSequenceClassification(config), tokenizer


def _victim(model_and_tokenizer: tuple[Any, Any], *, bucket: bool, batch_size: int = 4) -> HuggingFaceVictim:
    model, tokenizer = model_and_tokenizer
    return HuggingFaceVictim(model, tokenizer, batch_size=batch_size, max_length=100, bucket=bucket)


def _mixed_texts(n: int = 40, seed: int = 1) -> list[Text]:
    """Texts of 1 to 60 words in a shuffled order (long and short ones side by side)."""
    rng = np.random.default_rng(seed)
    lengths = rng.permutation(np.linspace(1, 60, n).astype(int))
    return [Text.from_string(" ".join(rng.choice(WORDS, size=k))) for k in lengths]


def test_bucketing_gives_the_probabilities_of_unbucketed_batches(model_and_tokenizer: tuple[Any, Any]) -> None:
    texts = _mixed_texts()
    texts += [Text.from_pair("the film is good", "the plot and the acting " * k) for k in (1, 9, 3, 6, 2)]
    bucketed = _victim(model_and_tokenizer, bucket=True).probabilities(texts)
    plain = _victim(model_and_tokenizer, bucket=False).probabilities(texts)
    alone = np.vstack([_victim(model_and_tokenizer, bucket=False).probabilities([t]) for t in texts])  # no padding
    assert bucketed.shape == (len(texts), 3)
    # padding only changes the order of float32 sums: measured max |difference| 1.5e-6 here
    assert np.abs(bucketed - plain).max() < 1e-5
    assert np.abs(bucketed - alone).max() < 1e-5
    assert np.abs(plain - alone).max() < 1e-5
    assert (bucketed.argmax(axis=1) == alone.argmax(axis=1)).all()


def test_bucketing_sorts_by_token_count_and_cuts_the_padding(model_and_tokenizer: tuple[Any, Any]) -> None:
    texts = _mixed_texts()
    model, tokenizer = model_and_tokenizer
    counts = [len(ids) for ids in tokenizer([str(t) for t in texts])["input_ids"]]
    stats = {}
    for bucket in (True, False):
        victim = _victim(model_and_tokenizer, bucket=bucket)
        victim.probabilities(texts)
        stats[bucket] = victim.padding_stats
    order = sorted(counts)
    expected_padded = sum(max(order[s:s + 4]) * len(order[s:s + 4]) for s in range(0, len(order), 4)) - sum(counts)
    plain_padded = sum(max(counts[s:s + 4]) * len(counts[s:s + 4]) for s in range(0, len(counts), 4)) - sum(counts)
    assert stats[True] == PaddingStats(texts=40, batches=10, real=sum(counts), padded=expected_padded)
    assert stats[False] == PaddingStats(texts=40, batches=10, real=sum(counts), padded=plain_padded)
    assert stats[True].share < 0.1 < stats[False].share
    later = stats[True].minus(PaddingStats(texts=10, batches=2, real=100, padded=5))
    assert later == PaddingStats(30, 8, sum(counts) - 100, expected_padded - 5)
    assert PaddingStats(0, 0, 0, 0).share == 0.0


def test_one_batch_is_not_tokenized_twice(model_and_tokenizer: tuple[Any, Any],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    victim = _victim(model_and_tokenizer, bucket=True, batch_size=8)
    counted: list[int] = []
    original = victim._token_counts

    def counting(texts: list[Text]) -> list[int]:
        counted.append(len(texts))
        return original(texts)

    monkeypatch.setattr(victim, "_token_counts", counting)
    victim.probabilities(_mixed_texts(8))
    assert counted == []  # a call that fits one batch pads to its longest text whatever the order
    victim.probabilities(_mixed_texts(9))
    assert counted == [9]


def test_gradients_and_attentions_are_bucketed_in_the_callers_order(model_and_tokenizer: tuple[Any, Any]) -> None:
    texts = _mixed_texts(10)
    bucketed, plain = _victim(model_and_tokenizer, bucket=True), _victim(model_and_tokenizer, bucket=False)
    labels = [i % 3 for i in range(len(texts))]
    for a, b in zip(bucketed.word_gradients(texts, labels), plain.word_gradients(texts, labels)):
        np.testing.assert_allclose(a, b, atol=1e-5)
    for a, b in zip(bucketed.attentions(texts), plain.attentions(texts)):
        np.testing.assert_allclose(a, b, atol=1e-5)


def test_bucket_must_be_a_bool(model_and_tokenizer: tuple[Any, Any]) -> None:
    model, tokenizer = model_and_tokenizer
    with pytest.raises(ConfigError, match="'bucket' parameter"):
        HuggingFaceVictim(model, tokenizer, bucket="yes")  # type: ignore[arg-type]


def test_the_query_layer_hands_a_bucketing_victim_large_calls(model_and_tokenizer: tuple[Any, Any]) -> None:
    texts = _mixed_texts(40)
    victim = _victim(model_and_tokenizer, bucket=True)
    layer = QueryLayer(victim, batch_size=8)
    assert victim.sort_window == 4 * BUCKET_WINDOW_BATCHES and layer.call_size == 4 * BUCKET_WINDOW_BATCHES
    probs = layer.probabilities(texts)
    assert layer.stats().batches == 1  # one call of 40 texts, sorted as a whole
    assert victim.padding_stats.batches == 10
    np.testing.assert_allclose(probs, _victim(model_and_tokenizer, bucket=False).probabilities(texts), atol=1e-5)
    plain = _victim(model_and_tokenizer, bucket=False)
    assert plain.sort_window is None and QueryLayer(plain, batch_size=8).call_size == 8  # as before


def test_a_lockstep_batch_is_bucketed_across_examples(model_and_tokenizer: tuple[Any, Any]) -> None:
    """Eight examples' requests (two texts each, of one length per example) merged by the
    gate into one victim call and sorted as a whole: each batch of 4 holds two lengths
    neighbouring in the sorted order."""
    rng = np.random.default_rng(2)
    sizes = (40, 2, 25, 8, 33, 5, 17, 12)
    requests = [[" ".join(rng.choice(WORDS, size=k)) for _ in range(2)] for k in sizes]
    tokens = sorted(k + 2 for k in sizes for _ in range(2))  # one token per word, plus [CLS] and [SEP]
    expected = PaddingStats(16, 4, sum(tokens), sum(max(tokens[s:s + 4]) * 4 for s in range(0, 16, 4)) - sum(tokens))
    share = {}
    for bucket in (True, False):
        victim = _victim(model_and_tokenizer, bucket=bucket)
        gate = BatchingGate(victim)
        answers = gate_members(gate, requests)
        assert gate.stats()["calls"] == 1 and victim.padding_stats.texts == 16
        if bucket:
            assert victim.padding_stats == expected
        share[bucket] = victim.padding_stats.share
        for request, answer in zip(requests, answers):
            np.testing.assert_allclose(answer, _victim(model_and_tokenizer, bucket=False).probabilities(request),
                                       atol=1e-5)
    assert share[True] <= share[False]  # equal only if the threads happened to arrive in sorted pairs
