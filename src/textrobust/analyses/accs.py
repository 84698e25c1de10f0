"""Constraint robustness: second-order attacks on the similarity model, curves and ACCS.

Implements Morris, "Second-Order NLP Adversarial Examples", BlackboxNLP 2020
(../shared/papers/second-order-adversarial-examples-accs.txt). A word-substitution attack
that keeps a swap only when a similarity model S says the text is still similar counts
every success as a flaw of the victim; some are flaws of S (*second-order* adversarial
examples: the meaning changed, S did not notice). For each constraint model S and each
threshold epsilon this analysis runs

- the first-order attack against each victim, S >= epsilon as the constraint (true
  positives), and
- the second-order attack against S itself: three antonym swaps that S still scores
  >= epsilon (false positives),

draws the constraint robustness curve (first- against second-order success rate) and
reports ACCS, its normalised area (:mod:`textrobust.analyses.accs_curve`). The attacks
and the shared caches of a sweep are in :mod:`textrobust.analyses.accs_sweep`, the LM
constraint in :mod:`textrobust.analyses.accs_lm`, the constraint models in
:mod:`textrobust.analyses.accs_scorers`, plots and example tables in
:mod:`textrobust.analyses.accs_report`.

Work is stored per (example, attack, constraint model[, victim]) in the run store, the
moment it is done, so an interrupted analysis resumes where it stopped; the curves, ACCS
and the shortcut measurement are computed from the stored records.

>>> from textrobust.analyses.accs import accs
>>> accs([0.3], [0.7], interpolation="trapezoid")   # the paper's toy curve
0.5
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from textrobust.analyses.accs_curve import (
    Interpolation,
    RobustnessCurve,
    accs,
    curve_area,
    epsilon_grid,
    monotone_search,
    normalised_area,
)
from textrobust.analyses.accs_scorers import (
    CONSTRAINT_MODELS,
    SimilarityMemo,
    build_constraint_model,
    parse_constraint_model,
)
from textrobust.analyses.accs_sweep import (
    AccsComponents,
    AccsSettings,
    LMMode,
    PointResult,
    SweepMode,
)
from textrobust.data.examples import Example
from textrobust.errors import ConfigError

if TYPE_CHECKING:
    from rich.progress import Progress

    from textrobust.store import Run

__all__ = [
    "CONSTRAINT_MODELS",
    "AccsComponents",
    "AccsReport",
    "AccsSettings",
    "AccsTask",
    "Interpolation",
    "LMMode",
    "PointResult",
    "RobustnessCurve",
    "SimilarityMemo",
    "SweepMode",
    "accs",
    "accs_tasks",
    "bootstrap_accs",
    "build_constraint_model",
    "curve_area",
    "epsilon_grid",
    "monotone_search",
    "normalised_area",
    "parse_constraint_model",
    "report_from_run",
    "run_accs",
    "shortcut_distance",
]

FIRST = "first_order"
SECOND = "second_order"


@dataclass(frozen=True)
class AccsTask:
    """One unit of stored work: one example, one attack, one constraint model (and one
    victim for the first-order attack)."""

    kind: str
    constraint: str
    victim: str | None
    example: Example

    @property
    def item_id(self) -> str:
        if self.kind == FIRST:
            return f"{FIRST}|{self.victim}|{self.constraint}|{self.example.id}"
        return f"{SECOND}|{self.constraint}|{self.example.id}"


def accs_tasks(
    examples: Sequence[Example], victims: Sequence[str], constraints: Sequence[str]
) -> list[tuple[str, AccsTask]]:
    """Every task, example by example (so an interrupted run holds whole examples): for each
    constraint model its second-order sweep, then each victim's first-order sweep."""
    for name, values in (("victims", victims), ("constraints", constraints)):
        if not values:
            raise ConfigError(f"An ACCS analysis needs at least one entry in '{name}'.")
        if len(set(values)) != len(values):
            raise ConfigError(f"The '{name}' of an ACCS analysis must be distinct. Got {list(values)}.")
    tasks: list[tuple[str, AccsTask]] = []
    for example in examples:
        for constraint in constraints:
            tasks.append(_pair(AccsTask(SECOND, constraint, None, example)))
            for victim in victims:
                tasks.append(_pair(AccsTask(FIRST, constraint, victim, example)))
    return tasks


def _pair(task: AccsTask) -> tuple[str, AccsTask]:
    return task.item_id, task


