"""The robustness-radius analysis of one example at a time, its typed results, and the
pure tables over them: Tables 2 and 3, Figure 4's curves, and the PR metric (Figure 5).

Yang, Huang, Ma, Cao, Zhang, Zhang and Li, "Quantifying Robustness to Adversarial Word
Substitutions" (../shared/papers/robustness-radius-pdp-prover-pr.txt), Experiments.

Per example (:class:`RadiusAnalysis`):

1. ``S(X, p)`` from :class:`~textrobust.attack.candidates.wordnet_cosine.CleanedSynonyms` (or any source)
   gives the space ``Omega(X)`` (:func:`~textrobust.attack.space.build_space`).
2. Every attack method runs on the *same* Problem: the candidates of the space
   (:class:`~textrobust.attack.space.SpaceSource`), the untargeted goal and the same
   modification cap ``floor(tau n)`` (:class:`~textrobust.attack.cap.ModificationCap`),
   each with a fresh query layer (no method profits from another's cache). PDP is
   :class:`~textrobust.attack.searches.pdp.PseudoDynamicProgramming`; the baselines are the
   engine's ``greedy`` search with deletion word importance (TextFooler's search) and
   ``pso`` (Zang et al. 2020's search; "SemPSO" in the paper). Table 2: #Succ, #Win, %S.
3. The prover (:class:`~textrobust.attack.searches.exhaustive.ExhaustiveProver`) certifies
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
:mod:`~textrobust.attack.candidates.wordnet_cosine`); the victims are the project's own small models
trained on the bundled Rotten Tomatoes snippets; examples the victim gets wrong are
skipped (as the paper attacks only correctly classified texts).

Results are frozen dataclasses (:class:`RadiusResult`, :class:`PRResult`) and every table
is a pure function of them returning frozen rows. Running over a data set (store, resume,
executors, report) is :mod:`textrobust.audit`'s job: the analyses ``radius`` and ``pr`` of
:mod:`textrobust.analyses.radius.analysis` adapt these classes to its protocol.
"""

from __future__ import annotations

import math
import random
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from textrobust.analyses.radius.settings import METHODS, PRMetricSettings, RadiusBoundsSettings
from textrobust.attack.candidates.choice import validated_source
from textrobust.attack.goals import UntargetedClassification
from textrobust.attack.problem import CandidateSource, Problem, Search
from textrobust.data.examples import Example
from textrobust.devices import Placement
from textrobust.errors import ConfigError
from textrobust.attack.cap import ModificationCap, modification_cap
from textrobust.attack.searches.pdp import PseudoDynamicProgramming
from textrobust.analyses.radius.pr import PREstimate, estimate_pr
from textrobust.attack.searches.exhaustive import (
    ExhaustiveProver,
    Proof,
    Sensitivity,
    Verdict,
    WordIdPath,
    sensitivity_order,
)
from textrobust.attack.space import PerturbationSpace, SpaceSource, build_space, space_rng
from textrobust.attack.candidates.wordnet_cosine import CleanedSynonyms
from textrobust.text import Text
from textrobust.victims.protocol import GradientVictim
from textrobust.victims.query import QueryLayer

__all__ = [
    "METHODS",
    "Bounds",
    "BoundsSummary",
    "MethodOutcome",
    "MethodRow",
    "OptimalityRow",
    "PRAnalysis",
    "PRResult",
    "PRStats",
    "ProverOutcome",
    "RadiusAnalysis",
    "RadiusResult",
    "RadiusRow",
    "RadiusVerdict",
    "SpaceInfo",
    "Throughput",
    "YieldCurves",
    "attack_table",
    "bounds_summary",
    "certified_table",
    "falsified_share",
    "optimality_table",
    "pr_summary",
    "probe_texts",
    "raw_forward_speed",
    "space_of",
    "throughput_summary",
    "yield_curves",
]

