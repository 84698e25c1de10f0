"""Contract checks and test doubles for candidate sources.

:func:`check_candidate_source` runs a source through the contract every search relies on;
the test suite runs it over every entry of
:data:`~textrobust.attack.candidates.CANDIDATE_SOURCES`, and a new source should pass it
before it is registered. :class:`StaticCandidates` and :class:`FunctionFillIn` are small
doubles with known answers for tests of searches and fill-in code.

Checks raise :class:`AssertionError` with a message saying what broke (explicit raises,
not ``assert`` statements, so they also run under ``python -O``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

from textrobust.attack.problem import CandidateSource, Substitution
from textrobust.errors import ConfigError
from textrobust.text import WORD_PATTERN, Text

__all__ = ["FunctionFillIn", "StaticCandidates", "check_candidate_source"]


def _fail(source: object, text: Text, message: str) -> None:
    raise AssertionError(f"{type(source).__name__} on {text!r}: {message}")


def _as_tuple(found: Mapping[int, Sequence[Substitution]]) -> dict[int, tuple[tuple[int, str, float], ...]]:
    return {p: tuple((s.position, s.word, s.score) for s in subs) for p, subs in found.items()}


def check_candidate_source(
    source: CandidateSource, texts: Sequence[Text | str], *, min_candidates: int = 0
) -> int:
    """Check ``source`` against the candidate-source contract on ``texts``.

    For each text, with every position requested at once and then one at a time:

    * it has a ``candidates`` method and returns a dict whose keys are requested positions
      only, each mapping to a list of :class:`Substitution`;
    * every substitution has the key's position, a finite float score and a word that
      :meth:`Text.replace` accepts, never the word already there, no duplicates;
    * answers are deterministic (asked twice, equal) and do not depend on which other
      positions were asked with it;
    * asking for no position gives an empty answer;
    * frozen positions still get answers, the same ones (constraints enforce freezing,
      and :class:`~textrobust.attack.problem.Problem` never asks for them);
    * a source that also offers the ``word_candidates`` fast path gives there exactly the
      ``(word, score)`` pairs of ``candidates``, in the same order.

    Returns the total number of candidates over all texts (all positions) and raises
    :class:`AssertionError` if it is below ``min_candidates``, so a test can also check
    that the source is not trivially empty.
    """
    if not isinstance(source, CandidateSource):
        raise AssertionError(  # noqa: TRY004 - a failed contract check, like the others
            f"{type(source).__name__} has no candidates(text, positions) method."
        )
    total = 0
    for item in texts:
        text = Text.from_string(item) if isinstance(item, str) else item
        positions = list(range(len(text)))
        empty = source.candidates(text, [])
        if not isinstance(empty, dict) or any(empty.values()):
            _fail(source, text, f"asked for no position, it returned {empty!r} instead of an empty dict.")
        first = source.candidates(text, positions)
        if not isinstance(first, dict):
            _fail(source, text, f"returned {type(first).__name__}, not a dict.")
        extra = set(first) - set(positions)
        if extra:
            _fail(source, text, f"returned positions {sorted(extra)} that were not requested.")
        for position, subs in first.items():
            if not isinstance(subs, list):
                _fail(source, text, f"position {position} maps to {type(subs).__name__}, not a list.")
            words: set[str] = set()
            for sub in subs:
                if not isinstance(sub, Substitution):
                    _fail(source, text, f"position {position} holds {sub!r}, not a Substitution.")
                if sub.position != position:
                    _fail(source, text, f"{sub!r} is listed under position {position}.")
                if not isinstance(sub.word, str) or WORD_PATTERN.fullmatch(sub.word) is None:
                    _fail(source, text, f"{sub!r} is not one word for Text.replace.")
                if sub.word == text.words[position]:
                    _fail(source, text, f"{sub!r} proposes the word already at position {position}.")
                if sub.word in words:
                    _fail(source, text, f"{sub.word!r} is proposed twice at position {position}.")
                if not isinstance(sub.score, (int, float)) or not math.isfinite(sub.score):
                    _fail(source, text, f"{sub!r} has a score that is not a finite number.")
                words.add(sub.word)
                try:
                    text.replace(position, sub.word)
                except ConfigError as exc:
                    _fail(source, text, f"Text.replace rejects {sub!r}: {exc}")
            total += len(subs)
        expected = _as_tuple(first)
        fast = getattr(source, "word_candidates", None)
        if fast is not None:
            pairs = {p: tuple(tuple(pair) for pair in found) for p, found in fast(text, positions).items()}
            if pairs != {p: tuple((s.word, s.score) for s in subs) for p, subs in first.items()}:
                _fail(source, text, "word_candidates (the fast path) differs from candidates.")
        if _as_tuple(source.candidates(text, positions)) != expected:
            _fail(source, text, "asked twice for the same positions, it answered differently.")
        for position in reversed(positions):
            alone = _as_tuple(source.candidates(text, [position]))
            if set(alone) - {position}:
                _fail(source, text, f"asked for position {position} alone, it returned {sorted(alone)}.")
            if alone.get(position, ()) != expected.get(position, ()):
                _fail(source, text, f"position {position} asked alone got a different answer than with the others.")
        if positions:
            frozen = _as_tuple(source.candidates(text.freeze(positions), positions))
            if {p: v for p, v in frozen.items() if v} != {p: v for p, v in expected.items() if v}:
                _fail(source, text, "frozen positions got different answers (sources ignore freezing; "
                      "constraints enforce it).")
    if total < min_candidates:
        raise AssertionError(
            f"{type(source).__name__} proposed {total} candidates over {len(texts)} texts; "
            f"at least {min_candidates} were expected."
        )
    return total


class StaticCandidates:
    """A candidate source from a fixed table ``{word: [substitute, ...]}`` (lookups by the
    lower-cased word; substitutes are returned as written, score ``1 / (1 + rank)``)."""

    def __init__(self, table: Mapping[str, Sequence[str]]) -> None:
        self.table = {k.lower(): tuple(v) for k, v in table.items()}

    def candidates(self, text: Text, positions: Sequence[int]) -> dict[int, list[Substitution]]:
        out: dict[int, list[Substitution]] = {}
        for position in positions:
            word = text.words[position]
            words = [w for w in dict.fromkeys(self.table.get(word.lower(), ())) if w != word]
            out[position] = [Substitution(position, w, 1.0 / (1 + r)) for r, w in enumerate(words)]
        return out

    def __repr__(self) -> str:
        return f"StaticCandidates({len(self.table)} words)"


class FunctionFillIn:
    """A :class:`~textrobust.attack.candidates.FillIn` from a function ``(text, position) ->
    [(word, score), ...]``; records every batch it is asked (``calls``)."""

    def __init__(self, fn: Callable[[Text, int], Sequence[tuple[str, float]]]) -> None:
        self.fn = fn
        self.calls: list[list[tuple[Text, int]]] = []

    def fill(self, requests: Sequence[tuple[Text, int]], k: int) -> list[list[tuple[str, float]]]:
        self.calls.append(list(requests))
        return [list(self.fn(text, position))[:k] for text, position in requests]

    def __repr__(self) -> str:
        return f"FunctionFillIn({getattr(self.fn, '__name__', 'fn')})"
