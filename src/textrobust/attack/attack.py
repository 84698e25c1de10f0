"""Run one attack on one example: join the parts in a Problem, search, record.

:class:`Attack` holds built components (a candidate source, constraints, a search) and a
query layer; :meth:`Attack.attack` returns an :class:`~textrobust.attack.results.
AttackResult`. Recipes (``textrobust.attack.recipes``) build Attacks from frozen specs.

**A flip that probably changes the meaning does not end the search** (issue 47, item 2).
Given ``validity`` (the finding's probability of keeping the meaning,
:func:`~textrobust.attack.candidates.swap_validity.finding_validity`) and ``accept_validity``,
a flip below ``accept_validity`` is kept as the best so far, its least probably valid swap is
banned (:class:`Banned`), and the search runs again on the same example within what is left
of its query budget (at most ``max_retries`` times); the most probably valid flip found is
the result. Without them (the default) the first flip ends the search, as before.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from textrobust.attack.goals import classification_goal
from textrobust.attack.problem import (
    CandidateSource,
    Constraint,
    PositionConstraint,
    Problem,
    Search,
    SearchOutcome,
    Substitution,
)
from textrobust.attack.results import AttackResult, Status
from textrobust.data.examples import Example
from textrobust.errors import ConfigError, QueryBudgetExceeded
from textrobust.loading import thread_load_seconds
from textrobust.text import Text
from textrobust.victims.protocol import GradientVictim
from textrobust.victims.query import QueryLayer

__all__ = ["Attack", "Banned"]


class Banned:
    """``source`` without the ``(position, substitute)`` pairs in ``banned`` (lower case)."""

    def __init__(self, source: CandidateSource, banned: frozenset[tuple[int, str]]) -> None:
        self.source = source
        self.banned = banned

    def candidates(self, text: Text, positions: Sequence[int]) -> dict[int, list[Substitution]]:
        found = self.source.candidates(text, positions)
        return {p: [s for s in subs if (p, s.word.lower()) not in self.banned] for p, subs in found.items()}

    def __repr__(self) -> str:
        return f"Banned({self.source!r}, {sorted(self.banned)!r})"



def _clock() -> float:
    """Seconds of this thread's time not spent loading models (a clock that stops while a
    model loads: :func:`~textrobust.loading.thread_load_seconds`)."""
    return time.perf_counter() - thread_load_seconds()

class Attack:
    """A first-order attack: candidates, constraints, a classification goal, a search.

    ``budget`` caps the queries spent on one example (the initial prediction included);
    ``target`` makes the goal targeted; ``use_gradients`` lets the search rank words by
    gradient when the victim offers gradients.
    """

    def __init__(
        self,
        layer: QueryLayer,
        *,
        source: CandidateSource,
        search: Search,
        position_constraints: Sequence[PositionConstraint] = (),
        constraints: Sequence[Constraint] = (),
        budget: int | None = None,
        target: int | None = None,
        min_confidence: float = 0.0,
        use_gradients: bool = True,
        name: str = "attack",
        validity: Callable[[Text, Text], Any] | None = None,
        accept_validity: float | None = None,
        max_retries: int = 8,
    ) -> None:
        if budget is not None and budget < 1:
            raise ConfigError(f"The 'budget' parameter of Attack must be >= 1 or None. Got {budget} instead.")
        if accept_validity is not None and not 0.0 < accept_validity <= 1.0:
            raise ConfigError(f"The 'accept_validity' parameter of Attack must be in (0, 1] or None. "
                              f"Got {accept_validity} instead.")
        if accept_validity is not None and validity is None:
            raise ConfigError("The 'accept_validity' parameter of Attack needs 'validity' (a finding's probability "
                              "of keeping the meaning) to weigh the flips it finds.")
        if max_retries < 0:
            raise ConfigError(f"The 'max_retries' parameter of Attack must be >= 0. Got {max_retries} instead.")
        self.layer = layer
        self.source = source
        self.search = search
        self.position_constraints = tuple(position_constraints)
        self.constraints = tuple(constraints)
        self.budget = budget
        self.target = target
        self.min_confidence = min_confidence
        self.use_gradients = use_gradients
        self.name = name
        self.validity = validity
        self.accept_validity = accept_validity
        self.max_retries = max_retries

    def __repr__(self) -> str:
        parts = ",\n  ".join(
            [
                f"source={self.source!r}",
                f"position_constraints={list(self.position_constraints)!r}",
                f"constraints={list(self.constraints)!r}",
                f"search={self.search!r}",
                f"budget={self.budget}",
                f"target={self.target}",
                f"min_confidence={self.min_confidence}",
                f"accept_validity={self.accept_validity}",
            ]
        )
        return f"Attack[{self.name}](\n  {parts}\n)"

    def describe(self) -> dict[str, Any]:
        """The exact pipeline, for run configurations and reports."""
        return {
            "name": self.name,
            "source": repr(self.source),
            "position_constraints": [repr(c) for c in self.position_constraints],
            "constraints": [repr(c) for c in self.constraints],
            "search": repr(self.search),
            "budget": self.budget,
            "target": self.target,
            "min_confidence": self.min_confidence,
            "accept_validity": self.accept_validity,
        }

    def _gradients(self, label: int) -> Any:
        victim = self.layer.victim
        if not (self.use_gradients and self.layer.capabilities.gradients and isinstance(victim, GradientVictim)):
            return None

        def gradients(text: Text) -> np.ndarray:
            return np.asarray(victim.word_gradients([text], [label])[0])

        return gradients

    def attack(self, example: Example) -> AttackResult:
        """Attack one example; never raises for budget exhaustion (it is a failure). Its
        ``seconds`` leave out the loading of models (:func:`~textrobust.loading.thread_load_seconds`):
        the example that loads one first is not charged with it."""
        start = _clock()
        original = example.text
        with self.layer.budget(self.budget) as budget:
            try:
                probs = self.layer.probabilities([original])[0]
            except QueryBudgetExceeded:  # a budget of 0 for this example
                raise ConfigError("The query budget must allow the initial prediction (>= 1).") from None
            predicted = int(probs.argmax())
            if predicted != example.label:
                return self._result(example, Status.SKIPPED, original, probs, probs, budget.used, start, False)
            goal = classification_goal(self.layer, example.label, target=self.target, min_confidence=self.min_confidence)
            problem = Problem(
                original=original,
                goal=goal,
                source=self.source,
                position_constraints=self.position_constraints,
                constraints=self.constraints,
                budget=budget,
                gradients=self._gradients(example.label),
            )
            outcome = self.search.search(original, problem)
            if outcome.success and self.accept_validity is not None and self.validity is not None:
                outcome = self._more_valid(original, problem, outcome)
            used = budget.used
        # the final text's probabilities are cached: no extra query
        final = self.layer.probabilities([outcome.best])[0]
        status = Status.SUCCEEDED if outcome.success else Status.FAILED
        return self._result(example, status, outcome.best, probs, final, used, start, outcome.budget_exhausted)

    def _more_valid(self, original: Text, problem: Problem, outcome: SearchOutcome) -> SearchOutcome:
        """Search again, banning the least probably valid swap of each flip found, while the
        best flip's probability is below ``accept_validity`` and budget and retries are left;
        the most probably valid flip found."""
        if self.validity is None or self.accept_validity is None:
            return outcome
        best, found = outcome, self.validity(original, outcome.best)
        best_p = -1.0 if found is None else found.probability
        banned: set[tuple[int, str]] = set()
        current = found
        for _ in range(self.max_retries):
            if best_p >= self.accept_validity or current is None or not current.swaps:
                break
            worst = min(current.swaps, key=lambda s: float(s["probability"]))
            banned.add((int(worst["position"]), str(worst["substitute"]).lower()))
            try:
                again = self.search.search(original, replace(problem, source=Banned(problem.source,
                                                                                    frozenset(banned))))
            except QueryBudgetExceeded:
                break
            if not again.success:
                break
            current = self.validity(original, again.best)
            if current is not None and current.probability > best_p:
                best, best_p = again, current.probability
            if again.budget_exhausted:
                break
        return best

    def _result(
        self,
        example: Example,
        status: Status,
        perturbed: Text,
        probs: np.ndarray,
        final: np.ndarray,
        queries: int,
        start: float,
        exhausted: bool,
    ) -> AttackResult:
        return AttackResult(
            example_id=example.id,
            label=example.label,
            status=status,
            original=example.text,
            perturbed=perturbed,
            original_prediction=int(probs.argmax()),
            perturbed_prediction=int(final.argmax()),
            original_probabilities=tuple(float(p) for p in probs),
            perturbed_probabilities=tuple(float(p) for p in final),
            queries=queries,
            seconds=_clock() - start,
            budget_exhausted=exhausted,
        )