def _source(settings: RadiusBoundsSettings | PRMetricSettings, source: CandidateSource | None,
            placement: Placement | None = None) -> CandidateSource:
    """``S(X, p)``: ``source`` when given, else as ``settings.candidates`` says: "validated"
    (the default: the validated synonyms, :func:`~textrobust.attack.candidates.choice.validated_source`,
    at most ``eta`` per position; ``min_cos`` does not apply, the source has its own floor)
    or "paper" (WordNet cleaned by cosine, :class:`~textrobust.attack.candidates.wordnet_cosine.
    CleanedSynonyms`, the paper's recipe with WordNet for HowNet). ``placement``: where the
    validated source's models run (None: the CPU in float32)."""
    if source is not None:
        return source
    if settings.candidates == "validated":
        if settings.min_validity is not None:  # wider than the source's own threshold (issue 47)
            return validated_source(settings.eta, skip_stop_words=settings.skip_stop_words, placement=placement,
                                    min_validity=settings.min_validity)
        return validated_source(settings.eta, skip_stop_words=settings.skip_stop_words, placement=placement)
    return CleanedSynonyms(eta=settings.eta, min_cos=settings.min_cos, skip_stop_words=settings.skip_stop_words)


# ---- typed results ----------------------------------------------------------------------------
@dataclass(frozen=True)
class SpaceInfo:
    """``Omega(X)`` of one example: the perturbable positions ``P`` and their substitutes
    (``S(X, p)`` without the original word), the exact size of ``Omega(X)`` and of
    ``Omega_r`` for ``r = 1 .. max_radius``, and the seconds it took to build."""

    positions: tuple[int, ...]
    substitutes: tuple[tuple[str, ...], ...]
    size: int
    log10_size: float
    size_by_radius: tuple[int, ...]
    seconds: float

    @property
    def m(self) -> int:
        """``|P|``."""
        return len(self.positions)


@dataclass(frozen=True)
class MethodOutcome:
    """One attack method on one example (a row of Table 2's raw data): whether it found
    an adversarial example within the cap, with how many substituted words (``l0``) and
    which share of the modifiable words (``fraction``), at what cost."""

    success: bool
    l0: int | None
    fraction: float | None
    seconds: float
    queries: int
    perturbed: Text | None


@dataclass(frozen=True)
class RadiusVerdict:
    """The verdict for ``Omega_r`` of the combined procedure: ``by`` PDP (its example has at
    most ``r`` words: found) or the prover; ``seconds`` to the verdict, PDP's included."""

    r: int
    verdict: Verdict
    by: str
    seconds: float
    checked: int | None = None
    reason: str = ""


@dataclass(frozen=True)
class Bounds:
    """Bounds on the maximum robustness radius ``R`` of one example: ``lower`` = the largest
    certified ``r``; ``upper`` = (fewest words of a known adversarial example) - 1, None
    when none is known; ``robust_everywhere``: the prover checked all of ``Omega(X)``."""

    lower: int
    upper: int | None
    exact: bool
    robust_everywhere: bool


@dataclass(frozen=True)
class ProverOutcome:
    """What the prover did on one example: the position order, its proofs for ``r >= 1``,
    the verdict per ``r`` of Table 3, the bounds, and its cost (texts checked, seconds,
    seconds inside the victim's forward passes)."""

    order: Sensitivity
    order_positions: tuple[int, ...]
    proofs: tuple[Proof, ...]
    verdicts: tuple[RadiusVerdict, ...]
    bounds: Bounds
    checked: int
    seconds: float
    forward_seconds: float

    def verdict(self, r: int) -> RadiusVerdict | None:
        return next((v for v in self.verdicts if v.r == r), None)


@dataclass(frozen=True)
class RadiusResult:
    """The radius analysis of one example (``text``). A misclassified example is skipped
    (only the prediction is recorded); otherwise ``cap`` = ``floor(tau n)``, the space, one
    :class:`MethodOutcome` per method and, when the prover ran, its outcome. ``queries``:
    texts sent to the victim by every query layer of the example (the prediction, each
    method, the prover)."""

    example_id: str
    text: Text
    label: int
    words: int
    predicted: int
    queries: int
    cap: int | None = None
    space: SpaceInfo | None = None
    methods: dict[str, MethodOutcome] | None = None
    prover: ProverOutcome | None = None

    @property
    def correct(self) -> bool:
        return self.predicted == self.label

    @property
    def skipped(self) -> bool:
        return not self.correct

    @property
    def attacked(self) -> bool:
        return self.methods is not None

    def outcome(self, method: str) -> MethodOutcome | None:
        return None if self.methods is None else self.methods.get(method)

    def succeeded(self, method: str, within: int | None = None) -> bool:
        """Whether ``method`` found an adversarial example (with at most ``within`` words)."""
        o = self.outcome(method)
        return o is not None and o.success and o.l0 is not None and (within is None or o.l0 <= within)

    def success_l0(self, method: str) -> int | None:
        """The number of words ``method``'s adversarial example changed; None when it found none."""
        o = self.outcome(method)
        return o.l0 if o is not None and o.success else None


