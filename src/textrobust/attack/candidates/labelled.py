"""The labelled substitution set: in-context substitutions judged valid or invalid by reading.

``resources/substitutions/labelled.tsv`` holds substitutions that textrobust's candidate
sources actually propose on the bundled corpora (Rotten Tomatoes, BBC News, tweets), drawn
by ``benchmarks/validity/build_pool.py``, each labelled by a careful reading under the rule
written at the top of the file. Three pools: issue 28's two (ids below ``s2000``; test
splits of the corpora) and issue 39's third (ids from ``s2000``; validation splits, drawn
from sources rich in plausible-valid substitutes: WordNet's frequent senses, the validated
source at relaxed settings, the masked LM with the target visible, close counter-fitted
neighbours), read blind by readers who did not see the sources; a fifth of the third pool
was read twice (Cohen's kappa in ``benchmarks/results/validity.md``), disagreements resolved
as invalid (``benchmarks/validity/merge_labels.py``). It is split dev / test by sentence before anything was
tuned; sources are tuned on dev only. :func:`score_source` measures any
:class:`~textrobust.attack.problem.CandidateSource` on it: precision (valid among the
labelled substitutions the source proposes), recall (proposed among the valid ones).
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from textrobust.attack.problem import CandidateSource
from textrobust.errors import DataError
from textrobust.text import Text
from textrobust.validity.substitutions import COLUMNS, REASONS, SPLITS, parse_row

__all__ = [
    "COLUMNS",
    "REASONS",
    "SPLITS",
    "LabelledSubstitution",
    "SourceScore",
    "candidates_per_word",
    "labelled_substitutions",
    "score_source",
]



@dataclass(frozen=True)
class LabelledSubstitution:
    """One labelled substitution: ``substitute`` for ``word`` at ``position`` of ``sentence``."""

    id: str
    split: str
    corpus: str
    sentence: str
    position: int
    word: str
    substitute: str
    sources: tuple[str, ...]
    valid: bool
    reason: str

    @property
    def text(self) -> Text:
        return Text.from_string(self.sentence)


def default_path() -> Path:
    return Path(str(resources.files("textrobust").joinpath("resources", "substitutions", "labelled.tsv")))


def labelled_substitutions(split: str | None = None, path: str | Path | None = None) -> list[LabelledSubstitution]:
    """The labelled set shipped with textrobust (or the one at ``path``), optionally one
    ``split`` ("dev" or "test"). Every row is checked: a malformed one is a DataError
    naming its line."""
    if split is not None and split not in SPLITS:
        raise DataError(f"The split of the labelled substitution set must be one of {', '.join(SPLITS)}. Got {split!r}.")
    path = Path(path) if path is not None else default_path()
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise DataError(f"Cannot read the labelled substitution set {path}: {exc.strerror or exc}.") from None
    body = [(n, line) for n, line in enumerate(lines, 1) if line and not line.startswith("#")]
    if not body or tuple(body[0][1].split("\t")) != COLUMNS:
        header = "<TAB>".join(COLUMNS)
        raise DataError(f"{path}: the first line after the comments must be the header {header}.")
    items: list[LabelledSubstitution] = []
    seen: set[str] = set()
    for number, line in body[1:]:
        fields = next(csv.reader([line], delimiter="\t", quoting=csv.QUOTE_NONE))
        items.append(_parse(path, number, fields, seen))
    return [item for item in items if split is None or item.split == split]


def _parse(path: Path, number: int, fields: list[str], seen: set[str]) -> LabelledSubstitution:
    where = f"{path}, line {number}"
    checked = parse_row(fields, where)
    row = checked.fields
    if row["id"] in seen:
        raise DataError(f"{where}: the id {row['id']!r} appears twice.")
    seen.add(row["id"])
    if row["split"] not in SPLITS:
        raise DataError(f"{where}: split must be dev or test, got {row['split']!r}.")
    return LabelledSubstitution(row["id"], row["split"], row["corpus"], row["sentence"], checked.position, row["word"],
                                row["substitute"], tuple(s for s in row["sources"].split(",") if s),
                                checked.valid, row["reason"])


@dataclass(frozen=True)
class SourceScore:
    """How a candidate source fares on labelled substitutions."""

    n: int
    accepted: int
    true_positives: int
    positives: int

    @property
    def precision(self) -> float:
        return self.true_positives / self.accepted if self.accepted else 0.0

    @property
    def recall(self) -> float:
        return self.true_positives / self.positives if self.positives else 0.0

    def as_dict(self) -> dict[str, float]:
        return {"n": self.n, "accepted": self.accepted, "true_positives": self.true_positives,
                "positives": self.positives, "precision": self.precision, "recall": self.recall}


def proposed(source: CandidateSource, items: Sequence[LabelledSubstitution]) -> list[bool]:
    """Per item, whether ``source`` proposes its substitute at its position (case-blind);
    one call per sentence and position."""
    answers: dict[tuple[str, int], set[str]] = {}
    for item in items:
        key = (item.sentence, item.position)
        if key not in answers:
            found = source.candidates(item.text, [item.position]).get(item.position, [])
            answers[key] = {s.word.lower() for s in found}
    return [item.substitute.lower() in answers[(item.sentence, item.position)] for item in items]


def score_source(source: CandidateSource, items: Sequence[LabelledSubstitution]) -> SourceScore:
    """Precision and recall of ``source`` on ``items``."""
    flags = proposed(source, items)
    return SourceScore(
        n=len(items),
        accepted=sum(flags),
        true_positives=sum(f and item.valid for f, item in zip(flags, items)),
        positives=sum(item.valid for item in items),
    )


def candidates_per_word(source: CandidateSource, texts: Iterable[Text], stop_words: Iterable[str]) -> float:
    """Mean number of candidates ``source`` proposes per content word of ``texts``
    (alphabetic, >= 3 letters, not a stop word)."""
    stops = {w.lower() for w in stop_words}
    total = words = 0
    for text in texts:
        positions = [i for i, w in enumerate(text.words) if w.isalpha() and len(w) >= 3 and w.lower() not in stops]
        if not positions:
            continue
        found = source.candidates(text, positions)
        total += sum(len(found.get(p, [])) for p in positions)
        words += len(positions)
    return total / words if words else 0.0
