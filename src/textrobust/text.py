"""The immutable text type every attack works on.

A :class:`Text` is one sentence, or a pair of them (premise and hypothesis), split into
*words* and the *gaps* between them. Gaps keep the original spacing and punctuation, so
``str(Text.from_string(s)) == s`` for every string ``s``. Words are numbered across the
whole text (premise words first, then hypothesis words); a position is either modifiable
or frozen. Edits return new objects; nothing is ever changed in place.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
import itertools
from itertools import chain

from textrobust.errors import ConfigError

__all__ = ["Text", "WORD_PATTERN", "split_words"]

#: A word is a run of letters/digits, with inner apostrophes or hyphens ("don't",
#: "well-made", "U.S" stays two words). Everything else (spaces, punctuation) is a gap.
WORD_PATTERN = re.compile(r"[^\W_]+(?:['’\-][^\W_]+)*", re.UNICODE)


def split_words(string: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Split ``string`` into words and gaps, with ``len(gaps) == len(words) + 1``."""
    words: list[str] = []
    gaps: list[str] = []
    last = 0
    for match in WORD_PATTERN.finditer(string):
        gaps.append(string[last : match.start()])
        words.append(match.group())
        last = match.end()
    gaps.append(string[last:])
    return tuple(words), tuple(gaps)


@dataclass(frozen=True, slots=True)
class _Part:
    words: tuple[str, ...]
    gaps: tuple[str, ...]

    def render(self) -> str:
        # gap0 word0 gap1 word1 ... gap_n, joined in C (this runs once per text built)
        return "".join(chain.from_iterable(zip(self.gaps, self.words))) + self.gaps[-1]


_set = object.__setattr__

#: Words already checked against WORD_PATTERN (the same few thousand candidate words are
#: put into texts again and again; a set lookup is cheaper than the regex). Bounded.
_WORDS_SEEN: set[str] = set()


def _is_word(word: str) -> bool:
    if word in _WORDS_SEEN:
        return True
    if WORD_PATTERN.fullmatch(word) is None:
        return False
    if len(_WORDS_SEEN) >= 200_000:
        _WORDS_SEEN.clear()
    _WORDS_SEEN.add(word)
    return True


def _one_column(
    words: tuple[str, ...],
    gaps: tuple[str, ...],
    frozen: frozenset[int],
    column_names: tuple[str, ...],
    rendered: str | None = None,
) -> Text:
    """``Text((_Part(words, gaps),), frozen, column_names)`` without the dataclass
    ``__init__`` layers: attacks build one text per candidate, so this is a hot path. Sets
    exactly the fields ``__init__`` and ``__post_init__`` set (tested against them).
    ``rendered``: the column's string when the caller already has it (spliced from a
    parent's), else it is rendered here."""
    part = object.__new__(_Part)
    _set(part, "words", words)
    _set(part, "gaps", gaps)
    text = object.__new__(Text)
    _set(text, "_parts", (part,))
    _set(text, "frozen", frozen)
    _set(text, "column_names", column_names)
    _set(text, "_key", (part.render() if rendered is None else rendered,))
    _set(text, "_words", words)
    _set(text, "_starts", None)
    return text


