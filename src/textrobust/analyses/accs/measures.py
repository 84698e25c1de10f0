"""The units of an ACCS analysis, its typed record, and the pure measures over the records.

Morris, "Second-Order NLP Adversarial Examples", BlackboxNLP 2020
(../shared/papers/second-order-adversarial-examples-accs.txt). A unit of work is one
:class:`AccsTask`: one example, one attack (first order against the victim, second order
against the similarity model) and one constraint model, swept over every threshold. Its
:class:`AccsRecord` holds one :class:`~textrobust.analyses.accs.sweep.PointResult` per
threshold. From the records, pure functions compute

- :func:`curves`: per constraint model the constraint robustness curve (first-order rate
  over the examples the victim got right, second-order rate over all examples);
- :func:`table`: ACCS and the numbers behind it, per constraint model;
- :func:`bootstrap_accs`: percentile bootstrap intervals of ACCS, paired across models;
- :func:`shortcut_distance`: how far the monotone shortcut would be from an exact sweep.

Departure from the paper's setting (and from this project's earlier runner): one victim
per analysis. The audit gives an analysis one victim; a comparison of victims (Table 1)
runs one audit per victim (``benchmarks/accs.py table``). The second-order tasks do not
involve the victim, so every audit recomputes them; they are deterministic, so every
victim's curves use the same second-order rates as when they were shared.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from textrobust.analyses.accs.curve import Interpolation, RobustnessCurve, accs, monotone_search
from textrobust.analyses.accs.sweep import PointResult
from textrobust.analyses.protocol import Record, Summary
from textrobust.data.examples import Example
from textrobust.errors import ConfigError
from textrobust.text import Text

__all__ = [
    "FIRST",
    "SECOND",
    "AccsRecord",
    "AccsRow",
    "AccsSummary",
    "AccsTask",
    "Bootstrap",
    "Difference",
    "Interval",
    "Shortcut",
    "ShortcutCost",
    "ShortcutCurve",
    "accs_tasks",
    "bootstrap_accs",
    "curves",
    "shortcut_distance",
    "table",
]

FIRST = "first_order"
SECOND = "second_order"


@dataclass(frozen=True)
class AccsTask:
    """One unit of work: one example, one attack (``kind``), one constraint model."""

    kind: str
    constraint: str
    example: Example

    @property
    def unit_id(self) -> str:
        return f"{self.kind}|{self.constraint}|{self.example.id}"


def accs_tasks(examples: Sequence[Example], constraints: Sequence[str]) -> list[tuple[str, AccsTask]]:
    """Every task, example by example (so an interrupted run holds whole examples): for each
    constraint model its second-order sweep, then the victim's first-order sweep."""
    if not constraints:
        raise ConfigError("An ACCS analysis needs at least one constraint model ('constraint').")
    if len(set(constraints)) != len(constraints):
        raise ConfigError(f"The constraint models of an ACCS analysis must be distinct. Got {list(constraints)}.")
    tasks: list[tuple[str, AccsTask]] = []
    for example in examples:
        for constraint in constraints:
            for kind in (SECOND, FIRST):
                task = AccsTask(kind, constraint, example)
                tasks.append((task.unit_id, task))
    return tasks


@dataclass(frozen=True)
class AccsRecord(Record):
    """One task's sweep. ``example_id`` is the unit id (``kind|constraint|example``);
    ``example`` the data set's id of the sentence. ``status``: ``skipped`` (first order,
    the victim was already wrong), ``succeeded`` (at some threshold) or ``failed``.
    ``queries``: victim queries (0 for the second order); ``seconds``: the sweep;
    ``warm_seconds``: the LM scores of the sentence's first swaps, paid by the first task
    of an example in a worker (0 for the others)."""

    kind: str
    constraint: str
    example: str
    label: int
    original: Text
    skipped: bool
    points: tuple[PointResult, ...]
    warm_seconds: float = 0.0

    @property
    def successes(self) -> list[bool]:
        return [bool(p.success) for p in self.points]

    @property
    def budget_exhausted(self) -> bool:
        """The first-order attack ran out of its query budget at some threshold."""
        return any(p.budget_exhausted for p in self.points)


def _mean(values: Sequence[float]) -> float:
    return float(np.mean(values)) if len(values) else float("nan")


