"""The random second-order baseline: up to 6 random replacements from the neighbourhood.

Zhang et al., "Double Perturbation", NAACL 2021 (../shared/papers/double-perturbation-
second-order-robustness-and-bias.txt), Appendix A.1: "constructs vulnerable examples by
randomly replacing up to 6 words", with the same fill-in model and threshold as SO-Beam,
to show that minimising Eq. 4 is what makes SO-Beam work.

Each step picks a position uniformly among those the problem allows, then one of the
kept fill-in words there uniformly, and scores only that text; it stops at the first
success. Positions without a candidate are re-drawn (at most ``tries`` times per step).
The released code (``RandomBaselineAttack``: one random mask, a random choice among its
candidates, depth 6) scores every candidate of the chosen position but moves to a random
one; scoring only the chosen text has the same success rule at a fraction of the queries.
Seeded per example (:func:`~textrobust.attack.searches.base.seeded_rng`).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from textrobust.attack.problem import Problem
from textrobust.attack.searches.base import BaseSearch, Run, seeded_rng
from textrobust.config import Config
from textrobust.text import Text

__all__ = ["RandomBaseline", "RandomBaselineConfig"]


class RandomBaselineConfig(Config):
    """Settings of :class:`RandomBaseline`: ``max_k`` random replacements at most (the
    paper: 6); ``tries`` position draws per step; ``seed``."""

    max_k: int = Field(default=6, ge=1)
    tries: int = Field(default=8, ge=1)
    seed: int = 0


class RandomBaseline(BaseSearch):
    """A seeded random walk of at most ``max_k`` one-word replacements.

    >>> RandomBaseline(seed=3)
    RandomBaseline(max_k=6, tries=8, seed=3)
    """

    config_class = RandomBaselineConfig
    config: RandomBaselineConfig

    def _search(self, start: Text, problem: Problem, run: Run, prepared: Any) -> None:
        rng = seeded_rng(self.config.seed, start)
        current = start
        for _ in range(self.config.max_k):
            positions = problem.positions(current)
            if not positions:
                return
            chosen = None
            for _ in range(self.config.tries):
                position = positions[int(rng.integers(0, len(positions)))]
                proposals = run.neighbours(current, position)
                if proposals:
                    chosen = proposals[int(rng.integers(0, len(proposals)))]
                    break
            if chosen is None:
                return
            current = chosen.text
            run.evaluate([current])
            run.iterations += 1
            if run.success:
                return
