"""Audits side by side: ``compare.html`` and ``compare.json`` from two or more run folders.

:func:`compare_runs` reads each run folder's store (the latest run of each analysis, as
``textrobust report`` does; no victim is loaded, nothing is run again), summarises it
again with the analysis's own pure functions, and compares every headline figure of the
first run (the baseline) with the same figure of each other run:

- on the examples the two runs share (same example ids, a record in both stores), the
  difference ``run - baseline`` with a paired 95% bootstrap interval
  (:func:`~textrobust.report.paired.paired_bootstrap`) wherever the figure opens into
  per-example values (:mod:`textrobust.report.per_example`), and McNemar's exact test for
  per-example right/wrong figures (clean accuracy, accuracy under attack);
- otherwise the difference of the two runs' figures, without an interval, with the reason.

It also notes every difference of victim, data and settings (recipe, candidates), refuses
runs whose shared example ids hold different texts (unless told to pair them by id), lists
what the runs do not share (analyses, examples), overlays
the curves the records support, and lists the examples where the runs disagree (the
prediction or the attack's outcome). :func:`write_comparison` renders the page (Jinja2,
autoescaped: example texts are user data) and the JSON.

>>> comparison = compare_runs(["runs/a", "runs/b"], resamples=2000, seed=0)  # doctest: +SKIP
>>> write_comparison(comparison, "runs/compare")                            # doctest: +SKIP
(PosixPath('runs/compare/compare.html'), PosixPath('runs/compare/compare.json'))
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from textrobust.analyses.protocol import Failure, Record
from textrobust.errors import ConfigError, StoreError, TextRobustError
from textrobust.records import encode
from textrobust.report.paired import CONFIDENCE, figure_value, mcnemar_exact, min_resamples, paired_bootstrap
from textrobust.report.per_example import PER_EXAMPLE, ExampleOutcome, ExampleValues

__all__ = ["AnalysisRun", "Comparison", "Delta", "FigureComparison", "RunFolder", "SCHEMA", "compare_runs",
           "load_run_folder", "render_comparison", "write_comparison"]

SCHEMA = "textrobust.compare/1"
#: Default number of bootstrap resamples.
RESAMPLES = 2000
#: The fewest shared examples a figure must count in both runs for an interval: a
#: bootstrap of fewer says nothing (one example resampled is always itself).
MIN_COUNTED = 5
#: Examples of disagreement shown on the page (the JSON holds them all).
SHOWN_DISAGREEMENTS = 60
_STORE = "store.sqlite"


# ---- the runs -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class AnalysisRun:
    """The latest run of one analysis in a run folder, summarised again from its records."""

    name: str
    title: str
    unit: str
    run_id: str
    settings: Mapping[str, Any]
    records: tuple[Record, ...]
    failures: tuple[Failure, ...]
    headline: tuple[Mapping[str, Any], ...]
    figures: tuple[ExampleValues, ...]
    outcomes: tuple[ExampleOutcome, ...]
    #: False for a run that never finished (interrupted, or still running): its records
    #: are part of what was planned, ``planned`` examples (None: not known)
    finished: bool = True
    planned: int | None = None

    @property
    def example_ids(self) -> list[str]:
        """The examples with a record, in the run's order (a batch opened into its
        examples; a unit that is not one example counts as one)."""
        if self.outcomes:
            return [o.example_id for o in self.outcomes]
        return [r.example_id for r in self.records]


@dataclass(frozen=True)
class RunFolder:
    """One run folder: where it is, what it audited, and its analyses."""

    name: str
    path: str
    victim: str
    data: str
    seed: int | None
    label_names: tuple[str, ...]
    analyses: Mapping[str, AnalysisRun]
    #: how the data was read (the stored ``data``: the data set or file, split and column
    #: options), as JSON: runs of one file read with other columns audited other texts
    data_source: str = ""

    @property
    def unfinished(self) -> tuple[str, ...]:
        """One line per analysis whose run never finished, with how much of its plan it
        holds ("attack: 3 of 100 planned examples")."""
        out = []
        for a in self.analyses.values():
            if not a.finished:
                held = len(set(a.example_ids))
                plan = f"{held:,} of {a.planned:,} planned examples" if a.planned is not None else \
                    f"{held:,} examples (of a plan not recorded)"
                out.append(f"{a.name}: {plan}")
        return tuple(out)


def _not_a_run_folder(folder: Path, why: str) -> StoreError:
    return StoreError(f"'{folder}' is not a run folder: {why}. Give folders written by `textrobust audit` "
                      "or an analysis command (their --out), each holding store.sqlite.")


def _planned(config: Mapping[str, Any]) -> int | None:
    """The examples a stored run set out to do: its ``n`` of the data's examples (all of
    them without an ``n``); None when the run's configuration does not say."""
    examples = config.get("data_examples")
    n = (config.get("settings") or {}).get("n")
    if isinstance(examples, bool) or not isinstance(examples, int):
        return n if isinstance(n, int) and not isinstance(n, bool) else None
    return min(n, examples) if isinstance(n, int) and not isinstance(n, bool) else examples


