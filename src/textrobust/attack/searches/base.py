"""What every search shares: the best-so-far record, budget handling, the one public verb.

A search subclasses :class:`BaseSearch`, declares its settings as a frozen
:class:`~textrobust.config.Config` (``config_class``) and fills one private hook,
``_search(start, problem, run)``. The public :meth:`BaseSearch.search` evaluates the start
text (returning at once if it already meets the goal), runs the hook, and turns a
:class:`~textrobust.errors.QueryBudgetExceeded` raised by the query layer into an outcome
with ``budget_exhausted=True`` and the best text found so far. Searches never count
queries themselves: the query layer does.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from textrobust.attack.problem import Evaluation, Problem, Proposal, SearchOutcome
from textrobust.config import Config
from textrobust.errors import ConfigError, QueryBudgetExceeded
from textrobust.text import Text

__all__ = ["BaseSearch", "Run", "admissible", "best_index", "best_of", "seeded_rng"]


def best_index(success: np.ndarray, scores: np.ndarray) -> int:
    """The index of the best text of a batch: a success before a failure, then the highest
    score; ties go to the first (so results do not depend on hash order)."""
    success = np.asarray(success, dtype=bool)
    scores = np.asarray(scores, dtype=np.float64)
    pool = np.flatnonzero(success) if success.any() else np.arange(len(scores))
    return int(pool[np.argmax(scores[pool])])


def best_of(success: Sequence[bool], scores: Sequence[float]) -> int:
    """:func:`best_index` on plain lists, without NumPy's per-call cost (a search that
    picks the best of many small groups, e.g. one per population member, calls it once
    per group). Same answer, ties and NaN included (tested against it)."""
    pool = [i for i, ok in enumerate(success) if ok] or range(len(scores))
    best = -1
    top = 0.0
    for i in pool:
        value = scores[i]
        if value != value:  # NaN: np.argmax returns the first NaN
            return i
        if best < 0 or value > top:
            best, top = i, value
    return best


def seeded_rng(seed: int, start: Text) -> np.random.Generator:
    """A generator seeded by ``seed`` and the start text (a stable CRC, not ``hash``), so a
    search is reproducible and each example still gets its own stream."""
    tag = zlib.crc32("\x1f".join(start.key).encode("utf-8"))
    return np.random.default_rng([int(seed) & 0xFFFFFFFF, tag])


class Run:
    """The state of one search call: the best text evaluated so far and a few counters.

    :meth:`evaluate` is the only way a search scores texts: it drops duplicates before
    asking the problem (one ``problem.evaluate`` call per batch), records the best
    candidate, and when the budget refuses a batch it spends what is left of the budget
    on a prefix of the batch before letting the refusal end the search.
    """

    def __init__(self, start: Text, problem: Problem) -> None:
        self.start = start
        self.problem = problem
        self.best = start
        self.score = math.nan  # nan: the start text could not be evaluated
        self.success = False
        self.iterations = 0
        self.exhausted = False
        self.trace: list[tuple[str, float]] = []
        self._neighbours: dict[tuple[tuple[str, ...], int], list[Proposal]] = {}

    def evaluate(self, texts: Sequence[Text], *, track: bool = True) -> Evaluation:
        """The goal's verdict on ``texts`` (aligned with them). ``track=False`` for texts
        that are not candidate answers (leave-one-out ranking texts)."""
        texts = list(texts)
        keys = [t.key for t in texts]  # rendering a key is the costly part: once per text
        unique: dict[tuple[str, ...], int] = {}
        distinct: list[Text] = []
        for text, key in zip(texts, keys):
            if key not in unique:
                unique[key] = len(distinct)
                distinct.append(text)
        try:
            found = self.problem.evaluate(distinct)
        except QueryBudgetExceeded as refused:
            # a text costs the goal's queries_per_text (a second-order text: 2), so a prefix
            # of room // cost texts fits the budget that is left
            cost = max(int(getattr(self.problem.goal, "queries_per_text", 1)), 1)
            room = (refused.budget - refused.used) // cost
            if track and 0 < room < len(distinct):
                part = distinct[:room]
                partial = self.problem.evaluate(part)
                if track:
                    self._offer(part, partial)
            raise
        if len(distinct) == len(texts):  # no duplicate: already aligned
            evaluation = Evaluation(
                np.asarray(found.scores, dtype=np.float64),
                np.asarray(found.success, dtype=bool),
                None if found.outputs is None else np.asarray(found.outputs),
            )
        else:
            index = np.fromiter((unique[k] for k in keys), dtype=np.int64, count=len(texts))
            evaluation = Evaluation(
                np.asarray(found.scores, dtype=np.float64)[index],
                np.asarray(found.success, dtype=bool)[index],
                None if found.outputs is None else np.asarray(found.outputs)[index],
            )
        if track:
            self._offer(distinct, found)
        return evaluation

    def neighbours(self, text: Text, position: int) -> list[Proposal]:
        """``problem.neighbours(text, [position])``, remembered for this search call."""
        key = (text.key, position)
        if key not in self._neighbours:
            self._neighbours[key] = self.problem.neighbours(text, [position])
        return self._neighbours[key]

    def note(self, event: str, value: float) -> None:
        self.trace.append((event, float(value)))

    def outcome(self) -> SearchOutcome:
        return SearchOutcome(
            best=self.best,
            score=float(self.score),
            success=bool(self.success),
            budget_exhausted=self.exhausted,
            iterations=self.iterations,
            trace=tuple(self.trace),
        )

    def _offer(self, texts: Sequence[Text], evaluation: Evaluation) -> None:
        if len(texts) == 0:
            return
        success = np.asarray(evaluation.success, dtype=bool)
        scores = np.asarray(evaluation.scores, dtype=np.float64)
        i = best_index(success, scores)
        candidate = (bool(success[i]), float(scores[i]))
        if math.isnan(self.score) or candidate > (self.success, self.score):
            self.best, self.success, self.score = texts[i], candidate[0], candidate[1]


def admissible(problem: Problem, start: Text, parent: Text, child: Text) -> bool:
    """Whether ``child`` (a mix of texts the search reached, e.g. a crossover child) is a
    text the problem could have produced from ``start``: every changed position is one the
    position constraints allow when the changes are made one at a time, and the
    constraints accept it as an edit of ``parent`` (as one proposal at the first position
    where it differs from ``parent``; words elsewhere were accepted where they came from).
    """
    changed = start.diff(child)
    current = start
    for position in changed:
        if position not in problem.positions(current):
            return False
        current = current.replace(position, child.words[position])
    moved = parent.diff(child)
    if not moved:
        return True
    p = moved[0]
    return bool(problem.filter([Proposal(child, parent, p, child.words[p])]))


class BaseSearch:
    """Base class of the searches: settings, repr, budget handling and the start text.

    Build with a config object or keyword settings (``BeamSearch(beam_width=2)`` or
    ``BeamSearch(BeamConfig(beam_width=2))``); settings are validated at construction.
    """

    config_class: ClassVar[type[Config]] = Config

    def __init__(self, config: Config | None = None, /, **settings: Any) -> None:
        cls = self.config_class
        if config is None:
            config = cls(**settings)
        elif not isinstance(config, cls):
            raise ConfigError(
                f"The 'config' parameter of {type(self).__name__} must be a {cls.__name__}. "
                f"Got {type(config).__name__} instead."
            )
        elif settings:
            config = config.replace(**settings)
        self.config = config

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in self.config.to_dict().items())
        return f"{type(self).__name__}({shown})"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.config == self.config

    def __hash__(self) -> int:
        return hash((type(self).__name__, tuple(self.config.to_dict().items())))

    def search(self, start: Text, problem: Problem) -> SearchOutcome:
        """Look for a text meeting ``problem``'s goal, starting from ``start``.

        Never raises for an exhausted budget: returns the best text evaluated so far with
        ``budget_exhausted=True``. Raises :class:`~textrobust.errors.CapabilityError` when
        the search needs something the problem lacks (gradients).
        """
        run = Run(start, problem)
        try:
            prepared = self._prepare(start, problem)
            run.evaluate([start])
            if not run.success:
                self._search(start, problem, run, prepared)
        except QueryBudgetExceeded:
            run.exhausted = True
        return run.outcome()

    # ---- hooks ----------------------------------------------------------------------
    def _prepare(self, start: Text, problem: Problem) -> Any:
        """Work done before the first query (e.g. a gradient ranking, which fails fast
        with CapabilityError before any query is spent). Default: nothing."""
        return None

    def _search(self, start: Text, problem: Problem, run: Run, prepared: Any) -> None:
        raise NotImplementedError
