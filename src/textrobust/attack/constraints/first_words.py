"""Position constraint: only the first words of a text may change."""

from __future__ import annotations

from pydantic import Field

from textrobust.attack.constraints.base import Configured
from textrobust.config import Config
from textrobust.text import Text

__all__ = ["FirstWords", "FirstWordsConfig"]


class FirstWordsConfig(Config):
    limit: int = Field(default=25, ge=1)


class FirstWords(Configured[FirstWordsConfig]):
    """No edit at a position past the first ``limit`` words: the "max length considered"
    of La Malfa et al. (2020, Tables 2-3), whose maximal safe radius looks at the first
    words of each text only (the ``positions`` setting of the ``msr`` analysis).

    >>> FirstWords(limit=2).allowed(Text.from_string("a fine film"), Text.from_string("a fine film"), frozenset({0, 2}))
    frozenset({0})
    """

    def __init__(self, limit: int = 25) -> None:
        self.config = FirstWordsConfig(limit=limit)

    def allowed(self, original: Text, current: Text, positions: frozenset[int]) -> frozenset[int]:
        return frozenset(p for p in positions if p < self.config.limit)