def load_run_folder(path: str | os.PathLike[str], name: str | None = None) -> RunFolder:
    """Read the run folder ``path``: the latest run of every analysis in its store, with
    typed records, the headline figures of its summary and its per-example values.
    A folder without a textrobust store holding an analysis run is a StoreError."""
    from textrobust.analyses import ANALYSES
    from textrobust.analyses.figures import without_drawing
    from textrobust.analyses.stored import read_records
    from textrobust.store import RunStatus, RunStore

    folder = Path(path)
    if not folder.is_dir():
        raise _not_a_run_folder(folder, "no such folder" if not folder.exists() else "it is a file")
    if not (folder / _STORE).is_file():
        raise _not_a_run_folder(folder, f"it holds no run store ({_STORE})")
    analyses: dict[str, AnalysisRun] = {}
    config: Mapping[str, Any] = {}
    seeds: set[int] = set()
    try:
        store = RunStore(folder / _STORE)
    except StoreError as exc:
        raise _not_a_run_folder(folder, str(exc)) from None
    with store:
        kinds = dict.fromkeys(run.kind for run in store.runs())  # in the order the audit ran them
        for analysis_name in [kind for kind in kinds if kind in ANALYSES]:
            run = store.latest_run(analysis_name)
            if run is None or "settings" not in run.config:
                continue
            config = run.config
            seeds.add(run.seed)
            try:
                analysis = ANALYSES.get(analysis_name)(config["settings"])
            except TextRobustError as exc:
                raise StoreError(f"The {analysis_name} run in '{folder}' has settings this textrobust does not "
                                 f"read ({exc}).") from None
            records, failures = read_records(analysis, run)
            summary = analysis.summarise_run(records, failures, run.artefact("survey"))
            label_names = list(config.get("label_names", []))
            with without_drawing():  # the headline figures are wanted, not the run's own charts
                section = analysis.section(summary, records, failures, label_names)
            declared = PER_EXAMPLE.get(analysis_name)
            analyses[analysis_name] = AnalysisRun(
                analysis_name, analysis.title, analysis.unit, run.run_id, analysis.settings.to_dict(), tuple(records),
                tuple(failures), tuple(h.to_dict() for h in section.headline),
                tuple(declared.figures(records, analysis.settings.to_dict())) if declared else (),
                tuple(declared.outcomes(records)) if declared else (), run.status is RunStatus.FINISHED,
                _planned(config))
    if not analyses:
        raise _not_a_run_folder(folder, "its store holds no analysis run")
    data = str(config.get("data_name") or "?") + (f" ({config['data_split']} split)" if config.get("data_split")
                                                  else "")
    victim = str(config.get("victim") or "?")
    return RunFolder(name or folder.name or str(folder), str(folder), victim, data,
                     min(seeds) if seeds else None, tuple(config.get("label_names", [])), analyses,
                     json.dumps(config.get("data") or {}, sort_keys=True, default=str))


def _names(paths: Sequence[Path]) -> list[str]:
    """Short names for the runs: the folder's name, or more of its path where two
    folders share a name (and a number where the same folder is given twice)."""
    names = [p.name or str(p) for p in paths]
    for i, name in enumerate(names):
        alike = {paths[j].resolve() for j, other in enumerate(names) if other == name}
        if len(alike) > 1:  # two folders of one name: their paths tell them apart
            names[i] = str(paths[i])
    seen: dict[str, int] = {}
    for i, name in enumerate(names):
        seen[name] = seen.get(name, 0) + 1
        if seen[name] > 1:
            names[i] = f"{name} ({seen[name]})"
    return names


