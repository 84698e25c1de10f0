"""Second-order attacks over a data set, on the analysis protocol.

Zhang, Zhao, Zhang, Chang and Hsieh, "Double Perturbation: On the Robustness of Robustness
and Counterfactual Bias Evaluation", NAACL 2021 (../shared/papers/double-perturbation-
second-order-robustness-and-bias.txt), Section 3: for each test sentence ``x0``, choose a
synonym patch ``p`` and search Neighbor_k(x0) for a *vulnerable* ``x~0`` whose label the
single swap ``p`` flips. The method is :mod:`textrobust.analyses.second_order`; this module only
adapts it to the protocol: one unit per example, a :class:`SecondOrderRecord` holding the
typed :class:`~textrobust.analyses.second_order.SecondOrderResult`, the engine's attack metrics
as the summary (:func:`textrobust.analyses.second_order.summary`).

Departures from the paper: the neighbourhood's fill-in model is MiniLM with its top layers
fine-tuned as a masked LM by the project, times Gemma 3 270M's next-word distribution from
the left context (``minilm_gemma``) by default (the paper: BERT); ``minilm_tuned`` is the
MiniLM part alone; ``causal_rescore`` (Gemma propose-and-rescore) takes minutes per sentence.
Multi-class victims use the generalised goal of :mod:`textrobust.analyses.second_order.goal`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import Field

from textrobust.analyses.protocol import Analysis, Failure, Record, Settings, Summary, WorkerContext, counts
from textrobust.attack.candidates.choice import CANDIDATES_HELP, CandidateChoice
from textrobust.attack.problem import Search
from textrobust.devices import Placement
from textrobust.attack.results import Status
from textrobust.data.examples import Example
from textrobust.errors import ConfigError
from textrobust.fill_in.registry import DEFAULT_FILL_IN, FILL_IN_HELP
from textrobust.analyses.second_order.checks import SecondOrderChecks
from textrobust.analyses.second_order.method import SecondOrderResult
from textrobust.sections import Section

__all__ = ["DEFAULT_CONTENT", "DEFAULT_FLUENCY", "DEFAULT_PICK", "DEFAULT_MARGIN", "DEFAULT_MAX_K", "DEFAULT_SENTENCES", "DEFAULT_POS_CHECK",
           "build_checks", "SecondOrderAnalysis", "SecondOrderRecord", "SecondOrderSettings", "SecondOrderSummary",
           "check_fill_in", "second_order_search"]

#: The most words a search changes when ``max_k`` is not given: the paper's settings except
#: SO-Beam, 1 instead of 6: the paper's Neighbor_1 (issue 48; issue 38 had 3). People read
#: neighbours with more changes as far less natural: on the dev half of the labelled findings,
#: those that change content words only read 4.21 against x0's 4.95 at l0 <= 1, 3.10 at
#: l0 = 2 (benchmarks/results/second_order.md). ``--max-k 3`` is issue 38's wider search,
#: ``--max-k 6`` the paper's.
DEFAULT_MAX_K = {"so-beam": 1, "so-enum": 2, "random": 6}

#: Issue 38's checks of a vulnerable example, as shipped (see
#: :mod:`textrobust.analyses.second_order.checks`; the paper: 0, 0 = off, False, False),
#: chosen on the dev half of the labelled findings (benchmarks/results/second_order.md): a
#: flip 0.05 from the boundary on both sides, a neighbour more fluent than x0 under Gemma:
#: its perplexity at most 0.9 times x0's (issue 48, with one changed word: on the dev half,
#: the Neighbor_1 findings read 0.94 as natural as x0 at 0.9, 0.90 at issue 38's 1.0; on the
#: test half, 118 findings of this default read 0.88, and the floor did not help there).
DEFAULT_MARGIN = 0.05
DEFAULT_FLUENCY = 0.9
DEFAULT_SENTENCES = True
DEFAULT_POS_CHECK = True
#: Neighbours change content words only (never a stop word, never into one): issue 38's
#: round 4, chosen on the dev half (post hoc on the paper's-count findings then read, those that
#: touched no stop word lost 1.33 naturalness points against 2.69 for all; 1.47 against 2.54 on
#: the 54 dev findings read by the end of the round; benchmarks/results/second_order.md).
DEFAULT_CONTENT = True
#: Which of the vulnerable neighbours one search step finds is reported: ``fluent``, the most
#: fluent (lowest Gemma perplexity relative to x0; issue 48), or ``clearest``, the clearest
#: flip (the paper: the smallest Eq. 4 loss). The flips all clear the margin; the fluency is
#: what readers judge.
Pick = Literal["fluent", "clearest"]
DEFAULT_PICK: Pick = "fluent"


class SecondOrderSettings(Settings):
    """A second-order attack: the search ``method`` (so-beam, so-enum, random), the first
    ``n`` examples, a victim query ``budget`` per example (each scored neighbour costs
    two), the ``fill_in`` model of the neighbourhoods, SO-Beam's ``beam_width``, the most
    words changed ``max_k`` (None: SO-Beam 1, SO-Enum 2, random 6), Algorithm 1's ``kappa`` and ``delta``,
    an extra total-variation ``min_gap`` (0: the paper), ``quality`` (perplexity of
    ``x0`` and of the vulnerable example under Gemma; slower), and the patch pairs'
    ``candidates``: the validated synonyms (default, judged in ``x0``) or ``paper``, the
    project's stand-in for the paper's counter-fitted pairs (WordNet's frequent senses
    checked by cosine, :class:`~textrobust.attack.candidates.checked.CheckedSynonyms`).
    Issue 38's checks of a vulnerable example (:mod:`textrobust.analyses.second_order.checks`):
    ``margin`` from the decision boundary (0: the paper's count), ``fluency`` floor relative
    to x0 (0: off), ``sentences``, ``pos_check``, ``content`` (content words only),
    ``pick`` (issue 48: report the most fluent of a step's vulnerable neighbours, or the
    clearest flip); whether second-order then sets the
    verdict's level depends on people's reading of such findings
    (:mod:`textrobust.analyses.second_order.evidence`)."""

    method: str = Field(default="so-beam", description="so-beam (Algorithm 2), so-enum (exhaustive, k <= 2; "
                        "slower) or random (the baseline).")
    n: int | None = Field(default=20, ge=0, description="Only the first n examples.")
    budget: int | None = Field(default=50_000, ge=1, description="Victim queries per example (each neighbour "
                               "costs 2).")
    fill_in: str = Field(default=DEFAULT_FILL_IN, description=FILL_IN_HELP)
    beam_width: int = Field(default=20, ge=1, description="SO-Beam: texts kept per step.")
    max_k: int | None = Field(default=None, ge=1, description="Most words changed (default: SO-Beam 1, the paper's "
                              "Neighbor_1; its k was 6; SO-Enum 2; random 6).")
    kappa: int = Field(default=20, ge=1, description="Neighbourhood: at most kappa words per position.")
    delta: float = Field(default=3.0, ge=0.0, description="Neighbourhood: keep words within delta of the best "
                         "score.")
    min_gap: float = Field(default=0.0, ge=0.0, le=1.0, description="Also require this total-variation gap "
                           "(0 = the paper).")
    quality: bool = Field(default=True, description="Perplexity (Gemma) of x0 and of the vulnerable example; "
                          "--no-quality is faster.")
    candidates: CandidateChoice = Field(default="validated", description="the patch pairs: " + CANDIDATES_HELP)
    margin: float = Field(default=DEFAULT_MARGIN, ge=0.0, lt=0.5, description="A vulnerable example counts only "
                          "when it and its patched twin are both at least this far from the decision boundary "
                          "(0 = the paper's count).")
    fluency: float = Field(default=DEFAULT_FLUENCY, ge=0.0, description="Fluency floor: the vulnerable "
                           "example's perplexity (Gemma) at most this times x0's (x0 itself always passes; 0: off, "
                           "the paper).")
    sentences: bool = Field(default=DEFAULT_SENTENCES, description="Neighbours stay sentences: never turn a "
                            "content word into a stop word or repeat the word beside it.")
    pos_check: bool = Field(default=DEFAULT_POS_CHECK, description="Changed words and the patch keep their part "
                            "of speech in context.")
    content: bool = Field(default=DEFAULT_CONTENT, description="Neighbours change content words only: never a "
                          "stop word, never into one (--no-content: any word, the paper).")
    pick: Pick = Field(default=DEFAULT_PICK, description="Of the vulnerable neighbours a search step finds, "
                       "report the most fluent under Gemma (fluent) or the clearest flip (clearest, the paper).")


#: The paper's patch pairs, as built here (``--candidates paper``).
PAPER_SOURCE = ("WordNet's 2 most frequent senses with counter-fitted cosine >= 0.6 (for the paper's 8 "
                "counter-fitted neighbours within L2 0.5)")


@dataclass(frozen=True)
class SecondOrderRecord(Record):
    """One example under a second-order attack (status: succeeded, failed, or skipped
    when no synonym patch applies)."""

    result: SecondOrderResult
    budget_exhausted: bool = False
    #: the probability that the patch keeps the meaning in the neighbour (issue 47; the
    #: neighbour's naturalness is not in it: the readers' gate covers that)
    validity: dict[str, Any] | None = None


@dataclass(frozen=True)
class SecondOrderSummary(Summary):
    """The engine's attack metrics over the second-order results (success rate =
    vulnerable examples found / attacked; skipped = no patch applies; NaN when there is
    nothing to average), plus how many successes were ``x0`` itself and the fill-in
    requests per attacked example."""

    examples: int
    succeeded: int
    failed: int
    skipped: int
    success_rate: float
    vulnerable_at_start: int
    l0: float
    words_perturbed: float
    queries_per_example: float
    fill_requests_per_example: float
    median_perplexity_before: float
    median_perplexity_after: float
    seconds_per_example: float
    margin: float = 0.0
    success_rate_margin0: float = math.nan
    near_tie_share: float = math.nan
    expected_valid_success_rate: float = math.nan
    expected_valid_success_rate_low: float = math.nan
    expected_valid_success_rate_high: float = math.nan


def second_order_units(records: Sequence[SecondOrderRecord]) -> list[Any]:
    """One unit per vulnerable example found (item ``second-order/EXAMPLE_ID``): its patch's
    probability of keeping the meaning in the neighbour (None when it carries none)."""
    from textrobust.analyses.validity_figures import unit

    return [unit(f"second-order/{r.result.example_id}", r.result.example_id, r.validity) for r in records
            if r.result.status is Status.SUCCEEDED and r.result.patch is not None]


#: A flip whose smaller distance from the decision boundary is below this counts as a near
#: tie when the run's margin is 0 (issue 38: 13 of 15 hand-read flips had a side within 0.1).
NEAR_TIE = 0.05


def margin_figures(results: Sequence[SecondOrderResult], margin: float) -> tuple[float, float]:
    """The success rate at margin 0 and the near-tie share of those margin-0 flips (below
    ``margin``, or :data:`NEAR_TIE` when ``margin`` is 0), over the attacked results.

    A run with a margin records the first flip it saw at margin 0 that passed the other
    checks (``first_flip_distance``): that flip is where the margin-0 search would have
    stopped. A run without checks stopped at its first flip: its successes."""
    from textrobust.analyses.second_order.checks import boundary_distance

    attacked = [r for r in results if r.status is not Status.SKIPPED]
    if not attacked:
        return math.nan, math.nan
    distances: list[float] = []
    for r in attacked:
        first = r.extras.get("first_flip_distance")
        if first is not None:
            distances.append(float(first))
        elif "first_flip_distance" not in r.extras and r.status is Status.SUCCEEDED \
                and r.vulnerable_patched_probabilities is not None:
            rows = boundary_distance(np.array([r.vulnerable_probabilities, r.vulnerable_patched_probabilities]))
            distances.append(float(rows.min()))
    bar = margin if margin > 0 else NEAR_TIE
    near = sum(d < bar for d in distances) / len(distances) if distances else math.nan
    return len(distances) / len(attacked), near


def check_fill_in(name: str, owner: str) -> None:
    """``name`` must be a registered fill-in or a local masked-LM folder (checked without
    loading it); the message names ``owner``'s ``fill_in`` parameter."""
    from textrobust.fill_in.registry import FILL_INS

    if name in FILL_INS or Path(name).expanduser().exists() or "/" in name or "\\" in name:
        return
    raise ConfigError(f"The 'fill_in' parameter of {owner} must be one of {FILL_INS.names()} or the folder of a "
                      f"local Hugging Face masked LM. Got {name!r} instead.")


