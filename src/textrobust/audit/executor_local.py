"""The ``local`` executor: one worker, in this process, units in their given order."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from types import TracebackType

from textrobust.audit.executors import (
    Outcome,
    Unit,
    Worker,
    WorkerSpec,
    call_worker,
    single_map_guard,
)
from textrobust.errors import ConfigError

__all__ = ["LocalExecutor"]


class LocalExecutor:
    """Runs every unit in this process with one worker; nothing is pickled, so the spec
    may hold live objects (a victim already in memory).

    The built worker is kept for the last spec (by identity): a second ``map`` with the
    same spec object reuses it. An exception from ``spec.build()`` propagates unchanged.
    """

    name = "local"

    def __init__(self, workers: int | None = None) -> None:
        if workers is not None and workers != 1:
            raise ConfigError(
                "The 'local' executor runs one worker in this process, so the '--workers' option "
                f"must be 1 with it. Got {workers!r} instead; use '--executor process' for more."
            )
        self.workers = 1
        self._cached: tuple[WorkerSpec, Worker] | None = None
        self._mapping = False

    def map(self, spec: WorkerSpec, units: Sequence[Unit]) -> Iterator[Outcome]:
        single_map_guard(self)
        return self._map(spec, units)

    def _map(self, spec: WorkerSpec, units: Sequence[Unit]) -> Iterator[Outcome]:
        single_map_guard(self)
        self._mapping = True
        try:
            for unit in units:
                worker = self._worker(spec)
                value, error, seconds, queries = call_worker(worker, unit.payload)
                yield Outcome(unit, value, error, seconds, queries, self.name)
        finally:
            self._mapping = False

    def _worker(self, spec: WorkerSpec) -> Worker:
        if self._cached is None or self._cached[0] is not spec:
            self._cached = None  # free the old worker before building the new one
            self._cached = (spec, spec.build())
        return self._cached[1]

    def close(self) -> None:
        self._cached = None

    def __enter__(self) -> LocalExecutor:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def __repr__(self) -> str:
        return "LocalExecutor(workers=1)"
