"""What a candidate constraint compares a proposal with, and the window around a change.

Every candidate constraint judges one change: ``proposal.word`` at ``proposal.position``.
It compares the proposal's text with a *reference* text, chosen by ``compare_to``:

- ``"original"`` (default, as TextAttack's ``compare_against_original=True``): the text
  the attack started from, so a chain of small drifts cannot add up to a large one;
- ``"parent"``: the text the proposal was made from, so only this step is judged.

A *window* of ``w`` words is the change and up to ``w`` words on each side, within the
column (sentence) that holds the change. Near either end it shifts to keep ``2w + 1``
words when the column has them, as TextAttack's ``text_window_around_index``; so ``w=7``
matches TextAttack's ``window_size=15``. ``w=None`` is the whole column. For a
premise/hypothesis pair only the changed column is compared: the other is identical in
both texts.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum

from textrobust.attack.problem import Proposal
from textrobust.errors import ConfigError
from textrobust.text import Text

__all__ = [
    "CompareTo",
    "check_lengths",
    "reference_text",
    "window_bounds",
    "window_pairs",
    "window_segment",
    "window_string",
]


class CompareTo(str, Enum):
    """Which text a proposal is compared with."""

    ORIGINAL = "original"
    PARENT = "parent"


def reference_text(original: Text, proposal: Proposal, compare_to: CompareTo) -> Text:
    """The text ``proposal`` is judged against."""
    return original if compare_to is CompareTo.ORIGINAL else proposal.parent


def check_lengths(owner: str, reference: Text, proposal: Proposal) -> None:
    """Word substitution keeps the number of words; anything else is a caller's error."""
    if len(reference) != len(proposal.text) or not 0 <= proposal.position < len(proposal.text):
        raise ConfigError(
            f"{owner} judges one-word substitutions: the proposal must have as many words as the "
            f"reference ({len(reference)}) and a position inside it. Got {len(proposal.text)} words "
            f"and position {proposal.position}."
        )


def window_bounds(n_words: int, position: int, half: int | None) -> tuple[int, int]:
    """Word range ``[start, end)`` of the window of ``half`` words each side of ``position``
    among ``n_words``, shifted at the edges to keep ``2 * half + 1`` words if possible."""
    if half is None or 2 * half + 1 >= n_words:
        return 0, n_words
    start = position - half
    end = position + half + 1
    if start < 0:
        start, end = 0, 2 * half + 1
    elif end > n_words:
        start, end = n_words - (2 * half + 1), n_words
    return start, end


def window_segment(text: Text, position: int, half: int | None) -> tuple[str, tuple[int, int]]:
    """The window around ``position`` as a string, and the changed word's character span
    in that string. The window runs from its first word's start to its last word's end
    (the column's own spacing and punctuation in between); with ``half=None`` it is the
    whole column, surrounding punctuation included."""
    spans = text.word_spans()
    column, word_start, word_end = spans[position]
    string = text.columns[column]
    if half is None:
        return string, (word_start, word_end)
    members = [i for i, s in enumerate(spans) if s[0] == column]
    first = members[0]
    start, end = window_bounds(len(members), position - first, half)
    left = spans[first + start][1]
    right = spans[first + end - 1][2]
    return string[left:right], (word_start - left, word_end - left)


def window_string(text: Text, position: int, half: int | None) -> str:
    """The string of :func:`window_segment`."""
    return window_segment(text, position, half)[0]


def window_pairs(
    original: Text, proposals: Sequence[Proposal], compare_to: CompareTo, half: int | None, owner: str
) -> tuple[list[str], list[str]]:
    """For each proposal, the reference window and the proposal's window (same words range)."""
    refs: list[str] = []
    news: list[str] = []
    for proposal in proposals:
        reference = reference_text(original, proposal, compare_to)
        check_lengths(owner, reference, proposal)
        refs.append(window_string(reference, proposal.position, half))
        news.append(window_string(proposal.text, proposal.position, half))
    return refs, news
