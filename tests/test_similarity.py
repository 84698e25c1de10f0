"""Sentence scorers: pairwise similarity, caches keyed by string, the registry; real
MiniLM and BERTScore only in heavy tests."""

from __future__ import annotations

import sys
from collections.abc import Sequence

import numpy as np
import pytest

from textrobust.errors import ConfigError, MissingDependencyError
from textrobust.similarity import (
    SIMILARITY_SCORERS,
    BERTScore,
    EncoderCosine,
    LRUCache,
    SentenceScorer,
    WordEmbeddingMeanCosine,
)


class CountingEncoder:
    """Embeds a string as its letter counts over 'abcdefghij'; records every string encoded."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.seen.extend(texts)
        return np.array([[t.count(c) + 0.01 for c in "abcdefghij"] for t in texts], dtype=np.float32)


class TinyVectors:
    def __init__(self) -> None:
        self.index = {"good": 0, "great": 1, "bad": 2, "film": 3}
        m = np.array([[1, 0, 0], [0.9, 0.1, 0], [-1, 0, 0], [0, 0, 1]], dtype=np.float32)
        self.matrix = m / np.linalg.norm(m, axis=1, keepdims=True)


def test_encoder_cosine_scores_pairs_and_encodes_each_string_once() -> None:
    encoder = CountingEncoder()
    scorer = EncoderCosine(encoder)
    sims = scorer.similarity(["abc", "abc", "aaa"], ["abc", "abd", "jjj"])
    assert sims[0] == 1.0
    assert 0.0 < sims[1] < 1.0 and sims[2] < sims[1]
    assert sorted(encoder.seen) == ["aaa", "abc", "abd", "jjj"]
    again = scorer.similarity(["abd", "jjj"], ["abc", "aaa"])
    assert len(encoder.seen) == 4  # all four came from the cache
    np.testing.assert_allclose(again, [sims[1], sims[2]], rtol=1e-6)  # symmetric


def test_encoder_cosine_embeddings_are_unit_rows_and_cache_is_bounded() -> None:
    encoder = CountingEncoder()
    scorer = EncoderCosine(encoder, cache_size=2)
    vectors = scorer.embed(["abc", "def", "ghi"])
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-6)
    assert scorer.similarity(["abc"], ["ghi"]).shape == (1,)  # works past evictions
    with pytest.raises(ConfigError, match="cache_size"):
        EncoderCosine(encoder, cache_size=0)


def test_scorers_reject_mismatched_or_string_arguments() -> None:
    for scorer in (EncoderCosine(CountingEncoder()), WordEmbeddingMeanCosine(TinyVectors()), BERTScore()):
        with pytest.raises(ConfigError, match="same length"):
            scorer.similarity(["a", "b"], ["a"])
        with pytest.raises(ConfigError, match="not one string"):
            scorer.similarity("ab", "ab")  # type: ignore[arg-type]
        assert scorer.similarity([], []).shape == (0,)
        assert isinstance(scorer, SentenceScorer)


def test_word_mean_cosine_is_the_cosine_of_mean_word_vectors() -> None:
    scorer = WordEmbeddingMeanCosine(TinyVectors())
    sims = scorer.similarity(["good film", "Good", "good film", "unknown words", "unknown words"],
                             ["film good", "bad", "great film", "good", "unknown words"])
    assert sims[0] == pytest.approx(1.0)  # blind to order
    assert sims[1] == pytest.approx(-1.0)  # case-folded lookup
    assert 0.9 < sims[2] < 1.0
    assert sims[3] == 0.0 and sims[4] == 1.0  # no known word: 0, unless identical
    assert "TinyVectors" in repr(scorer)


def test_bertscore_is_lazy_and_names_the_missing_package(monkeypatch: pytest.MonkeyPatch) -> None:
    scorer = BERTScore(num_layers=4)
    assert scorer.similarity(["same"], ["same"]).tolist() == [1.0]  # no model needed
    monkeypatch.setitem(sys.modules, "bert_score", None)
    with pytest.raises(MissingDependencyError, match="pip install bert-score"):
        scorer.similarity(["a film"], ["a movie"])
    with pytest.raises(ConfigError, match="num_layers"):
        BERTScore(num_layers=0)
    assert repr(scorer) == "BERTScore(model_path=<MiniLM>, num_layers=4, idf=False)"


def test_registry_builds_every_scorer_with_a_stand_in() -> None:
    assert SIMILARITY_SCORERS.names() == ["bertscore", "encoder", "minilm", "mpnet", "word_mean"]
    built = [
        SIMILARITY_SCORERS.get("minilm")(CountingEncoder()),
        SIMILARITY_SCORERS.get("word_mean")(TinyVectors()),
        SIMILARITY_SCORERS.get("bertscore")(num_layers=4),
    ]
    assert all(isinstance(s, SentenceScorer) for s in built)
    assert built[0].similarity(["ab"], ["ab"]).tolist() == [1.0]


def test_one_registry_serves_the_accs_constraint_models() -> None:
    """ACCS names its constraint models in SIMILARITY_SCORERS (no second registry); a folder
    after the colon reaches the scorer's factory, and every old ACCS name still parses."""
    from textrobust.analyses.accs.scorers import CONSTRAINT_MODELS, build_constraint_model, parse_constraint_model
    from textrobust.errors import AssetMissingError

    assert CONSTRAINT_MODELS is SIMILARITY_SCORERS
    for name in ("minilm", "mpnet", "encoder", "bertscore", "word_mean"):
        assert parse_constraint_model(name) == (name, None)
    assert repr(build_constraint_model("minilm")) == "EncoderCosine(encoder=<default>)"  # lazy: nothing loads
    assert "num_layers=4" in repr(build_constraint_model("bertscore"))
    for name in ("mpnet", "encoder", "minilm"):
        with pytest.raises(AssetMissingError, match="/no/such/folder"):
            SIMILARITY_SCORERS.get(name)("/no/such/folder")
    with pytest.raises(AssetMissingError, match="mpnet"):
        SIMILARITY_SCORERS.get("mpnet")()
    with pytest.raises(ConfigError, match="takes no folder"):
        build_constraint_model("word_mean:/some/folder")


