"""A user's own labels of substitutions: exported from reviews, read back to steer the validated source.

Issue 40. ``textrobust review RUN --export FILE`` writes the judgements of a run's findings
(:mod:`textrobust.validity.reviews`) in the format of the shipped labelled substitution set
(``resources/substitutions/labelled.tsv``, read by
:func:`textrobust.attack.candidates.labelled.labelled_substitutions`): one row per
substituted word, its sentence, position, word and substitute, label 1 (``same``) or 0
with the reviewer's reason. ``--labelled FILE`` reads such a file into
:class:`UserLabels`, which :class:`~textrobust.attack.candidates.validated.ValidatedSynonyms`
takes as its ``user_labels`` collaborator.

What a row means ("a matching context"):

- a **rejected** (word, substitute) pair is never proposed again, for that word in *any*
  sentence (case-blind, the word as written: ``movie -> film`` does not cover ``movies ->
  films``). A pair a person has called wrong once is not trusted elsewhere: this only
  lowers what an attack may try, never makes a figure look better;
- a **confirmed** pair is kept only in the *same sentence* (same words, same position):
  a substitute that keeps the meaning in one sentence may not in another ("cold ->
  chilly" for the weather, not for a reception). It is added to the source's candidates
  there even when the source's own checks dropped it;
- where both apply (confirmed in this sentence, rejected elsewhere), the confirmation of
  this very sentence wins.

Which findings give rows: a confirmed finding labels each of its synonym swaps valid; a
rejected one labels the swaps its reviewers blamed (all of them when none was picked)
invalid, with the first reviewer's reason; a disputed or unreviewed finding gives none.
A second-order finding's neighbour edits are fill-ins, not synonym swaps, and are never
exported; its patch word is, in the neighbour sentence, but a rejected one only when a
reviewer blamed the patch (or nothing) for a reason other than the neighbour's
(``neighbour``: the fill-in is not natural, which says nothing of the synonym pair). Rows
whose sentence holds a tab or a line break (which the TSV cannot hold) are left out; every
cause of leaving something out is counted (:class:`LeftOut`) and the export says it.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TypeVar

from textrobust.errors import DataError
from textrobust.text import Text
from textrobust.validity.reviews import NEIGHBOUR_REASON, REASONS, Finding, Judgement, Status, Verdict, item_status
from textrobust.validity.substitutions import COLUMNS, parse_row

__all__ = ["COLUMNS", "LabelRow", "LeftOut", "UserLabels", "parse_labels", "read_labels", "review_labels", "write_labels"]

_HEADER = """\
# Substitutions labelled by people in `textrobust review` (issue 40), in the format of the
# labelled substitution set (src/textrobust/resources/substitutions/labelled.tsv), whose rule
# they follow: label 1 (reason `same`) keeps the meaning in this sentence; label 0 with the
# first reason that applies ({reasons}). Split `dev`: user labels steer a source; they are
# not a held-out test. `--labelled FILE` on any analysis command (or `labelled = "FILE"` in
# an audit config's [run]) adds them to the validated synonyms: a rejected pair is never
# proposed again in any sentence, a confirmed one is kept in its own sentence.
# From: {origin}
"""


@dataclass(frozen=True)
class LabelRow:
    """One labelled substitution: ``substitute`` for ``word`` at ``position`` of ``sentence``."""

    id: str
    sentence: str
    position: int
    word: str
    substitute: str
    valid: bool
    reason: str
    corpus: str = ""
    split: str = "dev"
    sources: str = "review"


@dataclass(frozen=True)
class LeftOut:
    """What an export of judgements left out, and why: swaps whose sentence holds a tab or
    a line break (``unwritable``), rejected second-order findings whose reviewers blamed the
    neighbour (the :data:`~textrobust.validity.reviews.NEIGHBOUR_REASON`, or only neighbour
    edits ticked: no synonym pair is at fault, ``neighbour``), and the findings that give
    no row because their reviewers disagree (``disputed``)."""

    unwritable: int = 0
    neighbour: int = 0
    disputed: int = 0

    def lines(self) -> list[str]:
        """One line per cause that left something out (none when nothing was)."""
        said = []
        if self.neighbour:
            said.append(f"{self.neighbour} second-order finding(s) rejected for their neighbour (not natural): no "
                        "substitution pair is blamed, so none is written")
        if self.disputed:
            said.append(f"{self.disputed} disputed finding(s) (the reviewers disagree): no label until they agree")
        if self.unwritable:
            said.append(f"{self.unwritable} swap(s) whose sentence holds a tab or a line break")
        return said


def review_labels(findings: Sequence[Finding], current: Mapping[tuple[str, str], Judgement],
                  corpus: str = "") -> tuple[list[LabelRow], LeftOut]:
    """The label rows of the judged findings (see the module docstring) and what was left
    out (:class:`LeftOut`). A rejected second-order finding labels its patch only when a
    reviewer gave a reason other than the neighbour's and blamed the patch (or nothing)."""
    by_item: dict[str, list[Judgement]] = {}
    for (item, _), judgement in sorted(current.items(), key=lambda pair: pair[1].seq):
        by_item.setdefault(item, []).append(judgement)
    rows: list[LabelRow] = []
    unwritable = neighbour = disputed = 0
    for finding in findings:
        said = [j for j in by_item.get(finding.item, []) if j.verdict in (Verdict.VALID, Verdict.INVALID)]
        status = item_status(j.verdict for j in said)
        disputed += status is Status.DISPUTED
        if status not in (Status.CONFIRMED, Status.REJECTED):
            continue
        if status is Status.REJECTED and any(s.kind == "neighbour" for s in finding.swaps):
            patch = {s.position for s in finding.swaps if s.kind == "patch"}
            said = [j for j in said if j.reason != NEIGHBOUR_REASON and (not j.blamed or set(j.blamed) & patch)]
            if not said:  # every reviewer blamed the neighbour: no synonym pair is at fault
                neighbour += 1
                continue
        blamed = {p for j in said for p in j.blamed}
        reason = "same" if status is Status.CONFIRMED else next((j.reason for j in said if j.reason), "sense")
        for sentence, swap in finding.substitutions():
            if status is Status.REJECTED and blamed and swap.position not in blamed:
                continue
            text = str(sentence)
            if any(c in text for c in "\t\r\n") or sentence.is_pair:
                unwritable += 1
                continue
            rows.append(LabelRow(f"{finding.item}#{swap.position}", text, swap.position, swap.before, swap.after,
                                 status is Status.CONFIRMED, reason, corpus))
    return rows, LeftOut(unwritable, neighbour, disputed)


