"""Cosine similarity of sentence embeddings from any encoder (default: MiniLM)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from textrobust.devices import Placement
from textrobust.similarity.cache import LRUCache
from textrobust.similarity.protocol import check_pairs, describe, unit_rows

__all__ = ["EncoderCosine"]


class EncoderCosine:
    """``cos(encode(a), encode(b))`` with every distinct string encoded once.

    ``encoder`` is any object with ``encode(list[str]) -> array [n, d]``: a
    ``SentenceTransformer`` (for instance MPNet from a local folder), or a test double.
    None means MiniLM from :func:`textrobust.assets.sentence_encoder`, loaded on first use on
    ``placement`` (the run's ``--device`` and ``--dtype``; None: the CPU in float32).
    Identical strings score exactly 1.0.

    >>> class Letters:  # a toy encoder: counts of a, b, c
    ...     def encode(self, texts): return [[t.count(c) for c in "abc"] for t in texts]
    >>> EncoderCosine(Letters()).similarity(["ab", "ab"], ["ab", "c"]).round(3).tolist()
    [1.0, 0.0]
    """

    def __init__(self, encoder: Any | None = None, *, cache_size: int | None = 100_000,
                 placement: Placement | None = None) -> None:
        self._encoder = encoder
        self._placement = placement
        self._cache: LRUCache[str, np.ndarray] = LRUCache(cache_size)

    @property
    def encoder(self) -> Any:
        if self._encoder is None:
            from textrobust.assets import sentence_encoder

            self._encoder = sentence_encoder(placement=self._placement)
        return self._encoder

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-norm embeddings ``[len(texts), d]``; only uncached strings are encoded."""
        texts = [str(t) for t in texts]
        todo = self._cache.missing(texts)
        if todo:
            vectors = unit_rows(np.asarray(self.encoder.encode(todo)))
            for text, vector in zip(todo, vectors):
                self._cache.put(text, vector)
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        rows = []
        for text in texts:
            vector = self._cache.get(text)
            if vector is None:  # evicted by a cache smaller than this batch
                vector = unit_rows(np.asarray(self.encoder.encode([text])))[0]
            rows.append(vector)
        return np.stack(rows)

    def similarity(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        a, b = check_pairs("EncoderCosine", a, b)
        if not a:
            return np.zeros(0, dtype=np.float64)
        vectors = self.embed(a + b)
        sims = np.einsum("ij,ij->i", vectors[: len(a)], vectors[len(a) :]).astype(np.float64)
        same = np.array([x == y for x, y in zip(a, b)])
        sims[same] = 1.0
        return np.clip(sims, -1.0, 1.0)

    def __repr__(self) -> str:
        return f"EncoderCosine(encoder={describe(self._encoder)})"
