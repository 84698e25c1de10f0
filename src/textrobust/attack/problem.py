"""The parts of an attack and the one object that joins them.

An attack is four parts (DESIGN.md): **candidates** (where substitute words come from),
**constraints** (what an edit must satisfy), a **goal** (what success means and how close
a text is) and a **search**. They never reach into each other: a search sees only a
:class:`Problem`, which offers the neighbours of a text (candidates already filtered by
the constraints), an evaluation of texts by the goal, and the running query budget.

Every method that needs the model goes through the goal, and every goal that needs the
model goes through a :class:`~textrobust.victims.query.QueryLayer`, which counts, caches
and enforces the budget by raising :class:`~textrobust.errors.QueryBudgetExceeded`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, cast, runtime_checkable

import numpy as np

from textrobust.errors import CapabilityError, ConfigError
from textrobust.text import Text
from textrobust.victims.query import Budget

__all__ = [
    "Substitution",
    "Proposal",
    "Evaluation",
    "CandidateSource",
    "PositionConstraint",
    "Constraint",
    "PairConstraint",
    "Goal",
    "Search",
    "SearchOutcome",
    "Problem",
]


# ---- data passed between the parts -------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Substitution:
    """A word proposed for one position, with the source's score (higher = better)."""

    position: int
    word: str
    score: float = 0.0


@dataclass(frozen=True, slots=True)
class Proposal:
    """A candidate text: ``parent`` with ``word`` put at ``position``."""

    text: Text
    parent: Text
    position: int
    word: str
    score: float = 0.0


_set = object.__setattr__


def _proposal(text: Text, parent: Text, position: int, word: str, score: float) -> Proposal:
    """``Proposal(text, parent, position, word, score)`` without the frozen dataclass's
    ``__init__`` layers (one per candidate in every search: a hot path)."""
    proposal = object.__new__(Proposal)
    _set(proposal, "text", text)
    _set(proposal, "parent", parent)
    _set(proposal, "position", position)
    _set(proposal, "word", word)
    _set(proposal, "score", score)
    return proposal


@dataclass(frozen=True)
class Evaluation:
    """What a goal says of a batch of texts.

    ``scores``: higher is closer to success (for classification goals, in [0, 1]);
    ``success``: whether each text meets the goal; ``outputs``: the raw model outputs
    behind them (probabilities for classification goals), or None.
    """

    scores: np.ndarray
    success: np.ndarray
    outputs: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.scores)


@dataclass(frozen=True)
class SearchOutcome:
    """What a search returns: the best text found and how it got there."""

    best: Text
    score: float
    success: bool
    budget_exhausted: bool = False
    iterations: int = 0
    trace: tuple[tuple[str, float], ...] = ()  # optional (event, value) pairs for reports


# ---- the protocols of the parts -----------------------------------------------------------------
@runtime_checkable
class CandidateSource(Protocol):
    """Substitute words for positions of a text, best first.

    A source may also offer ``word_candidates(text, positions)``, the same answer as
    ``(word, score)`` tuples per position (no :class:`Substitution` objects): the problem
    then uses it on its hot paths. Contract tests check that both agree.

    A source may also offer ``prefetch(items)``, ``items`` a sequence of ``(text,
    positions)``: :class:`~textrobust.attack.searches.beam.BeamSearch` calls it with every
    text of a step before it expands them, so a model-backed source (the second-order
    neighbourhood) can answer the whole step in one model call. It should change how fast
    ``candidates`` answers, not which words it returns (their scores may move in the last
    float digits: a batch of another shape rounds differently).
    """

    def candidates(self, text: Text, positions: Sequence[int]) -> dict[int, list[Substitution]]: ...


@runtime_checkable
class PositionConstraint(Protocol):
    """Restricts which positions may change (stop words, no repeat, ratio, frozen)."""

    def allowed(self, original: Text, current: Text, positions: frozenset[int]) -> frozenset[int]: ...


@runtime_checkable
class Constraint(Protocol):
    """Accepts or rejects candidate texts, a batch at a time.

    A constraint whose verdict depends only on the pair (reference word, new word) may
    also offer the :class:`PairConstraint` fast path; the problem then filters candidate
    words before it builds their texts. Contract tests check that both paths agree.
    """

    def check(self, original: Text, proposals: Sequence[Proposal]) -> np.ndarray: ...