def _of(records: Sequence[AccsRecord], kind: str, constraint: str) -> list[AccsRecord]:
    return [r for r in records if r.kind == kind and r.constraint == constraint]


def _constraints(records: Sequence[AccsRecord], kind: str) -> list[str]:
    return list(dict.fromkeys(r.constraint for r in records if r.kind == kind))


def _rows(records: Sequence[AccsRecord]) -> dict[str, list[bool]]:
    return {r.example: r.successes for r in records}


def _curve(
    epsilons: tuple[float, ...],
    first: Mapping[str, Sequence[bool]],
    skipped: set[str],
    second: Mapping[str, Sequence[bool]],
) -> RobustnessCurve:
    ids = sorted(set(first) & set(second))
    attacked = [i for i in ids if i not in skipped]
    f = np.array([first[i] for i in attacked], dtype=bool).reshape(len(attacked), len(epsilons))
    s = np.array([second[i] for i in ids], dtype=bool).reshape(len(ids), len(epsilons))
    return RobustnessCurve(
        epsilons=epsilons,
        first_order=tuple(float(v) for v in (f.mean(axis=0) if len(attacked) else np.zeros(len(epsilons)))),
        second_order=tuple(float(v) for v in (s.mean(axis=0) if len(ids) else np.zeros(len(epsilons)))),
        first_attacked=len(attacked),
        second_attacked=len(ids),
    )


def curves(records: Sequence[AccsRecord], epsilons: tuple[float, ...]) -> dict[str, RobustnessCurve]:
    """Per constraint model (in the order the records first name them) its curve, over the
    examples that have both its first- and its second-order record."""
    for record in records:
        if len(record.points) != len(epsilons):
            raise ConfigError(
                f"Record '{record.example_id}' has {len(record.points)} thresholds; the settings have "
                f"{len(epsilons)}. Resume with the same thresholds."
            )
    out: dict[str, RobustnessCurve] = {}
    for constraint in _constraints(records, FIRST):
        chosen = _of(records, FIRST, constraint)
        skipped = {r.example for r in chosen if r.skipped}
        out[constraint] = _curve(epsilons, _rows(chosen), skipped, _rows(_of(records, SECOND, constraint)))
    return out


@dataclass(frozen=True)
class AccsRow:
    """ACCS of one constraint model and the numbers behind it (the paper's Table 1 row).
    The largest rates are NaN when no example was attacked."""

    constraint: str
    accs: float
    accs_trapezoid: float
    max_first_order: float
    max_second_order: float
    examples: int
    attacked_first_order: int
    first_order_seconds_per_example: float
    second_order_seconds_per_example: float


def table(records: Sequence[AccsRecord], by_constraint: Mapping[str, RobustnessCurve]) -> tuple[AccsRow, ...]:
    """One :class:`AccsRow` per curve."""
    rows = []
    for constraint, curve in by_constraint.items():
        rows.append(AccsRow(
            constraint=constraint,
            accs=curve.accs(Interpolation.PESSIMISTIC),
            accs_trapezoid=curve.accs(Interpolation.TRAPEZOID),
            max_first_order=max(curve.first_order) if curve.first_attacked else math.nan,
            max_second_order=max(curve.second_order) if curve.second_attacked else math.nan,
            examples=curve.second_attacked,
            attacked_first_order=curve.first_attacked,
            first_order_seconds_per_example=_mean([r.seconds for r in _of(records, FIRST, constraint)]),
            second_order_seconds_per_example=_mean([r.seconds for r in _of(records, SECOND, constraint)]),
        ))
    return tuple(rows)


# ---- uncertainty ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Interval:
    """A bootstrap interval of one constraint model's ACCS (NaN when undefined)."""

    constraint: str
    low: float
    high: float


@dataclass(frozen=True)
class Difference:
    """A bootstrap interval of ACCS(minus[0]) - ACCS(minus[1]), paired, and the share of
    resamples where it is positive."""

    minus: tuple[str, str]
    low: float
    high: float
    share_positive: float


@dataclass(frozen=True)
class Bootstrap:
    """Percentile bootstrap of ACCS (see :func:`bootstrap_accs`)."""

    samples: int
    level: float
    examples: int
    per_curve: tuple[Interval, ...]
    differences: tuple[Difference, ...]


