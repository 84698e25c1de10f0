"""The robustness-radius analysis over a data set: bounds per example, Tables 2 and 3,
Figure 4's curves, and the PR metric (Figure 5), resumable through the run store.

Yang, Huang, Ma, Cao, Zhang, Zhang and Li, "Quantifying Robustness to Adversarial Word
Substitutions" (../shared/papers/robustness-radius-pdp-prover-pr.txt), Experiments.

Per example (:class:`RadiusAnalysis`):

1. ``S(X, p)`` from :class:`~textrobust.radius.synonyms.CleanedSynonyms` (or any source)
   gives the space ``Omega(X)`` (:func:`~textrobust.radius.space.build_space`).
2. Every attack method runs on the *same* Problem: the candidates of the space
   (:class:`~textrobust.radius.space.SpaceSource`), the untargeted goal and the same
   modification cap ``floor(tau n)`` (:class:`~textrobust.radius.cap.ModificationCap`),
   each with a fresh query layer (no method profits from another's cache). PDP is
   :class:`~textrobust.radius.pdp.PseudoDynamicProgramming`; the baselines are the
   engine's ``greedy`` search with deletion word importance (TextFooler's search) and
   ``pso`` (Zang et al. 2020's search; "SemPSO" in the paper). Table 2: #Succ, #Win, %S.
3. The prover (:class:`~textrobust.radius.prover.ExhaustiveProver`) certifies
   ``r = 1, 2, ...`` up to ``min(max_radius, u - 1)`` where ``u`` is the number of words
   PDP's adversarial example changes (``Omega_u`` is known to hold one), with a time limit
   per example; a radius the limit cuts off is "unknown", never certified. The query
   layer of the prover has no cache (every text of ``Omega_r`` is distinct).
4. Bounds on the maximum robustness radius ``R``: ``lower`` = the largest certified
   ``r``; ``upper`` = (fewest substitutions of any adversarial example found) - 1. When
   they meet, ``R`` is exact.

Table 3 here reports, for each ``r``, the share of examples with an adversarial example
in ``Omega_r`` (%F), certified (%C) and unknown (%U, the time limit), with the mean time
to the verdict of the combined procedure (PDP first, then the prover); the paper ran the
prover alone for each ``r``, so our "found" times include PDP's, and radii PDP already
settles cost no prover time.

Departures from the paper's setup: WordNet synonyms replace HowNet (see
:mod:`~textrobust.radius.synonyms`); the victims are the project's own small models
trained on the bundled Rotten Tomatoes snippets; examples the victim gets wrong are
skipped (as the paper attacks only correctly classified texts).
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import Field, field_validator, model_validator

from textrobust.attack.goals import UntargetedClassification
from textrobust.attack.problem import CandidateSource, Problem, Search
from textrobust.config import Config
from textrobust.data.examples import Dataset, Example
from textrobust.errors import ConfigError
from textrobust.radius.cap import ModificationCap, modification_cap
from textrobust.radius.pdp import PseudoDynamicProgramming
from textrobust.radius.pr import PRConfig, estimate_pr
from textrobust.radius.prover import ExhaustiveProver, Sensitivity, Verdict, sensitivity_order
from textrobust.radius.space import PerturbationSpace, SpaceSource, build_space, space_rng
from textrobust.radius.synonyms import CleanedSynonyms
from textrobust.text import Text
from textrobust.victims.query import QueryLayer

if TYPE_CHECKING:
    from rich.progress import Progress

    from textrobust.store import Run

__all__ = [
    "METHODS",
    "PRAnalysis",
    "PRSettings",
    "RadiusAnalysis",
    "RadiusSettings",
    "attack_table",
    "bounds_summary",
    "certified_table",
    "optimality_table",
    "pr_summary",
    "probe_texts",
    "raw_forward_speed",
    "run_pr",
    "run_radius",
    "space_of",
    "throughput_summary",
    "yield_curves",
]

#: The attack methods of Table 2, by name.
METHODS: tuple[str, ...] = ("pdp", "greedy", "pso")


class SpaceSettings(Config):
    """How ``S(X, p)`` is built (see :class:`~textrobust.radius.synonyms.CleanedSynonyms`)."""

    eta: int = Field(default=5, ge=1)
    min_cos: float | None = Field(default=0.5, ge=-1.0, le=1.0)
    skip_stop_words: bool = True


class RadiusSettings(SpaceSettings):
    """Settings of :class:`RadiusAnalysis`.

    ``tau``: the modification cap of every attack; ``top_k``/``lookahead_samples``: PDP;
    ``methods``: attack methods (``pdp``, ``greedy``, ``pso``); ``pso_pop_size``/
    ``pso_max_iters``: PSO; ``prover``: run the prover; ``max_radius``: the largest ``r``
    of Table 3; ``time_limit``: prover seconds per example (None: none); ``order``: how
    the prover sorts positions; ``prover_batch``: texts per prover query-layer call;
    ``seed``: stochastic searches.
    """

    tau: float = Field(default=0.25, gt=0.0, le=1.0)
    top_k: int = Field(default=10, ge=1)
    lookahead_samples: int = Field(default=4, ge=1)
    methods: tuple[str, ...] = METHODS
    pso_pop_size: int = Field(default=60, ge=1)
    pso_max_iters: int = Field(default=20, ge=1)
    prover: bool = True
    max_radius: int = Field(default=4, ge=1)
    time_limit: float | None = Field(default=30.0, gt=0.0)
    order: Sensitivity = Sensitivity.AUTO
    prover_batch: int = Field(default=512, ge=1)
    seed: int = 0

    @field_validator("methods")
    @classmethod
    def _known_methods(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [m for m in value if m not in METHODS]
        if unknown or not value or len(set(value)) != len(value):
            raise ValueError(f"must name distinct methods among {list(METHODS)}")
        return value

    @model_validator(mode="after")
    def _prover_needs_pdp(self) -> RadiusSettings:
        if self.prover and "pdp" not in self.methods:
            raise ValueError("the prover starts from PDP's bound: keep 'pdp' in 'methods' or set prover=False")
        return self


class PRSettings(SpaceSettings):
    """Settings of :class:`PRAnalysis`: the space, and the PR metric (:class:`PRConfig`)."""

    epsilon: float = Field(default=0.025, gt=0.0, lt=1.0)
    delta: float = Field(default=0.005, gt=0.0, lt=1.0)
    samples: int | None = Field(default=None, ge=1)
    fraction: float = Field(default=0.25, gt=0.0, le=1.0)
    exact_limit: int | None = Field(default=None, ge=0)
    batch_size: int = Field(default=1024, ge=1)
    seed: int = 0

    def pr_config(self) -> PRConfig:
        return PRConfig(
            epsilon=self.epsilon,
            delta=self.delta,
            samples=self.samples,
            fraction=self.fraction,
            exact_limit=self.exact_limit,
            batch_size=self.batch_size,
        )


def _source(settings: SpaceSettings, source: CandidateSource | None) -> CandidateSource:
    if source is not None:
        return source
    return CleanedSynonyms(eta=settings.eta, min_cos=settings.min_cos, skip_stop_words=settings.skip_stop_words)


def _space_payload(space: PerturbationSpace, radii: Sequence[int]) -> dict[str, Any]:
    return {
        "positions": list(space.positions),
        "candidates": {str(p): list(s) for p, s in space.candidate_sets().items()},
        "size": str(space.size()),
        "log10_size": space.log10_size(),
        "size_by_radius": {str(r): str(space.size(r)) for r in radii},
    }


class RadiusAnalysis:
    """Upper bounds (PDP and baselines), certified radii (prover) and bounds on ``R`` for
    one example at a time, against ``victim``.

    ``source`` replaces the cleaned WordNet synonyms (any CandidateSource);
    ``batch_size`` is the query-layer batch of the attacks.
    """

    def __init__(
        self,
        victim: Any,
        settings: RadiusSettings | None = None,
        *,
        source: CandidateSource | None = None,
        batch_size: int = 256,
    ) -> None:
        self.victim = victim
        self.settings = settings or RadiusSettings()
        self.source = _source(self.settings, source)
        self.batch_size = batch_size
        s = self.settings
        self.prover = ExhaustiveProver(batch_size=s.prover_batch)
        self.queries = 0  # queries sent by every layer of this analysis (for progress bars)

    def describe(self) -> dict[str, Any]:
        return {
            "settings": self.settings.to_dict(),
            "source": repr(self.source),
            "searches": {m: repr(self.search(m)) for m in self.settings.methods},
            "prover": repr(self.prover),
            "cap": f"ModificationCap(tau={self.settings.tau})",
        }

    def search(self, method: str) -> Search:
        """The search of ``method`` with this analysis' settings."""
        s = self.settings
        if method == "pdp":
            return PseudoDynamicProgramming(
                top_k=s.top_k, lookahead_samples=s.lookahead_samples, tau=s.tau, seed=s.seed
            )
        from textrobust.attack.searches import SEARCHES

        if method == "greedy":
            return SEARCHES.get("greedy")(ranking="delete")
        if method == "pso":
            return SEARCHES.get("pso")(pop_size=s.pso_pop_size, max_iters=s.pso_max_iters, seed=s.seed)
        raise ConfigError(f"Unknown method {method!r}. Known: {list(METHODS)}.")

    def space(self, text: Text) -> PerturbationSpace:
        return build_space(text, self.source)

    def _gradients(self, label: int) -> Any:
        victim = self.victim
        if not (getattr(victim, "capabilities", None) and victim.capabilities.gradients):
            return None
        return lambda text: np.asarray(victim.word_gradients([text], [label])[0])

    def analyse(self, example: Example) -> dict[str, Any]:
        """The JSON-ready record of one example (see the module docstring)."""
        s = self.settings
        x, label = example.text, example.label
        probe = QueryLayer(self.victim, batch_size=self.batch_size)
        probs = probe.probabilities([x])[0]
        self.queries += probe.queries
        record: dict[str, Any] = {
            "example_id": example.id,
            "label": label,
            "words": len(x.modifiable),
            "predicted": int(probs.argmax()),
            "correct": bool(int(probs.argmax()) == label),
        }
        if not record["correct"]:
            record["skipped"] = True
            return record
        started = time.perf_counter()
        space = self.space(x)
        radii = list(range(1, s.max_radius + 1))
        record.update(
            {
                "skipped": False,
                "cap": modification_cap(x, s.tau),
                "m": space.m,
                "space": _space_payload(space, radii),
                "space_seconds": time.perf_counter() - started,
            }
        )
        methods: dict[str, Any] = {}
        for method in s.methods:
            methods[method] = self._attack(method, x, label, space)
        record["methods"] = methods
        if s.prover:
            record.update(self._prove(x, label, space, methods["pdp"]))
        return record

    def _problem(self, layer: QueryLayer, x: Text, label: int, space: PerturbationSpace) -> Problem:
        return Problem(
            original=x,
            goal=UntargetedClassification(layer, label),
            source=SpaceSource(space),
            position_constraints=(ModificationCap(self.settings.tau),),
            gradients=self._gradients(label),
        )

    def _attack(self, method: str, x: Text, label: int, space: PerturbationSpace) -> dict[str, Any]:
        layer = QueryLayer(self.victim, batch_size=self.batch_size)
        started = time.perf_counter()
        outcome = self.search(method).search(x, self._problem(layer, x, label, space))
        seconds = time.perf_counter() - started
        self.queries += layer.queries
        l0 = x.l0(outcome.best)
        words = len(x.modifiable)
        return {
            "success": bool(outcome.success),
            "l0": l0 if outcome.success else None,
            "fraction": (l0 / words if words else 0.0) if outcome.success else None,
            "seconds": seconds,
            "queries": layer.queries,
            "perturbed": list(outcome.best.columns) if outcome.success else None,
        }

    def _prove(self, x: Text, label: int, space: PerturbationSpace, pdp: Mapping[str, Any]) -> dict[str, Any]:
        s = self.settings
        layer = QueryLayer(self.victim, batch_size=s.prover_batch, cache_size=0)
        goal = UntargetedClassification(layer, label)
        started = time.perf_counter()
        gradients = self._gradients(label)
        order_method = s.order
        if order_method is Sensitivity.AUTO:
            order_method = Sensitivity.GRADIENT if gradients is not None else Sensitivity.DELETE
        order = sensitivity_order(space, order_method, evaluate=goal.evaluate, gradients=gradients)
        upper_pdp = pdp["l0"] if pdp["success"] else None
        top = s.max_radius if upper_pdp is None else min(s.max_radius, upper_pdp - 1)
        ordering = time.perf_counter() - started
        limit = None if s.time_limit is None else max(s.time_limit - ordering, 1e-3)
        stats_before = layer.stats()
        proofs = self.prover.prove_radii(space, goal.evaluate, top, order=order, time_limit=limit) if top >= 1 else []
        prover_seconds = time.perf_counter() - started
        stats = layer.stats().minus(stats_before)
        self.queries += layer.queries
        by_radius = {p.radius: p for p in proofs}
        verdicts = []
        for r in range(1, s.max_radius + 1):
            if upper_pdp is not None and r >= upper_pdp:
                verdicts.append({"r": r, "verdict": Verdict.FOUND.value, "by": "pdp", "seconds": pdp["seconds"]})
                continue
            proof = by_radius[r]
            verdicts.append(
                {
                    "r": r,
                    "verdict": proof.verdict.value,
                    "by": "prover",
                    "seconds": pdp["seconds"] + ordering + proof.seconds,
                    "checked": proof.checked,
                    "reason": proof.reason,
                }
            )
        found_l0 = [p.adversarial_l0 for p in proofs if p.verdict is Verdict.FOUND and p.adversarial_l0 is not None]
        if upper_pdp is not None:
            found_l0.append(upper_pdp)
        certified = [p.radius for p in proofs if p.verdict is Verdict.CERTIFIED]
        lower = max(certified, default=0)
        upper = min(found_l0) - 1 if found_l0 else None
        checked = max((p.checked for p in proofs), default=0)
        everywhere = any(p.verdict is Verdict.CERTIFIED and p.size == space.size() for p in proofs)
        return {
            "order": order_method.value,
            "order_positions": list(order),
            "prover": [p.to_dict() for p in proofs if p.radius >= 1],
            "verdicts": verdicts,
            # robust_everywhere: the prover checked all of Omega(X) (m <= max_radius): R is unbounded
            "bounds": {"lower": lower, "upper": upper, "exact": upper is not None and lower == upper,
                       "robust_everywhere": everywhere},
            "prover_checked": checked,
            "prover_seconds": prover_seconds,
            "prover_forward_seconds": stats.forward_seconds,
        }