def test_lru_cache_forgets_the_least_recently_used() -> None:
    cache: LRUCache[str, int] = LRUCache(maxsize=2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # a is now the most recent
    cache.put("c", 3)
    assert "b" not in cache and "a" in cache and cache.missing(["a", "b", "b", "d"]) == ["b", "d"]
    assert (cache.hits, cache.misses) == (1, 0)


# ---- real models ------------------------------------------------------------------------------------
@pytest.mark.heavy
def test_minilm_separates_paraphrases_from_unrelated_sentences() -> None:
    scorer = EncoderCosine()
    para, unrelated = scorer.similarity(
        ["A man is playing a guitar.", "A man is playing a guitar."],
        ["Someone plays the guitar.", "The stock market fell sharply today."],
    )
    assert para > 0.6 and unrelated < 0.3


@pytest.mark.heavy
def test_bertscore_with_local_minilm() -> None:
    pytest.importorskip("bert_score")
    scorer = BERTScore()
    one_word, unrelated = scorer.similarity(
        ["The movie was a gripping and well-made thriller."] * 2,
        ["The movie was a dull and well-made thriller.", "Stock prices fell sharply today."],
    )
    assert 0.85 < one_word < 1.0 and unrelated < 0.5
    cached = scorer.similarity(["The movie was a gripping and well-made thriller."], ["Stock prices fell sharply today."])
    assert cached[0] == unrelated


def test_packages_import_light_and_export_what_they_list() -> None:
    import importlib
    import subprocess

    code = (
        "import sys, textrobust.similarity, textrobust.lm, textrobust.attack.constraints, "
        "textrobust.attack.constraint_testing\n"
        "print(','.join(m for m in ('torch', 'transformers', 'spacy', 'sentence_transformers', 'bert_score') "
        "if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
    for name in ("textrobust.similarity", "textrobust.lm", "textrobust.attack.constraints"):
        module = importlib.import_module(name)
        assert all(getattr(module, n) is not None for n in module.__all__)
        public = {n for n, v in vars(module).items() if not n.startswith("_") and type(v).__name__ != "module"}
        assert public - {"annotations", "Any", "Iterable", "Constraint", "PositionConstraint", "ConfigError", "Registry"} <= set(
            module.__all__
        ), name