@dataclass(frozen=True)
class PRResult:
    """PR of one example: skipped when misclassified, else ``m`` = ``|P|`` and the estimate;
    ``queries``: texts sent to the victim (the prediction and the samples); ``text`` and
    ``probabilities``: the example and the victim's probabilities for it, which the
    estimate's kept samples are read against (None and empty in results stored before
    they were kept)."""

    example_id: str
    label: int
    words: int
    predicted: int
    queries: int
    m: int | None = None
    estimate: PREstimate | None = None
    text: Text | None = None
    probabilities: tuple[float, ...] = ()

    @property
    def falsified(self) -> bool:
        """Whether a misclassified text of ``Omega_r`` was drawn (or enumerated): PR_hat < 1."""
        return self.estimate is not None and self.estimate.robust < self.estimate.evaluated

    @property
    def correct(self) -> bool:
        return self.predicted == self.label

    @property
    def skipped(self) -> bool:
        return not self.correct


# ---- the analyses of one example ----------------------------------------------------------------
def _space_info(space: PerturbationSpace, radii: Sequence[int], seconds: float) -> SpaceInfo:
    return SpaceInfo(space.positions, space.substitutes, space.size(), space.log10_size(),
                     tuple(space.size(r) for r in radii), seconds)


class RadiusAnalysis:
    """Upper bounds (PDP and baselines), certified radii (prover) and bounds on ``R`` for
    one example at a time, against ``victim``.

    ``settings``: the ``radius`` analysis's own (``n`` is the audit's business, not this
    class's); ``source`` replaces the cleaned WordNet synonyms (any CandidateSource);
    ``seed``: of the stochastic searches (PDP's look-ahead, PSO).
    """

    def __init__(
        self,
        victim: Any,
        settings: RadiusBoundsSettings | None = None,
        *,
        source: CandidateSource | None = None,
        seed: int = 0,
        placement: Placement | None = None,
    ) -> None:
        self.victim = victim
        self.settings = settings or RadiusBoundsSettings()
        self.source = _source(self.settings, source, placement)
        self.seed = seed
        self.prover = ExhaustiveProver(batch_size=self.settings.prover_batch)

    def describe(self) -> dict[str, Any]:
        return {
            "settings": self.settings.to_dict(),
            "seed": self.seed,
            "source": repr(self.source),
            "searches": {m: repr(self.search(m)) for m in self.settings.methods},
            "prover": repr(self.prover),
            "cap": f"ModificationCap(tau={self.settings.tau})",
        }

    def search(self, method: str) -> Search:
        """The search of ``method`` with this analysis' settings."""
        s = self.settings
        if method == "pdp":
            return PseudoDynamicProgramming(top_k=s.top_k, lookahead_samples=s.lookahead, tau=s.tau, seed=self.seed)
        from textrobust.attack.searches import SEARCHES

        if method == "greedy":
            return SEARCHES.get("greedy")(ranking="delete")
        if method == "pso":
            return SEARCHES.get("pso")(pop_size=s.pso_pop, max_iters=s.pso_iters, seed=self.seed)
        raise ConfigError(f"Unknown method {method!r}. Known: {list(METHODS)}.")

    def space(self, text: Text) -> PerturbationSpace:
        return build_space(text, self.source)

    def _gradients(self, label: int) -> Callable[[Text], np.ndarray] | None:
        victim = self.victim
        if not (isinstance(victim, GradientVictim) and victim.capabilities.gradients):
            return None
        return lambda text: np.asarray(victim.word_gradients([text], [label])[0])

    def analyse(self, example: Example) -> RadiusResult:
        """The result of one example (see the module docstring)."""
        s = self.settings
        x, label = example.text, example.label
        probe = QueryLayer(self.victim, batch_size=s.batch_size)
        predicted = int(probe.probabilities([x])[0].argmax())
        queries = probe.queries
        words = len(x.modifiable)
        if predicted != label:
            return RadiusResult(example.id, x, label, words, predicted, queries)
        started = time.perf_counter()
        space = self.space(x)
        radii = list(range(1, s.max_radius + 1))
        info = _space_info(space, radii, time.perf_counter() - started)
        methods: dict[str, MethodOutcome] = {}
        for method in s.methods:
            methods[method], spent = self._attack(method, x, label, space)
            queries += spent
        prover = None
        if s.prover:
            prover, spent = self._prove(x, label, space, methods["pdp"])
            queries += spent
        return RadiusResult(example.id, x, label, words, predicted, queries, modification_cap(x, s.tau), info,
                            methods, prover)

    def _problem(self, layer: QueryLayer, x: Text, label: int, space: PerturbationSpace) -> Problem:
        return Problem(
            original=x,
            goal=UntargetedClassification(layer, label),
            source=SpaceSource(space),
            position_constraints=(ModificationCap(self.settings.tau),),
            gradients=self._gradients(label),
        )

    def _attack(self, method: str, x: Text, label: int, space: PerturbationSpace) -> tuple[MethodOutcome, int]:
        # a fresh layer: no method profits from another's cache
        layer = QueryLayer(self.victim, batch_size=self.settings.batch_size)
        started = time.perf_counter()
        outcome = self.search(method).search(x, self._problem(layer, x, label, space))
        seconds = time.perf_counter() - started
        l0 = x.l0(outcome.best)
        words = len(x.modifiable)
        success = bool(outcome.success)
        return MethodOutcome(
            success=success,
            l0=l0 if success else None,
            fraction=(l0 / words if words else 0.0) if success else None,
            seconds=seconds,
            queries=layer.queries,
            perturbed=outcome.best if success else None,
        ), layer.queries

    def _prove(self, x: Text, label: int, space: PerturbationSpace, pdp: MethodOutcome) -> tuple[ProverOutcome, int]:
        s = self.settings
        layer = QueryLayer(self.victim, batch_size=s.prover_batch, cache_size=0)
        goal = UntargetedClassification(layer, label)
        started = time.perf_counter()
        gradients = self._gradients(label)
        order_method = s.order
        if order_method is Sensitivity.AUTO:
            order_method = Sensitivity.GRADIENT if gradients is not None else Sensitivity.DELETE
        order = sensitivity_order(space, order_method, evaluate=goal.evaluate, gradients=gradients)
        upper_pdp = pdp.l0 if pdp.success else None
        top = s.max_radius if upper_pdp is None else min(s.max_radius, upper_pdp - 1)
        ordering = time.perf_counter() - started
        limit = None if s.time_limit is None else max(s.time_limit - ordering, 1e-3)
        stats_before = layer.stats()
        proofs = self.prover.prove_radii(space, goal.evaluate, top, order=order, time_limit=limit,
                                         ids=WordIdPath.of(goal)) if top >= 1 else []
        prover_seconds = time.perf_counter() - started
        stats = layer.stats().minus(stats_before)
        by_radius = {p.radius: p for p in proofs}
        verdicts = []
        for r in range(1, s.max_radius + 1):
            if upper_pdp is not None and r >= upper_pdp:
                verdicts.append(RadiusVerdict(r, Verdict.FOUND, "pdp", pdp.seconds))
                continue
            proof = by_radius[r]
            verdicts.append(RadiusVerdict(r, proof.verdict, "prover", pdp.seconds + ordering + proof.seconds,
                                          proof.checked, proof.reason))
        found_l0 = [p.adversarial_l0 for p in proofs if p.verdict is Verdict.FOUND and p.adversarial_l0 is not None]
        if upper_pdp is not None:
            found_l0.append(upper_pdp)
        certified = [p.radius for p in proofs if p.verdict is Verdict.CERTIFIED]
        lower = max(certified, default=0)
        upper = min(found_l0) - 1 if found_l0 else None
        # robust_everywhere: the prover checked all of Omega(X) (m <= max_radius): R is unbounded
        everywhere = any(p.verdict is Verdict.CERTIFIED and p.size == space.size() for p in proofs)
        outcome = ProverOutcome(
            order=order_method,
            order_positions=tuple(order),
            proofs=tuple(p for p in proofs if p.radius >= 1),
            verdicts=tuple(verdicts),
            bounds=Bounds(lower, upper, upper is not None and lower == upper, everywhere),
            checked=max((p.checked for p in proofs), default=0),
            seconds=prover_seconds,
            forward_seconds=stats.forward_seconds,
        )
        return outcome, layer.queries


