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
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from pydantic import Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from textrobust.analyses.accs.curve import RobustnessCurve, epsilon_grid
from textrobust.analyses.accs.measures import (
    FIRST,
    AccsRecord,
    AccsRow,
    AccsTask,
    Bootstrap,
    Shortcut,
    accs_tasks,
    bootstrap_accs,
    curves,
    shortcut_distance,
    table,
)
from textrobust.analyses.accs.scorers import SimilarityMemo, build_constraint_model, parse_constraint_model
from textrobust.analyses.accs.sweep import AccsComponents, AccsSettings, LMMode, SweepMode
from textrobust.analyses.protocol import Analysis, Failure, Record, Settings, Summary, WorkerContext, counts
from textrobust.errors import ConfigError

if TYPE_CHECKING:
    from textrobust.data.examples import Dataset

__all__ = ["AccsAnalysis", "AccsAnalysisSettings", "AccsSummary", "analyse_task"]

#: The most thresholds a grid may have (each one is a full sweep of both attacks).
MAX_THRESHOLDS = 1000


class AccsAnalysisSettings(Settings):
    """Settings of ``textrobust accs`` (field names are the CLI options).

    ``n``: the first n sentences; ``constraint``: constraint models (minilm, bertscore,
    word_mean, mpnet:<folder>, encoder:<folder>); ``eps_start``/``eps_stop``/``eps_step``:
    the threshold grid (paper: 0.75..1.00 by 0.01); ``gamma``: antonyms the second-order
    attack must swap (paper: 3); ``beam_width``: of its beam search (paper: 2);
    ``max_drop``: the LM constraint's largest log-probability drop in nats (paper: 2.0);
    ``lm_mode``: left_word (GPT-2 style), window or none; ``indirect_antonyms``: also
    antonyms of adjective satellites; ``sweep``: exact or monotone; ``budget``: victim
    queries per first-order attack (None: unlimited, as the paper).
    """

    n: int | None = Field(default=20, ge=0)
    constraint: tuple[str, ...] = ("minilm",)
    eps_start: float = Field(default=0.75, ge=0.0, le=1.0)
    eps_stop: float = Field(default=1.0, ge=0.0, le=1.0)
    eps_step: float = Field(default=0.01, gt=0.0, le=1.0)
    gamma: int = Field(default=3, ge=1)
    beam_width: int = Field(default=2, ge=1)
    max_drop: float = Field(default=2.0, ge=0.0)
    lm_mode: LMMode = LMMode.LEFT_WORD
    indirect_antonyms: bool = True
    sweep: SweepMode = SweepMode.EXACT
    budget: int | None = Field(default=None, ge=1)

    @field_validator("constraint")
    @classmethod
    def _known(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if not value:
            raise PydanticCustomError("constraint_model", "must name at least one constraint model")
        for spec in value:
            try:
                parse_constraint_model(spec)
            except ConfigError as exc:
                raise PydanticCustomError("constraint_model", "names an unknown constraint model ({detail})",
                                          {"detail": str(exc)}) from None
        return tuple(dict.fromkeys(s.strip() for s in value))  # repeats run once (as before)

    @field_validator("eps_stop")
    @classmethod
    def _after_start(cls, value: float, info: ValidationInfo) -> float:
        start = info.data.get("eps_start")
        if start is not None and value < start:
            raise PydanticCustomError("threshold_order", "must be >= eps_start ({start})", {"start": start})
        return value

    @field_validator("eps_step")
    @classmethod
    def _few_enough(cls, value: float, info: ValidationInfo) -> float:
        start, stop = info.data.get("eps_start"), info.data.get("eps_stop")
        if start is not None and stop is not None and (stop - start) / value + 1 > MAX_THRESHOLDS:
            raise PydanticCustomError("threshold_count", "gives more than {most} thresholds from eps_start to "
                                      "eps_stop (each is a full sweep of both attacks)", {"most": MAX_THRESHOLDS})
        return value

    @property
    def epsilons(self) -> tuple[float, ...]:
        return epsilon_grid(self.eps_start, self.eps_stop, self.eps_step)

    def method(self) -> AccsSettings:
        """The settings of the attacks and the sweep (:class:`AccsSettings`)."""
        return AccsSettings(epsilons=self.epsilons, gamma=self.gamma, beam_width=self.beam_width,
                            max_log_prob_drop=self.max_drop, lm_mode=self.lm_mode,
                            indirect_antonyms=self.indirect_antonyms, sweep=self.sweep, budget=self.budget)


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


class AccsAnalysis(Analysis):
    """Constraint robustness curves and ACCS of the similarity constraint (Morris 2020).

    ``components`` and ``scorers`` replace the factories of the attack parts (given the
    method settings) and of the constraint models (given a spec): test doubles, for the
    in-process executor only.
    """

    name = "accs"
    title = "Constraint robustness (ACCS)"
    paper = ("Morris, Second-Order NLP Adversarial Examples, BlackboxNLP 2020: constraint robustness curve "
             "and Adjusted Constraint C-Statistic (ACCS).")
    settings_type = AccsAnalysisSettings
    record_type = AccsRecord
    unit = "sweeps"  # per example: one per constraint model and one of the victim

    def __init__(self, settings: Any = None, *, components: Callable[[AccsSettings], AccsComponents] | None = None,
                 scorers: Callable[[str], Any] | None = None) -> None:
        super().__init__(settings)
        self._components = components or AccsComponents
        self._scorers = scorers or build_constraint_model

    @property
    def _settings(self) -> AccsAnalysisSettings:
        return cast(AccsAnalysisSettings, self.settings)

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "components": self._components(self._settings.method()).describe()}

    def units(self, dataset: Dataset) -> list[tuple[str, Any]]:
        return list(accs_tasks(self.select(dataset).examples, self._settings.constraint))

    def worker(self, context: WorkerContext) -> Callable[[Any], Record]:
        components = self._components(self._settings.method())
        memos = {spec: SimilarityMemo(self._scorers(spec)) for spec in self._settings.constraint}
        layer = context.layer

        def analyse(task: AccsTask) -> AccsRecord:
            return analyse_task(components, layer, memos[task.constraint], task)

        return analyse

    def summarise(self, records: Sequence[Record], failures: Sequence[Failure]) -> AccsSummary:
        mine = [cast(AccsRecord, r) for r in records]
        epsilons = self._settings.epsilons
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
            shortcut=shortcut_distance(mine, by_constraint, epsilons) if self._settings.sweep is SweepMode.EXACT
            else None,
            lm_warm_seconds_per_example=(float(np.mean(list(warm.values()))) if warm else 0.0) if mine else math.nan,
        )

    def section(self, summary: Summary, records: Sequence[Record], failures: Sequence[Failure],
                label_names: Sequence[str]) -> dict[str, Any]:
        from textrobust.analyses.accs.report import accs_section

        return accs_section(cast(AccsSummary, summary), [cast(AccsRecord, r) for r in records], label_names)
