"""Word polarity from the VADER sentiment lexicon: the polarity guard of valid substitutions.

Hutto and Gilbert (2014), "VADER: A Parsimonious Rule-based Model for Sentiment Analysis of
Social Media Text", ICWSM. The lexicon (7,500 words and emoticons, each rated by ten people
on -4..+4, MIT licence) ships in the ``vaderSentiment`` wheel as ``vader_lexicon.txt``; it
is read as a file, the package's analyser is never imported. No other polarity lexicon
with strength ratings exists offline (``../shared/ASSETS.md``), so this one is read here.

A word's valence is its lexicon entry, else the entry of its lemma (lemminflect), else 0
(neutral): the lexicon lists mostly base forms ("tire" is absent, "tired" is there).
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from pathlib import Path

from textrobust.errors import DataError, MissingDependencyError

__all__ = ["PolarityLexicon", "vader_lexicon"]


class PolarityLexicon:
    """Valences of lower-case words on VADER's -4..+4 scale (0 = neutral or unknown)."""

    def __init__(self, valences: dict[str, float], *, name: str = "lexicon") -> None:
        self._valences = {word.lower(): float(value) for word, value in valences.items()}
        self.name = name

    def __len__(self) -> int:
        return len(self._valences)

    def __contains__(self, word: object) -> bool:
        return isinstance(word, str) and word.lower() in self._valences

    def valence(self, word: str, lemma: str | None = None) -> float:
        """``word``'s valence, else its ``lemma``'s, else 0.0."""
        found = self.lookup(word, lemma)
        return 0.0 if found is None else found

    def lookup(self, word: str, lemma: str | None = None) -> float | None:
        """``word``'s valence, else its ``lemma``'s, else None (not in the lexicon)."""
        key = word.lower()
        if key in self._valences:
            return self._valences[key]
        if lemma is not None:
            return self._valences.get(lemma.lower())
        return None

    def __repr__(self) -> str:
        return f"PolarityLexicon({self.name}, {len(self)} words)"


def read_vader(path: str | Path) -> dict[str, float]:
    """The ``word -> mean valence`` table of a ``vader_lexicon.txt`` file."""
    valences: dict[str, float] = {}
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        fields = line.split("\t")
        try:
            valences[fields[0]] = float(fields[1])
        except (IndexError, ValueError):
            raise DataError(f"{path}, line {number}: expected 'word<TAB>valence<TAB>...', got {line[:60]!r}.") from None
    return valences


@lru_cache(maxsize=1)
def vader_lexicon() -> PolarityLexicon:
    """The VADER lexicon from the installed ``vaderSentiment`` wheel (read once)."""
    try:
        root = resources.files("vaderSentiment")
    except ModuleNotFoundError:
        raise MissingDependencyError(
            "vaderSentiment", "The polarity guard of the validated synonym source", "pip install vadersentiment==3.3.2"
        ) from None
    return PolarityLexicon(read_vader(str(root.joinpath("vader_lexicon.txt"))), name="VADER 3.3.2")