# ---- the comparison -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Delta:
    """One run's figure against the baseline's. ``difference``: run - baseline, on the
    ``shared`` examples when it has an interval, else of the two runs' own figures;
    ``low``/``high``: the paired bootstrap interval; ``p_value``: McNemar's exact test with
    its discordant counts (right in the baseline only, right in this run only); ``on_shared``:
    the baseline's and this run's figure on the shared examples (they differ from the runs'
    own figures when a run has examples the other lacks); ``note``: why there is no
    interval, or what the difference is over."""

    run: str
    value: Any
    difference: float | None = None
    low: float | None = None
    high: float | None = None
    p_value: float | None = None
    discordant: tuple[int, int] | None = None
    shared: int | None = None
    on_shared: tuple[float | None, float | None] | None = None
    note: str | None = None


@dataclass(frozen=True)
class FigureComparison:
    """One headline figure of the baseline, and each other run's against it."""

    analysis: str
    label: str
    format: str
    meaning: str | None
    baseline: Any
    deltas: tuple[Delta, ...]


@dataclass(frozen=True)
class Coverage:
    """What the runs share of one analysis: per run, the examples with a record (None:
    the analysis did not run), those shared with the baseline, and the errors; the
    settings that differ from the baseline's (``run: key baseline -> run``)."""

    analysis: str
    title: str
    examples: tuple[int | None, ...]
    shared: tuple[int | None, ...]
    errors: tuple[int | None, ...]
    settings_differences: tuple[str, ...]


@dataclass(frozen=True)
class Disagreement:
    """An example on which a run's prediction or attack outcome differs from the
    baseline's: one cell per run (None: not in that run), and which cells differ."""

    analysis: str
    example_id: str
    label: str
    text: str | None
    cells: tuple[str | None, ...]
    differs: tuple[bool, ...]


@dataclass(frozen=True)
class CurveFigure:
    title: str
    caption: str
    svg: str


@dataclass(frozen=True)
class Comparison:
    """Everything the page and the JSON show; the first run is the baseline."""

    runs: tuple[RunFolder, ...]
    figures: tuple[FigureComparison, ...]
    coverage: tuple[Coverage, ...]
    notes: tuple[str, ...]
    disagreements: tuple[Disagreement, ...]
    curves: tuple[CurveFigure, ...] = field(default=())
    resamples: int = RESAMPLES
    seed: int = 0
    confidence: float = CONFIDENCE


def _key(label: str) -> str:
    """A headline label with its numbers blanked, to match a figure across runs whose
    labels carry counts ("the 3 example(s) with both bounds")."""
    return re.sub(r"\d+(?:[.,]\d+)*", "#", label)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _reproduces(values: ExampleValues, headline: Any) -> bool:
    """Whether the per-example values give back the run's own headline figure."""
    pairs = list(values.values.values())
    full = figure_value(np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs]), values.statistic)
    target = _number(headline)
    if target is None:
        return math.isnan(full)
    return not math.isnan(full) and abs(full - target) <= 1e-9 * max(1.0, abs(target))


def _paired_delta(name: str, item: Mapping[str, Any], base: ExampleValues, other: ExampleValues,
                  shared: Sequence[str], resamples: int, seed: int) -> Delta:
    """The difference of the two figures on the ``shared`` examples, its paired bootstrap
    interval and, for a right/wrong figure, McNemar's test."""
    a = np.array([base.values[i] for i in shared], dtype=float).reshape(-1, 2)
    b = np.array([other.values[i] for i in shared], dtype=float).reshape(-1, 2)
    interval = paired_bootstrap(a[:, 0], a[:, 1], b[:, 0], b[:, 1], resamples=resamples, seed=seed,
                                statistic=base.statistic)
    note = None
    counted = int(min((a[:, 1] > 0).sum(), (b[:, 1] > 0).sum())) if len(shared) else 0
    if math.isnan(interval.difference):
        note = "undefined on the shared examples (the figure counts none of them in one run)"
    elif counted < MIN_COUNTED:
        note = (f"no interval: the figure counts only {counted} of the shared examples in one run "
                f"(an interval needs {MIN_COUNTED})")
        interval = replace(interval, low=math.nan, high=math.nan)
    elif math.isnan(interval.low):
        note = (f"no interval: the figure is undefined in {resamples - interval.defined:,} of {resamples:,} "
                "resamples (it counts too few of the shared examples)")
    p_value = discordant = None
    if base.right_wrong and other.right_wrong:
        test = mcnemar_exact(a[:, 0] > 0.5, b[:, 0] > 0.5)
        p_value, discordant = test.p_value, (test.baseline_only, test.other_only)
    return Delta(name, item.get("value"), _number(interval.difference), _number(interval.low),
                 _number(interval.high), p_value, discordant, len(shared),
                 (_number(interval.baseline), _number(interval.other)), note)


