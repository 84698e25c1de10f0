"""Counting grammar errors offline, and choosing the checker on hand-made pairs.

Ivankay et al. (../shared/papers/attribution-robustness-tea.txt, section 4.2) count the
grammar errors LanguageTool finds before and after a perturbation. LanguageTool needs a
Java server that no registry here serves, so it is absent. The offline candidates:

- :class:`LinkGrammarErrors`: CMU Link Grammar (Debian ``python3-link-grammar`` and
  ``link-grammar-dictionaries-en``), the number of words it leaves unlinked (its null
  count): 0 for a sentence it parses, more for each word it cannot fit;
- :class:`PerplexityErrors`: 1 when the causal LM's perplexity of the sentence exceeds a
  threshold, else 0 (the threshold fitted on the pairs; needs the Gemma extra).

:func:`measure_checkers` scores each candidate on :data:`GRAMMAR_PAIRS`: pair accuracy
(the ungrammatical sentence gets more errors than its grammatical twin) and sentence
accuracy (a sentence is called ungrammatical when it has at least one error). The numbers
are in ``benchmarks/results/attribution.md``; link-grammar is the default.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from textrobust.analyses.attribution.grammar_pairs import GRAMMAR_PAIRS
from textrobust.errors import MissingDependencyError

__all__ = ["CheckerScore", "LinkGrammarErrors", "PerplexityErrors", "measure_checkers"]


class LinkGrammarErrors:
    """Grammar errors of a sentence = words Link Grammar leaves unlinked (null count).

    ``max_parse_time`` (seconds) bounds a long sentence's parse; sentences are cut into
    their sentence-final punctuation pieces and the counts summed."""

    def __init__(self, max_parse_time: int = 2) -> None:
        try:
            from linkgrammar import Dictionary, LG_Error, ParseOptions
        except ImportError:
            raise MissingDependencyError(
                "linkgrammar", "grammar errors",
                "apt-get install python3-link-grammar link-grammar-dictionaries-en, and make "
                "/usr/lib/python3/dist-packages/linkgrammar importable in the venv (a .pth file)",
            ) from None
        previous = LG_Error.set_handler(lambda error, data: None)  # no locale chatter on stderr
        try:
            self._dictionary = Dictionary("en")
        finally:
            LG_Error.set_handler(previous)
        self._options = ParseOptions(min_null_count=0, max_null_count=999)
        self._options.max_parse_time = max_parse_time
        self._cache: dict[str, int] = {}
        self.max_parse_time = max_parse_time

    def __repr__(self) -> str:
        return f"LinkGrammarErrors(max_parse_time={self.max_parse_time})"

    def errors(self, texts: Sequence[str]) -> np.ndarray:
        """The number of unlinked words of each text."""
        from linkgrammar import Sentence

        out = np.zeros(len(texts), dtype=np.float64)
        for i, text in enumerate(texts):
            if text not in self._cache:
                total = 0
                for piece in _sentences(text):
                    sentence = Sentence(piece, self._dictionary, self._options)
                    sentence.parse()
                    total += int(sentence.null_count())
                self._cache[text] = total
            out[i] = self._cache[text]
        return out


class PerplexityErrors:
    """1 error when ``lm.perplexity(text) > threshold``, else 0 (a fluency proxy)."""

    def __init__(self, lm: Any, threshold: float) -> None:
        self.lm = lm
        self.threshold = float(threshold)

    def __repr__(self) -> str:
        return f"PerplexityErrors(threshold={self.threshold:.1f})"

    def errors(self, texts: Sequence[str]) -> np.ndarray:
        return (np.asarray(self.lm.perplexity(list(texts)), dtype=np.float64) > self.threshold).astype(np.float64)


def _sentences(text: str) -> list[str]:
    import re

    pieces = [p.strip() for p in re.split(r"(?<=[.!?])\s+", text) if p.strip()]
    return pieces or [text]


@dataclass(frozen=True)
class CheckerScore:
    """How well a checker separates :data:`GRAMMAR_PAIRS`."""

    checker: str
    pairs: int
    pair_accuracy: float  # share of pairs where the ungrammatical one has more errors
    sentence_accuracy: float  # share of sentences classified right (errors > 0: ungrammatical)


def score_checker(name: str, errors: Any, pairs: Sequence[tuple[str, str]] = GRAMMAR_PAIRS) -> CheckerScore:
    """The :class:`CheckerScore` of ``errors(texts) -> counts`` on ``pairs``."""
    good = np.asarray(errors([g for g, _ in pairs]), dtype=np.float64)
    bad = np.asarray(errors([b for _, b in pairs]), dtype=np.float64)
    pair_accuracy = float(np.mean(bad > good))
    sentence_accuracy = float((np.sum(good == 0) + np.sum(bad > 0)) / (2 * len(pairs)))
    return CheckerScore(name, len(pairs), pair_accuracy, sentence_accuracy)


def measure_checkers(lm: Any | None = None) -> list[CheckerScore]:
    """Scores of the offline candidates on :data:`GRAMMAR_PAIRS` (the perplexity checker
    only when ``lm`` is given: its threshold is the one that best separates the pairs'
    sentences, so its sentence accuracy is optimistic, fitted on the same data)."""
    scores = [score_checker("link-grammar null count", LinkGrammarErrors().errors)]
    if lm is not None:
        good = np.asarray(lm.perplexity([g for g, _ in GRAMMAR_PAIRS]), dtype=np.float64)
        bad = np.asarray(lm.perplexity([b for _, b in GRAMMAR_PAIRS]), dtype=np.float64)
        values = np.concatenate([good, bad])
        best = max(values, key=lambda t: (np.sum(good <= t) + np.sum(bad > t)))
        pair = float(np.mean(bad > good))
        sentence = float((np.sum(good <= best) + np.sum(bad > best)) / values.size)
        scores.append(CheckerScore(f"Gemma perplexity > {best:.0f}", len(GRAMMAR_PAIRS), pair, sentence))
    return scores
