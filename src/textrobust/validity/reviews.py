"""A person's judgements of a run's findings, kept in the run store (issue 40).

No automatic judge of "same meaning" is perfect, and the papers check their own attacks
by asking people (Morris et al. 2020, "Reevaluating Adversarial Examples in Natural
Language", Section 5; Zhang et al. 2021, "Double Perturbation", Table 4). ``textrobust
review`` shows each finding a headline figure rests on (a :class:`Finding`) and stores
each judgement here the moment it is given:

- a table ``reviews`` of its own in the run store's SQLite file, one row per judgement,
  append-only (an undo is a row too), each committed on its own: closing the page,
  killing the server (even ``kill -9``) or a second session loses nothing;
- every reviewer's judgements are kept; an item's status reads them together
  (:func:`item_status`): *confirmed* when every reviewer who judged it said valid,
  *rejected* when every one said invalid, *disputed* when they disagree, *unreviewed*
  otherwise (a skip is no verdict);
- :func:`agreement`: how often two reviewers of the same item agree (and Cohen's kappa
  when exactly two people reviewed).

The report layer turns the statuses into the reviewed figures
(:mod:`textrobust.report.reviewed`).
"""

from __future__ import annotations

import enum
import json
import os
import sqlite3
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from textrobust.errors import ConfigError, StoreError
from textrobust.text import Text

if TYPE_CHECKING:
    from textrobust.store import RunStore

__all__ = ["NEIGHBOUR_REASON", "REASONS", "Agreement", "Finding", "Judgement", "ReviewLog", "Status", "Swap", "Verdict", "agreement",
           "item_status", "newest_judgement", "statuses"]

#: Why a finding is not valid: the invalid reasons of the labelled substitution set
#: (``textrobust.attack.candidates.labelled.REASONS`` without ``same``; a test keeps the
#: two lists equal).
REASONS = ("sense", "antonym", "sentiment", "grammar", "name", "related", "nonsense")
#: Why a second-order finding is not valid when the fault is its neighbour, not a synonym
#: swap: the masked LM's fill-in does not make a sentence a person would write ("neighbour
#: not natural"). It blames no substitution, so the finding exports no label
#: (:func:`textrobust.validity.overrides.review_labels`); only a second-order finding takes it.
NEIGHBOUR_REASON = "neighbour"

_TABLE = """
CREATE TABLE IF NOT EXISTS reviews (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL,
    item TEXT NOT NULL,
    reviewer TEXT NOT NULL,
    verdict TEXT NOT NULL CHECK (verdict IN ('valid', 'invalid', 'skip', 'undone')),
    reason TEXT,
    blamed_json TEXT NOT NULL DEFAULT '[]',
    at TEXT NOT NULL
)
"""
_INDEX = "CREATE INDEX IF NOT EXISTS reviews_run ON reviews (run_id, item)"


class Verdict(enum.StrEnum):
    """One judgement: the finding is ``valid`` (the substitution keeps the meaning, the
    flip is real), ``invalid`` (with a reason), ``skip`` (seen, no verdict), or ``undone``
    (the reviewer took back their previous judgement of the item)."""

    VALID = "valid"
    INVALID = "invalid"
    SKIP = "skip"
    UNDONE = "undone"


class Status(enum.StrEnum):
    """An item's status over every reviewer's latest judgement."""

    CONFIRMED = "confirmed"
    REJECTED = "rejected"
    DISPUTED = "disputed"
    UNREVIEWED = "unreviewed"


@dataclass(frozen=True)
class Swap:
    """One changed word of a finding: ``before`` -> ``after`` at ``position`` (of the
    finding's ``original``; of ``perturbed`` for a patch). ``kind``: ``substitution`` (a
    synonym swap: exported as a label), ``neighbour`` (a second-order neighbour's fill-in,
    not meant to keep the meaning: not exported) or ``patch`` (the second-order patch
    word, a synonym swap in the neighbour)."""

    position: int
    before: str
    after: str
    kind: str = "substitution"


