"""ACCS on the analysis protocol: constraint robustness of the similarity constraint.

Morris, "Second-Order NLP Adversarial Examples", BlackboxNLP 2020
(../shared/papers/second-order-adversarial-examples-accs.txt). For each constraint model
and threshold epsilon: the first-order attack against the audit's victim (similarity >=
epsilon as its constraint) and the second-order attack against the similarity model
(gamma antonym swaps it still scores >= epsilon); the constraint robustness curve and
ACCS, its normalised area, with bootstrap intervals and, for an exact sweep, the distance
of the monotone shortcut.

Units are :class:`~textrobust.analyses.accs.measures.AccsTask` (example x constraint
model x attack); each worker builds the attack parts, the constraint models and their
similarity memo once and shares them across its tasks and every threshold.

Departures: one victim per analysis (the audit's; compare victims with one audit each);
the rest as in :mod:`textrobust.analyses.accs.sweep` (Gemma for GPT-2, MiniLM for USE,
POS-aware inflected antonyms).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from textrobust.analyses.accs.measures import (
    FIRST,
    AccsRecord,
    AccsSummary,
    AccsTask,
    accs_tasks,
    bootstrap_accs,
    curves,
    shortcut_distance,
    table,
)
from textrobust.analyses.accs.scorers import SimilarityMemo, build_constraint_model
from textrobust.analyses.accs.settings import AccsAnalysisSettings, SweepMode
from textrobust.analyses.accs.sweep import AccsComponents
from textrobust.analyses.protocol import Analysis, Failure, WorkerContext, counts
from textrobust.sections import Section

if TYPE_CHECKING:
    from textrobust.data.examples import Dataset

__all__ = ["AccsAnalysis", "AccsAnalysisSettings", "AccsSummary", "analyse_task", "legacy_method_config"]


def legacy_method_config(settings: AccsAnalysisSettings) -> dict[str, Any]:
    """What the attacks and the sweep read from ``settings``, as every run so far has been
    stored (under ``components.settings`` of :meth:`AccsAnalysis.describe`, which resuming
    compares key by key): the grid as ``epsilons``, ``max_drop`` as ``max_log_prob_drop``.
    Kept in this layout so that runs stored before issue 29 still resume."""
    s = settings
    return {"epsilons": list(s.epsilons), "gamma": s.gamma, "beam_width": s.beam_width,
            "max_log_prob_drop": s.max_drop, "lm_mode": s.lm_mode.value, "indirect_antonyms": s.indirect_antonyms,
            "sweep": s.sweep.value, "budget": s.budget}


def analyse_task(components: AccsComponents, layer: Any, memo: Any, task: AccsTask) -> AccsRecord:
    """Sweep one task: the first-order attack against ``layer`` (a QueryLayer) or the
    second-order attack against ``memo`` (the constraint model), at every threshold."""
    warm = components.warm(task.example.text)
    began = time.perf_counter()
    before = layer.queries
    if task.kind == FIRST:
        points = components.sweep_first_order(layer, memo, task.example)
    else:
        points = components.sweep_second_order(memo, task.example)
    skipped = any(p.status == "skipped" for p in points)
    status = "skipped" if skipped else ("succeeded" if any(p.success for p in points) else "failed")
    return AccsRecord(task.unit_id, status, layer.queries - before, time.perf_counter() - began, task.kind,
                      task.constraint, task.example.id, task.example.label, task.example.text, skipped,
                      tuple(points), warm)


class AccsAnalysis(Analysis[AccsAnalysisSettings, AccsRecord, AccsSummary]):
    """Constraint robustness curves and ACCS of the similarity constraint (Morris 2020).

    ``components`` and ``scorers`` replace the factories of the attack parts (given the
    analysis's settings) and of the constraint models (given a spec): test doubles, for the
    in-process executor only. The default factories load their models (Gemma for the LM
    constraint, the sentence encoders) on the run's placement (``--device``, ``--dtype``).
    """

    name = "accs"
    title = "Constraint robustness (ACCS)"
    paper = ("Morris, Second-Order NLP Adversarial Examples, BlackboxNLP 2020: constraint robustness curve "
             "and Adjusted Constraint C-Statistic (ACCS).")
    settings_type = AccsAnalysisSettings
    record_type = AccsRecord
    unit = "sweeps"  # per example: one per constraint model and one of the victim

    def __init__(self, settings: Any = None, *,
                 components: Callable[[AccsAnalysisSettings], AccsComponents] | None = None,
                 scorers: Callable[[str], Any] | None = None) -> None:
        super().__init__(settings)
        self._components = components
        self._scorers = scorers

    def describe(self) -> dict[str, Any]:
        parts = (self._components or AccsComponents)(self.settings).describe()
        return {**super().describe(), "components": {**parts, "settings": legacy_method_config(self.settings)}}

    def units(self, dataset: Dataset) -> list[tuple[str, Any]]:
        return list(accs_tasks(self.select(dataset).examples, self.settings.constraint))

    def worker(self, context: WorkerContext) -> Callable[[Any], AccsRecord]:
        placement = context.placement
        components = (self._components(self.settings) if self._components is not None
                      else AccsComponents(self.settings, placement=placement))
        scorer: Callable[[str], Any] = (self._scorers if self._scorers is not None
                                        else lambda spec: build_constraint_model(spec, placement))
        memos = {spec: SimilarityMemo(scorer(spec)) for spec in self.settings.constraint}
        layer = context.layer

        def analyse(task: AccsTask) -> AccsRecord:
            return analyse_task(components, layer, memos[task.constraint], task)

        return analyse

    def summarise(self, records: Sequence[AccsRecord], failures: Sequence[Failure]) -> AccsSummary:
        mine = records
        epsilons = self.settings.epsilons
        by_constraint = curves(mine, epsilons)
        rows = table(mine, by_constraint)
        warm = {r.example: r.warm_seconds for r in mine if r.warm_seconds}
        return AccsSummary(
            **counts(records, failures),
            examples=len({r.example for r in mine}),
            epsilons=epsilons,
            accs={row.constraint: row.accs for row in rows},
            curves=by_constraint,
            rows=rows,
            bootstrap=bootstrap_accs(mine, by_constraint),
            shortcut=shortcut_distance(mine, by_constraint, epsilons) if self.settings.sweep is SweepMode.EXACT
            else None,
            lm_warm_seconds_per_example=(float(np.mean(list(warm.values()))) if warm else 0.0) if mine else math.nan,
        )

    def section(self, summary: AccsSummary, records: Sequence[AccsRecord], failures: Sequence[Failure],
                label_names: Sequence[str]) -> Section:
        from textrobust.analyses.accs.report import accs_section

        return accs_section(summary, records, label_names)
