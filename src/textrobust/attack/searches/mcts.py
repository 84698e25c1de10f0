"""Monte Carlo tree search with UCT over sets of word positions: the upper bound of the
maximal safe radius.

La Malfa, Wu, Laurenti, Wang, Hartshorn and Kwiatkowska (2020), "Assessing Robustness of
Text Classification through Maximal Safe Radius Computation", Section 2.2 and Appendix A.1
(Algorithm 1). A vertex is a set ``I`` of word positions (level ``n``: ``n`` words
perturbed; a child adds one position to its parent's set, a set already in the tree is not
added twice: the paper's "redundant substitutions may be avoided"). Each iteration:

- **select** the expandable leaf (``|I| < max_words``) with the largest UCT value
  ``Q(v)/N(v) + alpha sqrt(2 ln N(v') / N(v))`` over all leaves (Algorithm 1's
  ``getLeaves``; ``v'`` is the parent);
- **expand** it with one child per position still allowed;
- **simulate** each child ``simulations`` times: every position of its set takes a word
  sampled from that position's candidates (the problem's neighbours: with the MSR analysis,
  the ``n`` closest words in L2 of the victim's embedding, filtered by part of speech in
  context), with the paper's pickup weights (a candidate's weight falls with its
  distance rank) or uniformly; the child's reward is the *maximum* confidence drop over its
  simulations (Appendix A.1, line 30: the mean hides a rare effective substitution);
- **backpropagate** that reward from each child up to and including the root.

Stopping rule: ``max_iterations``, or the share ``explore_share`` of all vertices of depth
<= ``max_words`` expanded, or no expandable leaf left, or the query budget.

:meth:`MCTSSearch.explore` returns *every* successful substitution found with its
distance (``distance(start, text)``; the analysis passes the victim's normalised
embedding distance, default the number of words changed) and the smallest one;
:meth:`MCTSSearch.search` (the engine's verb) returns the closest success as ``best``.

How the backpropagation differs from the seed code (github.com/EmanueleLM/MCTS,
``MCTS.py``, ``MCTree.backpropagate``): there, the expanded vertex's value is overwritten
by the *sum* of its children's values, and when moving up the pointer to the children is
set to ``v.parent.children`` (the first vertex's siblings) instead of the current
ancestor's children, so every ancestor above the parent is overwritten with the same
siblings' sum and the visit counts are kept apart in ``select``. Here each vertex keeps a
visit count and a cumulative reward, and the reward of each simulation is added once to
the simulated child and to every ancestor on its path, so ``Q/N`` is the mean reward of
the subtree and the root's count grows with every expansion.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from pydantic import Field

from textrobust.attack.problem import Problem, Proposal, SearchOutcome
from textrobust.attack.searches.base import BaseSearch, Run, admissible, seeded_rng
from textrobust.config import Config
from textrobust.errors import QueryBudgetExceeded
from textrobust.text import Text

__all__ = ["MCTSConfig", "MCTSResult", "MCTSSearch", "MCTSSuccess"]


class MCTSConfig(Config):
    """``max_words``: the deepest level (|I|); ``simulations``: samples per expanded vertex
    (the paper uses 1000); ``exploration``: UCT's alpha (paper: 0.5); ``explore_share``: stop
    once this share of the vertices is expanded; ``max_iterations``: expansions at most;
    ``weighted``: the paper's pickup weights instead of uniform sampling."""

    max_words: int = Field(default=3, ge=1, le=16)
    simulations: int = Field(default=32, ge=1, le=100_000)
    exploration: float = Field(default=0.5, ge=0.0)
    explore_share: float = Field(default=1.0, gt=0.0, le=1.0)
    max_iterations: int | None = Field(default=50, ge=1)
    weighted: bool = True
    seed: int = 0


@dataclass(frozen=True)
class MCTSSuccess:
    """One successful substitution: the text, the positions changed, its distance."""

    text: Text
    positions: tuple[int, ...]
    distance: float
    score: float


@dataclass(frozen=True)
class MCTSResult:
    """What :meth:`MCTSSearch.explore` found."""

    outcome: SearchOutcome
    successes: tuple[MCTSSuccess, ...]
    vertices: int  # vertices expanded (simulated)
    total_vertices: int  # vertices of depth <= max_words
    root_visits: int = 0  # one per simulated vertex: every reward reaches the root

    @property
    def best_distance(self) -> float | None:
        return min((s.distance for s in self.successes), default=None)

    def closest(self, positions: tuple[int, ...] | None = None) -> MCTSSuccess | None:
        """The closest success (that changed exactly ``positions``, when given)."""
        pool = [s for s in self.successes if positions is None or s.positions == positions]
        return min(pool, key=lambda s: (s.distance, s.text.key), default=None)


@dataclass
class _Vertex:
    positions: tuple[int, ...]
    parent: _Vertex | None
    visits: int = 0
    reward: float = 0.0
    children: list[_Vertex] = field(default_factory=list)
    expanded: bool = False

    def uct(self, alpha: float) -> float:
        if self.visits == 0:
            return math.inf
        parent_visits = self.parent.visits if self.parent is not None else self.visits
        return self.reward / self.visits + alpha * math.sqrt(2.0 * math.log(max(parent_visits, 1)) / self.visits)


