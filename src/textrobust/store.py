"""The run store: every per-example result in SQLite, written the moment it exists.

A store is one SQLite file holding any number of runs. Each run records its kind
("evaluate", "attack", ...), its full configuration, seed and package versions; each
per-example result is one row committed on its own, so an interrupted run (Ctrl-C, an
exception, ``kill -9``, the OOM killer) loses nothing it had recorded and resumes with
:meth:`RunStore.resume_or_start`.

Durability: the database uses a write-ahead log with ``synchronous=NORMAL``. A record is
in the WAL file when :meth:`Run.record` returns, so it survives the process dying; only an
operating-system crash or power loss in the next moments can lose the last records
(``synchronous=FULL`` would fsync every commit at several times the cost).

One store connection belongs to one thread. Several processes may read a store while one
writes it; two processes writing the same run cannot record the same example twice (the
second insert fails with :class:`~textrobust.errors.StoreError`).

>>> import tempfile, pathlib
>>> with tempfile.TemporaryDirectory() as d, RunStore(pathlib.Path(d) / "runs.sqlite") as store:
...     run = store.start_run("evaluate", {"victim": "bow", "n": 2}, seed=0)
...     run.record("ex-1", {"correct": True}, position=0)
...     run.done_ids()
{'ex-1'}
"""

from __future__ import annotations

import csv
import dataclasses
import enum
import json
import os
import sqlite3
import uuid
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from textrobust.errors import StoreError
from textrobust.records import encode, flat_fields
from textrobust.versions import package_versions

__all__ = [
    "DEFAULT_RESUMABLE_KEYS",
    "EXPORT_FORMATS",
    "SCHEMA_VERSION",
    "ResultRow",
    "Run",
    "RunStatus",
    "RunStore",
    "config_differences",
    "flat_row",
    "write_table",
]

