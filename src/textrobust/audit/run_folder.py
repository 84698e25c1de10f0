"""A run folder (``--out``) belongs to one process at a time, and ``--resume`` needs a run.

:class:`RunFolderLock` takes the folder for the process that writes it: an exclusive
``flock`` on the file ``.textrobust.lock`` in the folder, which holds the owner's pid,
command line and start time so that a second process can say who has the folder. The
operating system drops the lock when its owner exits, however it exits (even ``kill -9``),
so a lock file left behind by a dead process never blocks a later run. Without ``fcntl``
(not on a POSIX system) the folder is not locked.

:func:`check_resumable` stops a resume that has nothing to continue (no folder, no store,
or a store with runs of other analyses only) instead of silently starting a new run.

>>> import tempfile, pathlib
>>> with tempfile.TemporaryDirectory() as d, RunFolderLock(pathlib.Path(d)):
...     pass
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from textrobust.errors import StoreError

if TYPE_CHECKING:
    from textrobust.validity.overrides import UserLabels

__all__ = ["LEGACY_SETTINGS", "LOCK_FILE", "RunFolderLock", "check_resumable", "resumed_analyses", "stored_labels",
           "stored_options", "stored_settings"]

#: The lock file inside a run folder.
LOCK_FILE = ".textrobust.lock"
#: Attempts to lock a lock file that its releasing holder removes meanwhile.
_LOCK_TRIES = 50


def _command() -> str:
    argv = list(sys.argv) or ["python"]
    argv[0] = Path(argv[0]).name or argv[0]
    return " ".join(argv)


class RunFolderLock:
    """The exclusive lock of the run folder ``out`` (created if missing), taken on
    construction and released by :meth:`release` (or on leaving a ``with`` block).

    Raises :class:`~textrobust.errors.StoreError` naming the other process (its pid and
    command) when it holds the folder."""

    def __init__(self, out: str | os.PathLike[str]) -> None:
        self.folder = Path(out)
        self.path = self.folder / LOCK_FILE
        self._fd: int | None = None
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX: no lock
            return
        self._fcntl = fcntl
        self.folder.mkdir(parents=True, exist_ok=True)
        fd = self._lock(fcntl)
        owner_line = json.dumps({"pid": os.getpid(), "command": _command(),
                                 "started": datetime.now(UTC).isoformat(timespec="seconds")})
        os.ftruncate(fd, 0)
        os.pwrite(fd, (owner_line + "\n").encode("utf-8"), 0)
        self._fd = fd

    def _lock(self, fcntl: Any) -> int:
        """The lock file, opened and locked. A holder removes the file when it releases it,
        so a file locked here may have been removed meanwhile (this process opened it just
        before): then the lock is on a name nobody else sees, and the file is opened again."""
        for _ in range(_LOCK_TRIES):
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as exc:
                raise StoreError(f"Could not open the lock file {self.path} of the run folder (--out): {exc}") from exc
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                owner = _read_owner(fd)
                os.close(fd)
                raise StoreError(self._busy_message(owner)) from None
            try:
                current = os.stat(self.path).st_ino
            except FileNotFoundError:
                current = None
            if current == os.fstat(fd).st_ino:
                return fd
            os.close(fd)  # removed (and perhaps made again) by the holder that just released it
        raise StoreError(f"Could not lock the run folder '{self.folder}' (--out): its lock file {self.path} kept "
                         f"being replaced ({_LOCK_TRIES} tries). Is another program removing it?")

    def _busy_message(self, owner: dict[str, Any]) -> str:
        who = "another process"
        if owner.get("pid"):
            who = f"process {owner['pid']}"
            if owner.get("command"):
                who += f" ({owner['command']})"
            if owner.get("started"):
                who += f", started {owner['started']}"
        return (f"The run folder '{self.folder}' (--out) is in use by {who}: one process writes a run folder "
                "at a time. Wait for it to finish (or stop it), or give another --out.")

    @property
    def held(self) -> bool:
        """Whether this object holds the lock (false after :meth:`release`, or without fcntl)."""
        return self._fd is not None

    def release(self) -> None:
        """Give the folder back: the lock file is removed while still locked (a finished run
        folder keeps no empty lock file), then unlocked; a process that opened it meanwhile
        sees it gone and opens a new one (:meth:`_lock`)."""
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            try:
                if os.stat(self.path).st_ino == os.fstat(fd).st_ino:  # still ours
                    os.unlink(self.path)
            except FileNotFoundError:
                pass
            except OSError:  # cannot remove it (a read-only folder): leave it empty, as before
                os.ftruncate(fd, 0)
            self._fcntl.flock(fd, self._fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def __enter__(self) -> RunFolderLock:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.release()

    def __del__(self) -> None:  # a lock never outlives its object
        self.release()

    def __repr__(self) -> str:
        return f"RunFolderLock({str(self.folder)!r}, held={self.held})"


def _read_owner(fd: int) -> dict[str, Any]:
    try:
        text = os.pread(fd, 4096, 0).decode("utf-8", "replace").strip()
        owner = json.loads(text) if text else {}
    except (OSError, ValueError):
        return {}
    return owner if isinstance(owner, dict) else {}


def check_resumable(out: str | os.PathLike[str], analyses: Sequence[str]) -> None:
    """Raise :class:`~textrobust.errors.StoreError` when resuming ``analyses`` in the run
    folder ``out`` would continue nothing: the folder or its store is missing, or the store
    holds runs of none of them. (When some of them have a stored run, those continue and
    the others start, as after an audit interrupted in its second analysis.)"""
    from textrobust.store import RunStore

    folder = Path(out)
    path = folder / "store.sqlite"
    names = ", ".join(analyses)
    fresh = (f"Run the same command without --resume to start a new {names} run"
             + (" there." if folder.is_dir() else "."))
    if not folder.exists():
        raise StoreError(f"Nothing to resume: the run folder '{folder}' (--out) does not exist. {fresh}")
    if not path.is_file():
        raise StoreError(f"Nothing to resume: the run folder '{folder}' (--out) holds no run store "
                         f"(store.sqlite). {fresh}")
    with RunStore(path) as store:
        stored = sorted({run.kind for run in store.runs()})
    if not set(stored) & set(analyses):
        held = f"runs of {', '.join(stored)}" if stored else "no runs"
        raise StoreError(
            f"Nothing to resume: the store in '{folder}' (--out) holds {held}, not of {names}. Run without "
            f"--resume to start a new {names} run in this folder (the stored runs are kept), or give the "
            f"--out folder of a {names} run.")


#: Settings added after runs were stored, with the value that those runs used before the
#: setting existed: ``candidates`` (issue 28), the papers' own substitutes; PR's ``keep``
#: (issue 40), no misclassified sample kept; ``min_validity`` and ``accept_validity`` (issue 47), today's
#: behaviour.
LEGACY_SETTINGS: dict[str, Any] = {"candidates": "paper", "keep": 0, "min_validity": None, "accept_validity": None}


def stored_options(out: str | os.PathLike[str], analysis: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The latest ``analysis`` run stored in the run folder ``out``: its settings, and its
    shared options (victim, data, split, seed and the data's column options, named as the
    keyword arguments and options that set them); ``({}, {})`` when there is none. A resumed
    run continues with them under the ones given: the settings are merged by
    :func:`resumed_analyses` (in :func:`textrobust.audit.run`, for Python and the command
    line alike); the command line fills in the shared options the user did not type."""
    from textrobust.store import RunStore

    path = Path(out) / "store.sqlite"
    if not path.is_file():
        return {}, {}
    with RunStore(path) as store:
        run = store.latest_run(analysis)
        if run is None:
            return {}, {}
        config = run.config
        data = config.get("data") or {}
        shared: dict[str, Any] = {"victim": config.get("victim"), "data": data.get("dataset"),
                                  "split": data.get("split"), "seed": run.seed}
        shared.update(data.get("options") or {})
        if config.get("dtype"):  # the float type is part of what was audited (the device is not)
            shared["dtype"] = config["dtype"]
        return dict(config.get("settings") or {}), shared