@dataclass(frozen=True, slots=True, eq=False)
class Text:
    """An immutable sentence or sentence pair, as words with their original gaps.

    Build one with :meth:`from_string` or :meth:`from_pair`, never from the fields.

    >>> t = Text.from_string("A gripping, well-made film.")
    >>> t.words
    ('A', 'gripping', 'well-made', 'film')
    >>> str(t.replace(1, "dull"))
    'A dull, well-made film.'
    >>> t.l0(t.replace({1: "dull", 3: "movie"}))
    2
    """

    _parts: tuple[_Part, ...]
    frozen: frozenset[int] = field(default=frozenset())
    column_names: tuple[str, ...] = ("text",)
    # computed once: texts are keys of caches and compared very often
    _key: tuple[str, ...] = field(init=False, repr=False, compare=False)
    _words: tuple[str, ...] = field(init=False, repr=False, compare=False)
    # character offset of each word in a one-column text's string, computed on the first
    # one-word edit: the edited copies are then spliced, not re-rendered
    _starts: tuple[int, ...] | None = field(init=False, repr=False, compare=False, default=None)

    def __post_init__(self) -> None:
        if len(self._parts) == 1:
            part = self._parts[0]
            object.__setattr__(self, "_key", (part.render(),))
            object.__setattr__(self, "_words", part.words)
        else:
            object.__setattr__(self, "_key", tuple(p.render() for p in self._parts))
            object.__setattr__(self, "_words", tuple(w for p in self._parts for w in p.words))

    # ---- construction -------------------------------------------------------------
    @classmethod
    def from_string(cls, string: str, *, frozen: Iterable[int] = ()) -> Text:
        if not isinstance(string, str):
            raise ConfigError(f"Text.from_string expects a str. Got {type(string).__name__}.")
        words, gaps = split_words(string)
        text = cls((_Part(words, gaps),))
        return text.freeze(frozen) if frozen else text

    @classmethod
    def from_pair(
        cls,
        premise: str,
        hypothesis: str,
        *,
        frozen_columns: Sequence[str] = ("premise",),
        column_names: tuple[str, str] = ("premise", "hypothesis"),
    ) -> Text:
        """A premise/hypothesis pair; by default the premise may not change."""
        parts = tuple(_Part(*split_words(s)) for s in (premise, hypothesis))
        unknown = set(frozen_columns) - set(column_names)
        if unknown:
            raise ConfigError(
                f"The 'frozen_columns' parameter of Text.from_pair must name columns among "
                f"{list(column_names)}. Got {sorted(unknown)} instead."
            )
        text = cls(parts, frozenset(), tuple(column_names))
        positions: list[int] = []
        for name in frozen_columns:
            positions.extend(text.column_positions(name))
        return text.freeze(positions)

    # ---- views ----------------------------------------------------------------------
    @property
    def words(self) -> tuple[str, ...]:
        return self._words

    @property
    def columns(self) -> tuple[str, ...]:
        """The text of each column (one for a sentence, two for a pair)."""
        return self._key

    @property
    def is_pair(self) -> bool:
        return len(self._parts) > 1

    @property
    def key(self) -> tuple[str, ...]:
        """A hashable identity: the rendered columns. Equal keys mean equal texts."""
        return self._key

    @property
    def modifiable(self) -> tuple[int, ...]:
        """Positions that an attack may change, in order."""
        if not self.frozen:
            return tuple(range(len(self._words)))
        frozen = self.frozen
        return tuple(i for i in range(len(self._words)) if i not in frozen)

    def word_spans(self) -> tuple[tuple[int, int, int], ...]:
        """For each word: (column index, start, end) character offsets in its column."""
        spans: list[tuple[int, int, int]] = []
        for c, part in enumerate(self._parts):
            cursor = 0
            for gap, word in zip(part.gaps, part.words):
                cursor += len(gap)
                spans.append((c, cursor, cursor + len(word)))
                cursor += len(word)
        return tuple(spans)

    def column_positions(self, name: str) -> range:
        """The word positions belonging to the column ``name``."""
        try:
            index = self.column_names.index(name)
        except ValueError:
            raise ConfigError(
                f"Unknown column '{name}'. This text has columns {list(self.column_names)}."
            ) from None
        start = sum(len(p.words) for p in self._parts[:index])
        return range(start, start + len(self._parts[index].words))

    def __len__(self) -> int:
        return len(self._words)

    def __getitem__(self, position: int) -> str:
        return self.words[position]

    def __iter__(self) -> Iterator[str]:
        return iter(self.words)

    def __str__(self) -> str:
        return " ".join(self._key) if self.is_pair else self._key[0]

    def __repr__(self) -> str:
        frozen = f", frozen={sorted(self.frozen)}" if self.frozen else ""
        if self.is_pair:
            return f"Text.pair({self.columns!r}{frozen})"
        return f"Text({str(self)!r}{frozen})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Text) and self.key == other.key

    def __hash__(self) -> int:
        return hash(self.key)

    # ---- edits ----------------------------------------------------------------------
    def freeze(self, positions: Iterable[int]) -> Text:
        """A copy where ``positions`` may no longer change."""
        positions = frozenset(positions)
        self._check_positions(positions)
        return Text(self._parts, self.frozen | positions, self.column_names)

    def replace(self, position: int | Mapping[int, str], word: str | None = None) -> Text:
        """A copy with words replaced: ``replace(3, "dull")`` or ``replace({3: "dull"})``.

        Frozen positions are not checked here (a constraint's job), so that analyses
        which must edit a frozen column, such as bias patch words, can still do so.
        """
        if word is not None and type(position) is int and len(self._parts) == 1:
            # The common case (one word of a one-column text), without the general loop.
            part = self._parts[0]
            words = part.words
            if 0 <= position < len(words) and type(word) is str and _is_word(word):
                start = self._word_starts()[position]
                rendered = self._key[0]
                return _one_column(words[:position] + (word,) + words[position + 1:], part.gaps,
                                   self.frozen, self.column_names,
                                   rendered[:start] + word + rendered[start + len(words[position]):])
        if word is None and len(self._parts) == 1 and isinstance(position, Mapping):
            # Several words of a one-column text (crossover children), without the general loop;
            # anything unusual falls through to the checks below.
            part = self._parts[0]
            edited = list(part.words)
            n = len(edited)
            for pos, new in position.items():
                if type(pos) is not int or not 0 <= pos < n or type(new) is not str or not _is_word(new):
                    break
                edited[pos] = new
            else:
                return _one_column(tuple(edited), part.gaps, self.frozen, self.column_names)
        if isinstance(position, Mapping):
            changes = dict(position)
            if word is not None:
                raise ConfigError("Text.replace takes a mapping or (position, word), not both.")
        else:
            if word is None:
                raise ConfigError("Text.replace(position, word) needs a word.")
            changes = {position: word}
        self._check_positions(changes)
        for pos, new in changes.items():
            if not isinstance(new, str) or not new or WORD_PATTERN.fullmatch(new) is None:
                raise ConfigError(
                    f"A replacement must be one word (letters/digits, inner ' or -). "
                    f"Got {new!r} at position {pos}."
                )
        parts = []
        offset = 0
        for part in self._parts:
            n = len(part.words)
            local = {p - offset: w for p, w in changes.items() if offset <= p < offset + n}
            if local:
                words = tuple(local.get(i, w) for i, w in enumerate(part.words))
                part = _Part(words, part.gaps)
            parts.append(part)
            offset += n
        return Text(tuple(parts), self.frozen, self.column_names)

    def without(self, position: int) -> Text:
        """A copy with the word at ``position`` deleted (with the gap before it).

        Positions after it shift left by one; meant for scoring (leave-one-out word
        importance), not as an adversarial edit.
        """
        self._check_positions([position])
        if len(self._parts) == 1 and not self.frozen:
            # The common case (leave-one-out ranking of a one-column text), without the loop.
            words, gaps = self._parts[0].words, self._parts[0].gaps
            start = self._word_starts()[position]
            end = start + len(words[position])
            rendered = self._key[0]
            if position > 0:  # drop the gap before the word and the word
                rendered = rendered[: start - len(gaps[position])] + rendered[end:]
                gaps = gaps[:position] + gaps[position + 1:]
            else:  # keep the leading gap, drop the word and the gap after it
                rendered = rendered[:start] + rendered[end + len(gaps[1]):]
                gaps = (gaps[0],) + gaps[2:]
            return _one_column(words[:position] + words[position + 1:], gaps, self.frozen, self.column_names,
                               rendered)
        parts = []
        offset = 0
        for part in self._parts:
            n = len(part.words)
            if offset <= position < offset + n:
                i = position - offset
                words = part.words[:i] + part.words[i + 1 :]
                # keep the gap after the word, drop the one before it (the first gap if i == 0)
                gaps = part.gaps[:i] + part.gaps[i + 1 :] if i > 0 else part.gaps[1:]
                if i == 0:
                    gaps = (part.gaps[0],) + gaps[1:]
                part = _Part(words, gaps)
            parts.append(part)
            offset += n
        frozen = frozenset(p if p < position else p - 1 for p in self.frozen if p != position)
        return Text(tuple(parts), frozen, self.column_names)

    def _word_starts(self) -> tuple[int, ...]:
        """Character offset of each word in the string of a one-column text (cached)."""
        starts = self._starts
        if starts is None:
            part = self._parts[0]
            found = []
            cursor = 0
            for gap, word in zip(part.gaps, part.words):
                cursor += len(gap)
                found.append(cursor)
                cursor += len(word)
            starts = tuple(found)
            _set(self, "_starts", starts)
        return starts

    def diff(self, other: Text) -> tuple[int, ...]:
        """Positions whose words differ between ``self`` and ``other`` (same length)."""
        if len(self) != len(other):
            raise ConfigError(
                f"diff needs texts with the same number of words. Got {len(self)} and {len(other)}."
            )
        return tuple(i for i, a, b in zip(itertools.count(), self._words, other._words) if a != b)

    def l0(self, other: Text) -> int:
        """The number of words that differ (Hamming distance over words)."""
        return len(self.diff(other))

    def _check_positions(self, positions: Iterable[int]) -> None:
        n = len(self)
        bad = [p for p in positions if not isinstance(p, int) or not 0 <= p < n]
        if bad:
            raise ConfigError(f"Word positions must be in [0, {n}). Got {bad} instead.")
