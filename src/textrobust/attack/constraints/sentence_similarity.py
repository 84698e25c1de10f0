"""Candidate constraint: the proposal stays similar to the reference text (any scorer)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

import numpy as np
from pydantic import Field

from textrobust.attack.constraints.base import Configured, parse_enum
from textrobust.attack.constraints.context import CompareTo, window_pairs
from textrobust.attack.problem import Proposal
from textrobust.config import Config
from textrobust.devices import Placement
from textrobust.text import Text

__all__ = ["ScoredSimilarity", "SentenceSimilarity", "SentenceSimilarityConfig", "WindowedConfig"]


class WindowedConfig(Config):
    """Settings shared by the similarity constraints."""

    window: int | None = Field(default=None, ge=1)
    compare_to: CompareTo = CompareTo.ORIGINAL


class SentenceSimilarityConfig(WindowedConfig):
    min_similarity: float = Field(default=0.8, ge=-1.0, le=1.0)


W = TypeVar("W", bound=WindowedConfig)


class ScoredSimilarity(Configured[W]):
    """Shared work of the similarity constraints: windows, one deduplicated scorer call per
    batch, a threshold. A subclass gives its config, default scorer and threshold;
    ``placement`` is where a default scorer's model runs (None: the CPU in float32)."""

    def __init__(self, scorer: Any | None, config: W, placement: Placement | None = None) -> None:
        self.config = config
        self._scorer = scorer
        self._placement = placement

    def _collaborators(self) -> dict[str, Any]:
        return {"scorer": self._scorer}

    def _default_scorer(self) -> Any:
        raise NotImplementedError

    @property
    def threshold(self) -> float:
        raise NotImplementedError

    @property
    def scorer(self) -> Any:
        if self._scorer is None:
            self._scorer = self._default_scorer()
        return self._scorer

    def similarities(self, original: Text, proposals: Sequence[Proposal]) -> np.ndarray:
        """Per proposal, the scorer's similarity between the reference and proposal windows."""
        if not proposals:
            return np.zeros(0, dtype=np.float64)
        owner = type(self).__name__
        refs, news = window_pairs(original, proposals, self.config.compare_to, self.config.window, owner)
        unique = list(dict.fromkeys(zip(refs, news)))
        values = np.asarray(self.scorer.similarity([a for a, _ in unique], [b for _, b in unique]), dtype=np.float64)
        found = dict(zip(unique, values.tolist()))
        return np.array([found[pair] for pair in zip(refs, news)], dtype=np.float64)

    def check(self, original: Text, proposals: Sequence[Proposal]) -> np.ndarray:
        return self.similarities(original, proposals) >= self.threshold


class SentenceSimilarity(ScoredSimilarity[SentenceSimilarityConfig]):
    """Accept a proposal when ``scorer.similarity(reference, proposal) >= min_similarity``.

    ``scorer``: any :class:`textrobust.similarity.SentenceScorer` (None: MiniLM cosine,
    :class:`~textrobust.similarity.EncoderCosine`, loaded on first use on ``placement``, the
    run's device and float type; None: the CPU in float32). Compares the whole
    column (``window=None``) or ``window`` words each side of the change, as TextAttack's
    ``UniversalSentenceEncoder`` / ``SentenceEncoder`` with ``window_size = 2 * window + 1``
    (TextFooler: ``window_size=15``, i.e. ``window=7``, threshold 0.84 on an angular
    similarity; the 0.8 default here is a plain cosine). Measured with MiniLM on a 12-word
    review sentence, one word swapped: film->movie 0.98, loved->enjoyed 0.94, loved->hated
    0.81, film->picture 0.81, film->banana 0.61, night->carrot 0.72. Pairs are deduplicated
    per batch and the scorer caches embeddings by string, so each string is encoded once.
    """

    def __init__(
        self,
        scorer: Any | None = None,
        *,
        min_similarity: float = 0.8,
        window: int | None = None,
        compare_to: CompareTo | str = CompareTo.ORIGINAL,
        placement: Placement | None = None,
    ) -> None:
        config = SentenceSimilarityConfig(
            min_similarity=min_similarity,
            window=window,
            compare_to=parse_enum(CompareTo, compare_to, "compare_to", "SentenceSimilarity"),
        )
        super().__init__(scorer, config, placement)

    def _default_scorer(self) -> Any:
        from textrobust.similarity import EncoderCosine

        return EncoderCosine(placement=self._placement)

    @property
    def threshold(self) -> float:
        return self.config.min_similarity
