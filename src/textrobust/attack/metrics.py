"""Attack metrics: pure functions over result records.

Conventions follow TextAttack's summary table so numbers compare:
- success rate = succeeded / (succeeded + failed): skipped examples (already
  misclassified) are not attacked;
- accuracy under attack = failed / all examples;
- queries, words perturbed and similarity are averaged over the examples they apply to
  (queries over attacked examples; words perturbed and similarity over successes).
Every function returns ``nan`` when it has nothing to average, never raises.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from statistics import median

from textrobust.attack.results import AttackResult, Status

__all__ = [
    "success_rate",
    "original_accuracy",
    "accuracy_under_attack",
    "queries_per_example",
    "words_perturbed",
    "l0_per_success",
    "median_extra",
    "mean_extra",
    "summary",
]

NAN = float("nan")


def _count(results: Sequence[AttackResult], status: Status) -> int:
    return sum(r.status is status for r in results)


def _mean(values: Sequence[float]) -> float:
    values = [v for v in values if v is not None and not math.isnan(v)]
    return sum(values) / len(values) if values else NAN


def success_rate(results: Sequence[AttackResult]) -> float:
    attacked = _count(results, Status.SUCCEEDED) + _count(results, Status.FAILED)
    return _count(results, Status.SUCCEEDED) / attacked if attacked else NAN


def original_accuracy(results: Sequence[AttackResult]) -> float:
    return (len(results) - _count(results, Status.SKIPPED)) / len(results) if results else NAN


def accuracy_under_attack(results: Sequence[AttackResult]) -> float:
    return _count(results, Status.FAILED) / len(results) if results else NAN


def queries_per_example(results: Sequence[AttackResult]) -> float:
    return _mean([r.queries for r in results if r.status is not Status.SKIPPED])


def words_perturbed(results: Sequence[AttackResult]) -> float:
    """Mean share of modifiable words changed, over successful attacks (0..1)."""
    return _mean([r.perturbed_fraction for r in results if r.status is Status.SUCCEEDED])


def l0_per_success(results: Sequence[AttackResult]) -> float:
    """Mean number of words changed, over successful attacks."""
    return _mean([r.l0 for r in results if r.status is Status.SUCCEEDED])


def _extra(results: Sequence[AttackResult], key: str) -> list[float]:
    return [
        float(r.extras[key])
        for r in results
        if r.status is Status.SUCCEEDED and r.extras.get(key) is not None and not math.isnan(float(r.extras[key]))
    ]


def median_extra(results: Sequence[AttackResult], key: str) -> float:
    """Median of a per-success extra value, e.g. ``perplexity_before``."""
    values = _extra(results, key)
    return float(median(values)) if values else NAN


def mean_extra(results: Sequence[AttackResult], key: str) -> float:
    """Mean of a per-success extra value, e.g. ``similarity``."""
    return _mean(_extra(results, key))


METRICS: dict[str, Callable[[Sequence[AttackResult]], float]] = {
    "success_rate": success_rate,
    "original_accuracy": original_accuracy,
    "accuracy_under_attack": accuracy_under_attack,
    "queries_per_example": queries_per_example,
    "words_perturbed": words_perturbed,
    "l0": l0_per_success,
    "median_perplexity_before": lambda rs: median_extra(rs, "perplexity_before"),
    "median_perplexity_after": lambda rs: median_extra(rs, "perplexity_after"),
    "similarity": lambda rs: mean_extra(rs, "similarity"),
}


def summary(results: Sequence[AttackResult]) -> dict[str, float | int]:
    """Every metric, plus the counts, in one dict."""
    out: dict[str, float | int] = {
        "examples": len(results),
        "succeeded": _count(results, Status.SUCCEEDED),
        "failed": _count(results, Status.FAILED),
        "skipped": _count(results, Status.SKIPPED),
    }
    out.update({name: fn(results) for name, fn in METRICS.items()})
    out["seconds_per_example"] = _mean([r.seconds for r in results if r.status is not Status.SKIPPED])
    return out
