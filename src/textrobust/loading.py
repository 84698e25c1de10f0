"""Model loading, announced and timed (issue 41, item 2: start-up paid once and shown).

Loading a model takes seconds (Gemma 3 270M's 1 GB float32 cache and its 33 MB tokenizer,
MiniLM, spaCy), and a command used to pay it without a word. Every loader that reads a
model from disk runs inside :func:`loading`, which tells the listeners (the audit's
progress display, :mod:`textrobust.audit.progress`) when it starts and when it is done,
and keeps the time in :func:`load_records` (what ``benchmarks/audit_speed.py`` reports as
the "model loading" phase). The loaders cache what they load per process, so each model is
announced once.

>>> from textrobust.loading import loading, load_records
>>> with loading("a tiny model"):
...     pass
>>> [what for what, _ in load_records()][-1]
'a tiny model'

This module sits in the bottom layer: it imports nothing of the package, and loading
anything here is silent until somebody listens (:func:`listening`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

__all__ = ["LoadEvent", "listening", "load_records", "load_seconds", "loading", "thread_load_seconds"]


@dataclass(frozen=True, slots=True)
class LoadEvent:
    """One announcement: ``what`` starts loading (``seconds`` None), or is loaded after
    ``seconds`` (``failed`` when the load raised; ``stopped`` when it was Ctrl-C or
    SIGTERM that ended it, which is no failure of the load)."""

    what: str
    seconds: float | None = None
    failed: bool = False
    stopped: bool = False

    @property
    def done(self) -> bool:
        return self.seconds is not None


Listener = Callable[[LoadEvent], None]

_lock = threading.Lock()
_listeners: list[Listener] = []
_records: list[tuple[str, float, bool]] = []  # (what, seconds, inside another load)
_depth = threading.local()


@contextmanager
def loading(what: str) -> Iterator[None]:
    """Announce that ``what`` (a model, in words) loads during the ``with`` block, and
    record how long it took. A listener that raises is a bug of the listener: it is not
    allowed to break a load, so its error is dropped."""
    _tell(LoadEvent(what))
    depth = getattr(_depth, "value", 0)
    _depth.value = depth + 1
    started = time.perf_counter()
    failed = True
    stopped = False
    try:
        yield
        failed = False
    except KeyboardInterrupt:  # Ctrl-C, or SIGTERM (textrobust.cli.sigterm.Terminated): stopped, not failed
        failed, stopped = False, True
        raise
    finally:
        seconds = time.perf_counter() - started
        _depth.value = depth
        if depth == 0:  # an outer load: this thread's loading time (an inner one is part of it)
            _depth.seconds = getattr(_depth, "seconds", 0.0) + seconds
        with _lock:
            _records.append((what, seconds, depth > 0))
        _tell(LoadEvent(what, seconds, failed, stopped))


@contextmanager
def listening(listener: Listener) -> Iterator[None]:
    """Call ``listener`` with every :class:`LoadEvent` during the ``with`` block."""
    with _lock:
        _listeners.append(listener)
    try:
        yield
    finally:
        with _lock:
            _listeners.remove(listener)


def load_records() -> list[tuple[str, float]]:
    """``(what, seconds)`` of every load of this process so far, in order."""
    with _lock:
        return [(what, seconds) for what, seconds, _ in _records]


def thread_load_seconds() -> float:
    """The seconds this thread has spent in :func:`loading` blocks (outer ones): what a
    timed step takes off its own time, so that the example that happens to load a model
    first is not charged with it (issue 49: after a resume, a second load doubled the
    seconds per example of a short run)."""
    return float(getattr(_depth, "seconds", 0.0))


def load_seconds() -> float:
    """The seconds this process has spent in :func:`loading` blocks; a load inside another
    one (of the same thread) is counted in the outer one only."""
    with _lock:
        return sum(seconds for _, seconds, inner in _records if not inner)


def _tell(event: LoadEvent) -> None:
    with _lock:
        listeners = list(_listeners)
    for listener in listeners:
        try:
            listener(event)
        except Exception:  # noqa: BLE001 - a display must never break a load
            pass