def run_accs(
    run: Run,
    examples: Sequence[Example],
    *,
    victims: Mapping[str, Any],
    scorers: Mapping[str, Any],
    components: AccsComponents,
    progress: Progress | None = None,
    description: str = "accs",
) -> AccsReport:
    """Run (or resume) every task not yet stored in ``run`` and return the report built
    from all stored records.

    ``victims``: name -> :class:`~textrobust.victims.query.QueryLayer` (or a victim, which
    gets a layer); ``scorers``: name -> SentenceScorer (each wrapped in one
    :class:`SimilarityMemo` shared by both attacks and every threshold); ``components``:
    the shared attack parts and settings.
    """
    from textrobust.runner import run_examples
    from textrobust.victims.query import QueryLayer

    layers = {name: v if isinstance(v, QueryLayer) else QueryLayer(v) for name, v in victims.items()}
    memos = {name: s if isinstance(s, SimilarityMemo) else SimilarityMemo(s) for name, s in scorers.items()}
    tasks = accs_tasks(examples, list(layers), list(memos))

    def work(task: AccsTask) -> dict[str, Any]:
        warm = components.warm(task.example.text)
        began = time.perf_counter()
        memo = memos[task.constraint]
        if task.kind == FIRST:
            points = components.sweep_first_order(layers[task.victim], memo, task.example)  # type: ignore[index]
        else:
            points = components.sweep_second_order(memo, task.example)
        return {
            "kind": task.kind,
            "constraint": task.constraint,
            "victim": task.victim,
            "example_id": task.example.id,
            "label": task.example.label,
            "original": str(task.example.text),
            "skipped": any(p.status == "skipped" for p in points),
            "points": [asdict(p) for p in points],
            "seconds": time.perf_counter() - began,
            "warm_seconds": warm,
        }

    def queries() -> int:
        return sum(layer.queries for layer in layers.values())

    began = time.perf_counter()
    stats = run_examples(run, tasks, work, progress=progress, description=description, queries=queries)
    report = report_from_run(run, components.settings)
    caches: dict[str, Any] = {
        "similarity": {name: memo.stats() for name, memo in memos.items()},
        "victims": {name: {"queries": layer.queries, "cache_hits": layer.stats().cache_hits} for name, layer in layers.items()},
        "lm_warm_seconds": components.warm_seconds,
    }
    scorer = getattr(components.lm_constraint, "scorer", None)
    if scorer is not None and hasattr(scorer, "stats"):
        caches["lm"] = scorer.stats()
    return report.with_session(
        {
            "computed_now": stats.computed,
            "resumed": stats.done_before,
            "errors_now": stats.failed,
            "seconds_now": time.perf_counter() - began,
            "caches": caches,
        }
    )


# ---- the report -----------------------------------------------------------------------------
@dataclass(frozen=True)
class AccsReport:
    """What an ACCS run found: per victim and constraint model the curve and ACCS, the
    records behind them, timings, and the distance of the monotone shortcut."""

    settings: AccsSettings
    curves: dict[str, dict[str, RobustnessCurve]]
    records: tuple[dict[str, Any], ...]
    errors: int
    session: dict[str, Any]

    def with_session(self, session: dict[str, Any]) -> AccsReport:
        return AccsReport(self.settings, self.curves, self.records, self.errors, session)

    def table(self) -> list[dict[str, Any]]:
        """One row per (victim, constraint model): ACCS and the numbers behind it."""
        rows = []
        for victim, by_constraint in self.curves.items():
            for constraint, curve in by_constraint.items():
                first = [r for r in self.records if r["kind"] == FIRST and r["victim"] == victim
                         and r["constraint"] == constraint]
                second = [r for r in self.records if r["kind"] == SECOND and r["constraint"] == constraint]
                rows.append(
                    {
                        "victim": victim,
                        "constraint": constraint,
                        "accs": curve.accs(Interpolation.PESSIMISTIC),
                        "accs_trapezoid": curve.accs(Interpolation.TRAPEZOID),
                        "max_first_order": max(curve.first_order, default=0.0),
                        "max_second_order": max(curve.second_order, default=0.0),
                        "examples": curve.second_attacked,
                        "attacked_first_order": curve.first_attacked,
                        "first_order_seconds_per_example": _mean([r["seconds"] for r in first]),
                        "second_order_seconds_per_example": _mean([r["seconds"] for r in second]),
                    }
                )
        return rows

    def summary(self) -> dict[str, Any]:
        """A JSON-ready summary (curves, ACCS table, shortcut distance, timings)."""
        warm = {r["example_id"]: r["warm_seconds"] for r in self.records if r.get("warm_seconds")}
        return {
            "settings": self.settings.to_dict(),
            "table": self.table(),
            "curves": {v: {c: curve.to_dict() for c, curve in cs.items()} for v, cs in self.curves.items()},
            "shortcut": shortcut_distance(self) if self.settings.sweep is SweepMode.EXACT else None,
            "bootstrap": bootstrap_accs(self),
            "lm_warm_seconds_per_example": _mean(list(warm.values())) if warm else 0.0,
            "records": len(self.records),
            "errors": self.errors,
            **self.session,
        }


