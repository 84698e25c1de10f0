"""The particle swarm search of Zang et al. (2020).

Zang, Qi, Yang, Liu, Zhang, Liu and Sun, "Word-level Textual Adversarial Attacking as
Combinatorial Optimization", ACL 2020 (code: github.com/thunlp/SememePSO-Attack).

A particle is a text; its velocity has one entry per word position. Each iteration:

1. Velocity: ``v_d <- omega v_d + (1 - omega) (I(x_d, p_d) + I(x_d, g_d))`` with
   ``I(a, b) = -v_max`` if ``a == b`` else ``+v_max`` (``p``: the particle's own best,
   ``g``: the swarm's best); ``omega`` falls linearly from ``omega_max`` to ``omega_min``.
2. Move: with probability ``P1`` the particle moves towards its own best, then with
   probability ``P2`` towards the global best; moving copies each word of the elite with
   probability ``sigmoid(v_d)``. ``P1`` falls from ``c_high`` to ``c_low`` over the
   iterations and ``P2`` rises from ``c_low`` to ``c_high`` (exploration, then
   exploitation).
3. Mutation (turbulence): with probability ``1 - mutation_k * (changed words / length)``
   the particle is perturbed once: a position sampled in proportion to its number of
   candidates (capped at ``weight_cap``), unchanged positions first, its best candidate
   kept if it raises the score.
4. Elites are updated; the search stops at the first success, or after ``max_iters``.

The swarm starts as ``pop_size`` perturbations of the start text. Defaults are the
paper's: 60 particles, 20 iterations, omega 0.8 -> 0.2, v_max 3, k = 2.

Departures: each phase of an iteration scores the whole swarm in one ``evaluate`` call
(two per iteration: after moving, after mutating); duplicates are scored once. As the
released code (and unlike TextAttack, whose ``_perturb`` scores every candidate of every
position of a particle), a mutation scores the candidates of one sampled position only,
which costs a fraction of the queries. The post-move check (a moved particle must pass
the problem's constraints, retried ``max_turn_retries`` times, else it stays) comes from
TextAttack; the paper has none. TextAttack's ``_turn`` copies the *particle's* words into
the elite; we follow the paper and released code, copying the elite's words into the
particle.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pydantic import Field, ValidationInfo, field_validator

from textrobust.attack.problem import Problem
from textrobust.attack.searches.base import BaseSearch, Run, admissible, seeded_rng
from textrobust.attack.searches.population import candidate_counts, perturb
from textrobust.config import Config
from textrobust.text import Text

__all__ = ["PSOConfig", "ParticleSwarmSearch"]


class PSOConfig(Config):
    """Settings of :class:`ParticleSwarmSearch` (defaults: Zang et al. 2020)."""

    pop_size: int = Field(60, ge=1)
    max_iters: int = Field(20, ge=1)
    omega_max: float = Field(0.8, ge=0.0, le=1.0)
    omega_min: float = Field(0.2, ge=0.0, le=1.0)
    c_high: float = Field(0.8, ge=0.0, le=1.0)
    c_low: float = Field(0.2, ge=0.0, le=1.0)
    v_max: float = Field(3.0, gt=0.0)
    mutation_k: float = Field(2.0, ge=0.0)
    weight_cap: int | None = Field(10, ge=1)
    post_turn_check: bool = True
    max_turn_retries: int = Field(20, ge=0)
    seed: int = 0

    @field_validator("omega_min")
    @classmethod
    def _omega_order(cls, value: float, info: ValidationInfo) -> float:
        high = info.data.get("omega_max")
        if high is not None and value > high:
            raise ValueError(f"must be <= omega_max ({high})")
        return value

    @field_validator("c_low")
    @classmethod
    def _c_order(cls, value: float, info: ValidationInfo) -> float:
        high = info.data.get("c_high")
        if high is not None and value > high:
            raise ValueError(f"must be <= c_high ({high})")
        return value


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


class ParticleSwarmSearch(BaseSearch):
    """Zang et al. (2020) discrete particle swarm search.

    >>> ParticleSwarmSearch(pop_size=10).config.omega_max
    0.8
    """

    config_class = PSOConfig
    config: PSOConfig

    def _search(self, start: Text, problem: Problem, run: Run, prepared: Any) -> None:
        cfg = self.config
        rng = seeded_rng(cfg.seed, start)
        weights = candidate_counts(start, problem, cfg.weight_cap)
        if not weights.any():
            return
        size, n, iters = cfg.pop_size, len(start), cfg.max_iters
        swarm, scores = perturb([start] * size, np.full(size, run.score), run, weights, rng)
        if run.success:
            return
        local, local_scores = list(swarm), scores.copy()
        top = int(np.argmax(scores))
        elite, elite_score = swarm[top], float(scores[top])
        velocity = np.repeat(rng.uniform(-cfg.v_max, cfg.v_max, size)[:, None], n, axis=1)
        for t in range(iters):
            run.iterations += 1
            omega = (cfg.omega_max - cfg.omega_min) * (iters - t) / iters + cfg.omega_min
            p_local = cfg.c_high - t / iters * (cfg.c_high - cfg.c_low)
            p_global = cfg.c_low + t / iters * (cfg.c_high - cfg.c_low)
            elite_words = np.array(elite.words, dtype=object)
            for k in range(size):
                words = np.array(swarm[k].words, dtype=object)
                pull = np.where(words == np.array(local[k].words, dtype=object), -cfg.v_max, cfg.v_max)
                pull += np.where(words == elite_words, -cfg.v_max, cfg.v_max)
                velocity[k] = omega * velocity[k] + (1.0 - omega) * pull
                turn = _sigmoid(velocity[k])
                if rng.random() < p_local:
                    swarm[k] = self._move(swarm[k], local[k], turn, start, problem, rng)
                if rng.random() < p_global:
                    swarm[k] = self._move(swarm[k], elite, turn, start, problem, rng)
            scores = run.evaluate(swarm).scores
            if run.success:
                return
            # turbulence: the fewer words a particle has changed, the likelier it mutates
            ratio = np.array([start.l0(x) / n for x in swarm])
            mutate = np.flatnonzero(rng.random(size) < 1.0 - cfg.mutation_k * ratio)
            if len(mutate):
                moved, moved_scores = perturb([swarm[k] for k in mutate], scores[mutate], run, weights, rng)
                if run.success:
                    return
                for j, m in enumerate(mutate.tolist()):
                    swarm[m], scores[m] = moved[j], moved_scores[j]
            for m in np.flatnonzero(scores > local_scores).tolist():
                local[m], local_scores[m] = swarm[m], scores[m]
            top = int(np.argmax(scores))
            if scores[top] > elite_score:
                elite, elite_score = swarm[top], float(scores[top])
            run.note("iteration", elite_score)

    def _move(
        self, particle: Text, towards: Text, turn: np.ndarray, start: Text, problem: Problem, rng: np.random.Generator
    ) -> Text:
        """Copy each word of ``towards`` into ``particle`` with probability ``turn[d]``."""
        if particle == towards:
            return particle
        tries = self.config.max_turn_retries + 1 if self.config.post_turn_check else 1
        for _ in range(tries):
            take = rng.random(len(particle)) < turn
            words = {
                int(d): towards.words[d] for d in np.flatnonzero(take) if towards.words[d] != particle.words[d]
            }
            moved = particle.replace(words) if words else particle
            if (
                not self.config.post_turn_check
                or moved == particle
                or moved == towards
                or admissible(problem, start, particle, moved)
            ):
                return moved
        return particle
