"""Word vectors with batched, cached nearest-neighbour search.

:class:`WordVectors` holds a unit-normalised float32 matrix and its words. Neighbour
queries are batched (one matrix product per batch of query words against the whole
vocabulary) and each word's neighbour list is cached, so an attack that asks for the same
word many times pays once.

GloVe's rows are ordered by corpus frequency, so keeping the first ``vocab_size`` rows
keeps the most frequent words: :meth:`WordVectors.from_glove` keeps 100,000 by default
(the 400k rows are mostly rare tokens; a query then costs a quarter of the time and memory).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from textrobust.errors import ConfigError, DataError

__all__ = ["DEFAULT_VOCAB_SIZE", "WordVectors", "normalise_rows"]

#: Rows of GloVe kept by default (the most frequent words).
DEFAULT_VOCAB_SIZE = 100_000

Neighbours = list[tuple[str, float]]


def normalise_rows(matrix: np.ndarray) -> np.ndarray:
    """A float32 copy of ``matrix`` with every non-zero row scaled to unit length."""
    out = np.array(matrix, dtype=np.float32, copy=True)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    np.divide(out, norms, out=out, where=norms > 0)
    return out


class WordVectors:
    """Unit-normalised word vectors: ``words[i]`` has the vector ``matrix[i]``.

    ``nearest`` and ``within`` answer many words at once; results are cached per word
    (``cache_size`` words at most; the cache is cleared when it overflows).

    >>> import numpy as np
    >>> v = WordVectors(["good", "great", "bad"], np.array([[1, 0], [0.9, 0.1], [0, 1]]))
    >>> v.nearest(["good"], 1)[0][0][0]
    'great'
    """

    def __init__(
        self,
        words: Sequence[str],
        matrix: np.ndarray,
        *,
        name: str = "vectors",
        batch_size: int = 256,
        cache_size: int = 200_000,
    ) -> None:
        matrix = np.asarray(matrix)
        if matrix.ndim != 2 or matrix.shape[0] != len(words):
            raise DataError(
                f"WordVectors needs one row per word: got {len(words):,} words and a matrix of "
                f"shape {matrix.shape}."
            )
        if batch_size < 1:
            raise ConfigError(f"The 'batch_size' parameter of WordVectors must be >= 1. Got {batch_size} instead.")
        self.words: tuple[str, ...] = tuple(words)
        index: dict[str, int] = {}
        for i, word in enumerate(self.words):
            index.setdefault(word, i)  # a duplicated word keeps its first (most frequent) row
        self._index = index
        self._matrix = normalise_rows(matrix)
        self._matrix.flags.writeable = False
        self.name = name
        self.batch_size = batch_size
        self.cache_size = cache_size
        self._nearest: dict[int, tuple[tuple[int, ...], tuple[float, ...]]] = {}
        self._balls: dict[tuple[int, float, int | None], tuple[tuple[int, ...], tuple[float, ...]]] = {}
        self._tensor: Any = None  # a torch copy of the matrix, made on first query

    # ---- construction -----------------------------------------------------------------------
    @classmethod
    def from_glove(
        cls, vocab_size: int | None = DEFAULT_VOCAB_SIZE, *, path: str | Path | None = None
    ) -> WordVectors:
        """GloVe 6B 50d (:func:`textrobust.assets.load_glove`), its ``vocab_size`` most
        frequent words (None keeps all 400k)."""
        from textrobust.assets import load_glove

        words, matrix = load_glove(path)
        n = _check_vocab_size(vocab_size, len(words))
        return cls(words[:n], matrix[:n], name=f"glove-6b-50d[{n}]")

    def restrict(self, vocab_size: int) -> WordVectors:
        """The first ``vocab_size`` words (the most frequent, for frequency-ordered vectors)."""
        n = _check_vocab_size(vocab_size, len(self))
        return WordVectors(
            self.words[:n], self._matrix[:n], name=f"{self.name}[:{n}]",
            batch_size=self.batch_size, cache_size=self.cache_size,
        )

    # ---- views --------------------------------------------------------------------------------
    @property
    def matrix(self) -> np.ndarray:
        """The read-only unit-normalised float32 matrix ``[len(self), dim]``."""
        return self._matrix

    @property
    def index(self) -> dict[str, int]:
        """word -> row (do not modify)."""
        return self._index

    @property
    def dim(self) -> int:
        return int(self._matrix.shape[1])

    def __len__(self) -> int:
        return len(self.words)

    def __contains__(self, word: object) -> bool:
        return word in self._index

    def vector(self, word: str) -> np.ndarray:
        """The unit vector of ``word``."""
        try:
            return self._matrix[self._index[word]]
        except KeyError:
            raise ConfigError(f"The word {word!r} is not in the vocabulary of {self.name}.") from None

    def cosine(self, a: str, b: str) -> float:
        """Cosine similarity of two words of the vocabulary."""
        return float(self.vector(a) @ self.vector(b))

    def cosines(self, pairs: Iterable[tuple[str, str]]) -> np.ndarray:
        """Cosine similarity of many word pairs (NaN where a word is unknown)."""
        pairs = list(pairs)
        out = np.full(len(pairs), np.nan, dtype=np.float64)
        rows = [(k, self._index.get(a), self._index.get(b)) for k, (a, b) in enumerate(pairs)]
        known = [(k, i, j) for k, i, j in rows if i is not None and j is not None]
        if known:
            k, i, j = (np.array(col) for col in zip(*known))
            out[k] = np.einsum("ij,ij->i", self._matrix[i], self._matrix[j])
        return out

    # ---- neighbours ---------------------------------------------------------------------------
    def nearest(
        self, words: Sequence[str], k: int, *, max_distance: float | None = None
    ) -> list[Neighbours]:
        """For each word, its ``k`` nearest other words by cosine, best first, as
        ``(word, cosine)``; with ``max_distance``, only those with ``1 - cosine <=
        max_distance``. Unknown words get an empty list. Ties go to the more frequent word."""
        if not isinstance(k, int) or k < 1:
            raise ConfigError(f"The 'k' parameter of WordVectors.nearest must be an int >= 1. Got {k!r} instead.")
        if max_distance is not None and not 0.0 <= max_distance <= 2.0:
            raise ConfigError(
                f"The 'max_distance' parameter of WordVectors.nearest is a cosine distance in [0, 2]. "
                f"Got {max_distance} instead."
            )
        k = min(k, len(self) - 1)
        rows = [self._index.get(w) for w in words]
        todo = sorted({r for r in rows if r is not None and len(self._nearest.get(r, ((), ()))[0]) < k})
        if todo:
            self._make_room(self._nearest, len(todo))
            for start in range(0, len(todo), self.batch_size):
                batch = todo[start : start + self.batch_size]
                sims = self._similarities(batch)
                top = _top_k(sims, k)
                for b, query in enumerate(batch):
                    idx = top[b]
                    vals = sims[b, idx]
                    order = np.lexsort((idx, -vals))
                    self._nearest[query] = (
                        tuple(int(i) for i in idx[order]), tuple(float(v) for v in vals[order]))
        floor = -math.inf if max_distance is None else 1.0 - max_distance
        out: list[Neighbours] = []
        for row in rows:
            if row is None or k < 1:
                out.append([])
                continue
            found, cosines = self._nearest[row]
            out.append([(self.words[i], v) for i, v in zip(found[:k], cosines[:k]) if v >= floor])
        return out

    def within(
        self, words: Sequence[str], radius: float, *, limit: int | None = None
    ) -> list[Neighbours]:
        """For each word, every other word inside the L2 ball of ``radius`` around it,
        nearest first (at most ``limit``), as ``(word, cosine)``.

        On unit vectors ``||u - v||^2 = 2 - 2 cos``, so the ball is ``cos >= 1 - radius^2/2``.
        """
        if not radius >= 0.0:
            raise ConfigError(f"The 'radius' parameter of WordVectors.within must be >= 0. Got {radius} instead.")
        if limit is not None and limit < 1:
            raise ConfigError(f"The 'limit' parameter of WordVectors.within must be >= 1 or None. Got {limit} instead.")
        floor = 1.0 - radius * radius / 2.0
        rows = [self._index.get(w) for w in words]
        todo = sorted({r for r in rows if r is not None and (r, radius, limit) not in self._balls})
        if todo:
            self._make_room(self._balls, len(todo))
            for start in range(0, len(todo), self.batch_size):
                batch = todo[start : start + self.batch_size]
                sims = self._similarities(batch)
                for b, query in enumerate(batch):
                    idx = np.flatnonzero(sims[b] >= floor)
                    vals = sims[b, idx]
                    order = np.lexsort((idx, -vals))[:limit]  # only what is asked is kept
                    self._balls[(query, radius, limit)] = (
                        tuple(int(i) for i in idx[order]), tuple(float(v) for v in vals[order]))
        out: list[Neighbours] = []
        for row in rows:
            if row is None:
                out.append([])
                continue
            found, cosines = self._balls[(row, radius, limit)]
            out.append([(self.words[i], v) for i, v in zip(found, cosines)])
        return out

    def _similarities(self, rows: Sequence[int]) -> np.ndarray:
        """Cosines of ``rows`` against every word, the row's own column set to -inf.

        One matrix product per call; torch's (multi-threaded) when torch is installed.
        """
        torch = _torch()
        if torch is not None:
            if self._tensor is None:
                self._tensor = torch.from_numpy(np.array(self._matrix))  # writable copy
            sims = (self._tensor[list(rows)] @ self._tensor.T).numpy()
        else:
            sims = self._matrix[list(rows)] @ self._matrix.T
        sims[np.arange(len(rows)), list(rows)] = -np.inf
        return sims

    def _make_room(self, cache: dict, incoming: int) -> None:
        if len(cache) + incoming > self.cache_size:
            cache.clear()

    def __repr__(self) -> str:
        return f"WordVectors({self.name!r}, {len(self):,} words x {self.dim})"


def _torch() -> Any:
    try:
        import torch
    except ImportError:  # numpy alone works, only slower
        return None
    return torch


def _top_k(sims: np.ndarray, k: int) -> np.ndarray:
    """Column indices of the ``k`` largest values of each row (any order); ``k`` must be
    smaller than the number of columns. torch.topk is ~10x faster than argpartition here."""
    torch = _torch()
    if torch is not None:
        return torch.topk(torch.from_numpy(sims), k, dim=1, sorted=False).indices.numpy()
    return np.argpartition(sims, -k, axis=1)[:, -k:]


def _check_vocab_size(vocab_size: int | None, available: int) -> int:
    if vocab_size is None:
        return available
    if not isinstance(vocab_size, int) or vocab_size < 2:
        raise ConfigError(f"The 'vocab_size' parameter must be an int >= 2 or None. Got {vocab_size!r} instead.")
    return min(vocab_size, available)