class PRAnalysis:
    """PR_hat (with its Hoeffding interval) of one example at a time, against ``victim``."""

    def __init__(
        self,
        victim: Any,
        settings: PRSettings | None = None,
        *,
        source: CandidateSource | None = None,
        cache_size: int = 0,
    ) -> None:
        self.victim = victim
        self.settings = settings or PRSettings()
        self.source = _source(self.settings, source)
        self.cache_size = cache_size
        self.queries = 0

    def describe(self) -> dict[str, Any]:
        return {"settings": self.settings.to_dict(), "source": repr(self.source),
                "samples": self.settings.pr_config().sample_size(),
                "guaranteed": self.settings.pr_config().guaranteed()}

    def analyse(self, example: Example) -> dict[str, Any]:
        s = self.settings
        x, label = example.text, example.label
        layer = QueryLayer(self.victim, batch_size=s.batch_size, cache_size=self.cache_size)
        probs = layer.probabilities([x])[0]
        record: dict[str, Any] = {
            "example_id": example.id,
            "label": label,
            "words": len(x.modifiable),
            "predicted": int(probs.argmax()),
            "correct": bool(int(probs.argmax()) == label),
        }
        if not record["correct"]:
            self.queries += layer.queries
            record["skipped"] = True
            return record
        space = build_space(x, self.source)
        goal = UntargetedClassification(layer, label)
        estimate = estimate_pr(space, goal.evaluate, space_rng(s.seed, x), s.pr_config())
        self.queries += layer.queries
        record.update({"skipped": False, "m": space.m, "pr": estimate.to_dict()})
        return record