#: Version of the table layout below; a store written by a newer layout is refused.
SCHEMA_VERSION = 1
#: ``PRAGMA application_id`` of a textrobust store (ASCII "trst").
APPLICATION_ID = 0x74727374
#: Configuration keys that may differ when a run is resumed (more examples is safe).
DEFAULT_RESUMABLE_KEYS: tuple[str, ...] = ("n",)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    config_json TEXT NOT NULL,
    seed INTEGER NOT NULL,
    versions_json TEXT NOT NULL,
    created_at TEXT NOT NULL,
    finished_at TEXT,
    status TEXT NOT NULL CHECK (status IN ('running', 'finished', 'failed'))
);
CREATE INDEX IF NOT EXISTS runs_kind ON runs (kind);
CREATE TABLE IF NOT EXISTS results (
    run_id TEXT NOT NULL REFERENCES runs (run_id),
    example_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    payload_json TEXT NOT NULL,
    created_at TEXT NOT NULL,
    seconds REAL,
    queries INTEGER,
    failed INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, example_id)
);
CREATE INDEX IF NOT EXISTS results_position ON results (run_id, position);
CREATE TABLE IF NOT EXISTS artefacts (
    run_id TEXT NOT NULL REFERENCES runs (run_id),
    key TEXT NOT NULL,
    value_json TEXT NOT NULL,
    PRIMARY KEY (run_id, key)
);
"""

_TABLES = frozenset({"meta", "runs", "results", "artefacts"})
_ABSENT = "<absent>"


class RunStatus(enum.StrEnum):
    """Where a run stands. An interrupted run stays ``RUNNING`` and can be resumed."""

    RUNNING = "running"
    FINISHED = "finished"
    FAILED = "failed"


# ---- JSON --------------------------------------------------------------------------------


def _dumps(obj: Any) -> str:
    return json.dumps(encode(obj), ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """Nested dicts as dotted keys: ``{"a": {"b": 1}}`` -> ``{"a.b": 1}``."""
    if isinstance(value, dict) and value:
        out: dict[str, Any] = {}
        for key, inner in value.items():
            out.update(_flatten(inner, f"{prefix}.{key}" if prefix else str(key)))
        return out
    return {prefix: value}


def config_differences(
    old: Mapping[str, Any], new: Mapping[str, Any]
) -> dict[str, tuple[Any, Any]]:
    """The keys (dotted for nested mappings) whose values differ: ``{key: (old, new)}``.

    A key present on one side only shows ``"<absent>"`` on the other.

    >>> config_differences({"n": 10, "search": {"beam": 5}}, {"n": 20, "search": {"beam": 5}})
    {'n': (10, 20)}
    """
    flat_old = _flatten(encode(dict(old)))
    flat_new = _flatten(encode(dict(new)))
    keys = sorted(set(flat_old) | set(flat_new))
    return {
        k: (flat_old.get(k, _ABSENT), flat_new.get(k, _ABSENT))
        for k in keys
        if flat_old.get(k, _ABSENT) != flat_new.get(k, _ABSENT)
    }


# ---- records -----------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ResultRow:
    """One stored per-example result.

    ``payload`` is the JSON data that was recorded (a fresh dict on every read);
    ``failed`` is true for an error recorded for a unit whose work raised.
    """

    example_id: str
    position: int
    payload: dict[str, Any]
    created_at: str
    seconds: float | None = None
    queries: int | None = None
    failed: bool = False


_ROW_COLUMNS = "example_id, position, payload_json, created_at, seconds, queries, failed"


def _row(values: tuple[Any, ...]) -> ResultRow:
    example_id, position, payload_json, created_at, seconds, queries, failed = values
    return ResultRow(
        example_id=example_id,
        position=position,
        payload=json.loads(payload_json),
        created_at=created_at,
        seconds=seconds,
        queries=queries,
        failed=bool(failed),
    )


# ---- the store ---------------------------------------------------------------------------


class RunStore:
    """A SQLite file of runs and their per-example results (WAL, one commit per result).

    ``path`` is created (with its parent folders) if missing. Opening a file that is not a
    textrobust store, is damaged, or was written by a newer schema raises
    :class:`StoreError`. Use it as a context manager or call :meth:`close`.
    """

    def __init__(self, path: str | os.PathLike[str], *, busy_timeout: float = 30.0) -> None:
        self._path = Path(path)
        if not busy_timeout >= 0:
            raise StoreError(
                f"The 'busy_timeout' parameter of RunStore must be a number of seconds >= 0. "
                f"Got {busy_timeout!r} instead."
            )
        if self._path.is_dir():
            raise StoreError(f"The run store path '{self._path}' is a folder; give a file path.")
        try:
            self._path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(str(self._path), timeout=busy_timeout, isolation_level=None)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"Could not open the run store '{self._path}': {exc}") from exc
        self._conn: sqlite3.Connection | None = conn
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
            self._prepare()
            self.journal_mode: str = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA foreign_keys = ON")
        except sqlite3.DatabaseError as exc:
            conn.close()
            self._conn = None
            raise StoreError(
                f"'{self._path}' is not a readable textrobust run store (SQLite says: {exc}). "
                "It may be another kind of file or damaged: give another store path, or "
                "move this file away to start a new store."
            ) from exc
        except BaseException:
            conn.close()
            self._conn = None
            raise

    def _prepare(self) -> None:
        """Check the file is a store of a known schema, creating the tables if it is empty."""
        conn = self.connection
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if app_id == 0 and not tables:
            conn.execute("BEGIN IMMEDIATE")
            try:
                # Another process may have created the store while we waited for the lock:
                # every statement is idempotent.
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        conn.execute(statement)
                conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                conn.execute(
                    "INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', ?)",
                    (str(SCHEMA_VERSION),),
                )
                conn.execute(
                    "INSERT OR IGNORE INTO meta (key, value) VALUES ('created_at', ?)", (_now(),)
                )
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            app_id = conn.execute("PRAGMA application_id").fetchone()[0]
            tables = {
                r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            }
        if app_id != APPLICATION_ID or not _TABLES <= tables:
            raise StoreError(
                f"'{self._path}' is an SQLite database but not a textrobust run store "
                f"(application id {app_id:#x}, tables {sorted(tables)}). Give another store "
                "path; textrobust does not write into other programs' databases."
            )
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        try:
            version = int(row[0]) if row is not None else None
        except ValueError:
            version = None
        if version is None or version < 1:
            raise StoreError(
                f"The run store '{self._path}' has an unknown schema version "
                f"({row[0] if row else 'none recorded'!r}); this textrobust reads version "
                f"{SCHEMA_VERSION}. The file is damaged or was not written by textrobust."
            )
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"The run store '{self._path}' has schema version {version}, written by a newer "
                f"textrobust; this one reads version {SCHEMA_VERSION}. Upgrade textrobust "
                "(`pip install -U textrobust`) or use another store path."
            )

    # ---- plumbing ----------------------------------------------------------------------
    @property
    def path(self) -> Path:
        """The SQLite file."""
        return self._path

    @property
    def connection(self) -> sqlite3.Connection:
        """The open SQLite connection (autocommit mode). Raises if the store is closed."""
        if self._conn is None:
            raise StoreError(f"The run store '{self._path}' is closed.")
        return self._conn

    @contextmanager
    def _sql(self, action: str) -> Iterator[sqlite3.Connection]:
        try:
            yield self.connection
        except sqlite3.Error as exc:
            raise StoreError(f"Could not {action} in the run store '{self._path}': {exc}") from exc

    @contextmanager
    def _transaction(self, action: str) -> Iterator[sqlite3.Connection]:
        """One write transaction: committed whole or rolled back whole (also on Ctrl-C)."""
        with self._sql(action) as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

    def close(self) -> None:
        """Close the connection (checkpointing the WAL). Closing twice is harmless."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._conn is None else "open"
        return f"RunStore({str(self._path)!r}, {state})"

    # ---- runs --------------------------------------------------------------------------
    def start_run(
        self,
        kind: str,
        config: Mapping[str, Any] | Any,
        seed: int,
        *,
        run_id: str | None = None,
    ) -> Run:
        """Record a new run and return it (status ``running``).

        ``config`` is a mapping (or a :class:`~textrobust.config.Config`) stored as JSON;
        ``run_id`` defaults to ``"{kind}-{UTC time}-{random}"``.
        """
        _check_name("kind", kind)
        _check_seed(seed)
        config_json = _config_json(config)
        if run_id is None:
            stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
            run_id = f"{kind}-{stamp}-{uuid.uuid4().hex[:6]}"
        _check_name("run_id", run_id)
        created = _now()
        try:
            with self._transaction("start a run") as conn:
                conn.execute(
                    "INSERT INTO runs (run_id, kind, config_json, seed, versions_json, "
                    "created_at, finished_at, status) VALUES (?, ?, ?, ?, ?, ?, NULL, 'running')",
                    (run_id, kind, config_json, seed, _dumps(package_versions()), created),
                )
        except StoreError as exc:
            if "UNIQUE" in str(exc.__cause__):
                raise StoreError(
                    f"A run with run_id '{run_id}' already exists in '{self._path}'. Choose "
                    "another run_id, or open it with open_run / resume it."
                ) from None
            raise
        return self.open_run(run_id)

    def open_run(self, run_id: str) -> Run:
        """The run ``run_id``; :class:`StoreError` listing the known runs if it is absent."""
        with self._sql("open a run") as conn:
            row = conn.execute(
                "SELECT run_id, kind, config_json, seed, versions_json, created_at "
                "FROM runs WHERE run_id = ?",
                (run_id,),
            ).fetchone()
            if row is None:
                latest = conn.execute("SELECT run_id FROM runs ORDER BY rowid DESC LIMIT 10")
                known = [r[0] for r in latest]
                raise StoreError(
                    f"No run '{run_id}' in the run store '{self._path}'. "
                    f"Latest runs: {known or 'none'}."
                )
        return Run(self, *row)

    def runs(self, kind: str | None = None) -> list[Run]:
        """Every run (of ``kind``, if given), oldest first."""
        with self._sql("list runs") as conn:
            ids = [
                r[0]
                for r in conn.execute(
                    "SELECT run_id FROM runs WHERE ?1 IS NULL OR kind = ?1 ORDER BY rowid", (kind,)
                )
            ]
        return [self.open_run(i) for i in ids]

    def latest_run(self, kind: str | None = None) -> Run | None:
        """The most recently started run (of ``kind``, if given), or ``None``."""
        with self._sql("find the latest run") as conn:
            row = conn.execute(
                "SELECT run_id FROM runs WHERE ?1 IS NULL OR kind = ?1 ORDER BY rowid DESC LIMIT 1",
                (kind,),
            ).fetchone()
        return None if row is None else self.open_run(row[0])

    def resume_or_start(
        self,
        kind: str,
        config: Mapping[str, Any] | Any,
        seed: int,
        resume: bool,
        *,
        resumable_keys: Collection[str] = DEFAULT_RESUMABLE_KEYS,
    ) -> Run:
        """The run to write into: the latest run of ``kind`` if resuming, else a new one.

        With ``resume=True`` the latest run of ``kind`` in this store is reopened (status
        back to ``running``) when its seed and configuration equal these, except for keys
        in ``resumable_keys`` (dotted paths for nested keys; by default only ``"n"``, the
        number of examples), which are updated to the new values. Any other difference
        raises :class:`StoreError` naming each key with its stored and new value. If the
        store has no run of ``kind``, a new run is started (``run.resumed`` is false).

        With ``resume=False`` a new run with a new run_id is always started; runs already
        in the store are kept untouched.
        """
        if not resume:
            return self.start_run(kind, config, seed)
        _check_name("kind", kind)
        _check_seed(seed)
        previous = self.latest_run(kind)
        if previous is None:
            return self.start_run(kind, config, seed)
        new_config = json.loads(_config_json(config))
        diffs = config_differences(previous.config, new_config)
        blocking = {
            k: v
            for k, v in diffs.items()
            if not any(k == r or k.startswith(f"{r}.") for r in resumable_keys)
        }
        if seed != previous.seed:
            blocking["seed"] = (previous.seed, seed)
        if blocking:
            lines = "\n".join(
                f"  - {k}: stored {json.dumps(old)}, now {json.dumps(new)}"
                for k, (old, new) in blocking.items()
            )
            allowed = ", ".join(sorted(resumable_keys)) or "none"
            raise StoreError(
                f"Cannot resume run '{previous.run_id}' (kind '{kind}') in '{self._path}': "
                f"its configuration differs in keys that change results:\n{lines}\n"
                f"Keys that may differ on resume: {allowed}. Run again with the stored "
                "configuration, or without --resume to start a new run in this store "
                "(its old results are kept)."
            )
        previous._reopen(new_config, diffs)
        return previous