def stored_settings(out: str | os.PathLike[str], analysis: str) -> dict[str, Any]:
    """The settings of the latest ``analysis`` run stored in the run folder ``out`` (``{}``
    when there is none): what a resumed run continues with, under the settings given."""
    from textrobust.store import RunStore

    path = Path(out) / "store.sqlite"
    if not path.is_file():
        return {}
    with RunStore(path) as store:
        run = store.latest_run(analysis)
        return dict((run.config.get("settings") or {}) if run is not None else {})


def resumed_analyses(out: str | os.PathLike[str], analyses: Any) -> Any:
    """``analyses`` as an audit resumed in ``out`` runs them: for a mapping name ->
    settings, each analysis's stored settings with the given ones on top; for a name, its
    stored settings (the same in Python and on the command line, where the options typed
    are the settings given). :class:`~textrobust.analyses.protocol.Analysis` objects are
    explicit and kept as they are."""
    from collections.abc import Mapping

    if isinstance(analyses, Mapping):
        return {name: {**_with_legacy(out, name), **dict(settings or {})} for name, settings in analyses.items()}
    if isinstance(analyses, (list, tuple)) and all(isinstance(a, str) for a in analyses):
        return {name: _with_legacy(out, name) for name in analyses}
    return analyses


def _with_legacy(out: str | os.PathLike[str], name: str) -> dict[str, Any]:
    """The stored settings of ``name``, with :data:`LEGACY_SETTINGS` its analysis has and
    the stored run predates (a run from before ``candidates`` existed continues with the
    papers' substitutes it used)."""
    from textrobust.analyses import ANALYSES

    stored = stored_settings(out, name)
    if stored and name in ANALYSES:
        fields = ANALYSES.get(name).settings_type.model_fields
        stored = {**{k: v for k, v in LEGACY_SETTINGS.items() if k in fields and k not in stored}, **stored}
    return stored



def stored_labels(out: str | os.PathLike[str], analyses: Sequence[str]) -> UserLabels | None:
    """The labelled substitutions (``--labelled``) the latest stored run of one of
    ``analyses`` in the run folder ``out`` started with, read from the store (the file may
    have moved or changed since); None when none of them was run with labels. A resume
    without ``--labelled`` continues with them, as it continues with the stored options."""
    from textrobust.store import RunStore
    from textrobust.validity.overrides import UserLabels

    path = Path(out) / "store.sqlite"
    if not path.is_file():
        return None
    with RunStore(path) as store:
        for name in analyses:
            run = store.latest_run(name)
            if run is None or not run.config.get("labelled"):
                continue
            kept = run.artefact("labelled")
            if not isinstance(kept, dict) or not isinstance(kept.get("text"), str):
                stored = run.config["labelled"]
                raise StoreError(f"The {name} run in '{out}' was started with the labels of {stored.get('file')!r}, "
                                 "which this store does not keep (a run from before issue 49): repeat --labelled "
                                 "FILE with that file to resume it.")
            return UserLabels.from_text(kept["text"], str(kept.get("file") or ""))
    return None