def build_checks(settings: SecondOrderSettings, perplexity: Any = None) -> SecondOrderChecks:
    """The checks of a vulnerable example that ``settings`` ask for (``perplexity``: texts ->
    perplexities for the fluency floor; None: Gemma, loaded on first use)."""
    return SecondOrderChecks(margin=settings.margin, fluency=settings.fluency or None,
                             no_fragments=settings.sentences, pos_in_context=settings.pos_check,
                             content_only=settings.content, fluent_first=settings.pick == "fluent",
                             perplexity=perplexity)


def second_order_search(settings: SecondOrderSettings, seed: int) -> Search:
    """The search of ``settings.method`` with its settings (the random baseline seeded)."""
    from textrobust.analyses.second_order import SECOND_ORDER_SEARCHES

    k = settings.max_k if settings.max_k is not None else DEFAULT_MAX_K[settings.method]
    factory = SECOND_ORDER_SEARCHES.get(settings.method)
    if settings.method == "so-beam":
        return factory(beam_width=settings.beam_width, max_k=k)
    if settings.method == "random":
        return factory(max_k=k, seed=seed)
    return factory(max_k=k)


class SecondOrderAnalysis(Analysis[SecondOrderSettings, SecondOrderRecord, SecondOrderSummary]):
    """Second-order attack (SO-Beam, SO-Enum or the random baseline) on every example."""

    name = "second-order"
    title = "Second-order robustness"
    paper = ("Zhang, Zhao, Zhang, Chang and Hsieh, \"Double Perturbation: On the Robustness of Robustness "
             "and Counterfactual Bias Evaluation\", NAACL 2021 (Section 3, Algorithms 1-2).")
    settings_type = SecondOrderSettings
    record_type = SecondOrderRecord

    def __init__(self, settings: Any = None) -> None:
        super().__init__(settings)
        from textrobust.analyses.second_order import SECOND_ORDER_SEARCHES

        if self.settings.method not in SECOND_ORDER_SEARCHES:
            raise ConfigError(f"The 'method' parameter of SecondOrderSettings must be one of "
                              f"{SECOND_ORDER_SEARCHES.names()}. Got {self.settings.method!r} instead.")
        check_fill_in(self.settings.fill_in, "SecondOrderSettings")
        build_checks(self.settings)  # validates the checks' settings now, not in a worker

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "search": repr(second_order_search(self.settings, 0))}

    def worker(self, context: WorkerContext) -> Callable[[Any], SecondOrderRecord]:
        from textrobust.analyses.second_order import Neighbourhood, PatchFinder, SecondOrderAttack, add_perplexity
        from textrobust.fill_in.neighbourhood import load_fill_in

        s = self.settings
        layer = context.layer
        neighbourhood = Neighbourhood(load_fill_in(s.fill_in, context.placement), kappa=s.kappa, delta=s.delta)
        lm = None
        if s.quality or s.fluency or s.pick == "fluent":
            from textrobust.lm import CausalLM

            lm = CausalLM.default(placement=context.placement)
        checks = build_checks(s, lm.perplexity if lm is not None else None)
        attack = SecondOrderAttack(layer, neighbourhood, second_order_search(s, context.seed),
                                   patches=PatchFinder(layer, patch_synonyms(s.candidates, context.placement, context.user_labels)),
                                   budget=s.budget, min_gap=s.min_gap, name=s.method, checks=checks)
        if not s.quality:
            lm = None
        from textrobust.attack.candidates import swap_validity

        judge = swap_validity.validity_judge(None, context.placement)

        def analyse(example: Example) -> SecondOrderRecord:
            result = attack.attack(example)
            if lm is not None:
                result = add_perplexity(result, lm)
            validity = None
            if result.status is Status.SUCCEEDED and result.patch is not None:
                validity = swap_validity.judge_finding(judge, result.vulnerable, result.patch.apply(result.vulnerable))
            return SecondOrderRecord(example.id, result.status.value, result.queries, result.seconds, result,
                                     result.budget_exhausted, validity)

        return analyse

    def summarise(self, records: Sequence[SecondOrderRecord], failures: Sequence[Failure]) -> SecondOrderSummary:
        from textrobust.analyses.second_order import summary

        from textrobust.analyses.validity_figures import expected_fields

        s = summary([r.result for r in records])
        rate0, near = margin_figures([r.result for r in records], self.settings.margin)
        expected = expected_fields(second_order_units(records), s["succeeded"] + s["failed"])
        return SecondOrderSummary(margin=self.settings.margin, success_rate_margin0=rate0, near_tie_share=near,
            **expected,
            **counts(records, failures), examples=s["examples"], succeeded=s["succeeded"], failed=s["failed"],
            skipped=s["skipped"], success_rate=s["success_rate"], vulnerable_at_start=s["vulnerable_at_start"],
            l0=s["l0"], words_perturbed=s["words_perturbed"], queries_per_example=s["queries_per_example"],
            fill_requests_per_example=s["fill_requests_per_example"],
            median_perplexity_before=s["median_perplexity_before"],
            median_perplexity_after=s["median_perplexity_after"], seconds_per_example=s["seconds_per_example"])

    def section(self, summary: SecondOrderSummary, records: Sequence[SecondOrderRecord], failures: Sequence[Failure],
                label_names: Sequence[str]) -> Section:
        from textrobust.analyses.sections import with_substitutes

        from textrobust.analyses.validity_figures import validity_block

        section = second_order_section(summary, [r.result for r in records], label_names, self.settings.method,
                                       {r.example_id: r.validity for r in records})
        section = replace(section, validity=validity_block(self.name, second_order_units(records),
                                                           summary.succeeded + summary.failed))
        return with_substitutes(section, self.settings.candidates, PAPER_SOURCE)