class PRAnalysis:
    """PR_hat (with its Hoeffding interval) of one example at a time, against ``victim``.

    ``settings``: the ``pr`` analysis's own; ``source`` replaces the cleaned WordNet
    synonyms (any CandidateSource); ``seed``: of the samples (each example's draw is
    seeded by it and the text); ``cache_size``: of the query layer (0: none).
    """

    def __init__(
        self,
        victim: Any,
        settings: PRMetricSettings | None = None,
        *,
        source: CandidateSource | None = None,
        seed: int = 0,
        cache_size: int = 0,
        placement: Placement | None = None,
    ) -> None:
        self.victim = victim
        self.settings = settings or PRMetricSettings()
        self.source = _source(self.settings, source, placement)
        self.seed = seed
        self.cache_size = cache_size

    def describe(self) -> dict[str, Any]:
        config = self.settings.pr_config()
        return {"settings": self.settings.to_dict(), "seed": self.seed, "source": repr(self.source),
                "samples": config.sample_size(), "guaranteed": config.guaranteed()}

    def analyse(self, example: Example) -> PRResult:
        """The PR of one example."""
        s = self.settings
        x, label = example.text, example.label
        layer = QueryLayer(self.victim, batch_size=s.batch_size, cache_size=self.cache_size)
        probabilities = layer.probabilities([x])[0]
        predicted = int(probabilities.argmax())
        words = len(x.modifiable)
        if predicted != label:
            return PRResult(example.id, label, words, predicted, layer.queries)
        space = build_space(x, self.source)
        goal = UntargetedClassification(layer, label)
        estimate = estimate_pr(space, goal.evaluate, space_rng(self.seed, x), s.pr_config(), ids=WordIdPath.of(goal))
        return PRResult(example.id, label, words, predicted, layer.queries, space.m, estimate, x,
                        tuple(float(v) for v in probabilities))


