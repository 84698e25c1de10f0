"""Test doubles and the contract every search must keep.

- :class:`DictSource`: a candidate source from a plain ``word -> [candidates]`` table.
- :class:`RecordingGoal`: wraps a goal and records the size of every ``evaluate`` call
  (to check that a search batches).
- :class:`FakeProblem`: builds *real* :class:`~textrobust.attack.problem.Problem` objects
  over a closed-form victim behind a :class:`~textrobust.victims.query.QueryLayer`, with
  the texts the contract needs (attackable, hard, without candidates, already
  adversarial). :func:`default_fake_problem` is a ready-made one over a sentiment
  word-list victim.
- :func:`check_search` runs the contract on any search (like scikit-learn's
  ``check_estimator``) and raises :class:`SearchContractError` naming the broken rule;
  :func:`check_outcome` is the per-run part, usable from property-based tests.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from textrobust.attack.goals import classification_goal
from textrobust.attack.problem import (
    Constraint,
    Evaluation,
    Goal,
    PositionConstraint,
    Problem,
    Search,
    SearchOutcome,
    Substitution,
)
from textrobust.config import Config
from textrobust.errors import ConfigError, TextRobustError
from textrobust.text import Text
from textrobust.victims.query import Budget, QueryLayer

__all__ = [
    "DictSource",
    "FakeProblem",
    "RecordingGoal",
    "SearchContractError",
    "check_outcome",
    "check_search",
    "default_fake_problem",
]


class SearchContractError(TextRobustError):
    """A search broke the search contract; ``check`` names the rule it broke."""

    def __init__(self, search: object, check: str, detail: str) -> None:
        self.check = check
        self.detail = detail
        super().__init__(f"{search!r} breaks the search contract [{check}]: {detail}")


# ---- doubles ---------------------------------------------------------------------------------
class DictSource:
    """Candidates from a table ``word -> [substitutes, best first]`` (lower-cased lookup).

    >>> DictSource({"good": ["fine", "bad"]}).candidates(Text.from_string("so good"), [0, 1])
    {1: [Substitution(position=1, word='fine', score=2.0), Substitution(position=1, word='bad', score=1.0)]}
    """

    def __init__(self, table: Mapping[str, Sequence[str]]) -> None:
        if not isinstance(table, Mapping):
            raise ConfigError(f"The 'table' parameter of DictSource must be a mapping. Got {table!r} instead.")
        self.table = {k.lower(): tuple(v) for k, v in table.items()}

    def candidates(self, text: Text, positions: Sequence[int]) -> dict[int, list[Substitution]]:
        out: dict[int, list[Substitution]] = {}
        for p in positions:
            word = text.words[p]
            subs = [w for w in self.table.get(word.lower(), ()) if w != word]
            if subs:
                out[p] = [Substitution(p, w, float(len(subs) - i)) for i, w in enumerate(subs)]
        return out

    def __repr__(self) -> str:
        return f"DictSource({len(self.table)} words)"


class RecordingGoal:
    """A goal that passes every call to ``goal`` and records the batch sizes in ``calls``."""

    def __init__(self, goal: Goal) -> None:
        self.goal = goal
        self.calls: list[int] = []

    def evaluate(self, texts: Sequence[Text]) -> Evaluation:
        self.calls.append(len(texts))
        return self.goal.evaluate(texts)

    def __repr__(self) -> str:
        return f"RecordingGoal({self.goal!r})"


class FakeProblem:
    """Builds real problems over ``victim`` (behind a fresh :class:`QueryLayer`), a
    :class:`DictSource` over ``candidates`` and a classification goal for ``label``
    (or ``target``), and names the texts the search contract runs on:

    - ``texts``: starts the searches should be able to attack (classified as ``label``);
    - ``hard_text``: a start no edit can make adversarial (the search runs to its end);
    - ``no_candidates_text``: a start without any candidate;
    - ``adversarial_text``: a start that already meets the goal.

    Build a fresh one per run: the layer's cache would make a second run free.
    """

    def __init__(
        self,
        victim: Any,
        candidates: Mapping[str, Sequence[str]],
        *,
        label: int = 1,
        target: int | None = None,
        min_confidence: float = 0.0,
        position_constraints: Sequence[PositionConstraint] = (),
        constraints: Sequence[Constraint] = (),
        gradients: bool = False,
        texts: Sequence[Text] = (),
        hard_text: Text | None = None,
        no_candidates_text: Text | None = None,
        adversarial_text: Text | None = None,
    ) -> None:
        self.victim = victim
        self.label = label
        self.layer = QueryLayer(victim)
        self.inner_goal = classification_goal(self.layer, label, target=target, min_confidence=min_confidence)
        self.goal = RecordingGoal(self.inner_goal)
        self.source = DictSource(candidates)
        self.position_constraints = tuple(position_constraints)
        self.constraints = tuple(constraints)
        self.gradients = gradients
        self.texts = tuple(texts)
        self.hard_text = hard_text
        self.no_candidates_text = no_candidates_text
        self.adversarial_text = adversarial_text

    def problem(self, start: Text, budget: Budget | None = None) -> Problem:
        """A problem whose original is ``start``."""
        grad: Callable[[Text], np.ndarray] | None = None
        if self.gradients:
            victim, label = self.victim, self.label

            def grad(text: Text) -> np.ndarray:
                return np.asarray(victim.word_gradients([text], [label])[0])

        return Problem(
            original=start,
            goal=self.goal,
            source=self.source,
            position_constraints=self.position_constraints,
            constraints=self.constraints,
            budget=budget,
            gradients=grad,
        )

    @contextmanager
    def budgeted(self, start: Text, limit: int | None) -> Iterator[Problem]:
        """A problem inside a query budget of ``limit`` opened on the layer."""
        with self.layer.budget(limit) as budget:
            yield self.problem(start, budget)

    def verdict(self, text: Text) -> tuple[float, bool]:
        """The goal's (score, success) for ``text``, not recorded in ``goal.calls``."""
        found = self.inner_goal.evaluate([text])
        return float(found.scores[0]), bool(found.success[0])

    @property
    def queries(self) -> int:
        return self.layer.queries

    @property
    def calls(self) -> list[int]:
        return self.goal.calls


