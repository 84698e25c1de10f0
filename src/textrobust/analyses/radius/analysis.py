"""The robustness radius (``radius``) and the PR metric (``pr``) on the analysis protocol.

Yang, Huang, Ma, Cao, Zhang, Zhang and Li, "Quantifying Robustness to Adversarial Word
Substitutions" (../shared/papers/robustness-radius-pdp-prover-pr.txt). The method code is
:mod:`textrobust.analyses.radius` (the space, PDP, the prover, PR_hat, and the per-example
:class:`~textrobust.analyses.radius.method.RadiusAnalysis` and
:class:`~textrobust.analyses.radius.method.PRAnalysis`, which take the settings of
:mod:`textrobust.analyses.radius.settings` as they are); this module only adapts it: one
unit per example, a typed record holding the method's typed result, a pure summary
(Tables 2 and 3, the bounds on ``R``, Figure 4's curves, PR over the examples) and the
report section.

Departures from the paper are those of :mod:`textrobust.analyses.radius.method` (WordNet
synonyms for HowNet, our own victims, misclassified examples skipped). Two readings of
the protocol's counts: a radius example is *budget exhausted* when the prover's time
limit (its per-example budget) left some radius unknown; PR has no budget. Queries are
counted by the method's own query layers (a fresh one per attack method, none cached for
the prover and PR), and stored in each record's ``queries``.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from textrobust.analyses.protocol import Analysis, Failure, Record, Summary, WorkerContext, counts
from textrobust.attack.problem import CandidateSource
from textrobust.data.examples import Example
from textrobust.devices import Placement
from textrobust.analyses.radius.method import (
    BoundsSummary,
    MethodRow,
    OptimalityRow,
    PRAnalysis,
    PRResult,
    PRStats,
    RadiusAnalysis,
    RadiusResult,
    RadiusRow,
    Throughput,
    YieldCurves,
    attack_table,
    bounds_summary,
    certified_table,
    falsified_share,
    optimality_table,
    pr_summary,
    throughput_summary,
    yield_curves,
)
from textrobust.analyses.radius.pr import hoeffding_samples
from textrobust.analyses.radius.settings import PRMetricSettings, RadiusBoundsSettings
from textrobust.attack.searches.exhaustive import Verdict
from textrobust.sections import Section
from textrobust.text import Text
from textrobust.validity.overrides import UserLabels
from textrobust.victims.protocol import BatchedVictim, Victim

__all__ = ["FALSIFIED_LABEL", "PRMetricAnalysis", "PRMetricSettings", "PRRecord", "PRSummary", "RadiusBoundsAnalysis",
           "RadiusBoundsSettings", "RadiusRecord", "RadiusSummary"]

_PAPER = ("Yang, Huang, Ma, Cao, Zhang, Zhang and Li 2022, \"Quantifying Robustness to Adversarial Word "
          "Substitutions\"")


def _batched(victim: Victim, batch: int) -> Victim:
    """``victim`` taking ``batch`` texts per forward pass.

    A victim that declares its own ``batch_size`` (:class:`~textrobust.victims.protocol.
    BatchedVictim`: a TorchVictim splits each call into chunks of 64 by default) gets a
    shallow copy with a larger batch, since the prover and PR send hundreds of texts per
    call (as the old ``radius`` and ``pr`` commands did). A copy, so that the victim the
    other analyses of an audit share is left as it is. Any other victim (a lockstep run's
    gate member among them: the gate merges calls itself) is used as it is.
    """
    if isinstance(victim, BatchedVictim) and not isinstance(victim.batch_size, bool) \
            and isinstance(victim.batch_size, int) and victim.batch_size != batch:
        victim = copy.copy(victim)
        victim.batch_size = batch
    return victim


def _victim(context: WorkerContext) -> Victim:
    # The method builds its own query layers around the victim (a fresh cache per attack
    # method, no cache for the prover), as the paper's comparison needs.
    return context.layer.victim


def _labelled(settings: RadiusBoundsSettings | PRMetricSettings, source: CandidateSource | None,
              placement: Placement | None, user_labels: UserLabels | None) -> CandidateSource | None:
    """``source``; when none is given and a user's labels are (``--labelled``), the validated
    synonyms with those labels (as the method would build them otherwise, without)."""
    if source is not None or user_labels is None or settings.candidates != "validated":
        return source
    from textrobust.attack.candidates.choice import validated_source

    return validated_source(settings.eta, skip_stop_words=settings.skip_stop_words, placement=placement,
                            user_labels=user_labels, min_validity=settings.min_validity)


def _judge(context: WorkerContext) -> tuple[Any, Callable[..., dict[str, Any] | None]]:
    """The judge of a worker's findings (:func:`~textrobust.attack.candidates.swap_validity.
    validity_judge`; None when it cannot load) and the function that judges one."""
    from textrobust.attack.candidates import swap_validity

    return swap_validity.validity_judge(None, context.placement), swap_validity.judge_finding


#: The paper's own S(X, p), as built here (``--candidates paper``).
PAPER_SOURCE = "WordNet synonyms (for HowNet) cleaned by counter-fitted cosine >= 0.5, top 5"


# ---- radius ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RadiusRecord(Record):
    """One example of the radius analysis (status ``skipped``: misclassified, not attacked;
    ``analysed``); ``budget_exhausted``: the prover's time limit left some radius unknown."""

    result: RadiusResult
    budget_exhausted: bool = False
    #: the probability that its smallest adversarial example keeps the meaning (issue 47;
    #: :func:`~textrobust.attack.candidates.swap_validity.finding_validity` as a dict)
    validity: dict[str, Any] | None = None


@dataclass(frozen=True)
class RadiusSummary(Summary):
    """Tables 2 and 3, the attacks against the prover, the bounds on ``R``, Figure 4's
    curves and the prover's speed, over the attacked examples; ``falsified_r1``: the share
    with a known adversarial example of one word; ``certified_r1``: the share the prover
    certified at ``r = 1``; NaN (n/a) when no example was attacked."""

    examples: int
    attacked: int
    skipped: int
    queries: int
    falsified_r1: float
    certified_r1: float
    table2: tuple[MethodRow, ...]
    optimality: tuple[OptimalityRow, ...]
    table3: tuple[RadiusRow, ...]
    bounds: BoundsSummary | None
    curves: YieldCurves
    throughput: Throughput | None
    expected_valid_success_rate: float = math.nan
    expected_valid_success_rate_low: float = math.nan
    expected_valid_success_rate_high: float = math.nan


def smallest_adversarial(r: RadiusResult) -> tuple[int, str, Text] | None:
    """The smallest known adversarial example of ``r`` (fewest words, then by method name)
    and who found it: the finding its upper bound and ``falsified_r1`` rest on; None when
    none is known or the example was not attacked."""
    if not r.attacked:
        return None
    found: list[tuple[int, str, Text]] = []
    for method, outcome in (r.methods or {}).items():
        if outcome.success and outcome.perturbed is not None:
            found.append((r.text.l0(outcome.perturbed), method, outcome.perturbed))
    for proof in (r.prover.proofs if r.prover is not None else ()):
        if proof.adversarial is not None:
            found.append((r.text.l0(proof.adversarial), "prover", proof.adversarial))
    return min(found, key=lambda item: (item[0], item[1])) if found else None


def radius_units(records: Sequence[RadiusRecord]) -> list[Any]:
    """One unit per example falsified at ``r = 1`` (its one-word adversarial example; None
    when it carries no probability), item ``radius/EXAMPLE_ID``."""
    from textrobust.analyses.validity_figures import unit

    out = []
    for record in records:
        smallest = smallest_adversarial(record.result)
        if smallest is not None and smallest[0] <= 1:
            out.append(unit(f"radius/{record.result.example_id}", record.result.example_id, record.validity))
    return out


def pr_units(records: Sequence[PRRecord]) -> list[Any]:
    """One unit per kept misclassified sample (item ``pr/EXAMPLE_ID/K``), weighted by its
    example's misclassified share of ``Omega_r``; a falsified example with no sample kept
    (or a sample without a probability) gives None."""
    from textrobust.analyses.validity_figures import unit

    out: list[Any] = []
    for record in records:
        r, e = record.result, record.result.estimate
        if r.skipped or e is None or not r.falsified:
            continue
        if not e.samples:
            out.append(None)
            continue
        share = (e.evaluated - e.robust) / e.evaluated
        for k, _ in enumerate(e.samples, 1):
            kept = record.validity or ()
            validity = kept[k - 1] if k - 1 < len(kept) else None
            out.append(unit(f"pr/{r.example_id}/{k}", r.example_id, validity, share))
    return out


class RadiusBoundsAnalysis(Analysis[RadiusBoundsSettings, RadiusRecord, RadiusSummary]):
    """Bounds on the robustness radius: PDP and baselines (upper), the prover (lower)."""

    name = "radius"
    title = "Robustness radius (PDP upper, prover lower bounds)"
    paper = _PAPER + ": PDP (Algorithm 1), the simple prover, Tables 2 and 3, Figure 4."
    settings_type = RadiusBoundsSettings
    record_type = RadiusRecord

    def __init__(self, settings: Any = None, *, source: CandidateSource | None = None) -> None:
        """``source`` replaces the cleaned WordNet synonyms (any CandidateSource)."""
        super().__init__(settings)
        self.source = source

    def _method(self, victim: Any, seed: int, placement: Placement | None = None,
                user_labels: UserLabels | None = None) -> RadiusAnalysis:
        return RadiusAnalysis(victim, self.settings, source=_labelled(self.settings, self.source, placement, user_labels),
                              seed=seed, placement=placement)

    def describe(self) -> dict[str, Any]:
        method = self._method(None, 0).describe()  # the searches' seed is the run's seed
        return {**super().describe(), "source": method["source"], "searches": method["searches"],
                "prover": method["prover"], "cap": method["cap"]}

    def worker(self, context: WorkerContext) -> Callable[[Any], RadiusRecord]:
        s = self.settings
        method = self._method(_batched(_victim(context), max(s.batch_size, s.prover_batch)), context.seed,
                              context.placement, context.user_labels)
        judge, judge_finding = _judge(context)

        def analyse(example: Example) -> RadiusRecord:
            began = time.perf_counter()
            result = method.analyse(example)
            unknown = result.prover is not None and any(v.verdict is Verdict.UNKNOWN for v in result.prover.verdicts)
            smallest = smallest_adversarial(result)
            validity = None if smallest is None else judge_finding(judge, result.text, smallest[2])
            return RadiusRecord(example.id, "skipped" if result.skipped else "analysed", result.queries,
                                time.perf_counter() - began, result, unknown, validity)

        return analyse

    def summarise(self, records: Sequence[RadiusRecord], failures: Sequence[Failure]) -> RadiusSummary:
        from textrobust.analyses.validity_figures import expected_fields

        s = self.settings
        results = [r.result for r in records]
        table3 = certified_table(results, s.max_radius)
        attacked = sum(1 for r in results if r.attacked)
        certified = table3[0].certified_pct / 100.0 if s.prover and table3 else math.nan
        return RadiusSummary(
            **counts(records, failures),
            examples=len(results), attacked=attacked, skipped=sum(1 for r in results if r.skipped),
            queries=sum(r.queries for r in records), falsified_r1=falsified_share(results, 1),
            **expected_fields(radius_units(records), attacked),
            certified_r1=certified, table2=attack_table(results, s.methods),
            optimality=optimality_table(results, s.methods) if s.prover else (),
            table3=table3 if s.prover else (), bounds=bounds_summary(results) if s.prover else None,
            curves=yield_curves(results, s.methods, s.max_radius),
            throughput=throughput_summary(results) if s.prover else None)

    def section(self, summary: RadiusSummary, records: Sequence[RadiusRecord], failures: Sequence[Failure],
                label_names: Sequence[str]) -> Section:
        from textrobust.analyses.sections import with_substitutes

        from textrobust.analyses.validity_figures import validity_block

        section = radius_section(summary, [r.result for r in records], label_names,
                                 {r.example_id: r.validity for r in records})
        section = replace(section, validity=validity_block(self.name, radius_units(records), summary.attacked))
        return with_substitutes(section, self.settings.candidates, PAPER_SOURCE)


def radius_section(s: RadiusSummary, results: Sequence[RadiusResult], label_names: Sequence[str],
                   validity: Mapping[str, Any] | None = None) -> Section:
    """The report section of the radius analysis (tables narrow enough for 80 columns);
    ``validity``: per example id, its smallest adversarial example's probability of keeping
    the meaning (issue 47)."""
    from textrobust.analyses.figures import line_chart, stacked_bar_chart
    from textrobust.analyses.sections import example_row, figure, headline, table
    from textrobust.analyses.validity_figures import EXPECTED, LABEL, finding_note, headline_note

    validity = validity or {}

    pdp = next((row for row in s.table2 if row.method == "pdp"), None)
    b = s.bounds
    heads = [headline("examples attacked (correctly classified)", s.attacked, "int",
                      "the figures below are over these; misclassified examples are skipped"),
             headline("falsified at r = 1 (one word flips it)", s.falsified_r1, "%",
                      "share with a known adversarial example that substitutes a single word"),
             headline(f"{LABEL} at r = 1", s.expected_valid_success_rate, "%", headline_note(
                 {k: getattr(s, k) for k in (EXPECTED, f"{EXPECTED}_low", f"{EXPECTED}_high")}, s.attacked,
                 "the examples falsified at r = 1")),
             headline("certified at r = 1 (prover)", s.certified_r1, "%",
                      "share the prover checked exhaustively: no single substituted word flips them")]
    if pdp is not None:
        heads.append(headline("PDP success rate", pdp.succ_rate, "%",
                              "share PDP flipped with at most floor(tau n) of the n words substituted"))
    if b is not None:
        both, lower_only = b.with_upper, b.examples - b.with_upper
        heads += [headline(f"mean lower bound on R, the {both} example(s) with both bounds",
                           b.mean_lower_with_upper, "float",
                           "R: the most words one can substitute without flipping the example; the prover "
                           "certifies the lower bound"),
                  headline(f"mean upper bound on R, the same {both} example(s)", b.mean_upper, "float",
                           "one word fewer than the smallest adversarial example found (PDP, baselines, prover)"),
                  headline(f"mean lower bound on R, the {lower_only} example(s) with no adversarial example found",
                           b.mean_lower_without_upper, "float",
                           "certified by the prover; no upper bound is known for these"),
                  headline("R exact (bounds meet)", b.exact_share, "%",
                           "share of examples whose lower and upper bounds are equal: R is known")]
    tables = [table("Table 2: attacks (upper bounds); %: of attacked",
                    ["method", "succ", "succ %", "wins", "%S", "words", "queries", "s"],
                    [[r.method, r.succ, 100.0 * r.succ_rate, r.wins, r.percent_substituted, r.mean_l0,
                      r.mean_queries, r.mean_seconds] for r in s.table2],
                    note="The paper's Table 2, one row per attack. succ: examples it flipped within the cap "
                         "floor(tau n); succ %: their share of the attacked examples; wins: flipped with fewer "
                         "words than every other method; %S: mean share of the words substituted and words: "
                         "mean words substituted, over its successes; queries and s: mean model queries and "
                         "seconds per example.")]
    if s.optimality:
        tables.append(table("attacks against the prover (violations must be 0)",
                            ["method", "optimal", "exact", "missed", "violations"],
                            [[o.method, o.optimal, o.exact, o.missed, o.violations] for o in s.optimality],
                            note="exact: successes on examples whose R the prover pinned down; optimal: of "
                                 "those, successes with the fewest words possible (R + 1); missed: failures "
                                 "where an adversarial example within the cap is known; violations: successes "
                                 "inside a certified radius, impossible for a sound prover."))
    if s.table3:
        tables.append(table("Table 3: verdicts per radius r (%, mean s)",
                            ["r", "%F", "s F", "%C", "s C", "%U", "s U"],
                            [[t.r, t.found_pct, t.found_seconds, t.certified_pct, t.certified_seconds,
                              t.unknown_pct, t.unknown_seconds] for t in s.table3],
                            note="The paper's Table 3, one row per radius r (words substituted). %F: share of "
                                 "examples falsified (an adversarial example with at most r words is known); "
                                 "%C: share certified (the prover checked every such substitution); %U: share "
                                 "left unknown by the time limit; s F, s C, s U: mean seconds to reach each "
                                 "verdict."))
    if b is not None and s.throughput is not None:
        th = s.throughput
        exact = ", ".join(f"R={k}: {v}" for k, v in b.exact_radius_counts.items()) or "-"
        tables.append(table("bounds on R; prover speed", ["metric", "value"], [
            ["examples with bounds", b.examples], ["mean lower bound, all", b.mean_lower],
            [f"mean lower bound, the {b.with_upper} with an upper bound", b.mean_lower_with_upper],
            [f"mean upper bound, the same {b.with_upper}", b.mean_upper],
            ["R exact, %", 100.0 * b.exact_share], ["R exact, by value", exact],
            ["robust on all of Omega, %", 100.0 * b.robust_everywhere_share],
            ["time limit hit (some r unknown)", s.budget_exhausted], ["errors", s.errors],
            ["prover texts checked", th.texts], ["prover texts / s", th.texts_per_second],
            ["prover time in forward passes, %", 100.0 * th.forward_share]]))
    figures = []
    if s.table3:
        figures.append(figure("Verdicts per radius", stacked_bar_chart(
            [f"r={t.r}" for t in s.table3],
            {"certified": [t.certified_pct / 100.0 for t in s.table3],
             "unknown": [t.unknown_pct / 100.0 for t in s.table3],
             "falsified": [t.found_pct / 100.0 for t in s.table3]},
            title="share of examples certified / unknown / falsified", ylabel="examples", percent=True),
            "certified: the prover checked all of Omega_r; falsified: an adversarial example with at most "
            "r words is known (PDP or the prover); unknown: the time limit stopped the prover."))
    if s.attacked:
        series = {f"{m} (upper bound)": (list(s.curves.radii), [v / 100.0 for v in values])
                  for m, values in s.curves.methods.items()}
        if s.curves.certified is not None:
            series["certified (lower bound)"] = (list(s.curves.radii), [v / 100.0 for v in s.curves.certified])
        figures.append(figure("Robust share by radius: attacks bound it from above, the prover from below",
                              line_chart(series, title="examples whose Omega_r holds no adversarial example",
                                         xlabel="r (words substituted)", ylabel="examples", percent=True),
                              "Figure 4 of the paper, with the prover's certified share added."))
    examples = []
    for r in results:
        pdp_outcome = r.outcome("pdp")
        if pdp_outcome is None or not pdp_outcome.success or pdp_outcome.perturbed is None:
            continue
        bounds = None if r.prover is None else r.prover.bounds
        note = f"PDP: {pdp_outcome.l0} word(s)" + ("" if bounds is None else
                                                    f"; R in [{bounds.lower}, {bounds.upper}]")
        smallest = smallest_adversarial(r)
        if smallest is not None and smallest[2] == pdp_outcome.perturbed:
            note += f"; {finding_note(validity.get(r.example_id))}"
        examples.append(example_row(r.example_id, "falsified", label_names, r.label, r.text, pdp_outcome.perturbed,
                                    r.predicted, None, note))
        if len(examples) >= 12:
            break
    # risk: the share of attacked examples falsified at r = 1, i.e. with a known adversarial
    # example that substitutes a single word: robustness failed at the smallest radius.
    # Where the findings carry probabilities (issue 47), the expected valid share and its
    # interval set it instead.
    estimated = not math.isnan(s.expected_valid_success_rate)
    risk = s.expected_valid_success_rate if estimated else (None if math.isnan(s.falsified_r1) else s.falsified_r1)
    point = None if risk is None else (
        f"{s.falsified_r1:.0%} of {s.attacked} correctly classified examples flip with one substituted synonym"
        + (f" ({s.expected_valid_success_rate:.1%} expected valid, 95% interval "
           f"{s.expected_valid_success_rate_low:.1%} .. {s.expected_valid_success_rate_high:.1%})" if estimated else "")
        + ("" if math.isnan(s.certified_r1) else f"; the prover certified {s.certified_r1:.0%} at r = 1") + ".")
    return Section(heads, tables, figures, examples, risk=risk, point=point,
                   risk_low=s.expected_valid_success_rate_low if estimated else None,
                   risk_high=s.expected_valid_success_rate_high if estimated else None)


# ---- PR -----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PRRecord(Record):
    """One example of the PR metric (status ``skipped``: misclassified; ``scored``);
    ``validity``: per kept misclassified sample, its probability of keeping the meaning
    (issue 47; None where no judge could load)."""

    result: PRResult
    validity: tuple[dict[str, Any] | None, ...] | None = None


@dataclass(frozen=True)
class PRSummary(Summary):
    """PR over the scored examples, and the guarantee of the sample size used: ``samples``
    (N per sampled example), ``epsilon`` (the eps N guarantees at confidence
    ``1 - delta``), ``epsilon_requested`` and ``samples_needed`` (the N it needs)."""

    examples: int
    queries: int
    samples: int
    delta: float
    epsilon: float
    epsilon_requested: float
    samples_needed: int
    guaranteed: bool
    pr: PRStats
    expected_valid_success_rate: float = math.nan
    expected_valid_success_rate_low: float = math.nan
    expected_valid_success_rate_high: float = math.nan


class PRMetricAnalysis(Analysis[PRMetricSettings, PRRecord, PRSummary]):
    """PR_hat, the share of Omega_r a victim still classifies right, with its guarantee."""

    name = "pr"
    title = "PR: the share of the perturbation space classified right"
    paper = _PAPER + ": the PR metric with Hoeffding's sample size (equations 6-9), Figure 5."
    settings_type = PRMetricSettings
    record_type = PRRecord

    def __init__(self, settings: Any = None, *, source: CandidateSource | None = None) -> None:
        """``source`` replaces the cleaned WordNet synonyms (any CandidateSource)."""
        super().__init__(settings)
        self.source = source

    def _method(self, victim: Any, seed: int, placement: Placement | None = None,
                user_labels: UserLabels | None = None) -> PRAnalysis:
        return PRAnalysis(victim, self.settings, source=_labelled(self.settings, self.source, placement, user_labels),
                          seed=seed, placement=placement)

    def describe(self) -> dict[str, Any]:
        method = self._method(None, 0).describe()
        return {**super().describe(), "source": method["source"], "samples": method["samples"],
                "guaranteed": method["guaranteed"]}

    def worker(self, context: WorkerContext) -> Callable[[Any], PRRecord]:
        s = self.settings
        method = self._method(_batched(_victim(context), min(s.batch_size, 512)), context.seed, context.placement,
                              context.user_labels)
        judge, judge_finding = _judge(context)

        def analyse(example: Example) -> PRRecord:
            began = time.perf_counter()
            result = method.analyse(example)
            samples = result.estimate.samples if result.estimate is not None and result.text is not None else ()
            validity = tuple(judge_finding(judge, result.text, sample.text(result.text)) for sample in samples
                             if result.text is not None) or None
            return PRRecord(example.id, "skipped" if result.skipped else "scored", result.queries,
                            time.perf_counter() - began, result, validity)

        return analyse

    def summarise(self, records: Sequence[PRRecord], failures: Sequence[Failure]) -> PRSummary:
        s = self.settings
        config = s.pr_config()
        from textrobust.analyses.validity_figures import expected_fields

        results = [r.result for r in records]
        stats = pr_summary(results, s.threshold)
        return PRSummary(**counts(records, failures), examples=len(results), queries=sum(r.queries for r in records),
                         samples=config.sample_size(), delta=s.delta, epsilon=config.guaranteed_epsilon(),
                         epsilon_requested=s.epsilon, samples_needed=hoeffding_samples(s.epsilon, s.delta),
                         guaranteed=config.guaranteed(), pr=stats, **expected_fields(pr_units(records), stats.scored))

    def section(self, summary: PRSummary, records: Sequence[PRRecord], failures: Sequence[Failure],
                label_names: Sequence[str]) -> Section:
        from textrobust.analyses.sections import with_substitutes

        from textrobust.analyses.validity_figures import validity_block

        s = self.settings
        section = pr_section(summary, [r.result for r in records], s.fraction, label_names,
                             {r.example_id: r.validity or () for r in records})
        section = replace(section, validity=validity_block(self.name, pr_units(records), summary.pr.scored))
        return with_substitutes(section, s.candidates, PAPER_SOURCE)


#: The headline of PR's falsified share (``textrobust review`` puts its reviewed twin beside it).
FALSIFIED_LABEL = "falsified (a misclassified text found in Omega_r)"


def pr_section(s: PRSummary, results: Sequence[PRResult], fraction: float,
               label_names: Sequence[str] = (), validity: Mapping[str, Sequence[Any]] | None = None) -> Section:
    """The report section of the PR metric; every figure states the eps that the sample
    size actually guarantees (not the requested one). The examples are the first kept
    misclassified sample of each falsified example (the first 12); ``validity``: per
    example id, each kept sample's probability of keeping the meaning (issue 47)."""
    from textrobust.analyses.figures import violin_chart
    from textrobust.analyses.sections import example_row, figure, headline, table
    from textrobust.analyses.validity_figures import EXPECTED, finding_note, headline_note

    validity = validity or {}

    p = s.pr
    all_exact = p.scored > 0 and p.exact == p.scored  # every Omega_r enumerated: no sampling error
    heads = [headline("examples scored (correctly classified)", p.scored, "int",
                      "PR is measured on the correctly classified examples only"),
             headline("mean PR", p.mean_pr, "%",
                      f"PR: the share of the texts with up to {fraction:.0%} of the words replaced by synonyms "
                      "(Omega_r) that keep the label; mean over the examples"),
             headline("median PR", p.quantiles.get("median", math.nan), "%", "half of the examples have a higher PR"),
             headline(f"share with PR > {p.threshold:g}", p.share_above_threshold, "%",
                      f"share of the examples where more than {p.threshold:.0%} of Omega_r keeps the label"),
             headline(FALSIFIED_LABEL, p.falsified_share, "%",
                      "share of the examples with at least one text drawn from Omega_r that is misclassified; "
                      "the first few of them are kept for `textrobust review`, whose judgements say which keep "
                      "the meaning"),
             headline("expected valid share misclassified", s.expected_valid_success_rate, "%", headline_note(
                 {k: getattr(s, k) for k in (EXPECTED, f"{EXPECTED}_low", f"{EXPECTED}_high")}, p.scored,
                 "each example's misclassified share of Omega_r times the mean probability that its kept "
                 "misclassified samples keep the meaning"))]
    if all_exact:
        heads.append(headline("PR computed exactly on every example", "exact", "text",
                              "each Omega_r was small enough to check every text in it: no sampling error, "
                              "so no eps"))
    else:
        notes = [f"Hoeffding's bound on the sampling error of each PR_hat, from N samples per example"]
        if p.exact:
            notes.append(f"{p.exact} of the {p.scored} examples were computed exactly (no error)")
        if not s.guaranteed:
            notes.append(f"requested {s.epsilon_requested:g} needs N >= {s.samples_needed:,}")
        heads.append(headline(f"eps: |PR_hat - PR| < eps w.p. {1 - s.delta:.1%} at N = {s.samples:,}", s.epsilon,
                              "%", "; ".join(notes)))
    rows: list[list[Any]] = [["N, samples per example", s.samples], ["delta", f"{s.delta:g}"],
            ["eps guaranteed by N", f"{s.epsilon:.4f}"], ["eps requested", f"{s.epsilon_requested:g}"],
            ["N the requested eps needs", s.samples_needed], ["computed exactly (small)", p.exact],
            ["skipped (misclassified)", p.skipped], ["errors", s.errors], ["min PR, %", 100.0 * p.quantiles["min"]],
            ["q25 PR, %", 100.0 * p.quantiles["q25"]], ["mean radius r (words)", p.mean_radius],
            ["seconds per example", p.mean_seconds]]
    values = [r.estimate.pr for r in results if r.estimate is not None]
    figures = []
    if values:
        figures.append(figure("PR over the examples (Figure 5)", violin_chart(
            {f"r = {fraction:.0%} of length": values}, title="PR_hat per example", ylabel="PR_hat", percent=True),
            f"PR_hat: the share of N = {s.samples:,} texts drawn from Omega_r that keep the label (exact for small "
            "spaces)" + ("; every example here was computed exactly." if all_exact else
                         f"; within eps = {s.epsilon:.3f} of PR with probability {1 - s.delta:.1%}.")))
    examples = []
    for r in results:
        if r.text is None or r.estimate is None or not r.estimate.samples:
            continue  # a result stored before the samples were kept has none
        first = r.estimate.samples[0]
        probs = first.probabilities
        after = max(range(len(probs)), key=probs.__getitem__) if probs else None
        kept = list(validity.get(r.example_id) or ())
        note = (f"sample {first.draw + 1} of {r.estimate.evaluated:,} drawn; {r.estimate.evaluated - r.estimate.robust:,} "
                f"misclassified; PR_hat {r.estimate.pr:.3f}; {finding_note(kept[0] if kept else None)}")
        examples.append(example_row(r.example_id, "misclassified sample", label_names, r.label, r.text,
                                    first.text(r.text), r.predicted, after, note))
        if len(examples) >= 12:
            break
    # risk: 1 - mean PR, the expected share of Omega_r that is misclassified: the chance that
    # a random substitution of r words flips a correctly classified example.
    # Where the kept samples carry probabilities (issue 47), the expected valid share
    # misclassified and its interval set it instead.
    estimated = not math.isnan(s.expected_valid_success_rate)
    misclassified = None if math.isnan(p.mean_pr) else 1.0 - p.mean_pr
    risk = s.expected_valid_success_rate if estimated else misclassified
    point = None if misclassified is None else (
        f"With up to {fraction:.0%} of the words replaced by synonyms, {misclassified:.1%} of the texts are "
        f"misclassified on average (" + (f"mean PR {p.mean_pr:.3f}, computed exactly)" if all_exact else
                                         f"mean PR_hat {p.mean_pr:.3f} +- {s.epsilon:.3f}, N = {s.samples:,})")
        + (f"; weighted by the kept samples' probability of keeping the meaning, {s.expected_valid_success_rate:.1%} "
           f"(95% interval {s.expected_valid_success_rate_low:.1%} .. {s.expected_valid_success_rate_high:.1%})"
           if estimated else "") + ".")
    return Section(heads, [table("PR and its guarantee", ["metric", "value"], rows,
                                 note="N: texts sampled from Omega_r per example; eps: the sampling error N "
                                      "guarantees with probability 1 - delta; an example whose Omega_r holds "
                                      "at most N texts is computed exactly; r: words that may be replaced.")],
                   figures, examples, risk=risk, point=point,
                   risk_low=s.expected_valid_success_rate_low if estimated else None,
                   risk_high=s.expected_valid_success_rate_high if estimated else None)
