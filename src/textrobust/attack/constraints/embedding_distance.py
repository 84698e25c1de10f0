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
from textrobust.errors import ConfigError
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
        if cache_size is not None and cache_size < 1:
            raise ConfigError(f"The 'cache_size' parameter must be >= 1 or None. Got {cache_size} instead.")
        # (reference word, new word) -> (cos, l2): a plain dict, emptied when it would pass
        # cache_size (a recency-tracking LRU cost more per lookup than the distances)
        self._cache: dict[tuple[str, str], tuple[float, float]] = {}
        self._cache_size = cache_size

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
        cos, l2 = self._compute(self._pairs(original, proposals))
        return np.stack([cos, l2], axis=1)

    def check(self, original: Text, proposals: Sequence[Proposal]) -> np.ndarray:
        if not proposals:
            return np.zeros(0, dtype=bool)
        pairs = self._pairs(original, proposals)
        cache = self._cache
        verdicts = [cache.get(pair) for pair in pairs]
        if None in verdicts:
            missing = list(dict.fromkeys(pair for pair, verdict in zip(pairs, verdicts) if verdict is None))
            fresh = dict(zip(missing, self._judge(missing)))
            verdicts = [fresh[pair] if verdict is None else verdict for pair, verdict in zip(pairs, verdicts)]
            limit = self._cache_size
            if limit is not None and len(cache) + len(fresh) > limit:
                cache.clear()  # bounded: start over rather than track recency per pair
            if limit is None or len(fresh) <= limit:
                cache.update(fresh)
        return np.array(verdicts, dtype=bool)

    def _judge(self, pairs: list[tuple[str, str]]) -> list[bool]:
        """The verdict on each (reference word, new word) pair: it depends on the pair only."""
        cos, l2 = self._compute(pairs)
        ok = np.ones(len(pairs), dtype=bool)
        with np.errstate(invalid="ignore"):
            if self.config.min_cos is not None:
                ok &= cos >= self.config.min_cos - 1e-6
            if self.config.max_l2 is not None:
                ok &= l2 <= self.config.max_l2 + 1e-6
        ok[np.isnan(cos)] = self.config.accept_unknown
        same = [a.lower() == b.lower() for a, b in pairs]  # the same word is always accepted
        return [bool(v) or s for v, s in zip(ok.tolist(), same)]

    def _pairs(self, original: Text, proposals: Sequence[Proposal]) -> list[tuple[str, str]]:
        """(reference word, new word) of each proposal (a hot path: one pair per candidate)."""
        to_original = self.config.compare_to is CompareTo.ORIGINAL
        reference = original
        words = original.words
        n = len(words)
        pairs = []
        for proposal in proposals:
            if not to_original and proposal.parent is not reference:
                reference = proposal.parent
                words = reference.words
                n = len(words)
            position = proposal.position
            if len(proposal.text.words) != n or not 0 <= position < n:
                check_lengths("WordEmbeddingDistance", reference, proposal)  # raises
            pairs.append((words[position], proposal.word))
        return pairs

    def _rows(self, words: list[str]) -> np.ndarray:
        """Each word's row in the vectors (as written, else lower-cased), -1 if unknown."""
        index = self.vectors.index
        get = index.get
        rows = [get(word, -1) for word in words]
        for i, row in enumerate(rows):
            if row == -1:
                rows[i] = get(words[i].lower(), -1)
        return np.array(rows, dtype=np.int64)

    def _compute(self, pairs: list[tuple[str, str]]) -> tuple[np.ndarray, np.ndarray]:
        """Cosine and L2 distance of each pair, NaN for pairs with an unknown word."""
        cos = np.full(len(pairs), np.nan)
        l2 = np.full(len(pairs), np.nan)
        if not pairs:
            return cos, l2
        left_rows = self._rows([a for a, _ in pairs])
        right_rows = self._rows([b for _, b in pairs])
        known = (left_rows >= 0) & (right_rows >= 0)
        if not known.any():
            return cos, l2
        matrix = self.vectors.matrix
        left = np.asarray(matrix[left_rows[known]], dtype=np.float64)
        right = np.asarray(matrix[right_rows[known]], dtype=np.float64)
        products = np.sqrt(np.einsum("ij,ij->i", left, left) * np.einsum("ij,ij->i", right, right))
        cos[known] = np.clip(np.einsum("ij,ij->i", left, right) / np.where(products > 0, products, 1.0), -1.0, 1.0)
        l2[known] = np.linalg.norm(left - right, axis=1)
        return cos, l2
