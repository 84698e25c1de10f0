"""Helpers shared by the batching-gate tests (imported by name: pytest puts tests/ on sys.path)."""

from __future__ import annotations

import threading
from typing import Any

from textrobust.victims.gate import BatchingGate
from textrobust.victims.query import QueryLayer


def gate_members(gate: BatchingGate, requests: list[list[str]], timeout: float = 60) -> list[Any]:
    """Each request from its own member thread (its own query layer) through ``gate``, as the
    lockstep executor sends them; per request its probabilities, or the error it raised."""
    answers: list[Any] = [None] * len(requests)
    gate.open(len(requests))

    def run(i: int) -> None:
        gate.enter()
        try:
            answers[i] = QueryLayer(gate.member()).probabilities(requests[i])
        except Exception as exc:  # noqa: BLE001 - the caller looks at it
            answers[i] = exc
        finally:
            gate.leave()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(requests))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=timeout)
    assert not any(t.is_alive() for t in threads)
    return answers
