"""The ``process`` executor: a pool of spawned worker processes on this machine.

Each child is started with :func:`multiprocessing.get_context` ``("spawn")`` (forking a
process that has loaded torch is unsafe), ignores SIGINT (the driver decides when to
stop), limits its math libraries to one thread (N workers each using N threads would
oversubscribe the cores) and builds its worker lazily on its first unit, keeping it for
every later unit of the same spec. The driver sends each child at most two units at a
time, so memory stays flat however many units there are, and reads results from one pipe
per child, together with the children's sentinels: a child that dies is noticed at once,
and the results it sent before dying are still read.

The children outlive one ``map`` (the next spec only rebuilds the worker); ``close``
stops them. Closing a map's iterator early, a KeyboardInterrupt or a lost worker
terminates them at once (a running unit is abandoned; the next ``map`` starts a new pool).
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import queue
import signal
import weakref
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from multiprocessing import connection
from types import TracebackType
from typing import Any

from textrobust.audit.executors import (
    Outcome,
    Unit,
    WorkerBuildError,
    WorkerLost,
    WorkerSpec,
    call_worker,
    check_workers,
    count_remaining,
    error_payload,
    pickled_spec,
    single_map_guard,
)
from textrobust.errors import ConfigError

__all__ = ["ProcessExecutor"]

_PER_WORKER = 2  # units in flight per worker: one running, one waiting in its queue
_PARENT_CHECK_SECONDS = 2.0  # an idle worker checks this often that the driver still lives
_THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS",
                     "VECLIB_MAXIMUM_THREADS", "TOKENIZERS_PARALLELISM")


def limit_threads() -> None:
    """Make this worker process single-threaded in numpy, torch and tokenizers.

    N workers on N cores, each starting N math threads, would run N*N threads and
    oversubscribe the machine. The variables must be set before the libraries load;
    torch, if the spawn bootstrap already imported it, is told directly.
    """
    for variable in _THREAD_VARIABLES:
        os.environ[variable] = "false" if variable == "TOKENIZERS_PARALLELISM" else "1"
    import sys

    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)


def _child_main(tasks: Any, results: connection.Connection) -> None:
    """A worker process: ``("spec", key, blob)`` replaces the spec, ``("unit", seq, blob)``
    runs one unit, ``None`` stops. Replies go through ``results``, written synchronously
    so a reply sent before the process dies is never lost."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    limit_threads()
    results.send_bytes(pickle.dumps(("ready",)))
    key: str | None = None
    spec_blob = b""
    worker: Any = None

    def reply(message: tuple[Any, ...]) -> None:
        try:
            data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # the worker returned something that cannot be pickled
            wrapped = TypeError(f"The worker's return value cannot be pickled: {type(exc).__name__}: {exc}")
            data = pickle.dumps(("done", message[1], None, error_payload(wrapped), *message[4:]))
        try:
            results.send_bytes(data)
        except (BrokenPipeError, OSError):  # the driver is gone
            raise SystemExit(0) from None

    parent = multiprocessing.parent_process()
    while True:
        try:
            task = tasks.get(timeout=_PARENT_CHECK_SECONDS)
        except queue.Empty:
            if parent is not None and not parent.is_alive():
                return  # the driver was killed (kill -9): do not linger as an orphan
            continue
        if task is None:
            return
        if task[0] == "spec":
            if task[1] != key:
                worker = None  # free the old worker before the new one is built
                key, spec_blob = task[1], task[2]
            continue
        _, seq, payload_blob = task
        if worker is None:
            try:
                worker = pickle.loads(spec_blob).build()
            except Exception as exc:
                reply(("build_error", seq, error_payload(exc)))
                continue
        try:
            payload = pickle.loads(payload_blob)
        except Exception as exc:
            reply(("done", seq, None, error_payload(exc), 0.0, 0))
            continue
        value, error, seconds, queries = call_worker(worker, payload)
        reply(("done", seq, value, error, seconds, queries))


@dataclass
class _Child:
    name: str
    process: Any
    tasks: Any
    results: connection.Connection
    spec_key: str | None = None
    ready: bool = False  # the child got past the spawn bootstrap
    holding: dict[int, Unit] = field(default_factory=dict)  # seq -> unit sent, no reply yet


def _stop(children: list[_Child]) -> None:
    """Terminate every child now, abandoning running units, and empty ``children``."""
    stopping = list(children)
    children.clear()
    for child in stopping:
        if child.process.pid is not None and child.process.exitcode is None:
            child.process.terminate()
    for child in stopping:
        _reap(child)


def _reap(child: _Child) -> None:
    if child.process.pid is not None:
        child.process.join(5)
        if child.process.exitcode is None:
            child.process.kill()
            child.process.join()
        child.process.close()
    child.tasks.cancel_join_thread()  # a dead child leaves data nobody reads
    child.tasks.close()
    child.results.close()


