"""Executors run one worker function over many units: in this process, in a pool of
processes, or on Ray actors. The audit orchestrator drives all three the same way.

A :class:`WorkerSpec` is a picklable recipe; each worker process (or actor) calls
``spec.build()`` once, lazily on its first unit, and keeps the :class:`Worker` for every
later unit of the same spec. :meth:`Executor.map` yields one :class:`Outcome` per
:class:`Unit`, in completion order, with the seconds and model queries measured in the
worker around the call. An exception raised by ``worker(payload)`` becomes the outcome's
``error`` (:func:`error_payload`) and the run goes on; a worker process
that dies (killed, segfault) ends the map with :class:`WorkerLost` once every finished
outcome has been yielded.

>>> from textrobust.audit.testing import SquareSpec
>>> with make_executor("local") as executor:
...     outcomes = list(executor.map(SquareSpec(fail_on=(2,)), [Unit(f"u{i}", i, i) for i in range(4)]))
>>> [(o.unit.id, o.value, o.error and o.error["error"], o.queries) for o in outcomes]
[('u0', 0, None, 1), ('u1', 1, None, 2), ('u2', None, 'ValueError', 3), ('u3', 9, None, 1)]

The values never depend on the executor: every worker gets the same payload, and the
order of the outcomes is the only difference (sort by ``unit.position`` when it matters).
"""

from __future__ import annotations

import hashlib
import importlib
import math
import pickle
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Protocol, runtime_checkable

from textrobust.errors import ConfigError, TextRobustError
from textrobust.registry import Registry

__all__ = [
    "EXECUTORS",
    "Executor",
    "Outcome",
    "Unit",
    "Worker",
    "WorkerBuildError",
    "WorkerLost",
    "WorkerSpec",
    "call_worker",
    "error_payload",
    "make_executor",
]

_TRACEBACK_CHARS = 4000


# ---- the contract -------------------------------------------------------------------------------
@runtime_checkable
class Worker(Protocol):
    """One worker's state: analyses one payload per call and counts its model queries."""

    def __call__(self, payload: Any) -> Any:
        """Analyse one unit; the return value must be picklable."""
        ...

    def queries(self) -> int:
        """Monotone counter of the model queries this worker has sent."""
        ...


@runtime_checkable
class WorkerSpec(Protocol):
    """Picklable recipe for one worker's state (loads the victim, builds the analysis...)."""

    def build(self) -> Worker: ...


@dataclass(frozen=True)
class Unit:
    """One piece of work: a unique ``id``, its ``position`` in the original order and a
    picklable ``payload`` handed to ``worker(payload)``."""

    id: str
    position: int
    payload: Any


@dataclass(frozen=True)
class Outcome:
    """What became of one :class:`Unit`.

    ``unit`` is the very object given to :meth:`Executor.map` (every executor keeps the
    units in the driver, so only the payload travels to a worker and nothing but the
    result travels back); ``value`` is the worker's return value, ``None`` when it failed;
    ``error`` is :func:`error_payload` of the exception
    ``worker(payload)`` raised, else ``None``; ``seconds`` is the wall time of the call and
    ``queries`` the model queries it sent, both measured in the worker; ``worker`` names
    who did it (``"local"``, ``"process-1"``, ``"ray-<actor id prefix>"``).
    """

    unit: Unit
    value: Any | None
    error: dict[str, str] | None
    seconds: float
    queries: int
    worker: str

    @property
    def failed(self) -> bool:
        return self.error is not None


@runtime_checkable
class Executor(Protocol):
    """Runs a :class:`WorkerSpec`'s workers over units; see the module docstring.

    ``map`` yields one :class:`Outcome` per unit in completion order and builds workers
    lazily. Closing its iterator early, or a KeyboardInterrupt, cancels the pending units
    and shuts the workers down. One ``map`` runs at a time per executor. ``close`` (or
    leaving the ``with`` block) releases every worker; a closed executor can ``map`` again.
    """

    name: str
    workers: int

    def map(self, spec: WorkerSpec, units: Sequence[Unit]) -> Iterator[Outcome]: ...

    def close(self) -> None: ...

    def __enter__(self) -> Executor: ...

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None: ...


