"""Sentence similarity: one interface, several scorers, embeddings cached by string.

Every scorer offers ``similarity(a, b) -> np.ndarray`` over pairs ``(a[i], b[i])``:

- :class:`EncoderCosine`: cosine of sentence-encoder embeddings (default MiniLM; plug in
  any object with ``encode(list[str])``, e.g. MPNet from a local folder);
- :class:`BERTScore`: BERTScore F1 with a local encoder folder (``bert-score`` package);
- :class:`WordEmbeddingMeanCosine`: cosine of mean word vectors, a weak baseline.

``SIMILARITY_SCORERS`` maps names to factories (each builds its default asset lazily).

>>> from textrobust.similarity import SIMILARITY_SCORERS
>>> SIMILARITY_SCORERS.names()
['bertscore', 'minilm', 'word_mean']
"""

from __future__ import annotations

from typing import Any

from textrobust.registry import Registry
from textrobust.similarity.bertscore import BERTScore
from textrobust.similarity.cache import LRUCache
from textrobust.similarity.encoder import EncoderCosine
from textrobust.similarity.protocol import SentenceScorer
from textrobust.similarity.word_mean import WordEmbeddingMeanCosine, default_word_vectors

__all__ = [
    "SIMILARITY_SCORERS",
    "BERTScore",
    "EncoderCosine",
    "LRUCache",
    "SentenceScorer",
    "WordEmbeddingMeanCosine",
    "default_word_vectors",
]

SIMILARITY_SCORERS: Registry[Any] = Registry("similarity scorer")


@SIMILARITY_SCORERS.register("minilm", "Cosine of sentence embeddings (default MiniLM; any encoder)")
def _minilm(encoder: Any | None = None, **settings: Any) -> EncoderCosine:
    return EncoderCosine(encoder, **settings)


@SIMILARITY_SCORERS.register("bertscore", "BERTScore F1 over a local encoder folder (default MiniLM, layer 4)")
def _bertscore(model_path: Any | None = None, **settings: Any) -> BERTScore:
    return BERTScore(model_path, **settings)


@SIMILARITY_SCORERS.register("word_mean", "Cosine of mean word vectors (weak baseline; default GloVe)")
def _word_mean(vectors: Any | None = None, **settings: Any) -> WordEmbeddingMeanCosine:
    return WordEmbeddingMeanCosine(vectors if vectors is not None else default_word_vectors(), **settings)