# ---- pure tables ----------------------------------------------------------------------------------
def _attacked(results: Sequence[RadiusResult]) -> list[RadiusResult]:
    return [r for r in results if not r.skipped and r.attacked]


def _proven(results: Sequence[RadiusResult]) -> list[tuple[RadiusResult, ProverOutcome]]:
    return [(r, r.prover) for r in _attacked(results) if r.prover is not None]


def _mean(values: Sequence[float]) -> float:
    return float(statistics.fmean(values)) if values else math.nan


@dataclass(frozen=True)
class MethodRow:
    """Table 2, one method: ``succ`` successes (``succ_rate`` of the attacked examples),
    ``wins``, ``percent_substituted`` (%S), and the mean words, queries and seconds."""

    method: str
    succ: int
    succ_rate: float
    wins: int
    percent_substituted: float
    mean_l0: float
    mean_seconds: float
    mean_queries: float


def attack_table(results: Sequence[RadiusResult], methods: Sequence[str] = METHODS) -> tuple[MethodRow, ...]:
    """Table 2: for each method, #Succ (and its rate), #Win and %S over the attacked
    examples. A *win* is a success with strictly fewer substitutions than every other
    method (a failure counts as infinitely many), so a method alone in succeeding wins;
    %S is the mean share of substituted words over the method's successes, in percent."""
    rows = _attacked(results)
    table = []
    for method in methods:
        ran = [(r, o) for r in rows if (o := r.outcome(method)) is not None]
        succ = [(r, o) for r, o in ran if o.success and o.l0 is not None]
        wins = 0
        for r, mine in succ:
            others = [o.l0 if o.success and o.l0 is not None else math.inf
                      for name, o in (r.methods or {}).items() if name != method and name in methods]
            wins += mine.l0 is not None and all(mine.l0 < other for other in others)  # l0 is set on success
        table.append(MethodRow(
            method=method,
            succ=len(succ),
            succ_rate=len(succ) / len(rows) if rows else math.nan,
            wins=wins,
            percent_substituted=100.0 * _mean([o.fraction for _, o in succ if o.fraction is not None]),
            mean_l0=_mean([o.l0 for _, o in succ if o.l0 is not None]),
            mean_seconds=_mean([o.seconds for _, o in ran]),
            mean_queries=_mean([o.queries for _, o in ran]),
        ))
    return tuple(table)


