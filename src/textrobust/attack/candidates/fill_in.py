"""The language-model fill-in interface, and its adapter to a candidate source.

A :class:`FillIn` proposes words for a position of a text from its context (a masked LM,
or a causal LM that proposes and rescores); issue 4 implements them. It is batched over
many (text, position) requests at once, possibly from many texts, so that one forward
pass serves a whole neighbourhood. :class:`FillInSource` turns any FillIn into a
:class:`~textrobust.attack.problem.CandidateSource`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from textrobust.attack.candidates.inflection import is_word, match_case
from textrobust.attack.problem import Substitution
from textrobust.errors import ConfigError
from textrobust.text import Text

__all__ = ["FillIn", "FillInSource"]


@runtime_checkable
class FillIn(Protocol):
    """Words that fit position ``i`` of a text, best first, with a score (higher = better).

    ``fill(requests, k)`` returns one list per request, in order, of at most ``k``
    ``(word, score)`` pairs. Words are whole words (an implementation over sub-word
    tokens joins or drops pieces itself); they may include the original word.
    """

    def fill(self, requests: Sequence[tuple[Text, int]], k: int) -> list[list[tuple[str, float]]]: ...


class FillInSource:
    """A candidate source from a :class:`FillIn`: its top ``k`` words for each position.

    Proposals that are not one word, or equal the original word up to case, are dropped
    (so a position may get fewer than ``k``); with ``keep_case`` a proposal takes the
    original word's case style. Scores are the fill-in's.
    """

    def __init__(self, fill_in: FillIn, k: int = 20, *, keep_case: bool = True) -> None:
        if not isinstance(k, int) or k < 1:
            raise ConfigError(f"The 'k' parameter of FillInSource must be an int >= 1. Got {k!r} instead.")
        if not callable(getattr(fill_in, "fill", None)):
            raise ConfigError(
                f"The 'fill_in' parameter of FillInSource must have a fill(requests, k) method. "
                f"Got {type(fill_in).__name__}."
            )
        self.fill_in = fill_in
        self.k = k
        self.keep_case = keep_case

    def candidates(self, text: Text, positions: Sequence[int]) -> dict[int, list[Substitution]]:
        return self.candidates_many([(text, positions)])[0]

    def candidates_many(
        self, items: Sequence[tuple[Text, Sequence[int]]]
    ) -> list[dict[int, list[Substitution]]]:
        """Candidates for many texts with one call to the fill-in."""
        requests = [(text, p) for text, positions in items for p in dict.fromkeys(positions)]
        answers = self.fill_in.fill(requests, self.k) if requests else []
        if len(answers) != len(requests):
            raise ConfigError(
                f"The fill-in {type(self.fill_in).__name__} returned {len(answers)} answers for "
                f"{len(requests)} requests; it must return one list per request."
            )
        out: list[dict[int, list[Substitution]]] = [{} for _ in items]
        cursor = 0
        for i, (text, positions) in enumerate(items):
            for position in dict.fromkeys(positions):
                out[i][position] = self._substitutions(text, position, answers[cursor])
                cursor += 1
        return out

    def _substitutions(self, text: Text, position: int, answer: Sequence[tuple[str, float]]) -> list[Substitution]:
        original = text.words[position]
        subs: list[Substitution] = []
        seen = {original}
        for word, score in answer[: self.k]:
            if not isinstance(word, str) or not is_word(word):
                continue
            word = match_case(original, word) if self.keep_case else word
            if word.lower() == original.lower() or word in seen:
                continue
            seen.add(word)
            subs.append(Substitution(position, word, float(score)))
        return subs

    def __repr__(self) -> str:
        return f"FillInSource({self.fill_in!r}, k={self.k}, keep_case={self.keep_case})"
