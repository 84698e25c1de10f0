"""``textrobust export``: a run's stored results as one flat row per record.

The format comes from ``format`` or from the name of the file ``to`` (``.csv``,
``.jsonl``/``.ndjson``, ``.json``); a name that says nothing needs ``format``, and a
name that says another format than ``format`` is refused. Rows are those of
:meth:`textrobust.store.Run.flat_rows`, built from each analysis's typed record
(:meth:`~textrobust.analyses.protocol.Analysis.export_rows`); a column that is empty in
every row is left out.

A run folder that holds several analyses (an audit) is exported whole: one file per
analysis (its latest run), named after the analysis next to ``to`` (``x.csv`` gives
``x.attack.csv``, ``x.evaluate.csv``, ...). ``run_id`` exports that one run to ``to``.

An export never destroys a run: a file a run folder holds for its run (the store and its
journal files, ``summary.json``, the reports, the lock, the figures) is never a target,
``--force`` or not, and any other existing file is replaced only with ``force``. Every
target is checked before the first file is written (:func:`check_target`, the guard that
``textrobust review --export`` shares), and a file is written to a temporary name and
renamed into place: replacing a link (``--force``) replaces the link, never the file it
points at.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from textrobust.errors import ConfigError, StoreError
from textrobust.records import decode

__all__ = ["FORMAT_OF_SUFFIX", "RUN_FILES", "Exported", "check_target", "export_format", "export_run", "run_files",
           "target_of"]

#: The export format a file name's suffix says.
FORMAT_OF_SUFFIX = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json"}
_FORMATS = ("csv", "jsonl", "json")

#: The files a run folder holds for its run (written by the run, ``report``, ``compare`` or
#: ``gate``): never an export's target. ``figures/`` and every ``store.sqlite*`` name too.
RUN_FILES = frozenset({"store.sqlite", "store.sqlite-wal", "store.sqlite-shm", "store.sqlite-journal",
                       "summary.json", "report.json", "report.html", ".textrobust.lock", "compare.json",
                       "compare.html"})
#: A folder holding one of these is a run folder.
_RUN_MARKERS = ("store.sqlite", "summary.json", "report.json")


@dataclass(frozen=True)
class Exported:
    """One file an export wrote: the analysis (the run's kind), its run id, the file and
    its row count."""

    analysis: str
    run_id: str
    path: Path
    rows: int


def export_format(to: str | os.PathLike[str] | None, format: str | None) -> str:
    """The format to write: ``format``, else the one ``to``'s suffix says, else ``jsonl``
    when there is no ``to`` (a :class:`ConfigError` when ``to`` says nothing or disagrees).

    >>> export_format("results.csv", None), export_format(None, None), export_format("x.out", "json")
    ('csv', 'jsonl', 'json')
    """
    chosen = None
    if format is not None:
        chosen = str(format).strip().lower()
        if chosen not in _FORMATS:
            raise ConfigError(f"The '--format' option must be csv, jsonl or json. Got {format!r} instead.")
    if to is None:
        return chosen or "jsonl"
    name = Path(to).name
    suffix = Path(to).suffix.lower()
    said = FORMAT_OF_SUFFIX.get(suffix)
    if chosen is None:
        if said is None:
            raise ConfigError(f"Cannot tell the export format from the '--to' file name {name!r}: end it in .csv, "
                              f".jsonl or .json, or give --format csv, jsonl or json.")
        return said
    if said is not None and said != chosen:
        raise ConfigError(f"The '--format' option says {chosen} but the '--to' file {name!r} ends in {suffix} "
                          f"({said}); drop one of them or make them agree.")
    return chosen


def target_of(base: Path, analysis: str | None) -> Path:
    """The file of ``analysis`` next to ``base``: ``x.csv`` -> ``x.<analysis>.csv`` (the
    name ahead of the last suffix); ``base`` itself for ``None`` (one analysis).

    >>> [str(target_of(Path(b), a)) for b, a in (("out/x.csv", "attack"), ("x", "pr"), ("x.csv", None))]
    ['out/x.attack.csv', 'x.pr', 'x.csv']
    """
    if analysis is None:
        return base
    return base.with_name(f"{base.stem}.{analysis}{base.suffix}") if base.suffix else base.with_name(
        f"{base.name}.{analysis}")


def _is_run_folder(folder: Path) -> bool:
    return any((folder / marker).exists() for marker in _RUN_MARKERS)


def _run_file(path: Path) -> Path | None:
    """The run folder whose own file ``path`` is (the store, its journals, the summary,
    the reports, the lock, a figure), else None."""
    if path.parent.name == "figures" and _is_run_folder(path.parent.parent):
        return path.parent.parent
    if (path.name in RUN_FILES or path.name.startswith("store.sqlite")) and _is_run_folder(path.parent):
        return path.parent
    return None


def run_files(folder: Path) -> list[Path]:
    """The files the run folder ``folder`` holds for its run (:data:`RUN_FILES`), as the
    ``protected`` of :func:`check_target`."""
    return [folder / name for name in sorted(RUN_FILES)]


def check_target(target: Path, *, force: bool = False, protected: Iterable[Path] = (), option: str = "--to",
                 example: str = "results.csv") -> None:
    """Refuse (:class:`ConfigError`) to write ``target`` when it is a folder, a file a run
    folder holds for its run (see the module; also through a link or ``..``, and any of
    ``protected``, also under another name: a hard link), or, without ``force``, any other
    existing file. The one guard of every file a command writes beside a run: ``export``'s
    ``--to`` and ``review --export`` (``option`` names the option in the messages,
    ``example`` the file name it suggests)."""
    for path in dict.fromkeys((target, target.resolve())):
        folder = _run_file(path)
        if folder is not None:
            raise ConfigError(f"Will not write the export over '{target}': it is one of the files of the run "
                              f"folder '{folder}' ({'a figure' if path.parent.name == 'figures' else path.name}), "
                              f"and the run would be lost. Give another {option} file, e.g. "
                              f"'{folder / example}'.")
    if target.is_dir():
        raise ConfigError(f"The '{option}' path '{target}' is a folder; give a file name"
                          + (" ending in .csv, .jsonl or .json." if option == "--to" else "."))
    if not target.exists():
        return
    for own in protected:
        try:
            same = own.exists() and target.samefile(own)
        except OSError:
            same = False
        if same:
            raise ConfigError(f"Will not write the export over '{target}': it is the run's file '{own}', and the "
                              f"run would be lost. Give another {option} file.")
    if not force:
        raise ConfigError(f"The export file '{target}' exists; pass --force to replace it, or give another {option} "
                          "file.")


def export_run(out: str | os.PathLike[str], *, to: str | os.PathLike[str] | None = None, format: str | None = None,
               run_id: str | None = None, force: bool = False) -> list[Exported]:
    """Write the results of the run folder ``out``: of the run ``run_id`` to ``to``
    (default ``<out>/results.<format>``), else of the latest run of each analysis the
    folder holds, one file each (:func:`target_of`: ``to`` itself when there is one
    analysis). Every target is checked (:func:`check_target`) before any is written.
    Returns what was written, in the order the analyses ran."""
    from textrobust.store import RunStore, write_table

    folder = Path(out)
    protected = run_files(folder)
    if to is not None:  # the name given is no file of a run (nor a folder), whatever else is wrong
        check_target(Path(to), force=True, protected=protected)
    chosen = export_format(to, format)
    path = folder / "store.sqlite"
    if not path.is_file():
        raise StoreError(f"No run store at {path}: give the --out folder of a run.")
    base = Path(to) if to is not None else folder / f"results.{chosen}"
    with RunStore(path) as store:
        if run_id:
            runs = [store.open_run(run_id)]
        else:
            every = store.runs()  # oldest first: the last run of a kind is its latest
            latest = {run.kind: run.run_id for run in every}
            runs = [run for run in every if latest[run.kind] == run.run_id]
        if not runs:
            raise StoreError(f"No run found in {path}.")
        several = len(runs) > 1
        targets = [target_of(base, run.kind if several else None) for run in runs]
        for target in targets:
            check_target(target, force=force, protected=protected)
        written = []
        for run, target in zip(runs, targets):
            table = _without_empty_columns(list(run.flat_rows(_rows_of(run.kind))))
            written.append(Exported(run.kind, run.run_id, target, write_table(target, chosen, table)))
        return written


def _without_empty_columns(table: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``table`` without the columns that are empty (None) in every row: a field no row
    has a value for (a PR result's ``estimate`` when every example was skipped) says nothing.

    >>> _without_empty_columns([{"id": "a", "estimate": None}, {"id": "b", "pr": 0.5}])
    [{'id': 'a'}, {'id': 'b', 'pr': 0.5}]
    """
    filled = {key for row in table for key, value in row.items() if value is not None}
    return [{key: value for key, value in row.items() if key in filled} for row in table]


def _rows_of(kind: str) -> Callable[[Mapping[str, Any]], Sequence[Any]] | None:
    """The export rows of a stored payload, through the analysis's typed record; None
    (the payload as it is) for a run that no registered analysis wrote."""
    from textrobust.analyses import ANALYSES

    if kind not in ANALYSES:
        return None
    analysis = ANALYSES.get(kind)

    def rows(payload: Mapping[str, Any]) -> Sequence[Any]:
        try:
            record = decode(analysis.record_type, payload)
        except (StoreError, KeyError, TypeError, ValueError):
            return [payload]  # written by another version: exported as stored, still flat
        return analysis.export_rows(record)

    return rows
