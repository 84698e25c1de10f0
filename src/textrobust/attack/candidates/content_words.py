"""A candidate filter: no stop word as a substitute, at most ``k`` per position."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from textrobust.attack.problem import CandidateSource, Substitution
from textrobust.errors import ConfigError
from textrobust.text import Text

__all__ = ["ContentWords"]


class ContentWords:
    """``source``'s candidates that are not stop words, the first ``k`` per position.

    Written for the attribution analysis's TEA and TEF (Ivankay et al. 2022), a departure
    from the paper, which takes DistilBERT's top 15 as they come: the project's fast
    fill-in over-proposes frequent function words ("is", "and", "their"; see
    benchmarks/results/fill_in.md), which turns "hopeless sentimentality" into "their it".
    The analysis asks its source for ``3 k`` words and keeps the first ``k`` content words.
    Stop words are matched lower-cased; ``stop_words`` None is the project's list
    (:func:`textrobust.assets.stop_words`, loaded here).

    Not :class:`~textrobust.attack.candidates.choice.ContentPositions`, which gives stop
    *words of the text* no candidates; this one drops stop words *proposed* as substitutes.
    """

    def __init__(self, source: CandidateSource, k: int, stop_words: Collection[str] | None = None) -> None:
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ConfigError(f"The 'k' parameter of ContentWords must be an int >= 1. Got {k!r} instead.")
        if stop_words is None:
            from textrobust.assets import stop_words as project_stop_words

            stop_words = project_stop_words()
        self.source = source
        self.k = k
        self.stop_words = frozenset(w.lower() for w in stop_words)

    def __repr__(self) -> str:
        return f"ContentWords({self.source!r}, k={self.k})"

    def candidates(self, text: Text, positions: Sequence[int]) -> dict[int, list[Substitution]]:
        found = self.source.candidates(text, positions)
        return {p: [s for s in subs if s.word.lower() not in self.stop_words][: self.k] for p, subs in found.items()}