# ---- one run -----------------------------------------------------------------------------


class Run:
    """One run in a :class:`RunStore`: its identity, configuration and results.

    Get one from :meth:`RunStore.start_run`, :meth:`RunStore.open_run`,
    :meth:`RunStore.latest_run` or :meth:`RunStore.resume_or_start`.
    """

    def __init__(
        self,
        store: RunStore,
        run_id: str,
        kind: str,
        config_json: str,
        seed: int,
        versions_json: str,
        created_at: str,
    ) -> None:
        self._store = store
        self._run_id = run_id
        self._kind = kind
        self._config_json = config_json
        self._seed = seed
        self._versions = json.loads(versions_json)
        self._created_at = created_at
        self.resumed = False

    # ---- identity ----------------------------------------------------------------------
    @property
    def store(self) -> RunStore:
        return self._store

    @property
    def run_id(self) -> str:
        return self._run_id

    @property
    def kind(self) -> str:
        return self._kind

    @property
    def config(self) -> dict[str, Any]:
        """The stored configuration (a fresh copy)."""
        config: dict[str, Any] = json.loads(self._config_json)
        return config

    @property
    def seed(self) -> int:
        return self._seed

    @property
    def versions(self) -> dict[str, str]:
        """Package versions recorded when the run started (see also ``artefact("resumes")``)."""
        return dict(self._versions)

    @property
    def created_at(self) -> str:
        return self._created_at

    @property
    def status(self) -> RunStatus:
        """The run's status, read from the store."""
        return RunStatus(self._meta_row()[0])

    @property
    def finished_at(self) -> str | None:
        return self._meta_row()[1]

    def _meta_row(self) -> tuple[str, str | None]:
        with self._store._sql("read a run") as conn:
            row = conn.execute(
                "SELECT status, finished_at FROM runs WHERE run_id = ?", (self._run_id,)
            ).fetchone()
        if row is None:
            raise StoreError(f"Run '{self._run_id}' is no longer in '{self._store.path}'.")
        return row[0], row[1]

    def __repr__(self) -> str:
        return f"Run({self._run_id!r}, kind={self._kind!r}, seed={self._seed})"

    # ---- results -----------------------------------------------------------------------
    def record(
        self,
        example_id: str,
        payload: Mapping[str, Any],
        *,
        position: int,
        seconds: float | None = None,
        queries: int | None = None,
        failed: bool = False,
        overwrite: bool = False,
    ) -> None:
        """Store the result of one example, committed before this returns.

        ``position`` orders results (the example's index in the run's input).
        ``payload`` is converted with :func:`textrobust.records.encode`. Recording an ``example_id``
        that already has a result raises :class:`StoreError` unless ``overwrite=True``.
        """
        _check_name("example_id", example_id)
        if not isinstance(payload, Mapping):
            raise StoreError(
                f"The 'payload' of example '{example_id}' must be a mapping (dict). "
                f"Got {type(payload).__qualname__} instead."
            )
        if isinstance(position, bool) or not isinstance(position, int) or position < 0:
            raise StoreError(
                f"The 'position' of example '{example_id}' must be an int >= 0. "
                f"Got {position!r} instead."
            )
        if seconds is not None and not (isinstance(seconds, (int, float)) and seconds >= 0):
            raise StoreError(
                f"The 'seconds' of example '{example_id}' must be a number >= 0 or None. "
                f"Got {seconds!r} instead."
            )
        if queries is not None and (
            isinstance(queries, bool) or not isinstance(queries, int) or queries < 0
        ):
            raise StoreError(
                f"The 'queries' of example '{example_id}' must be an int >= 0 or None. "
                f"Got {queries!r} instead."
            )
        payload_json = _dumps(payload)
        verb = "INSERT OR REPLACE" if overwrite else "INSERT"
        try:
            # Autocommit mode: this one statement is its own transaction, durable on return.
            with self._store._sql("record a result") as conn:
                conn.execute(
                    f"{verb} INTO results (run_id, example_id, position, payload_json, "
                    "created_at, seconds, queries, failed) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        self._run_id,
                        example_id,
                        position,
                        payload_json,
                        _now(),
                        None if seconds is None else float(seconds),
                        queries,
                        int(bool(failed)),
                    ),
                )
        except StoreError as exc:
            if "UNIQUE" in str(exc.__cause__):
                raise StoreError(
                    f"Example '{example_id}' already has a result in run '{self._run_id}'. "
                    "Pass overwrite=True to replace it."
                ) from None
            raise

    def done_ids(self, *, include_failed: bool = True) -> set[str]:
        """Ids of the examples with a stored result (without error payloads if asked)."""
        sql = "SELECT example_id FROM results WHERE run_id = ?"
        if not include_failed:
            sql += " AND failed = 0"
        with self._store._sql("read done ids") as conn:
            return {r[0] for r in conn.execute(sql, (self._run_id,))}

    def failed_ids(self) -> set[str]:
        """Ids of the examples whose stored result is an error payload."""
        with self._store._sql("read failed ids") as conn:
            return {
                r[0]
                for r in conn.execute(
                    "SELECT example_id FROM results WHERE run_id = ? AND failed = 1",
                    (self._run_id,),
                )
            }

    def __len__(self) -> int:
        with self._store._sql("count results") as conn:
            count: int = conn.execute(
                "SELECT COUNT(*) FROM results WHERE run_id = ?", (self._run_id,)
            ).fetchone()[0]
        return count

    def iter_results(self) -> Iterator[ResultRow]:
        """Stored results in position order (then example id), read lazily."""
        with self._store._sql("read results") as conn:
            cursor = conn.execute(
                f"SELECT {_ROW_COLUMNS} FROM results WHERE run_id = ? "
                "ORDER BY position, example_id",
                (self._run_id,),
            )
            for values in cursor:
                yield _row(values)

    def results(self) -> list[ResultRow]:
        """Every stored result in position order."""
        return list(self.iter_results())

    def result(self, example_id: str) -> ResultRow | None:
        """The stored result of one example, or ``None``."""
        with self._store._sql("read a result") as conn:
            values = conn.execute(
                f"SELECT {_ROW_COLUMNS} FROM results WHERE run_id = ? AND example_id = ?",
                (self._run_id, example_id),
            ).fetchone()
        return None if values is None else _row(values)

    # ---- run-level artefacts and status -----------------------------------------------
    def set_artefact(self, key: str, value: Any) -> None:
        """Store a run-level JSON value (replacing any previous value under ``key``)."""
        _check_name("key", key)
        value_json = _dumps(value)
        with self._store._sql("store an artefact") as conn:
            conn.execute(
                "INSERT OR REPLACE INTO artefacts (run_id, key, value_json) VALUES (?, ?, ?)",
                (self._run_id, key, value_json),
            )

    def artefact(self, key: str, default: Any = None) -> Any:
        """A run-level JSON value, or ``default`` when absent."""
        with self._store._sql("read an artefact") as conn:
            row = conn.execute(
                "SELECT value_json FROM artefacts WHERE run_id = ? AND key = ?",
                (self._run_id, key),
            ).fetchone()
        return default if row is None else json.loads(row[0])

    def summary(self) -> dict[str, Any] | None:
        """The summary stored by :meth:`finish`, or ``None``."""
        summary: dict[str, Any] | None = self.artefact("summary")
        return summary

    def finish(self, summary: Mapping[str, Any]) -> None:
        """Store the run's summary and mark it finished, in one transaction."""
        if not isinstance(summary, Mapping):
            raise StoreError(
                f"The 'summary' of run '{self._run_id}' must be a mapping (dict). "
                f"Got {type(summary).__qualname__} instead."
            )
        summary_json = _dumps(summary)
        with self._store._transaction("finish a run") as conn:
            conn.execute(
                "INSERT OR REPLACE INTO artefacts (run_id, key, value_json) "
                "VALUES (?, 'summary', ?)",
                (self._run_id, summary_json),
            )
            conn.execute(
                "UPDATE runs SET status = 'finished', finished_at = ? WHERE run_id = ?",
                (_now(), self._run_id),
            )

    def fail(self, message: str) -> None:
        """Mark the run failed (it can still be resumed), keeping ``message``."""
        with self._store._transaction("mark a run failed") as conn:
            conn.execute(
                "INSERT OR REPLACE INTO artefacts (run_id, key, value_json) "
                "VALUES (?, 'failure', ?)",
                (self._run_id, _dumps({"message": str(message), "at": _now()})),
            )
            conn.execute(
                "UPDATE runs SET status = 'failed', finished_at = ? WHERE run_id = ?",
                (_now(), self._run_id),
            )

    def _reopen(self, config: dict[str, Any], changed: Mapping[str, tuple[Any, Any]]) -> None:
        """Resume: status back to running, resumable keys updated, the resume logged."""
        current = package_versions()
        version_changes = {
            k: [self._versions.get(k), current.get(k)]
            for k in sorted(set(current) | set(self._versions))
            if self._versions.get(k) != current.get(k)
        }
        entry = {
            "at": _now(),
            "config_changes": {k: [old, new] for k, (old, new) in changed.items()},
            "version_changes": version_changes,
            "results_before": len(self),
        }
        resumes = self.artefact("resumes", [])
        config_json = _dumps(config)
        with self._store._transaction("resume a run") as conn:
            conn.execute(
                "UPDATE runs SET status = 'running', finished_at = NULL, config_json = ? "
                "WHERE run_id = ?",
                (config_json, self._run_id),
            )
            conn.execute(
                "INSERT OR REPLACE INTO artefacts (run_id, key, value_json) "
                "VALUES (?, 'resumes', ?)",
                (self._run_id, _dumps([*resumes, entry])),
            )
        self._config_json = config_json
        self.resumed = True

    # ---- export ------------------------------------------------------------------------
    def flat_rows(
        self, rows: Callable[[Mapping[str, Any]], Sequence[Any]] | None = None
    ) -> Iterator[dict[str, Any]]:
        """One flat row per stored result, in position order (see :func:`flat_row`).

        ``rows`` turns a result's payload into what to write (records or mappings, one row
        each; default: the payload itself); an analysis whose record holds several
        examples (a batch) gives one row per example.
        """
        for row in self.iter_results():
            yield from flat_row(row, rows)

    def export(
        self,
        path: str | os.PathLike[str],
        format: str = "jsonl",
        *,
        rows: Callable[[Mapping[str, Any]], Sequence[Any]] | None = None,
    ) -> int:
        """Write the flat rows (:meth:`flat_rows`) to ``path`` as ``jsonl`` (one JSON
        object per line), ``json`` (one array) or ``csv`` (columns in first-seen order,
        lists of numbers or words space-separated, ``None`` empty); atomically. Returns the
        number of rows written."""
        if format not in EXPORT_FORMATS:
            raise StoreError(f"The export format must be one of {', '.join(EXPORT_FORMATS)}. Got {format!r} instead.")
        return write_table(path, format, list(self.flat_rows(rows)))

    def export_jsonl(self, path: str | os.PathLike[str]) -> int:
        """:meth:`export` as JSON Lines: one flat JSON object per result."""
        return self.export(path, "jsonl")

    def export_csv(self, path: str | os.PathLike[str]) -> int:
        """:meth:`export` as CSV: one flat row per result."""
        return self.export(path, "csv")


