"""Constraint robustness curves and ACCS: pure functions over success rates.

Morris, "Second-Order NLP Adversarial Examples", BlackboxNLP 2020
(../shared/papers/second-order-adversarial-examples-accs.txt, section 3). For a
similarity model S and thresholds epsilon, the curve plots the first-order success rate
(true positives: adversarial examples for a victim, found with S >= epsilon as the
constraint) against the second-order success rate (false positives: texts with gamma
antonym swaps that S still calls similar). ACCS is the area under the curve, with the
point (0, 0), divided by the largest first-order rate times the largest second-order rate.

Two ways to draw the curve between thresholds are offered:

- ``"pessimistic"`` (default): a step function, ``f(x) = max{TP(eps) : FP(eps) <= x}``.
  When both rates rise between two thresholds, the second-order rise is counted first.
  This is the paper's text: "a naive constraint will yield all second-order adversarial
  examples at the same threshold, and garner an ACCS of 0.0". A constraint that calls
  every text similar has one point (max FP, max TP) besides (0, 0): ACCS 0.
- ``"trapezoid"``: straight lines between the points sorted by (FP, TP), as the released
  code's ``sklearn.metrics.auc``. It gives the paper's toy curve (a straight line to
  (0.3, 0.7), area 0.105) ACCS 0.5 exactly, but also gives 0.5 to the naive constraint.

On a fine grid the two agree (the pessimistic area of the toy line with 1,000 steps is
0.5 x (1 - 1/1000)); they part where the grid is coarse against the constraint's scale.
Both depend on that resolution: mean-GloVe cosine, whose scores sit in 0.99-1.0, scored
0.29 on the paper's grid (0.75..1.00 by 0.01) and 0.64 on 0.95..1.00 by 0.002 on the same
sentences (benchmarks/results/accs.md). Give each constraint model a grid that resolves
its own range.
Degenerate curves: no first-order success at any threshold gives NaN (the curve says
nothing); first-order successes but no second-order one gives 1.0 (never fooled).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from textrobust.errors import ConfigError

__all__ = [
    "Interpolation",
    "RobustnessCurve",
    "accs",
    "curve_area",
    "epsilon_grid",
    "monotone_search",
    "normalised_area",
]


class Interpolation(StrEnum):
    """How the curve runs between two thresholds (see the module docstring)."""

    PESSIMISTIC = "pessimistic"
    TRAPEZOID = "trapezoid"


def epsilon_grid(start: float = 0.75, stop: float = 1.0, step: float = 0.01) -> tuple[float, ...]:
    """Thresholds ``start, start + step, ..., stop`` (both ends included), rounded to 6
    decimals. The paper's grids: 0.75..1.0 by 0.01; 0.5..1.0 by 0.02 for short texts.

    >>> epsilon_grid(0.5, 1.0, 0.25)
    (0.5, 0.75, 1.0)
    """
    if not step > 0:
        raise ConfigError(f"The 'step' parameter of epsilon_grid must be > 0. Got {step} instead.")
    if not start <= stop:
        raise ConfigError(f"epsilon_grid needs start <= stop. Got start={start}, stop={stop}.")
    count = math.floor((stop - start) / step + 1e-9) + 1
    values = [round(start + i * step, 6) for i in range(count)]
    if values[-1] < round(stop, 6) - 1e-9:
        values.append(round(stop, 6))
    return tuple(values)


def _points(fp: Sequence[float], tp: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(fp, dtype=np.float64)
    y = np.asarray(tp, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ConfigError(
            f"A robustness curve needs one first-order rate per second-order rate. Got {x.shape} and {y.shape}."
        )
    if np.isnan(x).any() or np.isnan(y).any() or (x < 0).any() or (y < 0).any():
        raise ConfigError("Success rates must be numbers >= 0 (no NaN).")
    x = np.concatenate([[0.0], x])
    y = np.concatenate([[0.0], y])
    order = np.lexsort((y, x))
    return x[order], y[order]


def curve_area(
    fp: Sequence[float], tp: Sequence[float], *, interpolation: Interpolation | str = Interpolation.PESSIMISTIC
) -> float:
    """The area under the curve through (0, 0) and the points ``(fp[i], tp[i])``
    (second-order rate on x, first-order rate on y).

    >>> round(curve_area([0.3], [0.7], interpolation="trapezoid"), 6)
    0.105
    >>> curve_area([0.3], [0.7])
    0.0
    """
    method = _method(interpolation)
    x, y = _points(fp, tp)
    if method is Interpolation.TRAPEZOID:
        return float(np.sum(np.diff(x) * (y[1:] + y[:-1]) / 2.0))
    best = np.maximum.accumulate(y)  # best TP reachable with FP <= x[i]
    return float(np.sum(np.diff(x) * best[:-1]))


def normalised_area(area: float, max_first: float, max_second: float) -> float:
    """``area / (max_first * max_second)``, with the degenerate cases of the module
    docstring (NaN without first-order successes, 1.0 without second-order ones).

    >>> normalised_area(0.105, 0.7, 0.3)
    0.5
    """
    if max_first <= 0:
        return math.nan
    if max_second <= 0:
        return 1.0
    return round(float(area) / (max_first * max_second), 12)


def accs(
    fp: Sequence[float], tp: Sequence[float], *, interpolation: Interpolation | str = Interpolation.PESSIMISTIC
) -> float:
    """Adjusted Constraint C-Statistic of the curve ``(fp[i], tp[i])`` (one point per
    threshold; order does not matter).

    >>> accs([0.3], [0.7], interpolation="trapezoid")
    0.5
    >>> accs([0.3, 0.3], [0.7, 0.7])  # every text "similar" at every threshold
    0.0
    """
    area = curve_area(fp, tp, interpolation=interpolation)
    tp_max = float(np.max(tp)) if len(tp) else 0.0
    fp_max = float(np.max(fp)) if len(fp) else 0.0
    return normalised_area(area, tp_max, fp_max)


def _method(interpolation: Interpolation | str) -> Interpolation:
    try:
        return Interpolation(interpolation)
    except ValueError:
        raise ConfigError(
            f"The 'interpolation' parameter must be one of {[m.value for m in Interpolation]}. "
            f"Got {interpolation!r} instead."
        ) from None


@dataclass(frozen=True)
class RobustnessCurve:
    """One constraint's curve for one victim: per threshold (ascending), the first-order
    success rate (over the examples the victim got right) and the second-order rate (over
    all examples), with the counts behind them."""

    epsilons: tuple[float, ...]
    first_order: tuple[float, ...]
    second_order: tuple[float, ...]
    first_attacked: int
    second_attacked: int

    def __post_init__(self) -> None:
        if not len(self.epsilons) == len(self.first_order) == len(self.second_order):
            raise ConfigError(
                "A RobustnessCurve needs one first- and one second-order rate per threshold. Got "
                f"{len(self.epsilons)}, {len(self.first_order)} and {len(self.second_order)}."
            )

    def accs(self, interpolation: Interpolation | str = Interpolation.PESSIMISTIC) -> float:
        return accs(self.second_order, self.first_order, interpolation=interpolation)

    def area(self, interpolation: Interpolation | str = Interpolation.PESSIMISTIC) -> float:
        return curve_area(self.second_order, self.first_order, interpolation=interpolation)

    def to_dict(self) -> dict[str, object]:
        return {
            "epsilons": list(self.epsilons),
            "first_order": list(self.first_order),
            "second_order": list(self.second_order),
            "first_attacked": self.first_attacked,
            "second_attacked": self.second_attacked,
            "max_first_order": max(self.first_order, default=0.0),
            "max_second_order": max(self.second_order, default=0.0),
            "accs": self.accs(Interpolation.PESSIMISTIC),
            "accs_trapezoid": self.accs(Interpolation.TRAPEZOID),
        }


def monotone_search(count: int, succeeds: Callable[[int], bool]) -> tuple[int, tuple[int, ...]]:
    """The monotone shortcut over ``count`` thresholds in ascending order.

    Assumes an example that fails at one threshold fails at every higher one, and one that
    succeeds succeeds at every lower one (the released code drops failed examples from the
    higher thresholds). Returns ``k``, the number of thresholds (from the lowest) at which
    the example is taken to succeed, and the indices actually run: the loosest threshold
    first (fails: done), then the strictest (succeeds: done), then bisection, so at most
    ``2 + ceil(log2(count))`` runs instead of ``count``.

    >>> monotone_search(26, lambda i: i < 10)
    (10, (0, 25, 12, 6, 9, 10))
    """
    if count < 1:
        raise ConfigError(f"monotone_search needs at least one threshold. Got {count}.")
    visited: list[int] = []

    def run(i: int) -> bool:
        visited.append(i)
        return bool(succeeds(i))

    if not run(0):
        return 0, tuple(visited)
    if count == 1:
        return 1, tuple(visited)
    if run(count - 1):
        return count, tuple(visited)
    low, high = 0, count - 1  # succeeds at low, fails at high
    while high - low > 1:
        mid = (low + high) // 2
        if run(mid):
            low = mid
        else:
            high = mid
    return high, tuple(visited)