def patch_synonyms(candidates: str, placement: Placement | None = None, user_labels: Any | None = None) -> Any:
    """The patch pairs' synonyms: the validated source (its models on ``placement``; None:
    the CPU in float32; a user's ``--labelled`` substitutions applied when given), or None
    for the paper's stand-in (:func:`~textrobust.analyses.second_order.patch.default_synonyms`)."""
    if candidates == "paper":
        return None
    from textrobust.attack.candidates.choice import validated_source

    return validated_source(placement=placement, user_labels=user_labels)


def second_order_section(s: SecondOrderSummary, results: Sequence[SecondOrderResult], label_names: Sequence[str],
                         method: str, validity: Mapping[str, Any] | None = None) -> Section:
    """The report section of a second-order attack. Example rows show the vulnerable
    ``x~0`` and its patched twin ``x~0 (+) p`` with their predictions (the flip the
    single synonym swap causes); the note gives the test sentence ``x0``; ``validity``:
    per example id, the patch's probability of keeping the meaning (issue 47)."""
    from textrobust.analyses.sections import example_row, headline, outcome_figures, table
    from textrobust.analyses.validity_figures import EXPECTED, LABEL, finding_note, headline_note

    validity = validity or {}

    margin_note = (f" by at least {s.margin:.2f} from the decision boundary on both sides" if s.margin > 0 else "")
    heads = [headline("second-order success rate", s.success_rate, "%",
                      "share of the attacked test sentences with a vulnerable natural neighbour: one whose "
                      f"prediction a single synonym swap flips{margin_note} (found / attacked)"),
             headline(LABEL, s.expected_valid_success_rate, "%", headline_note(
                 {k: getattr(s, k) for k in (EXPECTED, f"{EXPECTED}_low", f"{EXPECTED}_high")},
                 s.succeeded + s.failed, "the vulnerable examples found (the patch's probability only; the "
                 "neighbour's naturalness is the readers' gate)")),
             headline("success rate at margin 0", s.success_rate_margin0, "%",
                      "the paper's count: any flip, however close to the decision boundary"),
             headline("near-tie share", s.near_tie_share, "%",
                      "of the flips at margin 0, the share with a side closer than "
                      f"{s.margin if s.margin > 0 else NEAR_TIE:.2f} to the decision boundary"),
             headline("vulnerable examples found", s.succeeded, "int", "test sentences with such a neighbour"),
             headline("x0 itself vulnerable", s.vulnerable_at_start, "int",
                      "successes with l0 = 0: the test sentence itself flips under the synonym swap"),
             headline("words changed (l0)", s.l0, "float",
                      "words changed from the test sentence to its vulnerable neighbour, mean over successes"),
             headline("queries per example", s.queries_per_example, "float", "victim queries spent per example"),
             headline("fill-in requests per example", s.fill_requests_per_example, "float",
                      "masked-word fill-in calls that built the neighbours, per example")]
    # A budget-exhausted example is also FAILED: its own row keeps the rows disjoint.
    ended = sum(1 for r in results if r.status is Status.FAILED and not r.budget_exhausted)
    rows = [["vulnerable example found", s.succeeded], ["not found (search ended)", ended],
            ["skipped (no synonym patch)", s.skipped], ["budget exhausted", s.budget_exhausted],
            ["errors", s.errors], ["median perplexity before", s.median_perplexity_before],
            ["median perplexity after", s.median_perplexity_after], ["seconds per example", s.seconds_per_example]]
    figures = outcome_figures(
        method, ["found", "not found", "skipped", "budget exhausted", "errors"],
        [s.succeeded, ended, s.skipped, s.budget_exhausted, s.errors],
        [r.l0 for r in results if r.status is Status.SUCCEEDED], l0_from=0,
        l0_title="Words changed from x0 to the vulnerable example", l0_chart_title="words changed (l0; 0 = x0 itself)",
        l0_caption="l0 = 0: the test sentence itself is flipped by the patch (a first-order adversarial example)."
    ) if results else []
    successes = sorted((r for r in results if r.status is Status.SUCCEEDED and r.patch is not None), key=evidence_order)
    examples = [example_row(r.example_id, r.status.value, label_names, r.label, r.vulnerable,
                            r.patch.apply(r.vulnerable), _argmax(r.vulnerable_probabilities),
                            _argmax(r.vulnerable_patched_probabilities),
                            f"patch {r.patch.source} -> {r.patch.target}; {finding_note(validity.get(r.example_id))}; "
                            + ("x0 itself" if r.l0 == 0 else f"{r.l0} word(s) from x0: {r.original}")
                            + f"; {_scores_note(r)}")
                for r in successes if r.patch is not None][:12]
    estimated = not math.isnan(s.expected_valid_success_rate)
    risk = s.expected_valid_success_rate if estimated else (s.success_rate if not math.isnan(s.success_rate) else None)
    point = None if risk is None else (
        f"{method}: for {s.succeeded} of {s.succeeded + s.failed} test sentences a natural neighbour is flipped "
        f"by a single synonym swap{margin_note} (second-order, Zhang et al. 2021)"
        + (f"; weighted by the patch's probability of keeping the meaning, {s.expected_valid_success_rate:.1%} "
           f"(95% interval {s.expected_valid_success_rate_low:.1%} .. {s.expected_valid_success_rate_high:.1%})"
           if estimated else "") + ".")
    tables = [table("outcomes and cost", ["metric", "value"], rows)]
    if successes:
        tables.append(three_findings(successes[:3], label_names))
    return Section(heads, tables, figures, examples, risk=risk, point=point,
                   risk_low=s.expected_valid_success_rate_low if estimated else None,
                   risk_high=s.expected_valid_success_rate_high if estimated else None)