@dataclass(frozen=True)
class OptimalityRow:
    """One attack method against the prover (see :func:`optimality_table`)."""

    method: str
    exact: int
    optimal: int
    missed: int
    violations: int


def optimality_table(results: Sequence[RadiusResult], methods: Sequence[str] = METHODS) -> tuple[OptimalityRow, ...]:
    """How each attack method compares with the prover, per method:

    - ``optimal``: successes whose count equals the true minimum, among ``exact`` (the
      successes on examples where the bounds meet, so the minimum ``R + 1`` is known);
    - ``missed``: failures on examples where some adversarial example within the cap is
      known (from another method or the prover);
    - ``violations``: successes with no more words than a certified radius, which a
      sound prover makes impossible (must be 0).
    """
    rows = _proven(results)
    table = []
    for method in methods:
        exact = optimal = missed = violations = 0
        for r, prover in rows:
            result = r.outcome(method)
            if result is None:
                continue
            bounds = prover.bounds
            if result.success and result.l0 is not None:
                violations += result.l0 <= bounds.lower
                if bounds.exact and bounds.upper is not None:
                    exact += 1
                    optimal += result.l0 == bounds.upper + 1
            else:
                known = [o.l0 for o in (r.methods or {}).values() if o.success]
                known += [p.adversarial_l0 for p in prover.proofs if p.verdict is Verdict.FOUND]
                missed += any(k is not None and r.cap is not None and k <= r.cap for k in known)
        table.append(OptimalityRow(method, exact, optimal, missed, violations))
    return tuple(table)


@dataclass(frozen=True)
class RadiusRow:
    """Table 3, one radius ``r``: how many of the ``examples`` were found (an adversarial
    example in ``Omega_r``), certified or unknown, their shares in percent, and the mean
    seconds to each verdict."""

    r: int
    examples: int
    found: int
    certified: int
    unknown: int
    found_pct: float
    certified_pct: float
    unknown_pct: float
    found_seconds: float
    certified_seconds: float
    unknown_seconds: float


def certified_table(results: Sequence[RadiusResult], max_radius: int = 4) -> tuple[RadiusRow, ...]:
    """Table 3: for each ``r``, the share of examples found (%F), certified (%C) and
    unknown (%U), with the mean seconds to each verdict."""
    rows = _proven(results)
    n = len(rows)
    table = []
    for radius in range(1, max_radius + 1):
        cells: dict[Verdict, list[float]] = {v: [] for v in Verdict}
        for _, prover in rows:
            for v in prover.verdicts:
                if v.r == radius:
                    cells[v.verdict].append(v.seconds)

        def pct(verdict: Verdict) -> float:
            return 100.0 * len(cells[verdict]) / n if n else math.nan

        table.append(RadiusRow(
            r=radius, examples=n,
            found=len(cells[Verdict.FOUND]), certified=len(cells[Verdict.CERTIFIED]),
            unknown=len(cells[Verdict.UNKNOWN]),
            found_pct=pct(Verdict.FOUND), certified_pct=pct(Verdict.CERTIFIED), unknown_pct=pct(Verdict.UNKNOWN),
            found_seconds=_mean(cells[Verdict.FOUND]), certified_seconds=_mean(cells[Verdict.CERTIFIED]),
            unknown_seconds=_mean(cells[Verdict.UNKNOWN]),
        ))
    return tuple(table)


