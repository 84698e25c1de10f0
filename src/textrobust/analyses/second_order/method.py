"""Second-order attacks on examples and data sets: patch choice, search, record, summary.

Zhang et al., "Double Perturbation", NAACL 2021 (../shared/papers/double-perturbation-
second-order-robustness-and-bias.txt), Section 3. For a test sentence ``x0``:

1. choose the patch pair ``p`` (:class:`~textrobust.analyses.second_order.patch.PatchFinder`);
   without one, the example is skipped (``x0`` is not in any ``X_p``);
2. freeze the patch word's position and keep ``p1``/``p2`` out of the neighbourhood
   (a neighbour holding ``p1`` twice would make ``x (+) p`` ambiguous);
3. search Neighbor_k(x0) for a vulnerable ``x~0`` (``x~0`` and ``x~0 (+) p`` labelled
   differently) with SO-Beam, SO-Enum or the random baseline (:data:`SECOND_ORDER_SEARCHES`).

The start ``x0`` is scored first: if ``x0`` itself is vulnerable the result is a success
with ``l0 = 0`` (the released code does the same). Unlike first-order attacks, the
example's label plays no part: a misclassified ``x0`` is attacked too.

Results are :class:`SecondOrderResult` records; :meth:`SecondOrderResult.as_attack_result`
views one as a first-order :class:`~textrobust.attack.results.AttackResult` (original ->
vulnerable example), so the engine's metrics (success rate, l0, perplexities, queries,
seconds) apply unchanged: :func:`summary`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from textrobust.attack import metrics
from textrobust.attack.problem import Problem, Search
from textrobust.attack.results import AttackResult, Status
from textrobust.data.examples import Example
from textrobust.errors import ConfigError, QueryBudgetExceeded
from textrobust.registry import Registry
from textrobust.fill_in.neighbourhood import Neighbourhood
from textrobust.analyses.second_order.checks import SecondOrderChecks
from textrobust.analyses.second_order.goal import SecondOrderGoal, labels_differ
from textrobust.analyses.second_order.patch import Patch, PatchFinder
from textrobust.analyses.second_order.random_baseline import RandomBaseline
from textrobust.analyses.second_order.so_beam import so_beam
from textrobust.analyses.second_order.so_enum import SOEnum
from textrobust.text import Text
from textrobust.victims.query import QueryLayer

__all__ = [
    "SECOND_ORDER_SEARCHES",
    "SecondOrderAttack",
    "SecondOrderResult",
    "add_perplexity",
    "summary",
]

#: Second-order searches by name; keywords go to the factory.
SECOND_ORDER_SEARCHES: Registry[Callable[..., Search]] = Registry("second-order search")
SECOND_ORDER_SEARCHES.add("so-beam", so_beam, "SO-Beam (Algorithm 2): beam 20 over Neighbor_1, Eq. 4 loss, k <= 6")
SECOND_ORDER_SEARCHES.add("so-enum", SOEnum, "SO-Enum: enumerate Neighbor_k by distance, k <= 2, smallest change")
SECOND_ORDER_SEARCHES.add("random", RandomBaseline, "random baseline (A.1): up to 6 random neighbourhood replacements")


#: Flips that passed every check kept in a result's extras (issue 48: the other choices of a step).
ACCEPTED_KEPT = 40


def _probs(values: Sequence[float]) -> tuple[float, ...]:
    return tuple(float(v) for v in values)


@dataclass(frozen=True)
class SecondOrderResult:
    """One example under a second-order attack.

    ``original`` is ``x0`` and ``vulnerable`` the best text found (``x~0`` when
    ``status`` is succeeded); each has its probabilities and those of its patched twin.
    ``status`` is skipped when no patch pair applies (then ``patch`` and the patched
    probabilities are None). ``fill_requests`` counts fill-in *rows*: the masked inputs
    this example sent to the fill-in model (those not already cached), however many calls
    carried them (SO-Beam sends all rows of a beam step in one call, issue 31).
    """

    example_id: str
    label: int
    method: str
    status: Status
    original: Text
    vulnerable: Text
    patch: Patch | None
    original_probabilities: tuple[float, ...]
    original_patched_probabilities: tuple[float, ...] | None
    vulnerable_probabilities: tuple[float, ...]
    vulnerable_patched_probabilities: tuple[float, ...] | None
    queries: int
    seconds: float
    fill_requests: int = 0
    iterations: int = 0
    budget_exhausted: bool = False
    extras: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def l0(self) -> int:
        """Words changed from ``x0`` to the vulnerable example (the patch not counted)."""
        return self.original.l0(self.vulnerable)

    @property
    def vulnerable_at_start(self) -> bool:
        """``x0`` itself is vulnerable (a first-order adversarial example by ``p``)."""
        return self.status is Status.SUCCEEDED and self.l0 == 0

    def as_attack_result(self) -> AttackResult:
        """This record as an engine result (original -> vulnerable), for the metrics."""
        return AttackResult(
            example_id=self.example_id,
            label=self.label,
            status=self.status,
            original=self.original,
            perturbed=self.vulnerable,
            original_prediction=int(np.argmax(self.original_probabilities)),
            perturbed_prediction=int(np.argmax(self.vulnerable_probabilities)),
            original_probabilities=self.original_probabilities,
            perturbed_probabilities=self.vulnerable_probabilities,
            queries=self.queries,
            seconds=self.seconds,
            budget_exhausted=self.budget_exhausted,
            extras=dict(self.extras),
        )


def _list(values: tuple[float, ...] | None) -> list[float] | None:
    return None if values is None else list(values)


class SecondOrderAttack:
    """A second-order attack: patch choice, Neighbor_1 source, second-order goal, search.

    ``budget`` caps the victim queries per example (patch choice included; every scored
    neighbour costs two); ``min_gap`` is passed to the goal.
    """

    def __init__(
        self,
        layer: QueryLayer,
        neighbourhood: Neighbourhood,
        search: Search,
        *,
        patches: PatchFinder | None = None,
        budget: int | None = None,
        min_gap: float = 0.0,
        name: str = "so-beam",
        checks: SecondOrderChecks | None = None,
    ) -> None:
        if budget is not None and budget < 1:
            raise ConfigError(f"The 'budget' parameter of SecondOrderAttack must be >= 1 or None. Got {budget}.")
        self.layer = layer
        self.neighbourhood = neighbourhood
        self.search = search
        self.patches = patches if patches is not None else PatchFinder(layer)
        self.budget = budget
        self.min_gap = min_gap
        self.name = name
        self.checks = checks if checks is not None and checks.active else None

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "search": repr(self.search),
            "neighbourhood": self.neighbourhood.describe(),
            "patches": repr(self.patches),
            "budget": self.budget,
            "min_gap": self.min_gap,
            "checks": None if self.checks is None else self.checks.describe(),
        }

    def __repr__(self) -> str:
        return (
            f"SecondOrderAttack[{self.name}](search={self.search!r}, neighbourhood={self.neighbourhood!r}, "
            f"patches={self.patches!r}, budget={self.budget}, min_gap={self.min_gap})"
        )

    def attack(self, example: Example, *, patch: Patch | None = None) -> SecondOrderResult:
        """Attack one example (with ``patch`` instead of the chosen one, if given)."""
        start = time.perf_counter()
        fills_before = self.neighbourhood.requests
        original = example.text
        with self.layer.budget(self.budget) as budget:
            try:
                probs = self.layer.probabilities([original])[0]
                chosen = patch if patch is not None else self.patches.choose(original)
            except QueryBudgetExceeded:
                raise ConfigError(
                    "The query budget must allow the first prediction and the patch choice "
                    "(single-word predictions); raise --budget."
                ) from None
            if chosen is None:
                return SecondOrderResult(
                    example.id, example.label, self.name, Status.SKIPPED, original, original, None,
                    _probs(probs), None, _probs(probs), None, budget.used, time.perf_counter() - start,
                    extras={"skip_reason": "no synonym pair of the text's words applies"},
                )  # fmt: skip
            frozen = original.freeze([chosen.position])
            bound = self.checks.bind(frozen, chosen) if self.checks is not None else None
            prefer = bound.preference if bound is not None and bound.checks.fluent_first else None
            goal = SecondOrderGoal(self.layer, chosen, min_gap=self.min_gap,
                                   judge=bound.judge if bound is not None else None, prefer=prefer)
            source: Any = self.neighbourhood.source(blacklist=(chosen.source, chosen.target))
            if self.checks is not None:
                source = self.checks.wrap_source(source)
            problem = Problem(original=frozen, goal=goal, source=source, budget=budget)
            outcome = self.search.search(frozen, problem)
            used = budget.used
        # both texts were scored by the search: cached, no extra query
        rows = self.layer.probabilities([original, chosen.apply(original), outcome.best, chosen.apply(outcome.best)])
        success = bool(outcome.success and labels_differ(rows[2:3], rows[3:4], self.min_gap)[0])
        extras: dict[str, Any] = {}
        if bound is not None:
            extras = {f"rejected_{k}": v for k, v in bound.counts.rejected.items()}
            extras["first_flip_distance"] = bound.counts.first_flip_distance
            extras["fragments_dropped"] = getattr(source, "dropped", 0)
            extras["accepted"] = [list(a) for a in bound.counts.accepted[:ACCEPTED_KEPT]]
        return SecondOrderResult(
            example_id=example.id,
            label=example.label,
            method=self.name,
            status=Status.SUCCEEDED if success else Status.FAILED,
            original=frozen,
            vulnerable=outcome.best,
            patch=chosen,
            original_probabilities=_probs(rows[0]),
            original_patched_probabilities=_probs(rows[1]),
            vulnerable_probabilities=_probs(rows[2]),
            vulnerable_patched_probabilities=_probs(rows[3]),
            queries=used,
            seconds=time.perf_counter() - start,
            fill_requests=self.neighbourhood.requests - fills_before,
            iterations=outcome.iterations,
            budget_exhausted=outcome.budget_exhausted,
            extras=extras,
        )


def add_perplexity(result: SecondOrderResult, lm: Any) -> SecondOrderResult:
    """``perplexity_before`` (x0) and ``perplexity_after`` (the vulnerable example) under
    the causal LM ``lm``, for a success; other results are returned unchanged."""
    if result.status is not Status.SUCCEEDED:
        return result
    ppl = lm.perplexity([str(result.original), str(result.vulnerable)])
    extras = {**result.extras, "perplexity_before": float(ppl[0]), "perplexity_after": float(ppl[1])}
    return replace(result, extras=extras)


def summary(results: Sequence[SecondOrderResult]) -> dict[str, Any]:
    """The engine's attack metrics over the results (skipped = no patch applies), plus
    fill-in requests (rows, not calls: see :class:`SecondOrderResult`) per attacked
    example and how many successes were ``x0`` itself."""
    out: dict[str, Any] = dict(metrics.summary([r.as_attack_result() for r in results]))
    attacked = [r for r in results if r.status is not Status.SKIPPED]
    out["fill_requests_per_example"] = (
        float(np.mean([r.fill_requests for r in attacked])) if attacked else float("nan")
    )
    out["vulnerable_at_start"] = sum(r.vulnerable_at_start for r in results)
    out["budget_exhausted"] = sum(r.budget_exhausted for r in attacked)
    # "failed" counts both; keep them apart (issue 13): a search that ran out of queries
    # says nothing about whether a vulnerable example exists
    out["failed_budget_exhausted"] = sum(r.status is Status.FAILED and r.budget_exhausted for r in attacked)
    out["failed_search_complete"] = sum(r.status is Status.FAILED and not r.budget_exhausted for r in attacked)
    return out


