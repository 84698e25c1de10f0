"""The one row format shared by the shipped labelled set and a user's --labelled file."""

from __future__ import annotations

import pytest

from textrobust.attack.candidates import labelled
from textrobust.errors import DataError
from textrobust.validity import overrides
from textrobust.validity.substitutions import COLUMNS, parse_row


def _fields(**changes: str) -> list[str]:
    row = {"id": "a1", "split": "dev", "corpus": "rt", "sentence": "A fine film .", "position": "2",
           "word": "film", "substitute": "movie", "sources": "wordnet", "label": "1", "reason": "same"}
    row.update(changes)
    return [row[c] for c in COLUMNS]


def test_both_readers_use_the_one_format() -> None:
    assert labelled.COLUMNS == overrides.COLUMNS == COLUMNS


def test_a_good_row_gives_its_position_and_label() -> None:
    checked = parse_row(_fields(), "f, line 2")
    assert checked.position == 2 and checked.valid and checked.fields["substitute"] == "movie"
    assert not parse_row(_fields(label="0", reason="sense"), "f, line 2").valid


@pytest.mark.parametrize(("changes", "message"), [
    ({"label": "yes"}, "label must be 0 or 1"),
    ({"label": "0", "reason": "same"}, "does not fit label 0"),
    ({"reason": "sense"}, "does not fit label 1"),
    ({"position": "two"}, "position must be an integer"),
    ({"position": "1"}, "word 1 of the sentence is not 'film'"),
])
def test_a_bad_row_names_its_line_and_fault(changes: dict[str, str], message: str) -> None:
    with pytest.raises(DataError, match="f, line 7: .*" + message):
        parse_row(_fields(**changes), "f, line 7")


def test_a_short_row_is_refused() -> None:
    with pytest.raises(DataError, match="expected 10 tab-separated fields, got 3"):
        parse_row(["a", "b", "c"], "f, line 3")
