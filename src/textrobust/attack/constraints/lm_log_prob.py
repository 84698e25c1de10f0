"""Candidate constraint: the new word must not make the text much less likely under a causal LM."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from pydantic import Field

from textrobust.attack.constraints.base import Configured, parse_enum
from textrobust.attack.constraints.context import CompareTo, window_pairs
from textrobust.attack.problem import Proposal
from textrobust.config import Config
from textrobust.devices import Placement
from textrobust.text import Text

__all__ = ["LMLogProbDrop", "LMLogProbDropConfig"]


class LMLogProbDropConfig(Config):
    max_drop: float = Field(default=2.0, ge=0.0)
    window: int | None = Field(default=5, ge=1)
    compare_to: CompareTo = CompareTo.ORIGINAL


class LMLogProbDrop(Configured[LMLogProbDropConfig]):
    """Reject a proposal when ``log P(reference window) - log P(proposal window) > max_drop``
    (natural log) under a causal LM.

    The window is the change and ``window`` words each side (None: the whole column), cut
    from the reference text and from the proposal at the same word range, so both hold the
    same context and differ only in the changed word (and, with ``compare_to="original"``,
    in earlier changes inside the window). Scoring the whole window rather than the word's
    first token handles words of several tokens and also charges a word for how badly the
    words after it then fit. TextAttack's ``GPT2`` / ``LearningToWriteLanguageModel``
    constraints compare the word's probability given the words before it; Kuleshov et al.
    (2018) use ``max_log_prob_diff=2.0``, the default here. Measured with Gemma 3 270M,
    window 5, in "I watched the film last night and loved every minute of it.": film->movie
    -0.96, night->week 0.84, loved->enjoyed 0.88 (kept); loved->hated 4.3, night->evening
    4.8, loved->adored 7.0, film->picture 10.1, film->banana 15.8 (rejected). Whole-window
    scores are strict: an unusual but valid word also pays for its right context.

    ``lm``: a :class:`textrobust.lm.CausalLM` (None: Gemma 3 270M, loaded on first use on
    ``placement``, the run's device and float type; None: the CPU in float32).
    All windows of a batch go through the LM together, padded, and it caches each window
    string, so a reference window is scored once for all proposals at that position.
    """

    def __init__(
        self,
        lm: Any | None = None,
        *,
        max_drop: float = 2.0,
        window: int | None = 5,
        compare_to: CompareTo | str = CompareTo.ORIGINAL,
        placement: Placement | None = None,
    ) -> None:
        self.config = LMLogProbDropConfig(
            max_drop=max_drop,
            window=window,
            compare_to=parse_enum(CompareTo, compare_to, "compare_to", "LMLogProbDrop"),
        )
        self._lm = lm
        self._placement = placement

    def _collaborators(self) -> dict[str, Any]:
        return {"lm": self._lm}

    @property
    def lm(self) -> Any:
        if self._lm is None:
            from textrobust.lm import CausalLM

            self._lm = CausalLM.default(placement=self._placement)
        return self._lm

    def drops(self, original: Text, proposals: Sequence[Proposal]) -> np.ndarray:
        """Per proposal, ``log P(reference window) - log P(proposal window)`` (positive: worse)."""
        if not proposals:
            return np.zeros(0, dtype=np.float64)
        refs, news = window_pairs(original, proposals, self.config.compare_to, self.config.window, "LMLogProbDrop")
        unique = list(dict.fromkeys(refs + news))
        scores = dict(zip(unique, self.lm.sentence_log_prob(unique).tolist()))
        return np.array([scores[r] - scores[n] for r, n in zip(refs, news)], dtype=np.float64)

    def check(self, original: Text, proposals: Sequence[Proposal]) -> np.ndarray:
        return self.drops(original, proposals) <= self.config.max_drop
