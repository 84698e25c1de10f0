"""Clean accuracy of a victim on a data set, through the query layer and the run store.

Every prediction is recorded in the run store as soon as its batch returns, so an
interrupted evaluation resumes where it stopped.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from pydantic import Field

from textrobust.analyses.protocol import Analysis, Failure, Record, Settings, Summary, WorkerContext, counts
from textrobust.data.examples import Dataset
from textrobust.errors import ConfigError
from textrobust.victims.query import QueryLayer

if TYPE_CHECKING:
    from textrobust.store import Run

__all__ = ["AccuracySummary", "EvaluateAnalysis", "EvaluateSettings", "EvaluationBatch", "EvaluationRecord",
           "EvaluationSummary", "evaluate", "accuracy", "summarize"]


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

    def to_payload(self) -> dict[str, Any]:
        return {
            "example_id": self.example_id,
            "label": self.label,
            "predicted": self.predicted,
            "correct": self.correct,
            "probabilities": list(self.probabilities),
        }

    @classmethod
    def from_payload(cls, payload: Mapping[str, Any]) -> EvaluationRecord:
        return cls(
            str(payload["example_id"]),
            int(payload["label"]),
            int(payload["predicted"]),
            tuple(float(p) for p in payload["probabilities"]),
        )


@dataclass(frozen=True)
class EvaluationSummary:
    """Figures of one evaluation: accuracy overall and per label, and the query cost."""

    examples: int
    accuracy: float
    accuracy_per_label: dict[str, float]
    computed: int  # examples scored in this session (the rest came from a resumed run)
    queries: int
    cache_hits: int
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def accuracy(records: Sequence[EvaluationRecord]) -> float:
    """Share of records whose prediction equals the label (0.0 for no records)."""
    return sum(r.correct for r in records) / len(records) if records else 0.0


def accuracy_per_label(records: Sequence[EvaluationRecord], label_names: Sequence[str]) -> dict[str, float]:
    out: dict[str, float] = {}
    for index, name in enumerate(label_names):
        mine = [r for r in records if r.label == index]
        out[name] = accuracy(mine) if mine else float("nan")
    return out


def evaluate(
    layer: QueryLayer,
    dataset: Dataset,
    run: Run | None = None,
    *,
    batch_size: int = 64,
    on_progress: Callable[[int, int], None] | None = None,
) -> tuple[list[EvaluationRecord], EvaluationSummary]:
    """Score every example of ``dataset`` with the victim behind ``layer``.

    With a ``run``, examples already recorded in it are not scored again, and each new
    record is written as soon as its batch returns. ``on_progress(done, total)`` is
    called after each batch.
    """
    if batch_size < 1:
        raise ConfigError(f"The 'batch_size' parameter of evaluate must be >= 1. Got {batch_size} instead.")
    if tuple(layer.label_names) != tuple(dataset.label_names):
        if len(layer.label_names) != len(dataset.label_names):
            raise ConfigError(
                f"The victim predicts {len(layer.label_names)} labels {list(layer.label_names)} but "
                f"data set '{dataset.name}' has {len(dataset.label_names)} {list(dataset.label_names)}."
            )
    done: set[str] = run.done_ids() if run is not None else set()
    todo = [(i, e) for i, e in enumerate(dataset.examples) if e.id not in done]
    before = layer.stats()
    start = time.perf_counter()
    finished = len(dataset) - len(todo)
    if on_progress:
        on_progress(finished, len(dataset))
    fresh: list[EvaluationRecord] = []
    for offset in range(0, len(todo), batch_size):
        chunk = todo[offset : offset + batch_size]
        t0 = time.perf_counter()
        probs = layer.probabilities([e.text for _, e in chunk])
        share = (time.perf_counter() - t0) / len(chunk)
        # queries are counted per batch (in the summary), not per example
        for (position, example), row in zip(chunk, probs):
            record = EvaluationRecord(example.id, example.label, int(row.argmax()), tuple(float(p) for p in row))
            fresh.append(record)
            if run is not None:
                run.record(example.id, record.to_payload(), position=position, seconds=share)
        finished += len(chunk)
        if on_progress:
            on_progress(finished, len(dataset))
    if run is not None:
        records = [EvaluationRecord.from_payload(r.payload) for r in run.results() if "predicted" in r.payload]
    else:
        records = fresh
    spent = layer.stats().minus(before)
    summary = summarize(records, dataset.label_names, computed=len(fresh), queries=spent.queries,
                        cache_hits=spent.cache_hits, seconds=time.perf_counter() - start)
    return records, summary


def summarize(
    records: Sequence[EvaluationRecord],
    label_names: Sequence[str],
    *,
    computed: int,
    queries: int,
    cache_hits: int,
    seconds: float,
) -> EvaluationSummary:
    return EvaluationSummary(
        examples=len(records),
        accuracy=accuracy(records),
        accuracy_per_label=accuracy_per_label(records, label_names),
        computed=computed,
        queries=queries,
        cache_hits=cache_hits,
        seconds=seconds,
    )


def _shares(records: Sequence[EvaluationRecord]) -> dict[str, float]:
    """Share of ``records`` predicted as each label index (as a string), over the labels
    that occur as label or prediction."""
    keys = sorted({r.label for r in records} | {r.predicted for r in records})
    return {str(k): sum(r.predicted == k for r in records) / len(records) for k in keys} if records else {}


# ---- the analysis ---------------------------------------------------------------------------------

class EvaluateSettings(Settings):
    """Clean accuracy: ``n`` examples (None: all), ``batch_size`` texts per forward pass
    (also the unit of work stored at once)."""

    n: int | None = Field(default=None, ge=0)
    batch_size: int = Field(default=64, ge=1, le=100_000)


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


class EvaluateAnalysis(Analysis):
    """Clean accuracy of the victim, batched through the query layer."""

    name = "evaluate"
    title = "Clean accuracy"
    paper = "Accuracy on the unperturbed examples (the baseline every other figure is read against)."
    settings_type = EvaluateSettings
    record_type = EvaluationBatch
    settings: EvaluateSettings
    unit = "batches"

    def units(self, dataset: Dataset) -> list[tuple[str, Any]]:
        examples = list(self.select(dataset))
        size = self.settings.batch_size
        chunks = [tuple(examples[i:i + size]) for i in range(0, len(examples), size)]
        return [(f"batch:{chunk[0].id}:{chunk[-1].id}:{len(chunk)}", chunk) for chunk in chunks]

    def worker(self, context: WorkerContext) -> Callable[[Any], Record]:
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
    def export_rows(cls, record: Record) -> Sequence[Any]:
        """One row per example of the batch (its queries and time are the batch's)."""
        batch = cast(EvaluationBatch, record)
        return [{"example_id": r.example_id, "status": batch.status, "label": r.label, "predicted": r.predicted,
                 "correct": r.correct, "probabilities": list(r.probabilities), "batch": batch.example_id}
                for r in batch.records()]

    def summarise(self, records: Sequence[Record], failures: Sequence[Failure]) -> AccuracySummary:
        flat = [r for batch in records for r in cast(EvaluationBatch, batch).records()]
        names = sorted({str(i) for r in flat for i in [r.label]})
        return AccuracySummary(**counts(records, failures), examples=len(flat),
                               accuracy=accuracy(flat) if flat else float("nan"),
                               accuracy_per_label={n: accuracy([r for r in flat if str(r.label) == n]) for n in names},
                               queries=sum(r.queries for r in records),
                               predicted_share=_shares(flat))

    def section(self, summary: Summary, records: Sequence[Record], failures: Sequence[Failure],
                label_names: Sequence[str]) -> dict[str, Any]:
        from textrobust.analyses.sections import headline, table
        from textrobust.zoo.cards import one_class_warning

        s = cast(AccuracySummary, summary)

        def name(key: str) -> str:
            return label_names[int(key)] if key.isdigit() and int(key) < len(label_names) else key

        per_label = [[name(k), v] for k, v in s.accuracy_per_label.items()]
        shares = {name(k): v for k, v in s.predicted_share.items()}
        warning = one_class_warning(shares, "the examples scored")
        spec: dict[str, Any] = {
            "headline": [headline("clean accuracy", s.accuracy, "%",
                                  "share of the examples the victim classifies right, without any attack"),
                         headline("examples", s.examples, "int", "examples scored"),
                         headline("queries", s.queries, "int", "texts sent to the victim (each distinct text once)")],
            "tables": [table("accuracy per label", ["label", "accuracy"], per_label),
                       table("predictions per label", ["label", "share of the predictions"],
                             [[k, v] for k, v in shares.items()],
                             "a model that gives one label to more than 95% of the texts is flagged")],
            "figures": [], "examples": []}
        if warning is not None:  # shown among the verdict's points (issue 30)
            spec["point"] = f"Warning: the victim {warning}."
        return spec