#: The formats :meth:`Run.export` writes.
EXPORT_FORMATS = ("jsonl", "json", "csv")


def write_table(path: str | os.PathLike[str], format: str, table: Sequence[Mapping[str, Any]]) -> int:
    """Write flat rows to ``path`` as ``jsonl`` (one JSON object per line), ``json`` (one
    array) or ``csv`` (columns in first-seen order, lists of numbers or words
    space-separated, ``None`` empty); atomically. Returns the number of rows written."""
    if format not in EXPORT_FORMATS:
        raise StoreError(f"The export format must be one of {', '.join(EXPORT_FORMATS)}. Got {format!r} instead.")
    if format == "csv":
        columns: dict[str, None] = {}
        for item in table:
            columns.update(dict.fromkeys(item))
        with _atomic_text(Path(path), newline="") as out:
            writer = csv.writer(out)
            writer.writerow(list(columns))
            for item in table:
                writer.writerow([_csv_cell(item.get(c)) for c in columns])
    elif format == "json":
        with _atomic_text(Path(path)) as out:
            out.write(json.dumps(list(table), ensure_ascii=False, allow_nan=False, indent=1) + "\n")
    else:
        with _atomic_text(Path(path)) as out:
            for item in table:
                out.write(json.dumps(item, ensure_ascii=False, allow_nan=False) + "\n")
    return len(table)