class WorkerLost(TextRobustError):
    """A worker process or actor died (killed, out of memory, segfault) during a map.

    Raised after every outcome that had already finished was yielded. ``worker`` names
    it, ``in_flight`` holds the ids of the units that were running or queued on any
    worker, ``not_started`` counts the units never submitted.
    """

    def __init__(self, worker: str, cause: str, in_flight: Sequence[str], not_started: int) -> None:
        self.worker = worker
        self.cause = cause
        self.in_flight = tuple(in_flight)
        self.not_started = not_started
        super().__init__(
            f"Worker {worker} died unexpectedly ({cause}) with {len(self.in_flight)} unit(s) in flight"
            f" and {not_started} not started. Every finished result was kept; rerun with `--resume` "
            "to finish the rest. If it happens again, the unit probably exhausts memory or crashes "
            "the model: try fewer '--workers', or '--executor local' to see the error."
        )


class WorkerBuildError(TextRobustError):
    """``spec.build()`` raised in a worker process or actor.

    The original exception lives in another process; ``error`` holds its
    :func:`error_payload` (type, message, traceback). The ``local``
    executor raises the original exception instead.
    """

    def __init__(self, worker: str, error: dict[str, str]) -> None:
        self.worker = worker
        self.error = dict(error)
        super().__init__(
            f"Building the worker in {worker} failed: {error.get('error')}: {error.get('message')}\n"
            f"Worker traceback (most recent call last):\n{error.get('traceback', '').rstrip()}"
        )


# ---- shared by the implementations --------------------------------------------------------------
def error_payload(exc: BaseException) -> dict[str, str]:
    """The error recorded for a unit whose work raised ``exc`` (stored with ``failed=True``).

    ``{"error": <type name>, "message": <str(exc)>, "traceback": <last frames>}``.
    """
    formatted = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return {
        "error": type(exc).__name__,
        "message": str(exc),
        "traceback": formatted[-_TRACEBACK_CHARS:],
    }


def call_worker(worker: Worker, payload: Any) -> tuple[Any | None, dict[str, str] | None, float, int]:
    """``(value, error, seconds, queries)`` of one ``worker(payload)`` call.

    An ``Exception`` becomes ``error`` (KeyboardInterrupt and SystemExit propagate).
    """
    before = worker.queries()
    start = time.perf_counter()
    try:
        value, error = worker(payload), None
    except Exception as exc:
        value, error = None, error_payload(exc)
    seconds = time.perf_counter() - start
    return value, error, seconds, worker.queries() - before


def pickled_spec(spec: WorkerSpec, executor: str, dumps: Callable[[Any], bytes] | None = None) -> tuple[str, bytes]:
    """``(key, bytes)`` of ``spec`` (``dumps`` defaults to :func:`pickle.dumps`): workers
    keep the built worker while the key is equal."""
    try:
        blob = (dumps or _dumps)(spec)
    except Exception as exc:
        raise ConfigError(
            f"The worker spec {type(spec).__name__} cannot be pickled for the '{executor}' executor "
            f"({type(exc).__name__}: {exc}). Give a spec that holds settings and paths rather than "
            "live objects, or use '--executor local'."
        ) from exc
    return hashlib.sha256(blob).hexdigest(), blob


def _dumps(value: Any) -> bytes:
    return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)


def count_remaining(units: Sequence[Unit], submitted: int) -> int:
    """Units of ``units`` never submitted (0 for an iterable without a length)."""
    try:
        return max(len(units) - submitted, 0)
    except TypeError:
        return 0


def single_map_guard(executor: Any) -> None:
    """Refuse a second concurrent ``map`` on the same executor."""
    if getattr(executor, "_mapping", False):
        raise TextRobustError(
            f"The '{executor.name}' executor is already running a map; exhaust or close the "
            "previous iterator before starting another."
        )


# ---- the registry -------------------------------------------------------------------------------
EXECUTORS: Registry[Any] = Registry("executor")

#: Where each executor class lives. The implementations import this module (the contract
#: above), so the registry imports them by name, when one is made: no import cycle, and
#: Ray is imported only for ``make_executor("ray")``.
_IMPLEMENTATIONS: dict[str, tuple[str, str]] = {
    "local": ("textrobust.audit.executor_local", "LocalExecutor"),
    "process": ("textrobust.audit.executor_process", "ProcessExecutor"),
    "lockstep": ("textrobust.audit.executor_lockstep", "LockstepExecutor"),
    "ray": ("textrobust.audit.executor_ray", "RayExecutor"),  # imports ray, or says how to install it
}


def _implementation(name: str) -> Callable[..., Executor]:
    """The executor class registered as ``name`` (its module imported now)."""
    module, attribute = _IMPLEMENTATIONS[name]
    implementation: Callable[..., Executor] = getattr(importlib.import_module(module), attribute)
    return implementation