@dataclass(frozen=True)
class BoundsSummary:
    """Bounds on ``R`` over the examples the prover ran on (see :func:`bounds_summary`)."""

    examples: int
    robust_everywhere: int
    robust_everywhere_share: float
    mean_lower: float
    mean_upper: float
    with_upper: int
    exact: int
    exact_share: float
    exact_radius_counts: dict[int, int]
    #: the mean lower bound over the same ``with_upper`` examples as ``mean_upper`` (the
    #: two means compare), and over the others (no adversarial example known: lower only)
    mean_lower_with_upper: float = math.nan
    mean_lower_without_upper: float = math.nan


def bounds_summary(results: Sequence[RadiusResult]) -> BoundsSummary:
    """Bounds on ``R`` over the examples: mean lower bound, mean upper bound (where an
    adversarial example is known) with the mean lower bound over those same examples and
    over the rest, the share where ``R`` is exact, the distribution of exact radii, and how
    many were proven robust on all of ``Omega(X)``."""
    bounds = [prover.bounds for _, prover in _proven(results)]
    n = len(bounds)
    lower = [b.lower for b in bounds]
    upper = [b.upper for b in bounds if b.upper is not None]
    exact = [b.lower for b in bounds if b.exact]
    histogram: dict[int, int] = {}
    for value in exact:
        histogram[value] = histogram.get(value, 0) + 1
    everywhere = sum(1 for b in bounds if b.robust_everywhere)
    return BoundsSummary(
        examples=n,
        robust_everywhere=everywhere,
        robust_everywhere_share=everywhere / n if n else math.nan,
        mean_lower=_mean(lower),
        mean_upper=_mean(upper),
        with_upper=len(upper),
        exact=len(exact),
        exact_share=len(exact) / n if n else math.nan,
        exact_radius_counts=dict(sorted(histogram.items())),
        mean_lower_with_upper=_mean([b.lower for b in bounds if b.upper is not None]),
        mean_lower_without_upper=_mean([b.lower for b in bounds if b.upper is None]),
    )


@dataclass(frozen=True)
class YieldCurves:
    """Figure 4: for each radius of ``radii``, the percentage of attacked examples whose
    ``Omega_r`` did not yield to each method (``methods``: upper bounds on the truly robust
    share) and, when the prover ran, the percentage certified (``certified``: a lower
    bound)."""

    radii: tuple[int, ...]
    methods: dict[str, tuple[float, ...]]
    certified: tuple[float, ...] | None = None


def yield_curves(results: Sequence[RadiusResult], methods: Sequence[str] = METHODS,
                 max_radius: int = 4) -> YieldCurves:
    """Figure 4: for ``r = 0 .. R`` (R = the largest substitution count any method used,
    at least ``max_radius``), the percentage of examples whose ``Omega_r`` did not yield
    to each method (no adversarial example with at most ``r`` words). These are upper
    bounds on the truly robust share; ``certified`` (when the prover ran) is the share
    proven robust at ``r``, a lower bound (beyond ``max_radius``: the examples proven
    robust on the whole space)."""
    rows = _attacked(results)
    top = max([max_radius] + [o.l0 for r in rows for o in (r.methods or {}).values()
                              if o.success and o.l0 is not None])
    n = len(rows)
    radii = tuple(range(top + 1))
    curves: dict[str, tuple[float, ...]] = {}
    for method in methods:
        curves[method] = tuple(100.0 * sum(1 for r in rows if not r.succeeded(method, radius)) / n if n else math.nan
                               for radius in radii)
    certified = None
    if any(r.prover is not None for r in rows):
        # beyond the prover's largest radius only the examples certified on all of Omega count
        def holds(r: RadiusResult, radius: int) -> bool:
            b = None if r.prover is None else r.prover.bounds
            return b is not None and (b.robust_everywhere or (radius <= max_radius and b.lower >= radius))

        certified = tuple(100.0 * sum(1 for r in rows if holds(r, radius)) / n if n else math.nan
                          for radius in radii)
    return YieldCurves(radii, curves, certified)


