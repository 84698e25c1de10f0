"""SO-Enum: the brute-force second-order attack (smallest perturbation, small k).

Zhang et al., "Double Perturbation", NAACL 2021 (../shared/papers/double-perturbation-
second-order-robustness-and-bias.txt), Section 3.2: solve Eq. 3 by enumerating
Neighbor_k(x0), k <= 2; it finds the vulnerable example with the fewest changed words.

Enumeration goes by distance: level 1 is Neighbor_1(x0); level j + 1 puts one more
changed word into the texts of level j, at a position not yet changed. Every text of
Neighbor_k(x0) is in some level j <= k: re-changing an already changed position of a
level-j text gives a text that another level-j text reaches with the new word at that
position (its fill-in sees the same context), so levels cover the paper's recursion.
Each level is scored in chunks of ``chunk_size`` texts; the search stops after the
first chunk holding a success, returning its best success (lowest Eq. 4 loss), so the
answer has the smallest distance, and among the texts scored at that distance the most
confident one. Without a success the whole of Neighbor_k(x0) is scored (cost grows like
(kappa * words)^k: keep k <= 2 and a query budget).

A generic search over the :class:`~textrobust.attack.problem.Problem` API: with the
second-order goal and the Neighbor_1 source it is SO-Enum; with any other goal it is an
exhaustive search by distance.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from textrobust.attack.problem import Problem
from textrobust.attack.searches.base import BaseSearch, Run
from textrobust.config import Config
from textrobust.text import Text

__all__ = ["SOEnum", "SOEnumConfig"]


class SOEnumConfig(Config):
    """Settings of :class:`SOEnum`: ``max_k`` >= 1 words changed at most (the paper: 2);
    ``chunk_size`` texts scored per batch within a level."""

    max_k: int = Field(default=2, ge=1)
    chunk_size: int = Field(default=2048, ge=1)


class SOEnum(BaseSearch):
    """Enumerate texts by increasing distance from the start; stop at the first distance
    with a success.

    >>> SOEnum()
    SOEnum(max_k=2, chunk_size=2048)
    """

    config_class = SOEnumConfig
    config: SOEnumConfig

    def _search(self, start: Text, problem: Problem, run: Run, prepared: Any) -> None:
        seen = {start.key}
        level = [start]
        for _ in range(self.config.max_k):
            fresh: list[Text] = []
            next_level: list[Text] = []
            for text in level:
                changed = set(start.diff(text))
                for proposal in problem.neighbours(text):
                    if proposal.position in changed or proposal.text.key in seen:
                        continue
                    seen.add(proposal.text.key)
                    fresh.append(proposal.text)
                if len(fresh) >= self.config.chunk_size:
                    if self._score(fresh, run):
                        return
                    next_level.extend(fresh)
                    fresh = []
            if fresh:
                if self._score(fresh, run):
                    return
                next_level.extend(fresh)
            if not next_level:
                return
            level = next_level

    @staticmethod
    def _score(texts: list[Text], run: Run) -> bool:
        run.evaluate(texts)
        run.iterations += 1
        run.note("scored", float(len(texts)))
        return run.success
