"""Position constraint: a word already changed is not changed again."""

from __future__ import annotations

from textrobust.attack.constraints.base import Configured
from textrobust.config import Config
from textrobust.text import Text

__all__ = ["RepeatModification", "RepeatModificationConfig"]


class RepeatModificationConfig(Config):
    pass


class RepeatModification(Configured[RepeatModificationConfig]):
    """No edit of a position whose word already differs from the original.

    Departs from TextAttack's ``RepeatModification``, which remembers every position ever
    modified on the way to a text: here the text itself is the record (``original.diff``),
    so a position changed and then changed back is free again. Searches that never restore
    a word (greedy, beam) see no difference.

    >>> t = Text.from_string("a fine film")
    >>> RepeatModification().allowed(t, t.replace(1, "good"), frozenset({0, 1, 2}))
    frozenset({0, 2})
    """

    def __init__(self) -> None:
        self.config = RepeatModificationConfig()

    def allowed(self, original: Text, current: Text, positions: frozenset[int]) -> frozenset[int]:
        changed = set(original.diff(current))
        return frozenset(p for p in positions if p not in changed)
