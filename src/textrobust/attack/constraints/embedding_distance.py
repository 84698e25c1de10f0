"""Candidate constraint: the new word stays close to the replaced word in embedding space."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

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
        # (reference word, new word) -> verdict: a plain dict, emptied when it would pass
        # cache_size (a recency-tracking LRU cost more per lookup than the distances)
        self._cache: dict[tuple[str, str], bool] = {}
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
        return np.array(self.pair_verdicts(self._pairs(original, proposals)), dtype=bool)

    @property
    def pair_reference(self) -> str:
        """Whose word a pair's first word is (``"original"`` or ``"parent"``): the
        :class:`~textrobust.attack.problem.PairConstraint` fast path, which lets the problem
        filter candidate words before it builds their texts."""
        return self.config.compare_to.value

    def pair_verdicts(self, pairs: Sequence[tuple[str, str]]) -> list[bool]:
        """The verdict on each (reference word, new word) pair (cached per pair)."""
        if not pairs:
            return []
        cache = self._cache
        verdicts: list[bool | None] = [cache.get(pair) for pair in pairs]
        if None in verdicts:
            missing = list(dict.fromkeys(pair for pair, verdict in zip(pairs, verdicts) if verdict is None))
            fresh = dict(zip(missing, self._judge(missing)))
            verdicts = [fresh[pair] if verdict is None else verdict for pair, verdict in zip(pairs, verdicts)]
            limit = self._cache_size
            if limit is not None and len(cache) + len(fresh) > limit:
                cache.clear()  # bounded: start over rather than track recency per pair
            if limit is None or len(fresh) <= limit:
                cache.update(fresh)
        return cast("list[bool]", verdicts)  # no None left

    def _judge(self, pairs: Sequence[tuple[str, str]]) -> list[bool]:
        """The verdict on each (reference word, new word) pair: it depends on the pair only.
        (A hot path on first use of each pair: one row lookup for both words, and only the
        bounds that are set.)"""
        n = len(pairs)
        rows = self._rows([a for a, _ in pairs] + [b for _, b in pairs])
        left_rows, right_rows = rows[:n], rows[n:]
        known = (left_rows >= 0) & (right_rows >= 0)
        ok = np.full(n, self.config.accept_unknown, dtype=bool)
        if known.any():
            cos, l2 = self._distances(left_rows[known], right_rows[known],
                                      self.config.min_cos is not None, self.config.max_l2 is not None)
            good = np.ones(len(cos), dtype=bool)
            if self.config.min_cos is not None:
                good &= cos >= self.config.min_cos - 1e-6
            if self.config.max_l2 is not None:
                good &= l2 <= self.config.max_l2 + 1e-6
            ok[known] = good
        verdicts = ok.tolist()
        for i, verdict in enumerate(verdicts):
            if not verdict:
                a, b = pairs[i]
                verdicts[i] = a.lower() == b.lower()  # the same word is always accepted
        return verdicts

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

    def _compute(self, pairs: Sequence[tuple[str, str]]) -> tuple[np.ndarray, np.ndarray]:
        """Cosine and L2 distance of each pair, NaN for pairs with an unknown word."""
        cos = np.full(len(pairs), np.nan)
        l2 = np.full(len(pairs), np.nan)
        if not pairs:
            return cos, l2
        n = len(pairs)
        rows = self._rows([a for a, _ in pairs] + [b for _, b in pairs])
        left_rows, right_rows = rows[:n], rows[n:]
        known = (left_rows >= 0) & (right_rows >= 0)
        if known.any():
            cos[known], l2[known] = self._distances(left_rows[known], right_rows[known], True, True)
        return cos, l2

    def _distances(
        self, left_rows: np.ndarray, right_rows: np.ndarray, want_cos: bool, want_l2: bool
    ) -> tuple[np.ndarray, np.ndarray]:
        """Cosine and L2 distance between matrix rows (float64; an unwanted one is zeros)."""
        matrix = self.vectors.matrix
        left = np.asarray(matrix[left_rows], dtype=np.float64)
        right = np.asarray(matrix[right_rows], dtype=np.float64)
        cos = l2 = np.zeros(len(left_rows))
        if want_cos:
            products = np.sqrt(np.einsum("ij,ij->i", left, left) * np.einsum("ij,ij->i", right, right))
            products[products == 0] = 1.0
            cos = np.clip(np.einsum("ij,ij->i", left, right) / products, -1.0, 1.0)
        if want_l2:
            difference = left - right
            l2 = np.sqrt(np.einsum("ij,ij->i", difference, difference))
        return cos, l2
