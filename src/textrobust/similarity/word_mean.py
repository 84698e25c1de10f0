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


class _GloveVectors:
    """GloVe 6B 50d as ``index``/``matrix`` (unit rows), for when no vectors are given."""

    def __init__(self) -> None:
        from textrobust.assets import load_glove

        words, matrix = load_glove()
        self.index = {w: i for i, w in enumerate(words)}
        self.matrix = unit_rows(matrix)

    def __repr__(self) -> str:
        return f"GloVe(6B, {self.matrix.shape[0]} words x {self.matrix.shape[1]})"


def default_word_vectors() -> Any:
    """The default word vectors of the similarity baseline and the embedding constraint:
    GloVe 6B 50d with unit rows (loaded on call)."""
    return _GloveVectors()