def write_labels(rows: Iterable[LabelRow], path: str | os.PathLike[str], origin: str = "") -> int:
    """Write ``rows`` as a labelled-set TSV at ``path`` (its folder made if need be);
    the number written."""
    target = Path(path)
    lines = [_HEADER.format(reasons=", ".join(REASONS), origin=origin or "textrobust review").rstrip("\n"),
             "\t".join(COLUMNS)]
    count = 0
    for row in rows:
        lines.append("\t".join([row.id, row.split, row.corpus, row.sentence, str(row.position), row.word,
                                row.substitute, row.sources, "1" if row.valid else "0", row.reason]))
        count += 1
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:  # to a temporary name, renamed into place: replacing a link replaces the link, not its file
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
        os.replace(tmp, target)
    except OSError as exc:
        raise DataError(f"Cannot write the labels file {target}: {exc.strerror or exc}.") from None
    finally:
        tmp.unlink(missing_ok=True)
    return count


def read_labels(path: str | os.PathLike[str]) -> list[LabelRow]:
    """The rows of a labelled-set TSV (the shipped set's format: comment lines, then the
    header of :data:`COLUMNS`); a malformed row is a DataError naming its line."""
    return parse_labels(_read_text(path), str(path))


def _read_text(path: str | os.PathLike[str]) -> str:
    source = Path(path)
    try:
        return source.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"Cannot read the labels file {source} (--labelled): {exc}.") from None


