"""The candidate sets S(X, p) of the radius analysis: synonyms cleaned by embedding cosine.

Yang et al. (2022), "Quantifying Robustness to Adversarial Word Substitutions"
(../shared/papers/robustness-radius-pdp-prover-pr.txt), Experiments, Settings: "we
generate S(X, p) via cleaning the synonyms obtained by HowNet with cosine similarity of
word embeddings. We reserve top eta (eta = 5) synonyms as candidates for each position."

Departures, all forced or stated:

- **HowNet is not available offline** (no package on PyPI or Debian carries it), so the
  synonyms come from WordNet (:class:`~textrobust.attack.candidates.WordNetSynonyms`:
  POS-aware through spaCy, inflected back to the word's form). Any other
  :class:`~textrobust.attack.problem.CandidateSource` can be passed as ``base``.
- The embedding is counter-fitted GloVe 50d (:func:`~textrobust.embeddings.
  counterfitted_vectors`), the project's own build; the paper does not name its vectors.
- ``min_cos`` (default 0.5) drops synonyms whose cosine to the word is below it before the
  top ``eta`` are kept; the paper ranks without a floor, but WordNet's rare senses
  ("moves" -> "displaces", cosine -0.14) are far noisier than HowNet's sememe
  substitutes. ``min_cos=None`` ranks without a floor. Synonyms outside the vectors'
  vocabulary cannot be ranked and are dropped.
- ``skip_stop_words`` (default True) gives stop words (the project's list) no candidates,
  as the engine's baselines (TextFooler, PSO recipes) do.

Registered as ``wordnet_cosine``. Its sibling :class:`~textrobust.attack.candidates.checked.
CheckedSynonyms` (``checked``, the second-order patch pairs) also filters WordNet by
counter-fitted cosine, but is a different rule, kept apart so that each paper's numbers stay
reproducible: this one reproduces a paper's recipe (every WordNet sense, any ``base``
source, a 0.5 floor, top ``eta = 5``, stop words skipped), while ``checked`` keeps only a
word's 2 most frequent senses and common words (Zipf >= 3) at cosine >= 0.6, a rule
calibrated on the labelled synonym pairs, and offers context-free pair checks and tables.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from pydantic import Field

from textrobust.attack.problem import CandidateSource, Substitution
from textrobust.config import Config
from textrobust.text import Text

__all__ = ["CleanedSynonyms", "CleanedSynonymsConfig"]


class CleanedSynonymsConfig(Config):
    """Settings of :class:`CleanedSynonyms`."""

    eta: int = Field(default=5, ge=1)
    min_cos: float | None = Field(default=0.5, ge=-1.0, le=1.0)
    skip_stop_words: bool = True


class CleanedSynonyms:
    """Synonyms from ``base`` (default WordNet), ranked by cosine to the original word in
    ``vectors`` (default counter-fitted GloVe), at most ``eta`` per position, best first;
    each :class:`~textrobust.attack.problem.Substitution` carries its cosine as score.

    When None, ``base`` is a default :class:`~textrobust.attack.candidates.WordNetSynonyms`
    (WordNet and spaCy load on first use); ``vectors`` and ``stop_words`` load on first use.
    """

    def __init__(
        self,
        base: CandidateSource | None = None,
        vectors: Any | None = None,
        *,
        eta: int = 5,
        min_cos: float | None = 0.5,
        skip_stop_words: bool = True,
        stop_words: Collection[str] | None = None,
    ) -> None:
        self.config = CleanedSynonymsConfig(eta=eta, min_cos=min_cos, skip_stop_words=skip_stop_words)
        if base is None:  # cheap: WordNet and spaCy load on first use
            from textrobust.attack.candidates.wordnet import WordNetSynonyms

            base = WordNetSynonyms()
        self._base: CandidateSource = base
        self._vectors = vectors
        self._stop = None if stop_words is None else frozenset(w.lower() for w in stop_words)

    @property
    def base(self) -> CandidateSource:
        return self._base

    @property
    def vectors(self) -> Any:
        if self._vectors is None:
            from textrobust.embeddings import counterfitted_vectors

            self._vectors = counterfitted_vectors()
        return self._vectors

    @property
    def stop_words(self) -> frozenset[str]:
        if self._stop is None:
            from textrobust.assets import stop_words

            self._stop = frozenset(w.lower() for w in stop_words())
        return self._stop

    def candidates(self, text: Text, positions: Sequence[int]) -> dict[int, list[Substitution]]:
        words = text.words
        positions = list(positions)
        if self.config.skip_stop_words:
            stop = self.stop_words
            positions = [p for p in positions if words[p].lower() not in stop]
        if not positions:
            return {}
        found = self.base.candidates(text, positions)
        pairs = [(words[p].lower(), s.word.lower()) for p in positions for s in found.get(p, ())]
        cosines = iter(self.vectors.cosines(pairs).tolist()) if pairs else iter(())
        floor = self.config.min_cos
        out: dict[int, list[Substitution]] = {}
        for p in positions:
            scored: list[tuple[float, int, str]] = []
            seen = {words[p]}
            for rank, sub in enumerate(found.get(p, ())):
                cos = next(cosines)
                if cos != cos or sub.word in seen:  # nan: a word outside the vocabulary
                    continue
                if floor is not None and cos < floor:
                    continue
                seen.add(sub.word)
                scored.append((-cos, rank, sub.word))
            scored.sort()
            kept = [Substitution(p, w, -c) for c, _, w in scored[: self.config.eta]]
            if kept:
                out[p] = kept
        return out

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in self.config.to_dict().items())
        # the repr must not change once resources load: run stores compare it on resume
        return f"CleanedSynonyms(base={self._base!r}, {shown})"
