"""Checking fill-in requests, and cutting a text around the word to fill.

Every fill-in takes ``requests``: a sequence of ``(Text, position)`` pairs, and ``k``.
:func:`check_fill_args` validates them once with messages that name the bad value;
:func:`masked_columns` renders a text with one word replaced by a placeholder (a mask
token), and says whether a space precedes the word (which decides, for BPE and
SentencePiece vocabularies, which entries may fill it: see
:mod:`textrobust.fill_in.whole_words`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from textrobust.errors import ConfigError
from textrobust.text import Text

__all__ = ["Gap", "check_fill_args", "masked_columns"]


def check_fill_args(requests: Sequence[tuple[Text, int]], k: int, owner: str) -> list[tuple[Text, int]]:
    """``requests`` as a list, after checking each is a ``(Text, valid position)`` pair and
    ``k`` an int >= 1; raises :class:`~textrobust.errors.ConfigError` otherwise."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ConfigError(f"The 'k' parameter of {owner}.fill must be an int >= 1. Got {k!r} instead.")
    if isinstance(requests, (str, Text)) or not isinstance(requests, Sequence):
        raise ConfigError(
            f"The 'requests' parameter of {owner}.fill must be a sequence of (Text, position) pairs. "
            f"Got {type(requests).__name__}."
        )
    out: list[tuple[Text, int]] = []
    for i, request in enumerate(requests):
        if not isinstance(request, tuple) or len(request) != 2 or not isinstance(request[0], Text):
            raise ConfigError(
                f"Request {i} of {owner}.fill must be a (Text, position) pair. Got {request!r} instead."
            )
        text, position = request
        if isinstance(position, bool) or not isinstance(position, int) or not 0 <= position < len(text):
            raise ConfigError(
                f"Request {i} of {owner}.fill asks for position {position!r}, but the text has "
                f"{len(text)} words (positions 0..{len(text) - 1}): {str(text)!r}."
            )
        out.append((text, position))
    return out


@dataclass(frozen=True, slots=True)
class Gap:
    """A text cut at one word: ``columns`` with the word replaced by the placeholder,
    ``column`` the index of the column holding it, ``before`` the column's text before
    the word, ``after`` the rest of that column, ``spaced`` whether whitespace precedes it."""

    columns: tuple[str, ...]
    column: int
    before: str
    after: str
    spaced: bool


def masked_columns(text: Text, position: int, placeholder: str) -> Gap:
    """``text`` with the word at ``position`` replaced by ``placeholder``.

    >>> gap = masked_columns(Text.from_string("A fine, bold film."), 2, "[MASK]")
    >>> gap.columns, gap.spaced
    (('A fine, [MASK] film.',), True)
    """
    column, start, end = text.word_spans()[position]
    source = text.columns[column]
    before, after = source[:start], source[end:]
    columns = list(text.columns)
    columns[column] = before + placeholder + after
    spaced = bool(before) and before[-1].isspace()
    return Gap(tuple(columns), column, before, after, spaced)
