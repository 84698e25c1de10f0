"""The on-disk cache of judges' verdicts: a second audit of the same data judges nothing again.

A judge (the validated synonym source's checks, issue 39) costs a masked-LM pass, a tagger
run and a causal-LM score per sentence and position. Its verdicts depend on three things
only: the sentence, the position, and the *fingerprint* of the judge, which the judge
builds from everything that can change a verdict (its settings, a format number for its
code, and the versions of every model and lexicon it uses: WordNet, the tagger, the
vectors, the masked and causal LMs, their device and float type). A verdict is stored
under ``(fingerprint, sentence, position)``; a judge whose model or setting changed has
another fingerprint, so it never reads the old entries (they are invalid for it), and
:meth:`VerdictCache.prune` deletes them.

The cache is one SQLite file (write-ahead log, so several processes may read it while one
writes); payloads are JSON, so the cache knows nothing of the judge's types. The default
file is ``<cache>/verdicts/verdicts.sqlite`` under textrobust's cache folder
(``$TEXTROBUST_CACHE`` or ``~/.cache/textrobust``). ``textrobust assets`` shows its size and
``textrobust assets clear-verdicts`` deletes it. It is capped at :data:`DEFAULT_MAX_MB`
(``$TEXTROBUST_VERDICT_CACHE_MB``; 0 for no cap; anything but a number 0 or more is a
ConfigError, :func:`max_bytes`): a judge that opens a file over the cap first deletes the
entries of other judges, then, if the file is still over, all of it, and says so once.

>>> import tempfile, pathlib
>>> with tempfile.TemporaryDirectory() as d:
...     cache = VerdictCache(pathlib.Path(d) / "v.sqlite", fingerprint(judge="demo", version=1))
...     cache.put_many([(("a", "fine", "film"), 1, [{"substitute": "good", "kept": False}])])
...     cache.get_many([(("a", "fine", "film"), 1), (("a", "fine", "film"), 2)])
...     cache.close()
{(('a', 'fine', 'film'), 1): [{'substitute': 'good', 'kept': False}]}
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from textrobust.errors import ConfigError, StoreError

#: Where a cap that deletes verdicts says so (once a process; with no handler set up,
#: Python prints a warning's message alone on stderr).
_LOG = logging.getLogger("textrobust.validity.cache")
_TOLD: set[str] = set()

__all__ = ["DEFAULT_MAX_MB", "CacheInfo", "VerdictCache", "cache_info", "clear_cache", "default_verdict_path",
           "fingerprint", "judged_once", "max_bytes"]

#: The verdict cache's default size cap in MiB (``$TEXTROBUST_VERDICT_CACHE_MB`` overrides).
DEFAULT_MAX_MB = 1024

_SCHEMA = """
CREATE TABLE IF NOT EXISTS verdicts (
    fingerprint TEXT NOT NULL,
    sentence TEXT NOT NULL,
    position INTEGER NOT NULL,
    payload TEXT NOT NULL,
    PRIMARY KEY (fingerprint, sentence, position)
)
"""

#: Sentence key: the words of a text (``Text.words``) as a tuple.
Words = Sequence[str]


def fingerprint(**parts: Any) -> str:
    """A short stable hash of ``parts`` (any JSON-able values, order of keys irrelevant):
    the identity of a judge. Anything that can change a verdict belongs in it."""
    blob = json.dumps(parts, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:24]


def default_verdict_path() -> Path:
    """``<textrobust cache>/verdicts/verdicts.sqlite``."""
    from textrobust.assets.catalog import cache_dir

    return cache_dir() / "verdicts" / "verdicts.sqlite"


def max_bytes() -> int | None:
    """The cap in bytes from ``$TEXTROBUST_VERDICT_CACHE_MB`` (default
    :data:`DEFAULT_MAX_MB`); ``None`` when it is 0 (no cap). A value that is not a finite
    number of MiB, 0 or more (``abc``, ``nan``, ``inf``, ``-1``) is a :class:`ConfigError`:
    the audit checks it before anything runs (a judge that met it mid-run would make every
    example an error)."""
    raw = os.environ.get("TEXTROBUST_VERDICT_CACHE_MB", "").strip()
    try:
        mb = float(raw) if raw else float(DEFAULT_MAX_MB)
    except ValueError:
        mb = math.nan
    if not math.isfinite(mb) or mb < 0:
        raise ConfigError(f"The environment variable TEXTROBUST_VERDICT_CACHE_MB (the verdict cache's cap) must be a "
                          f"number of MiB, 0 or more (0: no cap; unset: {DEFAULT_MAX_MB}). Got {raw!r} instead; "
                          "set it to a number, or unset it.")
    return None if mb == 0 else int(mb * 1024 * 1024)


def _files(path: Path) -> list[Path]:
    return [path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")]


def _size(path: Path) -> int:
    return sum(f.stat().st_size for f in _files(path) if f.exists())


@dataclass(frozen=True)
class CacheInfo:
    """What ``textrobust assets`` shows of a verdict cache."""

    path: Path
    size_bytes: int
    verdicts: int
    judges: int


def cache_info(path: str | Path | None = None) -> CacheInfo:
    """The size, entries and judges (fingerprints) of the cache at ``path`` (default
    :func:`default_verdict_path`); zeros when there is none. Reads only."""
    where = Path(path).expanduser() if path is not None else default_verdict_path()
    if not where.exists():
        return CacheInfo(where, 0, 0, 0)
    try:
        connection = sqlite3.connect(f"file:{where}?mode=ro", uri=True, timeout=30.0)
        try:
            verdicts, judges = connection.execute(
                "SELECT COUNT(*), COUNT(DISTINCT fingerprint) FROM verdicts").fetchone()
        finally:
            connection.close()
    except sqlite3.Error as exc:
        raise StoreError(f"Cannot read the verdict cache {where}: {exc}. Delete it with "
                         "`textrobust assets clear-verdicts`.") from None
    return CacheInfo(where, _size(where), int(verdicts), int(judges))


def clear_cache(path: str | Path | None = None) -> int:
    """Delete the cache at ``path`` (default :func:`default_verdict_path`) with its
    write-ahead log; the bytes freed."""
    where = Path(path).expanduser() if path is not None else default_verdict_path()
    freed = _size(where)
    for f in _files(where):
        f.unlink(missing_ok=True)
    return freed


def _sentence_key(words: Words) -> str:
    return json.dumps(list(words), ensure_ascii=False, separators=(",", ":"))


class VerdictCache:
    """Verdicts of one judge (its ``judge_fingerprint``) in the SQLite file at ``path``
    (created with its folder on first write). The connection opens on first use and is
    not pickled (a copy sent to another process opens its own)."""

    def __init__(self, path: str | Path, judge_fingerprint: str) -> None:
        if not judge_fingerprint:
            raise StoreError("A verdict cache needs the judge's fingerprint (textrobust.validity.cache.fingerprint).")
        self.path = Path(path).expanduser()
        self.fingerprint = judge_fingerprint
        self._connection: sqlite3.Connection | None = None
        self.hits = 0
        self.misses = 0

    # ---- the connection ----------------------------------------------------------------------
    def _db(self) -> sqlite3.Connection:
        if self._connection is None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                connection = sqlite3.connect(self.path, timeout=30.0, check_same_thread=False)
                connection.execute("PRAGMA journal_mode=WAL")
                connection.execute("PRAGMA synchronous=NORMAL")
                connection.execute(_SCHEMA)
                connection.commit()
                self._keep_under_cap(connection)
            except (OSError, sqlite3.Error) as exc:
                raise StoreError(f"Cannot open the verdict cache {self.path}: {exc}. Point $TEXTROBUST_CACHE at a "
                                 "writable folder, or build the judge without a disk cache.") from None
            self._connection = connection
        return self._connection

    def _keep_under_cap(self, connection: sqlite3.Connection) -> None:
        """Over the cap: drop other judges' entries, then, if still over, everything; says
        what it deleted (once a process)."""
        cap = max_bytes()
        before = _size(self.path)
        if cap is None or before <= cap:
            return
        for what, where, args in (("the verdicts of other judges", "fingerprint != ?", (self.fingerprint,)),
                                  ("every verdict", "1 = 1", ())):
            with connection:
                connection.execute(f"DELETE FROM verdicts WHERE {where}", args)
            connection.execute("VACUUM")
            connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            if _size(self.path) <= cap or what == "every verdict":
                break
        if str(self.path) not in _TOLD:
            _TOLD.add(str(self.path))
            _LOG.warning("verdict cache %s: %.1f MiB, over its cap of %.1f MiB ($TEXTROBUST_VERDICT_CACHE_MB): "
                         "deleted %s (now %.1f MiB); the judges judge those sentences again", self.path,
                         before / 2**20, cap / 2**20, what, _size(self.path) / 2**20)

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_connection"] = None
        return state

    # ---- reading and writing -----------------------------------------------------------------
    def get_many(self, keys: Iterable[tuple[Words, int]]) -> dict[tuple[tuple[str, ...], int], Any]:
        """The stored payload of each ``(words, position)`` that has one under this
        judge's fingerprint (missing keys are left out)."""
        wanted = [(tuple(words), int(position)) for words, position in keys]
        if not wanted:
            return {}
        db = self._db()
        out: dict[tuple[tuple[str, ...], int], Any] = {}
        for words, position in dict.fromkeys(wanted):
            row = db.execute(
                "SELECT payload FROM verdicts WHERE fingerprint = ? AND sentence = ? AND position = ?",
                (self.fingerprint, _sentence_key(words), position),
            ).fetchone()
            if row is None:
                self.misses += 1
            else:
                self.hits += 1
                out[(words, position)] = json.loads(row[0])
        return out

    def put_many(self, entries: Iterable[tuple[Words, int, Any]]) -> None:
        """Store each ``(words, position, payload)`` (JSON-able) under this judge's
        fingerprint, replacing an older entry; one transaction."""
        rows = [(self.fingerprint, _sentence_key(words), int(position), json.dumps(payload, ensure_ascii=False))
                for words, position, payload in entries]
        if not rows:
            return
        db = self._db()
        try:
            with db:
                db.executemany("INSERT OR REPLACE INTO verdicts VALUES (?, ?, ?, ?)", rows)
        except sqlite3.Error as exc:
            raise StoreError(f"Cannot write to the verdict cache {self.path}: {exc}.") from None

    def __len__(self) -> int:
        """Entries stored under this judge's fingerprint."""
        row = self._db().execute("SELECT COUNT(*) FROM verdicts WHERE fingerprint = ?", (self.fingerprint,)).fetchone()
        return int(row[0])

    def prune(self) -> int:
        """Delete every entry of other fingerprints (judges whose model or setting has since
        changed); the number deleted."""
        db = self._db()
        with db:
            cursor = db.execute("DELETE FROM verdicts WHERE fingerprint != ?", (self.fingerprint,))
        return int(cursor.rowcount)

    def __repr__(self) -> str:
        return f"VerdictCache({str(self.path)!r}, fingerprint={self.fingerprint!r})"


