"""The labelled attack findings and their loader (issue 47, item 5): textrobust.validity.findings."""

from __future__ import annotations

from pathlib import Path

import pytest

from textrobust.errors import DataError
from textrobust.text import Text
from textrobust.validity.findings import COLUMNS, REASONS, Swap, default_path, load_findings

ROW = {"item": "f0000000a1", "corpus": "rotten_tomatoes", "example_id": "rt-00001", "found_by": "cnn@0.5,minilm@0.2",
       "original": "a good film", "changed": "a good movie", "swaps": "2:film>movie", "probability": "0.81",
       "first_label": "1", "first_reason": "same", "second_label": "1", "second_reason": "same", "label": "1",
       "reason": "same", "note": ""}
INVALID = {**ROW, "item": "f0000000b2", "corpus": "tweets", "example_id": "tw-00002", "found_by": "cnn@0.2",
           "changed": "a great movie", "swaps": "1:good>great;2:film>movie", "probability": "0.12",
           "second_label": "0", "second_reason": "sentiment", "label": "0", "reason": "sentiment",
           "note": "good -> great is stronger"}


def write(tmp_path: Path, rows: list[dict[str, str]], header: tuple[str, ...] = COLUMNS) -> Path:
    path = tmp_path / "labelled.tsv"
    lines = ["# rule line", "\t".join(header)] + ["\t".join(r[c] for c in COLUMNS) for r in rows]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_small_set_loads_into_typed_rows(tmp_path: Path) -> None:
    valid, invalid = load_findings(write(tmp_path, [ROW, INVALID]))
    assert valid.label and valid.agree and valid.swaps == (Swap(2, "film", "movie"),)
    assert valid.found_by == ("cnn@0.5", "minilm@0.2") and valid.victims == ("cnn", "minilm")
    assert valid.probability == pytest.approx(0.81)
    assert not invalid.label and not invalid.agree and invalid.reason == "sentiment"
    assert [str(s) for s in invalid.swaps] == ["1:good>great", "2:film>movie"]
    with pytest.raises(AttributeError):
        valid.label = False  # type: ignore[misc]  # frozen


@pytest.mark.parametrize("field, value, message", [
    ("corpus", "imdb", "must be one of rotten_tomatoes, tweets"),
    ("found_by", "cnn", "victim@min_validity"),
    ("found_by", "cnn@high", "victim@min_validity"),
    ("probability", "1.5", r"in \[0, 1\]"),
    ("probability", "n/a", r"in \[0, 1\]"),
    ("first_label", "yes", "1 \\(valid\\) or 0"),
    ("first_reason", "synonym", "must be one of same, antonym"),
    ("reason", "sentiment", "'same' exactly when its label is 1"),
    ("label", "0", "both readers' labels are 1"),
    ("swaps", "2 film movie", "position:word>substitute"),
    ("changed", "a good film", "must differ from the original"),
    ("example_id", "", "must not be empty")])
def test_a_bad_field_is_named_with_its_line(tmp_path: Path, field: str, value: str, message: str) -> None:
    with pytest.raises(DataError, match=rf"line 4: the field '{field}' .*{message}.*got "):
        load_findings(write(tmp_path, [INVALID, {**ROW, field: value}]))


def test_header_width_repeats_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="line 2: the header must be the columns"):
        load_findings(write(tmp_path, [ROW], header=COLUMNS[:-1]))
    with pytest.raises(DataError, match="line 4: the field 'item' repeats"):
        load_findings(write(tmp_path, [ROW, ROW]))
    short = tmp_path / "short.tsv"
    short.write_text("\t".join(COLUMNS) + "\na\tb\n")
    with pytest.raises(DataError, match="line 2: expected 15 tab-separated fields, got 2"):
        load_findings(short)
    empty = tmp_path / "empty.tsv"
    empty.write_text("# only comments\n")
    with pytest.raises(DataError, match="no header"):
        load_findings(empty)
    with pytest.raises(DataError, match="does not exist"):
        load_findings(tmp_path / "absent.tsv")


def test_the_shipped_set_keeps_its_format() -> None:
    """The shipped file: its rule and readers in the header, both readings of every finding,
    the changed text made of exactly its swaps, and both corpora and victims present."""
    head = [line for line in default_path().read_text(encoding="utf-8").splitlines() if line.startswith("#")]
    text = " ".join(head).lower()
    assert "valid" in text and "reader agents" in text and "both readers" in text
    found = load_findings()
    assert len(found) >= 300
    for f in found:
        original, changed = Text.from_string(f.original), Text.from_string(f.changed)
        assert len(original) == len(changed), f.item
        assert original.diff(changed) == tuple(s.position for s in f.swaps), f.item
        assert all(original.words[s.position] == s.word and changed.words[s.position] == s.substitute
                   for s in f.swaps), f.item
        assert f.reason in REASONS
    assert {f.corpus for f in found} == {"rotten_tomatoes", "tweets"}
    assert {v for f in found for v in f.victims} == {"cnn", "minilm"}
    assert 0 < sum(f.label for f in found) < len(found)
