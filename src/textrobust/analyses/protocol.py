"""The protocol every analysis follows, and the base types it is written in.

An analysis answers one question about a victim on a data set (how often an attack flips
it, how large its certified radius is, ...). It declares:

- ``settings_type``: a frozen :class:`Settings` (validated, unknown keys rejected);
- ``record_type``: a frozen dataclass derived from :class:`Record` (example id, status,
  queries, seconds, plus its own typed fields), stored through the generic codec of
  :mod:`textrobust.records`, never as a hand-written payload dict;
- :meth:`Analysis.units`: how a data set splits into independent units of work (examples,
  batches of examples, bias anchors, ACCS tasks), each with a stable id;
- :meth:`Analysis.worker`: per worker, build the components (attack, scorers, models) once
  and return ``analyse(unit_payload) -> Record``;
- :meth:`Analysis.summarise`: a pure function of the records (and the failures) to a typed
  summary; :meth:`Analysis.section`: the summary as a typed report section
  (:class:`~textrobust.sections.Section`: headline figures, tables, figures, examples).

The orchestrator (:mod:`textrobust.audit`) runs any set of analyses over one victim and
data set on an executor, into one run store, and renders every section into one report.
Adding an analysis is one module and one line in :data:`textrobust.analyses.ANALYSES`.
"""

from __future__ import annotations

import dataclasses
import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeAlias, TypedDict, TypeVar, cast

from pydantic import field_validator

from textrobust.config import Config
from textrobust.devices import Placement
from textrobust.records import encode
from textrobust.sections import Section

if TYPE_CHECKING:
    from textrobust.data.examples import Dataset
    from textrobust.validity.overrides import UserLabels
    from textrobust.victims.query import QueryLayer

__all__ = ["Analysis", "AnyAnalysis", "Failure", "Record", "RecordT", "Settings", "SettingsT", "Summary", "SummaryT",
           "WorkerContext", "ERROR"]

#: The status of a unit whose work raised (the store flags the row as failed).
ERROR = "error"


#: The largest whole number a setting may hold (JSON-safe; far beyond any real size).
MAX_SETTING_INT = 2**53


class Settings(Config):
    """Base of every analysis's settings: frozen, typed, unknown keys rejected, whole
    numbers at most :data:`MAX_SETTING_INT` in size (a huge ``n`` or budget is a typo),
    real numbers finite."""

    @field_validator("*", mode="after")
    @classmethod
    def _bounded_ints(cls, value: Any) -> Any:
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_SETTING_INT:
            raise ValueError("must be at most 2^53 in size")
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError("must be a finite number")
        return value


@dataclass(frozen=True)
class Record:
    """The base of every analysis's per-unit record."""

    example_id: str
    status: str
    queries: int
    seconds: float


@dataclass(frozen=True)
class Failure:
    """A unit whose work raised: read from the store's own failure flag, not guessed."""

    example_id: str
    error: str
    message: str


@dataclass(frozen=True)
class Summary:
    """The base of every analysis's summary: how many units ended how."""

    units: int
    ok: int
    errors: int
    budget_exhausted: int

    def to_dict(self) -> dict[str, Any]:
        """The summary as JSON-ready data."""
        return encode(self)


@dataclass(frozen=True)
class WorkerContext:
    """What a worker hands an analysis: the victim behind one query layer, and the data's
    label names. One context per worker; the analysis builds its components from it."""

    layer: QueryLayer
    label_names: tuple[str, ...]
    seed: int = 0
    extras: Mapping[str, Any] = field(default_factory=dict)
    #: the run's device and float type (``--device``, ``--dtype``): where the analysis's own
    #: torch models (causal LM, fill-in models, sentence encoders) run
    placement: Placement = field(default_factory=Placement)
    #: a user's labelled substitutions (``--labelled``, :mod:`textrobust.validity.overrides`),
    #: which the validated synonyms of the analysis apply; None: none given
    user_labels: UserLabels | None = None


#: The settings, record and summary types an :class:`Analysis` is written in.
SettingsT = TypeVar("SettingsT", bound=Settings)
RecordT = TypeVar("RecordT", bound=Record)
SummaryT = TypeVar("SummaryT", bound=Summary)