def _mean(values: Sequence[float]) -> float:
    return float(np.mean(values)) if len(values) else float("nan")


def _success_rows(records: Sequence[dict[str, Any]]) -> dict[str, list[bool]]:
    return {r["example_id"]: [bool(p["success"]) for p in r["points"]] for r in records}


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


def report_from_run(run: Run, settings: AccsSettings) -> AccsReport:
    """Curves and ACCS from every record stored in ``run`` (error records are counted, not
    used; a curve uses the examples that have both its first- and second-order records)."""
    records = []
    errors = 0
    for row in run.results():
        if "kind" in row.payload:
            records.append(row.payload)
        else:
            errors += 1
    epsilons = settings.epsilons
    for record in records:
        if len(record["points"]) != len(epsilons):
            raise ConfigError(
                f"Record '{record['example_id']}' has {len(record['points'])} thresholds; the settings have "
                f"{len(epsilons)}. Resume with the same thresholds."
            )
    second = {c: _success_rows([r for r in records if r["kind"] == SECOND and r["constraint"] == c])
              for c in dict.fromkeys(r["constraint"] for r in records)}
    curves: dict[str, dict[str, RobustnessCurve]] = {}
    for record in records:
        if record["kind"] != FIRST:
            continue
        victim, constraint = record["victim"], record["constraint"]
        curves.setdefault(victim, {}).setdefault(constraint, None)  # type: ignore[arg-type]
    for victim, by_constraint in curves.items():
        for constraint in list(by_constraint):
            chosen = [r for r in records if r["kind"] == FIRST and r["victim"] == victim and r["constraint"] == constraint]
            skipped = {r["example_id"] for r in chosen if r["skipped"]}
            by_constraint[constraint] = _curve(epsilons, _success_rows(chosen), skipped, second.get(constraint, {}))
    return AccsReport(settings, curves, tuple(records), errors, {})


# ---- uncertainty ----------------------------------------------------------------------------------
def bootstrap_accs(report: AccsReport, *, samples: int = 1000, seed: int = 0, level: float = 0.95) -> dict[str, Any]:
    """Percentile bootstrap intervals of ACCS (pessimistic), resampling examples.

    Each resample draws the examples with replacement once and recomputes every curve from
    the same draw (first-order rates over the drawn examples the victim got right,
    second-order rates over all drawn examples), so the differences between constraint
    models for one victim are paired. With few second-order successes (a handful per
    hundred sentences) the intervals are wide; read a table of ACCS with them.
    Resamples where a curve is undefined (no first-order success drawn) are left out of it.
    """
    if samples < 1 or not 0 < level < 1:
        raise ConfigError(f"bootstrap_accs needs samples >= 1 and 0 < level < 1. Got {samples} and {level}.")
    records = report.records
    second_rows = {c: _success_rows([r for r in records if r["kind"] == SECOND and r["constraint"] == c])
                   for c in dict.fromkeys(r["constraint"] for r in records)}
    curves = [(v, c) for v, cs in report.curves.items() for c in cs]
    if not curves:
        return {"samples": samples, "level": level, "per_curve": [], "differences": []}
    ids = sorted(set.intersection(*[set(second_rows.get(c, {})) for _, c in curves]))
    data = {}
    for victim, constraint in curves:
        chosen = [r for r in records if r["kind"] == FIRST and r["victim"] == victim and r["constraint"] == constraint]
        first = {r["example_id"]: ([bool(p["success"]) for p in r["points"]], bool(r["skipped"])) for r in chosen}
        keep = [i for i in ids if i in first]
        f = np.array([first[i][0] for i in keep], dtype=float).reshape(len(keep), -1)
        attacked = np.array([not first[i][1] for i in keep], dtype=float)
        s2 = np.array([second_rows[constraint][i] for i in keep], dtype=float).reshape(len(keep), -1)
        where = np.array([ids.index(i) for i in keep], dtype=np.int64)
        data[(victim, constraint)] = (f, attacked, s2, where)
    rng = np.random.default_rng(seed)
    n = len(ids)
    values: dict[tuple[str, str], list[float]] = {key: [] for key in data}
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

    def interval(xs: Sequence[float]) -> list[float]:
        arr = np.asarray([x for x in xs if not math.isnan(x)], dtype=float)
        return [float(np.percentile(arr, low)), float(np.percentile(arr, high))] if len(arr) else [float("nan")] * 2

    out: dict[str, Any] = {"samples": samples, "level": level, "examples": n, "per_curve": [], "differences": []}
    for (victim, constraint), xs in values.items():
        out["per_curve"].append({"victim": victim, "constraint": constraint, "interval": interval(xs)})
    for victim, cs in report.curves.items():
        names = list(cs)
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                diff = np.subtract(values[(victim, a)], values[(victim, b)])
                out["differences"].append({"victim": victim, "minus": [a, b], "interval": interval(list(diff)),
                                           "share_positive": float(np.mean(diff[~np.isnan(diff)] > 0))
                                           if np.any(~np.isnan(diff)) else float("nan")})
    return out