@dataclass(frozen=True)
class Finding:
    """One finding a headline figure rests on, as the review page shows it.

    ``item`` is ``ANALYSIS/EXAMPLE_ID`` (unique in a run; ``pr/EXAMPLE_ID/K`` for the K-th
    kept sample of an example); ``original`` -> ``perturbed`` is the change found (first
    order: the attacked text and its adversarial version; second order: ``x0`` and its
    vulnerable neighbour, with ``patched`` the neighbour after the patch; radius: the text
    and its smallest known adversarial example; PR: the text and one misclassified text
    drawn from ``Omega_r``); ``lines`` are (label, text) facts shown beside it
    (predictions, probabilities); ``among``: how many findings of its kind its example
    had, of which the run kept this one and a few others (PR: the misclassified draws;
    1 elsewhere)."""

    item: str
    analysis: str
    run_id: str
    example_id: str
    kind: str
    original: Text
    perturbed: Text
    swaps: tuple[Swap, ...]
    lines: tuple[tuple[str, str], ...] = ()
    patched: Text | None = None
    among: int = 1

    def substitutions(self) -> list[tuple[Text, Swap]]:
        """The synonym swaps a judgement labels, each with the sentence it is read in (the
        original for a substitution, the neighbour for a patch)."""
        out: list[tuple[Text, Swap]] = []
        for swap in self.swaps:
            if swap.kind == "substitution":
                out.append((self.original, swap))
            elif swap.kind == "patch":
                out.append((self.perturbed, swap))
        return out


@dataclass(frozen=True)
class Judgement:
    """One stored judgement (``seq``: its order in the store)."""

    seq: int
    run_id: str
    item: str
    reviewer: str
    verdict: Verdict
    reason: str | None
    blamed: tuple[int, ...]
    at: str


class ReviewLog:
    """The ``reviews`` table of a run store (created on first use; the store's own tables
    are left as they are). One judgement is one committed row."""

    def __init__(self, store: RunStore) -> None:
        self.store = store
        try:
            conn = store.connection
            conn.execute(_TABLE)
            conn.execute(_INDEX)
        except sqlite3.Error as exc:
            raise StoreError(f"Could not prepare the reviews table in '{store.path}': {exc}") from exc

    def record(self, run_id: str, item: str, reviewer: str, verdict: Verdict | str, reason: str | None = None,
               blamed: Iterable[int] = ()) -> Judgement:
        """Store one judgement, committed before this returns. An ``invalid`` one needs a
        ``reason`` from :data:`REASONS`; the others take none."""
        verdict = _verdict(verdict)
        reviewer = _reviewer(reviewer)
        if verdict is Verdict.INVALID:
            if reason not in REASONS and reason != NEIGHBOUR_REASON:
                raise ConfigError(f"An 'invalid' judgement needs a reason, one of {', '.join(REASONS)} (or "
                                  f"{NEIGHBOUR_REASON} for a second-order finding whose neighbour is not natural). "
                                  + ("None was given." if reason is None else f"Got {reason!r} instead."))
        elif reason is not None:
            raise ConfigError(f"Only an 'invalid' judgement takes a reason. Got {reason!r} with {verdict.value!r}.")
        positions = tuple(sorted({int(p) for p in blamed}))
        if any(p < 0 for p in positions):
            raise ConfigError(f"The blamed positions must be word positions >= 0. Got {list(positions)}.")
        at = datetime.now(UTC).isoformat(timespec="microseconds")
        try:
            cursor = self.store.connection.execute(
                "INSERT INTO reviews (run_id, item, reviewer, verdict, reason, blamed_json, at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (run_id, item, reviewer, verdict.value, reason, json.dumps(list(positions)), at))
        except sqlite3.Error as exc:
            raise StoreError(f"Could not store a judgement in '{self.store.path}': {exc}") from exc
        return Judgement(int(cursor.lastrowid or 0), run_id, item, reviewer, verdict, reason, positions, at)

    def judgements(self, run_ids: Iterable[str] | None = None) -> list[Judgement]:
        """Every stored judgement (of ``run_ids``, when given), oldest first."""
        sql = "SELECT seq, run_id, item, reviewer, verdict, reason, blamed_json, at FROM reviews"
        params: list[str] = []
        if run_ids is not None:
            ids = list(run_ids)
            sql += f" WHERE run_id IN ({', '.join('?' * len(ids))})" if ids else " WHERE 0"
            params = ids
        try:
            rows = self.store.connection.execute(sql + " ORDER BY seq", params).fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"Could not read the judgements in '{self.store.path}': {exc}") from exc
        return [Judgement(seq, run_id, item, reviewer, Verdict(verdict), reason, tuple(json.loads(blamed)), at)
                for seq, run_id, item, reviewer, verdict, reason, blamed, at in rows]

    def current(self, run_ids: Iterable[str] | None = None) -> dict[tuple[str, str], Judgement]:
        """Each (item, reviewer)'s latest judgement, an undone one left out."""
        latest: dict[tuple[str, str], Judgement] = {}
        for judgement in self.judgements(run_ids):
            latest[(judgement.item, judgement.reviewer)] = judgement
        return {key: j for key, j in latest.items() if j.verdict is not Verdict.UNDONE}

    def undo(self, reviewer: str, run_ids: Iterable[str]) -> Judgement | None:
        """Take back ``reviewer``'s most recent judgement still standing (an ``undone`` row
        is stored; the history is kept); the judgement taken back, or None."""
        ids = list(run_ids)
        mine = [j for key, j in self.current(ids).items() if key[1] == _reviewer(reviewer)]
        if not mine:
            return None
        last = max(mine, key=lambda j: j.seq)
        self.record(last.run_id, last.item, reviewer, Verdict.UNDONE)
        return last

    def __repr__(self) -> str:
        return f"ReviewLog({str(self.store.path)!r})"