def _delta(run: RunFolder, baseline: AnalysisRun, item: Mapping[str, Any], shared: Sequence[str],
           resamples: int, seed: int) -> Delta:
    """The run's figure matching ``item`` (a headline of the baseline), against it."""
    mine = run.analyses.get(baseline.name)
    if mine is None:
        return Delta(run.name, None, note=f"{baseline.name} did not run in {run.name}")
    match = next((h for h in mine.headline if _key(h["label"]) == _key(item["label"])), None)
    if match is None:
        return Delta(run.name, None, note="this run's summary has no such figure")
    value, base_value = match.get("value"), item.get("value")
    if not shared:
        return Delta(run.name, value, shared=0, note="no example of this analysis is in both runs: no difference")
    number, base_number = _number(value), _number(base_value)
    if item.get("format") == "text" or number is None or base_number is None:
        return Delta(run.name, value, note=None if item.get("format") == "text" else "n/a in one of the runs")
    plain = number - base_number
    if item.get("format") == "int":
        return Delta(run.name, value, plain, shared=len(shared),
                     note="a count over each run's own examples, not a rate: no interval")
    base_values = next((f for f in baseline.figures if _key(f.label) == _key(item["label"])), None)
    other_values = next((f for f in mine.figures if _key(f.label) == _key(match["label"])), None)
    own = (f"difference of the two runs' figures, each over its own examples "
           f"({len(baseline.example_ids):,} and {len(mine.example_ids):,})")
    if base_values is None or other_values is None:
        why = (f"each {baseline.name} record holds one of its {baseline.unit}, which this comparison does not open "
               "into per-example values" if baseline.name not in PER_EXAMPLE else
               "this figure is not declared as a mean over examples (textrobust.report.per_example)")
        return Delta(run.name, value, plain, shared=len(shared), note=f"no interval: {why}; {own}")
    if not (_reproduces(base_values, base_value) and _reproduces(other_values, value)):
        return Delta(run.name, value, plain, shared=len(shared),
                     note=f"no interval: the per-example values do not give back the run's figure; {own}")
    common = [i for i in shared if i in base_values.values and i in other_values.values]
    return _paired_delta(run.name, match, base_values, other_values, common, resamples, seed)


def _shared_ids(baseline: AnalysisRun, other: AnalysisRun | None) -> list[str]:
    if other is None:
        return []
    theirs = set(other.example_ids)
    return sorted({i for i in baseline.example_ids if i in theirs})


def _coverage(runs: Sequence[RunFolder]) -> list[Coverage]:
    from textrobust.store import config_differences

    names = list(dict.fromkeys(name for run in runs for name in run.analyses))
    out = []
    for name in names:
        mine = [run.analyses.get(name) for run in runs]
        base = mine[0]
        examples = tuple(None if a is None else len(set(a.example_ids)) for a in mine)
        shared = tuple(None if a is None or base is None else len(_shared_ids(base, a)) for a in mine)
        errors = tuple(None if a is None else len(a.failures) for a in mine)
        differences = []
        if base is not None:
            for run, a in zip(runs[1:], mine[1:]):
                if a is not None:
                    for key, (old, new) in config_differences(base.settings, a.settings).items():
                        differences.append(f"{run.name}: {key} {json.dumps(old)} -> {json.dumps(new)}")
        title = next(a.title for a in mine if a is not None)
        out.append(Coverage(name, title, examples, shared, errors, tuple(differences)))
    return out


