"""The row format of labelled in-context substitutions, shared by the shipped set and a user's labels.

One format for both: the shipped labelled set (``resources/substitutions/labelled.tsv``, read
by :mod:`textrobust.attack.candidates.labelled`) and the files ``textrobust review --export``
writes and ``--labelled`` reads (:mod:`textrobust.validity.overrides`). Comment lines start
with ``#``; then a header of :data:`COLUMNS`; then one tab-separated row per substitution.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from textrobust.errors import DataError
from textrobust.text import Text

__all__ = ["COLUMNS", "REASONS", "SPLITS", "SubstitutionRow", "parse_row"]

#: The columns of the TSV, in order.
COLUMNS = ("id", "split", "corpus", "sentence", "position", "word", "substitute", "sources", "label", "reason")
#: Reasons: ``same`` for valid items, one of the others for invalid ones.
REASONS = ("same", "antonym", "sentiment", "sense", "related", "grammar", "name", "nonsense")
SPLITS = ("dev", "test")


@dataclass(frozen=True)
class SubstitutionRow:
    """One checked row: the fields as written, ``position`` an int and ``valid`` a bool."""

    fields: Mapping[str, str]
    position: int
    valid: bool


def parse_row(fields: list[str], where: str) -> SubstitutionRow:
    """Check one row's fields (``where`` names the file and line in errors): the column
    count, the label and its reason, the position and that the word stands there."""
    if len(fields) != len(COLUMNS):
        raise DataError(f"{where}: expected {len(COLUMNS)} tab-separated fields, got {len(fields)}.")
    row = dict(zip(COLUMNS, fields))
    if row["label"] not in ("0", "1"):
        raise DataError(f"{where}: label must be 0 or 1, got {row['label']!r}.")
    if row["reason"] not in REASONS or (row["reason"] == "same") != (row["label"] == "1"):
        raise DataError(f"{where}: reason {row['reason']!r} does not fit label {row['label']} "
                        f"(valid items have 'same'; invalid ones one of {', '.join(REASONS[1:])}).")
    try:
        position = int(row["position"])
    except ValueError:
        raise DataError(f"{where}: position must be an integer, got {row['position']!r}.") from None
    words = Text.from_string(row["sentence"]).words
    if not 0 <= position < len(words) or words[position] != row["word"]:
        raise DataError(f"{where}: word {position} of the sentence is not {row['word']!r}.")
    return SubstitutionRow(row, position, row["label"] == "1")
