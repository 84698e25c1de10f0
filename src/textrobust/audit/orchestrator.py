"""Run analyses over a victim and a data set: one store, one executor, one report.

:func:`run` resolves the victim and the data once, checks that their labels agree (by
name), opens one run store in ``out``, and for each analysis starts (or, with
``resume=True``, reopens) a run of that analysis, sends the units not yet stored to the
executor, writes every finished record the moment it comes back (only the driver writes,
so resume works the same under every executor and nothing is written twice), summarises
the stored records and writes ``summary.json``, ``report.json`` and ``report.html``.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from textrobust.analyses.protocol import AnyAnalysis, Failure, Record, Summary, WorkerContext
from textrobust.audit.labels import load_aligned
from textrobust.audit.limits import (
    LengthReport,
    check_length_policy,
    check_max_words,
    default_max_words,
    limit_length,
)
from textrobust.audit.profiles import DEFAULT_ANALYSES, data_flags, not_run
from textrobust.audit.run_folder import (
    LEGACY_SETTINGS,
    RunFolderLock,
    check_resumable,
    resumed_analyses,
    stored_labels,
)
from textrobust.audit.sources import DataSource, VictimSource
from textrobust.devices import MIN_AGREEMENT, Placement, agreement, resolve_placement, texts_sample
from textrobust.errors import BadRow, ConfigError, StoreError, TextRobustError
from textrobust.records import encode
from textrobust.threads import ThreadPlan, Threads, apply_threads
from textrobust.sections import Section
from textrobust.validity.cache import max_bytes as verdict_cache_cap
from textrobust.validity.reviews import newest_judgement

if TYPE_CHECKING:
    from rich.progress import Progress

    from textrobust.data.examples import Dataset
    from textrobust.store import Run, RunStore
    from textrobust.validity.overrides import UserLabels

__all__ = ["AnalysisResult", "AuditResult", "DEFAULT_ANALYSES", "AnalysisWorkerSpec", "rebuild_report", "run"]



#: Bad rows listed by name in the report and summary (the rest are counted).
MAX_SHOWN_BAD_ROWS = 50


@dataclass(frozen=True)
class AnalysisResult:
    """One analysis of an audit: its run, typed records, failures and summary. ``queries``:
    the model queries of this session; ``queries_stored``: of every result stored for the
    run, over all its sessions (what the report counts; None: not known, ``queries``)."""

    name: str
    run_id: str
    summary: Summary
    records: tuple[Record, ...]
    failures: tuple[Failure, ...]
    computed: int
    resumed: int
    seconds: float
    queries: int
    settings: Mapping[str, Any]
    section: Section
    analysis_type: type[AnyAnalysis]
    queries_stored: int | None = None

    @property
    def all_queries(self) -> int:
        """The run's model queries over all its sessions (this session's when not known)."""
        return self.queries if self.queries_stored is None else self.queries_stored


@dataclass(frozen=True)
class AuditResult:
    """What :func:`run` did: one :class:`AnalysisResult` per analysis, and the files."""

    out: Path
    results: Mapping[str, AnalysisResult]
    report: Mapping[str, Any]
    report_html: Path | None
    report_json: Path
    seconds: float
    threads: ThreadPlan | None = None

    def __getitem__(self, name: str) -> AnalysisResult:
        return self.results[name]


# ---- workers ------------------------------------------------------------------------------------
class _Worker:
    """Runs one analysis in one worker: the analysis's ``analyse`` behind one query layer."""

    def __init__(self, analyse: Any, layer: Any) -> None:
        self._analyse = analyse
        self._layer = layer

    def __call__(self, payload: Any) -> Any:
        return encode(self._analyse(payload))

    def queries(self) -> int:
        return int(self._layer.queries)


@dataclass(frozen=True)
class AnalysisWorkerSpec:
    """Picklable recipe of a worker: the victim (a folder, or an object for in-process
    executors), the analysis (settings only: analyses hold no state before
    :meth:`~textrobust.analyses.protocol.Analysis.worker`), the data's label names, and the
    run's device and float type (``placement``: the victim loads there, and the analysis's
    own models follow it)."""

    victim: VictimSource
    analysis: AnyAnalysis
    label_names: tuple[str, ...]
    seed: int
    batch_size: int | None = None
    placement: Placement = Placement()
    user_labels: UserLabels | None = None

    def build(self) -> _Worker:
        from textrobust.victims.query import QueryLayer

        victim = self.victim.load(self.placement)
        layer = QueryLayer(victim, batch_size=self.batch_size) if self.batch_size else QueryLayer(victim)
        context = WorkerContext(layer=layer, label_names=self.label_names, seed=self.seed,
                                placement=self.placement, user_labels=self.user_labels)
        return _Worker(self.analysis.worker(context), layer)

    def build_group(self, n: int) -> tuple[list[_Worker], Any]:
        """``n`` workers over one victim, their forward passes merged by a
        :class:`~textrobust.victims.gate.BatchingGate` (the ``lockstep`` executor)."""
        from textrobust.victims.gate import BatchingGate
        from textrobust.victims.query import QueryLayer

        gate = BatchingGate(self.victim.load(self.placement))
        workers = []
        for _ in range(n):
            member = gate.member()
            layer = QueryLayer(member, batch_size=self.batch_size) if self.batch_size else QueryLayer(member)
            context = WorkerContext(layer=layer, label_names=self.label_names, seed=self.seed,
                                    placement=self.placement, user_labels=self.user_labels)
            workers.append(_Worker(self.analysis.worker(context), layer))
        return workers, gate


