"""Candidate constraint: BERTScore F1 between the reference and the proposal."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from textrobust.attack.constraints.base import parse_enum
from textrobust.attack.constraints.context import CompareTo
from textrobust.attack.constraints.sentence_similarity import ScoredSimilarity, WindowedConfig
from textrobust.devices import Placement

__all__ = ["BERTScoreConstraint", "BERTScoreConstraintConfig"]


class BERTScoreConstraintConfig(WindowedConfig):
    min_f1: float = Field(default=0.95, ge=0.0, le=1.0)


class BERTScoreConstraint(ScoredSimilarity[BERTScoreConstraintConfig]):
    """Accept a proposal when BERTScore F1(reference, proposal) >= ``min_f1``.

    ``scorer``: a :class:`textrobust.similarity.BERTScore` or any scorer giving F1-like
    values (None: BERTScore over MiniLM layer 4, loaded on first use on ``placement``, the
    run's device and float type; None: the CPU in float32). Without baseline
    rescaling (none exists for a local model) F1 runs high. Measured on a 12-word review
    sentence, one word swapped: synonyms 0.96-0.99 (film->movie 0.988, loved->enjoyed
    0.968), an antonym 0.958 (loved->hated: BERTScore does not see polarity), nonsense
    0.90-0.91 (film->banana, loved->ate); hence the 0.95 default. Longer texts dilute one
    word's effect: use ``window`` for them. TextAttack's ``BERTScore(min_bert_score=...)``
    uses ``bert-base-uncased`` by default. Windows and ``compare_to`` work as in
    :class:`~textrobust.attack.constraints.SentenceSimilarity`.
    """

    def __init__(
        self,
        scorer: Any | None = None,
        *,
        min_f1: float = 0.95,
        window: int | None = None,
        compare_to: CompareTo | str = CompareTo.ORIGINAL,
        placement: Placement | None = None,
    ) -> None:
        config = BERTScoreConstraintConfig(
            min_f1=min_f1,
            window=window,
            compare_to=parse_enum(CompareTo, compare_to, "compare_to", "BERTScoreConstraint"),
        )
        super().__init__(scorer, config, placement)

    def _default_scorer(self) -> Any:
        from textrobust.similarity import BERTScore

        return BERTScore(placement=self._placement)

    @property
    def threshold(self) -> float:
        return self.config.min_f1