def bootstrap_accs(records: Sequence[AccsRecord], by_constraint: Mapping[str, RobustnessCurve], *,
                   samples: int = 1000, seed: int = 0, level: float = 0.95) -> Bootstrap:
    """Percentile bootstrap intervals of ACCS (pessimistic), resampling examples.

    Each resample draws the examples with replacement once and recomputes every curve from
    the same draw (first-order rates over the drawn examples the victim got right,
    second-order rates over all drawn examples), so the differences between constraint
    models are paired. With few second-order successes (a handful per hundred sentences)
    the intervals are wide; read a table of ACCS with them. Resamples where a curve is
    undefined (no first-order success drawn) are left out of it.
    """
    if samples < 1 or not 0 < level < 1:
        raise ConfigError(f"bootstrap_accs needs samples >= 1 and 0 < level < 1. Got {samples} and {level}.")
    second_rows = {c: _rows(_of(records, SECOND, c)) for c in _constraints(records, SECOND)}
    names = list(by_constraint)
    if not names:
        return Bootstrap(samples, level, 0, (), ())
    ids = sorted(set.intersection(*[set(second_rows.get(c, {})) for c in names]))
    data = {}
    for constraint in names:
        chosen = _of(records, FIRST, constraint)
        first = {r.example: (r.successes, bool(r.skipped)) for r in chosen}
        keep = [i for i in ids if i in first]
        f = np.array([first[i][0] for i in keep], dtype=float).reshape(len(keep), -1)
        attacked = np.array([not first[i][1] for i in keep], dtype=float)
        s2 = np.array([second_rows.get(constraint, {})[i] for i in keep], dtype=float).reshape(len(keep), -1)
        where = np.array([ids.index(i) for i in keep], dtype=np.int64)
        data[constraint] = (f, attacked, s2, where)
    rng = np.random.default_rng(seed)
    n = len(ids)
    values: dict[str, list[float]] = {key: [] for key in data}
    for _ in range(samples):
        draw = np.bincount(rng.integers(0, n, n), minlength=n).astype(float) if n else np.zeros(0)
        for key, (f, attacked, s2, where) in data.items():
            weights = draw[where]
            base = float(np.sum(weights * attacked))
            if base <= 0:
                values[key].append(float("nan"))
                continue
            tp = (weights * attacked) @ f / base
            fp = weights @ s2 / max(float(np.sum(weights)), 1.0)
            values[key].append(accs(fp, tp))
    low, high = (1 - level) / 2 * 100, (1 + level) / 2 * 100

    def interval(xs: Sequence[float]) -> tuple[float, float]:
        arr = np.asarray([x for x in xs if not math.isnan(x)], dtype=float)
        return (float(np.percentile(arr, low)), float(np.percentile(arr, high))) if len(arr) else (math.nan,) * 2

    per_curve = tuple(Interval(c, *interval(xs)) for c, xs in values.items())
    differences = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            diff = np.subtract(values[a], values[b])
            share = float(np.mean(diff[~np.isnan(diff)] > 0)) if np.any(~np.isnan(diff)) else math.nan
            differences.append(Difference((a, b), *interval(list(diff)), share))
    return Bootstrap(samples, level, n, per_curve, tuple(differences))


# ---- the monotone shortcut, measured on an exact sweep -----------------------------------------
@dataclass(frozen=True)
class ShortcutCurve:
    """One constraint model's ACCS from the exact sweep and from the shortcut, and the
    largest gap between their rates at one threshold."""

    constraint: str
    accs_exact: float
    accs_shortcut: float
    accs_trapezoid_exact: float
    accs_trapezoid_shortcut: float
    max_gap_first_order: float
    max_gap_second_order: float


@dataclass(frozen=True)
class ShortcutCost:
    """For one attack: (example, threshold) cells the shortcut gets wrong, the share of
    threshold runs it needs, and the attack seconds of those runs against all runs."""

    wrong_cells: int
    cells: int
    runs_share: float
    attack_seconds_shortcut: float
    attack_seconds_exact: float


