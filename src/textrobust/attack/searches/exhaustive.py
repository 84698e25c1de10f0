"""The simple prover (SP): certify robustness within a fixed radius by enumeration.

Yang, Huang, Ma, Cao, Zhang, Zhang and Li, "Quantifying Robustness to Adversarial Word
Substitutions" (../shared/papers/robustness-radius-pdp-prover-pr.txt), Type-3 problem:
for a fixed ``r``, ``|Omega_r(X)| <= C(m, r) v^r`` is polynomial, so testing every text of
``Omega_r`` either finds an adversarial example or proves that none exists ("certified
robustness"), and ``r`` is then a lower bound of the maximum robustness radius. The
positions are pre-sorted by sensitivity, most sensitive first, so that an adversarial
example, if any, tends to come early and ends the enumeration.

:class:`ExhaustiveProver` walks ``Omega_r`` layer by layer (exactly ``k`` substitutions for
``k = 0, 1, ..., r``), each layer lazily (:meth:`PerturbationSpace.layer`), and sends the
texts to the victim in batches of ``batch_size`` (one ``evaluate`` call per batch, i.e. one
query-layer call). A verdict is **certified only when every text of ``Omega_r`` was
evaluated** and none met the goal; a time limit, a text limit or an exhausted query budget
gives ``unknown``, never ``certified``. :meth:`ExhaustiveProver.prove_radii` answers every
``r`` up to a maximum in one pass (a layer is enumerated once).

Sensitivity (:func:`sensitivity_order`): the paper sorts positions by
``||dF_{y*}(X) / dw_p||_1``. With victims that declare gradients we use the L1 norm of the
gradient of the cross-entropy loss ``-log F_{y*}`` with respect to the word's embedding,
which is the paper's quantity divided by ``F_{y*}(X)`` (the same for every position of a
text), hence the same order. Without gradients, leave-one-out: the goal's score of the text
with the word deleted (as the engine's ``delete`` word-importance ranking).

:class:`ExhaustiveSearch` is the prover as a :class:`~textrobust.attack.problem.Search`:
it returns an adversarial example with the fewest substitutions there are (exactly
minimal, where it finishes).

For millions of texts give the prover a :class:`~textrobust.victims.query.QueryLayer` with
``cache_size=0`` (or a small cache): the texts of ``Omega_r`` are all distinct, so caching
them only costs memory.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import numpy as np
from pydantic import Field

from textrobust.attack.problem import Evaluation, Problem
from textrobust.attack.searches.base import BaseSearch, Run, admissible
from textrobust.attack.searches.ranking import PROBE_CHUNK
from textrobust.config import Config
from textrobust.errors import ConfigError, QueryBudgetExceeded, TextRobustError
from textrobust.attack.space import PerturbationSpace, space_from_problem
from textrobust.text import Text

__all__ = [
    "ExhaustiveProver",
    "ExhaustiveSearch",
    "ExhaustiveSearchConfig",
    "Proof",
    "ProverConfig",
    "Sensitivity",
    "Verdict",
    "sensitivity_order",
]

Evaluate = Callable[[Sequence[Text]], Evaluation]


class Verdict(StrEnum):
    """The answer of the prover for one radius."""

    CERTIFIED = "certified"  # every text of Omega_r checked, none adversarial
    FOUND = "found"  # an adversarial example in Omega_r
    UNKNOWN = "unknown"  # stopped (time, text limit, query budget) before deciding


@dataclass(frozen=True)
class Proof:
    """The prover's verdict for ``Omega_r``.

    ``checked``: texts evaluated to reach it (layers are cumulative: the original, then
    layer 1, ...); ``size``: ``|Omega_r|``; ``seconds``: wall time from the start of the
    call; ``adversarial``: the example found (FOUND only); ``reason``: why UNKNOWN.
    """

    radius: int
    verdict: Verdict
    checked: int
    size: int
    seconds: float
    adversarial: Text | None = None
    adversarial_l0: int | None = None
    reason: str = ""


class ProverConfig(Config):
    """Settings of :class:`ExhaustiveProver`.

    ``batch_size``: texts per ``evaluate`` call; ``time_limit``: seconds per call of
    ``prove``/``prove_radii`` (None: no limit); ``max_texts``: texts per call at most.
    """

    batch_size: int = Field(default=512, ge=1)
    time_limit: float | None = Field(default=None, gt=0.0)
    max_texts: int | None = Field(default=None, ge=1)


class Sensitivity(StrEnum):
    """How the prover orders positions (most sensitive first)."""

    AUTO = "auto"  # gradient when available, else delete
    GRADIENT = "gradient"
    DELETE = "delete"
    TEXT = "text"  # text order


def sensitivity_order(
    space: PerturbationSpace,
    method: Sensitivity | str = Sensitivity.AUTO,
    *,
    evaluate: Evaluate | None = None,
    gradients: Callable[[Text], np.ndarray] | None = None,
) -> tuple[int, ...]:
    """The space's positions, most sensitive first (ties in text order).

    ``gradients(text) -> [len(text), dim]`` (e.g. ``problem.gradients`` or a wrapper of
    ``victim.word_gradients``) for ``gradient``; ``evaluate`` (a goal's) for ``delete``,
    which costs ``m`` queries. ``auto`` uses gradients when given, else ``delete``.
    """
    try:
        method = Sensitivity(method)
    except ValueError:
        raise ConfigError(
            f"The 'method' parameter of sensitivity_order must be one of {[m.value for m in Sensitivity]}. "
            f"Got {method!r} instead."
        ) from None
    positions = space.positions
    if not positions or method is Sensitivity.TEXT:
        return positions
    if method is Sensitivity.AUTO:
        method = Sensitivity.GRADIENT if gradients is not None else Sensitivity.DELETE
    if method is Sensitivity.GRADIENT:
        if gradients is None:
            raise ConfigError("sensitivity_order(method='gradient') needs 'gradients' (the victim has none?).")
        grads = np.asarray(gradients(space.original), dtype=np.float64)
        if grads.ndim != 2 or grads.shape[0] != len(space.original):
            raise ConfigError(
                f"gradients returned shape {grads.shape} for a text of {len(space.original)} words; "
                f"expected ({len(space.original)}, dim)."
            )
        values = np.abs(grads[list(positions)]).sum(axis=1)
    else:
        if evaluate is None:
            raise ConfigError("sensitivity_order(method='delete') needs 'evaluate' (a goal's evaluate).")
        # Leave-one-out texts in chunks, as the engine's word-importance ranking: a long
        # text never has all n texts of n words in memory at once.
        values = np.concatenate([
            np.asarray(evaluate([space.original.without(p) for p in positions[i:i + PROBE_CHUNK]]).scores,
                       dtype=np.float64)
            for i in range(0, len(positions), PROBE_CHUNK)]) if positions else np.zeros(0)
    order = np.argsort(-values, kind="stable")
    return tuple(positions[i] for i in order)


class ExhaustiveProver:
    """Enumerates ``Omega_r`` in batches and stops at the first adversarial example.

    ``evaluate`` is a goal's (or a Problem's) ``evaluate``: success means adversarial.

    >>> from textrobust.radius import ExhaustiveProver
    >>> ExhaustiveProver(batch_size=256)
    ExhaustiveProver(batch_size=256, time_limit=None, max_texts=None)
    """

    def __init__(self, config: ProverConfig | None = None, /, **settings: Any) -> None:
        if config is None:
            config = ProverConfig(**settings)
        elif settings:
            config = config.replace(**settings)  # type: ignore[assignment]
        if not isinstance(config, ProverConfig):
            raise ConfigError(f"The 'config' parameter of ExhaustiveProver must be a ProverConfig. Got {config!r}.")
        self.config: ProverConfig = config

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in self.config.to_dict().items())
        return f"ExhaustiveProver({shown})"

    def prove(
        self,
        space: PerturbationSpace,
        evaluate: Evaluate,
        radius: int,
        *,
        order: Sequence[int] | None = None,
        time_limit: float | None = None,
    ) -> Proof:
        """The verdict for ``Omega_radius`` (``radius >= 0``)."""
        return self.prove_radii(space, evaluate, radius, order=order, time_limit=time_limit)[-1]

    def prove_radii(
        self,
        space: PerturbationSpace,
        evaluate: Evaluate,
        max_radius: int,
        *,
        order: Sequence[int] | None = None,
        time_limit: float | None = None,
    ) -> list[Proof]:
        """Verdicts for ``r = 0, 1, ..., max_radius`` in one pass over the layers.

        Once a layer holds an adversarial example every larger radius is FOUND with it;
        once the time limit, the text limit or the query budget stops the pass, the
        current radius and every larger one are UNKNOWN. ``time_limit`` overrides the
        configured one for this call.
        """
        if isinstance(max_radius, bool) or not isinstance(max_radius, int) or max_radius < 0:
            raise ConfigError(f"The 'max_radius' parameter must be an int >= 0. Got {max_radius!r} instead.")
        limit = self.config.time_limit if time_limit is None else time_limit
        started = time.perf_counter()
        deadline = None if limit is None else started + limit
        max_texts = self.config.max_texts
        batch_size = self.config.batch_size
        proofs: list[Proof] = []
        checked = 0

        def close(verdict: Verdict, first: int, adversarial: Text | None = None, reason: str = "") -> None:
            seconds = time.perf_counter() - started
            l0 = None if adversarial is None else space.original.l0(adversarial)
            for r in range(first, max_radius + 1):
                proofs.append(Proof(r, verdict, checked, space.size(r), seconds, adversarial, l0, reason))

        for k in range(max_radius + 1):
            texts = space.layer(k, order)
            while True:
                if deadline is not None and time.perf_counter() > deadline:
                    close(Verdict.UNKNOWN, k, reason="time limit")
                    return proofs
                batch = list(itertools.islice(texts, batch_size))
                if not batch:
                    break
                if max_texts is not None and checked + len(batch) > max_texts:
                    close(Verdict.UNKNOWN, k, reason="text limit")
                    return proofs
                try:
                    found = evaluate(batch)
                except QueryBudgetExceeded:
                    close(Verdict.UNKNOWN, k, reason="query budget")
                    return proofs
                checked += len(batch)
                success = np.asarray(found.success, dtype=bool)
                if success.any():
                    close(Verdict.FOUND, k, batch[int(np.argmax(success))])
                    return proofs
            expected = space.size(k)
            if checked != expected:  # a sanity check of the enumeration, never user input
                raise TextRobustError(
                    f"The prover checked {checked} texts for Omega_{k} but |Omega_{k}| = {expected}: "
                    f"refusing to certify (please report this bug)."
                )
            proofs.append(Proof(k, Verdict.CERTIFIED, checked, expected, time.perf_counter() - started))
        return proofs


class ExhaustiveSearchConfig(Config):
    """Settings of :class:`ExhaustiveSearch`: ``max_radius`` (None: the whole space),
    ``batch_size``, ``order`` (how positions are sorted)."""

    max_radius: int | None = Field(default=None, ge=0)
    batch_size: int = Field(default=512, ge=1)
    order: Sensitivity = Sensitivity.AUTO


class ExhaustiveSearch(BaseSearch):
    """The prover as a search: layers 1, 2, ... of the problem's space, in sensitivity
    order, until an adversarial example the problem admits (its position constraints,
    such as a modification cap, hold); it has the fewest substitutions possible.

    >>> from textrobust.radius import ExhaustiveSearch
    >>> ExhaustiveSearch(max_radius=2)
    ExhaustiveSearch(max_radius=2, batch_size=512, order='auto')
    """

    config_class = ExhaustiveSearchConfig
    config: ExhaustiveSearchConfig

    def _prepare(self, start: Text, problem: Problem) -> Any:
        space = space_from_problem(problem, start)
        order: Sequence[int] | None = None
        if self.config.order is Sensitivity.GRADIENT or (
            self.config.order is Sensitivity.AUTO and problem.gradients is not None
        ):
            order = sensitivity_order(space, Sensitivity.GRADIENT, gradients=problem.word_gradients)
        return space, order

    def _search(self, start: Text, problem: Problem, run: Run, prepared: Any) -> None:
        space, order = prepared
        if order is None and self.config.order is not Sensitivity.TEXT:
            order = sensitivity_order(space, Sensitivity.DELETE, evaluate=lambda t: run.evaluate(t, track=False))
        top = space.m if self.config.max_radius is None else min(self.config.max_radius, space.m)
        size = self.config.batch_size
        for k in range(1, top + 1):
            run.iterations += 1
            texts = space.layer(k, order)
            while batch := list(itertools.islice(texts, size)):
                found = run.evaluate(batch, track=False)
                for i in np.flatnonzero(found.success).tolist():
                    if admissible(problem, start, start, batch[i]):
                        run.best, run.score, run.success = batch[i], float(found.scores[i]), True
                        return