# ---- the monotone shortcut, measured on an exact sweep -----------------------------------------
def _shortcut_row(points: Sequence[dict[str, Any]]) -> tuple[list[bool], list[int]]:
    successes = [bool(p["success"]) for p in points]
    k, visited = monotone_search(len(successes), lambda i: successes[i])
    return [i < k for i in range(len(successes))], list(visited)


def shortcut_distance(report: AccsReport) -> dict[str, Any]:
    """How far the monotone shortcut's curves would be from the exact ones, from an exact
    sweep's records (every search is deterministic, so the shortcut would have run exactly
    the thresholds :func:`monotone_search` visits, with the results recorded there).

    Per (victim, constraint): ACCS exact and shortcut, the largest gap between the rates at
    one threshold, the share of (example, threshold) cells the shortcut gets wrong, the
    share of threshold runs it needs and the attack seconds those runs took in the sweep.
    """
    epsilons = report.settings.epsilons
    out: dict[str, Any] = {"per_curve": [], "non_monotone_examples": {}}
    records = report.records
    run_share: dict[str, list[float]] = {FIRST: [], SECOND: []}
    seconds = {FIRST: [0.0, 0.0], SECOND: [0.0, 0.0]}  # [shortcut, exact]
    wrong = {FIRST: [0, 0], SECOND: [0, 0]}
    inferred_rows: dict[str, dict[str, list[bool]]] = {}
    for record in records:
        row, visited = _shortcut_row(record["points"])
        kind = record["kind"]
        key = f"{kind}|{record['victim']}|{record['constraint']}"
        inferred_rows.setdefault(key, {})[record["example_id"]] = row
        run_share[kind].append(len(visited) / len(epsilons))
        seconds[kind][0] += sum(record["points"][i]["seconds"] for i in visited)
        seconds[kind][1] += sum(p["seconds"] for p in record["points"])
        exact = [bool(p["success"]) for p in record["points"]]
        bad = sum(a != b for a, b in zip(row, exact))
        wrong[kind][0] += bad
        wrong[kind][1] += len(exact)
        if bad:
            out["non_monotone_examples"].setdefault(key, []).append(record["example_id"])
    for victim, by_constraint in report.curves.items():
        for constraint, curve in by_constraint.items():
            first = inferred_rows.get(f"{FIRST}|{victim}|{constraint}", {})
            second = inferred_rows.get(f"{SECOND}|None|{constraint}", {})
            skipped = {r["example_id"] for r in records if r["kind"] == FIRST and r["victim"] == victim
                       and r["constraint"] == constraint and r["skipped"]}
            short = _curve(epsilons, first, skipped, second)
            out["per_curve"].append(
                {
                    "victim": victim,
                    "constraint": constraint,
                    "accs_exact": curve.accs(),
                    "accs_shortcut": short.accs(),
                    "accs_trapezoid_exact": curve.accs(Interpolation.TRAPEZOID),
                    "accs_trapezoid_shortcut": short.accs(Interpolation.TRAPEZOID),
                    "max_gap_first_order": float(np.max(np.abs(np.subtract(curve.first_order, short.first_order)))),
                    "max_gap_second_order": float(np.max(np.abs(np.subtract(curve.second_order, short.second_order)))),
                }
            )
    for kind in (FIRST, SECOND):
        out[kind] = {
            "wrong_cells": wrong[kind][0],
            "cells": wrong[kind][1],
            "runs_share": _mean(run_share[kind]),
            "attack_seconds_shortcut": seconds[kind][0],
            "attack_seconds_exact": seconds[kind][1],
        }
    return out
