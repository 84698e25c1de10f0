"""Headline figures as per-example values, read from the typed records of a run.

A comparison of two runs needs, for each headline figure, what every example
contributes to it. For the figures declared here that is the analysis's own metric
function applied to one record at a time: ``success_rate([r])`` is 1 for a flipped
example, 0 for an attacked one that held and NaN for one it leaves out (skipped), so the
figure over any set of examples is ``sum(num) / sum(den)`` with ``(value, 1)`` or
``(0, 0)`` per example (:mod:`textrobust.report.paired`). The definition stays in one
place, the metric; :mod:`textrobust.report.compare` also checks, run by run, that these
values give back the run's headline figure, and shows no interval where they do not.

Figures not declared here (counts, settings-dependent bounds, analyses whose unit is not
an example) are compared without an interval, and the report says why.

:data:`PER_EXAMPLE` maps an analysis name to its :class:`PerExample` declaration.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from textrobust.analyses.protocol import Record
from textrobust.records import PAIR_SEPARATOR
from textrobust.report.paired import Statistic

__all__ = ["Curve", "ExampleOutcome", "ExampleValues", "PER_EXAMPLE", "PerExample"]


@dataclass(frozen=True)
class ExampleValues:
    """One headline figure (``label``, as the analysis's section names it) as per-example
    ``(num, den)`` pairs; ``right_wrong``: each counted example is right (1) or wrong (0),
    so McNemar's test applies."""

    label: str
    values: Mapping[str, tuple[float, float]]
    statistic: Statistic = "ratio"
    right_wrong: bool = False


@dataclass(frozen=True)
class ExampleOutcome:
    """What a run did with one example: the victim's prediction and, for an attack, how
    the attack ended; ``text``: the example's text when the record holds it."""

    example_id: str
    label: int
    prediction: int | None
    outcome: str | None = None
    text: str | None = None


@dataclass(frozen=True)
class Curve:
    """A figure drawn per run and overlaid: ``grid(runs' records)`` gives the x values,
    ``values(one run's records, xs)`` the y values."""

    title: str
    xlabel: str
    ylabel: str
    caption: str
    grid: Callable[[Sequence[Sequence[Record]]], list[float]]
    values: Callable[[Sequence[Record], Sequence[float]], list[float]]
    percent: bool = True
    steps: bool = False


@dataclass(frozen=True)
class PerExample:
    """How one analysis's records open into per-example figures, outcomes and curves."""

    figures: Callable[[Sequence[Record], Mapping[str, Any]], list[ExampleValues]]
    outcomes: Callable[[Sequence[Record]], list[ExampleOutcome]]
    curves: tuple[Curve, ...] = field(default=())


def _singletons(label: str, items: Sequence[tuple[str, Any]], metric: Callable[[list[Any]], float],
                right_wrong: bool = False, statistic: Statistic = "ratio") -> ExampleValues:
    """The figure ``metric`` as per-example values: ``metric([item])`` for each example,
    ``(0, 0)`` where it is NaN (the figure leaves the example out)."""
    values: dict[str, tuple[float, float]] = {}
    for example_id, item in items:
        value = float(metric([item]))
        values[example_id] = (0.0, 0.0) if math.isnan(value) else (value, 1.0)
    return ExampleValues(label, values, statistic, right_wrong)


def _text(text: Any) -> str:
    return PAIR_SEPARATOR.join(text.columns)


# ---- evaluate -------------------------------------------------------------------------------------
def _evaluation(records: Sequence[Record]) -> list[Any]:
    from textrobust.analyses.evaluate.analysis import EvaluationBatch

    return [r for batch in records for r in cast(EvaluationBatch, batch).records()]


def _evaluate_figures(records: Sequence[Record], settings: Mapping[str, Any]) -> list[ExampleValues]:
    from textrobust.analyses.evaluate.analysis import accuracy

    items = [(r.example_id, r) for r in _evaluation(records)]
    return [_singletons("clean accuracy", items, accuracy, right_wrong=True)]


def _evaluate_outcomes(records: Sequence[Record]) -> list[ExampleOutcome]:
    return [ExampleOutcome(r.example_id, r.label, r.predicted) for r in _evaluation(records)]


# ---- attack ---------------------------------------------------------------------------------------
def _attack_results(records: Sequence[Record]) -> list[Any]:
    from textrobust.analyses.attack.analysis import AttackRecord

    return [cast(AttackRecord, r).result for r in records]


def _attack_figures(records: Sequence[Record], settings: Mapping[str, Any]) -> list[ExampleValues]:
    from textrobust.attack import metrics

    items = [(r.example_id, r) for r in _attack_results(records)]
    return [_singletons("clean accuracy", items, metrics.original_accuracy, right_wrong=True),
            _singletons("accuracy under attack", items, metrics.accuracy_under_attack, right_wrong=True),
            _singletons("attack success rate", items, metrics.success_rate),
            _singletons("words perturbed", items, metrics.words_perturbed),
            _singletons("queries per example", items, metrics.queries_per_example),
            _singletons("similarity (MiniLM cosine)", items, lambda rs: metrics.mean_extra(rs, "similarity"))]


def _attack_outcomes(records: Sequence[Record]) -> list[ExampleOutcome]:
    return [ExampleOutcome(r.example_id, r.label, r.original_prediction, r.status.value, _text(r.original))
            for r in _attack_results(records)]


def _attack_grid(runs: Sequence[Sequence[Record]]) -> list[float]:
    from textrobust.attack.results import Status

    longest = max((r.l0 for records in runs for r in _attack_results(records) if r.status is Status.SUCCEEDED),
                  default=0)
    return [float(k) for k in range(longest + 2)]  # one step past the longest success: its level shows


def _attack_curve(records: Sequence[Record], grid: Sequence[float]) -> list[float]:
    """The share of the examples still classified right when an attack may change at most
    ``k`` words (a success that needed more words does not count)."""
    from textrobust.attack.results import Status

    results = _attack_results(records)
    if not results:
        return [math.nan for _ in grid]
    out = []
    for k in grid:
        right = sum(1 for r in results if r.status is Status.FAILED
                    or (r.status is Status.SUCCEEDED and r.l0 > k))
        out.append(right / len(results))
    return out


ATTACK_CURVE = Curve(
    "Accuracy under attack by words changed", "most words the attack may change (k)", "accuracy under attack",
    "share of the examples still classified right when only attacks changing at most k words count; "
    "k = 0 is the clean accuracy, the last point the accuracy under attack",
    _attack_grid, _attack_curve, steps=True)


# ---- second-order ---------------------------------------------------------------------------------
def _second_order_results(records: Sequence[Record]) -> list[Any]:
    from textrobust.analyses.second_order.analysis import SecondOrderRecord

    return [cast(SecondOrderRecord, r).result for r in records]


def _second_order_figures(records: Sequence[Record], settings: Mapping[str, Any]) -> list[ExampleValues]:
    from textrobust.attack import metrics
    from textrobust.attack.results import Status

    results = _second_order_results(records)
    items = [(r.example_id, r.as_attack_result()) for r in results]
    fills = {r.example_id: (0.0, 0.0) if r.status is Status.SKIPPED else (float(r.fill_requests), 1.0)
             for r in results}
    return [_singletons("second-order success rate", items, metrics.success_rate),
            _singletons("words changed (l0)", items, metrics.l0_per_success),
            _singletons("queries per example", items, metrics.queries_per_example),
            ExampleValues("fill-in requests per example", fills)]


def _second_order_outcomes(records: Sequence[Record]) -> list[ExampleOutcome]:
    return [ExampleOutcome(r.example_id, r.label, int(np.argmax(r.original_probabilities)), r.status.value,
                           _text(r.original)) for r in _second_order_results(records)]


# ---- radius and PR --------------------------------------------------------------------------------
def _radius_results(records: Sequence[Record]) -> list[Any]:
    from textrobust.analyses.radius.analysis import RadiusRecord

    return [cast(RadiusRecord, r).result for r in records]


def _radius_figures(records: Sequence[Record], settings: Mapping[str, Any]) -> list[ExampleValues]:
    """The radius figures; a label's ``#`` stands for the count the run's label carries."""
    from textrobust.analyses.radius.method import attack_table, bounds_summary, certified_table, falsified_share

    items = [(r.example_id, r) for r in _radius_results(records)]
    out = [_singletons("falsified at r = 1 (one word flips it)", items, lambda rs: falsified_share(rs, 1))]
    methods = tuple(settings.get("methods") or ())
    if "pdp" in methods:
        out.append(_singletons("PDP success rate", items, lambda rs: next(
            row.succ_rate for row in attack_table(rs, methods) if row.method == "pdp")))
    if settings.get("prover", True):
        out += [_singletons("certified at r = 1 (prover)", items,
                            lambda rs: certified_table(rs, 1)[0].certified_pct / 100.0),
                _singletons("mean lower bound on R, the # example(s) with both bounds", items,
                            lambda rs: bounds_summary(rs).mean_lower_with_upper),
                _singletons("mean upper bound on R, the same # example(s)", items,
                            lambda rs: bounds_summary(rs).mean_upper),
                _singletons("mean lower bound on R, the # example(s) with no adversarial example found", items,
                            lambda rs: bounds_summary(rs).mean_lower_without_upper),
                _singletons("R exact (bounds meet)", items, lambda rs: bounds_summary(rs).exact_share)]
    return out


def _radius_outcomes(records: Sequence[Record]) -> list[ExampleOutcome]:
    from textrobust.analyses.radius.method import falsified_share

    out = []
    for r in _radius_results(records):
        falsified = falsified_share([r], 1)
        outcome = ("skipped" if math.isnan(falsified) else
                   "one word flips it" if falsified else "no one-word flip found")
        out.append(ExampleOutcome(r.example_id, r.label, r.predicted, outcome, _text(r.text)))
    return out


def _pr_results(records: Sequence[Record]) -> list[Any]:
    from textrobust.analyses.radius.analysis import PRRecord

    return [cast(PRRecord, r).result for r in records]


def _pr_figures(records: Sequence[Record], settings: Mapping[str, Any]) -> list[ExampleValues]:
    from textrobust.analyses.radius.method import pr_summary

    threshold = float(settings.get("threshold", 0.9))
    items = [(r.example_id, r) for r in _pr_results(records)]
    return [_singletons("mean PR", items, lambda rs: pr_summary(rs, threshold).mean_pr),
            _singletons("median PR", items, lambda rs: pr_summary(rs, threshold).mean_pr, statistic="median"),
            _singletons(f"share with PR > {threshold:g}", items,
                        lambda rs: pr_summary(rs, threshold).share_above_threshold)]


def _pr_outcomes(records: Sequence[Record]) -> list[ExampleOutcome]:
    return [ExampleOutcome(r.example_id, r.label, r.predicted) for r in _pr_results(records)]


def _pr_grid(runs: Sequence[Sequence[Record]]) -> list[float]:
    return [i / 20 for i in range(21)]


def _pr_curve(records: Sequence[Record], grid: Sequence[float]) -> list[float]:
    values = [r.estimate.pr for r in _pr_results(records) if not r.skipped and r.estimate is not None]
    if not values:
        return [math.nan for _ in grid]
    return [sum(1 for v in values if v >= x) / len(values) for x in grid]


PR_CURVE = Curve(
    "Examples with PR at least x", "PR (share of Omega_r classified right)", "share of the scored examples",
    "for each x, the share of the correctly classified examples whose PR_hat is at least x: a curve further "
    "right and up is more robust", _pr_grid, _pr_curve)


#: analysis name -> how its records open into per-example figures, outcomes and curves.
PER_EXAMPLE: Mapping[str, PerExample] = {
    "evaluate": PerExample(_evaluate_figures, _evaluate_outcomes),
    "attack": PerExample(_attack_figures, _attack_outcomes, (ATTACK_CURVE,)),
    "second-order": PerExample(_second_order_figures, _second_order_outcomes),
    "radius": PerExample(_radius_figures, _radius_outcomes),
    "pr": PerExample(_pr_figures, _pr_outcomes, (PR_CURVE,)),
}
