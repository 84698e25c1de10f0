"""SIGTERM stops a command as Ctrl-C does, every time (issue 37, item 2).

``kill PID``, a CI timeout or a container stop sends SIGTERM. The handler turns it into
:class:`Terminated`, a ``KeyboardInterrupt``, so that every path that cleans up after
Ctrl-C (executors, the store, the resume hint) does the same after it. Python runs the
handler between two bytecodes of the main thread, wherever it is; a raise there can be
lost: in a ``__del__``, a weakref callback or a garbage-collector callback Python prints
"Exception ignored in ..." and goes on, and a library's ``except BaseException: pass``
eats it. So a stop is kept until the command has ended:

- the stop is recorded (:func:`stop_requested`) and the handler stays installed;
- a :class:`Terminated` that Python reports as unraisable (lost in a ``__del__``) is
  delivered again at once, by a watcher thread that sends SIGTERM to the process: the
  handler then raises in the frame that runs next, no longer the finaliser;
- while the command has not ended the watcher delivers it again every
  :data:`REDELIVER_SECONDS`, to Python's handler only (``_thread.interrupt_main``: a
  library may have put its own or the default under it, as ``ray.shutdown`` does, and
  a real signal would then kill the clean-up); the handler ignores a redelivery while a ``Terminated`` is
  being handled (``sys.exc_info()`` holds it: an ``except`` or ``finally`` block, an
  ``__exit__``, cleaning up after the stop), so clean-up is not cut short;
- the command's end (:class:`textrobust.cli.common.Group`) turns a stop into exit code
  143 (128 + SIGTERM), also when the command went on to its end after a lost raise;
- a second SIGTERM from outside ends the process at once, as by default.

A forked child (a process-pool worker) ends as SIGTERM would by default.
"""

from __future__ import annotations

import _thread
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any

__all__ = ["REDELIVER_SECONDS", "Terminated", "stop_requested", "stop_ended", "stop_on_sigterm", "stopping"]

#: Seconds between deliveries of a stop the command has not yet ended on.
REDELIVER_SECONDS = 1.0
#: How often the watcher looks for a lost raise.
_POLL_SECONDS = 0.02


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived (``kill PID``, a CI timeout, a container stop). A KeyboardInterrupt,
    so that every path that cleans up after Ctrl-C (executors, the store, the resume hint)
    does the same after it."""

    exit_code = 128 + signal.SIGTERM


@dataclass
class _Stop:
    """The stop of this process: the owner's pid, whether SIGTERM arrived, whether the
    command has ended on it, whether a raise was lost, and a redelivery in flight."""

    owner: int = 0
    requested: bool = False
    ended: bool = False
    lost: bool = False
    redelivering: bool = False


_STOP = _Stop()
_HOOKED = threading.Lock()


def stop_requested() -> bool:
    """Whether SIGTERM arrived in this process (since :func:`stop_on_sigterm`)."""
    return _STOP.requested and _STOP.owner == os.getpid()


def stop_ended() -> None:
    """The command has ended on the stop (its exit code is chosen): no more deliveries."""
    _STOP.ended = True


def stopping(exc: BaseException | None) -> bool:
    """Whether ``exc`` is a :class:`Terminated` or was raised while handling one (its
    cause or context, at any depth): a stop being cleaned up after."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, Terminated):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


def stop_on_sigterm() -> None:
    """Make SIGTERM in this process a stop that always stops (see the module). Child
    processes (forked workers) keep the default."""
    _STOP.owner = os.getpid()
    _STOP.requested = _STOP.ended = _STOP.lost = _STOP.redelivering = False
    signal.signal(signal.SIGTERM, _handler)
    with _HOOKED:
        if not getattr(sys.unraisablehook, "_textrobust_stop", False):
            sys.unraisablehook = _unraisable_hook(sys.unraisablehook)


def _handler(signum: int, frame: Any) -> None:
    if os.getpid() != _STOP.owner:  # a forked child: end as SIGTERM would
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)
        return
    if _STOP.requested and not _STOP.redelivering:  # a second SIGTERM from outside: end now
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)
        return
    _STOP.redelivering = False
    if _STOP.ended or stopping(sys.exc_info()[1]):
        return  # the command has ended on it, or is cleaning up after it: leave that alone
    if not _STOP.requested:
        _STOP.requested = True
        threading.Thread(target=_watch, name="textrobust-sigterm", daemon=True).start()
    raise Terminated()


def _watch() -> None:
    """Deliver the stop again when a raise was lost, and every :data:`REDELIVER_SECONDS`
    until the command has ended on it."""
    last = time.monotonic()
    while not _STOP.ended:
        time.sleep(_POLL_SECONDS)
        if _STOP.ended:
            return
        if signal.getsignal(signal.SIGTERM) is not _handler:
            continue  # another handler now: not ours to deliver to
        if _STOP.lost:  # our handler ran a moment ago: a real signal, which also wakes a blocked wait
            _STOP.lost = False
            _STOP.redelivering = True
            os.kill(_STOP.owner, signal.SIGTERM)
            last = time.monotonic()
        elif time.monotonic() - last >= REDELIVER_SECONDS:
            # to Python's handler only: a library may have put its own (or the default) under it
            # in the meantime (ray.shutdown does), and a real signal would kill the clean-up
            _STOP.redelivering = True
            _thread.interrupt_main(signal.SIGTERM)
            last = time.monotonic()


def _unraisable_hook(previous: Any) -> Any:
    """``sys.unraisablehook`` that notes a lost :class:`Terminated` (the watcher delivers
    it again) instead of printing it; anything else goes to ``previous``."""

    def hook(unraisable: Any) -> None:
        if isinstance(unraisable.exc_value, Terminated) and os.getpid() == _STOP.owner and not _STOP.ended:
            _STOP.lost = True
            return
        previous(unraisable)

    hook._textrobust_stop = True  # type: ignore[attr-defined]
    return hook