# ---- the orchestrator ---------------------------------------------------------------------------
def _analyses(analyses: Sequence[AnyAnalysis | str] | Mapping[str, Any]) -> list[AnyAnalysis]:
    from textrobust.analyses import ANALYSES

    if isinstance(analyses, Mapping):
        items: list[Any] = [ANALYSES.get(name)(settings or {}) for name, settings in analyses.items()]
    else:
        items = [ANALYSES.get(a)() if isinstance(a, str) else a for a in analyses]
    if not items:
        raise ConfigError("An audit needs at least one analysis. Known: " + ", ".join(ANALYSES.names()) + ".")
    names = [a.name for a in items]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ConfigError(f"The analyses {repeated} are listed twice; each analysis runs once per audit.")
    return items


def _run_config(analysis: AnyAnalysis, victim: VictimSource, data: DataSource, dataset: Dataset,
                dtype: str = "float32") -> dict[str, Any]:
    """What a stored run was made with. The float type is part of it (a bfloat16 victim is
    another model: resuming in another dtype is refused); the device is not (a run may
    move from the CPU to a GPU and go on)."""
    return {"victim": victim.describe(), "data": data.describe(), "data_examples": len(dataset),
            "data_name": dataset.name, "data_split": dataset.split, "label_names": list(dataset.label_names),
            "dtype": dtype, **analysis.describe()}


def _stored(analysis: AnyAnalysis, run: Run) -> tuple[list[Record], list[Failure]]:
    from textrobust.analyses.stored import read_records

    return read_records(analysis, run)


def _execute(analysis: AnyAnalysis, spec: AnalysisWorkerSpec, units: list[tuple[str, Any]], run: Run,
             executor: Any, progress: Progress | None, max_consecutive_failures: int) -> tuple[int, int]:
    from textrobust.audit.executors import Unit

    done = run.done_ids()
    todo = [Unit(uid, position, payload) for position, (uid, payload) in enumerate(units) if uid not in done]
    task = None
    if progress is not None:
        task = progress.add_task(f"{analysis.name}", total=len(units), completed=len(units) - len(todo), queries=0,
                                 unit=analysis.unit)
    queries = streak = 0
    outcomes = executor.map(spec, todo)
    try:
        for outcome in outcomes:
            failed = outcome.error is not None
            payload = outcome.error if failed else outcome.value
            # an analysis that builds its own query layers (radius, PR) counts in its record
            used = outcome.queries if failed else max(outcome.queries, int(payload.get("queries") or 0))
            run.record(outcome.unit.id, payload, position=outcome.unit.position, seconds=outcome.seconds,
                       queries=used, failed=failed)
            queries += used
            streak = streak + 1 if failed else 0
            if progress is not None and task is not None:
                progress.update(task, advance=1, queries=queries)
            if max_consecutive_failures and streak >= max_consecutive_failures:
                error = outcome.error or {}
                raise TextRobustError(
                    f"{analysis.name}: {streak} units in a row failed; stopping. The last error: "
                    f"{error.get('error')}: {error.get('message')}. The finished results are stored; "
                    "fix the cause and rerun with --resume."
                )
    finally:
        close = getattr(outcomes, "close", None)
        if close is not None:
            close()
    return len(todo), queries


