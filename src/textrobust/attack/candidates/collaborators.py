"""The models and the verdict cache both validated sources load on first use (issue 39's ``ValidatedSynonyms`` and
issue 46's ``PeopleSubstitutes``): counter-fitted vectors, the MiniLM fill-in, VADER's
polarity lexicon and the target-visible scorer over the fill-in.

A source that mixes in :class:`LazyModels` sets ``_vectors``, ``_fill_in``, ``_polarity``,
``_scorer`` (None: load the default on first use; anything else: injected, e.g. by a test),
``placement`` (where the MiniLM loads), ``_verdicts`` / ``_verdict_path`` (the verdict cache,
None when off) and a ``fingerprint()`` method (what every verdict depends on). Nothing loads at
import or construction.
"""

from __future__ import annotations

from typing import Any

from pathlib import Path

from textrobust.attack.candidates.polarity import PolarityLexicon
from textrobust.devices import Placement
from textrobust.validity.cache import VerdictCache

__all__ = ["LazyModels"]


class LazyModels:
    """Properties that load each default model once, on first use."""

    _vectors: Any
    _fill_in: Any
    _polarity: PolarityLexicon | None
    _scorer: Any
    placement: Placement | None
    _verdicts: VerdictCache | None
    _verdict_path: Path | None

    def fingerprint(self) -> str:
        raise NotImplementedError  # each source says what its verdicts depend on

    @property
    def vectors(self) -> Any:
        """Counter-fitted word vectors (:func:`textrobust.embeddings.counterfitted_vectors`)."""
        if self._vectors is None:
            from textrobust.embeddings import counterfitted_vectors

            self._vectors = counterfitted_vectors()
        return self._vectors

    @property
    def fill_in(self) -> Any:
        """The MiniLM fill-in with the project's trained head (``minilm_tuned``)."""
        if self._fill_in is None:
            from textrobust.fill_in.registry import load_fill_in

            self._fill_in = load_fill_in("minilm_tuned", placement=self.placement)
        return self._fill_in

    @property
    def polarity(self) -> PolarityLexicon:
        """VADER's word valences (:func:`textrobust.attack.candidates.polarity.vader_lexicon`)."""
        if self._polarity is None:
            from textrobust.attack.candidates.polarity import vader_lexicon

            self._polarity = vader_lexicon()
        return self._polarity

    @property
    def scorer(self) -> Any:
        """The target-visible scorer (on the masked LM, :attr:`fill_in`)."""
        if self._scorer is None:
            from textrobust.attack.candidates.contextual import VisibleScorer

            self._scorer = VisibleScorer(self.fill_in)
        return self._scorer

    @property
    def verdicts(self) -> VerdictCache | None:
        """The on-disk verdict cache (None when off), keyed by :meth:`fingerprint`."""
        if self._verdicts is None and self._verdict_path is not None:
            self._verdicts = VerdictCache(self._verdict_path, self.fingerprint())
        return self._verdicts