def judged_once(memo: dict[tuple[tuple[str, ...], int], tuple[Any, ...]], disk: VerdictCache | None,
                words: tuple[str, ...], positions: Sequence[int], judge: Any, encode: Any, decode: Any,
                limit: int) -> dict[int, tuple[Any, ...]]:
    """A judge's verdicts at ``positions`` of the sentence ``words``, judged once: read from
    ``memo`` (in memory, at most ``limit`` entries, the oldest half dropped when full), else
    from ``disk``, else ``judge(missing positions) -> {position: verdicts}``, then stored in
    both. ``encode``/``decode`` turn one verdict into JSON and back. Shared by the validated
    sources (:mod:`textrobust.attack.candidates.validated`, ``people``)."""
    missing = [p for p in dict.fromkeys(positions) if (words, p) not in memo]
    if missing:
        stored = disk.get_many([(words, p) for p in missing]) if disk is not None else {}
        fresh = {p: tuple(decode(d) for d in stored[(words, p)]) for p in missing if (words, p) in stored}
        todo = [p for p in missing if p not in fresh]
        if todo:
            judged = judge(todo)
            for p in todo:
                fresh[p] = tuple(judged.get(p, ()))
            if disk is not None:
                disk.put_many([(words, p, [encode(v) for v in fresh[p]]) for p in todo])
        if len(memo) + len(fresh) > limit:
            for key in list(memo)[: len(memo) // 2]:
                del memo[key]
        for p in missing:
            memo[(words, p)] = fresh[p]
    return {p: memo[(words, p)] for p in positions}