def default_fake_problem() -> FakeProblem:
    """A sentiment world in closed form: ``WordListVictim`` (P(positive) is the logistic of
    #positive - #negative words), the true label positive, an untargeted goal. Each
    positive-to-negative swap moves the score by 2; every start has an odd score, so no
    text is ever a tie."""
    from textrobust.victims.testing import WordListVictim

    victim = WordListVictim(
        ["good", "great", "fine", "superb", "lovely"], ["bad", "awful", "dull", "poor", "weak"]
    )
    table = {
        "good": ["nice", "bad", "decent", "fine"],
        "great": ["grand", "awful", "big"],
        "fine": ["okay", "poor", "good"],
        "superb": ["dull", "super", "great"],
        "film": ["movie", "picture", "show"],
        "acting": ["performance", "play"],
        "plot": ["story", "script"],
    }
    return FakeProblem(
        victim,
        table,
        label=1,
        texts=(
            Text.from_string("A good film with great acting and a fine plot."),
            Text.from_string("Superb and lovely, and fine."),
        ),
        hard_text=Text.from_string("A good film and a lovely, lovely plot."),
        no_candidates_text=Text.from_string("Lovely lovely day."),
        adversarial_text=Text.from_string("A bad film."),
    )


# ---- the contract ----------------------------------------------------------------------------
def check_outcome(search: Search, fake: FakeProblem, start: Text, outcome: SearchOutcome) -> None:
    """Check one outcome of ``search`` from ``start`` on ``fake``'s problem: its type; the
    best text has the start's length and frozen set and differs from it only at positions
    the problem allows (never a frozen one); ``success`` and ``score`` are the goal's
    verdict on ``best`` (a nan score only for an unevaluated start cut by the budget)."""

    def fail(check: str, detail: str) -> SearchContractError:
        return SearchContractError(search, check, detail)

    if not isinstance(outcome, SearchOutcome):
        raise fail("outcome", f"search() returned {type(outcome).__name__}, not a SearchOutcome.")
    best = outcome.best
    if not isinstance(best, Text) or len(best) != len(start):
        raise fail("outcome", f"best must be a Text of {len(start)} words; got {best!r}.")
    if best.frozen != start.frozen:
        raise fail("frozen", f"best has frozen positions {sorted(best.frozen)}, start {sorted(start.frozen)}.")
    changed = set(start.diff(best))
    touched = changed & start.frozen
    if touched:
        raise fail("frozen", f"best changes frozen positions {sorted(touched)} of {start!r}.")
    allowed = set(fake.problem(start).positions(start))
    if not changed <= allowed:
        raise fail("positions", f"best changes positions {sorted(changed - allowed)} the problem does not allow.")
    if not isinstance(outcome.iterations, int) or outcome.iterations < 0:
        raise fail("outcome", f"iterations must be an int >= 0; got {outcome.iterations!r}.")
    if math.isnan(outcome.score):
        if best != start or not outcome.budget_exhausted or outcome.success:
            raise fail("verdict", "a nan score is only for an unevaluated start when the budget ran out.")
        return
    score, success = fake.verdict(best)
    if outcome.success != success:
        raise fail("verdict", f"success={outcome.success} but the goal says {success} for {best!r}.")
    if not math.isclose(outcome.score, score, rel_tol=1e-9, abs_tol=1e-9):
        raise fail("verdict", f"score={outcome.score} but the goal gives {score} for {best!r}.")