def run(
    victim: Any = "default",
    data: Any = "rotten_tomatoes",
    analyses: Sequence[AnyAnalysis | str] | Mapping[str, Any] = DEFAULT_ANALYSES,
    out: str | os.PathLike[str] = "runs/audit",
    *,
    split: str | None = None,
    data_options: Mapping[str, Any] | None = None,
    label_map: Mapping[str, str] | None = None,
    labels_by_position: bool = False,
    resume: bool = False,
    executor: str | Any = "local",
    workers: int | None = None,
    address: str | None = None,
    gpus_per_worker: float | None = None,
    seed: int = 0,
    progress: bool | Progress = True,
    report: bool = True,
    title: str | None = None,
    max_consecutive_failures: int = 20,
    max_words: int | None = None,
    length_policy: str = "truncate",
    profile: str | None = None,
    threads: Threads = "auto",
    device: str = "auto",
    dtype: str = "float32",
    allow_precision_change: bool = False,
    labelled: str | os.PathLike[str] | None = None,
) -> AuditResult:
    """Run ``analyses`` on ``victim`` over ``data`` into the folder ``out``.

    ``victim``: ``"default"`` (trained on first use), a victim folder, or a victim object
    (in-process executor only). ``data``: a bundled data set name, a file or folder path, or
    a :class:`~textrobust.data.examples.Dataset`; ``split`` defaults to ``test`` for
    bundled sets and to all rows for user files; ``data_options`` are the column options
    of :func:`~textrobust.data.load_dataset`. Labels are matched to the victim's by name;
    ``label_map`` maps data label names to victim label names; ``labels_by_position``
    matches them by position instead. ``analyses``: registry names, :class:`Analysis`
    objects, or a mapping name -> settings. ``executor``: ``local``, ``process`` or ``ray``
    (or an executor object), with ``workers`` and, for Ray, ``address`` and ``gpus_per_worker``
    (docs/ray.md). ``resume``
    continues the latest runs stored in ``out``: each analysis runs with its stored settings
    under the ones given (:func:`~textrobust.audit.run_folder.resumed_analyses`), and the
    rest of the configuration must match; with
    nothing to resume there (no store, or no run of any of ``analyses``) it is a
    :class:`~textrobust.errors.StoreError`. One process writes ``out`` at a time
    (:class:`~textrobust.audit.run_folder.RunFolderLock`): a second one gets a StoreError
    naming the first. ``profile``: the :mod:`~textrobust.audit.profiles` name the
    analyses came from; with it, the report lists the registered analyses not run and the
    commands that run them. ``threads``: torch's threads in this process, ``"auto"`` (the
    CPUs the affinity, cgroup quota and load leave this process; :mod:`textrobust.threads`),
    a count, or None (left as they are); the choice is in ``summary.json`` (``threads``).
    ``device`` (``auto``, ``cpu``, ``cuda``, ``cuda:N``, ``mps``) and ``dtype``
    (``float32``, ``bfloat16``, ``float16``): where the victim and the analyses' models run
    (:mod:`textrobust.devices`); an absent device is a ConfigError before any work. Below
    float32 the victim's predictions on a sample of the data are first compared with
    float32, and the run refuses below 99% agreement unless ``allow_precision_change``;
    the device, dtype and agreement are in ``summary.json`` and the report. A resumed run
    may change device but not dtype. ``labelled``: a file of labelled substitutions (the
    format of ``textrobust review --export``; :mod:`textrobust.validity.overrides`) that the
    validated synonyms of every analysis apply: a rejected pair is never proposed, a
    confirmed one is kept in its sentence; the file and its counts are stored with each run.
    """
    from textrobust.audit.executors import make_executor
    from textrobust.audit.progress import make_progress
    from textrobust.store import RunStore

    started = time.perf_counter()
    if resume:  # the stored settings, with the given ones on top (the command line does the same)
        analyses = resumed_analyses(out, analyses)
    chosen = _analyses(analyses)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
        raise ConfigError(f"The 'seed' must be an integer from 0 to 2^63-1. Got {seed!r} instead.")
    out = Path(out)
    _check_out(out)
    if resume:
        check_resumable(out, [analysis.name for analysis in chosen])
    check_max_words(max_words)
    verdict_cache_cap()  # a bad $TEXTROBUST_VERDICT_CACHE_MB: an error now, not in every example's judge
    check_length_policy(length_policy)
    plan = apply_threads(threads)  # before the victim loads torch: see textrobust.threads
    placement = resolve_placement(device, dtype)  # an absent device is an error before any work
    user_labels = _user_labels(labelled)  # a malformed labels file is an error before any work
    if resume and user_labels is None:  # the labels the run started with, as options are on resume
        user_labels = stored_labels(out, [analysis.name for analysis in chosen])
    data_source = DataSource.of(data, split=split, options=data_options)
    skip_bad_rows = (data_options or {}).get("on_bad_rows") == "skip"  # a str enum compares equal too
    if isinstance(executor, str):
        executor = make_executor(executor, workers=workers, address=address, gpus_per_worker=gpus_per_worker)
    try:
        victim_source = VictimSource.of(victim)
        if placement.reduced and victim_source.path is None:
            raise ConfigError(f"The '--dtype' option {placement.dtype} needs a victim folder, which textrobust loads "
                              "in float32 and in the reduced type to compare their predictions; a victim object "
                              "runs as it was built (audit it with dtype='float32').")
        model = victim_source.load(placement)
        full = load_aligned(data_source, tuple(model.label_names), label_map=label_map,
                            by_position=labels_by_position, skip_bad_rows=skip_bad_rows,
                            predict=model.probabilities)
        dataset, length = limit_length(full, default_max_words(model) if max_words is None else max_words,
                                       length_policy)
        for analysis in chosen:  # settings that name a class of the victim, before any work
            analysis.check_victim(tuple(model.label_names))
        facts = _placement_facts(victim_source, model, placement, dataset, allow_precision_change)
        lock = RunFolderLock(out)  # one process writes a run folder at a time; else a StoreError naming it
    except BaseException:
        executor.close()
        raise
    if executor.name != "local":
        victim_source = victim_source.portable()
    bar: Progress | None
    own_bar = progress is True
    bar = make_progress() if progress is True else (progress or None)
    results: dict[str, AnalysisResult] = {}
    analysed: set[str] = set()
    out.mkdir(parents=True, exist_ok=True)
    try:  # the run folder stays locked until its report is written
        store = RunStore(out / "store.sqlite")
        try:
            if own_bar and bar is not None:
                bar.start()
            too_long = set(length.rejected)
            for analysis in chosen:
                # the analysis picks its examples from the whole data set; one the length policy
                # rejects stays one of them (an error record), never replaced by the next example
                picked = [e.id for e in analysis.select(full)]
                analysed.update(picked)
                rejected = [i for i in picked if i in too_long]
                kept = set(picked) - too_long
                selected = replace(dataset, examples=tuple(e for e in dataset if e.id in kept))
                results[analysis.name] = _run_one(analysis, store, victim_source, data_source, dataset, selected,
                                                  executor, bar, seed, resume, max_consecutive_failures, rejected,
                                                  length, placement, user_labels)
        finally:
            if own_bar and bar is not None:
                bar.stop()
            executor.close()
            store.close()
        length = length.only(analysed)
        data_info = {"name": dataset.name, "split": dataset.split, "examples": len(dataset),
                     "label_names": list(dataset.label_names), **_data_notes(full, length)}
        missing = None
        if profile is not None:
            missing = not_run(results, victim=victim if isinstance(victim, (str, os.PathLike)) else None,
                              data=data if isinstance(data, (str, os.PathLike)) else None,
                              data_options=data_flags(split=split, data_options=data_options, label_map=label_map,
                                                      labels_by_position=labels_by_position, max_words=max_words,
                                                      length_policy=length_policy,
                                                      labelled=None if user_labels is None else user_labels.origin))
        through = newest_judgement(out / "store.sqlite")  # before the reviews are read: a later one is newer
        payload = build_report(results, victim_source, _card(model), data_info,
                               {"executor": executor.name, "workers": executor.workers, "seed": seed,
                                "resumed": resume, **_gpus(gpus_per_worker)},
                               seconds=time.perf_counter() - started, out=out, title=title, profile=profile,
                               not_run=missing, placement=facts)
        html, json_path = _write_outputs(out, payload, report)
        _write_summary(out, results, payload, length, plan, through)
    finally:
        lock.release()
    return AuditResult(out, results, payload, html, json_path, time.perf_counter() - started, plan)