@runtime_checkable
class PairConstraint(Protocol):
    """The optional fast path of a :class:`Constraint` that judges word pairs.

    ``pair_reference`` is ``"original"`` when the reference word is the original's word at
    the proposal's position, ``"parent"`` when it is the parent's; ``pair_verdicts`` gives
    the verdict :meth:`Constraint.check` would give a proposal putting ``new`` where
    ``reference`` stands, for each ``(reference, new)`` pair.
    """

    @property
    def pair_reference(self) -> str: ...

    def pair_verdicts(self, pairs: Sequence[tuple[str, str]]) -> Sequence[bool]: ...


@runtime_checkable
class Goal(Protocol):
    """Success and closeness for one attacked example (bound to its label/target)."""

    def evaluate(self, texts: Sequence[Text]) -> Evaluation: ...


@runtime_checkable
class Search(Protocol):
    """Looks for a text meeting the problem's goal, starting from ``start``."""

    def search(self, start: Text, problem: Problem) -> SearchOutcome: ...


def _pair_reference(constraint: object) -> str | None:
    """``constraint.pair_reference`` when it offers the :class:`PairConstraint` fast path
    (both members), else None."""
    if not callable(getattr(constraint, "pair_verdicts", None)):
        return None
    reference = getattr(constraint, "pair_reference", None)
    return None if reference is None else str(getattr(reference, "value", reference))


