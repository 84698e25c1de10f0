"""Paired statistics for comparing two runs on the examples they share.

A headline figure of an analysis is, over the examples it applies to, a mean of
per-example values: ``sum(num) / sum(den)``, where ``den`` is 1 for an example the figure
counts and 0 for one it leaves out (the attack success rate counts only the attacked
examples; accuracy counts all of them). Two runs over the same examples give paired
values, and the difference of their figures has a paired interval:

- :func:`paired_bootstrap`: resample the shared examples with replacement (the same
  examples for both runs, so the pairing is kept), recompute both figures on each
  resample, and take the 2.5% and 97.5% quantiles of the differences (the percentile
  interval; Efron and Tibshirani 1993, ch. 13). Seeded: the same inputs and seed give the
  same interval.
- :func:`mcnemar_exact`: for a per-example right/wrong figure (accuracy), McNemar's exact
  test: of the discordant examples (right in one run, wrong in the other), are the two
  directions equally likely? A two-sided binomial test with p = 1/2 on the discordant
  pairs (``scipy.stats.binomtest``).

>>> import numpy as np
>>> a = np.array([1, 1, 0, 0, 1.0]); b = np.array([1, 0, 0, 1, 1.0]); ones = np.ones(5)
>>> paired_bootstrap(a, ones, b, ones, resamples=200, seed=0).difference
0.0
>>> mcnemar_exact(a.astype(bool), b.astype(bool))
McNemar(baseline_only=1, other_only=1, p_value=1.0)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from textrobust.errors import ConfigError

__all__ = ["CONFIDENCE", "MAX_UNDEFINED", "MIN_TAIL", "McNemar", "PairedInterval", "Statistic", "figure_value",
           "mcnemar_exact", "min_resamples", "paired_bootstrap"]

#: The confidence of every interval of a comparison.
CONFIDENCE = 0.95
#: How a figure is computed from per-example values: the ratio of sums (a mean over the
#: examples it counts) or the median of the counted values.
Statistic = Literal["ratio", "median"]
#: The largest share of resamples in which a figure may be undefined (it counts none of
#: the drawn examples) for an interval to be given: dropping them conditions the
#: bootstrap on the figure being defined, harmless only when that is rare.
MAX_UNDEFINED = 0.05
#: The fewest resamples each tail of a percentile interval must hold beyond its bound:
#: with fewer, a bound is one or two resampled values and the interval says little (one
#: resample gives an interval of width 0).
MIN_TAIL = 5


def min_resamples(confidence: float = CONFIDENCE) -> int:
    """The fewest bootstrap resamples for a percentile interval at ``confidence``: each
    tail, a share ``(1 - confidence) / 2`` of them, holds at least :data:`MIN_TAIL`
    (200 for 95%)."""
    if not 0 < confidence < 1:
        raise ConfigError(f"The 'confidence' parameter must be between 0 and 1. Got {confidence!r} instead.")
    return math.ceil(round(2 * MIN_TAIL / (1 - confidence), 6))


#: Resamples drawn at once for a ratio (bounds the memory: block x examples floats).
_BLOCK = 256


@dataclass(frozen=True)
class PairedInterval:
    """The difference ``other - baseline`` of one figure on the shared examples, and its
    paired bootstrap interval. ``low``/``high`` are NaN when the figure is undefined in
    more than :data:`MAX_UNDEFINED` of the resamples; ``defined``: the resamples where
    both figures were defined."""

    baseline: float
    other: float
    difference: float
    low: float
    high: float
    resamples: int
    defined: int


@dataclass(frozen=True)
class McNemar:
    """McNemar's exact test on paired right/wrong outcomes: ``baseline_only`` examples
    right in the baseline only, ``other_only`` right in the other run only; ``p_value``
    two-sided (1.0 with no discordant example)."""

    baseline_only: int
    other_only: int
    p_value: float


def _check(num: np.ndarray, den: np.ndarray, name: str) -> tuple[np.ndarray, np.ndarray]:
    num, den = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    if num.shape != den.shape or num.ndim != 1:
        raise ConfigError(f"The per-example values '{name}' need one numerator and one denominator per example; "
                          f"got shapes {num.shape} and {den.shape}.")
    if not (np.isfinite(num).all() and np.isfinite(den).all()) or (den < 0).any():
        raise ConfigError(f"The per-example values '{name}' must be finite, with denominators >= 0.")
    return num, den


def figure_value(num: np.ndarray, den: np.ndarray, statistic: Statistic = "ratio") -> float:
    """The figure over these examples: ``sum(num) / sum(den)``, or the median of
    ``num / den`` over the examples with ``den > 0`` (NaN when no example counts)."""
    num, den = _check(num, den, "values")
    if statistic == "ratio":
        total = den.sum()
        return float(num.sum() / total) if total > 0 else math.nan
    counted = den > 0
    return float(np.median(num[counted] / den[counted])) if counted.any() else math.nan


def _ratio_resamples(num: np.ndarray, den: np.ndarray, index: np.ndarray) -> np.ndarray:
    totals = den[index].sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(totals > 0, num[index].sum(axis=1) / np.where(totals > 0, totals, 1.0), np.nan)


def _median_resamples(num: np.ndarray, den: np.ndarray, index: np.ndarray) -> np.ndarray:
    return np.array([figure_value(num[row], den[row], "median") for row in index])


def paired_bootstrap(baseline_num: np.ndarray, baseline_den: np.ndarray, other_num: np.ndarray,
                     other_den: np.ndarray, *, resamples: int = 2000, seed: int = 0,
                     statistic: Statistic = "ratio", confidence: float = CONFIDENCE) -> PairedInterval:
    """The paired percentile bootstrap interval of ``figure(other) - figure(baseline)``.

    Position ``i`` of the four arrays is the same example in both runs. Each resample
    draws ``n`` positions with replacement (one draw for both runs) from
    ``numpy.random.default_rng(seed)``. The interval is left NaN when the difference is
    undefined (a figure counts no drawn example) in more than :data:`MAX_UNDEFINED` of
    the resamples; the other resamples give it."""
    a_num, a_den = _check(baseline_num, baseline_den, "baseline")
    b_num, b_den = _check(other_num, other_den, "other")
    if a_num.shape != b_num.shape:
        raise ConfigError(f"Paired values need the same examples in both runs; got {a_num.size} and {b_num.size}.")
    if isinstance(resamples, bool) or not isinstance(resamples, int) or resamples < 1:
        raise ConfigError(f"The 'resamples' parameter must be an int >= 1. Got {resamples!r} instead.")
    if not 0 < confidence < 1:
        raise ConfigError(f"The 'confidence' parameter must be between 0 and 1. Got {confidence!r} instead.")
    base, other = figure_value(a_num, a_den, statistic), figure_value(b_num, b_den, statistic)
    n = a_num.size
    if n == 0:
        return PairedInterval(base, other, math.nan, math.nan, math.nan, resamples, 0)
    rng = np.random.default_rng(seed)
    draw = _ratio_resamples if statistic == "ratio" else _median_resamples
    differences = []
    for start in range(0, resamples, _BLOCK):
        index = rng.integers(0, n, size=(min(_BLOCK, resamples - start), n))
        differences.append(draw(b_num, b_den, index) - draw(a_num, a_den, index))
    diffs = np.concatenate(differences)
    finite = diffs[np.isfinite(diffs)]
    low = high = math.nan
    if resamples - finite.size <= MAX_UNDEFINED * resamples:
        tail = (1 - confidence) / 2
        low, high = (float(q) for q in np.quantile(finite, [tail, 1 - tail]))
    return PairedInterval(base, other, other - base, low, high, resamples, int(finite.size))


def mcnemar_exact(baseline_right: np.ndarray, other_right: np.ndarray) -> McNemar:
    """McNemar's exact test of two runs' right/wrong outcomes on the same examples."""
    a, b = np.asarray(baseline_right, dtype=bool), np.asarray(other_right, dtype=bool)
    if a.shape != b.shape:
        raise ConfigError(f"Paired outcomes need the same examples in both runs; got {a.size} and {b.size}.")
    baseline_only, other_only = int((a & ~b).sum()), int((~a & b).sum())
    discordant = baseline_only + other_only
    if discordant == 0:
        return McNemar(0, 0, 1.0)
    from scipy.stats import binomtest

    p_value = float(binomtest(other_only, discordant, 0.5, alternative="two-sided").pvalue)
    return McNemar(baseline_only, other_only, min(p_value, 1.0))
