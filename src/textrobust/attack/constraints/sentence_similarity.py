"""Candidate constraint: the proposal stays similar to the reference text (any scorer)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from pydantic import Field

from textrobust.attack.constraints.base import Configured
from textrobust.attack.constraints.context import CompareTo, window_pairs
from textrobust.attack.problem import Proposal
from textrobust.config import Config
from textrobust.text import Text

__all__ = ["SentenceSimilarity", "SentenceSimilarityConfig"]


class SentenceSimilarityConfig(Config):
    min_similarity: float = Field(default=0.8, ge=-1.0, le=1.0)
    window: int | None = Field(default=None, ge=1)
    compare_to: CompareTo = CompareTo.ORIGINAL


class SentenceSimilarity(Configured):
    """Accept a proposal when ``scorer.similarity(reference, proposal) >= min_similarity``.

    ``scorer``: any :class:`textrobust.similarity.SentenceScorer` (None: MiniLM cosine,
    :class:`~textrobust.similarity.EncoderCosine`, loaded on first use). Compares the whole
    column (``window=None``) or ``window`` words each side of the change, as TextAttack's
    ``UniversalSentenceEncoder`` / ``SentenceEncoder`` with ``window_size = 2 * window + 1``
    (TextFooler: ``window_size=15``, i.e. ``window=7``, threshold 0.84 on an angular
    similarity; the 0.8 default here is a plain cosine). Pairs are deduplicated per batch
    and the scorer caches embeddings by string, so each string is encoded once.
    """

    _owner = "SentenceSimilarity"

    def __init__(
        self,
        scorer: Any | None = None,
        *,
        min_similarity: float = 0.8,
        window: int | None = None,
        compare_to: CompareTo | str = CompareTo.ORIGINAL,
    ) -> None:
        self.config = SentenceSimilarityConfig(min_similarity=min_similarity, window=window, compare_to=compare_to)
        self._scorer = scorer

    def _collaborators(self) -> dict[str, Any]:
        return {"scorer": self._scorer}

    def _default_scorer(self) -> Any:
        from textrobust.similarity import EncoderCosine

        return EncoderCosine()

    @property
    def scorer(self) -> Any:
        if self._scorer is None:
            self._scorer = self._default_scorer()
        return self._scorer

    @property
    def threshold(self) -> float:
        return self.config.min_similarity  # type: ignore[attr-defined, no-any-return]

    def similarities(self, original: Text, proposals: Sequence[Proposal]) -> np.ndarray:
        """Per proposal, the scorer's similarity between the reference and proposal windows."""
        if not proposals:
            return np.zeros(0, dtype=np.float64)
        refs, news = window_pairs(original, proposals, self.config.compare_to, self.config.window, self._owner)  # type: ignore[attr-defined]
        unique = list(dict.fromkeys(zip(refs, news)))
        values = np.asarray(self.scorer.similarity([a for a, _ in unique], [b for _, b in unique]), dtype=np.float64)
        found = dict(zip(unique, values.tolist()))
        return np.array([found[pair] for pair in zip(refs, news)], dtype=np.float64)

    def check(self, original: Text, proposals: Sequence[Proposal]) -> np.ndarray:
        return self.similarities(original, proposals) >= self.threshold