def check_workers(workers: object, option: str = "--workers") -> int | None:
    """``workers`` if it is ``None`` or an integer >= 1, else a ConfigError naming ``option``."""
    if workers is None:
        return None
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ConfigError(f"The '{option}' option must be an integer >= 1. Got {workers!r} instead.")
    return workers


def check_gpus_per_worker(gpus: object, option: str = "--gpus-per-worker") -> float:
    """``gpus`` as a float (``None``: 0, no GPU), else a ConfigError naming ``option``.

    Ray's rules for a GPU request: a number >= 0, a fraction (several workers share one
    GPU) only below 1, a whole number above it, at most four decimals.
    """
    if gpus is None:
        return 0.0
    if isinstance(gpus, bool) or not isinstance(gpus, (int, float)) or not math.isfinite(gpus) or gpus < 0:
        raise ConfigError(f"The '{option}' option must be a number >= 0, e.g. 1 or 0.5. Got {gpus!r} instead.")
    if gpus > 1 and gpus != int(gpus):
        raise ConfigError(
            f"The '{option}' option must be a fraction below 1 (workers sharing a GPU) or a whole number of "
            f"GPUs. Got {gpus!r} instead; give {math.floor(gpus)} or {math.ceil(gpus)}."
        )
    if gpus != round(gpus, 4):
        raise ConfigError(f"The '{option}' option takes at most four decimals (Ray's precision). Got {gpus!r} "
                          f"instead; give {max(round(gpus, 4), 0.0001):g}.")
    return float(gpus)


@EXECUTORS.register("local", "In this process, one worker (the default; no pickling).")
def _local(*, workers: int | None = None) -> Executor:
    return _implementation("local")(workers=workers)


@EXECUTORS.register("process", "A pool of worker processes on this machine (spawned; default: one per core).")
def _process(*, workers: int | None = None) -> Executor:
    return _implementation("process")(workers=workers)


@EXECUTORS.register("lockstep", "In this process, --workers examples at a time (default 8) sharing forward "
                    "passes (measured: +6% on MiniLM, slower on the CNN; benchmarks/results/summary.md).")
def _lockstep(*, workers: int | None = None) -> Executor:
    return _implementation("lockstep")(workers=workers)


@EXECUTORS.register("ray", "Ray actors: a local Ray instance, or a cluster with --address (docs/ray.md).")
def _ray(*, workers: int | None = None, address: str | None = None, gpus_per_worker: float | None = None) -> Executor:
    return _implementation("ray")(
        workers=workers, address=address, gpus_per_worker=gpus_per_worker)


def make_executor(name: str, *, workers: int | None = None, address: str | None = None,
                  gpus_per_worker: float | None = None) -> Executor:
    """The executor ``name`` (``local``, ``lockstep``, ``process`` or ``ray``) with validated
    options.

    ``workers``: worker processes or actors (``None``: 1 for ``local``, one per core
    for ``process`` and ``ray``), or examples in lockstep (``lockstep``, default 8). ``address`` (Ray only): ``None`` starts a local Ray instance, ``"auto"``
    joins a running cluster, else a head address such as ``ray://host:10001``.
    ``gpus_per_worker`` (Ray only): the GPUs each actor reserves (``None``: none; 0.5: two
    actors share a GPU).
    """
    if not isinstance(name, str) or name not in EXECUTORS:
        raise ConfigError(
            f"The '--executor' option must be one of {', '.join(EXECUTORS.names())}. Got {name!r} instead."
        )
    workers = check_workers(workers)
    if gpus_per_worker is not None:
        if name != "ray":
            raise ConfigError(
                f"The '--gpus-per-worker' option is only valid with '--executor ray'. Got gpus_per_worker="
                f"{gpus_per_worker!r} with '--executor {name}' (only Ray actors reserve GPUs; the other "
                "executors run on this machine as they are)."
            )
        gpus_per_worker = check_gpus_per_worker(gpus_per_worker)
        if address is None:
            return EXECUTORS.get(name)(workers=workers, gpus_per_worker=gpus_per_worker)
    if address is not None:
        if name != "ray":
            raise ConfigError(
                f"The '--address' option is only valid with '--executor ray'. Got address={address!r} "
                f"with '--executor {name}'."
            )
        if not isinstance(address, str) or not address.strip():
            raise ConfigError(
                "The '--address' option must be 'auto' or a Ray head address such as "
                f"'ray://host:10001' or 'host:6379'. Got {address!r} instead."
            )
        return EXECUTORS.get(name)(workers=workers, address=address.strip(), gpus_per_worker=gpus_per_worker)
    return EXECUTORS.get(name)(workers=workers)
