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


# ---- issue 30: no collapse to one class, a sound IBP evaluation, a context-free synonym table ----
SYNONYMS = {"good": ["great", "fine"], "great": ["good", "fine"], "fine": ["good", "great"],
            "bad": ["awful", "dull"], "awful": ["bad", "dull"], "dull": ["bad", "awful"],
            "film": ["plot"], "plot": ["film"]}


def _toy():
    vocab = WordVocab(WORDS)
    pos = ["the film was good", "the plot was great", "good film", "great plot", "the film was fine"]
    neg = ["the film was bad", "the plot was awful", "bad film", "awful plot", "the film was dull"]
    texts = [Text.from_string(t) for t in pos + neg] * 4
    return vocab, texts, ([1] * 5 + [0] * 5) * 4


def test_certified_training_on_a_separable_toy_set_keeps_both_classes(one_thread):
    """Synonym-only substitutions (no antonyms): the certified model keeps answering both
    classes, classifies and certifies nearly every text; the log reports the dev figures."""
    from textrobust.bounds.certified_training import ibp_evaluate

    vocab, texts, labels = _toy()
    torch.manual_seed(1)
    model = CnnClassifier(CnnConfig(embed_dim=6, filters=4, widths=(2,), dropout=0.0), len(vocab), 2)
    config = CertifiedTrainingConfig(epochs=10, ramp_epochs=4, kappa=0.8, lr=1e-2, embedding_lr=5e-2, batch_size=8)
    logs = certified_train(model, vocab, texts, labels, SYNONYMS, config, dev=(texts[:10], labels[:10]))
    last = logs[-1].dev
    assert logs[-1].eps == 1.0 and logs[-1].kappa == pytest.approx(0.8)
    assert min(last.predicted_share.values()) >= 0.3, last
    assert last.clean >= 0.9 and last.certified >= 0.8, last
    again = ibp_evaluate(model, vocab, texts[:10], labels[:10], substitution_table(vocab, SYNONYMS, 8))
    assert again == last
    # the first version's schedule (ramp in one epoch, one learning rate) collapses here
    torch.manual_seed(1)
    model = CnnClassifier(CnnConfig(embed_dim=6, filters=4, widths=(2,), dropout=0.0), len(vocab), 2)
    first = config.replace(ramp_epochs=1, embedding_lr=None)
    collapsed = certified_train(model, vocab, texts, labels, SYNONYMS, first, dev=(texts[:10], labels[:10]))[-1].dev
    assert max(collapsed.predicted_share.values()) == 1.0, collapsed


def test_the_ibp_evaluation_is_sound_against_every_combination_of_substitutions(one_thread):
    """A text the IBP evaluation certifies keeps its class under every combination of
    substitutions (enumerated: the toy texts have at most 2**4 * ... variants)."""
    import itertools

    from textrobust.bounds.certified_training import ibp_evaluate

    vocab, texts, labels = _toy()
    table = substitution_table(vocab, SYNONYMS, 8)
    torch.manual_seed(1)
    model = CnnClassifier(CnnConfig(embed_dim=6, filters=4, widths=(2,), dropout=0.0), len(vocab), 2)
    certified_train(model, vocab, texts, labels, SYNONYMS,
                    CertifiedTrainingConfig(epochs=6, ramp_epochs=3, lr=1e-2, embedding_lr=5e-2, batch_size=8))
    checked = 0
    for text, y in zip(texts[:10], labels[:10]):
        if ibp_evaluate(model, vocab, [text], [y], table).certified < 1.0:
            continue
        choices = [[w, *SYNONYMS.get(w, [])] for w in text.words]
        variants = [Text.from_string(" ".join(words)) for words in itertools.product(*choices)]
        encoded = vocab.encode(variants)
        with torch.no_grad():
            predicted = model(torch.as_tensor(encoded.ids), torch.as_tensor(encoded.mask)).argmax(dim=1)
        assert (predicted == y).all(), text
        checked += 1
    assert checked >= 5


def test_the_checked_synonym_table_is_context_free_and_skips_stop_words():
    import numpy as np

    from textrobust.embeddings.vectors import WordVectors
    from textrobust.attack.candidates.checked import CheckedSynonyms

    vectors = WordVectors(["film", "movie", "know", "the", "a", "picture"],
                          np.array([[1.0, 0.0], [0.9, 0.436], [0.0, 1.0], [0.5, 0.5], [0.5, 0.51], [0.95, 0.3]]))

    class Reader:
        def morphy(self, word: str, pos: str) -> None:
            return None

    class Lexicon:
        reader = Reader()

        def synonyms(self, word: str, pos: str) -> tuple[str, ...]:
            return {("film", "n"): ("movie", "picture", "know"), ("the", "n"): ("a",)}.get((word, pos), ())

    checked = CheckedSynonyms(vectors, lexicon=Lexicon(), min_cos=0.6, min_zipf=0, k=8)
    table = checked.table(["Film", "the", "know", ",", "zebra"], neighbours=5, skip={"the", "a"})
    assert table == {"film": ("picture", "movie")}  # highest cosine first; "know" is too far
    assert checked.table([]) == {}
