"""Pseudo-dynamic programming (PDP): adversarial examples with few substitutions, hence an
upper bound on the robustness radius.

Yang, Huang, Ma, Cao, Zhang, Zhang and Li, "Quantifying Robustness to Adversarial Word
Substitutions" (../shared/papers/robustness-radius-pdp-prover-pr.txt), Algorithm 1.

``A(X, 0) = {X}``; at step ``t`` the ``top_k`` texts of ``A(X, t-1)`` by ``I_s`` are kept
(*history*), the next position ``p*`` is chosen among the positions not yet used by
looking ahead (*future*): ``I_p = max`` of ``I_s(X'_{w_p <- w})`` over a few texts ``X'``
drawn from the kept ones with probability proportional to ``I_s(X')`` and every
``w in S(X, p)``; then ``A(X, t) = TopK(A(X, t-1)) x S(X, p*)`` (the original word of
``p*`` included, so texts keep their substitution count or gain one). The search stops at
the first step where ``A(X, t)`` holds an adversarial example with at most ``tau * n``
substitutions and returns the best one (fewest substitutions, then highest score).

``I_s`` is the goal's score: ``1 - F_{y*}(X')`` for the untargeted goal,
``F_{y_hat}(X')`` for the targeted one (:mod:`textrobust.attack.goals`), so PDP is
untargeted or targeted as its Problem is. Every step's look-ahead texts go to the query
layer in one batch, and the expansion in a second one (mostly cache hits: the texts of
``A(X, t)`` that change ``p*`` were look-ahead texts of the sampled parents).

As a :class:`~textrobust.attack.problem.Search` it needs only the Problem: ``S(X, p)`` is
read once from ``problem.neighbours(start)`` (the one-word edits every constraint
accepts), and a position is changed in a text only where ``problem.positions(text)``
allows it. Combined texts are not re-checked by the candidate constraints: like the
paper's perturbation space, the candidate sets of different positions are independent.

Departures (none changes what counts as a success):

- The paper does not give ``K`` or the number of look-ahead draws; defaults here are
  ``top_k=10`` and ``lookahead_samples=4`` (draws without replacement).
- Texts that already have ``floor(tau * n)`` substitutions are not drawn for the
  look-ahead and not expanded with a new word (none of their descendants could be a valid
  adversarial example); when no kept text can change any more, the search ends early.
- A look-ahead text that is adversarial ends the search at once: it has at most ``t``
  substitutions, like every text of ``A(X, t)``.
- The gradient variant of the look-ahead ("under the white-box setting, gradient
  information also can be used") is not implemented.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pydantic import Field

from textrobust.attack.problem import Problem
from textrobust.attack.searches.base import BaseSearch, Run, seeded_rng
from textrobust.config import Config
from textrobust.attack.cap import modification_cap
from textrobust.attack.space import PerturbationSpace, space_from_problem
from textrobust.text import Text

__all__ = ["PDPConfig", "PseudoDynamicProgramming"]


class PDPConfig(Config):
    """Settings of :class:`PseudoDynamicProgramming`.

    ``top_k``: texts kept from each step (``K``); ``lookahead_samples``: texts drawn from
    them to score the remaining positions; ``tau``: the maximum share of substituted
    words of a valid adversarial example; ``seed``: for the draws.
    """

    top_k: int = Field(default=10, ge=1)
    lookahead_samples: int = Field(default=4, ge=1)
    tau: float = Field(default=0.25, gt=0.0, le=1.0)
    seed: int = 0


class PseudoDynamicProgramming(BaseSearch):
    """Algorithm 1 of Yang et al. (2022), as a search over any Problem.

    >>> from textrobust.analyses.radius import PseudoDynamicProgramming
    >>> PseudoDynamicProgramming(top_k=5)
    PseudoDynamicProgramming(top_k=5, lookahead_samples=4, tau=0.25, seed=0)
    """

    config_class = PDPConfig
    config: PDPConfig

    def _prepare(self, start: Text, problem: Problem) -> Any:
        return space_from_problem(problem, start)

    def _search(self, start: Text, problem: Problem, run: Run, prepared: Any) -> None:
        space: PerturbationSpace = prepared
        cfg = self.config
        cap = modification_cap(start, cfg.tau)
        if space.m == 0 or cap == 0:
            return
        rng = seeded_rng(cfg.seed, start)
        subs = dict(zip(space.positions, space.substitutes))
        pool = list(space.positions)  # P2: positions not yet used
        kept: list[Text] = [start]
        scores = np.array([run.score], dtype=np.float64)
        changes = [0]
        while pool:
            run.iterations += 1
            top = np.argsort(-scores, kind="stable")[: cfg.top_k]  # TopK(A(X, t-1))
            kept = [kept[i] for i in top]
            scores, changes = scores[top], [changes[i] for i in top]
            open_rows = [i for i, c in enumerate(changes) if c < cap]
            if not open_rows:
                run.note("capped", float(cap))
                return
            allowed = {i: frozenset(problem.positions(kept[i])) for i in open_rows}
            best = self._choose(kept, scores, open_rows, allowed, pool, subs, run, rng)
            if best is None or run.success:
                return
            # A(X, t) = TopK(A(X, t-1)) x S(X, p*)
            children, child_changes = [], []
            for i, text in enumerate(kept):
                children.append(text)
                child_changes.append(changes[i])
                if i in allowed and best in allowed[i]:
                    for word in subs[best]:
                        children.append(text.replace(best, word))
                        child_changes.append(changes[i] + 1)
            pool.remove(best)
            found = run.evaluate(children)
            if found.success.any():
                self._finish(run, children, child_changes, found.success, found.scores)
                return
            kept, scores, changes = children, np.asarray(found.scores, dtype=np.float64), child_changes
            run.note("step", float(scores.max()))

    def _choose(
        self,
        kept: list[Text],
        scores: np.ndarray,
        open_rows: list[int],
        allowed: dict[int, frozenset[int]],
        pool: list[int],
        subs: dict[int, tuple[str, ...]],
        run: Run,
        rng: np.random.Generator,
    ) -> int | None:
        """Look ahead: the position of ``pool`` with the highest ``I_p``, or None when no
        kept text may change any position of the pool. Ends the run on an adversarial
        look-ahead text."""
        candidates = [p for p in pool if any(p in allowed[i] for i in open_rows)]
        if not candidates:
            return None
        if len(candidates) == 1:
            return candidates[0]
        # draw parents with probability proportional to I_s (a floor keeps zeros drawable)
        weights = np.maximum(scores[open_rows], 0.0) + 1e-12
        size = min(self.config.lookahead_samples, len(open_rows))
        picked = rng.choice(len(open_rows), size=size, replace=False, p=weights / weights.sum())
        drawn = sorted(open_rows[j] for j in picked)
        probes: list[Text] = []
        owners: list[int] = []
        for i in drawn:
            base = kept[i]
            for p in candidates:
                if p not in allowed[i]:
                    continue
                for word in subs[p]:
                    probes.append(base.replace(p, word))
                    owners.append(p)
        if not probes:
            return candidates[0]
        found = run.evaluate(probes)
        if found.success.any():
            changes = [run.start.l0(t) for t in probes]
            self._finish(run, probes, changes, found.success, found.scores)
            return None
        value = {p: -np.inf for p in candidates}
        for p, s in zip(owners, found.scores.tolist()):
            if s > value[p]:
                value[p] = s
        return max(candidates, key=lambda p: (value[p], -candidates.index(p)))

    @staticmethod
    def _finish(run: Run, texts: list[Text], changes: list[int], success: np.ndarray, scores: np.ndarray) -> None:
        """Record the best adversarial text: fewest substitutions, then highest score."""
        rows = np.flatnonzero(np.asarray(success, dtype=bool))
        i = min(rows.tolist(), key=lambda j: (changes[j], -float(scores[j]), j))
        run.best, run.score, run.success = texts[i], float(scores[i]), True
