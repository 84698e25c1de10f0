"""Beam search over one-word edits (TextAttack's ``BeamSearch``).

Each step takes every one-word edit of every text in the beam (all allowed positions,
all accepted candidates), scores them all in one batch, stops at the first success, and
keeps the ``beam_width`` best (a success first, then the highest goal score) as the next
beam. With ``beam_width=1`` it is TextAttack's ``GreedySearch``: the best single edit
anywhere in the text, each step.

Departures from TextAttack: texts already seen in this search are not proposed again
(no cycles when the constraints allow changing a word back), and the depth is bounded by
``max_depth`` (default: the number of positions allowed on the start text), so the
search ends even without a no-repeat constraint.

Prefetch (issue 31): before expanding a step, the search hands every text of the beam,
with its allowed positions, to the candidate source's optional
``prefetch(items: Sequence[tuple[Text, Sequence[int]]]) -> None`` hook, so that a source
whose candidates come from a model (a fill-in) can compute them all in one call instead
of one per text; the expansions that follow then read them. A source without the hook is
asked text by text, as before. The hook changes no result beyond the source's own
batching noise (a fill-in's scores may move in the last float32 digits when its rows
share a padded batch with other texts' rows: benchmarks/results/fill_in_batching.md).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from textrobust.attack.problem import Problem
from textrobust.attack.searches.base import BaseSearch, Run
from textrobust.config import Config
from textrobust.text import Text

__all__ = ["BeamConfig", "BeamSearch"]


class BeamConfig(Config):
    """Settings of :class:`BeamSearch`: ``beam_width`` >= 1 texts kept per step;
    ``max_depth`` >= 1 steps at most (None: the number of allowed positions)."""

    beam_width: int = Field(8, ge=1)
    max_depth: int | None = Field(None, ge=1)


class BeamSearch(BaseSearch):
    """Beam search of width ``beam_width``; stops at the first success.

    >>> BeamSearch(beam_width=2)
    BeamSearch(beam_width=2, max_depth=None)
    """

    config_class = BeamConfig
    config: BeamConfig

    def _search(self, start: Text, problem: Problem, run: Run, prepared: Any) -> None:
        depth = self.config.max_depth or max(1, len(problem.positions(start)))
        beam = [start]
        seen = {start.key}
        prefetch = getattr(problem.source, "prefetch", None)
        for _ in range(depth):
            if callable(prefetch):
                prefetch([(text, problem.positions(text)) for text in beam])
            fresh: list[Text] = []
            for text in beam:
                for proposal in problem.neighbours(text):
                    if proposal.text.key not in seen:
                        seen.add(proposal.text.key)
                        fresh.append(proposal.text)
            if not fresh:
                return
            found = run.evaluate(fresh)
            run.iterations += 1
            if run.success:
                return
            order = sorted(range(len(fresh)), key=lambda i: (not found.success[i], -found.scores[i]))
            beam = [fresh[i] for i in order[: self.config.beam_width]]
            run.note("beam", float(found.scores[order[0]]))
