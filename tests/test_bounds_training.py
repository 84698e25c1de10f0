"""Certified (IBP) training: the hull boxes contain every substitution, and training with
the worst-case loss raises the share of texts certified over their substitution hulls."""

from __future__ import annotations

import pytest
import torch

from textrobust.bounds.certified_training import CertifiedTrainingConfig, certified_train, hull_boxes, substitution_table
from textrobust.bounds.certify import Verifier
from textrobust.bounds.region import hull
from textrobust.text import Text
from textrobust.zoo.cnn import CnnClassifier, CnnConfig
from textrobust.zoo.vocab import WordVocab

WORDS = ["good", "bad", "great", "awful", "fine", "dull", "film", "plot", "the", "was"]
SUBS = {"good": ["great", "fine", "bad"], "bad": ["awful", "dull", "good"], "great": ["good"], "awful": ["bad"],
        "film": ["plot"], "plot": ["film"]}


def test_the_substitution_table_and_boxes_cover_every_substitute():
    vocab = WordVocab(WORDS)
    table = substitution_table(vocab, SUBS, 2)
    good = vocab.id_of("good")
    assert table[good].tolist() == [good, vocab.id_of("great"), vocab.id_of("fine")]
    assert table[vocab.id_of("the")].tolist() == [vocab.id_of("the")] * 3
    torch.manual_seed(0)
    model = CnnClassifier(CnnConfig(embed_dim=4, filters=2, widths=(2,)), len(vocab), 2)
    ids = torch.as_tensor([[good, vocab.id_of("the")]])
    center, lower, upper = hull_boxes(model, ids, table, 1.0)
    for word in ("great", "fine"):
        e = model.embedding.weight[vocab.id_of(word)]
        assert (lower[0, 0] <= e + 1e-7).all() and (e <= upper[0, 0] + 1e-7).all()
    assert torch.equal(lower[0, 1], center[0, 1])
    _, small_lo, small_hi = hull_boxes(model, ids, table, 0.5)
    assert (small_lo >= lower - 1e-7).all() and (small_hi <= upper + 1e-7).all()


def _certified_share(model, vocab, texts, labels):
    verifier = Verifier(model)
    table = model.embedding.weight.detach()
    count = 0
    for text, y in zip(texts, labels):
        ids = vocab.encode([text]).ids[0].tolist()
        positions = list(range(len(ids)))
        vectors = [table[[vocab.id_of(w) for w in SUBS.get(text.words[p], [])]] for p in positions]
        region = hull(verifier.embed(ids), positions, vectors)
        count += int(verifier.logits(verifier.embed(ids)).argmax()) == y and verifier.certifies(region, y)
    return count / len(texts)


@pytest.fixture
def one_thread():
    """Tiny tensors: threads only add overhead on a shared machine (restored after)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def test_certified_training_raises_the_certified_share(one_thread):
    vocab = WordVocab(WORDS)
    pos = ["the film was good", "the plot was great", "good film", "great plot", "the film was fine"]
    neg = ["the film was bad", "the plot was awful", "bad film", "awful plot", "the film was dull"]
    texts = [Text.from_string(t) for t in pos + neg] * 4
    labels = ([1] * 5 + [0] * 5) * 4
    results = {}
    for kappa in (0.0, 0.9):
        torch.manual_seed(1)
        model = CnnClassifier(CnnConfig(embed_dim=6, filters=4, widths=(2,), dropout=0.0), len(vocab), 2)
        logs = certified_train(model, vocab, texts, labels, SUBS,
                               CertifiedTrainingConfig(epochs=8, ramp_epochs=3, kappa=kappa, lr=1e-2, batch_size=8))
        assert len(logs) == 8 and logs[-1].eps == 1.0
        results[kappa] = _certified_share(model, vocab, texts[:10], labels[:10])
    # 'good' may become 'bad': no model certifies those; the rest can be certified
    assert results[0.9] > results[0.0], results
