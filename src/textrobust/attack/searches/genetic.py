"""The genetic search of Alzantot et al. (2018).

Alzantot, Sharma, Elgohary, Ho, Srivastava and Chang, "Generating Natural Language
Adversarial Examples", EMNLP 2018 (code: github.com/nesl/nlp_adversarial_examples).

1. The first population is ``pop_size`` perturbations of the start text.
2. Each generation: fitness is the goal score; the fittest member (the elite) passes
   unchanged; ``pop_size - 1`` children are bred from parents sampled with probability
   ``softmax(fitness / temperature)``, by uniform crossover (each word from either
   parent), then perturbed once. The search stops at the first success or after
   ``max_iters`` generations (the paper's G).
3. Perturb: a position sampled in proportion to its number of candidates (unchanged
   positions only, as the released code), every candidate there scored, the best kept if
   it raises the score.

Departures, all noted where they happen:

- Query-efficient batching: a generation costs two ``evaluate`` calls (all children,
  then all their perturbation candidates), not one per child; duplicates are scored once.
- Post-crossover check (from TextAttack's ``AlzantotGeneticAlgorithm``): a child must
  pass the problem's constraints, else crossover is retried ``max_crossover_retries``
  times and then the first parent is taken. The paper has no such check.
- Temperature: the released code uses ``temp = 3.0`` in ``attacks.py``; TextAttack uses
  0.3 (its old ``GeneticAlgorithm`` softmaxed ``-score``, favouring the *least* fit; fixed
  here). The default is 0.3. ``patience`` gives up after that many generations without
  improvement (TextAttack's ``give_up_if_no_improvement`` is ``patience=1``).
- The paper's language-model filter of candidates is a constraint of the problem here.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pydantic import Field

from textrobust.attack.problem import Problem
from textrobust.attack.searches.base import BaseSearch, Run, admissible, seeded_rng
from textrobust.attack.searches.population import candidate_counts, perturb, softmax
from textrobust.config import Config
from textrobust.text import Text

__all__ = ["GeneticConfig", "GeneticSearch", "crossover"]


class GeneticConfig(Config):
    """Settings of :class:`GeneticSearch` (defaults: Alzantot et al. 2018 / TextAttack)."""

    pop_size: int = Field(60, ge=2)
    max_iters: int = Field(20, ge=1)
    temperature: float = Field(0.3, gt=0.0)
    post_crossover_check: bool = True
    max_crossover_retries: int = Field(20, ge=0)
    patience: int | None = Field(None, ge=1)
    seed: int = 0


def crossover(first: Text, second: Text, rng: np.random.Generator) -> Text:
    """Uniform crossover: each word from ``first`` or ``second`` with probability 1/2."""
    take = rng.random(len(first)) < 0.5
    ours, theirs = first.words, second.words
    words = {i: theirs[i] for i in np.flatnonzero(take).tolist() if ours[i] != theirs[i]}
    return first.replace(words) if words else first


class GeneticSearch(BaseSearch):
    """Alzantot et al. (2018) genetic search.

    >>> GeneticSearch(pop_size=20, seed=1).config.max_iters
    20
    """

    config_class = GeneticConfig
    config: GeneticConfig

    def _search(self, start: Text, problem: Problem, run: Run, prepared: Any) -> None:
        cfg = self.config
        rng = seeded_rng(cfg.seed, start)
        weights = candidate_counts(start, problem)
        if not weights.any():
            return
        size = cfg.pop_size
        population, scores = perturb([start] * size, np.full(size, run.score), run, weights, rng)
        if run.success:
            return
        best, stale = float(scores.max()), 0
        for _ in range(cfg.max_iters):
            run.iterations += 1
            elite = int(np.argmax(scores))
            run.note("generation", float(scores[elite]))
            probs = softmax(scores, cfg.temperature)
            firsts = rng.choice(size, size=size - 1, p=probs)
            seconds = rng.choice(size, size=size - 1, p=probs)
            children = [
                self._breed(population[a], population[b], start, problem, rng)
                for a, b in zip(firsts, seconds)
            ]
            child_scores = run.evaluate(children).scores
            if run.success:
                return
            children, child_scores = perturb(children, child_scores, run, weights, rng)
            if run.success:
                return
            population = [population[elite], *children]
            scores = np.concatenate([[scores[elite]], child_scores])
            if scores.max() > best:
                best, stale = float(scores.max()), 0
            else:
                stale += 1
                if cfg.patience is not None and stale >= cfg.patience:
                    return

    def _breed(self, first: Text, second: Text, start: Text, problem: Problem, rng: np.random.Generator) -> Text:
        if first == second:
            return first
        tries = self.config.max_crossover_retries + 1 if self.config.post_crossover_check else 1
        for _ in range(tries):
            child = crossover(first, second, rng)
            if (
                not self.config.post_crossover_check
                or child == first
                or child == second
                or admissible(problem, start, first, child)
            ):
                return child
        return first  # TextAttack takes a parent at random; the first is already random