class Analysis(ABC, Generic[SettingsT, RecordT, SummaryT]):
    """One analysis: settings in, units of work, typed records, a pure summary.

    Generic over its settings, record and summary types: a subclass names them once
    (``class MsrAnalysis(Analysis[MsrSettings, MsrRecord, MsrSummary])``) and its methods
    take and give those types, with no casts. ``settings_type`` and ``record_type`` are the
    same types as class attributes (the store decodes records and the CLI builds settings
    from them). Subclasses set the class attributes and fill :meth:`worker` and
    :meth:`summarise`; the rest has defaults that suit per-example analyses.
    """

    #: Registry name (also the CLI command and the report section id).
    name: ClassVar[str]
    #: A one-line title for the report.
    title: ClassVar[str]
    #: The paper the method comes from (citation text).
    paper: ClassVar[str]
    # ClassVars cannot hold type variables: these are the bounds, and a subclass sets the
    # very types it names in ``Analysis[...]``.
    settings_type: ClassVar[type[Settings]]
    record_type: ClassVar[type[Record]]
    settings: SettingsT
    #: What one unit of work is (plural), for progress displays: examples, batches...
    unit: ClassVar[str] = "examples"
    #: How to read the figures, for the command's --help (after the title and the paper);
    #: empty when the title says enough.
    help_note: ClassVar[str] = ""

    def __init__(self, settings: SettingsT | Mapping[str, Any] | None = None) -> None:
        if settings is None:
            built: Settings = self.settings_type()
        elif isinstance(settings, Mapping):
            built = self.settings_type(**settings)
        elif isinstance(settings, self.settings_type):
            built = settings
        else:
            raise TypeError(f"{type(self).__name__} takes {self.settings_type.__name__}, "
                            f"not {type(settings).__name__}.")
        # the one cast: ``settings_type`` is the class's SettingsT (a ClassVar cannot say so)
        self.settings = cast(SettingsT, built)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.settings!r})"

    def describe(self) -> dict[str, Any]:
        """The exact configuration (stored with the run; resuming checks it)."""
        return {"analysis": self.name, "settings": self.settings.to_dict()}

    def select(self, dataset: Dataset) -> Dataset:
        """The part of ``dataset`` this analysis works on (default: the first ``n``
        examples when the settings have an ``n``)."""
        return dataset.take(getattr(self.settings, "n", None))

    def units(self, dataset: Dataset) -> list[tuple[str, Any]]:
        """``(unit_id, payload)`` pairs; default: one unit per example."""
        return [(example.id, example) for example in self.select(dataset)]

    def survey(self, dataset: Dataset) -> Mapping[str, Any] | None:
        """What drawing the units from ``dataset`` found that the records cannot show
        (JSON-ready), e.g. why there are no units; None (the default): nothing. The
        orchestrator stores it with the run and hands it to :meth:`summarise_run`."""
        return None

    def check_victim(self, label_names: Sequence[str]) -> None:
        """Check the settings against the victim's classes before any unit runs (raise
        :class:`~textrobust.errors.ConfigError`); default: nothing to check."""

    @abstractmethod
    def worker(self, context: WorkerContext) -> Callable[[Any], RecordT]:
        """Build this worker's components; return ``analyse(payload) -> Record``."""

    @abstractmethod
    def summarise(self, records: Sequence[RecordT], failures: Sequence[Failure]) -> SummaryT:
        """A pure summary of the stored records (failures counted, never hidden)."""

    def summarise_run(self, records: Sequence[RecordT], failures: Sequence[Failure],
                      survey: Mapping[str, Any] | None = None) -> SummaryT:
        """The summary of a run: :meth:`summarise`, with the run's :meth:`survey` for an
        analysis that reports it (which overrides this)."""
        return self.summarise(records, failures)

    def section(self, summary: SummaryT, records: Sequence[RecordT], failures: Sequence[Failure],
                label_names: Sequence[str]) -> Section:
        """The report section of this analysis (:class:`~textrobust.sections.Section`: typed,
        checked against the ``textrobust.report`` schema where it is built)."""
        return Section()

    @classmethod
    def export_rows(cls, record: RecordT) -> Sequence[Any]:
        """What ``textrobust export`` writes for one stored record, each item flattened into
        one row (:func:`textrobust.records.flat_fields`); default: the record itself. An
        analysis whose record holds several examples gives one item per example."""
        return [record]


#: Any analysis, whatever its types (the orchestrator, the registry and the report hold these).
AnyAnalysis: TypeAlias = Analysis[Any, Any, Any]


class Counts(TypedDict):
    """The base counts of a :class:`Summary`, as keyword arguments (``Summary(**counts(...), ...)``)."""

    units: int
    ok: int
    errors: int
    budget_exhausted: int


def counts(records: Sequence[Record], failures: Sequence[Failure]) -> Counts:
    """The base counts of a :class:`Summary` (budget exhaustion read from a record's
    ``budget_exhausted`` field where it has one)."""
    exhausted = sum(bool(getattr(r, "budget_exhausted", False)) for r in records)
    return {"units": len(records) + len(failures), "ok": len(records), "errors": len(failures),
            "budget_exhausted": exhausted}


def field_names(record_type: type[Record]) -> list[str]:
    """The field names of a record type (for tables and exports)."""
    return [f.name for f in dataclasses.fields(record_type)]
