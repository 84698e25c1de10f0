"""How far a perturbed text is from its original: Eq. 5, Eq. 6 and grammar errors.

Ivankay et al. (../shared/papers/attribution-robustness-tea.txt), section 4.2:

- semantic distance (Eq. 5): ``d_s = 1 - (cos(E(s~), E(s)) + 1) / 2`` with a sentence
  encoder ``E``: MiniLM (``textrobust.similarity``, any sentence-transformers folder).
  The Universal Sentence Encoder is not available offline, so only the MiniLM column
  of the paper exists here;
- relative perplexity increase (Eq. 6): ``(PP(s~) - PP(s)) / (PP(s) + eps)`` under a
  causal LM: Gemma 3 270M (``textrobust.lm``, the optional ``lm`` extra) instead of the
  paper's GPT-2, which is not available offline. When Gemma is missing the distance is
  recorded as absent (None), never a crash. It is below 0 when the perturbed text reads
  more fluently than the original; it is then recorded as measured, but no k_PP is
  computed from it (:mod:`.robustness`: Eq. 2 divides by a distance);
- grammar errors: the increase in errors of :mod:`.grammar`'s checker (link-grammar's
  unlinked words instead of LanguageTool, which cannot run offline).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from textrobust.devices import Placement

__all__ = ["EPSILON", "TextDistances", "TextScores", "relative_perplexity", "semantic_distance"]

#: Eq. 6's small constant.
EPSILON = 1e-6


def semantic_distance(cosine: float) -> float:
    """Eq. 5: ``1 - (cos + 1) / 2``."""
    return 1.0 - (float(cosine) + 1.0) / 2.0


def relative_perplexity(before: float, after: float) -> float:
    """Eq. 6: ``(PP(s~) - PP(s)) / (PP(s) + eps)``."""
    return (float(after) - float(before)) / (float(before) + EPSILON)


@dataclass(frozen=True)
class TextScores:
    """Per text, aligned with the texts scored: similarity to the original (cosine),
    perplexity and grammar errors; None where the scorer is absent."""

    similarity: list[float | None]
    perplexity: list[float | None]
    grammar_errors: list[float | None]


class TextDistances:
    """Scores texts against an original with whichever scorers are present.

    ``encoder``: a :class:`~textrobust.similarity.EncoderCosine` (or anything with
    ``similarity(a, b)``); ``lm``: a :class:`~textrobust.lm.CausalLM` (``perplexity``);
    ``grammar``: an object with ``errors(texts)``. Any may be None (absent)."""

    def __init__(self, encoder: Any | None = None, lm: Any | None = None, grammar: Any | None = None,
                 absent: Sequence[str] = ()) -> None:
        self.encoder = encoder
        self.lm = lm
        self.grammar = grammar
        self.absent = tuple(absent)  # why a scorer is missing, for the report

    @classmethod
    def default(cls, *, semantic: bool = True, perplexity: bool = True, grammar: bool = True,
                placement: Placement | None = None) -> TextDistances:
        """MiniLM, Gemma and link-grammar, each when asked for and installed (the first two
        on ``placement``: the run's device and float type); a missing one is noted in
        ``absent`` instead of failing the run."""
        from textrobust.errors import TextRobustError

        absent: list[str] = []
        encoder = lm = checker = None
        if semantic:
            try:
                from textrobust.similarity import EncoderCosine

                encoder = EncoderCosine(placement=placement)
                encoder.similarity(["a test ."], ["a test ."])  # load now: fail here, not mid-run
            except (TextRobustError, ImportError, OSError) as error:
                absent.append(f"semantic similarity: {error}")
                encoder = None
        if perplexity:
            try:
                from textrobust.lm import CausalLM

                lm = CausalLM.default(placement=placement)
            except (TextRobustError, ImportError, OSError) as error:
                absent.append(f"perplexity (Gemma, the optional lm extra): {error}")
        if grammar:
            try:
                from textrobust.analyses.attribution.grammar import LinkGrammarErrors

                checker = LinkGrammarErrors()
            except (TextRobustError, ImportError, OSError) as error:
                absent.append(f"grammar errors (link-grammar): {error}")
        return cls(encoder, lm, checker, absent)

    def __repr__(self) -> str:
        return f"TextDistances(encoder={self.encoder!r}, lm={self.lm!r}, grammar={self.grammar!r})"

    def score(self, original: str, texts: Sequence[str]) -> tuple[TextScores, TextScores]:
        """Scores of ``original`` (similarity 1) and of each of ``texts``."""
        texts = list(texts)
        everything = [original, *texts]
        none: list[float | None] = [None] * len(everything)
        similarity = none
        if self.encoder is not None:
            similarity = [1.0, *(float(v) for v in self.encoder.similarity([original] * len(texts), texts))] \
                if texts else [1.0]
        perplexity = none if self.lm is None else [float(v) for v in self.lm.perplexity(everything)]
        errors = none if self.grammar is None else [float(v) for v in self.grammar.errors(everything)]
        first = TextScores([similarity[0]], [perplexity[0]], [errors[0]])
        rest = TextScores(list(similarity[1:]), list(perplexity[1:]), list(errors[1:]))
        return first, rest