def _pickup(count: int) -> np.ndarray:
    """Appendix A.1's pickup weights for candidates sorted nearest first: with distances
    standing in as ranks ``1..k``, ``(sum_{u != w'} d(w,u)) / ((k - 1) sum_u d(w,u))``
    (uniform for one candidate)."""
    if count <= 1:
        return np.ones(count)
    d = np.arange(1, count + 1, dtype=np.float64)
    weights = (d.sum() - d) / ((count - 1) * d.sum())
    return weights / weights.sum()


class MCTSSearch(BaseSearch):
    """MCTS-UCT over word-position sets (La Malfa et al. 2020, Algorithm 1).

    ``distance(start, text)``: how far a success is (default: the words changed)."""

    config_class = MCTSConfig
    config: MCTSConfig

    def __init__(self, config: MCTSConfig | None = None, /, *, distance: Callable[[Text, Text], float] | None = None,
                 **settings: object) -> None:
        super().__init__(config, **settings)
        self.distance = distance

    def search(self, start: Text, problem: Problem) -> SearchOutcome:
        return self.explore(start, problem).outcome

    def explore(self, start: Text, problem: Problem) -> MCTSResult:
        """Run the tree search; every success found, the closest as the outcome's best."""
        run = Run(start, problem)
        successes: dict[tuple[str, ...], MCTSSuccess] = {}
        counter = {"vertices": 0, "total": 0, "root": 0}
        try:
            run.evaluate([start])
            if not run.success:
                self._loop(start, problem, run, successes, counter)
        except QueryBudgetExceeded:
            run.exhausted = True
        found = tuple(sorted(successes.values(), key=lambda s: (s.distance, len(s.positions), s.text.key)))
        outcome = run.outcome()
        if found:
            best = found[0]
            outcome = SearchOutcome(best.text, best.score, True, run.exhausted, run.iterations, tuple(run.trace))
        return MCTSResult(outcome, found, counter["vertices"], counter["total"], counter["root"])

    def _loop(self, start: Text, problem: Problem, run: Run, successes: dict, counter: dict) -> None:
        c = self.config
        rng = seeded_rng(c.seed, start)
        allowed = problem.positions(start)
        options: dict[int, list[Proposal]] = {}
        for p in allowed:
            found = run.neighbours(start, p)
            if found:
                options[p] = found
        positions = sorted(options)
        depth = min(c.max_words, len(positions))
        counter["total"] = sum(math.comb(len(positions), k) for k in range(1, depth + 1))
        if not positions:
            return
        base = float(run.score)
        root = _Vertex((), None)
        seen: set[frozenset[int]] = set()
        leaves = [root]
        while leaves:
            if c.max_iterations is not None and run.iterations >= c.max_iterations:
                break
            if counter["vertices"] >= c.explore_share * counter["total"]:
                break
            vertex = max(leaves, key=lambda v: (v.uct(c.exploration), -len(v.positions), tuple(-p for p in v.positions)))
            leaves.remove(vertex)
            vertex.expanded = True
            run.iterations += 1
            children = []
            for p in positions:
                if p in vertex.positions:
                    continue
                key = frozenset((*vertex.positions, p))
                if key in seen:
                    continue
                seen.add(key)
                children.append(_Vertex(tuple(sorted(key)), vertex))
            if not children:
                continue
            texts: list[Text] = []
            owner: list[int] = []
            for k, child in enumerate(children):
                for _ in range(c.simulations):
                    sample = self._sample(start, child.positions, options, rng)
                    # each word was accepted alone; the mix must satisfy the problem too
                    # (position constraints such as a modification cap, and constraints
                    # on the whole text): an inadmissible sample is never sent
                    if admissible(problem, start, start, sample):
                        texts.append(sample)
                        owner.append(k)
            evaluation = run.evaluate(texts) if texts else None
            counter["vertices"] += len(children)
            rewards = np.full(len(children), -math.inf)
            if evaluation is None:
                texts = []
            scores = evaluation.scores if evaluation is not None else ()
            verdicts = evaluation.success if evaluation is not None else ()
            for text, k, score, ok in zip(texts, owner, scores, verdicts):
                rewards[k] = max(rewards[k], float(score) - base)
                if ok and text.key not in successes:
                    changed = tuple(start.diff(text))
                    distance = float(self.distance(start, text)) if self.distance is not None else float(len(changed))
                    successes[text.key] = MCTSSuccess(text, changed, distance, float(score))
            rewards[np.isinf(rewards)] = 0.0  # no admissible sample: no confidence drop seen
            for child, reward in zip(children, rewards):
                vertex.children.append(child)
                node: _Vertex | None = child
                while node is not None:  # the child and every ancestor, root included
                    node.visits += 1
                    node.reward += float(reward)
                    node = node.parent
                if len(child.positions) < depth:
                    leaves.append(child)
            counter["root"] = root.visits
            run.note("reward", float(rewards.max()))

    def _sample(self, start: Text, positions: tuple[int, ...], options: dict[int, list[Proposal]],
                rng: np.random.Generator) -> Text:
        text = start
        for p in positions:
            choices = options[p]
            if self.config.weighted:
                k = int(rng.choice(len(choices), p=_pickup(len(choices))))
            else:
                k = int(rng.integers(len(choices)))
            text = text.replace(p, choices[k].word)
        return text