@dataclass(frozen=True)
class Shortcut:
    """How far the monotone shortcut would be from the exact sweep (see
    :func:`shortcut_distance`); ``non_monotone_examples``: ``kind|constraint`` -> ids."""

    per_curve: tuple[ShortcutCurve, ...]
    first_order: ShortcutCost
    second_order: ShortcutCost
    non_monotone_examples: dict[str, tuple[str, ...]]


@dataclass(frozen=True)
class AccsSummary(Summary):
    """Per constraint model the constraint robustness curve and ACCS (pessimistic; NaN
    without a first-order success, 1.0 without a second-order one), the table row behind
    it, bootstrap intervals and (exact sweeps) the monotone shortcut's distance.
    ``examples``: sentences with records; ``lm_warm_seconds_per_example``: NaN without
    records."""

    examples: int
    epsilons: tuple[float, ...]
    accs: dict[str, float]
    curves: dict[str, RobustnessCurve]
    rows: tuple[AccsRow, ...]
    bootstrap: Bootstrap
    shortcut: Shortcut | None
    lm_warm_seconds_per_example: float


def _shortcut_row(points: Sequence[PointResult]) -> tuple[list[bool], list[int]]:
    successes = [bool(p.success) for p in points]
    k, visited = monotone_search(len(successes), lambda i: successes[i])
    return [i < k for i in range(len(successes))], list(visited)


def shortcut_distance(records: Sequence[AccsRecord], by_constraint: Mapping[str, RobustnessCurve],
                      epsilons: tuple[float, ...]) -> Shortcut:
    """How far the monotone shortcut's curves would be from the exact ones, from an exact
    sweep's records (every search is deterministic, so the shortcut would have run exactly
    the thresholds :func:`monotone_search` visits, with the results recorded there).

    Per constraint model: ACCS exact and shortcut, the largest gap between the rates at
    one threshold; per attack: the share of (example, threshold) cells the shortcut gets
    wrong, the share of threshold runs it needs and the attack seconds those runs took.
    """
    non_monotone: dict[str, list[str]] = {}
    run_share: dict[str, list[float]] = {FIRST: [], SECOND: []}
    seconds = {FIRST: [0.0, 0.0], SECOND: [0.0, 0.0]}  # [shortcut, exact]
    wrong = {FIRST: [0, 0], SECOND: [0, 0]}
    inferred_rows: dict[str, dict[str, list[bool]]] = {}
    for record in records:
        row, visited = _shortcut_row(record.points)
        kind = record.kind
        key = f"{kind}|{record.constraint}"
        inferred_rows.setdefault(key, {})[record.example] = row
        run_share[kind].append(len(visited) / len(epsilons))
        seconds[kind][0] += sum(record.points[i].seconds for i in visited)
        seconds[kind][1] += sum(p.seconds for p in record.points)
        exact = record.successes
        bad = sum(a != b for a, b in zip(row, exact))
        wrong[kind][0] += bad
        wrong[kind][1] += len(exact)
        if bad:
            non_monotone.setdefault(key, []).append(record.example)
    per_curve = []
    for constraint, curve in by_constraint.items():
        first = inferred_rows.get(f"{FIRST}|{constraint}", {})
        second = inferred_rows.get(f"{SECOND}|{constraint}", {})
        skipped = {r.example for r in _of(records, FIRST, constraint) if r.skipped}
        short = _curve(epsilons, first, skipped, second)
        per_curve.append(ShortcutCurve(
            constraint=constraint,
            accs_exact=curve.accs(),
            accs_shortcut=short.accs(),
            accs_trapezoid_exact=curve.accs(Interpolation.TRAPEZOID),
            accs_trapezoid_shortcut=short.accs(Interpolation.TRAPEZOID),
            max_gap_first_order=float(np.max(np.abs(np.subtract(curve.first_order, short.first_order)))),
            max_gap_second_order=float(np.max(np.abs(np.subtract(curve.second_order, short.second_order)))),
        ))
    cost = {kind: ShortcutCost(wrong[kind][0], wrong[kind][1], _mean(run_share[kind]), seconds[kind][0],
                               seconds[kind][1]) for kind in (FIRST, SECOND)}
    return Shortcut(tuple(per_curve), cost[FIRST], cost[SECOND],
                    {k: tuple(v) for k, v in non_monotone.items()})
