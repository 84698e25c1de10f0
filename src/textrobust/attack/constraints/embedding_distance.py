"""Candidate constraint: the new word stays close to the replaced word in embedding space."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from pydantic import Field, model_validator

from textrobust.attack.constraints.base import Configured, parse_enum
from textrobust.attack.constraints.context import CompareTo, check_lengths, reference_text
from textrobust.attack.problem import Proposal
from textrobust.config import Config
from textrobust.similarity.cache import LRUCache
from textrobust.text import Text

__all__ = ["WordEmbeddingDistance", "WordEmbeddingDistanceConfig"]


class WordEmbeddingDistanceConfig(Config):
    min_cos: float | None = Field(default=None, ge=-1.0, le=1.0)
    max_l2: float | None = Field(default=None, ge=0.0)
    accept_unknown: bool = False
    compare_to: CompareTo = CompareTo.ORIGINAL

    @model_validator(mode="after")
    def _one_bound(self) -> WordEmbeddingDistanceConfig:
        if self.min_cos is None and self.max_l2 is None:
            raise ValueError("needs 'min_cos' or 'max_l2' (or both)")
        return self


class WordEmbeddingDistance(Configured[WordEmbeddingDistanceConfig]):
    """Accept a proposal when ``cos(v(reference word), v(new word)) >= min_cos`` and/or
    ``||v(reference word) - v(new word)|| <= max_l2``.

    ``vectors``: any object with ``index: dict[str, int]`` and ``matrix [V, d]`` (e.g.
    :class:`textrobust.embeddings.WordVectors`); None means GloVe 6B 50d (100k most
    frequent words), loaded on first use. GloVe puts antonyms as close as synonyms
    (good~bad 0.80): TextAttack uses counter-fitted vectors here, so recipes should pass
    ``textrobust.embeddings.counterfitted_vectors()``. The cosine is computed from the rows as given (normalised here),
    the L2 distance on the rows as given (for unit rows, ``l2 = sqrt(2 - 2 cos)``). With
    neither bound given, ``min_cos=0.5``. Words are looked up as written, then lower-cased.
    A word missing from the vectors is rejected unless ``accept_unknown`` (TextAttack's
    ``include_unknown_words`` defaults to accepting). The same word (ignoring case) is
    always accepted. Distances are cached per word pair.
    """

    def __init__(
        self,
        vectors: Any | None = None,
        *,
        min_cos: float | None = None,
        max_l2: float | None = None,
        accept_unknown: bool = False,
        compare_to: CompareTo | str = CompareTo.ORIGINAL,
        cache_size: int | None = 1_000_000,
    ) -> None:
        if min_cos is None and max_l2 is None:
            min_cos = 0.5
        self.config = WordEmbeddingDistanceConfig(
            min_cos=min_cos,
            max_l2=max_l2,
            accept_unknown=accept_unknown,
            compare_to=parse_enum(CompareTo, compare_to, "compare_to", "WordEmbeddingDistance"),
        )
        self._vectors = vectors
        self._cache: LRUCache[tuple[str, str], tuple[float, float]] = LRUCache(cache_size)

    def _collaborators(self) -> dict[str, Any]:
        return {"vectors": self._vectors}

    @property
    def vectors(self) -> Any:
        if self._vectors is None:
            from textrobust.similarity.word_mean import default_word_vectors

            self._vectors = default_word_vectors()
        return self._vectors

    def distances(self, original: Text, proposals: Sequence[Proposal]) -> np.ndarray:
        """``[n, 2]``: cosine and L2 distance of each change (NaN where a word is unknown)."""
        pairs = []
        for proposal in proposals:
            reference = reference_text(original, proposal, self.config.compare_to)
            check_lengths("WordEmbeddingDistance", reference, proposal)
            pairs.append((reference.words[proposal.position], proposal.word))
        self._fill([p for p in self._cache.missing(pairs)])
        out = np.empty((len(pairs), 2), dtype=np.float64)
        for i, pair in enumerate(pairs):
            value = self._cache.get(pair)
            if value is None:  # evicted by a cache smaller than this batch
                self._fill([pair])
                value = self._cache.get(pair)
            out[i] = value  # type: ignore[assignment]
        return out

    def check(self, original: Text, proposals: Sequence[Proposal]) -> np.ndarray:
        if not proposals:
            return np.zeros(0, dtype=bool)
        found = self.distances(original, proposals)
        cos, l2 = found[:, 0], found[:, 1]
        unknown = np.isnan(cos)
        ok = np.ones(len(proposals), dtype=bool)
        with np.errstate(invalid="ignore"):
            if self.config.min_cos is not None:
                ok &= cos >= self.config.min_cos - 1e-6
            if self.config.max_l2 is not None:
                ok &= l2 <= self.config.max_l2 + 1e-6
        ok[unknown] = self.config.accept_unknown
        same = np.array([self._same(original, p) for p in proposals], dtype=bool)
        return ok | same

    def _same(self, original: Text, proposal: Proposal) -> bool:
        reference = reference_text(original, proposal, self.config.compare_to)
        return reference.words[proposal.position].lower() == proposal.word.lower()

    def _row(self, word: str) -> int | None:
        index = self.vectors.index
        row = index.get(word)
        return index.get(word.lower()) if row is None else row

    def _fill(self, pairs: list[tuple[str, str]]) -> None:
        if not pairs:
            return
        matrix = self.vectors.matrix
        rows = [(self._row(a), self._row(b)) for a, b in pairs]
        known = [i for i, (a, b) in enumerate(rows) if a is not None and b is not None]
        for i, (a, b) in enumerate(rows):
            if a is None or b is None:
                self._cache.put(pairs[i], (float("nan"), float("nan")))
        if not known:
            return
        left = np.asarray(matrix[[rows[i][0] for i in known]], dtype=np.float64)
        right = np.asarray(matrix[[rows[i][1] for i in known]], dtype=np.float64)
        norms = np.linalg.norm(left, axis=1) * np.linalg.norm(right, axis=1)
        cos = np.einsum("ij,ij->i", left, right) / np.where(norms > 0, norms, 1.0)
        cos = np.clip(cos, -1.0, 1.0)
        l2 = np.linalg.norm(left - right, axis=1)
        for i, c, d in zip(known, cos.tolist(), l2.tolist()):
            self._cache.put(pairs[i], (c, d))
