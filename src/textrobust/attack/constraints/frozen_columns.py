"""Position constraint: frozen positions and frozen columns never change."""

from __future__ import annotations

from collections.abc import Iterable

from textrobust.attack.constraints.base import Configured
from textrobust.config import Config
from textrobust.text import Text

__all__ = ["FrozenColumns", "FrozenColumnsConfig"]


class FrozenColumnsConfig(Config):
    columns: tuple[str, ...] = ()


class FrozenColumns(Configured[FrozenColumnsConfig]):
    """No edit of a frozen position (``text.frozen`` of the original or the current text),
    nor of any word in the named ``columns`` (e.g. ``("premise",)``).

    :class:`~textrobust.attack.problem.Problem` already starts from ``text.modifiable``;
    this makes the rule explicit in a recipe, and can freeze a column the text itself does
    not (an unknown column name is a ConfigError when the constraint meets the text).

    >>> t = Text.from_pair("A man sleeps.", "A person rests.", frozen_columns=())
    >>> sorted(FrozenColumns(columns=["premise"]).allowed(t, t, frozenset(range(6))))
    [3, 4, 5]
    """

    def __init__(self, columns: Iterable[str] = ()) -> None:
        self.config = FrozenColumnsConfig(columns=tuple(columns))

    def allowed(self, original: Text, current: Text, positions: frozenset[int]) -> frozenset[int]:
        blocked = set(original.frozen) | set(current.frozen)
        for name in self.config.columns:
            blocked.update(original.column_positions(name))
        return frozenset(p for p in positions if p not in blocked)
