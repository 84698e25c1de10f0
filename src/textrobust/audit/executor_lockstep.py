"""The ``lockstep`` executor: several units at once in this process, one shared forward pass.

``workers`` threads (default 8) each run one unit at a time with their own worker (own
query layer: budgets, caches and query counts per unit, as with ``local``), and their
victim calls meet in a :class:`~textrobust.victims.gate.BatchingGate`: when every thread
still working waits for the model, one forward pass scores all of their texts. The victim
then sees batches up to ``workers`` times larger (issue: speed, cross-example batching).
One process, one copy of the model. Measured (``benchmarks/results/summary.md``): greedy
on MiniLM +6% examples/s with 8 lanes; a TextFooler audit on the default CNN 0.73x, since
every lane builds its own components and the CNN's cost per text barely falls with the
batch size. Use it for victims whose forward pass gains from large batches.

Specs that can share a victim build their workers and the gate with ``build_group(n)``
(the audit's :class:`~textrobust.audit.orchestrator.AnalysisWorkerSpec` does); any other
spec runs on one worker, as with ``local``. The workers take turns (see the gate), so the
components they share never run in two threads at once.

Values equal those of ``local`` for victims whose answer for a text does not depend on
the rest of its batch (every zoo model), up to float32 rounding of the probabilities at
another padded width; the order of the outcomes differs. Query counts
per unit are equal unless two units send the same text (each thread caches its own).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator, Sequence
from types import TracebackType
from typing import Any

from textrobust.audit.executors import Outcome, Unit, Worker, WorkerSpec, call_worker, single_map_guard
from textrobust.errors import ConfigError

__all__ = ["DEFAULT_LOCKSTEP", "LockstepExecutor"]

#: Units run in lockstep when ``--workers`` is not given.
DEFAULT_LOCKSTEP = 8
_DONE = object()


class LockstepExecutor:
    """Runs ``workers`` units at a time in threads of this process, their forward passes
    merged (see the module docstring). Nothing is pickled."""

    name = "lockstep"

    def __init__(self, workers: int | None = None) -> None:
        if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
            raise ConfigError(f"The '--workers' option must be an integer >= 1. Got {workers!r} instead.")
        self.workers = workers or DEFAULT_LOCKSTEP
        self._cached: tuple[WorkerSpec, list[Worker], Any] | None = None
        self._mapping = False

    def map(self, spec: WorkerSpec, units: Sequence[Unit]) -> Iterator[Outcome]:
        single_map_guard(self)
        return self._map(spec, units)

    def _map(self, spec: WorkerSpec, units: Sequence[Unit]) -> Iterator[Outcome]:
        single_map_guard(self)
        self._mapping = True
        try:
            source = iter(units)
            first = next(source, None)
            if first is None:
                return
            workers, gate = self._group(spec)
            n = len(workers)
            pulled = threading.Lock()
            head: list[Unit] = [first]

            def take() -> Unit | None:
                # units are pulled lazily, one when a worker is free
                with pulled:
                    return head.pop() if head else next(source, None)

            # bounded: a worker runs at most two units ahead of the consumer
            results: queue.Queue[Any] = queue.Queue(maxsize=2 * n)

            def put(item: Any) -> None:
                while True:
                    try:
                        results.put(item, timeout=0.05)
                        return
                    except queue.Full:
                        if stop.is_set():
                            return
            stop = threading.Event()
            if gate is not None:
                gate.open(n)

            def run(index: int) -> None:
                worker = workers[index]
                if gate is not None:
                    gate.enter()
                try:
                    while not stop.is_set():
                        unit = take()
                        if unit is None:
                            break
                        value, error, seconds, queries = call_worker(worker, unit.payload)
                        put(Outcome(unit, value, error, seconds, queries, f"lockstep-{index}"))
                except BaseException as exc:  # noqa: BLE001 - handed to the driver thread
                    put(exc)
                finally:
                    if gate is not None:
                        gate.leave()
                    put(_DONE)

            threads = [threading.Thread(target=run, args=(i,), name=f"textrobust-lockstep-{i}", daemon=True)
                       for i in range(n)]
            for thread in threads:
                thread.start()
            running = n
            try:
                while running:
                    item = results.get()
                    if item is _DONE:
                        running -= 1
                    elif isinstance(item, BaseException):
                        raise item
                    else:
                        yield item
            finally:
                stop.set()
                if gate is not None:
                    gate.close()  # wake members waiting for a forward pass that will not come
                for thread in threads:
                    thread.join(timeout=60)
        finally:
            self._mapping = False

    def _group(self, spec: WorkerSpec) -> tuple[list[Worker], Any]:
        """The workers of ``spec`` and their gate, built once and kept for the next map of
        the same spec (by identity). Specs without ``build_group`` get one worker."""
        if self._cached is None or self._cached[0] is not spec:
            self._cached = None  # free the old workers before building new ones
            build_group = getattr(spec, "build_group", None)
            if callable(build_group):
                workers, gate = build_group(self.workers)
                self._cached = (spec, list(workers), gate)
            else:
                self._cached = (spec, [spec.build()], None)
        return self._cached[1], self._cached[2]

    def close(self) -> None:
        self._cached = None

    def __enter__(self) -> LockstepExecutor:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"LockstepExecutor(workers={self.workers})"
