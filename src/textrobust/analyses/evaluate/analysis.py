"""Clean accuracy of a victim on a data set, through the query layer and the run store.

Every prediction is recorded in the run store as soon as its batch returns, so an
interrupted evaluation resumes where it stopped.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import Field

from textrobust.analyses.protocol import Analysis, Failure, Record, Settings, Summary, WorkerContext, counts
from textrobust.data.examples import Dataset
from textrobust.sections import Section

__all__ = ["AccuracySummary", "EvaluateAnalysis", "EvaluateSettings", "EvaluationBatch", "EvaluationRecord",
           "accuracy"]


@dataclass(frozen=True)
class EvaluationRecord:
    """The victim's answer on one example."""

    example_id: str
    label: int
    predicted: int
    probabilities: tuple[float, ...]

    @property
    def correct(self) -> bool:
        return self.label == self.predicted


def accuracy(records: Sequence[EvaluationRecord]) -> float:
    """Share of records whose prediction equals the label (0.0 for no records)."""
    return sum(r.correct for r in records) / len(records) if records else 0.0


def _shares(records: Sequence[EvaluationRecord]) -> dict[str, float]:
    """Share of ``records`` predicted as each label index (as a string), over the labels
    that occur as label or prediction."""
    keys = sorted({r.label for r in records} | {r.predicted for r in records})
    return {str(k): sum(r.predicted == k for r in records) / len(records) for k in keys} if records else {}


# ---- the analysis ---------------------------------------------------------------------------------

class EvaluateSettings(Settings):
    """Clean accuracy: ``n`` examples (None: all), ``batch_size`` texts per forward pass
    (also the unit of work stored at once)."""

    n: int | None = Field(default=None, ge=0, description="Only the first n examples (default: all).")
    batch_size: int = Field(default=64, ge=1, le=100_000,
                            description="Texts per forward pass (and per stored unit).")


@dataclass(frozen=True)
class EvaluationBatch(Record):
    """The victim's answers on one batch of examples (``example_id`` names the batch)."""

    ids: tuple[str, ...]
    labels: tuple[int, ...]
    predicted: tuple[int, ...]
    probabilities: tuple[tuple[float, ...], ...]

    def records(self) -> list[EvaluationRecord]:
        return [EvaluationRecord(i, label, p, probs)
                for i, label, p, probs in zip(self.ids, self.labels, self.predicted, self.probabilities)]


@dataclass(frozen=True)
class AccuracySummary(Summary):
    """Clean accuracy over the scored examples (NaN when none were scored)."""

    examples: int
    accuracy: float
    accuracy_per_label: dict[str, float]
    queries: int
    #: share of the scored examples predicted as each label (keys as ``accuracy_per_label``)
    predicted_share: dict[str, float] = field(default_factory=dict)


class EvaluateAnalysis(Analysis[EvaluateSettings, EvaluationBatch, AccuracySummary]):
    """Clean accuracy of the victim, batched through the query layer."""

    name = "evaluate"
    title = "Clean accuracy"
    paper = "Accuracy on the unperturbed examples (the baseline every other figure is read against)."
    settings_type = EvaluateSettings
    record_type = EvaluationBatch
    unit = "batches"

    def units(self, dataset: Dataset) -> list[tuple[str, Any]]:
        examples = list(self.select(dataset))
        size = self.settings.batch_size
        chunks = [tuple(examples[i:i + size]) for i in range(0, len(examples), size)]
        return [(f"batch:{chunk[0].id}:{chunk[-1].id}:{len(chunk)}", chunk) for chunk in chunks]

    def worker(self, context: WorkerContext) -> Callable[[Any], EvaluationBatch]:
        layer = context.layer

        def analyse(chunk: Sequence[Any]) -> EvaluationBatch:
            before, began = layer.queries, time.perf_counter()
            probs = layer.probabilities([e.text for e in chunk])
            return EvaluationBatch(
                example_id=f"batch:{chunk[0].id}:{chunk[-1].id}:{len(chunk)}", status="ok",
                queries=layer.queries - before, seconds=time.perf_counter() - began,
                ids=tuple(e.id for e in chunk), labels=tuple(e.label for e in chunk),
                predicted=tuple(int(row.argmax()) for row in probs),
                probabilities=tuple(tuple(float(p) for p in row) for row in probs))

        return analyse

    @classmethod
    def export_rows(cls, record: EvaluationBatch) -> Sequence[Any]:
        """One row per example of the batch (its queries and time are the batch's)."""
        batch = record
        return [{"example_id": r.example_id, "status": batch.status, "label": r.label, "predicted": r.predicted,
                 "correct": r.correct, "probabilities": list(r.probabilities), "batch": batch.example_id}
                for r in batch.records()]

    def summarise(self, records: Sequence[EvaluationBatch], failures: Sequence[Failure]) -> AccuracySummary:
        flat = [r for batch in records for r in batch.records()]
        names = sorted({str(i) for r in flat for i in [r.label]})
        return AccuracySummary(**counts(records, failures), examples=len(flat),
                               accuracy=accuracy(flat) if flat else float("nan"),
                               accuracy_per_label={n: accuracy([r for r in flat if str(r.label) == n]) for n in names},
                               queries=sum(r.queries for r in records),
                               predicted_share=_shares(flat))

    def section(self, summary: AccuracySummary, records: Sequence[EvaluationBatch], failures: Sequence[Failure],
                label_names: Sequence[str]) -> Section:
        from textrobust.analyses.sections import headline, table
        from textrobust.zoo.cards import one_class_warning

        s = summary

        def name(key: str) -> str:
            return label_names[int(key)] if key.isdigit() and int(key) < len(label_names) else key

        per_label = [[name(k), v] for k, v in s.accuracy_per_label.items()]
        shares = {name(k): v for k, v in s.predicted_share.items()}
        warning = one_class_warning(shares, "the examples scored")
        return Section(
            headline=[headline("clean accuracy", s.accuracy, "%",
                               "share of the examples the victim classifies right, without any attack"),
                      headline("examples", s.examples, "int", "examples scored"),
                      headline("queries", s.queries, "int", "texts sent to the victim (each distinct text once)")],
            tables=[table("accuracy per label", ["label", "accuracy"], per_label),
                    table("predictions per label", ["label", "share of the predictions"],
                          [[k, v] for k, v in shares.items()],
                          "a model that gives one label to more than 95% of the texts is flagged")],
            # shown among the verdict's points (issue 30)
            point=None if warning is None else f"Warning: the victim {warning}.")
