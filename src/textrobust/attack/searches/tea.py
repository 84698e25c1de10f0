"""TEA and TEF: greedy searches that change an explanation while the prediction stays.

Ivankay et al., "Estimating the Adversarial Robustness of Attributions in Text with
Transformers" (../shared/papers/attribution-robustness-tea.txt), Algorithm 1
(TransformerExplanationAttack, TEA):

1. rank the words by ``I_w = d[A(s_{w -> 0}), A(s)]`` (the word's embedding zeroed),
   highest first, stop words excluded;
2. take them in batches of ``n_b = |s| * rho_b`` words (``rho_b = min(rho_max, 0.15)``);
   for a batch, ask the candidate source once for all its words (batch masking: one
   masked-LM call per batch instead of one per word);
3. for each word of the batch, try its candidates in the current text, drop those that
   change the prediction (the goal scores them -1), and keep the candidate of largest
   attribution distance when it beats the best so far;
4. stop after ``n = |s| * rho_max`` substitutions.

TEF (Ivankay et al. 2021, "Fooling explanations in text classifiers") is the same loop
with 15 counter-fitted embedding neighbours per word and no batch masking: the search is
the same, the candidates are the problem's (``tef`` below only switches batch masking
off). Both need an :class:`~textrobust.attack.goals_attribution.AttributionGoal` (which
never reports success: the loop runs to its substitution budget), so they are registered
in ``ATTRIBUTION_SEARCHES``, not with the misclassification searches.

Departures from the paper:

- batch masking here means one candidate-source call for the batch's words, each asked
  for with the others in place (the project's fill-ins fill one gap per request); the
  paper masks the batch's words together in one sentence. The saving the paper measures
  (fewer MLM calls) is the same; the candidates can differ;
- ``n = max(1, floor(|s| * rho_max))``: at least one word, so the smallest ``rho_max``
  of a sweep still perturbs short texts (the paper's 0.01 would change no word of a
  20-word review);
- Algorithm 1 line 19 reads ``r / |s| + 1 > rho_max``; we stop when ``r`` reaches ``n``,
  which is what the text says ("at most n = |s| * rho_max words are substituted").
"""

from __future__ import annotations

import math
from enum import StrEnum
from typing import Any, cast

import numpy as np
from pydantic import Field

from textrobust.attack.goals_attribution import AttributionGoal
from textrobust.attack.problem import Problem, Proposal
from textrobust.attack.searches.base import BaseSearch, Run, best_index
from textrobust.config import Config
from textrobust.errors import ConfigError
from textrobust.text import Text

__all__ = ["TEAConfig", "TEARanking", "TEASearch", "tef"]


class TEARanking(StrEnum):
    """How TEA ranks words: ``zero`` (the paper: the word's embedding zeroed, or ``unk``
    for black-box attributions) or ``order`` (left to right, no ranking cost)."""

    ZERO = "zero"
    ORDER = "order"


class TEAConfig(Config):
    """Settings of :class:`TEASearch`: ``rho_max`` (largest share of words substituted),
    ``rho_b`` (batch-masking share; None: ``min(rho_max, 0.15)`` as in the paper),
    ``batch_masking`` (one candidate call per batch), ``ranking``."""

    rho_max: float = Field(0.15, gt=0.0, le=1.0)
    rho_b: float | None = Field(None, gt=0.0, le=1.0)
    batch_masking: bool = True
    ranking: TEARanking = TEARanking.ZERO

    def batch_ratio(self) -> float:
        return self.rho_b if self.rho_b is not None else min(self.rho_max, 0.15)


class TEASearch(BaseSearch):
    """Algorithm 1 of Ivankay et al. (TEA) over any candidate source.

    >>> TEASearch(rho_max=0.2)
    TEASearch(rho_max=0.2, rho_b=None, batch_masking=True, ranking='zero')
    """

    config_class = TEAConfig
    config: TEAConfig

    def _prepare(self, start: Text, problem: Problem) -> Any:
        if not isinstance(problem.goal, AttributionGoal):
            raise ConfigError(
                f"{type(self).__name__} maximises an attribution distance: its problem needs an AttributionGoal. "
                f"Got {type(problem.goal).__name__}."
            )
        return None

    def max_substitutions(self, text: Text) -> int:
        """``n = max(1, floor(|s| * rho_max))``."""
        return max(1, math.floor(len(text) * self.config.rho_max + 1e-9))

    def batch_size(self, text: Text) -> int:
        """``n_b = max(1, floor(|s| * rho_b))``."""
        return max(1, math.floor(len(text) * self.config.batch_ratio() + 1e-9))

    def _search(self, start: Text, problem: Problem, run: Run, prepared: Any) -> None:
        positions = list(problem.positions(start))
        if not positions:
            return
        order = self._rank(start, problem, run, positions)
        run.note("ranked", len(order))
        limit, width = self.max_substitutions(start), self.batch_size(start)
        current, best, changed = start, run.score, 0
        for b in range(0, len(order), width):
            batch = order[b : b + width]
            offered: dict[int, list[Proposal]] = {}
            if self.config.batch_masking:
                allowed = [p for p in batch if p in problem.positions(current)]
                for proposal in problem.neighbours(current, allowed) if allowed else []:
                    offered.setdefault(proposal.position, []).append(proposal)
                batch_start = current
            for position in batch:
                if position not in problem.positions(current):
                    continue
                if not self.config.batch_masking:
                    proposals = problem.neighbours(current, [position])
                elif current is batch_start:
                    proposals = offered.get(position, [])
                else:  # the batch's candidates, put into the text as it is now
                    proposals = problem.filter([Proposal(current.replace(position, p.word), current, position, p.word,
                                                         p.score) for p in offered.get(position, [])])
                if not proposals:
                    continue
                found = run.evaluate([p.text for p in proposals])
                run.iterations += 1
                i = best_index(found.success, found.scores)
                if found.success[i]:
                    return
                if found.scores[i] > best:
                    current, best = proposals[i].text, float(found.scores[i])
                    changed += 1
                    run.note("kept", best)
                    if changed >= limit:
                        return


    def _rank(self, start: Text, problem: Problem, run: Run, positions: list[int]) -> list[int]:
        if self.config.ranking is TEARanking.ORDER:
            return positions
        importance = cast(AttributionGoal, problem.goal).importance(start, positions)  # _prepare checked the goal
        return [positions[i] for i in np.argsort(-importance, kind="stable")]


def tef(**settings: Any) -> TEASearch:
    """TEF (Ivankay et al. 2021) as a search: TEA's loop without batch masking; give its
    problem counter-fitted embedding neighbours (15 per word) as candidates."""
    settings.setdefault("batch_masking", False)
    return TEASearch(**settings)
