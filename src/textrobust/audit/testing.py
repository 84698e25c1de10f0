"""Test doubles for executors: picklable worker specs whose answers are known in closed form.

They live in the package (not in a test file) because a spawned worker process or a Ray
actor must import the spec's class.

>>> worker = SquareSpec(fail_on=(3,)).build()
>>> worker(4), worker.queries()
(16, 2)
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any
from dataclasses import dataclass, field

__all__ = [
    "BrokenSpec",
    "BusySpec",
    "DieSpec",
    "DieWorker",
    "LambdaValueSpec",
    "SlowSpec",
    "SlowWorker",
    "SquareSpec",
    "SquareWorker",
    "WhereSpec",
    "cost",
]


def cost(x: int) -> int:
    """The model queries :class:`SquareWorker` spends on ``x``: ``1 + x % 3``."""
    return 1 + x % 3


def _log(path: str | None, line: str) -> None:
    if path is not None:
        with open(path, "a", encoding="utf-8") as handle:  # one short O_APPEND write: atomic
            handle.write(f"{line}\n")


class SquareWorker:
    """Returns ``x * x``; spends :func:`cost` ``(x)`` queries; raises ValueError on ``fail_on``."""

    def __init__(self, fail_on: tuple[int, ...]) -> None:
        self.fail_on = fail_on
        self._queries = 0

    def __call__(self, payload: int) -> int:
        self._queries += cost(payload)  # the queries are spent even when the unit fails
        if payload in self.fail_on:
            raise ValueError(f"SquareWorker refuses {payload}")
        return payload * payload

    def queries(self) -> int:
        return self._queries


@dataclass(frozen=True)
class SquareSpec:
    """Builds a :class:`SquareWorker`; with ``build_log`` each build appends ``build <pid>``
    to that file, so a test can count the builds made in other processes."""

    fail_on: tuple[int, ...] = ()
    build_log: str | None = None

    def build(self) -> SquareWorker:
        _log(self.build_log, f"build {os.getpid()}")
        return SquareWorker(self.fail_on)


class SlowWorker:
    """Returns the payload, after sleeping ``seconds`` on the payloads in ``slow_on``; logs
    ``start <pid> <x>`` and ``end <pid> <x>`` to ``log`` when given. One query per call."""

    def __init__(self, seconds: float, slow_on: tuple[int, ...], log: str | None) -> None:
        self.seconds = seconds
        self.slow_on = slow_on
        self.log = log
        self._queries = 0

    def __call__(self, payload: int) -> int:
        _log(self.log, f"start {os.getpid()} {payload}")
        self._queries += 1
        if payload in self.slow_on:
            time.sleep(self.seconds)
        _log(self.log, f"end {os.getpid()} {payload}")
        return payload

    def queries(self) -> int:
        return self._queries


@dataclass(frozen=True)
class SlowSpec:
    """Builds a :class:`SlowWorker`."""

    seconds: float = 1.0
    slow_on: tuple[int, ...] = ()
    log: str | None = None

    def build(self) -> SlowWorker:
        return SlowWorker(self.seconds, self.slow_on, self.log)


class DieWorker:
    """Returns the payload; on a payload in ``die_on`` ends its process with ``os._exit(1)``,
    like a worker killed by the OOM killer. In the process that made the spec (the test
    driver) it raises RuntimeError instead, so a ``local`` run cannot kill the tests."""

    def __init__(self, die_on: tuple[int, ...], driver_pid: int) -> None:
        self.die_on = die_on
        self.driver_pid = driver_pid
        self._queries = 0

    def __call__(self, payload: int) -> int:
        self._queries += 1
        if payload in self.die_on:
            if os.getpid() == self.driver_pid:
                raise RuntimeError("DieWorker will not end the driver process")
            os._exit(1)
        return payload

    def queries(self) -> int:
        return self._queries


@dataclass(frozen=True)
class DieSpec:
    """Builds a :class:`DieWorker`; ``driver_pid`` defaults to the creating process."""

    die_on: tuple[int, ...] = ()
    driver_pid: int = field(default_factory=os.getpid)

    def build(self) -> DieWorker:
        return DieWorker(self.die_on, self.driver_pid)


@dataclass(frozen=True)
class BrokenSpec:
    """``build()`` raises ValueError(message), like a victim folder that is missing."""

    message: str = "cannot build"

    def build(self) -> SquareWorker:
        raise ValueError(self.message)


class _LambdaValueWorker:
    def __call__(self, payload: int) -> object:
        return lambda: payload

    def queries(self) -> int:
        return 0


@dataclass(frozen=True)
class LambdaValueSpec:
    """Its worker returns a lambda: fine in process, impossible to send back from another."""

    def build(self) -> _LambdaValueWorker:
        return _LambdaValueWorker()


class _WhereWorker:
    def __call__(self, payload: int) -> tuple[str, float]:
        ray = sys.modules.get("ray")  # imported in a Ray actor; never imported here
        if ray is None or not ray.is_initialized():
            return "local", 0.0
        context = ray.get_runtime_context()
        return context.get_node_id(), float(context.get_assigned_resources().get("GPU", 0.0))

    def queries(self) -> int:
        return 0


@dataclass(frozen=True)
class WhereSpec:
    """Its worker answers where it runs: ``(Ray node id, GPUs Ray assigned to it)``, or
    ``("local", 0.0)`` outside Ray."""

    def build(self) -> _WhereWorker:
        return _WhereWorker()


class _BusyWorker:
    def __init__(self, rounds: int) -> None:
        self.rounds = rounds
        self._queries = 0

    def __call__(self, payload: int) -> int:
        self._queries += 1
        value = payload
        for _ in range(self.rounds):  # pure Python: holds the GIL, one core per worker
            value = (value * 1_103_515_245 + 12_345) % 2_147_483_648
        return value

    def queries(self) -> int:
        return self._queries


@dataclass(frozen=True)
class BusySpec:
    """A CPU-bound worker for benchmarks: ``rounds`` steps of a linear congruential generator
    started at the payload (deterministic); one query per unit."""

    rounds: int = 100_000

    def build(self) -> _BusyWorker:
        return _BusyWorker(self.rounds)


# ---- a victim that worker processes can rebuild ------------------------------------------------
def keyword_scores(texts: list[str]) -> list[list[float]]:
    """A toy sentiment model: 'good' or 'great' -> positive, else negative."""
    return [[0.2, 0.8] if ("good" in t or "great" in t) else [0.9, 0.1] for t in texts]


def keyword_victim() -> Any:
    """A picklable :class:`~textrobust.victims.function.FunctionVictim` of
    :func:`keyword_scores` (labels negative, positive)."""
    from textrobust.victims.function import FunctionVictim

    return FunctionVictim(keyword_scores, ("negative", "positive"))


def dying_scores(flag: str, driver_pid: int, texts: list[str]) -> list[list[float]]:
    """:func:`keyword_scores`, but a process other than ``driver_pid`` exits at once (as if
    killed) on a text holding 'die' while the file ``flag`` exists."""
    if os.path.exists(flag) and any("die" in t for t in texts) and os.getpid() != driver_pid:
        os._exit(1)
    return keyword_scores(texts)


def dying_victim(flag: str) -> Any:
    """A picklable victim whose worker process dies on 'die' texts while ``flag`` exists
    (never in the process that built it: a local run cannot kill the tests)."""
    from functools import partial

    from textrobust.victims.function import FunctionVictim

    return FunctionVictim(partial(dying_scores, flag, os.getpid()), ("negative", "positive"))
