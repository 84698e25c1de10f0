"""``textrobust export``: a run's stored results as one flat row per record.

The format comes from ``format`` or from the name of the file ``to`` (``.csv``,
``.jsonl``/``.ndjson``, ``.json``); a name that says nothing needs ``format``, and a
name that says another format than ``format`` is refused. Rows are those of
:meth:`textrobust.store.Run.export`, built from each analysis's typed record
(:meth:`~textrobust.analyses.protocol.Analysis.export_rows`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from textrobust.errors import ConfigError, StoreError
from textrobust.records import decode

__all__ = ["FORMAT_OF_SUFFIX", "export_format", "export_run"]

#: The export format a file name's suffix says.
FORMAT_OF_SUFFIX = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json"}
_FORMATS = ("csv", "jsonl", "json")


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


def export_run(out: str | os.PathLike[str], *, to: str | os.PathLike[str] | None = None, format: str | None = None,
               run_id: str | None = None) -> tuple[Path, int]:
    """Write the results of run ``run_id`` (default: the latest) of the run folder ``out``
    to ``to`` (default ``<out>/results.<format>``); return the file and its row count."""
    from textrobust.store import RunStore

    chosen = export_format(to, format)
    folder = Path(out)
    path = folder / "store.sqlite"
    if not path.is_file():
        raise StoreError(f"No run store at {path}: give the --out folder of a run.")
    with RunStore(path) as store:
        run = store.open_run(run_id) if run_id else store.latest_run()
        if run is None:
            raise StoreError(f"No run found in {path}.")
        target = Path(to) if to is not None else folder / f"results.{chosen}"
        return target, run.export(target, chosen, rows=_rows_of(run.kind))


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