def fluency_ratio(result: SecondOrderResult) -> float | None:
    """The naturalness check's score of a finding: the vulnerable example's perplexity
    (Gemma) over x0's (1.0 for x0 itself; lower is more fluent), from the run's quality
    figures or the checks' record of the flips they accepted; None when neither was kept."""
    if result.l0 == 0:
        return 1.0
    before, after = result.extras.get("perplexity_before"), result.extras.get("perplexity_after")
    if before and after is not None:
        return float(after) / float(before)
    text = str(result.vulnerable)
    return next((float(ratio) for found, ratio, *_ in result.extras.get("accepted", ())
                 if found == text and ratio is not None), None)


def flip_clearance(result: SecondOrderResult) -> float:
    """How clear the flip is: the smaller distance of the vulnerable example and its patched
    twin from the decision boundary (0 when the patched probabilities are unknown)."""
    from textrobust.analyses.second_order.checks import boundary_distance

    if result.vulnerable_patched_probabilities is None:
        return 0.0
    rows = np.array([result.vulnerable_probabilities, result.vulnerable_patched_probabilities])
    return float(boundary_distance(rows).min())


def evidence_order(result: SecondOrderResult) -> tuple[bool, float, float]:
    """The report's order of findings, best evidence first (issue 48): x0 itself (a test
    sentence, as natural as it gets), then the neighbours by their naturalness check's score
    (perplexity over x0's, lowest first; unknown last), each group's clearer flips first."""
    ratio = fluency_ratio(result)
    return (result.l0 > 0, round(ratio, 2) if ratio is not None else math.inf, -flip_clearance(result))


