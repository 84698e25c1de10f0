"""The perturbation step shared by the population searches (genetic, particle swarm).

Alzantot et al. (2018) and Zang et al. (2020) perturb a text the same way: pick a
position at random, with probability proportional to its number of candidates,
preferring positions not yet changed; score every candidate there; keep the best one if
it raises the score (or meets the goal). :func:`perturb` does this for a whole
population at once, with one ``evaluate`` call for all members.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from itertools import accumulate

import numpy as np

from textrobust.attack.problem import Problem, Proposal
from textrobust.attack.searches.base import Run, best_of
from textrobust.text import Text

__all__ = ["candidate_counts", "perturb", "softmax", "weighted_index"]


def candidate_counts(start: Text, problem: Problem, cap: int | None = None) -> np.ndarray:
    """The number of accepted candidates at each position of ``start`` (capped at ``cap``),
    the weights with which positions are picked for perturbation."""
    counts = np.zeros(len(start), dtype=np.float64)
    for position, count in problem.neighbour_counts(start).items():
        counts[position] = count
    if cap is not None:
        np.minimum(counts, cap, out=counts)
    return counts


def softmax(values: np.ndarray, temperature: float) -> np.ndarray:
    """exp(v / T) normalised, computed stably."""
    z = np.asarray(values, dtype=np.float64) / temperature
    z = np.exp(z - z.max())
    return z / z.sum()


def weighted_index(rng: np.random.Generator, weights: np.ndarray) -> int:
    """``int(rng.choice(len(weights), p=weights / weights.sum()))``, the same draw from the
    same stream (NumPy's own steps: normalised cumulative sum, one uniform, a right-sided
    search), without ``choice``'s argument checks: the genetic search draws one position
    per member per generation, and those checks cost more than the draw. ``weights`` are
    non-negative with a positive sum (the caller's pool)."""
    # cumsum is sequential float64 addition, as accumulate; searchsorted(right) is bisect_right
    cdf = list(accumulate((weights / weights.sum()).tolist()))
    last = cdf[-1]
    return bisect_right([c / last for c in cdf], rng.random())


def perturb(
    members: Sequence[Text],
    scores: np.ndarray,
    run: Run,
    weights: np.ndarray,
    rng: np.random.Generator,
) -> tuple[list[Text], np.ndarray]:
    """Perturb every member once: a random position (weighted by ``weights``, among the
    positions the problem still allows, unchanged ones first), its best candidate kept
    if it improves on the member's ``scores`` entry. One evaluation for the whole batch.

    Returns the new members and their scores. A member with no position left is kept.
    """
    start = run.start
    chosen: list[list[Proposal]] = []
    for member in members:
        allowed = [p for p in run.problem.positions(member) if weights[p] > 0]
        fresh = [p for p in allowed if member.words[p] == start.words[p]]
        pool = fresh or allowed  # all changed: any allowed position (SememePSO's rule)
        if not pool:
            chosen.append([])
            continue
        position = pool[weighted_index(rng, weights[pool])]
        chosen.append(run.neighbours(member, position))
    flat = [p.text for proposals in chosen for p in proposals]
    new_members = list(members)
    new_scores = np.array(scores, dtype=np.float64, copy=True)
    if not flat:
        return new_members, new_scores
    found = run.evaluate(flat)
    offset = 0
    all_success, all_scores = found.success.tolist(), found.scores.tolist()
    for k, proposals in enumerate(chosen):
        n = len(proposals)
        if n == 0:
            continue
        success = all_success[offset : offset + n]
        values = all_scores[offset : offset + n]
        i = best_of(success, values)
        if success[i] or values[i] > new_scores[k]:
            new_members[k] = proposals[i].text
            new_scores[k] = values[i]
        offset += n
    return new_members, new_scores