def _notes(runs: Sequence[RunFolder], coverage: Sequence[Coverage]) -> list[str]:
    baseline = runs[0]
    notes = [f"{run.name} is unfinished (its run was interrupted): {'; '.join(run.unfinished)}; its figures are "
             "over those only." for run in runs if run.unfinished]
    for run in runs[1:]:
        if run.victim != baseline.victim:
            notes.append(f"{run.name} audited another victim ({run.victim}) than the baseline {baseline.name} "
                         f"({baseline.victim}): a difference is between the two models, not a change of one.")
        if run.data != baseline.data:
            notes.append(f"{run.name} audited other data ({run.data}) than the baseline {baseline.name} "
                         f"({baseline.data}): only the examples with the same ids are compared.")
        elif run.data_source != baseline.data_source:
            notes.append(f"{run.name} read its data otherwise than the baseline {baseline.name} ({run.data_source} "
                         f"against {baseline.data_source}).")
        if run.label_names != baseline.label_names:
            notes.append(f"{run.name} has other labels ({', '.join(run.label_names)}) than the baseline "
                         f"({', '.join(baseline.label_names)}).")
    for c in coverage:
        if c.settings_differences:  # the recipe, the candidates, any setting: a difference may be theirs
            notes.append(f"{c.analysis} ran with other settings than in the baseline {baseline.name}: "
                         f"{'; '.join(c.settings_differences)}.")
        if c.examples[0] is None:
            ran = ", ".join(run.name for run, n in zip(runs, c.examples) if n is not None)
            notes.append(f"{c.analysis} ran in {ran} but not in the baseline {baseline.name}: not compared.")
            continue
        for run, n, shared in zip(runs[1:], c.examples[1:], c.shared[1:]):
            if n is None:
                notes.append(f"{c.analysis} did not run in {run.name}: its figures have no difference there.")
            elif shared != n or shared != c.examples[0]:
                notes.append(f"{c.analysis}: {run.name} shares {shared:,} of its {n:,} examples with the baseline's "
                             f"{c.examples[0]:,}; paired figures are over the shared ones.")
    return notes


def _label_name(names: Sequence[str], label: int) -> str:
    return names[label] if 0 <= label < len(names) else str(label)


def _cell(outcome: ExampleOutcome | None, names: Sequence[str]) -> str | None:
    if outcome is None:
        return None
    prediction = "n/a" if outcome.prediction is None else _label_name(names, outcome.prediction)
    return prediction if outcome.outcome is None else f"{prediction} · {outcome.outcome}"


def _disagreements(runs: Sequence[RunFolder]) -> list[Disagreement]:
    baseline = runs[0]
    texts: dict[str, str] = {}
    for run in runs:
        for a in run.analyses.values():
            for o in a.outcomes:
                if o.text is not None:
                    texts.setdefault(o.example_id, o.text)
    out = []
    for name, base in baseline.analyses.items():
        if not base.outcomes:
            continue
        by_run = [{o.example_id: o for o in run.analyses[name].outcomes} if name in run.analyses else {}
                  for run in runs]
        for mine in base.outcomes:
            row = [by_run[i].get(mine.example_id) for i in range(len(runs))]
            keys = [None if o is None else (o.prediction, o.outcome) for o in row]
            differs = tuple(i > 0 and k is not None and k != keys[0] for i, k in enumerate(keys))
            if any(differs):
                out.append(Disagreement(name, mine.example_id, _label_name(baseline.label_names, mine.label),
                                        texts.get(mine.example_id),
                                        tuple(_cell(o, run.label_names or baseline.label_names)
                                              for o, run in zip(row, runs)), differs))
    return out


def _curves(runs: Sequence[RunFolder]) -> list[CurveFigure]:
    from textrobust.analyses.figures import line_chart

    out = []
    for name, declared in PER_EXAMPLE.items():
        present = [(run, run.analyses[name]) for run in runs if name in run.analyses]
        if len(present) < 2 or present[0][0] is not runs[0]:
            continue
        common = set.intersection(*(set(a.example_ids) for _, a in present))
        if not common:
            continue
        chosen = [[r for r in a.records if r.example_id in common] for _, a in present]
        for curve in declared.curves:
            grid = curve.grid(chosen)
            series = {run.name: (grid, curve.values(records, grid)) for (run, _), records in zip(present, chosen)}
            svg = line_chart(series, title=curve.title, xlabel=curve.xlabel, ylabel=curve.ylabel,
                             percent=curve.percent, steps=curve.steps)
            out.append(CurveFigure(f"{present[0][1].title}: {curve.title}",
                                   f"{curve.caption}; over the {len(common):,} examples all these runs share.", svg))
    return out