def _placement_facts(source: VictimSource, model: Any, placement: Placement, dataset: Dataset,
                     allow_precision_change: bool) -> dict[str, Any]:
    """The report's and ``summary.json``'s record of where the victim ran. Below float32,
    the victim is also loaded in float32 (on the same device) and both predict an evenly
    spread sample of the analysed texts (:func:`~textrobust.devices.texts_sample`); an
    agreement below :data:`~textrobust.devices.MIN_AGREEMENT` is a ConfigError unless
    ``allow_precision_change``: an audit must audit the user's model, not a different one."""
    facts: dict[str, Any] = {**placement.to_dict(), "agreement": None, "agreement_sample": None}
    if not placement.reduced:
        return facts
    sample = texts_sample([example.text for example in dataset])
    reference = source.load(Placement(placement.device, "float32"), cache=False)
    share = agreement(reference.probabilities(sample), model.probabilities(sample))
    del reference  # one copy of the model stays on the device
    facts.update(agreement=share, agreement_sample=len(sample))
    if share < MIN_AGREEMENT and not allow_precision_change:
        raise ConfigError(
            f"In {placement.dtype} the victim predicts the same class as in float32 on only {share:.1%} of "
            f"{len(sample)} texts of the data (at least {MIN_AGREEMENT:.0%} is needed): the audit would audit a "
            f"different model. Use --dtype float32, or pass --allow-precision-change (Python: "
            f"allow_precision_change=True) to audit the {placement.dtype} model as it is.")
    return facts


