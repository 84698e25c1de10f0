"""The expected valid success rate and its 95% interval (issue 47, item 3).

A substitution-based figure counts findings (flips, falsifying examples, misclassified
samples) under a filter; each finding carries the probability ``p_f`` that it keeps the
meaning (:mod:`textrobust.attack.candidates.swap_validity`). The quantity a user asks about
is the share of examples on which a meaning-preserving substitution changes the answer. Its
estimate here is the **expected valid rate**::

    rate = sum over examples i of  w_i * mean(p_f for the findings f of i)  /  n

over the ``n`` examples the figure is over (attacked, scored); an example with no finding
counts 0. For the attack and the radius each example has at most one finding and ``w_i = 1``,
so the rate is the sum of the findings' probabilities over the examples attacked; PR weighs
each example by its misclassified share of ``Omega_r`` (``w_i``) and averages its kept
samples (the expected valid share misclassified).

**The interval: a parametric bootstrap over both uncertainties.** Each of ``replicates``
(2,000) rounds (seeded: the same inputs give the same interval):

1. takes one of the calibration's bootstrap refits, ``b`` (round ``r`` uses refit ``r mod B``;
   every finding's ``p_f^b`` comes from the same refit, so findings move together, as they
   do when the map itself is off): the **calibration uncertainty**;
2. resamples the ``n`` examples with replacement (a multinomial count per example): the
   **sampling of examples**, i.e. which examples the audit happened to attack;
3. for each copy of an example draws each finding's validity ``V_f ~ Bernoulli(p_f^b)``:
   which of the findings are in fact valid, given their probabilities;

and computes the rate with ``V_f`` in place of ``p_f``. The 2.5th and 97.5th percentiles of
the rounds are the interval, widened where needed to the exact binomial (Clopper-Pearson)
interval of the expected count (:func:`exact_bounds`): a percentile bootstrap cannot reach
past what the few examples it resamples show (no finding among 5 attacked gives 0 .. 0), and a
verdict must not call 5 examples *good*. Steps 2 and 3 are the ordinary parametric bootstrap of a mean of
Bernoulli outcomes (Efron and Tibshirani 1993, ch. 6); step 1 propagates the calibration's
own bootstrap (a two-level bootstrap), so the spread includes the map's uncertainty, not
only the chance of which examples and which findings. A reviewed finding is no longer
uncertain: a confirmed one has ``p_f = 1`` in every round, a rejected one 0 (the reviewed
figure, :func:`estimate` with ``outcomes``).

:func:`settling_reviews` names the findings whose review would settle a figure's band.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from textrobust.errors import ConfigError

__all__ = ["REPLICATES", "Estimate", "Unit", "band_of", "estimate", "exact_bounds", "settling_reviews",
           "units_from_dicts"]

#: Bootstrap rounds of the interval.
REPLICATES = 2000
#: The interval's coverage.
LEVEL = 0.95


@dataclass(frozen=True)
class Unit:
    """One finding: its ``item`` id, the ``example`` it belongs to (any key: findings of one
    example share it), the example's ``weight`` (1; PR: its misclassified share), the
    point ``probability`` and one value per calibration draw (``draws``; empty: no
    calibration uncertainty). ``outcome``: 1 (confirmed by a person), 0 (rejected) or None."""

    item: str
    example: str
    probability: float
    draws: tuple[float, ...] = ()
    weight: float = 1.0
    outcome: float | None = None

    def to_dict(self) -> dict[str, object]:
        return {"item": self.item, "example": self.example, "probability": self.probability,
                "draws": list(self.draws), "weight": self.weight, "outcome": self.outcome}


def units_from_dicts(rows: Sequence[Mapping[str, object]]) -> list[Unit]:
    """:class:`Unit` values back from their ``to_dict`` (a report's ``validity`` block)."""
    out = []
    for row in rows:
        outcome = row.get("outcome")
        out.append(Unit(str(row["item"]), str(row["example"]), float(row["probability"]),  # type: ignore[arg-type]
                        tuple(float(v) for v in row.get("draws") or ()),  # type: ignore[attr-defined]
                        float(row.get("weight", 1.0)),  # type: ignore[arg-type]
                        None if outcome is None else float(outcome)))  # type: ignore[arg-type]
    return out


@dataclass(frozen=True)
class Estimate:
    """The expected valid rate (``point``) and its 95% interval (``low`` .. ``high``); NaN
    with no example."""

    point: float
    low: float
    high: float

    def fields(self, name: str) -> dict[str, float]:
        return {name: self.point, f"{name}_low": self.low, f"{name}_high": self.high}


def _probabilities(units: Sequence[Unit]) -> tuple[np.ndarray, np.ndarray]:
    """The point probabilities (F,) and the per-draw ones (B, F), outcomes applied."""
    point = np.asarray([u.probability if u.outcome is None else u.outcome for u in units], dtype=float)
    sizes = {len(u.draws) for u in units if u.outcome is None and u.draws}
    b = min(sizes) if sizes else 1
    table = np.empty((b, len(units)))
    for f, u in enumerate(units):
        if u.outcome is not None:
            table[:, f] = u.outcome
        elif u.draws:
            table[:, f] = u.draws[:b]
        else:
            table[:, f] = u.probability
    return np.clip(point, 0, 1), np.clip(table, 0, 1)


def estimate(units: Sequence[Unit], examples: int, *, replicates: int = REPLICATES, seed: int = 0) -> Estimate:
    """The expected valid rate of ``units`` over ``examples`` examples, with its interval
    (the module docstring says how). ``examples`` counts the examples without a finding too."""
    if examples < 0 or replicates < 1:
        raise ConfigError(f"An estimate needs examples >= 0 and replicates >= 1; got {examples} and {replicates}.")
    if examples == 0:
        return Estimate(math.nan, math.nan, math.nan)
    keys = list(dict.fromkeys(u.example for u in units))
    if len(keys) > examples:
        raise ConfigError(f"{len(keys)} examples have findings, but the figure is over {examples} examples.")
    if not units:
        return Estimate(0.0, 0.0, exact_bounds(0.0, examples)[1])
    index = {k: i for i, k in enumerate(keys)}
    per_example = np.zeros(len(keys))
    weight = np.zeros(len(keys))
    for u in units:
        per_example[index[u.example]] += 1
        weight[index[u.example]] = u.weight
    owner = np.asarray([index[u.example] for u in units])
    coef = weight[owner] / per_example[owner]  # w_i / (findings of i)
    point, table = _probabilities(units)
    value = float(point @ coef) / examples
    rng = np.random.default_rng(seed)
    rest = examples - len(keys)
    shares = [1.0 / examples] * len(keys) + ([rest / examples] if rest else [])
    copies = rng.multinomial(examples, shares, size=replicates)[:, : len(keys)]  # (R, examples with findings)
    probs = table[np.arange(replicates) % table.shape[0]]  # (R, F): round r's calibration refit
    valid = rng.binomial(copies[:, owner], probs)  # valid copies of each finding
    rates = (valid @ coef) / examples
    tail = (1.0 - LEVEL) / 2.0
    low, high = np.quantile(rates, [tail, 1.0 - tail])
    exact_low, exact_high = exact_bounds(value, examples)
    return Estimate(value, float(min(low, exact_low, value)), float(max(high, exact_high, value)))


def exact_bounds(rate: float, examples: int) -> tuple[float, float]:
    """The exact binomial (Clopper-Pearson) 95% interval of ``rate`` over ``examples``
    examples, for the expected count ``k = rate * examples`` (the Beta form takes a count that
    is not whole): the floor under every interval of :func:`estimate`. The percentile
    bootstrap alone is too narrow with few examples: with no finding among 5 it says 0 .. 0,
    with one of 5 at most 1 in 5; the exact interval says 0 .. 52% and 0.5% .. 72%."""
    from scipy.stats import beta

    if examples <= 0 or math.isnan(rate):
        return math.nan, math.nan
    tail = (1.0 - LEVEL) / 2.0
    k = min(max(rate, 0.0), 1.0) * examples
    low = float(beta.ppf(tail, k, examples - k + 1)) if k > 0 else 0.0
    high = float(beta.ppf(1.0 - tail, k + 1, examples - k)) if k < examples else 1.0
    return low, high


def band_of(value: float, thresholds: Sequence[tuple[float, str]]) -> str:
    """The band ``value`` falls in: the first ``(upper bound, name)`` it is below."""
    return next(name for bound, name in thresholds if value < bound)


def settling_reviews(figures: Mapping[str, tuple[Sequence[Unit], int]], settled: object,
                     *, limit: int = 200) -> list[str] | None:
    """The findings whose review would settle a verdict: a short list of items, or None when
    reviews alone cannot.

    ``figures``: per figure its units and examples; ``settled(estimates)`` says whether the
    estimates (one :class:`Estimate` per figure) decide the verdict. The search is greedy, not
    exact (the exact smallest set is a search over subsets): the unreviewed findings are
    ordered by how far one review is sure to move its figure's expected rate (``min(p, 1 -
    p)`` times its weight over the examples: a finding near 0.5 first), and the shortest
    prefix that settles the verdict **when each review agrees with the judge** (valid when
    ``p >= 0.5``) is returned; a review that disagrees changes the figures, and the next
    verdict names what is left. An empty list: the verdict is settled already."""
    from collections.abc import Callable

    check: Callable[[dict[str, Estimate]], bool] = settled  # type: ignore[assignment]
    open_: list[tuple[float, str, int]] = []
    for name, (units, examples) in figures.items():
        counts: dict[str, int] = {}
        for u in units:
            counts[u.example] = counts.get(u.example, 0) + 1
        for k, u in enumerate(units):
            if u.outcome is None and examples:
                move = min(u.probability, 1.0 - u.probability) * u.weight / counts[u.example] / examples
                open_.append((move, name, k))
    open_.sort(key=lambda t: (-t[0], t[1], t[2]))
    open_ = open_[:limit]

    def with_reviews(count: int) -> dict[str, Estimate]:
        chosen: dict[str, dict[int, float]] = {}
        for _, name, k in open_[:count]:
            p = figures[name][0][k].probability
            chosen.setdefault(name, {})[k] = 1.0 if p >= 0.5 else 0.0
        out = {}
        for name, (units, examples) in figures.items():
            fixed = chosen.get(name, {})
            reviewed = [Unit(u.item, u.example, u.probability, u.draws, u.weight, fixed[k]) if k in fixed else u
                        for k, u in enumerate(units)]
            out[name] = estimate(reviewed, examples)
        return out

    def settles(count: int) -> bool:
        return check(with_reviews(count))

    if settles(0):
        return []
    sizes = list(range(1, len(open_) + 1))
    if len(sizes) > 24:  # doubling, then the first size that settles between the last two tried
        probe, previous = 1, 0
        while probe < len(open_) and not settles(probe):
            previous, probe = probe, min(2 * probe, len(open_))
        sizes = list(range(previous + 1, probe + 1))
    for size in sizes:
        if settles(size):
            return [figures[name][0][k].item for _, name, k in open_[:size]]
    return None
