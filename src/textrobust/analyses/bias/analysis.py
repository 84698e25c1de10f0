"""Counterfactual token bias B_{p,k} over the neighbourhoods of a test set, on the
analysis protocol.

Zhang, Zhao, Zhang, Chang and Hsieh, "Double Perturbation: On the Robustness of Robustness
and Counterfactual Bias Evaluation", NAACL 2021 (../shared/papers/double-perturbation-
second-order-robustness-and-bias.txt), Section 4: ``B_{p,k}`` is the mean change of the
victim's probability of one class when a protected word ``p1`` is swapped for its partner
``p2`` in the sentences of Neighbor_k of the test sentences (Eq. 5-6), reported on all of
them (X_test) and on those where the swap changes nothing at k = 0 (X_filter).

The method is :mod:`textrobust.analyses.bias`; this module only adapts it to the protocol. The
units are the *anchors* (a test sentence and the position of its protected word; see
:func:`textrobust.analyses.bias.find_anchors`), each recorded as a :class:`BiasRecord` holding the
typed :class:`~textrobust.analyses.bias.AnchorMeasure`. The summary is Table 5 of the paper
(:func:`textrobust.analyses.bias.bias_table`: exact sums over the records); the report section
carries the tables, B against k (Figures 5 and 6, right) and the F_soft histograms
(Figure 6, left and middle).

Departures: the neighbourhood's fill-in model is the project's fine-tuned MiniLM times
Gemma 3 270M's left-context distribution (``minilm_gemma``) by default (the paper: BERT); Neighbor_k is enumerated up
to k = 1 and sampled above by default (the paper enumerates up to k = 2: 3-8 minutes per
anchor on two shared cores against about 10 s; ``exact_up_to=2`` restores it); the seed
of the sampled k is the run's ``--seed``. See :mod:`textrobust.analyses.bias.counterfactual` for the rest.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from textrobust.analyses.protocol import Analysis, Failure, Record, Summary, WorkerContext, counts
from textrobust.analyses.second_order.analysis import check_fill_in
from textrobust.analyses.bias.counterfactual import BINS, ENUMERATE_LIMIT, Anchor, AnchorMeasure, AnchorScan
from textrobust.analyses.bias.report import PairRow
from textrobust.analyses.bias.settings import BiasSettings
from textrobust.data.examples import Dataset
from textrobust.errors import ConfigError
from textrobust.sections import Figure, Headline, Section

__all__ = ["BiasAnalysis", "BiasRecord", "BiasSettings", "BiasSummary", "bias_section", "legacy_method_config"]

#: Pairs drawn in the figures (most test sentences first).
_FIGURE_PAIRS = 6


def legacy_method_config(settings: BiasSettings) -> dict[str, Any]:
    """What the measurement reads from ``settings``, with its fixed sizes, as every run so
    far has been stored (under ``bias`` of :meth:`BiasAnalysis.describe`, which resuming
    compares key by key; ``seed`` 0 there, the run's seed is stored with the run). Kept in
    this layout so that runs stored before issue 29 still resume."""
    s = settings
    return {"max_k": s.max_k, "exact_up_to": s.exact_up_to, "samples": s.samples, "enumerate_limit": ENUMERATE_LIMIT,
            "eps": s.eps, "label": s.label, "both_directions": s.both_directions, "bins": BINS, "seed": 0}


@dataclass(frozen=True)
class BiasRecord(Record):
    """One anchor (``example_id`` is the anchor id, ``<example id>@<position>``)."""

    measure: AnchorMeasure


@dataclass(frozen=True)
class BiasSummary(Summary):
    """Table 5 over the anchors: per pair, B_{p,k} and the counts on X_test and
    X_filter (``pairs``); ``texts``: sentences scored at every k, twins not counted;
    ``soft_class``: the class whose probability is f_soft (None when no anchor was
    measured); ``largest_filter_bias``: the largest |B_{p,max_k}| on X_filter over the
    pairs (NaN when X_filter is empty), and its pair; ``scan``: how the anchors were
    found (examples scanned, with a protected word, removed by which filter; None when
    summarised without the run's survey)."""

    max_k: int
    pairs: tuple[PairRow, ...]
    texts: int
    fill_requests: int
    soft_class: int | None
    largest_filter_bias: float
    largest_filter_pair: str
    scan: AnchorScan | None = None


class BiasAnalysis(Analysis[BiasSettings, BiasRecord, BiasSummary]):
    """B_{p,k} of the victim for the protected pairs of the chosen groups."""

    name = "bias"
    title = "Counterfactual token bias"
    paper = ("Zhang, Zhao, Zhang, Chang and Hsieh, \"Double Perturbation: On the Robustness of Robustness "
             "and Counterfactual Bias Evaluation\", NAACL 2021 (Section 4, Eq. 5-6, Table 5).")
    settings_type = BiasSettings
    record_type = BiasRecord
    unit = "anchors"

    def __init__(self, settings: Any = None) -> None:
        super().__init__(settings)
        from textrobust.analyses.bias.pairs import PROTECTED_GROUPS

        known = [*PROTECTED_GROUPS.names(), "all"]
        unknown = [g for g in self.settings.group if g not in known]
        if unknown or not self.settings.group:
            raise ConfigError(f"The 'group' parameter of BiasSettings must name protected groups among {known}. "
                              f"Got {list(self.settings.group)!r} instead.")
        check_fill_in(self.settings.fill_in, "BiasSettings")

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "bias": legacy_method_config(self.settings)}

    def units(self, dataset: Dataset) -> list[tuple[str, Any]]:
        from textrobust.analyses.bias import find_anchors, protected_groups

        anchors = find_anchors(self.select(dataset), protected_groups(self.settings.group),
                               both_directions=self.settings.both_directions)
        return [(anchor.id, anchor) for anchor in anchors]

    def survey(self, dataset: Dataset) -> dict[str, Any]:
        """The :class:`~textrobust.analyses.bias.AnchorScan` of the examples (why few or no anchors)."""
        from textrobust.analyses.bias import protected_groups, scan_anchors
        from textrobust.records import encode

        scan: dict[str, Any] = encode(scan_anchors(self.select(dataset), protected_groups(self.settings.group),
                                                   both_directions=self.settings.both_directions))
        return scan

    def check_victim(self, label_names: Sequence[str]) -> None:
        """``label`` (f_soft's class) must be one of the victim's classes."""
        label = self.settings.label
        if label is not None and label >= len(label_names):
            choices = " or ".join(f"{i} ({name})" for i, name in enumerate(label_names))
            raise ConfigError(f"The 'label' parameter of BiasSettings must be a class index of the victim, "
                              f"from 0 to {len(label_names) - 1}: {choices}. Got {label} instead.")

    def worker(self, context: WorkerContext) -> Callable[[Any], BiasRecord]:
        from textrobust.analyses.bias import measure_anchor, protected_groups, protected_words
        from textrobust.analyses.second_order import Neighbourhood
        from textrobust.fill_in.neighbourhood import load_fill_in

        s = self.settings
        layer = context.layer
        self.check_victim(tuple(layer.label_names))
        hood = Neighbourhood(load_fill_in(s.fill_in, context.placement), kappa=s.kappa, delta=s.delta)
        # every registered protected word is kept out of the neighbourhoods (footnote 7)
        banned = tuple(sorted(protected_words(protected_groups(["all"]))))

        def analyse(anchor: Anchor) -> BiasRecord:
            measure = measure_anchor(anchor, layer, hood, s, banned, seed=context.seed)
            return BiasRecord(anchor.id, "ok", measure.queries, measure.seconds, measure)

        return analyse

    def summarise(self, records: Sequence[BiasRecord], failures: Sequence[Failure]) -> BiasSummary:
        from textrobust.analyses.bias import bias_table

        measures = [r.measure for r in records]
        k = self.settings.max_k
        rows = tuple(bias_table(measures, max_k=k))
        largest, pair = math.nan, ""
        for row in rows:
            value = row.b["filter"].get(k, math.nan)
            if not math.isnan(value) and (math.isnan(largest) or abs(value) > abs(largest)):
                largest, pair = value, row.pair
        return BiasSummary(**counts(records, failures), max_k=k, pairs=rows,
                           texts=sum(sum(m.sizes) for m in measures),
                           fill_requests=sum(m.fill_requests for m in measures),
                           soft_class=measures[0].soft_class if measures else None,
                           largest_filter_bias=largest, largest_filter_pair=pair)

    def summarise_run(self, records: Sequence[BiasRecord], failures: Sequence[Failure],
                      survey: Mapping[str, Any] | None = None) -> BiasSummary:
        """:meth:`summarise` with the run's anchor scan (see :meth:`survey`)."""
        from textrobust.records import decode

        summary = self.summarise(records, failures)
        return summary if survey is None else dataclasses.replace(summary, scan=decode(AnchorScan, survey))

    def section(self, summary: BiasSummary, records: Sequence[BiasRecord], failures: Sequence[Failure],
                label_names: Sequence[str]) -> Section:
        return bias_section(summary, [r.measure for r in records], label_names, self.settings.label)


def _b(value: float) -> str | None:
    return None if math.isnan(value) else f"{value:+.4f}"


def bias_section(s: BiasSummary, measures: Sequence[AnchorMeasure], label_names: Sequence[str],
                 label: int | None = None) -> Section:
    """The report section of the bias analysis: Table 5 on X_filter and on X_test, B
    against k, and the F_soft histograms of the pairs with the most test sentences. B
    cells are signed strings with four decimals (|B| is often below 0.01); the numbers
    are in the summary. ``label``: the class of f_soft asked for (None: the last)."""
    from textrobust.analyses.figures import line_chart
    from textrobust.analyses.sections import figure, headline, table

    k = s.max_k
    c = s.soft_class if s.soft_class is not None else label if label is not None else len(label_names) - 1
    soft = str(label_names[c]) if 0 <= c < len(label_names) else str(c)
    in_filter = sum(1 for m in measures for p in m.partners if p.in_filter)
    measured = sum(len(m.partners) for m in measures)
    scan = s.scan
    heads: list[Headline] = []
    if scan is not None:
        heads.append(headline("examples scanned", scan.examples, "int",
                              f"{scan.with_word:,} with a {' or '.join(scan.groups)} word; "
                              f"{scan.with_anchor:,} with an anchor"))
    scale = (f"B: the mean change of P({soft}) when a pair's first word is replaced by its second, from -1 to "
             "+1; 0 = unbiased, +0.01 = one point of probability more with the second word")
    heads += [headline("anchors (test sentence x protected word)", s.units, "int",
                       (scan.reason() if scan is not None else None)
                       or "test sentences holding one protected word, each with that word's position"),
              headline("pairs measured", len(s.pairs), "int", "protected word pairs (e.g. he/she) with an anchor"),
              headline("in X_filter", in_filter / measured if measured else math.nan, "%",
                       "anchor-pairs where the swap moves no probability by eps at k = 0"),
              headline(f"largest |B| on X_filter at k={k}",
                       f"{_b(s.largest_filter_bias)} ({s.largest_filter_pair})" if s.largest_filter_pair else None,
                       "text", "the pair whose B at the largest k is farthest from 0; " + scale),
              headline("sentences scored", s.texts, "int", "Neighbor_k over all k; each also scored swapped")]
    tables = []
    for subset, name in (("filter", "X_filter"), ("test", "X_test")) if s.units else ():  # no empty tables
        rows = [[row.pair, row.originals.get(subset, 0), row.texts.get(subset, {}).get(k, 0),
                 *[_b(row.b.get(subset, {}).get(j, math.nan)) for j in range(k + 1)]]
                for row in s.pairs if row.originals.get(subset, 0)]
        tables.append(table(f"B_(p,k) on {name}, f_soft = P({soft})",
                            ["pair", "# orig", f"# k={k}", *[f"B k={j}" for j in range(k + 1)]], rows,
                            note=f"# orig: test sentences holding the pair's word; # k={k}: sentences scored at "
                                 f"distance k={k}; B k=j: B over Neighbor_j, the natural sentences j words away "
                                 "from the test sentences (k=0: the test sentences). " + scale + "."))
    shown = sorted(s.pairs, key=lambda r: -r.originals["test"])[:_FIGURE_PAIRS]
    figures = []
    for subset, name in (("filter", "X_filter"), ("test", "X_test")):
        series = {f"{r.pair} ({r.originals[subset]})": (list(range(k + 1)), [r.b[subset][j] for j in range(k + 1)])
                  for r in shown if r.originals.get(subset, 0)}
        if series:
            figures.append(figure(f"B_(p,k) against k on {name}", line_chart(
                series, title=f"B_(p,k) on {name} (test sentences per pair)", xlabel="neighbourhood distance k",
                ylabel=f"mean F_soft, P({soft})"),
                "B > 0: the victim gives the class a higher probability with the pair's second word."))
    figures += _histograms(measures, shown, k)
    point = None if not s.largest_filter_pair else (
        f"Counterfactual bias: on test sentences where swapping a protected word changes nothing, the "
        f"neighbourhood at k={k} reveals B = {_b(s.largest_filter_bias)} for {s.largest_filter_pair}.")
    if not s.units:
        reason = scan.reason() if scan is not None else None
        point = (f"Counterfactual bias: nothing was measured; {reason}" if reason else
                 "Counterfactual bias: no test sentence examined holds a protected word of the chosen groups "
                 "exactly once; nothing was measured (raise --n).")
    return Section(heads, tables, figures, point=point)


def _histograms(measures: Sequence[AnchorMeasure], rows: Sequence[PairRow], k: int) -> list[Figure]:
    """F_soft histograms at k = 0 and k = max_k of up to three pairs (X_filter; X_test
    where X_filter is empty), over the bins that hold values."""
    from textrobust.analyses.figures import line_chart
    from textrobust.analyses.sections import figure
    from textrobust.analyses.bias import pair_histogram

    out = []
    for row in rows[:3]:
        subset = "filter" if row.originals.get("filter", 0) else "test"
        curves = {j: pair_histogram(measures, row.pair, j, subset=subset) for j in sorted({0, k})}
        used = [int(i) for _, hist in curves.values() for i in hist.nonzero()[0]]
        if not used:
            continue
        lo, hi = max(min(used) - 2, 0), max(used) + 3
        series = {}
        for j, (edges, hist) in curves.items():
            hi_j = min(hi, len(hist))
            total = hist.sum()
            if total:
                centres = [(edges[i] + edges[i + 1]) / 2 for i in range(lo, hi_j)]
                series[f"k={j}"] = (centres, [hist[i] / total for i in range(lo, hi_j)])
        name = "X_filter" if subset == "filter" else "X_test"
        out.append(figure(f"F_soft histogram of {row.pair} ({name})", line_chart(
            series, title=f"{row.pair}: F_soft on {name}", xlabel="F_soft(x; p)", ylabel="share of sentences")))
    return out
