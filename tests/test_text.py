"""Text: exact round trips, edits, pairs, frozen positions, l0 (unit and property tests)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from textrobust.errors import ConfigError
from textrobust.text import Text, split_words

ALPHABET = st.sampled_from(list("abcXYZ019 \t\n.,!?'-\"()é—"))
STRINGS = st.text(ALPHABET, max_size=60)
WORDS = st.from_regex(r"[a-z]{1,6}", fullmatch=True)


@given(STRINGS)
def test_untouched_text_round_trips_exactly(s: str) -> None:
    assert str(Text.from_string(s)) == s


@given(STRINGS)
def test_gaps_and_words_interleave(s: str) -> None:
    words, gaps = split_words(s)
    assert len(gaps) == len(words) + 1
    assert "".join(g + w for g, w in zip(gaps, words)) + gaps[-1] == s


@settings(max_examples=200)
@given(STRINGS, st.data())
def test_l0_counts_changed_words(s: str, data: st.DataObject) -> None:
    text = Text.from_string(s)
    if len(text) == 0:
        return
    positions = data.draw(st.sets(st.integers(0, len(text) - 1)))
    changes = {p: data.draw(WORDS) for p in positions}
    edited = text.replace(changes) if changes else text
    really_changed = {p for p, w in changes.items() if text.words[p] != w}
    assert set(text.diff(edited)) == really_changed
    assert text.l0(edited) == len(really_changed) == edited.l0(text)


@given(STRINGS, st.data())
def test_replace_keeps_gaps(s: str, data: st.DataObject) -> None:
    text = Text.from_string(s)
    if len(text) == 0:
        return
    pos = data.draw(st.integers(0, len(text) - 1))
    word = data.draw(WORDS)
    edited = text.replace(pos, word)
    _, gaps_before = split_words(s)
    _, gaps_after = split_words(str(edited))
    assert edited.words[pos] == word
    assert gaps_after == gaps_before


def test_words_keep_punctuation_out_and_contractions_in() -> None:
    t = Text.from_string("It's a well-made, 179-minute film -- really!")
    assert t.words == ("It's", "a", "well-made", "179-minute", "film", "really")
    assert str(t.replace({0: "This", 4: "movie"})) == "This a well-made, 179-minute movie -- really!"


def test_text_is_immutable_and_hashable_by_content() -> None:
    a = Text.from_string("a good film")
    b = a.replace(1, "bad")
    assert str(a) == "a good film" and str(b) == "a bad film"
    assert a == Text.from_string("a good film") and hash(a) == hash(Text.from_string("a good film"))
    assert a != b
    with pytest.raises(AttributeError):
        a.frozen = frozenset({1})  # type: ignore[misc]


def test_pair_positions_and_frozen_premise() -> None:
    t = Text.from_pair("A man is sleeping.", "Nobody sleeps.")
    assert t.is_pair and t.words == ("A", "man", "is", "sleeping", "Nobody", "sleeps")
    assert t.frozen == frozenset(range(4)) and t.modifiable == (4, 5)
    assert list(t.column_positions("hypothesis")) == [4, 5]
    edited = t.replace(5, "snores")
    assert edited.columns == ("A man is sleeping.", "Nobody snores.")
    assert edited.frozen == t.frozen
    unfrozen = Text.from_pair("p q", "r", frozen_columns=())
    assert unfrozen.modifiable == (0, 1, 2)


def test_word_spans_point_at_words() -> None:
    t = Text.from_pair("Hi, there.", "Yes  no")
    for (column, start, end), word in zip(t.word_spans(), t.words):
        assert t.columns[column][start:end] == word


def test_freeze_and_modifiable() -> None:
    t = Text.from_string("one two three", frozen=[0])
    assert t.modifiable == (1, 2)
    assert t.freeze([2]).modifiable == (1,)


@pytest.mark.parametrize(
    "call",
    [
        lambda t: t.replace(9, "x"),
        lambda t: t.replace(0, "two words"),
        lambda t: t.replace(0, ""),
        lambda t: t.replace(0),
        lambda t: t.freeze([-1]),
        lambda t: t.diff(Text.from_string("one")),
        lambda t: Text.from_pair("a", "b", frozen_columns=("nope",)),
        lambda t: t.column_positions("nope"),
    ],
)
def test_bad_edits_raise_config_error(call) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigError):
        call(Text.from_string("one two three"))


def _fields(text: Text) -> tuple:
    part = text._parts[0]
    return (part.words, part.gaps, text.frozen, text.column_names, text.key, text.words)


@settings(max_examples=200)
@given(STRINGS, st.data())
def test_one_word_fast_paths_build_the_same_text_as_the_general_path(s: str, data: st.DataObject) -> None:
    # replace() and without() splice the parent's string for one-column texts (the
    # attacks' hot path); every field must equal what the dataclass constructor builds.
    from textrobust.text import _Part

    text = Text.from_string(s)
    if len(text) == 0:
        return
    frozen = data.draw(st.sets(st.integers(0, len(text) - 1), max_size=2))
    base = text.freeze(frozen) if frozen else text
    position = data.draw(st.integers(0, len(text) - 1))
    word = data.draw(WORDS)
    edited = base.replace(position, word)
    words = list(text.words)
    words[position] = word
    reference = Text((_Part(tuple(words), text._parts[0].gaps),), base.frozen, base.column_names)
    assert _fields(edited) == _fields(reference)
    assert str(edited) == str(Text.from_string(str(edited)))
    again = edited.replace(len(edited) - 1, "zz")  # an edit of an edited (spliced) text
    assert str(again) == "".join(g + w for g, w in zip(again._parts[0].gaps, again.words)) + again._parts[0].gaps[-1]
    shorter = text.without(position)
    general = Text.from_pair(s, "x", frozen_columns=()).without(position)  # the multi-column loop
    assert shorter.words == general.words[:-1]
    assert str(shorter) == general.columns[0]
    assert _fields(shorter)[4] == (shorter._parts[0].render(),)


@settings(max_examples=200)
@given(STRINGS, st.data())
def test_many_word_fast_path_builds_the_same_text_as_one_edit_at_a_time(s: str, data: st.DataObject) -> None:
    text = Text.from_string(s)
    if len(text) == 0:
        return
    changes = data.draw(st.dictionaries(st.integers(0, len(text) - 1), WORDS, max_size=4))
    edited = text.replace(changes) if changes else text
    stepwise = text
    for position, word in changes.items():
        stepwise = stepwise.replace(position, word)
    assert _fields(edited) == _fields(stepwise)


def test_many_word_replace_still_rejects_bad_edits() -> None:
    text = Text.from_string("a good film")
    with pytest.raises(ConfigError, match="positions"):
        text.replace({5: "x"})
    with pytest.raises(ConfigError, match="one word"):
        text.replace({1: "two words"})
