"""Greedy search with word-importance ranking (TextFooler, PWWS, TextAttack's
``GreedyWordSwapWIR``).

Positions are ranked once, on the start text (only positions that have at least one
accepted candidate there are ranked, as TextAttack does). Then, for each position in
that order, all its candidates are scored in one batch; the best one is kept if it meets
the goal or raises the score; the search stops at the first success.

Departure: PWWS weighs the ranking by the best candidate's effect (weighted saliency);
here the ranking and the choice of word are separate, as in TextFooler. TextAttack's
plain ``GreedySearch`` (all positions each step) is :class:`~textrobust.attack.searches.
beam.BeamSearch` with ``beam_width=1``.
"""

from __future__ import annotations

from typing import Any

from pydantic import field_validator

from textrobust.attack.problem import Problem
from textrobust.attack.searches.base import BaseSearch, Run, best_index, seeded_rng
from textrobust.attack.searches.ranking import (
    QUERY_FREE,
    Ranking,
    WordImportance,
    rank_positions,
)
from textrobust.config import Config
from textrobust.text import WORD_PATTERN, Text

__all__ = ["GreedyConfig", "GreedySearch"]


class GreedyConfig(Config):
    """Settings of :class:`GreedySearch`.

    ``ranking``: delete | unk | gradient | random; ``unk_token``: the word put in place of
    each word by the ``unk`` ranking; ``seed``: for the ``random`` ranking.
    """

    ranking: Ranking = Ranking.DELETE
    unk_token: str = "unk"
    seed: int = 0

    @field_validator("unk_token")
    @classmethod
    def _one_word(cls, value: str) -> str:
        if WORD_PATTERN.fullmatch(value) is None:
            raise ValueError("must be one word (letters/digits, inner ' or -)")
        return value


class GreedySearch(BaseSearch):
    """Greedy word substitution in order of word importance.

    >>> GreedySearch(ranking="unk")
    GreedySearch(ranking='unk', unk_token='unk', seed=0)
    """

    config_class = GreedyConfig
    config: GreedyConfig

    def _prepare(self, start: Text, problem: Problem) -> Any:
        if self.config.ranking not in QUERY_FREE:
            return None
        return self._rank(start, problem, None)  # fail fast (gradients) before any query

    def _search(self, start: Text, problem: Problem, run: Run, prepared: Any) -> None:
        # Positions are ranked by the source's raw candidates; the (possibly expensive)
        # candidate constraints run lazily, one position at a time, so an early success
        # never pays for filtering the candidates of positions it does not reach.
        ranking = self._rank(start, problem, run) if prepared is None else prepared
        run.note("ranked", len(ranking.positions))
        current, score = start, run.score
        for position in ranking.positions:
            proposals = problem.neighbours(current, [position])
            if not proposals:
                continue
            found = run.evaluate([p.text for p in proposals])
            run.iterations += 1
            i = best_index(found.success, found.scores)
            if found.success[i]:
                return
            if found.scores[i] > score:
                current, score = proposals[i].text, float(found.scores[i])
                run.note("kept", score)

    def _rank(self, start: Text, problem: Problem, run: Run | None) -> WordImportance:
        return rank_positions(
            start,
            problem,
            list(problem.candidate_positions(start)),
            self.config.ranking,
            unk_token=self.config.unk_token,
            rng=seeded_rng(self.config.seed, start) if self.config.ranking is Ranking.RANDOM else None,
            evaluate=None if run is None else (lambda texts: run.evaluate(texts, track=False)),
        )