# ---- the problem ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Problem:
    """Everything a search may use, and nothing else.

    ``gradients`` (optional) maps a text to per-word gradient arrays [len(text), dim] for
    gradient-based word importance; it is None when the victim has no gradients.
    """

    original: Text
    goal: Goal
    source: CandidateSource
    position_constraints: tuple[PositionConstraint, ...] = ()
    constraints: tuple[Constraint, ...] = ()
    budget: Budget | None = None
    gradients: Callable[[Text], np.ndarray] | None = field(default=None, repr=False)
    # positions() per text key: a population search asks again for the same members
    _positions: dict[tuple[str, ...], tuple[int, ...]] = field(default_factory=dict, init=False, repr=False,
                                                              compare=False)
    # the constraints split into word-pair ones and the rest (see _split_constraints)
    _split: tuple[tuple[PairConstraint, ...], tuple[Constraint, ...]] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    def positions(self, current: Text) -> tuple[int, ...]:
        """Positions of ``current`` that may still change, in order (position constraints
        depend only on the original and ``current``, so the answer is kept per text)."""
        key = current.key
        known = self._positions.get(key)
        if known is not None:
            return known
        allowed = frozenset(current.modifiable)
        for constraint in self.position_constraints:
            allowed = constraint.allowed(self.original, current, allowed)
            if not allowed:
                break
        found = tuple(sorted(allowed))
        if len(self._positions) >= 20_000:
            self._positions.clear()
        self._positions[key] = found
        return found

    def candidate_positions(self, current: Text) -> tuple[int, ...]:
        """Allowed positions for which the source proposes at least one new word, before
        any candidate constraint runs (cheap: no similarity or LM model is called)."""
        allowed = self.positions(current)
        if not allowed:
            return ()
        found = self._word_candidates(current, allowed)
        words = current.words
        return tuple(p for p in allowed if any(w != words[p] for w, _ in found.get(p, ())))

    def neighbours(self, current: Text, positions: Sequence[int] | None = None) -> list[Proposal]:
        """All one-word edits of ``current`` at ``positions`` (default: every allowed
        position) that every constraint accepts, in position order, best source score
        first within a position."""
        allowed = self.positions(current)
        if positions is not None:
            wanted = set(positions)
            allowed = tuple(p for p in allowed if p in wanted)
        if not allowed:
            return []
        words = current.words
        replace = current.replace
        accepted = self._pair_accepted(current, allowed)
        if accepted is not None:
            # texts are built only for the candidates the word-pair constraints accept
            edits, rest = accepted
            proposals = [_proposal(replace(p, word), current, p, word, score) for p, word, score in edits]
            return self.filter(proposals, rest)
        found = self._word_candidates(current, allowed)
        proposals = [
            _proposal(replace(p, word), current, p, word, score)
            for p in allowed
            for word, score in found.get(p, ())
            if word != words[p]
        ]
        return self.filter(proposals)

    def neighbour_counts(self, current: Text) -> dict[int, int]:
        """How many neighbours :meth:`neighbours` would give at each position (positions
        with none are left out); without building texts when every constraint judges
        word pairs."""
        allowed = self.positions(current)
        if not allowed:
            return {}
        accepted = self._pair_accepted(current, allowed)
        counts: dict[int, int] = {}
        if accepted is not None and not accepted[1]:
            for p, _, _ in accepted[0]:
                counts[p] = counts.get(p, 0) + 1
        else:
            for proposal in self.neighbours(current, allowed):
                counts[proposal.position] = counts.get(proposal.position, 0) + 1
        return counts

    def _pair_accepted(
        self, current: Text, allowed: Sequence[int]
    ) -> tuple[list[tuple[int, str, float]], tuple[Constraint, ...]] | None:
        """The ``(position, word, score)`` candidates at ``allowed`` that the word-pair
        constraints accept, judged on the words alone, and the constraints left to run on
        texts; None when no constraint offers the fast path (or a text of another length
        than the original meets one that compares with the original)."""
        pair_constraints, rest = self._split_constraints()
        words = current.words
        if not pair_constraints or (
            len(words) != len(self.original.words)
            and any(_pair_reference(c) == "original" for c in pair_constraints)
        ):
            return None
        found = self._word_candidates(current, allowed)
        edits = [(p, word, score) for p in allowed for word, score in found.get(p, ()) if word != words[p]]
        for constraint in pair_constraints:
            if not edits:
                break
            reference = self.original.words if _pair_reference(constraint) == "original" else words
            verdicts = constraint.pair_verdicts([(reference[p], word) for p, word, _ in edits])
            if len(verdicts) != len(edits):
                raise ConfigError(
                    f"{constraint!r}.pair_verdicts returned {len(verdicts)} verdicts for {len(edits)} "
                    f"pairs; it returns one bool per pair."
                )
            edits = [edit for edit, ok in zip(edits, verdicts) if ok]
        return edits, rest

    def _split_constraints(self) -> tuple[tuple[PairConstraint, ...], tuple[Constraint, ...]]:
        """The constraints with the word-pair fast path, and the others (kept per problem)."""
        split = self._split
        if split is None:
            pairs = tuple(cast(PairConstraint, c)  # _pair_reference checked both members
                          for c in self.constraints if _pair_reference(c) in ("original", "parent"))
            rest = tuple(c for c in self.constraints if not any(c is p for p in pairs))
            split = (pairs, rest)
            _set(self, "_split", split)
        return split

    def _word_candidates(self, current: Text, positions: Sequence[int]) -> dict[int, Sequence[tuple[str, float]]]:
        """The source's candidates as ``(word, score)`` pairs per position (its
        ``word_candidates`` fast path when it has one)."""
        fast = getattr(self.source, "word_candidates", None)
        if fast is not None:
            return fast(current, positions)
        return {p: [(s.word, s.score) for s in subs] for p, subs in self.source.candidates(current, positions).items()}

    def filter(self, proposals: Sequence[Proposal], constraints: Sequence[Constraint] | None = None) -> list[Proposal]:
        """The proposals every constraint (default: all of the problem's) accepts (cheap
        constraints should come first)."""
        kept = list(proposals)
        for constraint in self.constraints if constraints is None else constraints:
            if not kept:
                break
            mask = np.asarray(constraint.check(self.original, kept), dtype=bool)
            if mask.shape != (len(kept),):
                raise ConfigError(
                    f"{constraint!r}.check returned verdicts of shape {mask.shape} for {len(kept)} "
                    f"proposals; a constraint returns one bool per proposal."
                )
            if not mask.all():
                kept = [p for p, ok in zip(kept, mask.tolist()) if ok]
        return kept

    def evaluate(self, texts: Sequence[Text]) -> Evaluation:
        """The goal's verdict on ``texts`` (goes through the query layer: counted, cached,
        budgeted; may raise QueryBudgetExceeded)."""
        return self.goal.evaluate(texts)

    def word_gradients(self, text: Text) -> np.ndarray:
        if self.gradients is None:
            raise CapabilityError(
                "This problem has no gradients: the victim does not declare the 'gradients' "
                "capability. Use a 'delete' or 'unk' word-importance ranking instead."
            )
        return self.gradients(text)

    @property
    def queries_left(self) -> int | None:
        return None if self.budget is None else self.budget.remaining
