"""A weak baseline: cosine of the mean word vectors of two sentences."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from textrobust.similarity.cache import LRUCache
from textrobust.similarity.protocol import check_pairs, describe, unit_rows
from textrobust.text import split_words

__all__ = ["WordEmbeddingMeanCosine"]


class WordEmbeddingMeanCosine:
    """Cosine of the averaged (unit) word vectors of each sentence; blind to word order.

    ``vectors`` is any object with ``index: dict[str, int]`` and ``matrix [V, d]`` (such as
    :class:`textrobust.embeddings.WordVectors`). Words are looked up as written, then
    lower-cased; unknown words are skipped. A sentence with no known word has no vector:
    it scores 0 against anything but an identical string (which scores 1).
    """

    def __init__(self, vectors: Any, *, cache_size: int | None = 100_000) -> None:
        self.vectors = vectors
        self._cache: LRUCache[str, np.ndarray] = LRUCache(cache_size)

    def _embed(self, text: str) -> np.ndarray:
        vector = self._cache.get(text)
        if vector is None:
            index = self.vectors.index
            rows = []
            for word in split_words(text)[0]:
                row = index.get(word)
                if row is None:
                    row = index.get(word.lower())
                if row is not None:
                    rows.append(row)
            matrix = np.asarray(self.vectors.matrix)
            if rows:
                vector = unit_rows(unit_rows(matrix[rows]).mean(axis=0))
            else:
                vector = np.zeros(matrix.shape[1], dtype=np.float32)
            self._cache.put(text, vector)
        return vector

    def similarity(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        a, b = check_pairs("WordEmbeddingMeanCosine", a, b)
        out = np.array([float(self._embed(x) @ self._embed(y)) for x, y in zip(a, b)], dtype=np.float64)
        out[[x == y for x, y in zip(a, b)]] = 1.0
        return np.clip(out, -1.0, 1.0)

    def __repr__(self) -> str:
        return f"WordEmbeddingMeanCosine(vectors={describe(self.vectors)})"


def default_word_vectors() -> Any:
    """The default vectors of the similarity baseline and of the word-embedding constraint:
    :meth:`textrobust.embeddings.WordVectors.from_glove` (GloVe 6B 50d, 100k most frequent
    words, unit rows), loaded on call. Pass counter-fitted vectors explicitly where
    antonyms must sit apart (``textrobust.embeddings.counterfitted_vectors()``)."""
    from textrobust.embeddings import WordVectors

    return WordVectors.from_glove()