def _gpus(gpus_per_worker: float | None) -> dict[str, float]:
    """The run's GPU reservation for the report (``--gpus-per-worker``), when it has one."""
    return {"gpus_per_worker": float(gpus_per_worker)} if gpus_per_worker else {}


def _data_notes(data: Dataset, length: LengthReport) -> dict[str, Any]:
    """What the report says about the data beyond its name: the length limit (texts cut or
    rejected among those analysed) and the rows skipped as bad (``--skip-bad-rows``)."""
    notes: dict[str, Any] = {"length_limit": {"max_words": length.max_words, "policy": length.policy,
                                              "truncated": len(length.truncated), "rejected": len(length.rejected)}}
    bad = tuple(cast("Sequence[BadRow]", data.meta.get("bad_rows") or ()))  # only BadRows are stored there
    if bad:
        notes["skipped_rows"] = {"count": len(bad), "shown": [str(row) for row in bad[:MAX_SHOWN_BAD_ROWS]]}
    return notes


def _user_labels(labelled: str | os.PathLike[str] | None) -> UserLabels | None:
    """The labels of the file ``labelled`` (None: none given)."""
    if labelled is None:
        return None
    from textrobust.validity.overrides import UserLabels

    return UserLabels.from_file(Path(labelled).expanduser().resolve())