def falsified_share(results: Sequence[RadiusResult], radius: int = 1) -> float:
    """The share of attacked examples with a known adversarial example of at most
    ``radius`` substituted words (from any method or the prover); NaN without examples."""
    rows = _attacked(results)
    if not rows:
        return math.nan

    def falsified(r: RadiusResult) -> bool:
        if any(r.succeeded(m, radius) for m in r.methods or {}):
            return True
        v = None if r.prover is None else r.prover.verdict(radius)
        return v is not None and v.verdict is Verdict.FOUND

    return sum(falsified(r) for r in rows) / len(rows)


@dataclass(frozen=True)
class Throughput:
    """The prover's speed over the examples (see :func:`throughput_summary`)."""

    texts: int
    seconds: float
    texts_per_second: float
    forward_seconds: float
    forward_share: float
    texts_per_forward_second: float


def throughput_summary(results: Sequence[RadiusResult]) -> Throughput:
    """The prover's speed: texts checked per second of prover time, and the share of that
    time spent inside the victim's forward passes."""
    provers = [prover for _, prover in _proven(results)]
    checked = sum(p.checked for p in provers)
    seconds = sum(p.seconds for p in provers)
    forward = sum(p.forward_seconds for p in provers)
    return Throughput(
        texts=checked,
        seconds=seconds,
        texts_per_second=checked / seconds if seconds > 0 else math.nan,
        forward_seconds=forward,
        forward_share=forward / seconds if seconds > 0 else math.nan,
        texts_per_forward_second=checked / forward if forward > 0 else math.nan,
    )


@dataclass(frozen=True)
class PRStats:
    """PR over the examples (see :func:`pr_summary`); ``quantiles``: min, q25, median,
    q75, max; ``falsified``: the scored examples with a misclassified text drawn from
    ``Omega_r`` (PR_hat < 1), ``falsified_share`` their share."""

    scored: int
    skipped: int
    threshold: float
    above_threshold: int
    share_above_threshold: float
    mean_pr: float
    quantiles: dict[str, float]
    exact: int
    mean_radius: float
    mean_seconds: float
    falsified: int
    falsified_share: float


def pr_summary(results: Sequence[PRResult], threshold: float = 0.9) -> PRStats:
    """PR over the examples: how many, the share with ``PR_hat > threshold``, mean,
    quartiles, the share computed exactly."""
    estimates = [r.estimate for r in results if not r.skipped and r.estimate is not None]
    values = sorted(e.pr for e in estimates)
    n = len(values)
    quart = np.quantile(values, [0.0, 0.25, 0.5, 0.75, 1.0]).tolist() if n else [math.nan] * 5
    above = sum(1 for v in values if v > threshold)
    falsified = sum(1 for r in results if not r.skipped and r.falsified)
    return PRStats(
        scored=n,
        skipped=sum(1 for r in results if r.skipped),
        threshold=threshold,
        above_threshold=above,
        share_above_threshold=above / n if n else math.nan,
        mean_pr=_mean(values),
        quantiles=dict(zip(("min", "q25", "median", "q75", "max"), (float(q) for q in quart))),
        exact=sum(1 for e in estimates if e.exact),
        mean_radius=_mean([e.radius for e in estimates]),
        mean_seconds=_mean([e.seconds for e in estimates]),
        falsified=falsified,
        falsified_share=falsified / n if n else math.nan,
    )


# ---- speed --------------------------------------------------------------------------------------
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


def space_of(result: RadiusResult) -> PerturbationSpace:
    """The space stored in a radius result (around the example's text)."""
    if result.space is None:
        raise ConfigError(f"The result of '{result.example_id}' holds no space (the example was skipped).")
    return PerturbationSpace(result.text, result.space.positions, result.space.substitutes)


def probe_texts(results: Sequence[RadiusResult], n: int, *, radius: int = 2, seed: int = 0) -> list[Text]:
    """``n`` texts like the prover's: drawn uniformly from ``Omega_radius`` of the stored
    spaces, cycling over the examples (for :func:`raw_forward_speed`)."""
    spaces = [space_of(r) for r in _attacked(results) if r.space is not None]
    spaces = [s for s in spaces if s.m > 0]
    if not spaces:
        return []
    rng = random.Random(seed)
    return [spaces[i % len(spaces)].sample(radius, 1, rng)[0] for i in range(n)]
