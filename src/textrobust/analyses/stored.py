"""An analysis's stored results read back as typed records and failures.

Failures are recognised by the store's own flag (never by guessing keys of a payload);
every other row is decoded into the analysis's ``record_type``. Used wherever a run is
read again: the audit (summaries, a rebuilt report) and the comparison of runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textrobust.analyses.protocol import AnyAnalysis, Failure, Record
from textrobust.errors import StoreError
from textrobust.records import decode

if TYPE_CHECKING:
    from textrobust.store import Run

__all__ = ["read_records"]


def read_records(analysis: AnyAnalysis, run: Run) -> tuple[list[Record], list[Failure]]:
    """The records and failures stored in ``run``, in position order. A row that does not
    decode as the analysis's record type is a :class:`~textrobust.errors.StoreError`."""
    records: list[Record] = []
    failures: list[Failure] = []
    for row in run.results():
        if row.failed:
            failures.append(Failure(row.example_id, str(row.payload.get("error", "Error")),
                                    str(row.payload.get("message", ""))))
            continue
        try:
            records.append(decode(analysis.record_type, row.payload))
        except (StoreError, KeyError, TypeError, ValueError) as exc:
            raise StoreError(
                f"The stored result of '{row.example_id}' in run '{run.run_id}' is not a "
                f"{analysis.record_type.__name__} ({exc}). Was the store written by another "
                "version of textrobust? Run again without --resume."
            ) from None
    return records, failures