def _check_out(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise ConfigError(f"The output folder '{out}' is a file; give a folder (--out).")


def _legacy_keys(store: RunStore, analysis: AnyAnalysis) -> tuple[str, ...]:
    """Settings added since the latest stored run of ``analysis`` was made, whose value now
    is what that run did before they existed (:data:`~textrobust.audit.run_folder.LEGACY_SETTINGS`):
    a resume may add them to the stored configuration."""
    previous = store.latest_run(analysis.name)
    stored = (previous.config.get("settings") or {}) if previous is not None else {}
    now = analysis.settings.to_dict()
    return tuple(f"settings.{key}" for key, value in LEGACY_SETTINGS.items()
                 if previous is not None and key not in stored and now.get(key) == value)


def _legacy_labels(store: RunStore, analysis: AnyAnalysis) -> tuple[str, ...]:
    """``("labelled.sha256",)`` when the latest stored run's labels predate their hash
    (issue 49): resuming it with the same file adds it (the counts still must match)."""
    previous = store.latest_run(analysis.name)
    stored = (previous.config.get("labelled") or {}) if previous is not None else {}
    return ("labelled.sha256",) if stored and "sha256" not in stored else ()


def _legacy_dtype(store: RunStore, analysis: AnyAnalysis, placement: Placement) -> tuple[str, ...]:
    """``("dtype",)`` when the latest stored run predates the ``dtype`` key (it ran in
    float32) and this one runs in float32 too: resuming it adds the key."""
    previous = store.latest_run(analysis.name)
    legacy = previous is not None and "dtype" not in previous.config and placement.dtype == "float32"
    return ("dtype",) if legacy else ()


def _run_one(analysis: AnyAnalysis, store: RunStore, victim: VictimSource, data: DataSource, dataset: Dataset,
             selected: Dataset, executor: Any, bar: Progress | None, seed: int, resume: bool,
             max_consecutive_failures: int, rejected: Sequence[str], length: LengthReport,
             placement: Placement = Placement(), user_labels: UserLabels | None = None) -> AnalysisResult:
    """Run ``analysis`` on the examples it ``selected`` (those the length policy kept; the
    ``rejected`` ones are stored as error records); ``dataset`` describes the run."""
    began = time.perf_counter()
    units = analysis.units(selected)
    survey = analysis.survey(selected)
    config = {**_run_config(analysis, victim, data, dataset, placement.dtype), "max_words": length.max_words,
              "length_policy": length.policy}
    if user_labels is not None:  # only when given: runs stored before --labelled resume as they were
        config["labelled"] = {"file": user_labels.origin, "sha256": user_labels.digest,
                              "rejected": len(user_labels.rejected), "confirmed": len(user_labels.confirmed)}
    # a resumed run may take more (or fewer) examples, run on another device and read its
    # labels from another path (their contents, the sha256, must match); everything else must match
    legacy = (*_legacy_keys(store, analysis), *_legacy_dtype(store, analysis, placement),
              *_legacy_labels(store, analysis)) if resume else ()
    run = store.resume_or_start(analysis.name, config, seed, resume=resume,
                                resumable_keys=("settings.n", "labelled.file", *legacy))
    if user_labels is not None:  # the labels themselves: a resume applies them, whatever became of the file
        run.set_artefact("labelled", {"file": user_labels.origin, "text": user_labels.text})
    if survey is not None:
        run.set_artefact("survey", survey)
    resumed = len(run.done_ids())
    done = run.done_ids()
    for i, example_id in enumerate(rejected):
        if example_id not in done:
            message = (f"The text has more than {length.max_words} words per column (--max-words); "
                       "rerun with a larger --max-words or --length-policy truncate.")
            run.record(example_id, {"error": "InputTooLong", "message": message}, position=len(units) + i,
                       failed=True)
    units_and_rejected = {uid for uid, _ in units} | set(rejected)
    spec = AnalysisWorkerSpec(victim, analysis, tuple(dataset.label_names), seed, placement=placement,
                              user_labels=user_labels)
    computed, queries = _execute(analysis, spec, units, run, executor, bar, max_consecutive_failures)
    unit_ids = units_and_rejected
    records, failures = _stored(analysis, run)
    records = [r for r in records if r.example_id in unit_ids]
    failures = [f for f in failures if f.example_id in unit_ids]
    summary = analysis.summarise_run(records, failures, survey)
    section = analysis.section(summary, records, failures, dataset.label_names)
    stored_queries = sum(row.queries or 0 for row in run.iter_results() if row.example_id in unit_ids)
    result = AnalysisResult(analysis.name, run.run_id, summary, tuple(records), tuple(failures), computed,
                            resumed, time.perf_counter() - began, queries, analysis.settings.to_dict(), section,
                            type(analysis), stored_queries)
    run.finish({"summary": summary.to_dict(), "computed_now": computed, "resumed": resumed, "queries_now": queries})
    return result


# ---- the report ---------------------------------------------------------------------------------
def _card(model: Any) -> dict[str, Any] | None:
    card = getattr(model, "card", None)
    if card is None:
        return None
    data = card.to_dict() if hasattr(card, "to_dict") else dict(card)
    kept: dict[str, Any] = {k: v for k, v in data.items() if isinstance(v, (str, int, float, bool)) or v is None}
    if isinstance(data.get("defense_settings"), Mapping):  # how the victim was hardened (issue 37, item 13)
        kept["defense_settings"] = dict(data["defense_settings"])
    return kept


def build_report(results: Mapping[str, AnalysisResult], victim: VictimSource, card: Mapping[str, Any] | None,
                 data: Mapping[str, Any], run: Mapping[str, Any], *, seconds: float, out: Path,
                 title: str | None = None, profile: str | None = None,
                 not_run: Sequence[Mapping[str, str]] | None = None,
                 placement: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The ``textrobust.report/1`` dict of an audit (see :mod:`textrobust.report`);
    ``not_run``: the registered analyses left out, with the command that runs each;
    ``placement``: the victim's device, dtype and float32 agreement (a model fact)."""
    from textrobust import __version__
    from textrobust.zoo.cards import now_iso

    analyses = []
    for name, result in results.items():
        cls = result.analysis_type
        counts = {k: getattr(result.summary, k) for k in ("units", "ok", "errors", "budget_exhausted")}
        section = result.section.to_dict()
        analyses.append({
            "name": name, "title": cls.title, "paper": cls.paper,
            "settings": _settings_of(result),
            "counts": counts,
            "headline": section["headline"], "tables": section["tables"],
            "figures": section["figures"], "examples": section["examples"],
            "errors": [{"id": f.example_id, "error": f.error, "message": f.message} for f in result.failures[:50]],
            "risk": section.get("risk"), "point": section.get("point"),
            **_estimate_keys(section),
            **_reviewed(name, result, data, out),
        })
    judged = _verdict_of(analyses)
    return encode({
        "schema": "textrobust.report/1",
        "textrobust_version": __version__,
        "created_at": now_iso(),
        "title": title or f"Robustness audit of {victim.name}",
        "victim": {"name": victim.name, "path": victim.describe(), "card": card,
                   **({} if placement is None else {"placement": dict(placement)})},
        "data": dict(data),
        "verdict": judged,
        "run": {"seconds": seconds, "queries": sum(r.all_queries for r in results.values()),
                "store": str(out / "store.sqlite"), **run},
        "analyses": analyses,
        **({} if profile is None else {"profile": profile}),
        **({} if not_run is None else {"not_run": [dict(item) for item in not_run]}),
    })


def _estimate_keys(section: Mapping[str, Any]) -> dict[str, Any]:
    """A section's risk interval and the findings it rests on, when it has them (issue 47)."""
    return {key: section[key] for key in ("risk_low", "risk_high", "validity") if key in section}


def _verdict_of(analyses: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The verdict of the report's sections, with the line on how much people reviewed."""
    from textrobust.audit.verdict import verdict
    from textrobust.report.reviewed import reviewed_point

    judged = verdict(analyses)
    reviewed_line = reviewed_point(analyses)
    if reviewed_line:  # how much of it people reviewed (textrobust review, issue 40)
        judged["points"].append(reviewed_line)
    return judged


def _reviewed(name: str, result: AnalysisResult, data: Mapping[str, Any], out: Path) -> dict[str, Any]:
    """``{"reviewed": ...}``: the figures over the findings people confirmed in ``textrobust
    review`` (:mod:`textrobust.report.reviewed`), for an analysis with findings; else ``{}``."""
    from textrobust.report.reviewed import findings, load_reviews, reviewed_figures, reviewed_validity

    found = findings(name, result.run_id, result.records, list(data.get("label_names") or []))
    state = load_reviews(out / "store.sqlite", [result.run_id])
    validity = result.section.validity
    block = reviewed_figures(name, result.summary, found, state, validity)
    if block is None:
        return {}
    reviewed, expected = reviewed_validity(validity, state)
    if reviewed is None or math.isnan(expected.point):
        return {"reviewed": block}
    # the verdict follows the reviewed figure (issue 47): reviewed findings count 1 or 0
    return {"reviewed": block, "validity": reviewed, "risk": expected.point, "risk_low": expected.low,
            "risk_high": expected.high}


def _settings_of(result: AnalysisResult) -> dict[str, Any]:
    return {**result.settings, "run_id": result.run_id, "computed_now": result.computed,
            "resumed_from_store": result.resumed}


def _write_outputs(out: Path, payload: Mapping[str, Any], html: bool) -> tuple[Path | None, Path]:
    from textrobust.report import write_report

    if html:
        html_path, json_path = write_report(payload, out)
        return html_path, json_path
    json_path = out / "report.json"
    json_path.write_text(json.dumps(payload, indent=2, allow_nan=False) + "\n")
    return None, json_path


def _write_summary(out: Path, results: Mapping[str, AnalysisResult], report: Mapping[str, Any],
                   length: LengthReport, threads: ThreadPlan | None = None, through: int = 0) -> None:
    """``summary.json`` (every analysis's typed summary, the verdict, the run and the
    threads it used, and ``reviews_through``: the newest judgement its reviewed figures
    count, :func:`~textrobust.validity.reviews.newest_judgement`) and one SVG file per
    figure under ``figures/``. Called after the report is written; ``summary.json`` is
    written last, through a temporary file."""
    summary = {"schema": "textrobust.summary/1", "verdict": report["verdict"], "run": report["run"],
               "threads": None if threads is None else threads.to_dict(),
               "placement": report["victim"].get("placement"),
               "victim": report["victim"], "data": report["data"], "length_limit": length.summary(),
               "reviews_through": through,
               "analyses": {name: {"run_id": r.run_id, "computed_now": r.computed, "resumed": r.resumed,
                                   "queries_now": r.queries, "summary": r.summary.to_dict(),
                                   **_reviewed_of(report, name)}
                            for name, r in results.items()}}
    figures = out / "figures"
    for section in report["analyses"]:
        for i, fig in enumerate(section.get("figures", []), 1):
            figures.mkdir(exist_ok=True)
            (figures / f"{section['name']}-{i}.svg").write_text(fig["svg"])
    # last, and whole or not at all: a run stopped while its outputs are written leaves
    # no summary.json (or the previous one), never one beside a missing or half report
    tmp = out / ".summary.json.tmp"
    tmp.write_text(json.dumps(encode(summary), indent=2, allow_nan=False) + "\n")
    os.replace(tmp, out / "summary.json")


def _reviewed_of(report: Mapping[str, Any], name: str) -> dict[str, Any]:
    """The reviewed block of ``name``'s report section, for ``summary.json`` (``{}`` when none)."""
    section: Mapping[str, Any] = next((s for s in report["analyses"] if s["name"] == name), {})
    return {"reviewed": section["reviewed"]} if section.get("reviewed") is not None else {}


def refresh_summary_reviews(out: Path, report: Mapping[str, Any], through: int = 0) -> None:
    """Bring the reviewed blocks and the verdict of ``out``'s ``summary.json`` up to date
    with ``report`` (after new judgements; ``through``: the newest judgement it counts);
    a folder without one is left as it is."""
    path = out / "summary.json"
    try:
        summary = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    summary["verdict"] = report["verdict"]
    summary["reviews_through"] = through
    for name, entry in (summary.get("analyses") or {}).items():
        if isinstance(entry, dict) and entry.get("run_id") == next(
                (s["settings"].get("run_id") for s in report["analyses"] if s["name"] == name), None):
            entry.pop("reviewed", None)
            entry.update(_reviewed_of(report, name))
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(encode(summary), indent=2, allow_nan=False) + "\n")
    os.replace(tmp, path)


def rebuild_report(out: str | os.PathLike[str]) -> tuple[Path, Path]:
    """Write ``report.json`` and ``report.html`` of the folder ``out`` again, with the
    reviewed figures of the judgements stored now, and bring ``summary.json``'s reviewed
    blocks and verdict up to date; no model query is made. When the folder's
    ``report.json`` is the report of the runs stored (the latest run of each analysis), it
    is kept as it is apart from the reviewed figures and the verdict (the run's time,
    executor, profile, the analyses not run, the data's notes, the victim's placement, the
    order of the sections); else the report is built from the store alone. The folder
    must not be in use by a run (:class:`~textrobust.audit.run_folder.RunFolderLock`)."""
    folder = Path(out)
    path = folder / "store.sqlite"
    if not path.is_file():
        raise StoreError(f"No run store in '{folder}' (expected {path}); give the --out folder of a run.")
    with RunFolderLock(folder):
        return _rebuild_report(folder, path)


def _stored_results(path: Path) -> tuple[dict[str, AnalysisResult], Mapping[str, Any], set[int]]:
    """The latest stored run of each analysis, summarised again, in the order they were
    started; the configuration of the last one and the runs' seeds."""
    from textrobust.analyses import ANALYSES
    from textrobust.store import RunStore

    results: dict[str, AnalysisResult] = {}
    config: Mapping[str, Any] = {}
    seeds: set[int] = set()
    with RunStore(path) as store:
        latest: dict[str, Run] = {}
        for run in store.runs():  # oldest first: the last run of a kind is its latest
            if run.kind in ANALYSES and "settings" in run.config:
                latest.pop(run.kind, None)
                latest[run.kind] = run
        for name, run in latest.items():
            config = run.config
            seeds.add(run.seed)
            analysis = ANALYSES.get(name)(config["settings"])
            records, failures = _stored(analysis, run)
            summary = analysis.summarise_run(records, failures, run.artefact("survey"))
            section = analysis.section(summary, records, failures, config.get("label_names", []))
            results[name] = AnalysisResult(name, run.run_id, summary, tuple(records), tuple(failures), 0,
                                           len(records) + len(failures), 0.0, sum(r.queries for r in records),
                                           analysis.settings.to_dict(), section, type(analysis))
    return results, config, seeds


def _previous_report(folder: Path, results: Mapping[str, AnalysisResult]) -> dict[str, Any] | None:
    """The folder's ``report.json`` when it is the report of ``results``' runs (each
    section's run id that of the analysis's latest run, no section missing); else None."""
    from textrobust.report import load_report

    try:
        report = load_report(folder / "report.json")
    except (OSError, TextRobustError, ValueError):
        return None
    runs = {s["name"]: (s.get("settings") or {}).get("run_id") for s in report["analyses"]}
    return report if runs == {name: r.run_id for name, r in results.items()} else None


def _rebuild_report(folder: Path, path: Path) -> tuple[Path, Path]:
    from textrobust.report import write_report

    through = newest_judgement(path)  # before the reviews are read: a judgement after it is newer
    results, config, seeds = _stored_results(path)
    if not results:
        raise StoreError(f"The run store {path} holds no analysis runs of this version of textrobust.")
    payload = _previous_report(folder, results)
    if payload is not None:  # the report as written, with the reviewed figures of now
        for section in payload["analyses"]:
            section.pop("reviewed", None)
            section.update(_reviewed(section["name"], results[section["name"]], payload["data"], folder))
        payload["verdict"] = _verdict_of(payload["analyses"])
        payload = encode(payload)
    else:
        victim = VictimSource(path=str(config.get("victim")))
        card = None
        try:
            card = _card(victim.load())
        except TextRobustError:
            pass  # the victim folder moved: the report says so by having no card
        data_info = {"name": config.get("data_name", ""), "split": config.get("data_split", ""),
                     "examples": config.get("data_examples", 0), "label_names": list(config.get("label_names", []))}
        run_info = {"executor": "(rebuilt from the store)", "workers": 0, "seed": min(seeds), "resumed": True}
        payload = build_report(results, victim, card, data_info, run_info, seconds=0.0, out=folder)
    written = write_report(payload, folder)
    refresh_summary_reviews(folder, payload, through)
    return written