def _other_texts(baseline: RunFolder, run: RunFolder) -> dict[str, tuple[str, str]]:
    """The example ids ``run`` shares with ``baseline`` whose texts differ (as the records
    hold them): id -> (baseline's text, run's text)."""
    mine: dict[str, str] = {}
    for a in baseline.analyses.values():
        for o in a.outcomes:
            if o.text is not None:
                mine.setdefault(o.example_id, o.text)
    found: dict[str, tuple[str, str]] = {}
    for a in run.analyses.values():
        for o in a.outcomes:
            if o.text is not None and o.example_id in mine and mine[o.example_id] != o.text:
                found.setdefault(o.example_id, (mine[o.example_id], o.text))
    return found


def compare_runs(paths: Sequence[str | os.PathLike[str]], *, resamples: int = RESAMPLES,
                 seed: int = 0, allow_unfinished: bool = False, allow_different_texts: bool = False) -> Comparison:
    """Compare the run folders ``paths`` (the first is the baseline); see the module
    docstring. Fewer than two folders, a folder that is not a run folder, or a run that
    shares no example with the baseline is an error (ConfigError or StoreError); so is a
    run that never finished (interrupted: its figures cover part of its plan) unless
    ``allow_unfinished``, when the comparison notes it; so are runs that hold different
    texts under the same example ids (they audited different data) unless
    ``allow_different_texts``, when they are paired by id and the comparison notes it. Every
    difference of victim, data and settings (the recipe, the candidates) is a note. ``resamples``: at least
    :func:`~textrobust.report.paired.min_resamples` (200 for the 95% interval)."""
    if len(paths) < 2:
        raise ConfigError(f"A comparison needs at least two run folders; got {len(paths)}.")
    least = min_resamples(CONFIDENCE)
    if isinstance(resamples, bool) or not isinstance(resamples, int) or not least <= resamples <= 1_000_000:
        raise ConfigError(f"The 'resamples' parameter must be an int from {least:,} to 1,000,000 (a "
                          f"{CONFIDENCE:.0%} percentile interval needs {least:,} for each of its tails to hold "
                          f"{(1 - CONFIDENCE) / 2 * least:.0f} resamples). Got {resamples!r} instead.")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
        raise ConfigError(f"The 'seed' parameter must be an integer from 0 to 2^63-1. Got {seed!r} instead.")
    folders = [Path(p) for p in paths]
    runs = [load_run_folder(p, name) for p, name in zip(folders, _names(folders))]
    unfinished = [run for run in runs if run.unfinished]
    if unfinished and not allow_unfinished:
        held = "; ".join(f"{run.name} ({'; '.join(run.unfinished)})" for run in unfinished)
        raise ConfigError(f"Unfinished run(s): {held}. A run that was interrupted holds only part of its plan, so "
                          "its figures are not comparable with a whole run's. Finish it (rerun its command with "
                          "--resume), or pass --allow-unfinished to compare it as it is.")
    baseline = runs[0]
    for run in runs[1:]:
        common = [name for name in baseline.analyses if name in run.analyses]
        if not any(_shared_ids(baseline.analyses[n], run.analyses[n]) for n in common):
            held = "; ".join(f"{r.name}: {', '.join(f'{n} ({len(set(a.example_ids)):,})' for n, a in r.analyses.items())}"
                             for r in (baseline, run))
            why = (f"they ran no analysis in common" if not common else
                   f"no example id of {', '.join(common)} is in both")
            raise ConfigError(f"The runs {baseline.name} and {run.name} share no examples ({why}), so there is "
                              f"nothing to pair. They hold: {held}. Compare runs over the same data.")
    mismatched = {run.name: _other_texts(baseline, run) for run in runs[1:]}
    mismatched = {name: found for name, found in mismatched.items() if found}
    if mismatched and not allow_different_texts:
        name, found = next(iter(mismatched.items()))
        example, (mine, theirs) = next(iter(found.items()))
        raise ConfigError(f"The runs {baseline.name} and {name} hold different texts under the same example ids "
                          f"({len(found):,} of them, e.g. {example!r}: {mine!r} in {baseline.name}, {theirs!r} in "
                          f"{name}): they audited different data, and pairing by id would compare different "
                          "sentences. Compare runs over the same data, or pass --allow-different-texts to pair them "
                          "by id anyway.")
    figures = []
    for name, base in baseline.analyses.items():
        for item in base.headline:
            deltas = tuple(_delta(run, base, item, _shared_ids(base, run.analyses.get(name)), resamples, seed)
                           for run in runs[1:])
            figures.append(FigureComparison(name, item["label"], item.get("format", "float"), item.get("note"),
                                            item.get("value"), deltas))
    coverage = _coverage(runs)
    notes = _notes(runs, coverage) + [
        f"{name} holds different texts than the baseline {baseline.name} under {len(found):,} shared example id(s) "
        "(e.g. " + ", ".join(repr(i) for i in list(found)[:3]) + "): paired by id anyway (--allow-different-texts)."
        for name, found in mismatched.items()]
    return Comparison(tuple(runs), tuple(figures), tuple(coverage), tuple(notes),
                      tuple(_disagreements(runs)), tuple(_curves(runs)), resamples, seed)