def _run(search: Search, fake: FakeProblem, start: Text, limit: int | None = None) -> SearchOutcome:
    with fake.budgeted(start, limit) as problem:
        return search.search(start, problem)


def check_search(
    search: Search,
    make_problem: Callable[[], FakeProblem] = default_fake_problem,
    *,
    min_mean_batch: float | None = 2.0,
) -> tuple[str, ...]:
    """Run the search contract on ``search``; return the names of the checks that ran.

    ``make_problem`` returns a fresh :class:`FakeProblem` (default: the sentiment world).
    Checks: ``protocol`` (a ``search`` method, a ``config`` that is a frozen Config, a
    repr showing it); ``outcome``/``frozen``/``positions``/``verdict`` on every start (see
    :func:`check_outcome`), with several frozen sets; ``succeeds`` (at least one start of
    ``texts`` is attacked); ``deterministic`` (two runs agree, queries included);
    ``budget`` (under budgets of 0, 1, 2 and half the unbounded cost the search returns,
    spends no more, and reports ``budget_exhausted`` when it was cut short);
    ``no_candidates``, ``already_adversarial`` (returns the start, at most one query),
    ``empty`` (a text without words); ``batching`` (no empty ``evaluate`` call, and a mean
    batch size of at least ``min_mean_batch`` on the hard text; None skips the mean).
    """

    def fail(check: str, detail: str) -> SearchContractError:
        return SearchContractError(search, check, detail)

    ran: list[str] = []
    # protocol
    if not isinstance(search, Search):
        raise fail("protocol", "it needs a search(start, problem) method.")
    config = getattr(search, "config", None)
    if not isinstance(config, Config):
        raise fail("protocol", f"its settings must be a textrobust Config in .config; got {config!r}.")
    shown = repr(search)
    if " object at 0x" in shown or type(search).__name__ not in shown:
        raise fail("protocol", f"repr() should show the search and its settings; got {shown}.")
    ran.append("protocol")

    world = make_problem()
    starts = [*world.texts, *( [world.hard_text] if world.hard_text is not None else [])]
    if not starts:
        raise ConfigError("check_search needs a FakeProblem with at least one start text.")

    # outcomes, verdicts, frozen positions
    successes = 0
    for start in starts:
        fake = make_problem()
        outcome = _run(search, fake, start)
        check_outcome(search, fake, start, outcome)
        if outcome.budget_exhausted:
            raise fail("budget", "budget_exhausted is True although no budget was set.")
        successes += start in world.texts and outcome.success
        for frozen in _frozen_sets(start):
            frozen_start = start.freeze(frozen)
            fake = make_problem()
            check_outcome(search, fake, frozen_start, _run(search, fake, frozen_start))
    ran += ["outcome", "frozen", "positions", "verdict"]
    if world.texts and not successes:
        raise fail("succeeds", f"no start of {list(world.texts)!r} was attacked successfully.")
    ran.append("succeeds")

    # determinism
    for start in starts:
        first, second = make_problem(), make_problem()
        a, b = _run(search, first, start), _run(search, second, start)
        if (a.best, a.success, a.iterations) != (b.best, b.success, b.iterations) or not _same(a.score, b.score):
            raise fail("deterministic", f"two runs from {start!r} differ: {a} vs {b}.")
        if first.queries != second.queries:
            raise fail("deterministic", f"two runs spent {first.queries} and {second.queries} queries.")
    ran.append("deterministic")

    # budget
    for start in starts:
        fake = make_problem()
        _run(search, fake, start)
        cost = fake.queries
        for limit in sorted({0, 1, 2, cost // 2, max(cost - 1, 0), cost}):
            fake = make_problem()
            try:
                outcome = _run(search, fake, start, limit)
            except Exception as error:  # the contract reports any failure
                raise fail("budget", f"with a budget of {limit} it raised {type(error).__name__}: {error}") from error
            if fake.queries > limit:
                raise fail("budget", f"it spent {fake.queries} queries under a budget of {limit}.")
            if cost > limit and not outcome.budget_exhausted:
                raise fail("budget", f"unbounded it needs {cost} queries; under {limit} it must report budget_exhausted.")
            if cost <= limit and outcome.budget_exhausted:
                raise fail("budget", f"it needs {cost} queries but reported budget_exhausted under {limit}.")
            check_outcome(search, fake, start, outcome)
    ran.append("budget")

    # special starts
    if world.no_candidates_text is not None:
        start = world.no_candidates_text
        fake = make_problem()
        outcome = _run(search, fake, start)
        check_outcome(search, fake, start, outcome)
        if outcome.best != start or outcome.budget_exhausted:
            raise fail("no_candidates", f"a text without candidates must come back unchanged; got {outcome}.")
        ran.append("no_candidates")
    if world.adversarial_text is not None:
        start = world.adversarial_text
        fake = make_problem()
        outcome = _run(search, fake, start)
        check_outcome(search, fake, start, outcome)
        if not outcome.success or outcome.best != start or fake.queries > 1:
            raise fail(
                "already_adversarial",
                f"an adversarial start must come back at once, successful, for at most one query; "
                f"got {outcome} after {fake.queries} queries.",
            )
        ran.append("already_adversarial")
    fake = make_problem()
    empty = Text.from_string("...")
    outcome = _run(search, fake, empty)
    check_outcome(search, fake, empty, outcome)
    ran.append("empty")

    # batching
    if world.hard_text is not None:
        fake = make_problem()
        _run(search, fake, world.hard_text)
        calls = fake.calls
        if any(n == 0 for n in calls):
            raise fail("batching", f"it called evaluate with an empty batch (calls: {calls}).")
        if min_mean_batch is not None and calls and len(calls) > 1 and np.mean(calls) < min_mean_batch:
            raise fail(
                "batching",
                f"mean evaluate batch {np.mean(calls):.2f} < {min_mean_batch} (calls: {calls[:20]}): "
                f"score a step's texts in one call.",
            )
        ran.append("batching")
    return tuple(ran)


def _frozen_sets(start: Text) -> list[frozenset[int]]:
    n = len(start)
    if n == 0:
        return []
    return [frozenset(range(0, n, 2)), frozenset(range(1, n, 2)), frozenset(range(n))]


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b