def parse_labels(text: str, source: str = "the labels") -> list[LabelRow]:
    """The rows of a labelled-set TSV's ``text`` (:func:`read_labels`; ``source`` names it
    in errors)."""
    lines = text.splitlines()
    body = [(n, line) for n, line in enumerate(lines, 1) if line and not line.startswith("#")]
    if not body or tuple(body[0][1].split("\t")) != COLUMNS:
        raise DataError(f"{source}: the first line after the comments must be the header "
                        f"{'<TAB>'.join(COLUMNS)} (the format of `textrobust review --export`).")
    rows = []
    for number, line in body[1:]:
        fields = next(csv.reader([line], delimiter="\t", quoting=csv.QUOTE_NONE))
        checked = parse_row(fields, f"{source}, line {number}")
        row, position = checked.fields, checked.position
        rows.append(LabelRow(row["id"], row["sentence"], position, row["word"], row["substitute"],
                             checked.valid, row["reason"], row["corpus"], row["split"], row["sources"]))
    return rows


class _Named(Protocol):
    @property
    def word(self) -> str: ...


S = TypeVar("S", bound=_Named)


@dataclass(frozen=True)
class UserLabels:
    """A user's labels as the validated source applies them (the module docstring says
    what matches): ``rejected`` (word, substitute) pairs in lower case, ``confirmed``
    (sentence words, position, substitute) triples; ``origin``: the file they came from."""

    rejected: frozenset[tuple[str, str]] = frozenset()
    confirmed: frozenset[tuple[tuple[str, ...], int, str]] = frozenset()
    origin: str = ""
    text: str = ""

    @classmethod
    def from_rows(cls, rows: Iterable[LabelRow], origin: str = "", text: str = "") -> UserLabels:
        rows = list(rows)
        return cls(frozenset((r.word.lower(), r.substitute.lower()) for r in rows if not r.valid),
                   frozenset((Text.from_string(r.sentence).words, r.position, r.substitute) for r in rows if r.valid),
                   origin, text)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> UserLabels:
        """The labels of a labelled-set TSV (:func:`read_labels`), with the file's text."""
        return cls.from_text(_read_text(path), str(path))

    @classmethod
    def from_text(cls, text: str, origin: str = "") -> UserLabels:
        """The labels of a labelled-set TSV's ``text`` (as a run stores it: a resumed run
        applies the labels it started with, whatever became of the file)."""
        return cls.from_rows(parse_labels(text, origin or "the labels"), origin, text)

    @property
    def digest(self) -> str:
        """The SHA-256 of the file's text: what a resumed run compares (a copy elsewhere
        is the same labels, an edit with the same counts is not)."""
        import hashlib

        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    def confirmed_at(self, text: Text, position: int) -> list[str]:
        """The substitutes confirmed for ``position`` of this very sentence."""
        words = text.words
        return sorted(s for w, p, s in self.confirmed if p == position and w == words)

    def allows(self, text: Text, position: int, substitute: str) -> bool:
        """Whether ``substitute`` may be proposed at ``position`` of ``text``."""
        if substitute in self.confirmed_at(text, position):
            return True
        return (text.words[position].lower(), substitute.lower()) not in self.rejected

    def revise(self, text: Text, position: int, found: Sequence[S], make: Callable[[str], S]) -> list[S]:
        """``found`` (a source's candidates at ``position``) without the rejected ones, with
        the confirmed ones of this sentence added (``make`` builds a candidate of a word)."""
        kept = [s for s in found if self.allows(text, position, s.word)]
        have = {s.word for s in kept}
        return kept + [make(word) for word in self.confirmed_at(text, position) if word not in have]

    def __repr__(self) -> str:
        return (f"UserLabels({self.origin!r}, {len(self.rejected)} rejected pairs, "
                f"{len(self.confirmed)} confirmed in context)")
