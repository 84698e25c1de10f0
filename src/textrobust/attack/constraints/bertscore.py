"""Candidate constraint: BERTScore F1 between the reference and the proposal."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from textrobust.attack.constraints.context import CompareTo
from textrobust.attack.constraints.sentence_similarity import SentenceSimilarity
from textrobust.config import Config

__all__ = ["BERTScoreConstraint", "BERTScoreConstraintConfig"]


class BERTScoreConstraintConfig(Config):
    min_f1: float = Field(default=0.85, ge=0.0, le=1.0)
    window: int | None = Field(default=None, ge=1)
    compare_to: CompareTo = CompareTo.ORIGINAL


class BERTScoreConstraint(SentenceSimilarity):
    """Accept a proposal when BERTScore F1(reference, proposal) >= ``min_f1``.

    ``scorer``: a :class:`textrobust.similarity.BERTScore` or any scorer giving F1-like
    values (None: BERTScore over MiniLM layer 4, loaded on first use). Without baseline
    rescaling (none exists for a local model) F1 runs high: one word swapped in a short
    sentence gives ~0.9-0.97 with MiniLM, so the 0.85 default is looser than it looks.
    TextAttack's ``BERTScore(min_bert_score=...)`` uses ``bert-base-uncased`` by default.
    Windows and ``compare_to`` work as in :class:`SentenceSimilarity`.
    """

    _owner = "BERTScoreConstraint"

    def __init__(
        self,
        scorer: Any | None = None,
        *,
        min_f1: float = 0.85,
        window: int | None = None,
        compare_to: CompareTo | str = CompareTo.ORIGINAL,
    ) -> None:
        self.config = BERTScoreConstraintConfig(min_f1=min_f1, window=window, compare_to=compare_to)  # type: ignore[assignment]
        self._scorer = scorer

    def _default_scorer(self) -> Any:
        from textrobust.similarity import BERTScore

        return BERTScore()

    @property
    def threshold(self) -> float:
        return self.config.min_f1  # type: ignore[attr-defined, no-any-return]