# ---- output -------------------------------------------------------------------------------------
def format_difference(value: float | None, fmt: str, signed: bool = True) -> str:
    """A difference as text, signed: percentage points for a ``%`` figure (one decimal),
    else as the report writes the figure (``int`` or ``float``)."""
    from textrobust.report.html import NA, format_value

    if value is None or not math.isfinite(value):
        return NA
    body = f"{100 * abs(value):.1f}" if fmt == "%" else format_value(abs(value), "int" if fmt == "int" else "float")
    sign = "" if float(body.replace(",", "")) == 0 else "-" if value < 0 else "+" if signed else ""
    return f"{sign}{body} pp" if fmt == "%" else sign + body


def format_interval(delta: Delta, fmt: str) -> str:
    """``[low, high]`` in the difference's unit, or empty without an interval."""
    if delta.low is None or delta.high is None:
        return ""
    low, high = format_difference(delta.low, fmt), format_difference(delta.high, fmt)
    unit = " pp" if fmt == "%" else ""
    return f"[{low.removesuffix(' pp')}, {high.removesuffix(' pp')}]{unit}"


def format_p(p: float | None) -> str:
    if p is None:
        return ""
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def _figure_row(figure: FigureComparison) -> dict[str, Any]:
    from textrobust.report.html import NA, format_value

    base = format_value(figure.baseline, figure.format)
    cells = []
    for d in figure.deltas:
        value = format_value(d.value, figure.format)
        significant = d.low is not None and d.high is not None and (d.low > 0 or d.high < 0)
        discordant = (f"{d.discordant[0]:,} right in the baseline only, {d.discordant[1]:,} right here only"
                      if d.discordant is not None else "")
        own = (_number(figure.baseline), _number(d.value))
        shared_values = ""
        if d.on_shared is not None and any(x is None or y is None or abs(x - y) > 1e-12
                                           for x, y in zip(d.on_shared, own)):
            shared_values = (f"on the {d.shared:,} shared: {format_value(d.on_shared[0], figure.format)} vs "
                             f"{format_value(d.on_shared[1], figure.format)}")
        cells.append({"value": value, "value_na": value == NA, "shared_values": shared_values,
                      "difference": format_difference(d.difference, figure.format) if d.difference is not None else "",
                      "interval": format_interval(d, figure.format), "significant": significant,
                      "p": format_p(d.p_value), "discordant": discordant, "note": d.note,
                      "shared": "" if d.shared is None else f"{d.shared:,}"})
    return {"label": figure.label, "meaning": figure.meaning, "baseline": base, "baseline_na": base == NA,
            "cells": cells}