def _cause(exitcode: int | None) -> str:
    if exitcode is None:
        return "no exit code"
    if exitcode < 0:
        try:
            return f"killed by signal {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"killed by signal {-exitcode}"
    return f"exit code {exitcode}"


class ProcessExecutor:
    """A pool of ``workers`` spawned processes (default: ``os.cpu_count()``); see the module docstring.

    The spec and the payloads must be picklable, and the spec's class importable in a
    fresh interpreter (defined in a module, not in ``__main__`` of a notebook). Worker
    processes are daemonic: they cannot start processes of their own.
    """

    name = "process"

    def __init__(self, workers: int | None = None) -> None:
        workers = check_workers(workers)
        self.workers = workers if workers is not None else (os.cpu_count() or 1)
        self._children: list[_Child] = []  # mutated in place: the finalizer holds it
        self._mapping = False
        weakref.finalize(self, _stop, self._children)  # an executor dropped without close()

    # ---- the pool --------------------------------------------------------------------------------
    def _start(self) -> list[_Child]:
        if self._children and all(c.process.exitcode is None for c in self._children):
            return self._children
        _stop(self._children)  # one died while idle: start afresh
        context = multiprocessing.get_context("spawn")
        try:
            for index in range(1, self.workers + 1):
                name = f"process-{index}"
                tasks = context.Queue()
                reader, writer = context.Pipe(duplex=False)
                process = context.Process(target=_child_main, args=(tasks, writer),
                                          name=f"textrobust-{name}", daemon=True)
                self._children.append(_Child(name, process, tasks, reader))
                process.start()
                writer.close()  # the child holds the only writing end now
        except BaseException:
            _stop(self._children)
            raise
        return self._children

    def close(self) -> None:
        """Stop the workers (politely when idle) and release their resources."""
        children = list(self._children)
        self._children.clear()
        for child in children:
            if child.process.exitcode is None and not child.holding:
                try:
                    child.tasks.put(None)
                except (OSError, ValueError):
                    pass
        for child in children:
            if child.process.pid is not None and child.process.exitcode is None:
                child.process.join(5 if not child.holding else 0)
                if child.process.exitcode is None:
                    child.process.terminate()
            _reap(child)

    # ---- the map ---------------------------------------------------------------------------------
    def map(self, spec: WorkerSpec, units: Sequence[Unit]) -> Iterator[Outcome]:
        single_map_guard(self)
        return self._map(spec, units, *pickled_spec(spec, self.name))

    def _map(self, spec: WorkerSpec, units: Sequence[Unit], key: str, blob: bytes) -> Iterator[Outcome]:
        single_map_guard(self)
        self._mapping = True
        finished = False
        try:
            children = self._start()
            for child in children:
                if child.spec_key != key:
                    child.tasks.put(("spec", key, blob))
                    child.spec_key = key
            todo = iter(enumerate(units))
            exhausted = False
            submitted = 0
            failure: Exception | None = None
            while True:
                limit = _PER_WORKER * len(children)
                while failure is None and not exhausted and sum(len(c.holding) for c in children) < limit:
                    item = next(todo, None)
                    if item is None:
                        exhausted = True
                        break
                    seq, unit = item
                    child = min(children, key=lambda c: len(c.holding))
                    child.tasks.put(("unit", seq, _pickled_payload(unit, self.name)))
                    child.holding[seq] = unit
                    submitted += 1
                if not any(c.holding for c in children):
                    break
                connection.wait([c.results for c in children] + [c.process.sentinel for c in children])
                for child in children:  # every reply already sent, before looking for the dead
                    while child.results.poll():
                        try:
                            message = pickle.loads(child.results.recv_bytes())
                        except EOFError:
                            break
                        if message[0] == "ready":
                            child.ready = True
                            continue
                        unit = child.holding.pop(message[1])
                        if message[0] == "build_error":
                            failure = failure or WorkerBuildError(child.name, message[2])
                            continue
                        _, _, value, error, seconds, queries = message
                        yield Outcome(unit, value, error, seconds, queries, child.name)
                if failure is not None:
                    raise failure
                for child in children:
                    if child.process.exitcode is not None:
                        in_flight = [u.id for c in children for u in c.holding.values()]
                        cause = _cause(child.process.exitcode)
                        if not child.ready:
                            cause += (" while starting, before it could run a unit; its error is printed above. "
                                      "A script that uses '--executor process' must run its code under "
                                      "`if __name__ == '__main__':`")
                        raise WorkerLost(child.name, cause, in_flight,
                                         count_remaining(units, submitted))
            finished = True
        finally:
            self._mapping = False
            if not finished:
                _stop(self._children)

    def __enter__(self) -> ProcessExecutor:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ProcessExecutor(workers={self.workers})"


def _pickled_payload(unit: Unit, executor: str) -> bytes:
    try:
        return pickle.dumps(unit.payload, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:
        raise ConfigError(
            f"The payload of unit '{unit.id}' cannot be pickled for the '{executor}' executor "
            f"({type(exc).__name__}: {exc}). Use '--executor local'."
        ) from exc