# ---- runs through the store ---------------------------------------------------------------
def _run(analysis: RadiusAnalysis | PRAnalysis, dataset: Dataset | Sequence[Example], run: Run,
         progress: Progress | None, description: str) -> list[dict[str, Any]]:
    from textrobust.runner import run_examples

    examples = list(dataset)
    run_examples(run, [(e.id, e) for e in examples], analysis.analyse, progress=progress,
                 description=description, queries=lambda: analysis.queries)
    return [r.payload for r in run.results() if "example_id" in r.payload]


def run_radius(
    analysis: RadiusAnalysis,
    dataset: Dataset | Sequence[Example],
    run: Run,
    *,
    progress: Progress | None = None,
    description: str = "radius",
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Analyse every example not yet in ``run``; return every stored record and the
    summary (Table 2, Table 3, bounds, Figure 4's curves, prover throughput)."""
    records = _run(analysis, dataset, run, progress, description)
    s = analysis.settings
    summary: dict[str, Any] = {
        "examples": len(records),
        "errors": len(run.failed_ids()),
        "attacked": sum(1 for r in records if not r.get("skipped")),
        "table2": attack_table(records, s.methods),
        "curves": yield_curves(records, s.methods, s.max_radius),
    }
    if s.prover:
        summary["table3"] = certified_table(records, s.max_radius)
        summary["bounds"] = bounds_summary(records)
        summary["optimality"] = optimality_table(records, s.methods)
        summary["throughput"] = throughput_summary(records)
    return records, summary


def run_pr(
    analysis: PRAnalysis,
    dataset: Dataset | Sequence[Example],
    run: Run,
    *,
    progress: Progress | None = None,
    description: str = "pr",
    threshold: float = 0.9,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """PR for every example not yet in ``run``; every stored record and the summary."""
    records = _run(analysis, dataset, run, progress, description)
    summary = {"examples": len(records), "errors": len(run.failed_ids()), **pr_summary(records, threshold)}
    return records, summary


# ---- pure summaries -------------------------------------------------------------------------
def _attacked(records: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [r for r in records if not r.get("skipped") and "methods" in r]


def _mean(values: Sequence[float]) -> float:
    return float(statistics.fmean(values)) if values else math.nan


def attack_table(records: Sequence[Mapping[str, Any]], methods: Sequence[str] = METHODS) -> dict[str, Any]:
    """Table 2: for each method, #Succ (and its rate), #Win and %S over the attacked
    examples. A *win* is a success with strictly fewer substitutions than every other
    method (a failure counts as infinitely many), so a method alone in succeeding wins;
    %S is the mean share of substituted words over the method's successes, in percent."""
    rows = _attacked(records)
    out: dict[str, Any] = {"attacks": len(rows), "methods": {}}
    for method in methods:
        succ = [r for r in rows if r["methods"].get(method, {}).get("success")]
        wins = 0
        for r in succ:
            mine = r["methods"][method]["l0"]
            others = [
                o["l0"] if o.get("success") else math.inf
                for name, o in r["methods"].items()
                if name != method and name in methods
            ]
            wins += all(mine < other for other in others)
        out["methods"][method] = {
            "succ": len(succ),
            "succ_rate": len(succ) / len(rows) if rows else math.nan,
            "wins": wins,
            "percent_substituted": 100.0 * _mean([r["methods"][method]["fraction"] for r in succ]),
            "mean_l0": _mean([r["methods"][method]["l0"] for r in succ]),
            "mean_seconds": _mean([r["methods"][method]["seconds"] for r in rows if method in r["methods"]]),
            "mean_queries": _mean([r["methods"][method]["queries"] for r in rows if method in r["methods"]]),
        }
    return out


def optimality_table(records: Sequence[Mapping[str, Any]], methods: Sequence[str] = METHODS) -> dict[str, Any]:
    """How each attack method compares with the prover, per method:

    - ``optimal``: successes whose count equals the true minimum, among ``exact`` (the
      successes on examples where the bounds meet, so the minimum ``R + 1`` is known);
    - ``missed``: failures on examples where some adversarial example within the cap is
      known (from another method or the prover);
    - ``violations``: successes with no more words than a certified radius, which a
      sound prover makes impossible (must be 0).
    """
    rows = [r for r in _attacked(records) if "bounds" in r]
    out: dict[str, Any] = {"examples": len(rows)}
    for method in methods:
        exact = optimal = missed = violations = 0
        for r in rows:
            result = r["methods"].get(method)
            if result is None:
                continue
            bounds = r["bounds"]
            if result["success"]:
                violations += result["l0"] <= bounds["lower"]
                if bounds["exact"]:
                    exact += 1
                    optimal += result["l0"] == bounds["upper"] + 1
            else:
                known = [o["l0"] for o in r["methods"].values() if o.get("success")]
                known += [p["adversarial_l0"] for p in r.get("prover", ()) if p["verdict"] == Verdict.FOUND.value]
                missed += any(k is not None and k <= r["cap"] for k in known)
        out[method] = {"exact": exact, "optimal": optimal, "missed": missed, "violations": violations}
    return out


def certified_table(records: Sequence[Mapping[str, Any]], max_radius: int = 4) -> list[dict[str, Any]]:
    """Table 3: for each ``r``, the share of examples found (%F), certified (%C) and
    unknown (%U), with the mean seconds to each verdict."""
    rows = [r for r in _attacked(records) if "verdicts" in r]
    table = []
    for radius in range(1, max_radius + 1):
        cells: dict[str, list[float]] = {v.value: [] for v in Verdict}
        for r in rows:
            for v in r["verdicts"]:
                if v["r"] == radius:
                    cells[v["verdict"]].append(v["seconds"])
        n = len(rows)
        entry: dict[str, Any] = {"r": radius, "examples": n}
        for verdict, times in cells.items():
            entry[verdict] = len(times)
            entry[f"{verdict}_pct"] = 100.0 * len(times) / n if n else math.nan
            entry[f"{verdict}_seconds"] = _mean(times)
        table.append(entry)
    return table


def bounds_summary(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Bounds on ``R`` over the examples: mean lower bound, mean upper bound (where an
    adversarial example is known), the share where ``R`` is exact, the distribution of
    exact radii, and how many were proven robust on all of ``Omega(X)``."""
    rows = [r for r in _attacked(records) if "bounds" in r]
    lower = [r["bounds"]["lower"] for r in rows]
    upper = [r["bounds"]["upper"] for r in rows if r["bounds"]["upper"] is not None]
    exact = [r["bounds"]["lower"] for r in rows if r["bounds"]["exact"]]
    histogram: dict[str, int] = {}
    for value in exact:
        histogram[str(value)] = histogram.get(str(value), 0) + 1
    everywhere = sum(1 for r in rows if r["bounds"].get("robust_everywhere"))
    return {
        "examples": len(rows),
        "robust_everywhere": everywhere,
        "robust_everywhere_share": everywhere / len(rows) if rows else math.nan,
        "mean_lower": _mean(lower),
        "mean_upper": _mean(upper),
        "with_upper": len(upper),
        "exact": len(exact),
        "exact_share": len(exact) / len(rows) if rows else math.nan,
        "exact_radius_counts": dict(sorted(histogram.items(), key=lambda kv: int(kv[0]))),
    }


def yield_curves(
    records: Sequence[Mapping[str, Any]], methods: Sequence[str] = METHODS, max_radius: int = 4
) -> dict[str, list[float]]:
    """Figure 4: for ``r = 0 .. R`` (R = the largest substitution count any method used,
    at least ``max_radius``), the percentage of examples whose ``Omega_r`` did not yield
    to each method (no adversarial example with at most ``r`` words). These are upper
    bounds on the truly robust share; ``"certified"`` (when the prover ran) is the share
    proven robust at ``r``, a lower bound (beyond ``max_radius``: the examples proven
    robust on the whole space)."""
    rows = _attacked(records)
    top = max([max_radius] + [o["l0"] for r in rows for o in r["methods"].values() if o.get("success")])
    curves: dict[str, list[float]] = {"r": list(range(top + 1))}
    n = len(rows)
    for method in methods:
        curve = []
        for radius in range(top + 1):
            held = sum(1 for r in rows if not (r["methods"].get(method, {}).get("success")
                                               and r["methods"][method]["l0"] <= radius))
            curve.append(100.0 * held / n if n else math.nan)
        curves[method] = curve
    if any("bounds" in r for r in rows):
        # beyond the prover's largest radius only the examples certified on all of Omega count
        def certified(r: Mapping[str, Any], radius: int) -> bool:
            b = r.get("bounds")
            return b is not None and (b.get("robust_everywhere") or (radius <= max_radius and b["lower"] >= radius))

        curves["certified"] = [
            100.0 * sum(1 for r in rows if certified(r, radius)) / n if n else math.nan for radius in range(top + 1)
        ]
    return curves


def throughput_summary(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The prover's speed: texts checked per second of prover time, and the share of that
    time spent inside the victim's forward passes."""
    rows = [r for r in _attacked(records) if "prover_seconds" in r]
    checked = sum(r["prover_checked"] for r in rows)
    seconds = sum(r["prover_seconds"] for r in rows)
    forward = sum(r["prover_forward_seconds"] for r in rows)
    return {
        "texts": checked,
        "seconds": seconds,
        "texts_per_second": checked / seconds if seconds > 0 else math.nan,
        "forward_seconds": forward,
        "forward_share": forward / seconds if seconds > 0 else math.nan,
        "texts_per_forward_second": checked / forward if forward > 0 else math.nan,
    }


def pr_summary(records: Sequence[Mapping[str, Any]], threshold: float = 0.9) -> dict[str, Any]:
    """PR over the examples: how many, the share with ``PR_hat > threshold``, mean,
    quartiles, the share computed exactly."""
    rows = [r for r in records if not r.get("skipped") and "pr" in r]
    values = sorted(r["pr"]["pr"] for r in rows)
    n = len(values)
    quart = np.quantile(values, [0.0, 0.25, 0.5, 0.75, 1.0]).tolist() if n else [math.nan] * 5
    return {
        "scored": n,
        "skipped": sum(1 for r in records if r.get("skipped")),
        "threshold": threshold,
        "above_threshold": sum(1 for v in values if v > threshold),
        "share_above_threshold": sum(1 for v in values if v > threshold) / n if n else math.nan,
        "mean_pr": _mean(values),
        "quantiles": dict(zip(("min", "q25", "median", "q75", "max"), quart)),
        "exact": sum(1 for r in rows if r["pr"]["exact"]),
        "mean_radius": _mean([r["pr"]["radius"] for r in rows]),
        "mean_seconds": _mean([r["pr"]["seconds"] for r in rows]),
    }


def raw_forward_speed(victim: Any, texts: Sequence[Text], *, repeats: int = 3) -> dict[str, float]:
    """The victim's raw batched forward speed on ``texts`` (its own ``probabilities``,
    no query layer, no text building): the physical limit of any enumeration. The best
    of ``repeats`` timed passes, after one warm-up batch."""
    texts = list(texts)
    if not texts:
        raise ConfigError("raw_forward_speed needs at least one text.")
    victim.probabilities(texts[: min(len(texts), 64)])
    best = math.inf
    for _ in range(repeats):
        started = time.perf_counter()
        victim.probabilities(texts)
        best = min(best, time.perf_counter() - started)
    return {"texts": len(texts), "seconds": best, "texts_per_second": len(texts) / best}


def space_of(record: Mapping[str, Any], original: Text) -> PerturbationSpace:
    """The space stored in a radius record (its ``space.candidates``), around ``original``."""
    candidates = record["space"]["candidates"]
    positions = sorted(int(p) for p in candidates)
    return PerturbationSpace(original, tuple(positions), tuple(tuple(candidates[str(p)][1:]) for p in positions))


def probe_texts(
    records: Sequence[Mapping[str, Any]], examples: Sequence[Example], n: int, *, radius: int = 2, seed: int = 0
) -> list[Text]:
    """``n`` texts like the prover's: drawn uniformly from ``Omega_radius`` of the stored
    spaces, cycling over the examples (for :func:`raw_forward_speed`)."""
    import random

    by_id = {e.id: e.text for e in examples}
    spaces = [space_of(r, by_id[r["example_id"]]) for r in _attacked(records)
              if r["example_id"] in by_id and "space" in r]
    spaces = [s for s in spaces if s.m > 0]
    if not spaces:
        return []
    rng = random.Random(seed)
    return [spaces[i % len(spaces)].sample(radius, 1, rng)[0] for i in range(n)]