def _page(c: Comparison) -> dict[str, Any]:
    from textrobust import __version__
    from textrobust.report.html import _svg_uri
    from textrobust.zoo.cards import now_iso

    titles = {a.name: a.title for run in c.runs for a in run.analyses.values()}
    groups: dict[str, list[dict[str, Any]]] = {}
    for figure in c.figures:
        groups.setdefault(figure.analysis, []).append(_figure_row(figure))

    def count(n: int | None) -> str:
        return "not run" if n is None else f"{n:,}"

    return {
        "title": "Comparison: " + " vs ".join(run.name for run in c.runs),
        "created_at": now_iso(), "version": __version__, "schema": SCHEMA,
        "baseline": c.runs[0].name, "others": [run.name for run in c.runs[1:]],
        "runs": [{"name": run.name, "path": run.path, "victim": run.victim, "data": run.data,
                  "seed": "n/a" if run.seed is None else str(run.seed),
                  "analyses": ", ".join(run.analyses),
                  "unfinished": "; ".join(run.unfinished)} for run in c.runs],
        "notes": list(c.notes),
        "coverage": [{"analysis": cov.analysis, "title": cov.title,
                      "cells": [{"examples": count(n), "shared": "" if s is None or i == 0 else f"{s:,}",
                                 "errors": e or 0, "na": n is None}
                                for i, (n, s, e) in enumerate(zip(cov.examples, cov.shared, cov.errors))],
                      "settings": list(cov.settings_differences)} for cov in c.coverage],
        "groups": [{"analysis": name, "title": titles.get(name, name), "rows": rows} for name, rows in groups.items()],
        "curves": [{"title": f.title, "caption": f.caption, "src": _svg_uri(f.svg)} for f in c.curves],
        "disagreements": [{"analysis": d.analysis, "id": d.example_id, "label": d.label,
                           "text": d.text, "cells": [{"text": "not in this run" if t is None else t, "differs": x,
                                                      "na": t is None} for t, x in zip(d.cells, d.differs)]}
                          for d in c.disagreements[:SHOWN_DISAGREEMENTS]],
        "disagreements_total": len(c.disagreements), "disagreements_shown": min(len(c.disagreements),
                                                                                SHOWN_DISAGREEMENTS),
        "run_names": [run.name for run in c.runs],
        "resamples": f"{c.resamples:,}", "seed": c.seed, "confidence": f"{c.confidence:.0%}",
    }


def comparison_data(c: Comparison) -> dict[str, Any]:
    """The comparison as JSON-ready data (schema ``textrobust.compare/1``): the runs,
    every figure with its differences, what is shared, the notes and every disagreement;
    the curves by title and caption (their SVG is on the page)."""
    from textrobust.zoo.cards import now_iso

    return encode({
        "schema": SCHEMA, "created_at": now_iso(), "baseline": c.runs[0].name,
        "resamples": c.resamples, "seed": c.seed, "confidence": c.confidence,
        "runs": [{"name": r.name, "path": r.path, "victim": r.victim, "data": r.data, "seed": r.seed,
                  "analyses": {n: a.run_id for n, a in r.analyses.items()}, "unfinished": list(r.unfinished)}
                 for r in c.runs],
        "figures": list(c.figures), "coverage": list(c.coverage), "notes": list(c.notes),
        "disagreements": list(c.disagreements),
        "curves": [{"title": f.title, "caption": f.caption} for f in c.curves],
    })


def render_comparison(c: Comparison) -> str:
    """The comparison as one self-contained HTML page (every string autoescaped)."""
    from textrobust.report.html import _environment

    return str(_environment().get_template("compare.html.j2").render(**_page(c)))


def write_comparison(c: Comparison, out_dir: str | os.PathLike[str]) -> tuple[Path, Path]:
    """Write ``compare.html`` and ``compare.json`` into ``out_dir`` (each atomically)."""
    from textrobust.report.html import _write_atomic

    page = render_comparison(c)
    data = json.dumps(comparison_data(c), indent=2, allow_nan=False, ensure_ascii=False) + "\n"
    folder = Path(out_dir)
    if folder.exists() and not folder.is_dir():
        raise ConfigError(f"The output folder '{folder}' (--out) is a file; give a folder.")
    folder.mkdir(parents=True, exist_ok=True)
    html_path, json_path = folder / "compare.html", folder / "compare.json"
    _write_atomic(json_path, data)
    _write_atomic(html_path, page)
    return html_path, json_path