def flat_row(
    row: ResultRow, rows: Callable[[Mapping[str, Any]], Sequence[Any]] | None = None
) -> list[dict[str, Any]]:
    """A stored result as flat export rows, named as in the report: ``id``, ``status``
    (``error`` for a unit whose work raised, read from the store's own flag, with ``error``
    and ``message``), then the record's fields (:func:`textrobust.records.flat_fields`),
    then ``queries`` and ``seconds``. No column is repeated and no value is a nested
    object."""
    if row.failed:
        return [{"id": row.example_id, "status": "error", "error": row.payload.get("error"),
                 "message": row.payload.get("message"), "queries": row.queries, "seconds": row.seconds}]
    items = list(rows(row.payload)) if rows is not None else [row.payload]
    out = []
    for item in items:
        fields = flat_fields(item)
        flat: dict[str, Any] = {"id": fields.pop("example_id", row.example_id), "status": fields.pop("status", "ok")}
        flat.update(fields)
        if len(items) == 1:  # a batch's queries and time belong to no one example
            flat.setdefault("queries", row.queries)
            flat.setdefault("seconds", row.seconds)
        out.append(flat)
    return out


def _csv_cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, list) and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
        return " ".join(str(v) for v in value)  # probabilities, changed positions
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return value


@contextmanager
def _atomic_text(path: Path, newline: str | None = None) -> Iterator[Any]:
    """Write a text file via a temporary sibling renamed into place on success."""
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "w", encoding="utf-8", newline=newline) as out:
            yield out
        os.replace(tmp, path)
    except OSError as exc:
        raise StoreError(f"Could not write the export '{path}': {exc}") from exc
    finally:
        if tmp.exists():
            tmp.unlink()


# ---- validation --------------------------------------------------------------------------


def _check_name(parameter: str, value: Any) -> None:
    if not isinstance(value, str) or not value.strip():
        raise StoreError(
            f"The '{parameter}' parameter must be a non-empty string. Got {value!r} instead."
        )


def _check_seed(seed: Any) -> None:
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise StoreError(f"The 'seed' parameter must be an int. Got {seed!r} instead.")


def _config_json(config: Any) -> str:
    text = _dumps(config)
    if not text.startswith("{"):
        raise StoreError(
            "The 'config' parameter must be a mapping (or a Config) of settings. "
            f"Got {type(config).__qualname__} instead."
        )
    return text
