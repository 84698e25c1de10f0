"""Position constraint: at most a share of the words may differ from the original."""

from __future__ import annotations

import math

from pydantic import Field

from textrobust.attack.constraints.base import Configured
from textrobust.config import Config
from textrobust.text import Text

__all__ = ["MaxModificationRate", "MaxModificationRateConfig"]


class MaxModificationRateConfig(Config):
    rate: float = Field(default=0.25, gt=0.0, le=1.0)
    min_words: int = Field(default=1, ge=0)


class MaxModificationRate(Configured[MaxModificationRateConfig]):
    """Stop editing once ``cap`` words differ from the original.

    The exact rule: ``cap = max(ceil(rate * n), min_words)`` with ``n`` the number of
    modifiable words of the original (``len(original.modifiable)``); every position is
    allowed while ``original.l0(current) < cap`` and none once it is reached. One edit
    changes one word, so no text reached through allowed edits differs from the original
    in more than ``cap`` words. ``rate * n`` is rounded to 9 decimals before the ceiling,
    so ``0.1 * 30`` gives 3, not 4.

    TextAttack's ``MaxModificationRate(max_rate, min_threshold=1)`` is the same rule with
    ``n`` the number of words of the whole text (both columns of a pair) and the count of
    positions ever modified instead of ``l0``; for a single sentence they agree.

    >>> t = Text.from_string("one two three four five six seven eight")
    >>> rule = MaxModificationRate(rate=0.25)
    >>> rule.cap(t), rule.allowed(t, t.replace({0: "x", 1: "y"}), frozenset({2, 3}))
    (2, frozenset())
    """

    def __init__(self, rate: float = 0.25, min_words: int = 1) -> None:
        self.config = MaxModificationRateConfig(rate=rate, min_words=min_words)

    def cap(self, original: Text) -> int:
        """How many words of ``original`` may differ at most."""
        n = len(original.modifiable)
        return max(math.ceil(round(self.config.rate * n, 9)), self.config.min_words)

    def allowed(self, original: Text, current: Text, positions: frozenset[int]) -> frozenset[int]:
        if original.l0(current) >= self.cap(original):
            return frozenset()
        return frozenset(positions)