def _scores_note(result: SecondOrderResult) -> str:
    ratio = fluency_ratio(result)
    fluency = "n/a" if ratio is None else f"{ratio:.2f}"
    return (f"naturalness check: perplexity {fluency} x x0's; flip {flip_clearance(result):.2f} from the decision "
            "boundary")


def three_findings(results: Sequence[SecondOrderResult], label_names: Sequence[str]) -> Any:
    """A table of findings to read: the test sentence, the neighbour found, the patch, the
    victim's probability of the neighbour's label before and after the patch, and the
    naturalness check's score (the neighbour's perplexity over x0's)."""
    from textrobust.analyses.sections import table

    rows = []
    for r in results:
        if r.patch is None or r.vulnerable_patched_probabilities is None:
            continue
        label = _argmax(r.vulnerable_probabilities) or 0
        name = label_names[label] if label < len(label_names) else str(label)
        ratio = fluency_ratio(r)
        rows.append([str(r.original), "(x0 itself)" if r.l0 == 0 else str(r.vulnerable),
                     f"{r.patch.source} -> {r.patch.target}",
                     f"P({name}) {r.vulnerable_probabilities[label]:.2f} -> {r.vulnerable_patched_probabilities[label]:.2f}",
                     "n/a" if ratio is None else f"{ratio:.2f}"])
    return table("findings to read", ["test sentence (x0)", "neighbour found", "patch", "probability before -> after",
                                      "perplexity / x0's"],
                 rows, note="The best evidence first: x0 itself, then the most fluent neighbours (perplexity under "
                            "Gemma over x0's, the naturalness check's score), the clearer flips first. Read them: is "
                            "the neighbour a sentence a person would write, is the patch a synonym here, and is the "
                            "flip more than a near tie?")


def _argmax(values: Sequence[float] | None) -> int | None:
    return None if not values else max(range(len(values)), key=lambda i: values[i])