def newest_judgement(store_path: str | os.PathLike[str]) -> int:
    """The ``seq`` of the newest judgement (an undo included) in the run store at
    ``store_path``: 0 when it has none, no ``reviews`` table or no file. Reads only (the
    gate's check that ``summary.json`` counts every judgement: it records the ``seq`` it
    was built through, as ``reviews_through``)."""
    from pathlib import Path

    path = Path(store_path)
    if not path.is_file():
        return 0
    try:
        connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=30.0)
        try:
            table = connection.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'reviews'"
                                       ).fetchone()
            row = connection.execute("SELECT MAX(seq) FROM reviews").fetchone() if table else None
        finally:
            connection.close()
    except sqlite3.Error as exc:
        raise StoreError(f"Could not read the judgements in '{path}': {exc}") from None
    return int(row[0] or 0) if row else 0


def _verdict(value: Verdict | str) -> Verdict:
    try:
        return Verdict(value)
    except ValueError:
        raise ConfigError(f"A judgement must be one of {', '.join(v.value for v in Verdict)}. "
                          f"Got {value!r} instead.") from None


def _reviewer(name: str) -> str:
    if not isinstance(name, str) or not name.strip() or len(name) > 80 or any(c in name for c in "\t\r\n"):
        raise ConfigError(f"The reviewer's name (--reviewer) must be 1 to 80 characters on one line. "
                          f"Got {name!r} instead.")
    return name.strip()


def item_status(verdicts: Iterable[Verdict]) -> Status:
    """The status of an item from its reviewers' latest verdicts (skips are no verdict)."""
    said = {v for v in verdicts if v in (Verdict.VALID, Verdict.INVALID)}
    if not said:
        return Status.UNREVIEWED
    if len(said) == 2:
        return Status.DISPUTED
    return Status.CONFIRMED if Verdict.VALID in said else Status.REJECTED


def statuses(current: Mapping[tuple[str, str], Judgement]) -> dict[str, Status]:
    """Each judged item's status (:func:`item_status`); an item absent is unreviewed."""
    by_item: dict[str, list[Verdict]] = {}
    for (item, _), judgement in current.items():
        by_item.setdefault(item, []).append(judgement.verdict)
    return {item: item_status(verdicts) for item, verdicts in by_item.items()}


@dataclass(frozen=True)
class Agreement:
    """How far reviewers agree: ``items`` judged (valid or invalid) by two or more people,
    ``agreeing`` those where all said the same, their ``share``, and Cohen's ``kappa``
    when exactly two reviewers judged them (None when it is undefined)."""

    items: int
    agreeing: int
    share: float | None
    kappa: float | None
    reviewers: tuple[str, ...]


def agreement(current: Mapping[tuple[str, str], Judgement], items: Sequence[str] | None = None) -> Agreement:
    """The agreement of the reviewers in ``current`` (over ``items`` only, when given)."""
    wanted = None if items is None else set(items)
    by_item: dict[str, dict[str, bool]] = {}
    for (item, reviewer), judgement in current.items():
        if judgement.verdict in (Verdict.VALID, Verdict.INVALID) and (wanted is None or item in wanted):
            by_item.setdefault(item, {})[reviewer] = judgement.verdict is Verdict.VALID
    reviewers = tuple(sorted({r for said in by_item.values() for r in said}))
    double = {item: said for item, said in by_item.items() if len(said) >= 2}
    agreeing = sum(len(set(said.values())) == 1 for said in double.values())
    share = agreeing / len(double) if double else None
    kappa = None
    people = sorted({r for said in double.values() for r in said})
    if len(people) == 2 and double:
        pairs = [(said[people[0]], said[people[1]]) for said in double.values()]
        kappa = _cohen_kappa(pairs)
    return Agreement(len(double), agreeing, share, kappa, reviewers)


def _cohen_kappa(pairs: Sequence[tuple[bool, bool]]) -> float | None:
    """Cohen's kappa of two raters' yes/no answers; None when chance agreement is 1."""
    n = len(pairs)
    observed = sum(a == b for a, b in pairs) / n
    first = Counter(a for a, _ in pairs)
    second = Counter(b for _, b in pairs)
    expected = sum(first[v] * second[v] for v in (True, False)) / (n * n)
    return None if expected == 1 else (observed - expected) / (1 - expected)
